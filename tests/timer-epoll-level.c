// SPDX-License-Identifier: MIT
/*
 * Level-triggered epoll reports a ready timer again and again until it is
 * read, and not before it is ready or after.
 */
#include "lib/timer.h"

#include <sys/epoll.h>

PT_BUDGET(50);

static int wait_events(int ep, int timeout_ms, uint64_t want)
{
	struct epoll_event e[4];
	int n = CHECK_SYS(epoll_wait(ep, e, 4, timeout_ms));

	if (n > 0) {
		CHECK_EQ(n, 1);
		CHECK_EQ(e[0].data.u64, want);
		CHECK(e[0].events & EPOLLIN);
		CHECK(!(e[0].events & (EPOLLERR | EPOLLHUP)));
	}
	return n;
}

int main(void)
{
	struct pollfs_timer_event ev;
	struct epoll_event e;
	int ep, t, other;
	int64_t t0;

	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	t = tmr_new(POLLFS_NONBLOCK);
	other = tmr_new(POLLFS_NONBLOCK);	/* never armed */
	e.events = EPOLLIN;
	e.data.u64 = 7;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, t, &e));
	e.data.u64 = 8;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, other, &e));

	CHECK_EQ(wait_events(ep, 0, 7), 0);
	CHECK_EQ(wait_events(ep, 100, 7), 0);

	for (int round = 0; round < 3; round++) {
		t0 = pt_mono();
		tmr_arm(t, CLOCK_MONOTONIC, 0, MS(50), 0);
		CHECK_EQ(wait_events(ep, PT_WAIT_MS, 7), 1);
		CHECK(pt_mono() >= t0 + MS(50));
		/* again and again until read */
		for (int i = 0; i < 5; i++)
			CHECK_EQ(wait_events(ep, 0, 7), 1);
		CHECK_EQ(wait_events(ep, 1000, 7), 1);
		tmr_read_event(t, &ev);
		tmr_check_oneshot(&ev);
		CHECK_EQ(wait_events(ep, 0, 7), 0);
		CHECK_EQ(wait_events(ep, 100, 7), 0);
	}
	CHECK_SYS(close(t));
	CHECK_SYS(close(other));
	CHECK_SYS(close(ep));
	return PT_PASS;
}
