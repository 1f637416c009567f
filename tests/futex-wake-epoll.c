// SPDX-License-Identifier: MIT
/*
 * epoll sees the wake: level-triggered (reported until read), EPOLLET
 * (once per wake), EPOLLONESHOT (once until re-enabled), and a thread
 * asleep in epoll_wait() is woken by another thread's FUTEX_WAKE.  Each
 * a TEST, on an object of its own.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>

PT_BUDGET(50);

static uint32_t word = 5;
static int ep_shared;
static atomic_int waiter_tid;

static void *epoll_waiter(void *unused)
{
	(void)unused;
	atomic_store(&waiter_tid, gettid());
	return (void *)(intptr_t)fx_epoll_wait(ep_shared, 3 * PT_WAIT_MS);
}

TEST_F(fx_epoll, level_triggered)
{
	int fd = self->fd, ep = self->ep;

	fx_epoll_add(ep, fd, EPOLLIN);
	CHECK_EQ(fx_epoll_wait(ep, 0), 0);
	fx_arm(fd, &word, 5, FX_PRIVATE);
	CHECK_EQ(fx_epoll_wait(ep, 100), 0);
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	CHECK_EQ(fx_epoll_wait(ep, 0), 1);
	CHECK_EQ(fx_epoll_wait(ep, 0), 1);
	fx_expect_rec(fd, &word, 5, FX_PRIVATE);
	CHECK_EQ(fx_epoll_wait(ep, 50), 0);
}

/* One report per wake; the next arm and wake is a new edge. */
TEST_F(fx_epoll, edge_triggered)
{
	int fd = self->fd, ep = self->ep;

	fx_epoll_add(ep, fd, EPOLLIN | EPOLLET);
	fx_arm(fd, &word, 5, FX_SHARED);
	CHECK_EQ(fx_epoll_wait(ep, 50), 0);
	CHECK_EQ(fx_wake(&word, 1, FX_SHARED), 1);
	CHECK_EQ(fx_epoll_wait(ep, 0), 1);
	CHECK_EQ(fx_epoll_wait(ep, 50), 0);
	fx_expect_ready(fd);
	fx_expect_rec(fd, &word, 5, FX_SHARED);
	CHECK_EQ(fx_epoll_wait(ep, 0), 0);
	fx_arm(fd, &word, 5, FX_PRIVATE);
	CHECK_EQ(fx_epoll_wait(ep, 0), 0);
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	CHECK_EQ(fx_epoll_wait(ep, 0), 1);
	CHECK_EQ(fx_epoll_wait(ep, 0), 0);
	fx_expect_rec(fd, &word, 5, FX_PRIVATE);
}

/* Reported once, again after EPOLL_CTL_MOD. */
TEST_F(fx_epoll, oneshot)
{
	struct epoll_event e;
	int fd = self->fd, ep = self->ep;

	fx_epoll_add(ep, fd, EPOLLIN | EPOLLONESHOT);
	fx_arm(fd, &word, 5, FX_PRIVATE);
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	CHECK_EQ(fx_epoll_wait(ep, 0), 1);
	CHECK_EQ(fx_epoll_wait(ep, 0), 0);
	e.events = EPOLLIN | EPOLLONESHOT;
	e.data.u64 = FX_EPOLL_TAG;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &e));
	CHECK_EQ(fx_epoll_wait(ep, 0), 1);	/* still unread */
	fx_expect_rec(fd, &word, 5, FX_PRIVATE);
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &e));
	CHECK_EQ(fx_epoll_wait(ep, 0), 0);
}

/* A thread asleep in epoll_wait() is woken by the FUTEX_WAKE, level,
 * edge or one-shot: an epoll set of each. */
TEST_F(fx_epoll, sleeper_woken)
{
	pthread_t th;
	void *ret;
	int fd = self->fd;

	for (int i = 0; i < 3; i++) {
		uint32_t events = i == 0 ? EPOLLIN :
				  i == 1 ? EPOLLIN | EPOLLET :
					   EPOLLIN | EPOLLONESHOT;

		ep_shared = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
		fx_epoll_add(ep_shared, fd, events);
		fx_arm(fd, &word, 5, FX_PRIVATE);
		atomic_store(&waiter_tid, 0);
		CHECK_EQ(pthread_create(&th, NULL, epoll_waiter, NULL), 0);
		while (!atomic_load(&waiter_tid))
			pt_sleep_ms(1);
		fx_wait_sleeping(atomic_load(&waiter_tid), PT_SYS_EPOLL_WAIT);
		CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
		CHECK_EQ(pthread_join(th, &ret), 0);
		CHECK_EQ((intptr_t)ret, 1);
		fx_expect_rec(fd, &word, 5, FX_PRIVATE);
		CHECK_SYS(close(ep_shared));
	}
}

int main(void)
{
	return pt_run_tests();
}
