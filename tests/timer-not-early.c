// SPDX-License-Identifier: MIT
/*
 * A timer never fires early: the record is ready, whether seen by poll or
 * by a blocking read, only once the clock has reached the expiry.  The
 * bound is exact: the clock is read before arming and after waking.
 */
#include "lib/timer.h"

PT_BUDGET(50);

static const clockid_t clocks[] = {
	CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME,
};
static const int64_t waits[] = {
	1, US(1), US(100), MS(1), MS(3), MS(10), MS(25),
};

int main(void)
{
	struct pollfs_timer_event ev;
	int nb, b, cases = 0;

	nb = tmr_new(POLLFS_NONBLOCK);
	b = tmr_new(0);
	for (size_t c = 0; c < sizeof(clocks) / sizeof(clocks[0]); c++) {
		clockid_t clk = clocks[c];

		for (size_t w = 0; w < sizeof(waits) / sizeof(waits[0]); w++) {
			int64_t wait = waits[w], target;

			/* relative, seen by poll */
			target = pt_now(clk) + wait;
			tmr_arm(nb, clk, 0, wait, 0);
			pt_wait_readable(nb, PT_WAIT_MS);
			if (pt_now(clk) < target)
				FAIL("%s relative %lld ns: readable %lld ns early",
				     pt_clock_name(clk), (long long)wait,
				     (long long)(target - pt_now(clk)));
			tmr_read_event(nb, &ev);
			tmr_check_oneshot(&ev);

			/* relative, seen by a blocking read */
			target = pt_now(clk) + wait;
			tmr_arm(b, clk, 0, wait, 0);
			tmr_read_event(b, &ev);
			if (pt_now(clk) < target)
				FAIL("%s relative %lld ns: read returned early",
				     pt_clock_name(clk), (long long)wait);
			tmr_check_oneshot(&ev);

			/* absolute, seen by poll */
			target = pt_now(clk) + wait;
			tmr_arm(nb, clk, POLLFS_TIMER_ABSTIME, target, 0);
			pt_wait_readable(nb, PT_WAIT_MS);
			if (pt_now(clk) < target)
				FAIL("%s absolute +%lld ns: readable early",
				     pt_clock_name(clk), (long long)wait);
			tmr_read_event(nb, &ev);
			tmr_check_oneshot(&ev);

			/* absolute, seen by a blocking read */
			target = pt_now(clk) + wait;
			tmr_arm(b, clk, POLLFS_TIMER_ABSTIME, target, 0);
			tmr_read_event(b, &ev);
			if (pt_now(clk) < target)
				FAIL("%s absolute +%lld ns: read returned early",
				     pt_clock_name(clk), (long long)wait);
			tmr_check_oneshot(&ev);
			cases += 4;
		}
	}
	pt_diag("%d expiries, none early", cases);
	CHECK_SYS(close(nb));
	CHECK_SYS(close(b));
	return PT_PASS;
}
