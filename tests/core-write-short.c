// SPDX-License-Identifier: MIT
/*
 * A write smaller than one record (40 bytes for a timer) gives EINVAL and
 * changes nothing: it neither arms a disarmed timer nor disarms an armed
 * one.
 */
#include "lib/timer.h"

PT_BUDGET(50);

static const size_t sizes[] = { 0, 1, 8, 24, 39 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

int main(void)
{
	struct pollfs_timer_spec arm, disarm;
	struct pollfs_timer_event ev;
	int64_t t0;
	int t;

	arm = tmr_spec(CLOCK_MONOTONIC, 0, MS(1), 0);
	disarm = tmr_spec(CLOCK_MONOTONIC, 0, 0, 0);

	t = tmr_new(POLLFS_NONBLOCK);
	for (size_t i = 0; i < NSIZES; i++)
		CHECK_ERR(write(t, &arm, sizes[i]), EINVAL);
	/* not armed: nothing after well past 1 ms */
	pt_sleep_ms(100);
	pt_expect_empty(t);

	t0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(200), 0);
	for (size_t i = 0; i < NSIZES; i++)
		CHECK_ERR(write(t, &disarm, sizes[i]), EINVAL);
	/* still armed: it fires, and not early */
	pt_wait_readable(t, PT_WAIT_MS);
	CHECK(pt_mono() - t0 >= MS(200));
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	CHECK_SYS(close(t));
	return PT_PASS;
}
