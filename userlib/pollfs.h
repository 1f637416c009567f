/* SPDX-License-Identifier: MIT */
/*
 * libpollfs: the pollfs objects in libc style, and pollable user-space
 * synchronization objects built on the pollfs futex.
 *
 * Functions that can fail return -1 with errno set.  On success: a new
 * file descriptor from the functions that create an object; the number
 * of records from the _read functions (at least 1; pollfs_aio_read gives
 * 0 once its context is gone); 0 from the _arm and _watch functions when
 * the wait is armed, 1 when no wait is needed (the word no longer holds
 * the value, the event is set, the semaphore has units); the number of
 * records taken from the pollfs_ring_take functions and pollfs_ring_read
 * (0 when there is none), and from pollfs_ring_wait (at least 1); 0 from
 * the others.  See pollfs(7) and the pages of section 3.
 */
#ifndef POLLFS_H
#define POLLFS_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <linux/aio_abi.h>
#include <linux/pollfs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Objects.  flags: POLLFS_NONBLOCK and POLLFS_CLOEXEC. */
int pollfs_signal(const sigset_t *mask, int flags);
int pollfs_signal_setmask(int fd, const sigset_t *mask);
ssize_t pollfs_signal_read(int fd, struct pollfs_siginfo *info, size_t n);

int pollfs_timer(int flags);
int pollfs_timer_arm(int fd, clockid_t clockid, int flags,
		     const struct itimerspec *its);
int pollfs_timer_read(int fd, struct pollfs_timer_event *event);
int pollfs_timer_get(int fd, struct pollfs_timer_event *state);

int pollfs_futex(int flags);
int pollfs_futex_arm(int fd, const uint32_t *addr, uint32_t val, int flags);
int pollfs_futex_armv(int fd, const struct pollfs_futex_event *events,
		      unsigned int n);
ssize_t pollfs_futex_read(int fd, struct pollfs_futex_event *events,
			  size_t n);
int pollfs_futex_watch(int fd, const uint32_t *addr, uint32_t val, int flags);
int pollfs_futex_disarm(int fd);

int pollfs_aio(aio_context_t ctx, int flags);
int pollfs_aio_read(int fd, struct pollfs_aio_event *event);

/*
 * A pollable event: set wakes every waiter, threads blocked in
 * pollfs_event_wait() and futex objects armed with pollfs_event_arm()
 * alike.  Lives in any memory; in memory shared between processes,
 * initialize it with POLLFS_FUTEX_SHARED.
 */
struct pollfs_event {
	uint32_t state;
	uint32_t flags;
};

void pollfs_event_init(struct pollfs_event *ev, int flags);
void pollfs_event_set(struct pollfs_event *ev);
void pollfs_event_reset(struct pollfs_event *ev);
int pollfs_event_is_set(const struct pollfs_event *ev);
int pollfs_event_wait(struct pollfs_event *ev, const struct timespec *abstime);
int pollfs_event_arm(struct pollfs_event *ev, int fd);

/*
 * A pollable counting semaphore: each post wakes one waiter, a thread in
 * pollfs_sem_wait() or a futex object armed with pollfs_sem_arm().
 */
struct pollfs_sem {
	uint32_t count;
	uint32_t flags;
};

int pollfs_sem_init(struct pollfs_sem *sem, unsigned int value, int flags);
int pollfs_sem_post(struct pollfs_sem *sem);
int pollfs_sem_trywait(struct pollfs_sem *sem);
int pollfs_sem_wait(struct pollfs_sem *sem, const struct timespec *abstime);
int pollfs_sem_arm(struct pollfs_sem *sem, int fd);
int pollfs_sem_trywait_fd(struct pollfs_sem *sem, int fd);
int pollfs_sem_cancel(struct pollfs_sem *sem, int fd);

/*
 * The record ring (1.2): a timer or futex object's records, written by
 * the kernel into memory mapped here and taken with loads and stores.
 * The fields are the mapping as POLLFS_IOC_RING laid it out (params);
 * record i is at records + (i & mask) * params.record_size.  A ring is
 * the object's: every descriptor of the object and every mapping of it
 * (a forked child's too) share it.
 */
struct pollfs_ring {
	int fd;				/* the object */
	uint32_t mask;			/* params.entries - 1 */
	uint32_t *head;			/* the consumers' index */
	const uint32_t *tail;		/* the kernel's index */
	const uint32_t *flags;		/* POLLFS_RING_OVERFLOW */
	const unsigned char *records;	/* record 0 */
	void *map;			/* the mapping, params.mmap_size bytes */
	struct pollfs_ring_params params;
};

int pollfs_ring_setup(int fd, unsigned int entries, struct pollfs_ring *ring);
int pollfs_ring_map(int fd, const struct pollfs_ring_params *params,
		    struct pollfs_ring *ring);
int pollfs_ring_unmap(struct pollfs_ring *ring);
unsigned int pollfs_ring_ready(const struct pollfs_ring *ring);
int pollfs_ring_overflow(const struct pollfs_ring *ring);
ssize_t pollfs_ring_take(struct pollfs_ring *ring, void *records, size_t n);
ssize_t pollfs_ring_take_shared(struct pollfs_ring *ring, void *records,
				size_t n);
ssize_t pollfs_ring_read(struct pollfs_ring *ring, void *records, size_t n);
ssize_t pollfs_ring_wait(struct pollfs_ring *ring, void *records, size_t n,
			 int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* POLLFS_H */
