// SPDX-License-Identifier: MIT
/*
 * EPOLLONESHOT reports a ready timer once, then nothing, whatever expires,
 * until EPOLL_CTL_MOD re-enables it; then it reports a record still
 * unread at once, or the next expiry.
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
		CHECK_EQ(e[0].data.u64, 42);
	}
	return n;
}

static void rearm(int ep, int t)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLONESHOT };

	e.data.u64 = 42;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_MOD, t, &e));
}

int main(void)
{
	struct pollfs_timer_event ev;
	struct epoll_event e;
	int ep, t;

	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	t = tmr_new(POLLFS_NONBLOCK);
	e.events = EPOLLIN | EPOLLONESHOT;
	e.data.u64 = 42;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, t, &e));

	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(20), MS(20));
	CHECK_EQ(wait_one(ep, PT_WAIT_MS), 1);
	/* disabled: more expiries come, nothing is reported */
	CHECK_EQ(wait_one(ep, 0), 0);
	CHECK_EQ(wait_one(ep, 300), 0);

	/* re-enabled with the record unread: reported at once, once */
	rearm(ep, t);
	CHECK_EQ(wait_one(ep, 0), 1);
	CHECK_EQ(wait_one(ep, 100), 0);

	/* read, then re-enabled: the next expiry is reported */
	tmr_read_event(t, &ev);
	CHECK(ev.expirations >= 1);
	rearm(ep, t);
	CHECK_EQ(wait_one(ep, PT_WAIT_MS), 1);
	CHECK_EQ(wait_one(ep, 100), 0);

	/* re-enabled on a disarmed, drained timer: nothing */
	tmr_disarm(t);
	pt_expect_empty(t);
	rearm(ep, t);
	CHECK_EQ(wait_one(ep, 200), 0);

	/* until it is armed and expires */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(20), 0);
	CHECK_EQ(wait_one(ep, PT_WAIT_MS), 1);
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	CHECK_SYS(close(t));
	CHECK_SYS(close(ep));
	return PT_PASS;
}
