// SPDX-License-Identifier: MIT
/*
 * A one-shot timer fires once: one record with expirations 1, remaining 0
 * and interval 0, then nothing more.
 */
#include "lib.h"

int main(void)
{
	struct pollfs_timer_event ev;
	int64_t t0;
	int t;

	pt_watchdog(50);
	t = pt_timer(0);
	t0 = pt_mono();
	pt_arm(t, CLOCK_MONOTONIC, 0, MS(30), 0);
	pt_read_event(t, &ev);		/* blocking */
	CHECK(pt_mono() - t0 >= MS(30));
	pt_check_oneshot_event(&ev);
	pt_expect_empty(t);

	/* nothing more, however long we wait */
	CHECK(!pt_poll_in(t, 300));
	pt_expect_empty(t);

	/* and again on the same timer, read after a while */
	pt_arm(t, CLOCK_MONOTONIC, 0, MS(5), 0);
	pt_sleep_ms(100);
	pt_read_event(t, &ev);
	pt_check_oneshot_event(&ev);
	CHECK(!pt_poll_in(t, 100));
	pt_expect_empty(t);
	CHECK_SYS(close(t));
	return PT_PASS;
}
