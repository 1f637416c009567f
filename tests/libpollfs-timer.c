// SPDX-License-Identifier: MIT
/*
 * libpollfs: pollfs_timer(), pollfs_timer_arm(), pollfs_timer_read().
 *
 * The struct itimerspec reaches the timer field for field (seconds and
 * nanoseconds of the first expiry and of the period, as fdinfo and the
 * records show them), the clock and POLLFS_TIMER_ABSTIME too (an absolute
 * time of CLOCK_MONOTONIC or CLOCK_REALTIME, one in the past); a zero
 * it_value disarms and discards the count; reads return 0 and one
 * record; and the documented errors, which leave the timer as it was.
 */
#include "lib/lib.h"

#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <pollfs.h>

PT_BUDGET(50);

/* The text after "key: " in fd's fdinfo, up to the end of the line. */
static void fdinfo_get(int fd, const char *key, char *val, size_t size)
{
	char buf[2048], pat[64];
	const char *p, *end;

	pt_fdinfo(fd, buf, sizeof(buf));
	snprintf(pat, sizeof(pat), "\n%s: ", key);
	p = strstr(buf, pat);
	if (!p)
		FAIL("no '%s:' line in the fdinfo of fd %d: %s", key, fd, buf);
	p += strlen(pat);
	end = strchr(p, '\n');
	if (!end)
		end = p + strlen(p);
	snprintf(val, size, "%.*s", (int)(end - p), p);
}

/* A "(sec, nsec)" line of fdinfo, in nanoseconds. */
static int64_t fdinfo_time(int fd, const char *key, long long *sec,
			   long *nsec)
{
	char val[128];

	fdinfo_get(fd, key, val, sizeof(val));
	if (sscanf(val, "(%lld, %ld)", sec, nsec) != 2)
		FAIL("fdinfo %s: '%s'", key, val);
	return *sec * NSEC_PER_SEC + *nsec;
}

static long fdinfo_long(int fd, const char *key)
{
	char val[128];

	fdinfo_get(fd, key, val, sizeof(val));
	return strtol(val, NULL, 0);
}

static struct itimerspec its_ns(int64_t value, int64_t interval)
{
	struct itimerspec its;

	its.it_value.tv_sec = value / NSEC_PER_SEC;
	its.it_value.tv_nsec = value % NSEC_PER_SEC;
	its.it_interval.tv_sec = interval / NSEC_PER_SEC;
	its.it_interval.tv_nsec = interval % NSEC_PER_SEC;
	return its;
}

/* Waits for the timer's first expiry; returns when poll saw it. */
static int64_t wait_expiry(int fd)
{
	pt_wait_readable(fd, PT_WAIT_MS);
	return pt_mono();
}

/* ---- creation ---- */

TEST(create)
{
	struct pollfs_timer_event ev;
	int fd;

	CHECK_ERR(pollfs_timer(O_WRONLY), EINVAL);
	CHECK_ERR(pollfs_timer(O_APPEND), EINVAL);
	CHECK_ERR(pollfs_timer(-1), EINVAL);
	CHECK_ERR(pollfs_timer(POLLFS_CLOEXEC | 0x10000000), EINVAL);

	fd = CHECK_SYS(pollfs_timer(0));
	CHECK_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	CHECK_SYS(close(fd));
	fd = CHECK_SYS(pollfs_timer(POLLFS_CLOEXEC));
	CHECK_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	CHECK_SYS(close(fd));

	/* created disarmed */
	fd = CHECK_SYS(pollfs_timer(POLLFS_NONBLOCK | POLLFS_CLOEXEC));
	CHECK_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_ERR(pollfs_timer_read(fd, &ev), EAGAIN);
	CHECK(!pt_poll_in(fd, 50));
	CHECK_SYS(close(fd));
}

/* ---- the itimerspec and the clock, relative ---- */

TEST(relative)
{
	struct pollfs_timer_event ev;
	struct itimerspec its;
	long long sec;
	long nsec;
	int64_t t0, t1, left;
	int fd;

	fd = CHECK_SYS(pollfs_timer(POLLFS_NONBLOCK));

	/* seconds and nanoseconds of both fields, on CLOCK_BOOTTIME */
	its.it_value.tv_sec = 3;
	its.it_value.tv_nsec = 250000000;
	its.it_interval.tv_sec = 7;
	its.it_interval.tv_nsec = 123456789;
	t0 = pt_mono();
	CHECK_EQ(pollfs_timer_arm(fd, CLOCK_BOOTTIME, 0, &its), 0);
	left = fdinfo_time(fd, "it_value", &sec, &nsec);
	t1 = pt_mono();
	CHECK_RANGE(left, MS(3250) - (t1 - t0), MS(3250));
	fdinfo_time(fd, "it_interval", &sec, &nsec);
	CHECK_EQ(sec, 7);
	CHECK_EQ(nsec, 123456789);
	CHECK_EQ(fdinfo_long(fd, "clockid"), CLOCK_BOOTTIME);
	CHECK_EQ(fdinfo_long(fd, "settime flags"), 0);
	CHECK_ERR(pollfs_timer_read(fd, &ev), EAGAIN);

	/* re-armed on another clock: the first expiry, never early, and
	 * the period in the record */
	its.it_value.tv_sec = 0;
	its.it_value.tv_nsec = 60000000;
	its.it_interval.tv_sec = 1;
	its.it_interval.tv_nsec = 250000000;
	t0 = pt_mono();
	CHECK_EQ(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &its), 0);
	CHECK_EQ(fdinfo_long(fd, "clockid"), CLOCK_MONOTONIC);
	t1 = wait_expiry(fd);
	CHECK(t1 - t0 >= MS(60));
	memset(&ev, 0xa5, sizeof(ev));
	CHECK_EQ(pollfs_timer_read(fd, &ev), 1);
	CHECK_EQ(ev.expirations, 1);
	CHECK_EQ(ev.interval.tv_sec, 1);
	CHECK_EQ(ev.interval.tv_nsec, 250000000);
	CHECK_RANGE(pt_ts_ns(&ev.remaining), 1, MS(1250));
	CHECK_ERR(pollfs_timer_read(fd, &ev), EAGAIN);

	/* a one-shot on CLOCK_REALTIME (relative: not moved by clock
	 * changes), then nothing more */
	its = its_ns(MS(30), 0);
	t0 = pt_mono();
	CHECK_EQ(pollfs_timer_arm(fd, CLOCK_REALTIME, 0, &its), 0);
	CHECK_EQ(fdinfo_long(fd, "clockid"), CLOCK_REALTIME);
	t1 = wait_expiry(fd);
	CHECK(t1 - t0 >= MS(30));
	memset(&ev, 0xa5, sizeof(ev));
	CHECK_EQ(pollfs_timer_read(fd, &ev), 1);
	CHECK_EQ(ev.expirations, 1);
	CHECK_EQ(pt_ts_ns(&ev.remaining), 0);
	CHECK_EQ(pt_ts_ns(&ev.interval), 0);
	CHECK(!pt_poll_in(fd, 100));

	/* periodic, read late: the periods missed in one record */
	its = its_ns(MS(20), MS(20));
	t0 = pt_mono();
	CHECK_EQ(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &its), 0);
	pt_sleep_ms(130);
	CHECK_EQ(pollfs_timer_read(fd, &ev), 1);
	t1 = pt_mono();
	CHECK_RANGE(ev.expirations, 2, (t1 - t0) / MS(20));
	CHECK_EQ(pt_ts_ns(&ev.interval), MS(20));
	/* 0: the next expiry came while the reader was delayed */
	CHECK_RANGE(pt_ts_ns(&ev.remaining), 0, MS(20));
	CHECK_SYS(close(fd));
}

/* ---- POLLFS_TIMER_ABSTIME ---- */

TEST(abstime)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME,
					    CLOCK_BOOTTIME };
	struct pollfs_timer_event ev;
	struct itimerspec its;
	int64_t target, t0;
	int fd;

	fd = CHECK_SYS(pollfs_timer(POLLFS_NONBLOCK));
	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		clockid_t clk = clocks[i];

		/* a time of that clock: not before it */
		target = pt_now(clk) + MS(80);
		its = its_ns(target, 0);
		CHECK_EQ(pollfs_timer_arm(fd, clk, POLLFS_TIMER_ABSTIME,
					  &its), 0);
		CHECK_EQ(fdinfo_long(fd, "settime flags"),
			 POLLFS_TIMER_ABSTIME);
		CHECK_EQ(fdinfo_long(fd, "clockid"), clk);
		pt_wait_readable(fd, PT_WAIT_MS);
		if (pt_now(clk) < target)
			FAIL("%s: absolute timer readable %lld ns early",
			     pt_clock_name(clk),
			     (long long)(target - pt_now(clk)));
		CHECK_EQ(pollfs_timer_read(fd, &ev), 1);
		CHECK_EQ(ev.expirations, 1);

		/* a time already past: at once; the same value taken as
		 * relative lies far ahead */
		its = its_ns(pt_now(clk) - NSEC_PER_SEC, 0);
		t0 = pt_mono();
		CHECK_EQ(pollfs_timer_arm(fd, clk, POLLFS_TIMER_ABSTIME,
					  &its), 0);
		pt_wait_readable(fd, PT_WAIT_MS);
		CHECK(pt_mono() - t0 < MS(PT_WAIT_MS) / 2);
		CHECK_EQ(pollfs_timer_read(fd, &ev), 1);
		CHECK_EQ(ev.expirations, 1);
		CHECK_EQ(pollfs_timer_arm(fd, clk, 0, &its), 0);
		CHECK_EQ(fdinfo_long(fd, "settime flags"), 0);
		CHECK(!pt_poll_in(fd, 100));
		CHECK_ERR(pollfs_timer_read(fd, &ev), EAGAIN);
	}

	/* absolute and periodic */
	its = its_ns(pt_mono() + MS(30), MS(40));
	CHECK_EQ(pollfs_timer_arm(fd, CLOCK_MONOTONIC, POLLFS_TIMER_ABSTIME,
				  &its), 0);
	for (int i = 0; i < 3; i++) {
		pt_wait_readable(fd, PT_WAIT_MS);
		CHECK_EQ(pollfs_timer_read(fd, &ev), 1);
		CHECK(ev.expirations >= 1);
		CHECK_EQ(pt_ts_ns(&ev.interval), MS(40));
	}
	CHECK_SYS(close(fd));
}

/* ---- disarming ---- */

TEST(disarm)
{
	struct pollfs_timer_event ev;
	struct itimerspec zero, its;
	long long sec;
	long nsec;
	int fd;

	memset(&zero, 0, sizeof(zero));
	fd = CHECK_SYS(pollfs_timer(POLLFS_NONBLOCK));

	/* before it expires: it never does */
	its = its_ns(MS(50), MS(50));
	CHECK_EQ(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &its), 0);
	CHECK_EQ(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &zero), 0);
	CHECK_EQ(fdinfo_time(fd, "it_value", &sec, &nsec), 0);
	CHECK(!pt_poll_in(fd, 200));
	CHECK_ERR(pollfs_timer_read(fd, &ev), EAGAIN);

	/* after it expired: the unread count is discarded */
	its = its_ns(MS(10), 0);
	CHECK_EQ(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &its), 0);
	pt_wait_readable(fd, PT_WAIT_MS);
	CHECK_EQ(fdinfo_long(fd, "ticks"), 1);
	CHECK_EQ(pollfs_timer_arm(fd, CLOCK_REALTIME, 0, &zero), 0);
	CHECK_EQ(fdinfo_long(fd, "ticks"), 0);
	CHECK(!pt_poll_in(fd, 0));
	CHECK_ERR(pollfs_timer_read(fd, &ev), EAGAIN);

	/* a zero it_value disarms whatever the interval says */
	its = its_ns(0, MS(10));
	CHECK_EQ(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &its), 0);
	CHECK(!pt_poll_in(fd, 100));
	CHECK_SYS(close(fd));
}

/* ---- reading ---- */

TEST(read)
{
	struct pollfs_timer_event ev;
	struct itimerspec its = its_ns(MS(50), 0);
	int64_t t0;
	void *none;
	int fd, p[2];

	/* blocking: sleeps until the expiry */
	fd = CHECK_SYS(pollfs_timer(0));
	t0 = pt_mono();
	CHECK_EQ(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &its), 0);
	CHECK_EQ(pollfs_timer_read(fd, &ev), 1);
	CHECK(pt_mono() - t0 >= MS(50));
	CHECK_EQ(ev.expirations, 1);
	CHECK_SYS(close(fd));

	fd = CHECK_SYS(pollfs_timer(POLLFS_NONBLOCK));
	CHECK_ERR(pollfs_timer_read(-1, &ev), EBADF);
	CHECK_ERR(pollfs_timer_arm(-1, CLOCK_MONOTONIC, 0, &its), EBADF);

	/* a record that cannot be stored */
	its = its_ns(MS(1), 0);
	CHECK_EQ(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &its), 0);
	pt_wait_readable(fd, PT_WAIT_MS);
	none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(none != MAP_FAILED);
	CHECK_ERR(pollfs_timer_read(fd, none), EFAULT);
	CHECK_SYS(munmap(none, 4096));

	/* part of a record: not a timer */
	CHECK_SYS(pipe2(p, O_CLOEXEC | O_NONBLOCK));
	CHECK_EQ(write(p[1], "0123456789", 10), 10);
	CHECK_ERR(pollfs_timer_read(p[0], &ev), EIO);
	CHECK_SYS(close(p[0]));
	CHECK_SYS(close(p[1]));
	CHECK_SYS(close(fd));
}

/* ---- errors of the arming, which change nothing ---- */

static int arm_as_nobody(void *arg)
{
	struct itimerspec its = its_ns(MS(10), 0);
	int fd = *(int *)arg;

	pt_become_nobody();
	CHECK_ERR(pollfs_timer_arm(fd, CLOCK_REALTIME_ALARM, 0, &its), EPERM);
	CHECK_ERR(pollfs_timer_arm(fd, CLOCK_BOOTTIME_ALARM, 0, &its), EPERM);
	its = its_ns(pt_now(CLOCK_REALTIME) + MS(10), 0);
	CHECK_ERR(pollfs_timer_arm(fd, CLOCK_REALTIME_ALARM,
				   POLLFS_TIMER_ABSTIME, &its), EPERM);
	return PT_PASS;
}

TEST(arm_errors)
{
	struct pollfs_timer_event ev;
	struct itimerspec its, bad;
	int64_t t0;
	int fd, other;

	fd = CHECK_SYS(pollfs_timer(POLLFS_NONBLOCK));
	/* armed for 400 ms from t0; every refused arming leaves it so */
	its = its_ns(MS(400), 0);
	t0 = pt_mono();
	CHECK_EQ(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &its), 0);

	bad = its_ns(MS(10), 0);
	CHECK_ERR(pollfs_timer_arm(fd, CLOCK_PROCESS_CPUTIME_ID, 0, &bad),
		  EINVAL);
	CHECK_ERR(pollfs_timer_arm(fd, CLOCK_MONOTONIC_RAW, 0, &bad), EINVAL);
	CHECK_ERR(pollfs_timer_arm(fd, 99, 0, &bad), EINVAL);
	CHECK_ERR(pollfs_timer_arm(fd, -1, 0, &bad), EINVAL);
	CHECK_ERR(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 2, &bad), EINVAL);
	CHECK_ERR(pollfs_timer_arm(fd, CLOCK_MONOTONIC,
				   POLLFS_TIMER_ABSTIME | 0x100, &bad), EINVAL);
	bad.it_value.tv_nsec = NSEC_PER_SEC;
	CHECK_ERR(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &bad), EINVAL);
	bad.it_value.tv_nsec = -1;
	CHECK_ERR(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &bad), EINVAL);
	bad = its_ns(MS(10), 0);
	bad.it_value.tv_sec = -1;
	CHECK_ERR(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &bad), EINVAL);
	bad = its_ns(MS(10), MS(10));
	bad.it_interval.tv_nsec = NSEC_PER_SEC;
	CHECK_ERR(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &bad), EINVAL);
	bad = its_ns(MS(10), MS(10));
	bad.it_interval.tv_sec = -5;
	CHECK_ERR(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &bad), EINVAL);

	/* without CAP_WAKE_ALARM */
	CHECK_EQ(pt_run_child(arm_as_nobody, &fd, PT_WAIT_MS), 0);

	/* other kinds of objects refuse the record */
	other = CHECK_SYS(pollfs_futex(0));
	CHECK_ERR(pollfs_timer_arm(other, CLOCK_MONOTONIC, 0, &its), EINVAL);
	CHECK_SYS(close(other));

	/* still the first arming: clock, flags, and the expiry after
	 * 400 ms, not before */
	CHECK_EQ(fdinfo_long(fd, "clockid"), CLOCK_MONOTONIC);
	CHECK_EQ(fdinfo_long(fd, "settime flags"), 0);
	CHECK_ERR(pollfs_timer_read(fd, &ev), EAGAIN);
	pt_wait_readable(fd, PT_WAIT_MS);
	CHECK(pt_mono() - t0 >= MS(400));
	CHECK_EQ(pollfs_timer_read(fd, &ev), 1);
	CHECK_EQ(ev.expirations, 1);
	CHECK_SYS(close(fd));
}

int main(void)
{
	return pt_run_tests();
}
