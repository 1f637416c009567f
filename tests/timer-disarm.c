// SPDX-License-Identifier: MIT
/*
 * A write with value {0,0} disarms: a running timer (one-shot or periodic)
 * stops, a pending count is cleared, an interval given with it is
 * ignored, and disarming a disarmed timer succeeds.
 */
#include "lib/timer.h"

PT_BUDGET(50);

int main(void)
{
	struct pollfs_timer_event ev;
	int t;

	t = tmr_new(POLLFS_NONBLOCK);

	/* disarming a new timer */
	tmr_disarm(t);
	pt_expect_empty(t);

	/* armed, disarmed before the expiry */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(50), 0);
	tmr_disarm(t);
	CHECK(!pt_poll_in(t, 200));
	pt_expect_empty(t);

	/* periodic, running, with a count pending: all gone */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(5), MS(5));
	pt_wait_readable(t, PT_WAIT_MS);
	tmr_read_event(t, &ev);
	CHECK(ev.expirations >= 1);
	pt_sleep_ms(30);
	tmr_disarm(t);
	pt_expect_empty(t);
	CHECK(!pt_poll_in(t, 200));
	pt_expect_empty(t);

	/* one-shot expired and not read: the count is cleared */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(1), 0);
	pt_wait_readable(t, PT_WAIT_MS);
	tmr_disarm(t);
	pt_expect_empty(t);

	/* value {0,0} with an interval still disarms */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(5), MS(5));
	pt_wait_readable(t, PT_WAIT_MS);
	tmr_arm(t, CLOCK_MONOTONIC, 0, 0, MS(5));
	pt_expect_empty(t);
	CHECK(!pt_poll_in(t, 200));

	/* with ABSTIME too, and with another clock */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(5), MS(5));
	tmr_arm(t, CLOCK_REALTIME, POLLFS_TIMER_ABSTIME, 0, 0);
	CHECK(!pt_poll_in(t, 200));
	pt_expect_empty(t);

	/* a disarmed timer can be armed again */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(1), 0);
	pt_wait_readable(t, PT_WAIT_MS);
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	CHECK_SYS(close(t));
	return PT_PASS;
}
