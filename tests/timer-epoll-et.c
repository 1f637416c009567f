// SPDX-License-Identifier: MIT
/*
 * Edge-triggered epoll (EPOLLET) reports a timer once per new expiry: not
 * again while the record waits unread, again for the expiry after a
 * re-arm or a read.
 */
#include "lib/timer.h"

#include <sys/epoll.h>

PT_BUDGET(50);

static int wait_one(int ep, int timeout_ms)
{
	struct epoll_event e[2];
	int n = CHECK_SYS(epoll_wait(ep, e, 2, timeout_ms));

	if (n > 0) {
		CHECK_EQ(n, 1);
		CHECK(e[0].events & EPOLLIN);
	}
	return n;
}

int main(void)
{
	struct pollfs_timer_event ev;
	struct epoll_event e;
	int64_t t0, period = MS(100);
	int ep, t, events;

	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	t = tmr_new(POLLFS_NONBLOCK);
	e.events = EPOLLIN | EPOLLET;
	e.data.u64 = 1;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, t, &e));
	CHECK_EQ(wait_one(ep, 0), 0);

	/* one-shot: one report, however long the record waits */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(20), 0);
	CHECK_EQ(wait_one(ep, PT_WAIT_MS), 1);
	CHECK_EQ(wait_one(ep, 0), 0);
	CHECK_EQ(wait_one(ep, 200), 0);
	CHECK(pt_poll_in(t, 0));	/* still ready, as poll says */

	/* re-armed without reading: the new expiry is reported once */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(20), 0);
	CHECK_EQ(wait_one(ep, PT_WAIT_MS), 1);
	CHECK_EQ(wait_one(ep, 200), 0);
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	CHECK_EQ(wait_one(ep, 100), 0);

	/* periodic, read after each report: the next expiry after a read is
	 * a new edge, reported again */
	t0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, period, period);
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(wait_one(ep, PT_WAIT_MS), 1);
		tmr_read_event(t, &ev);
		CHECK(ev.expirations >= 1);
	}
	CHECK(pt_mono() - t0 >= 5 * period);

	/* periodic, not read: whether the expiries after the first are
	 * reported before the read is not specified (timerfd counts them
	 * only when read), but never more reports than expirations, which a
	 * level-triggered report, coming back at once, would exceed */
	tmr_disarm(t);
	t0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, period, period);
	CHECK_EQ(wait_one(ep, PT_WAIT_MS), 1);
	for (events = 1; pt_mono() - t0 < MS(400) && events < 1000; )
		events += wait_one(ep, 20);
	tmr_read_event(t, &ev);
	pt_diag("%d reports, %llu expirations in %lld ms", events,
		(unsigned long long)ev.expirations,
		(long long)((pt_mono() - t0) / NSEC_PER_MSEC));
	CHECK(ev.expirations >= (uint64_t)events);
	tmr_disarm(t);
	CHECK_SYS(close(t));
	CHECK_SYS(close(ep));
	return PT_PASS;
}
