// SPDX-License-Identifier: MIT
/*
 * A timer armed with POLLFS_TIMER_ABSTIME | POLLFS_TIMER_CANCEL_ON_SET
 * (1.1) on CLOCK_REALTIME, with no one setting the clock, is an
 * ordinary absolute timer: not readable before its time, then readable
 * (poll, a blocking read that sleeps until then), never early by the
 * realtime clock, one expiration for a one-shot (remaining and interval
 * 0), and a periodic one reports its periods (expirations >= 1,
 * remaining within (0, interval], interval echoed).  No read fails
 * with ECANCELED.  The same on CLOCK_REALTIME_ALARM where this user may
 * use it.  Nothing needs root.
 */
#include "lib/timer.h"

PT_BUDGET(50);

#define FLAGS	(POLLFS_TIMER_ABSTIME | POLLFS_TIMER_CANCEL_ON_SET)

static void oneshot(clockid_t clk, int flags)
{
	struct pollfs_timer_event ev;
	int t = tmr_new(flags);
	int64_t at = pt_now(CLOCK_REALTIME) + MS(200);

	tmr_arm(t, clk, FLAGS, at, 0);
	if (flags & POLLFS_NONBLOCK) {
		/*
		 * Not readable before its time: a guest starved by its host
		 * may reach the time within the 50 ms, never before it.
		 */
		if (pt_poll_in(t, 50))
			CHECK(pt_now(CLOCK_REALTIME) >= at);
		else
			pt_expect_empty(t);
		pt_wait_readable(t, PT_WAIT_MS);
	}
	tmr_read_event(t, &ev);		/* blocks when blocking */
	CHECK(pt_now(CLOCK_REALTIME) >= at);
	tmr_check_oneshot(&ev);
	pt_expect_empty(t);
	CHECK_SYS(close(t));
}

static void periodic(clockid_t clk)
{
	struct pollfs_timer_event ev;
	const int64_t period = MS(30);
	int t = tmr_new(0);
	int64_t at = pt_now(CLOCK_REALTIME) + MS(30);
	long total = 0;

	tmr_arm(t, clk, FLAGS, at, period);
	for (int i = 0; i < 6; i++) {
		tmr_read_event(t, &ev);
		CHECK(ev.expirations >= 1);
		total += (long)ev.expirations;
		/* 0: the next expiry came while the reader was delayed */
		CHECK_RANGE(pt_ts_ns(&ev.remaining), 0, period);
		CHECK_EQ(pt_ts_ns(&ev.interval), period);
	}
	CHECK(pt_now(CLOCK_REALTIME) >= at + (total - 1) * period);
	CHECK_SYS(close(t));
}

/* An expiry already past when armed: readable at once. */
static void past(clockid_t clk)
{
	struct pollfs_timer_event ev;
	int t = tmr_new(POLLFS_NONBLOCK);

	tmr_arm(t, clk, FLAGS, pt_now(CLOCK_REALTIME) - NSEC_PER_SEC, 0);
	pt_wait_readable(t, PT_WAIT_MS);
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	CHECK_SYS(close(t));
}

int main(void)
{
	oneshot(CLOCK_REALTIME, POLLFS_NONBLOCK);
	oneshot(CLOCK_REALTIME, 0);
	periodic(CLOCK_REALTIME);
	past(CLOCK_REALTIME);
	if (geteuid() == 0 && tmr_have_alarm()) {
		oneshot(CLOCK_REALTIME_ALARM, POLLFS_NONBLOCK);
		oneshot(CLOCK_REALTIME_ALARM, 0);
		periodic(CLOCK_REALTIME_ALARM);
		past(CLOCK_REALTIME_ALARM);
	} else {
		pt_diag("no CLOCK_REALTIME_ALARM here (not root, or no RTC)");
	}
	return PT_PASS;
}
