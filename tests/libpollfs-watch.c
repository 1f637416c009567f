// SPDX-License-Identifier: MIT
/*
 * libpollfs 1.1: pollfs_futex_watch(), pollfs_futex_disarm(),
 * pollfs_timer_get(), and the return rule of pollfs.h (arms give 0 or 1,
 * reads a record count).
 *
 * A watched object stays armed: each wake is one read, whose record holds
 * the word's value at the read, and no write; the disarm takes the
 * object out of the futex's waiters; pollfs_sem_cancel() disarms.
 */
#include "lib/futex.h"
#include "lib/timer.h"

#include <pollfs.h>

PT_BUDGET(60);

TEST(watch_counts_every_wake)
{
	struct pollfs_futex_event rec[4];
	uint32_t word = 5;
	int fd;

	fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC));
	CHECK_EQ(pollfs_futex_watch(fd, &word, 4, 0), 1);	/* mismatch */
	CHECK_ERR(pollfs_futex_read(fd, rec, 1), EINVAL);	/* unarmed */
	CHECK_EQ(pollfs_futex_watch(fd, &word, 5, 0), 0);

	for (uint32_t i = 6; i < 16; i++) {
		CHECK_ERR(pollfs_futex_read(fd, rec, 4), EAGAIN);
		__atomic_store_n(&word, i, __ATOMIC_RELEASE);
		/* armed again by the previous read: a waiter each time */
		CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
		pt_wait_readable(fd, PT_WAIT_MS);
		CHECK_EQ(pollfs_futex_read(fd, rec, 4), 1);
		CHECK_EQ(rec[0].addr, (uint64_t)(uintptr_t)&word);
		CHECK_EQ(rec[0].val, i);
		CHECK_EQ(rec[0].flags, POLLFS_FUTEX_WATCH);
	}

	CHECK_EQ(pollfs_futex_disarm(fd), 0);
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 0);
	CHECK(!pt_poll_in(fd, 0));
	CHECK_ERR(pollfs_futex_read(fd, rec, 1), EINVAL);
	CHECK_EQ(pollfs_futex_disarm(fd), 0);		/* unarmed: still 0 */
	close(fd);
}

TEST(disarm_drops_a_woken_record)
{
	struct pollfs_futex_event rec;
	uint32_t word = 0;
	int fd;

	fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK));
	CHECK_EQ(pollfs_futex_arm(fd, &word, 0, 0), 0);
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	CHECK(pt_poll_in(fd, 0));
	CHECK_EQ(pollfs_futex_disarm(fd), 0);
	CHECK(!pt_poll_in(fd, 0));
	CHECK_ERR(pollfs_futex_read(fd, &rec, 1), EINVAL);
	CHECK_ERR(pollfs_futex_disarm(-1), EBADF);
	close(fd);
}

/* The semaphore's cancel disarms: the object is no waiter afterwards. */
TEST(sem_cancel_disarms)
{
	struct pollfs_sem sem;
	int fd;

	CHECK_EQ(pollfs_sem_init(&sem, 0, 0), 0);
	fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK));
	CHECK_EQ(pollfs_sem_arm(&sem, fd), 0);
	CHECK_EQ(pollfs_sem_cancel(&sem, fd), 0);
	CHECK_EQ(fx_wake(&sem.count, 1, FX_PRIVATE), 0);
	CHECK_EQ(pollfs_sem_post(&sem), 0);
	CHECK(!pt_poll_in(fd, 0));
	CHECK_EQ(pollfs_sem_arm(&sem, fd), 1);		/* a unit is there */
	close(fd);
}

TEST(timer_get_consumes_nothing)
{
	struct itimerspec its = {
		.it_value = { .tv_nsec = 20 * 1000 * 1000 },
		.it_interval = { .tv_sec = 3600 },
	};
	struct pollfs_timer_event ev, now;
	int fd, sig;

	fd = CHECK_SYS(pollfs_timer(POLLFS_NONBLOCK));
	CHECK_EQ(pollfs_timer_get(fd, &now), 0);
	CHECK_EQ(now.expirations, 0);
	CHECK_EQ(now.remaining.tv_sec, 0);
	CHECK_EQ(now.remaining.tv_nsec, 0);
	CHECK_EQ(now.interval.tv_sec, 0);

	CHECK_EQ(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &its), 0);
	CHECK_EQ(pollfs_timer_get(fd, &now), 0);
	CHECK_EQ(now.expirations, 0);
	CHECK_EQ(now.interval.tv_sec, 3600);
	CHECK(now.remaining.tv_sec == 0 && now.remaining.tv_nsec > 0 &&
	      now.remaining.tv_nsec <= 20 * 1000 * 1000);

	pt_wait_readable(fd, PT_WAIT_MS);
	CHECK_EQ(pollfs_timer_get(fd, &now), 0);
	CHECK_EQ(now.expirations, 1);
	CHECK_EQ(pollfs_timer_get(fd, &now), 0);	/* still there */
	CHECK_EQ(now.expirations, 1);
	CHECK(now.remaining.tv_sec > 3500);
	CHECK_EQ(pollfs_timer_read(fd, &ev), 1);
	CHECK_EQ(ev.expirations, 1);
	CHECK_EQ(pollfs_timer_get(fd, &now), 0);
	CHECK_EQ(now.expirations, 0);

	/* another kind of object has no timer state */
	sig = CHECK_SYS(pollfs_futex(0));
	CHECK_ERR(pollfs_timer_get(sig, &now), ENOTTY);
	close(sig);
	close(fd);
}

int main(void)
{
	return pt_run_tests();
}
