// SPDX-License-Identifier: MIT
/*
 * A write whose k-th spec is invalid applies the ones before it and
 * returns their bytes; if the first is invalid it returns its error and
 * applies nothing.
 */
#include "lib/timer.h"

PT_BUDGET(50);

static void check_fires_once_after(int t, int64_t target)
{
	struct pollfs_timer_event ev;

	pt_wait_readable(t, PT_WAIT_MS);
	CHECK(pt_mono() >= target);
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	pt_expect_empty(t);
}

int main(void)
{
	struct pollfs_timer_spec s[3], bad;
	int64_t t0;
	int t;

	t = tmr_new(POLLFS_NONBLOCK);
	bad = tmr_spec(CLOCK_MONOTONIC, 0, MS(1), 0);
	bad.value.tv_nsec = NSEC_PER_SEC;

	/* valid, invalid: 40, and the first is applied */
	s[0] = tmr_spec(CLOCK_MONOTONIC, 0, MS(20), 0);
	s[1] = bad;
	t0 = pt_mono();
	CHECK_EQ(write(t, s, 2 * sizeof(s[0])), 40);
	check_fires_once_after(t, t0 + MS(20));

	/* valid (far), valid (near), bad clock: 80, the second applies */
	s[0] = tmr_spec(CLOCK_MONOTONIC, 0, 100 * NSEC_PER_SEC, 0);
	s[1] = tmr_spec(CLOCK_MONOTONIC, 0, MS(20), 0);
	s[2] = tmr_spec(99, 0, MS(1), 0);
	t0 = pt_mono();
	CHECK_EQ(write(t, s, sizeof(s)), 80);
	check_fires_once_after(t, t0 + MS(20));

	/* valid, unknown flag: 40 */
	s[0] = tmr_spec(CLOCK_MONOTONIC, 0, MS(20), 0);
	s[1] = tmr_spec(CLOCK_MONOTONIC, 0x2, MS(1), 0);
	t0 = pt_mono();
	CHECK_EQ(write(t, s, 2 * sizeof(s[0])), 40);
	check_fires_once_after(t, t0 + MS(20));

	/* invalid, valid: EINVAL, and nothing applied */
	s[0] = bad;
	s[1] = tmr_spec(CLOCK_MONOTONIC, 0, MS(1), 0);
	CHECK_ERR(write(t, s, 2 * sizeof(s[0])), EINVAL);
	CHECK(!pt_poll_in(t, 200));
	pt_expect_empty(t);

	/* the same on an armed timer: it keeps its arming */
	t0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(300), 0);
	s[0] = bad;
	s[1] = tmr_spec(CLOCK_MONOTONIC, 0, 0, 0);
	CHECK_ERR(write(t, s, 2 * sizeof(s[0])), EINVAL);
	check_fires_once_after(t, t0 + MS(300));
	CHECK_SYS(close(t));
	return PT_PASS;
}
