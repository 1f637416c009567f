// SPDX-License-Identifier: MIT
/*
 * A watched object (POLLFS_FUTEX_WATCH, 1.1) that is armed and not
 * woken reads as any object with nothing ready: EAGAIN with O_NONBLOCK
 * (set at creation or by fcntl), and without it the read sleeps until a
 * FUTEX_WAKE (another thread's) and then returns the record.  So "read
 * until EAGAIN" drains it: under EPOLLET each wake is one edge, the
 * drain returns the record and ends on EAGAIN with the object armed
 * again, and the next wake is a new edge; level-triggered epoll reports
 * it until it is read, and not after.  The same with a wait-any set of
 * watched records, several of them woken before the drain.  Each of these
 * is a TEST of its own.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>

PT_BUDGET(50);

static uint32_t word = 50;
static uint32_t words[3] = { 7, 8, 9 };
static atomic_int sleeper_tid;

/* Reads records until EAGAIN; returns how many came, into got[]. */
static int drain(int fd, struct pollfs_futex_event *got, int max)
{
	int n = 0;

	for (;;) {
		ssize_t r;

		CHECK(n < max);
		errno = 0;
		r = read(fd, &got[n], sizeof(got[n]));
		if (r == -1 && errno == EAGAIN)
			return n;
		CHECK_EQ(r, FX_REC);
		n++;
	}
}

static void *sleeper(void *arg)
{
	int fd = (int)(intptr_t)arg;

	atomic_store(&sleeper_tid, (int)syscall(SYS_gettid));
	word = 51;		/* before the wake; the read sees it */
	fx_expect_rec(fd, &word, 52, FX_PRIVATE | FX_WATCH);
	return NULL;
}

TEST(armed_unwoken_reads_eagain_when_nonblocking)
{
	struct pollfs_futex_event got[8];
	int fd, bfd;

	/* O_NONBLOCK at creation */
	fd = fx_new(POLLFS_NONBLOCK);
	fx_arm(fd, &word, 50, FX_PRIVATE | FX_WATCH);
	CHECK_ERR(read(fd, got, sizeof(got)), EAGAIN);
	CHECK_ERR(read(fd, got, FX_REC), EAGAIN);
	CHECK_EQ(fx_revents(fd, 20), 0);
	/* and set by fcntl */
	bfd = fx_new(0);
	fx_arm(bfd, &word, 50, FX_SHARED | FX_WATCH);
	CHECK_SYS(fcntl(bfd, F_SETFL, O_NONBLOCK));
	CHECK_ERR(read(bfd, got, sizeof(got)), EAGAIN);
	CHECK_SYS(fcntl(bfd, F_SETFL, 0));
	fx_expect_armed(fd);
	fx_expect_armed(bfd);
	CHECK_SYS(close(bfd));
	CHECK_SYS(close(fd));
}

TEST(blocking_read_sleeps_until_another_threads_wake)
{
	pthread_t th;
	int bfd;

	/* the sleeper's object is the word's only waiter */
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_SHARED), 0);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
	bfd = fx_new(0);
	fx_arm(bfd, &word, 50, FX_PRIVATE | FX_WATCH);
	CHECK_EQ(pthread_create(&th, NULL, sleeper, (void *)(intptr_t)bfd), 0);
	while (!atomic_load(&sleeper_tid))
		pt_sleep_ms(1);
	fx_wait_sleeping(atomic_load(&sleeper_tid), SYS_read);
	CHECK_EQ(word, 51);
	word = 52;
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	CHECK_EQ(pthread_join(th, NULL), 0);
	fx_expect_armed(bfd);		/* armed again on 52 */
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	fx_expect_watch(bfd, &word, 52, FX_PRIVATE | FX_WATCH);
	CHECK_SYS(close(bfd));
}

TEST_F(fx_epoll, epollet_one_edge_per_wake_drained_until_eagain)
{
	struct pollfs_futex_event got[8];
	int fd = self->fd, ep = self->ep;

	fx_arm(fd, &word, word, FX_PRIVATE | FX_WATCH);
	fx_epoll_add(ep, fd, EPOLLIN | EPOLLET);
	CHECK_EQ(fx_epoll_wait(ep, 0), 0);
	for (int i = 0; i < 10; i++) {
		word = 100 + (uint32_t)i;
		CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
		CHECK_EQ(fx_epoll_wait(ep, PT_WAIT_MS), 1);
		CHECK_EQ(fx_epoll_wait(ep, 0), 0);	/* one edge */
		CHECK_EQ(drain(fd, got, 8), 1);
		fx_check_rec(&got[0], &word, 100 + (uint32_t)i,
			     FX_PRIVATE | FX_WATCH);
		CHECK_EQ(fx_epoll_wait(ep, 0), 0);	/* the drain woke nothing */
		fx_expect_armed(fd);
	}
}

TEST_F(fx_epoll, level_triggered_reported_until_read)
{
	struct pollfs_futex_event got[8];
	int fd = self->fd, ep = self->ep;

	fx_arm(fd, &word, word, FX_PRIVATE | FX_WATCH);
	fx_epoll_add(ep, fd, EPOLLIN);
	CHECK_EQ(fx_epoll_wait(ep, 0), 0);
	for (int i = 0; i < 5; i++) {
		word = 200 + (uint32_t)i;
		CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
		CHECK_EQ(fx_epoll_wait(ep, PT_WAIT_MS), 1);
		CHECK_EQ(fx_epoll_wait(ep, 0), 1);
		CHECK_EQ(fx_epoll_wait(ep, 0), 1);
		CHECK_EQ(drain(fd, got, 8), 1);
		fx_check_rec(&got[0], &word, 200 + (uint32_t)i,
			     FX_PRIVATE | FX_WATCH);
		CHECK_EQ(fx_epoll_wait(ep, 0), 0);
		CHECK_EQ(fx_epoll_wait(ep, 20), 0);
	}
}

/*
 * A watched wait-any, all three woken before the drain: one edge; read
 * one record at a time until EAGAIN, each woken record comes exactly once
 * (none is lost to the re-arm of another), with its word's value; then
 * all three are armed again.
 */
TEST_F(fx_epoll, waitany_set_drained_once_per_woken_record)
{
	struct pollfs_futex_event got[8], evs[3];
	int fd = self->fd, ep = self->ep;
	bool seen[3];

	fx_epoll_add(ep, fd, EPOLLIN | EPOLLET);
	for (int i = 0; i < 3; i++)
		evs[i] = fx_ev(&words[i], words[i], FX_PRIVATE | FX_WATCH);
	fx_armv(fd, evs, 3);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 3; i++) {
			words[i] += 10;
			CHECK_EQ(fx_wake(&words[i], 1, FX_PRIVATE), 1);
		}
		CHECK_EQ(fx_epoll_wait(ep, PT_WAIT_MS), 1);
		CHECK_EQ(drain(fd, got, 8), 3);
		memset(seen, 0, sizeof(seen));
		for (int k = 0; k < 3; k++) {
			int i = -1;

			for (int j = 0; j < 3; j++)
				if (got[k].addr == (uintptr_t)&words[j])
					i = j;
			CHECK(i >= 0 && !seen[i]);
			seen[i] = true;
			fx_check_rec(&got[k], &words[i], words[i],
				     FX_PRIVATE | FX_WATCH);
		}
		CHECK_EQ(fx_epoll_wait(ep, 0), 0);
		fx_expect_armed(fd);
	}
	/* and each one alone */
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(fx_wake(&words[i], 1, FX_PRIVATE), 1);
		CHECK_EQ(fx_epoll_wait(ep, PT_WAIT_MS), 1);
		CHECK_EQ(drain(fd, got, 8), 1);
		fx_check_rec(&got[0], &words[i], words[i],
			     FX_PRIVATE | FX_WATCH);
	}
	fx_expect_armed(fd);
}

int main(void)
{
	return pt_run_tests();
}
