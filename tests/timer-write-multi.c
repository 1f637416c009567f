// SPDX-License-Identifier: MIT
/*
 * A write of several specs applies them in order and returns the bytes of
 * all of them: the last one wins, and the count is reset by each.
 */
#include "lib/timer.h"

PT_BUDGET(50);

/* Ready not before target (monotonic), with a count of exactly 1. */
static void check_fires_at(int t, int64_t target)
{
	struct pollfs_timer_event ev;

	pt_wait_readable(t, PT_WAIT_MS);
	if (pt_mono() < target)
		FAIL("readable %lld ms before the last spec's expiry",
		     (long long)((target - pt_mono()) / NSEC_PER_MSEC));
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	pt_expect_empty(t);
}

int main(void)
{
	struct pollfs_timer_spec s[3];
	int64_t t0;
	int t;

	t = tmr_new(POLLFS_NONBLOCK);

	/* arm soon, then arm later: the later one wins */
	s[0] = tmr_spec(CLOCK_MONOTONIC, 0, MS(10), 0);
	s[1] = tmr_spec(CLOCK_MONOTONIC, 0, MS(300), 0);
	t0 = pt_mono();
	CHECK_EQ(write(t, s, 2 * sizeof(s[0])), 80);
	check_fires_at(t, t0 + MS(300));

	/* arm, then disarm: nothing */
	s[0] = tmr_spec(CLOCK_MONOTONIC, 0, MS(10), MS(10));
	s[1] = tmr_spec(CLOCK_MONOTONIC, 0, 0, 0);
	CHECK_EQ(write(t, s, 2 * sizeof(s[0])), 80);
	CHECK(!pt_poll_in(t, 200));
	pt_expect_empty(t);

	/* disarm, then arm: it fires */
	s[0] = tmr_spec(CLOCK_MONOTONIC, 0, 0, 0);
	s[1] = tmr_spec(CLOCK_MONOTONIC, 0, MS(20), 0);
	t0 = pt_mono();
	CHECK_EQ(write(t, s, 2 * sizeof(s[0])), 80);
	check_fires_at(t, t0 + MS(20));

	/* three specs on three clocks: the last, 20 ms, wins over 1 s, 2 s */
	s[0] = tmr_spec(CLOCK_REALTIME, 0, NSEC_PER_SEC, 0);
	s[1] = tmr_spec(CLOCK_BOOTTIME, 0, 2 * NSEC_PER_SEC, MS(1));
	s[2] = tmr_spec(CLOCK_MONOTONIC, 0, MS(20), 0);
	t0 = pt_mono();
	CHECK_EQ(write(t, s, sizeof(s)), 120);
	check_fires_at(t, t0 + MS(20));
	/* and the 1 s and 2 s expiries never come */
	CHECK(!pt_poll_in(t, 2500));

	/* an expiry already past, then a later one: the count of the first
	 * (fired or not) is reset by the second */
	s[0] = tmr_spec(CLOCK_MONOTONIC, POLLFS_TIMER_ABSTIME, 1, 0);
	s[1] = tmr_spec(CLOCK_MONOTONIC, 0, MS(300), 0);
	t0 = pt_mono();
	CHECK_EQ(write(t, s, 2 * sizeof(s[0])), 80);
	check_fires_at(t, t0 + MS(300));
	CHECK_SYS(close(t));
	return PT_PASS;
}
