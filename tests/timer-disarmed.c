// SPDX-License-Identifier: MIT
/*
 * A new timer is disarmed: no POLLIN, a non-blocking read gives EAGAIN,
 * now and a while later.
 */
#include "lib/timer.h"

PT_BUDGET(50);

int main(void)
{
	char buf[40];
	int nb, b;

	nb = tmr_new(POLLFS_NONBLOCK);
	b = tmr_new(0);
	CHECK_ERR(read(nb, buf, sizeof(buf)), EAGAIN);
	CHECK(!pt_poll_in(nb, 0));
	CHECK(!pt_poll_in(b, 0));
	pt_expect_empty(b);

	CHECK(!pt_poll_in(nb, 200));
	CHECK(!pt_poll_in(b, 200));
	CHECK_ERR(read(nb, buf, sizeof(buf)), EAGAIN);
	pt_expect_empty(b);
	CHECK_SYS(close(nb));
	CHECK_SYS(close(b));
	return PT_PASS;
}
