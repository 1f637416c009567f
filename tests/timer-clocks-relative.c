// SPDX-License-Identifier: MIT
/*
 * A relative one-shot timer of each clock (CLOCK_REALTIME, _MONOTONIC,
 * _BOOTTIME, _REALTIME_ALARM, _BOOTTIME_ALARM) fires once, not early.
 */
#include "lib/timer.h"

#include <sys/timerfd.h>

PT_BUDGET(50);

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

int main(void)
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
	return PT_PASS;
}
