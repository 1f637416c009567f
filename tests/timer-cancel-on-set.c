// SPDX-License-Identifier: MIT
/*
 * POLLFS_TIMER_CANCEL_ON_SET (1.1), with POLLFS_TIMER_ABSTIME on
 * CLOCK_REALTIME (and CLOCK_REALTIME_ALARM where there is one), behaves
 * as timerfd's TFD_TIMER_CANCEL_ON_SET: when the realtime clock is set
 * discontinuously (clock_settime, settimeofday, clock_adjtime with
 * ADJ_SETOFFSET), forward or back, the object becomes readable (poll,
 * epoll, a blocking read woken) and the next read fails with ECANCELED,
 * once (several sets before the read: still once, even two that undo
 * each other exactly); the timer stays
 * armed: POLLFS_IOC_TIMER_GET shows the remaining time (and a look does
 * not take the ECANCELED away), a second read finds nothing (EAGAIN),
 * and it expires at its time as usual (a one-shot, a periodic one).
 * As timerfd does: a timer without the flag, or one re-armed or
 * disarmed by a write since the set, is not cancelled.  Needs root
 * (clock_settime); the clock is put back after each step, and on
 * failure.
 */
#include "lib/timer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>

PT_BUDGET(60);

#define FLAGS	(POLLFS_TIMER_ABSTIME | POLLFS_TIMER_CANCEL_ON_SET)
#define FAR	(3600 * NSEC_PER_SEC)

static void expect_cancelled(int t)
{
	struct pollfs_timer_event ev;

	pt_wait_readable(t, PT_WAIT_MS);
	CHECK_ERR(read(t, &ev, sizeof(ev)), ECANCELED);
}

/* Armed (remaining > 0), nothing to read. */
static void expect_armed_quiet(int t, int64_t lo, int64_t hi)
{
	struct pollfs_timer_event ev;

	tmr_get(t, &ev);
	CHECK_EQ(ev.expirations, 0);
	CHECK_RANGE(pt_ts_ns(&ev.remaining), lo, hi);
	pt_expect_empty(t);
}

static int far_timer(clockid_t clk, unsigned int oflags, int64_t interval)
{
	int t = tmr_new(oflags);

	tmr_arm(t, clk, FLAGS, pt_now(CLOCK_REALTIME) + FAR, interval);
	return t;
}

static void steps(clockid_t clk)
{
	int t = far_timer(clk, POLLFS_NONBLOCK, 0);
	int plain = tmr_new(POLLFS_NONBLOCK);

	/* an absolute realtime timer without the flag */
	tmr_arm(plain, clk, POLLFS_TIMER_ABSTIME,
		pt_now(CLOCK_REALTIME) + FAR, 0);
	expect_armed_quiet(t, FAR - 10 * NSEC_PER_SEC, FAR);

	/* forward */
	tmr_real_step(10 * NSEC_PER_SEC);
	expect_cancelled(t);
	expect_armed_quiet(t, FAR - 30 * NSEC_PER_SEC, FAR);
	CHECK_ERR(read(t, &(struct pollfs_timer_event){ 0 },
		       sizeof(struct pollfs_timer_event)), EAGAIN);
	pt_expect_empty(plain);
	tmr_real_restore();	/* a set too */
	expect_cancelled(t);
	expect_armed_quiet(t, FAR - 10 * NSEC_PER_SEC, FAR);

	/* back */
	tmr_real_step(-10 * NSEC_PER_SEC);
	expect_cancelled(t);
	expect_armed_quiet(t, FAR, FAR + 10 * NSEC_PER_SEC);
	tmr_real_restore();
	expect_cancelled(t);

	/* several sets before the read: ECANCELED once */
	tmr_real_step(NSEC_PER_SEC);
	tmr_real_step(-2 * NSEC_PER_SEC);
	tmr_real_restore();
	expect_cancelled(t);
	pt_expect_empty(t);

	/* a look does not take the ECANCELED away */
	tmr_real_step(MS(1));
	pt_wait_readable(t, PT_WAIT_MS);
	{
		struct pollfs_timer_event ev;

		tmr_get(t, &ev);
		CHECK(pt_ts_ns(&ev.remaining) > 0);
		tmr_get(t, &ev);
		CHECK(pt_poll_in(t, 0));
	}
	expect_cancelled(t);
	tmr_real_restore();
	expect_cancelled(t);

	/* settimeofday and clock_adjtime(ADJ_SETOFFSET) are sets too */
	{
		struct timeval tv;
		struct timex tx;

		CHECK_SYS(gettimeofday(&tv, NULL));
		tv.tv_sec += 5;
		CHECK_SYS(settimeofday(&tv, NULL));
		expect_cancelled(t);
		tmr_real_restore();
		expect_cancelled(t);

		memset(&tx, 0, sizeof(tx));
		tx.modes = ADJ_SETOFFSET | ADJ_NANO;
		tx.time.tv_sec = -3;
		tx.time.tv_usec = 0;
		CHECK_SYS(clock_adjtime(CLOCK_REALTIME, &tx));
		expect_cancelled(t);
		tmr_real_restore();
		expect_cancelled(t);

		/*
		 * A set and its exact undoing: the offset is back where it
		 * was, and still the clock was set (timerfd's cancel sticks).
		 */
		for (int sign = 1; sign >= -1; sign -= 2) {
			/* the call wrote the time back into tx */
			memset(&tx, 0, sizeof(tx));
			tx.modes = ADJ_SETOFFSET | ADJ_NANO;
			tx.time.tv_sec = 2 * sign;
			CHECK_SYS(clock_adjtime(CLOCK_REALTIME, &tx));
		}
		expect_cancelled(t);
		pt_expect_empty(t);
	}

	/* a write since the set: no ECANCELED for the set before it */
	tmr_real_step(MS(1));
	pt_wait_readable(t, PT_WAIT_MS);
	tmr_arm(t, clk, FLAGS, pt_now(CLOCK_REALTIME) + FAR, 0);
	expect_armed_quiet(t, FAR - 10 * NSEC_PER_SEC, FAR);
	tmr_real_restore();
	expect_cancelled(t);
	tmr_disarm(t);
	tmr_real_step(MS(1));
	CHECK(!pt_poll_in(t, 100));
	pt_expect_empty(t);
	tmr_real_restore();

	/* the plain timer saw none of it */
	CHECK(!pt_poll_in(plain, 0));
	pt_expect_empty(plain);
	CHECK_SYS(close(plain));
	CHECK_SYS(close(t));
}

/* Cancelled, it still expires at its time: one-shot and periodic. */
static void stays_armed(clockid_t clk)
{
	struct pollfs_timer_event ev;
	int t = tmr_new(POLLFS_NONBLOCK);
	int64_t at = pt_now(CLOCK_REALTIME) + MS(600);

	tmr_arm(t, clk, FLAGS, at, 0);
	tmr_real_step(MS(1));
	expect_cancelled(t);
	tmr_real_restore();
	expect_cancelled(t);
	pt_expect_empty(t);
	pt_wait_readable(t, PT_WAIT_MS);
	CHECK(pt_now(CLOCK_REALTIME) >= at - MS(5));
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	CHECK_SYS(close(t));

	t = tmr_new(0);
	tmr_arm(t, clk, FLAGS, pt_now(CLOCK_REALTIME) + MS(20), MS(20));
	tmr_read_event(t, &ev);
	CHECK(ev.expirations >= 1);
	tmr_real_step(MS(1));
	expect_cancelled(t);
	tmr_real_restore();
	/* the next records, once past the ECANCELED of the restore */
	for (int got = 0; got < 3;) {
		ssize_t r;

		do
			r = read(t, &ev, sizeof(ev));
		while (r < 0 && errno == EINTR);
		if (r < 0 && errno == ECANCELED)
			continue;
		CHECK_EQ(r, TMR_EVENT_SIZE);
		CHECK(ev.expirations >= 1);
		CHECK_EQ(pt_ts_ns(&ev.interval), MS(20));
		got++;
	}
	CHECK_SYS(close(t));
}

static atomic_int sleeping;

static void *blocked_reader(void *arg)
{
	struct pollfs_timer_event ev;
	int t = (int)(intptr_t)arg;
	ssize_t r;

	atomic_store(&sleeping, (int)syscall(SYS_gettid));
	do
		r = read(t, &ev, sizeof(ev));
	while (r < 0 && errno == EINTR);
	return (void *)(intptr_t)(r < 0 ? errno : 0);
}

static bool sleeps_in_read(pid_t tid)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	if (pt_read_file(path, buf, sizeof(buf)) < 0)
		return false;
	return strtol(buf, NULL, 10) == SYS_read;
}

/* A blocking reader and epoll are woken by the set. */
static void woken(clockid_t clk)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLET };
	int t = far_timer(clk, 0, 0), ep;
	pthread_t th;
	void *res;
	int64_t end = pt_mono() + MS(PT_WAIT_MS);

	atomic_store(&sleeping, 0);
	CHECK_EQ(pthread_create(&th, NULL, blocked_reader,
				(void *)(intptr_t)t), 0);
	while (!atomic_load(&sleeping) || !sleeps_in_read(atomic_load(&sleeping))) {
		CHECK(pt_mono() < end);
		pt_sleep_ms(2);
	}
	pt_sleep_ms(30);
	tmr_real_step(MS(1));
	CHECK_EQ(pthread_join(th, &res), 0);
	CHECK_EQ((intptr_t)res, ECANCELED);
	tmr_real_restore();
	expect_cancelled(t);

	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, t, &e));
	CHECK_EQ(epoll_wait(ep, &e, 1, 0), 0);
	tmr_real_step(MS(1));
	CHECK_EQ(epoll_wait(ep, &e, 1, PT_WAIT_MS), 1);
	CHECK(e.events & EPOLLIN);
	expect_cancelled(t);
	tmr_real_restore();
	CHECK_EQ(epoll_wait(ep, &e, 1, PT_WAIT_MS), 1);
	expect_cancelled(t);
	CHECK_EQ(epoll_wait(ep, &e, 1, 0), 0);
	CHECK_SYS(close(ep));
	CHECK_SYS(close(t));
}

TEST(realtime_steps)
{
	steps(CLOCK_REALTIME);
}

TEST(realtime_stays_armed)
{
	stays_armed(CLOCK_REALTIME);
}

TEST(realtime_woken)
{
	woken(CLOCK_REALTIME);
}

static void need_alarm(void)
{
	if (!tmr_have_alarm())
		pt_skip("no CLOCK_REALTIME_ALARM here");
}

TEST(realtime_alarm_steps)
{
	need_alarm();
	steps(CLOCK_REALTIME_ALARM);
}

TEST(realtime_alarm_stays_armed)
{
	need_alarm();
	stays_armed(CLOCK_REALTIME_ALARM);
}

TEST(realtime_alarm_woken)
{
	need_alarm();
	woken(CLOCK_REALTIME_ALARM);
}

int main(void)
{
	int r;

	pt_require_root();
	tmr_real_save();
	r = pt_run_tests();
	tmr_real_restore();
	return r;
}
