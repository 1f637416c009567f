// SPDX-License-Identifier: MIT
/*
 * Whatever the realtime clock does, a read that returns a record reports
 * at least one expiration, and nothing reads or polls a pending
 * expiration away.  A periodic timer on the realtime clock (absolute, so
 * that it runs on the realtime base; a relative CLOCK_REALTIME timer runs
 * on the monotonic one) that fired and was not yet read, then the clock
 * set back 10 s behind that expiry:
 *  - a read reports 1 expiration, and the next expiry is one period
 *    after the one that fired (no second expiration of the same one);
 *  - a look at fdinfo leaves the object readable.
 * Set 10 s forward instead, a read counts the periods jumped over.
 * The same for CLOCK_REALTIME_ALARM.  Needs root (clock_settime); the
 * clock is put back right after every step, and on failure.
 */
#include "timer.h"

#include <stdio.h>

#define PERIOD		MS(100)
#define STEP		(10 * NSEC_PER_SEC)

static int64_t real0, mono0;

/* The true realtime: where it was at the start, plus what has passed. */
static void clock_restore(void)
{
	int64_t ns = real0 + (pt_mono() - mono0);
	struct timespec ts = { ns / NSEC_PER_SEC, ns % NSEC_PER_SEC };

	if (clock_settime(CLOCK_REALTIME, &ts))
		pt_diag("cannot restore CLOCK_REALTIME: %s", strerror(errno));
}

static void clock_step(int64_t delta)
{
	int64_t ns = pt_now(CLOCK_REALTIME) + delta;
	struct timespec ts = { ns / NSEC_PER_SEC, ns % NSEC_PER_SEC };

	CHECK_SYS(clock_settime(CLOCK_REALTIME, &ts));
}

/* A periodic absolute timer on clk that has fired once, unread. */
static int fired_timer(clockid_t clk)
{
	int fd = tmr_new(0);

	tmr_arm(fd, clk, POLLFS_TIMER_ABSTIME,
		pt_now(pt_base_clock(clk)) + PERIOD, PERIOD);
	pt_wait_readable(fd, PT_WAIT_MS);
	return fd;
}

static void check_back_read(clockid_t clk)
{
	struct pollfs_timer_event ev;
	int fd = fired_timer(clk);

	clock_step(-STEP);
	tmr_read_event(fd, &ev);
	pt_diag("%s, set back 10 s: expirations %llu, remaining %lld ms",
		pt_clock_name(clk), (unsigned long long)ev.expirations,
		(long long)(pt_ts_ns(&ev.remaining) / NSEC_PER_MSEC));
	CHECK_EQ(ev.expirations, 1);
	/* about 10 s, however late this read came: not 0, not negative */
	CHECK_RANGE(pt_ts_ns(&ev.remaining), STEP / 2, STEP + PERIOD);
	pt_expect_empty(fd);
	CHECK_SYS(close(fd));
	clock_restore();
}

static void check_back_fdinfo(clockid_t clk)
{
	struct pollfs_timer_event ev;
	int fd = fired_timer(clk);
	char info[512];

	clock_step(-STEP);
	pt_fdinfo(fd, info, sizeof(info));
	if (!strstr(info, "ticks: 1\n"))
		FAIL("%s: fdinfo after the step:\n%s", pt_clock_name(clk),
		     info);
	CHECK(pt_poll_in(fd, 0));
	tmr_read_event(fd, &ev);
	CHECK_EQ(ev.expirations, 1);
	CHECK_SYS(close(fd));
	clock_restore();
}

static void check_forward(clockid_t clk)
{
	struct pollfs_timer_event ev;
	int fd = fired_timer(clk);
	int64_t t0 = pt_mono();

	clock_step(STEP);
	tmr_read_event(fd, &ev);
	pt_diag("%s, set 10 s forward: expirations %llu", pt_clock_name(clk),
		(unsigned long long)ev.expirations);
	CHECK_RANGE(ev.expirations, STEP / PERIOD,
		    (STEP + pt_mono() - t0) / PERIOD + 5);
	CHECK_SYS(close(fd));
	clock_restore();
}

int main(void)
{
	static const clockid_t clocks[] = {
		CLOCK_REALTIME, CLOCK_REALTIME_ALARM,
	};
	unsigned int i;

	pt_require_root();
	pt_watchdog(60);
	real0 = pt_now(CLOCK_REALTIME);
	mono0 = pt_mono();
	pt_on_fail(clock_restore);

	for (i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		check_back_read(clocks[i]);
		check_back_fdinfo(clocks[i]);
		check_forward(clocks[i]);
	}
	return PT_PASS;
}
