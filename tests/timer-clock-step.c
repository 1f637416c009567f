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
 * 1.1 adds:
 *  - POLLFS_IOC_TIMER_GET after the step back shows the pending
 *    expiration (1), takes nothing, and the read still reports 1;
 *  - with POLLFS_TIMER_CANCEL_ON_SET, the step back makes the next read
 *    fail with ECANCELED, and every read after that which returns a
 *    record reports at least one expiration;
 *  - a period as long as a time can be (INT64_MAX ns): after the step
 *    back, TIMER_GET's remaining and the read's saturate as the re-arm
 *    does, never wrap below zero (the fuzzer found a look that did);
 *  - many steps back and forth (1 ms to 2 s) under short periodic
 *    timers, read whenever poll shows them readable: every record has
 *    expirations >= 1, a timer without CANCEL_ON_SET that poll shows
 *    readable always has a record, and TIMER_GET's look is always well
 *    formed.
 * The same for CLOCK_REALTIME_ALARM; each check of each clock is a TEST
 * of its own.  Needs root (clock_settime); the clock is put back right
 * after every step, on failure, and once more after all the TESTs.
 */
#include "lib/timer.h"

#include <stdio.h>

PT_BUDGET(60);

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

/* 1.1: POLLFS_IOC_TIMER_GET after the step back. */
static void check_back_get(clockid_t clk)
{
	struct pollfs_timer_event ev;
	int fd = fired_timer(clk);

	clock_step(-STEP);
	for (int i = 0; i < 3; i++) {
		tmr_get(fd, &ev);
		CHECK_EQ(ev.expirations, 1);
		CHECK_EQ(pt_ts_ns(&ev.interval), PERIOD);
		CHECK(pt_poll_in(fd, 0));
	}
	tmr_read_event(fd, &ev);
	CHECK_EQ(ev.expirations, 1);
	tmr_get(fd, &ev);
	CHECK_EQ(ev.expirations, 0);
	pt_expect_empty(fd);
	CHECK_SYS(close(fd));
	clock_restore();
}

/* 1.1: the longest period, fired, then the clock set back. */
static void check_back_get_longest(clockid_t clk)
{
	struct pollfs_timer_event ev;
	int fd = tmr_new(0);

	tmr_arm(fd, clk, POLLFS_TIMER_ABSTIME,
		pt_now(pt_base_clock(clk)) + PERIOD, INT64_MAX);
	pt_wait_readable(fd, PT_WAIT_MS);
	clock_step(-STEP);
	tmr_get(fd, &ev);
	pt_diag("%s, longest period, set back 10 s: TIMER_GET remaining "
		"%lld.%09lld", pt_clock_name(clk),
		(long long)ev.remaining.tv_sec,
		(long long)ev.remaining.tv_nsec);
	CHECK_EQ(ev.expirations, 1);
	CHECK(pt_ts_ns(&ev.remaining) >= INT64_MAX / 2);
	tmr_read_event(fd, &ev);
	CHECK_EQ(ev.expirations, 1);
	CHECK(pt_ts_ns(&ev.remaining) >= INT64_MAX / 2);
	CHECK_SYS(close(fd));
	clock_restore();
}

/* 1.1: a CANCEL_ON_SET timer that fired, then the clock set back. */
static void check_back_cancel(clockid_t clk)
{
	struct pollfs_timer_event ev;
	int fd = tmr_new(0), records = 0;

	tmr_arm(fd, clk, POLLFS_TIMER_ABSTIME | POLLFS_TIMER_CANCEL_ON_SET,
		pt_now(pt_base_clock(clk)) + PERIOD, PERIOD);
	pt_wait_readable(fd, PT_WAIT_MS);
	clock_step(-STEP);
	pt_wait_readable(fd, PT_WAIT_MS);
	CHECK_ERR(read(fd, &ev, sizeof(ev)), ECANCELED);
	clock_restore();	/* a set too: one more ECANCELED */
	while (records < 3) {
		ssize_t r;

		memset(&ev, 0, sizeof(ev));
		do
			r = read(fd, &ev, sizeof(ev));
		while (r < 0 && errno == EINTR);
		if (r < 0 && errno == ECANCELED)
			continue;
		CHECK_EQ(r, TMR_EVENT_SIZE);
		CHECK(ev.expirations >= 1);
		records++;
	}
	CHECK_SYS(close(fd));
}

/* 1.1: steps back and forth under short periodic timers. */
static void check_many_steps(clockid_t clk)
{
	enum { N = 4 };
	int fds[N];
	bool cancels[N];
	long records = 0, cancelled = 0;

	for (int i = 0; i < N; i++) {
		cancels[i] = i & 1;
		fds[i] = tmr_new(POLLFS_NONBLOCK);
		tmr_arm(fds[i], clk, POLLFS_TIMER_ABSTIME |
			(cancels[i] ? POLLFS_TIMER_CANCEL_ON_SET : 0),
			pt_now(pt_base_clock(clk)) + MS(3) * (i + 1),
			MS(2) * (i + 1));
	}
	for (int round = 0; round < 60; round++) {
		int64_t amount = MS(1) << (round % 12);

		clock_step((round & 1) ? amount : -amount);
		if (round % 3 == 0)
			clock_restore();
		pt_sleep_ns(MS(round % 4));
		for (int i = 0; i < N; i++) {
			struct pollfs_timer_event ev;
			ssize_t r;

			tmr_get(fds[i], &ev);
			if (!pt_poll_in(fds[i], 0))
				continue;
			memset(&ev, 0, sizeof(ev));
			errno = 0;
			r = read(fds[i], &ev, sizeof(ev));
			if (r < 0 && errno == ECANCELED && cancels[i]) {
				cancelled++;
				continue;
			}
			if (r != TMR_EVENT_SIZE)
				FAIL("%s timer %d%s, poll readable: read "
				     "returned %zd, errno %d (%s)",
				     pt_clock_name(clk), i, cancels[i] ?
				     " (CANCEL_ON_SET)" : "", r, errno,
				     strerror(errno));
			CHECK(ev.expirations >= 1);
			records++;
		}
	}
	clock_restore();
	pt_diag("%s, 60 steps: %ld records, %ld ECANCELED",
		pt_clock_name(clk), records, cancelled);
	CHECK(records > 0);
	CHECK(cancelled > 0);
	for (int i = 0; i < N; i++)
		CHECK_SYS(close(fds[i]));
}

TEST(realtime_back_read)
{
	check_back_read(CLOCK_REALTIME);
}

TEST(realtime_back_fdinfo)
{
	check_back_fdinfo(CLOCK_REALTIME);
}

TEST(realtime_forward)
{
	check_forward(CLOCK_REALTIME);
}

TEST(realtime_back_get)
{
	check_back_get(CLOCK_REALTIME);
}

TEST(realtime_back_get_longest)
{
	check_back_get_longest(CLOCK_REALTIME);
}

TEST(realtime_back_cancel)
{
	check_back_cancel(CLOCK_REALTIME);
}

TEST(realtime_many_steps)
{
	check_many_steps(CLOCK_REALTIME);
}

TEST(realtime_alarm_back_read)
{
	check_back_read(CLOCK_REALTIME_ALARM);
}

TEST(realtime_alarm_back_fdinfo)
{
	check_back_fdinfo(CLOCK_REALTIME_ALARM);
}

TEST(realtime_alarm_forward)
{
	check_forward(CLOCK_REALTIME_ALARM);
}

TEST(realtime_alarm_back_get)
{
	check_back_get(CLOCK_REALTIME_ALARM);
}

TEST(realtime_alarm_back_get_longest)
{
	check_back_get_longest(CLOCK_REALTIME_ALARM);
}

TEST(realtime_alarm_back_cancel)
{
	check_back_cancel(CLOCK_REALTIME_ALARM);
}

TEST(realtime_alarm_many_steps)
{
	check_many_steps(CLOCK_REALTIME_ALARM);
}

/*
 * Each TEST runs in a child that inherits the hook: a failing check puts
 * the clock back before the child exits.  Should a child die otherwise
 * (a signal), the clock is put back here once more, after them all.
 */
int main(void)
{
	int ret;

	pt_require_root();
	real0 = pt_now(CLOCK_REALTIME);
	mono0 = pt_mono();
	pt_on_fail(clock_restore);
	ret = pt_run_tests();
	clock_restore();
	return ret;
}
