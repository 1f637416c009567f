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

static int wait_one(int ep, int timeout_ms)
{
	struct epoll_event e[2];
	int n;

	do
		n = epoll_wait(ep, e, 2, timeout_ms);
	while (n < 0 && errno == EINTR);
	CHECK_SYS(n);
	if (n > 0) {
		CHECK_EQ(n, 1);
		CHECK_EQ(e[0].events, EPOLLIN);
		CHECK_EQ(e[0].data.u64, 0x5eed);
	}
	return n;
}

static void add(int ep, int fd, uint32_t events)
{
	struct epoll_event e = { .events = events, .data.u64 = 0x5eed };

	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
}

static int new_ep(int fd, uint32_t events)
{
	int ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));

	add(ep, fd, events);
	return ep;
}

/* A non-blocking object, and an epoll set for it. */
FIXTURE(object) {
	int fd, ep;
};

FIXTURE_SETUP(object)
{
	self->fd = fx_new(POLLFS_NONBLOCK);
	self->ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
}

FIXTURE_TEARDOWN(object)
{
	CHECK_SYS(close(self->ep));
	CHECK_SYS(close(self->fd));
}

static void *epoll_waiter(void *unused)
{
	(void)unused;
	atomic_store(&waiter_tid, gettid());
	return (void *)(intptr_t)wait_one(ep_shared, 3 * PT_WAIT_MS);
}

TEST_F(object, level_triggered)
{
	int fd = self->fd, ep = self->ep;

	add(ep, fd, EPOLLIN);
	CHECK_EQ(wait_one(ep, 0), 0);
	fx_arm(fd, &word, 5, FX_PRIVATE);
	CHECK_EQ(wait_one(ep, 100), 0);
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	CHECK_EQ(wait_one(ep, 0), 1);
	CHECK_EQ(wait_one(ep, 0), 1);
	fx_expect_rec(fd, &word, 5, FX_PRIVATE);
	CHECK_EQ(wait_one(ep, 50), 0);
}

/* One report per wake; the next arm and wake is a new edge. */
TEST_F(object, edge_triggered)
{
	int fd = self->fd, ep = self->ep;

	add(ep, fd, EPOLLIN | EPOLLET);
	fx_arm(fd, &word, 5, FX_SHARED);
	CHECK_EQ(wait_one(ep, 50), 0);
	CHECK_EQ(fx_wake(&word, 1, FX_SHARED), 1);
	CHECK_EQ(wait_one(ep, 0), 1);
	CHECK_EQ(wait_one(ep, 50), 0);
	fx_expect_ready(fd);
	fx_expect_rec(fd, &word, 5, FX_SHARED);
	CHECK_EQ(wait_one(ep, 0), 0);
	fx_arm(fd, &word, 5, FX_PRIVATE);
	CHECK_EQ(wait_one(ep, 0), 0);
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	CHECK_EQ(wait_one(ep, 0), 1);
	CHECK_EQ(wait_one(ep, 0), 0);
	fx_expect_rec(fd, &word, 5, FX_PRIVATE);
}

/* Reported once, again after EPOLL_CTL_MOD. */
TEST_F(object, oneshot)
{
	struct epoll_event e;
	int fd = self->fd, ep = self->ep;

	add(ep, fd, EPOLLIN | EPOLLONESHOT);
	fx_arm(fd, &word, 5, FX_PRIVATE);
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	CHECK_EQ(wait_one(ep, 0), 1);
	CHECK_EQ(wait_one(ep, 0), 0);
	e.events = EPOLLIN | EPOLLONESHOT;
	e.data.u64 = 0x5eed;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &e));
	CHECK_EQ(wait_one(ep, 0), 1);	/* still unread */
	fx_expect_rec(fd, &word, 5, FX_PRIVATE);
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &e));
	CHECK_EQ(wait_one(ep, 0), 0);
}

/* A thread asleep in epoll_wait() is woken by the FUTEX_WAKE, level,
 * edge or one-shot: an epoll set of each. */
TEST_F(object, sleeper_woken)
{
	pthread_t th;
	void *ret;
	int fd = self->fd;

	for (int i = 0; i < 3; i++) {
		uint32_t events = i == 0 ? EPOLLIN :
				  i == 1 ? EPOLLIN | EPOLLET :
					   EPOLLIN | EPOLLONESHOT;

		ep_shared = new_ep(fd, events);
		fx_arm(fd, &word, 5, FX_PRIVATE);
		atomic_store(&waiter_tid, 0);
		CHECK_EQ(pthread_create(&th, NULL, epoll_waiter, NULL), 0);
		while (!atomic_load(&waiter_tid))
			pt_sleep_ms(1);
		fx_wait_sleeping(atomic_load(&waiter_tid), SYS_epoll_wait);
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
