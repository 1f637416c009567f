// SPDX-License-Identifier: MIT
/*
 * POLLFS_IOC_TIMER_GET (1.1): ioctl(timer_fd, POLLFS_IOC_TIMER_GET, &ev)
 * returns 0 and fills a struct pollfs_timer_event with the state now,
 * consuming nothing:
 *  - a new or disarmed timer: all zeros;
 *  - armed, not expired: expirations 0, remaining within (0, value] of
 *    a relative arm (to the absolute time of an absolute one), interval
 *    echoed;
 *  - expired: the pending expirations (>= 1: what a read would return
 *    now, the periods missed included), and a look consumes none (a
 *    second look shows at least as many, poll still shows POLLIN, the
 *    read returns at least as many as the look saw); after the read
 *    they are gone.  Exact for a one-shot: 1, remaining {0,0}, then all
 *    zeros (expired, nothing armed);
 *  - a running periodic timer: remaining within [0, interval], the
 *    interval echoed;
 *  - a bad pointer: EFAULT; the ioctl with another size or direction:
 *    ENOTTY; on a futex, signal or AIO object, or on /dev/pollfs:
 *    ENOTTY.
 * Works the same for an unprivileged user (nothing here needs root).
 */
#include "lib/aio.h"
#include "lib/futex.h"
#include "lib/signal.h"
#include "lib/timer.h"

#include <sys/mman.h>

PT_BUDGET(50);

static void expect_zero(int t)
{
	struct pollfs_timer_event ev;

	tmr_get(t, &ev);
	CHECK_EQ(ev.expirations, 0);
	CHECK_EQ(pt_ts_ns(&ev.remaining), 0);
	CHECK_EQ(pt_ts_ns(&ev.interval), 0);
}

static void oneshot(int t, clockid_t clk)
{
	struct pollfs_timer_event ev, rd;
	int64_t t0;

	/* armed far away: 0 pending, remaining about the value */
	t0 = pt_mono();
	tmr_arm(t, clk, 0, 10 * NSEC_PER_SEC, 0);
	tmr_get(t, &ev);
	CHECK_EQ(ev.expirations, 0);
	CHECK_RANGE(pt_ts_ns(&ev.remaining),
		    10 * NSEC_PER_SEC - (pt_mono() - t0) - PT_LAG,
		    10 * NSEC_PER_SEC);
	CHECK_EQ(pt_ts_ns(&ev.interval), 0);
	pt_expect_empty(t);

	/* expired, unread: 1 pending, looked at any number of times */
	tmr_arm(t, clk, 0, MS(5), 0);
	pt_wait_readable(t, PT_WAIT_MS);
	for (int i = 0; i < 3; i++) {
		tmr_get(t, &ev);
		CHECK_EQ(ev.expirations, 1);
		CHECK_EQ(pt_ts_ns(&ev.remaining), 0);
		CHECK_EQ(pt_ts_ns(&ev.interval), 0);
		CHECK(pt_poll_in(t, 0));
	}
	tmr_read_event(t, &rd);
	tmr_check_oneshot(&rd);
	/* consumed by the read: 0, and nothing armed */
	expect_zero(t);
	pt_expect_empty(t);
}

static void periodic(int t, clockid_t clk)
{
	struct pollfs_timer_event ev, ev2, rd;
	const int64_t period = MS(20);

	/* not yet expired: remaining within (0, first], interval echoed */
	tmr_arm(t, clk, 0, MS(800), period);
	tmr_get(t, &ev);
	CHECK_EQ(ev.expirations, 0);
	CHECK_RANGE(pt_ts_ns(&ev.remaining), 1, MS(800));
	CHECK_EQ(pt_ts_ns(&ev.interval), period);

	/* running: the count grows, a look takes none of it */
	tmr_arm(t, clk, 0, period, period);
	pt_wait_readable(t, PT_WAIT_MS);
	tmr_get(t, &ev);
	CHECK(ev.expirations >= 1);
	CHECK_EQ(pt_ts_ns(&ev.interval), period);
	CHECK_RANGE(pt_ts_ns(&ev.remaining), 0, period);
	pt_sleep_ms(70);
	tmr_get(t, &ev2);
	CHECK(ev2.expirations >= ev.expirations);
	CHECK(ev2.expirations >= 2);
	CHECK_EQ(pt_ts_ns(&ev2.interval), period);
	CHECK_RANGE(pt_ts_ns(&ev2.remaining), 0, period);
	CHECK(pt_poll_in(t, 0));
	tmr_read_event(t, &rd);
	CHECK(rd.expirations >= ev2.expirations);
	CHECK_RANGE(pt_ts_ns(&rd.remaining), 1, period);
	CHECK_EQ(pt_ts_ns(&rd.interval), period);

	/* after the read: still running */
	tmr_get(t, &ev);
	CHECK_EQ(pt_ts_ns(&ev.interval), period);
	CHECK_RANGE(pt_ts_ns(&ev.remaining), 0, period);

	/* a running timer looked at many times still runs and counts */
	for (int i = 0; i < 5; i++) {
		tmr_read_event(t, &rd);
		CHECK(rd.expirations >= 1);
		tmr_get(t, &ev);
		CHECK_RANGE(pt_ts_ns(&ev.remaining), 0, period);
	}
	tmr_disarm(t);
	expect_zero(t);
	pt_expect_empty(t);
}

static void absolute(int t)
{
	struct pollfs_timer_event ev;
	int64_t at = pt_now(CLOCK_MONOTONIC) + 5 * NSEC_PER_SEC;
	int64_t rat;

	tmr_arm(t, CLOCK_MONOTONIC, POLLFS_TIMER_ABSTIME, at, MS(300));
	tmr_get(t, &ev);
	CHECK_EQ(ev.expirations, 0);
	CHECK_RANGE(pt_ts_ns(&ev.remaining), at - pt_mono() - PT_LAG,
		    at - pt_mono() + PT_LAG);
	CHECK_EQ(pt_ts_ns(&ev.interval), MS(300));

	rat = pt_now(CLOCK_REALTIME) + 7 * NSEC_PER_SEC;
	tmr_arm(t, CLOCK_REALTIME, POLLFS_TIMER_ABSTIME, rat, 0);
	tmr_get(t, &ev);
	CHECK_EQ(ev.expirations, 0);
	CHECK_RANGE(pt_ts_ns(&ev.remaining),
		    rat - pt_now(CLOCK_REALTIME) - PT_LAG,
		    rat - pt_now(CLOCK_REALTIME) + PT_LAG);
	tmr_disarm(t);
	expect_zero(t);
}

static void bad_calls(int t)
{
	struct pollfs_timer_event ev;
	char *page;

	/* a bad pointer: EFAULT, the state untouched */
	page = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(page != MAP_FAILED);
	CHECK_SYS(munmap(page + 4096, 4096));
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(1), 0);
	pt_wait_readable(t, PT_WAIT_MS);
	CHECK_ERR(ioctl(t, POLLFS_IOC_TIMER_GET, NULL), EFAULT);
	CHECK_ERR(ioctl(t, POLLFS_IOC_TIMER_GET, page + 4096), EFAULT);
	/* writable, then unmapped */
	CHECK_ERR(ioctl(t, POLLFS_IOC_TIMER_GET, page + 4096 - 8), EFAULT);
	CHECK_SYS(mprotect(page, 4096, PROT_READ));
	CHECK_ERR(ioctl(t, POLLFS_IOC_TIMER_GET, page), EFAULT);
	CHECK_ERR(ioctl(t, POLLFS_IOC_TIMER_GET, (void *)-4096L), EFAULT);
	CHECK(pt_poll_in(t, 0));
	tmr_get(t, &ev);
	CHECK_EQ(ev.expirations, 1);
	CHECK_SYS(munmap(page, 4096));

	/* the same number, another size or direction: not this ioctl */
	memset(&ev, 0, sizeof(ev));
	CHECK_ERR(ioctl(t, _IOW(POLLFS_IOC_MAGIC, 0x20,
				struct pollfs_timer_event), &ev), ENOTTY);
	CHECK_ERR(ioctl(t, _IOR(POLLFS_IOC_MAGIC, 0x20, struct pollfs_open),
			&ev), ENOTTY);
	CHECK_ERR(ioctl(t, _IO(POLLFS_IOC_MAGIC, 0x20), &ev), ENOTTY);
	CHECK_ERR(ioctl(t, _IOR(POLLFS_IOC_MAGIC, 0x21,
				struct pollfs_timer_event), &ev), ENOTTY);
	tmr_get(t, &ev);
	CHECK_EQ(ev.expirations, 1);
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
}

static void other_kinds(void)
{
	struct pollfs_timer_event ev;
	aio_context_t ctx;
	int dev, fx, sg, ax;

	dev = pt_dev();
	CHECK_ERR(ioctl(dev, POLLFS_IOC_TIMER_GET, &ev), ENOTTY);
	fx = fx_new(0);
	CHECK_ERR(ioctl(fx, POLLFS_IOC_TIMER_GET, &ev), ENOTTY);
	{
		static uint32_t w = 3;

		fx_arm(fx, &w, 3, FX_PRIVATE | FX_WATCH);
		CHECK_ERR(ioctl(fx, POLLFS_IOC_TIMER_GET, &ev), ENOTTY);
		fx_expect_armed(fx);
	}
	sg = ps_signal(ps_bit(SIGUSR1), 0);
	CHECK_ERR(ioctl(sg, POLLFS_IOC_TIMER_GET, &ev), ENOTTY);
	ctx = ax_setup(4);
	ax = ax_fd(ctx, 0);
	CHECK_ERR(ioctl(ax, POLLFS_IOC_TIMER_GET, &ev), ENOTTY);
	CHECK_SYS(close(ax));
	ax_destroy(ctx);
	CHECK_SYS(close(sg));
	CHECK_SYS(close(fx));
	CHECK_SYS(close(dev));
}

/* A new timer, and one disarmed, report no time left and no period. */
TEST(disarmed)
{
	int t = tmr_new(0), nb = tmr_new(POLLFS_NONBLOCK);

	expect_zero(t);
	expect_zero(nb);
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(500), 0);
	tmr_disarm(t);
	expect_zero(t);
	CHECK_SYS(close(t));
	CHECK_SYS(close(nb));
}

static void on_clock(clockid_t clk)
{
	int t = tmr_new(0), nb = tmr_new(POLLFS_NONBLOCK);

	oneshot(nb, clk);
	periodic(t, clk);
	CHECK_SYS(close(t));
	CHECK_SYS(close(nb));
}

TEST(monotonic)
{
	on_clock(CLOCK_MONOTONIC);
}

TEST(boottime)
{
	on_clock(CLOCK_BOOTTIME);
}

TEST(realtime)
{
	on_clock(CLOCK_REALTIME);
}

TEST(boottime_alarm)
{
	if (geteuid() != 0 || !tmr_have_alarm())
		pt_skip("CLOCK_BOOTTIME_ALARM needs root and an RTC");
	on_clock(CLOCK_BOOTTIME_ALARM);
}

TEST(absolute)
{
	int t = tmr_new(0);

	absolute(t);
	CHECK_SYS(close(t));
}

TEST(bad_calls)
{
	int nb = tmr_new(POLLFS_NONBLOCK);

	bad_calls(nb);
	CHECK_SYS(close(nb));
}

TEST(other_kinds)
{
	other_kinds();
}

int main(void)
{
	return pt_run_tests();
}
