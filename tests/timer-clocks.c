// SPDX-License-Identifier: MIT
/*
 * A one-shot timer of each clock (CLOCK_REALTIME, _MONOTONIC, _BOOTTIME,
 * _REALTIME_ALARM, _BOOTTIME_ALARM) fires once, not early, each way of
 * arming it a TEST:
 *  - relative, 20 ms and 500 us, a new timer for each;
 *  - absolute (POLLFS_TIMER_ABSTIME), not before the time given (read
 *    from the same clock; the alarm clocks from CLOCK_REALTIME and
 *    CLOCK_BOOTTIME), and at once for a time already past; one timer
 *    re-armed from clock to clock.
 */
#include "lib/timer.h"

#include <sys/timerfd.h>

PT_BUDGET(60);

static const clockid_t clocks[] = {
	CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME,
	CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM,
};

/* The alarm clocks need CAP_WAKE_ALARM; a kernel without them (no RTC
 * alarm support) makes timerfd refuse them too. */
static bool clock_usable(clockid_t clk)
{
	int fd = timerfd_create(clk, TFD_CLOEXEC);

	if (fd < 0) {
		pt_diag("%s: timerfd_create: %s: not tested", pt_clock_name(clk),
			strerror(errno));
		return false;
	}
	close(fd);
	return true;
}

TEST(relative)
{
	const int64_t wait[] = { MS(20), US(500) };
	struct pollfs_timer_event ev;
	int tested = 0;

	for (size_t c = 0; c < sizeof(clocks) / sizeof(clocks[0]); c++) {
		clockid_t clk = clocks[c];

		if (!clock_usable(clk))
			continue;
		for (size_t w = 0; w < sizeof(wait) / sizeof(wait[0]); w++) {
			int t = tmr_new(POLLFS_NONBLOCK);
			int64_t t0;

			pt_diag("%s, relative %lld ns", pt_clock_name(clk),
				(long long)wait[w]);
			t0 = pt_mono();
			tmr_arm(t, clk, 0, wait[w], 0);
			pt_wait_readable(t, PT_WAIT_MS);
			CHECK(pt_mono() - t0 >= wait[w]);
			tmr_read_event(t, &ev);
			tmr_check_oneshot(&ev);
			pt_expect_empty(t);
			CHECK(!pt_poll_in(t, 50));
			CHECK_SYS(close(t));
			tested++;
		}
	}
	if (tested < 6)		/* at least the three plain clocks */
		FAIL("only %d cases could run", tested);
}

TEST(absolute)
{
	struct pollfs_timer_event ev;
	int tested = 0;
	int t;

	t = tmr_new(POLLFS_NONBLOCK);
	for (size_t c = 0; c < sizeof(clocks) / sizeof(clocks[0]); c++) {
		clockid_t clk = clocks[c], base = pt_base_clock(clk);
		int64_t target;

		if (!clock_usable(clk))
			continue;
		pt_diag("%s, absolute", pt_clock_name(clk));
		target = pt_now(base) + MS(20);
		tmr_arm(t, clk, POLLFS_TIMER_ABSTIME, target, 0);
		pt_wait_readable(t, PT_WAIT_MS);
		CHECK(pt_now(base) >= target);
		tmr_read_event(t, &ev);
		tmr_check_oneshot(&ev);
		pt_expect_empty(t);

		/* already past: fires at once (well within the wait) */
		pt_diag("%s, absolute, 1 s in the past", pt_clock_name(clk));
		target = pt_now(base) - NSEC_PER_SEC;
		tmr_arm(t, clk, POLLFS_TIMER_ABSTIME, target, 0);
		pt_wait_readable(t, PT_WAIT_MS);
		tmr_read_event(t, &ev);
		tmr_check_oneshot(&ev);
		pt_expect_empty(t);
		CHECK(!pt_poll_in(t, 50));
		tested++;
	}
	CHECK_SYS(close(t));
	if (tested < 3)
		FAIL("only %d clocks could be tested", tested);
}

int main(void)
{
	return pt_run_tests();
}
