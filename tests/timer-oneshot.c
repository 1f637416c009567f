// SPDX-License-Identifier: MIT
/*
 * A one-shot timer fires once: one record with expirations 1, remaining 0
 * and interval 0, then nothing more.
 */
#include "lib/timer.h"

PT_BUDGET(50);

int main(void)
{
	struct pollfs_timer_event ev;
	int64_t t0;
	int t;

	t = tmr_new(0);
	t0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(30), 0);
	tmr_read_event(t, &ev);		/* blocking */
	CHECK(pt_mono() - t0 >= MS(30));
	tmr_check_oneshot(&ev);
	pt_expect_empty(t);

	/* nothing more, however long we wait */
	CHECK(!pt_poll_in(t, 300));
	pt_expect_empty(t);

	/* and again on the same timer, read after a while */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(5), 0);
	pt_sleep_ms(100);
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	CHECK(!pt_poll_in(t, 100));
	pt_expect_empty(t);
	CHECK_SYS(close(t));
	return PT_PASS;
}
