// SPDX-License-Identifier: MIT
/*
 * Re-arming resets the expiration count: a timer that expired (once, or
 * several periods) and was re-armed before being read is not readable
 * until the new expiry, and then reports exactly one expiration.
 */
#include "lib/timer.h"

PT_BUDGET(50);

/* After a re-arm with expiry `target` (monotonic): ready not before it,
 * with a count of 1. */
static void check_after_rearm(int t, int64_t target)
{
	struct pollfs_timer_event ev;

	/* Readiness seen before target is early; seen after it, the machine
	 * was merely slow to look. */
	if (pt_poll_in(t, 0) && pt_mono() < target)
		FAIL("readable right after re-arming");
	pt_wait_readable(t, PT_WAIT_MS);
	CHECK(pt_mono() >= target);
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	pt_expect_empty(t);
}

int main(void)
{
	int64_t t0;
	int t;

	t = tmr_new(POLLFS_NONBLOCK);

	/* one-shot expired, re-armed one-shot */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(5), 0);
	pt_wait_readable(t, PT_WAIT_MS);
	t0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(300), 0);
	check_after_rearm(t, t0 + MS(300));

	/* periodic with many pending expirations, re-armed one-shot */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(2), MS(2));
	pt_sleep_ms(60);
	CHECK(pt_poll_in(t, 0));
	t0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(300), 0);
	check_after_rearm(t, t0 + MS(300));

	/* periodic re-armed periodic: the first read counts from the new
	 * arming only */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(2), MS(2));
	pt_sleep_ms(60);
	t0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(300), 10 * NSEC_PER_SEC);
	{
		struct pollfs_timer_event ev;

		if (pt_poll_in(t, 0) && pt_mono() < t0 + MS(300))
			FAIL("readable right after re-arming");
		pt_wait_readable(t, PT_WAIT_MS);
		CHECK(pt_mono() >= t0 + MS(300));
		tmr_read_event(t, &ev);
		CHECK_EQ(ev.expirations, 1);
		CHECK_EQ(pt_ts_ns(&ev.interval), 10 * NSEC_PER_SEC);
	}
	CHECK_SYS(close(t));
	return PT_PASS;
}
