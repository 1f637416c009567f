// SPDX-License-Identifier: MIT
/*
 * Pollable synchronization objects on a 32-bit futex word.
 *
 * Waiters are threads sleeping in FUTEX_WAIT and pollfs futex objects
 * armed on the same word; the kernel counts both alike, so one wake
 * reaches whichever waits.  The word is the whole state: an event's is
 * 0 or 1, a semaphore's is its count.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pollfs.h"

#define POLLFS_SEM_MAX	INT_MAX

static int word_op(uint32_t flags, int op)
{
	return flags & POLLFS_FUTEX_SHARED ? op : op | FUTEX_PRIVATE_FLAG;
}

static void word_wake(uint32_t *word, uint32_t flags, int n)
{
	syscall(SYS_futex, word, word_op(flags, FUTEX_WAKE), n, NULL, NULL,
		0);
}

/*
 * Sleeps while *word == val, until @abstime (CLOCK_MONOTONIC, NULL for
 * no limit).  0 when woken or the value changed, -1 with ETIMEDOUT or
 * EINTR.
 */
static int word_wait(uint32_t *word, uint32_t flags, uint32_t val,
		     const struct timespec *abstime)
{
	long ret = syscall(SYS_futex, word,
			   word_op(flags, FUTEX_WAIT_BITSET), val, abstime,
			   NULL, FUTEX_BITSET_MATCH_ANY);

	if (ret < 0 && errno == EAGAIN)
		return 0;
	return ret < 0 ? -1 : 0;
}

void pollfs_event_init(struct pollfs_event *ev, int flags)
{
	ev->state = 0;
	ev->flags = flags & POLLFS_FUTEX_SHARED;
}

void pollfs_event_set(struct pollfs_event *ev)
{
	if (!__atomic_exchange_n(&ev->state, 1, __ATOMIC_RELEASE))
		word_wake(&ev->state, ev->flags, INT_MAX);
}

void pollfs_event_reset(struct pollfs_event *ev)
{
	__atomic_store_n(&ev->state, 0, __ATOMIC_RELAXED);
}

int pollfs_event_is_set(const struct pollfs_event *ev)
{
	return __atomic_load_n(&ev->state, __ATOMIC_ACQUIRE);
}

int pollfs_event_wait(struct pollfs_event *ev, const struct timespec *abstime)
{
	while (!pollfs_event_is_set(ev))
		if (word_wait(&ev->state, ev->flags, 0, abstime))
			return -1;
	return 0;
}

int pollfs_event_arm(struct pollfs_event *ev, int fd)
{
	if (pollfs_event_is_set(ev))
		return 1;
	return pollfs_futex_arm(fd, &ev->state, 0, ev->flags);
}

int pollfs_sem_init(struct pollfs_sem *sem, unsigned int value, int flags)
{
	if (value > POLLFS_SEM_MAX) {
		errno = EINVAL;
		return -1;
	}
	sem->count = value;
	sem->flags = flags & POLLFS_FUTEX_SHARED;
	return 0;
}

int pollfs_sem_post(struct pollfs_sem *sem)
{
	uint32_t count = __atomic_load_n(&sem->count, __ATOMIC_RELAXED);

	do {
		if (count >= POLLFS_SEM_MAX) {
			errno = EOVERFLOW;
			return -1;
		}
	} while (!__atomic_compare_exchange_n(&sem->count, &count, count + 1,
					      true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
	word_wake(&sem->count, sem->flags, 1);
	return 0;
}

int pollfs_sem_trywait(struct pollfs_sem *sem)
{
	uint32_t count = __atomic_load_n(&sem->count, __ATOMIC_RELAXED);

	while (count > 0)
		if (__atomic_compare_exchange_n(&sem->count, &count, count - 1,
						true, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return 0;
	errno = EAGAIN;
	return -1;
}

int pollfs_sem_wait(struct pollfs_sem *sem, const struct timespec *abstime)
{
	while (pollfs_sem_trywait(sem))
		if (word_wait(&sem->count, sem->flags, 0, abstime))
			return -1;
	return 0;
}

int pollfs_sem_arm(struct pollfs_sem *sem, int fd)
{
	if (__atomic_load_n(&sem->count, __ATOMIC_RELAXED))
		return 1;
	return pollfs_futex_arm(fd, &sem->count, 0, sem->flags);
}

/*
 * After @fd polled readable: take a unit, or re-arm @fd while the count
 * is zero.  The re-arming write replaces the woken wait, so the record
 * need not be read.
 */
int pollfs_sem_trywait_fd(struct pollfs_sem *sem, int fd)
{
	for (;;) {
		int ret;

		if (!pollfs_sem_trywait(sem))
			return 0;
		ret = pollfs_futex_arm(fd, &sem->count, 0, sem->flags);
		if (ret < 0)
			return -1;
		if (!ret) {
			errno = EAGAIN;
			return -1;
		}
	}
}

/*
 * Stop waiting with @fd.  A post may have woken @fd and no thread: pass
 * that wake on while units are left, so no sleeper is stranded.
 */
int pollfs_sem_cancel(struct pollfs_sem *sem, int fd)
{
	if (pollfs_futex_disarm(fd))
		return -1;
	if (__atomic_load_n(&sem->count, __ATOMIC_ACQUIRE))
		word_wake(&sem->count, sem->flags, 1);
	return 0;
}
