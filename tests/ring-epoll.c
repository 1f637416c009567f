// SPDX-License-Identifier: MIT
/*
 * A ringed object in epoll (contract 1.2: POLLIN exactly when a read
 * would return a record; the kernel wakes pollers when it adds a
 * record, as without a ring):
 *  - level-triggered: EPOLLIN while the ring holds a record, reported
 *    again and again until the consumer takes it by storing head (no
 *    read), then none; while records wait in the object with the ring
 *    taken empty, EPOLLIN still, until read(2); a head that is not a
 *    ring's hides the slots from epoll too;
 *  - edge-triggered: an event per record the kernel adds, none while
 *    nothing is added, even with records left in the ring; a consumer
 *    that empties the ring before it waits gets the next record's
 *    event;
 *  - the same with a periodic timer, level and edge;
 *  - an epoll_wait asleep is woken by the record (from another thread).
 */
#include "lib/futex.h"
#include "lib/timer.h"
#include "lib/ring.h"

#include <pthread.h>
#include <sys/epoll.h>

PT_BUDGET(40);

#define WATCHED		(FX_PRIVATE | FX_WATCH)

static int epoll_of(int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };
	int ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));

	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	return ep;
}

/* EPOLLIN reported within @timeout_ms, or not. */
static bool in_event(int ep, int timeout_ms)
{
	struct epoll_event ev;
	int n;

	do
		n = epoll_wait(ep, &ev, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	CHECK_SYS(n);
	return n == 1 && (ev.events & EPOLLIN);
}

static void store_and_wake(uint32_t *word, uint32_t val, long counted)
{
	__atomic_store_n(word, val, __ATOMIC_SEQ_CST);
	CHECK_EQ(fx_wake(word, INT_MAX, FX_PRIVATE), counted);
}

TEST_F(fx_epoll, level_futex)
{
	static uint32_t word;
	struct pollfs_futex_event got[4];
	struct rg_ring ring;
	int fd = self->fd, ep = self->ep;
	uint32_t tail;

	fx_epoll_add(ep, fd, EPOLLIN);
	rg_setup(&ring, fd, 2, RG_FUTEX_REC);
	fx_arm(fd, &word, 0, WATCHED);
	CHECK(!in_event(ep, 0));
	store_and_wake(&word, 1, 1);
	CHECK(in_event(ep, PT_WAIT_MS));
	CHECK(in_event(ep, 0));
	CHECK(in_event(ep, 0));
	CHECK_EQ(rg_take(&ring, got, 4), 1);
	CHECK(!in_event(ep, 0));

	/*
	 * A head that is not a ring's hides the slots.  (Putting head
	 * back wakes nobody: epoll learns of it at the next record; poll
	 * asks the object at once.)
	 */
	store_and_wake(&word, 2, 1);
	rg_wait_ready(&ring, 1);
	tail = rg_tail(&ring);
	__atomic_store_n(ring.head, tail + 1, __ATOMIC_RELEASE);
	CHECK(!in_event(ep, 0));
	CHECK(!pt_poll_in(fd, 0));
	__atomic_store_n(ring.head, tail - 1, __ATOMIC_RELEASE);
	CHECK(pt_poll_in(fd, 0));
	CHECK_EQ(rg_take(&ring, got, 4), 1);
	CHECK(!in_event(ep, 0));

	/* the ring full and taken empty: the object's record keeps it up */
	store_and_wake(&word, 3, 1);
	store_and_wake(&word, 4, 1);
	store_and_wake(&word, 5, 1);
	rg_wait_overflow(&ring);
	CHECK_EQ(rg_take(&ring, got, 4), 2);
	CHECK(in_event(ep, 0));
	CHECK_EQ(pt_read_nb(fd, got, sizeof(got)), FX_REC);
	fx_check_rec(&got[0], &word, 5, WATCHED);
	CHECK(!in_event(ep, 0));
	rg_unmap(&ring);
}

TEST_F(fx_epoll, edge_futex)
{
	static uint32_t word;
	struct pollfs_futex_event got[8];
	struct rg_ring ring;
	int fd = self->fd, ep = self->ep;

	fx_epoll_add(ep, fd, EPOLLIN | EPOLLET);
	rg_setup(&ring, fd, 8, RG_FUTEX_REC);
	fx_arm(fd, &word, 0, WATCHED);
	store_and_wake(&word, 1, 1);
	CHECK(in_event(ep, PT_WAIT_MS));
	/* no new record, no new edge, though the ring holds one */
	CHECK(!in_event(ep, 0));
	CHECK_EQ(rg_ready(&ring), 1);
	/* each record the kernel adds is an edge */
	store_and_wake(&word, 2, 1);
	CHECK(in_event(ep, PT_WAIT_MS));
	CHECK(!in_event(ep, 0));
	/* emptied, then the next record's edge */
	CHECK_EQ(rg_take(&ring, got, 8), 2);
	CHECK(!in_event(ep, 0));
	store_and_wake(&word, 3, 1);
	CHECK(in_event(ep, PT_WAIT_MS));
	CHECK_EQ(rg_take(&ring, got, 8), 1);
	fx_check_rec(&got[0], &word, 3, WATCHED);
	rg_unmap(&ring);
}

static void timer_in_epoll(uint32_t events)
{
	struct pollfs_timer_event got[16];
	struct rg_ring ring;
	int fd = tmr_new(POLLFS_NONBLOCK), ep = epoll_of(fd, events);
	int wakes = 0;
	uint64_t total = 0;

	rg_setup(&ring, fd, 16, RG_TIMER_REC);
	tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(3), MS(3));
	while (total < 10) {
		size_t n;

		if (!in_event(ep, PT_WAIT_MS))
			FAIL("no event after %llu expirations",
			     (unsigned long long)total);
		wakes++;
		/* the consumer's turn: everything there is; read(2) only
		 * for what waits in the object (the ring was full) */
		n = rg_take(&ring, got, 16);
		if (!n && rg_overflow(&ring)) {
			ssize_t r = pt_read_nb(fd, got, sizeof(got));

			CHECK(r > 0 && r % TMR_EVENT_SIZE == 0);
			n = (size_t)r / TMR_EVENT_SIZE;
		}
		if (!n && !(events & EPOLLET))
			FAIL("EPOLLIN with the ring empty and nothing in the "
			     "object (flags %#x)", *ring.flags);
		for (size_t i = 0; i < n; i++)
			total += got[i].expirations;
	}
	tmr_disarm(fd);
	/* level: nothing left, no event */
	rg_take(&ring, got, 16);
	CHECK(!in_event(ep, 20));
	pt_diag("%llu expirations in %d wake-ups", (unsigned long long)total,
		wakes);
	rg_unmap(&ring);
	CHECK_SYS(close(ep));
	CHECK_SYS(close(fd));
}

TEST(level_timer)
{
	timer_in_epoll(EPOLLIN);
}

TEST(edge_timer)
{
	timer_in_epoll(EPOLLIN | EPOLLET);
}

static uint32_t sleeper_word;

static void *wake_later(void *arg)
{
	(void)arg;
	pt_sleep_ms(50);
	__atomic_store_n(&sleeper_word, 1, __ATOMIC_SEQ_CST);
	fx_wake(&sleeper_word, 1, FX_PRIVATE);
	return NULL;
}

TEST_F(fx_epoll, wakes_a_sleeping_epoll_wait)
{
	struct pollfs_futex_event got;
	struct rg_ring ring;
	int fd = self->fd, ep = self->ep;
	pthread_t th;
	int64_t t0;

	fx_epoll_add(ep, fd, EPOLLIN | EPOLLET);
	rg_setup(&ring, fd, 4, RG_FUTEX_REC);
	fx_arm(fd, &sleeper_word, 0, WATCHED);
	CHECK_EQ(pthread_create(&th, NULL, wake_later, NULL), 0);
	t0 = pt_mono();
	CHECK(in_event(ep, PT_WAIT_MS));
	CHECK(pt_mono() - t0 < MS(PT_WAIT_MS) / 2);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(rg_take(&ring, &got, 1), 1);
	fx_check_rec(&got, &sleeper_word, 1, WATCHED);
	rg_unmap(&ring);
}

int main(void)
{
	return pt_run_tests();
}
