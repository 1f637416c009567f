// SPDX-License-Identifier: MIT
/*
 * pollfs record rings (interface 1.2) in an epoll loop: a pollfs periodic
 * timer and a pollfs futex object watching a word that another thread
 * bumps and wakes with a plain FUTEX_WAKE, both with a ring, both in one
 * epoll set.  Each record the kernel makes goes into its object's ring,
 * and the loop takes it from there with loads and stores: epoll_wait is
 * the only system call while the rings keep up, read(2) only for what
 * waited in an object when a ring was full.
 *
 * What a ring adds to a watched word: the object is never re-armed, not
 * even by a read.  It stays a waiter through every wake, so FUTEX_WAKE
 * counts it each time, and each wake is one record, carrying the word's
 * value at that wake: none coalesce while the loop is busy elsewhere.
 *
 * Build: cc loop-ring.c $(pkg-config --cflags --libs libpollfs)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>

#include <pollfs.h>

#define TICKS	4	/* timer expirations to wait for */
#define RINGS	3	/* FUTEX_WAKEs from the other thread */
#define ENTRIES	8	/* records each ring holds */

static uint32_t bell;	/* the futex word the pollfs object watches */
static long counted;	/* waiters the thread's FUTEX_WAKEs woke */

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/*
 * The other side, which knows nothing of pollfs: it rings the bell now
 * and then, and adds up what FUTEX_WAKE says it woke.  It needs no
 * handshake with the loop: the watched object is a waiter all along.
 */
static void *ringer(void *arg)
{
	uint32_t i;

	(void)arg;
	for (i = 1; i <= RINGS; i++) {
		usleep(20 * 1000);
		__atomic_store_n(&bell, i, __ATOMIC_RELEASE);
		counted += syscall(SYS_futex, &bell, FUTEX_WAKE_PRIVATE, 1,
				   NULL, NULL, 0);
	}
	return NULL;
}

/*
 * Everything there is on a readable object: the ring's records, then
 * what waited in the object, if the ring was full (pollfs_ring_read()
 * makes a system call only then).  Returns the records taken into
 * @recs, of which there is room for @n.
 */
static ssize_t take_all(struct pollfs_ring *ring, void *recs, size_t n,
			unsigned long *by_read)
{
	ssize_t got = pollfs_ring_take(ring, recs, n);

	if (got == 0) {
		got = pollfs_ring_read(ring, recs, n);
		if (got > 0)
			*by_read += got;
	}
	if (got < 0)
		die("take the records");
	return got;
}

int main(void)
{
	struct itimerspec period = {
		.it_value = { .tv_nsec = 25 * 1000 * 1000 },
		.it_interval = { .tv_nsec = 25 * 1000 * 1000 },
	};
	static const struct itimerspec off;
	struct pollfs_ring timer_ring, futex_ring;
	struct epoll_event ev;
	unsigned long ticks = 0, timer_records = 0, rings = 0, by_read = 0;
	unsigned long waits = 0;
	int timerfd, futexfd, ep;
	pthread_t thread;

	setvbuf(stdout, NULL, _IOLBF, 0);
	timerfd = pollfs_timer(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	futexfd = pollfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	if (timerfd < 0 || futexfd < 0)
		die("pollfs object (is the module loaded?)");
	/* The rings first: every record after this goes there. */
	if (pollfs_ring_setup(timerfd, ENTRIES, &timer_ring) ||
	    pollfs_ring_setup(futexfd, ENTRIES, &futex_ring))
		die("pollfs_ring_setup (a pollfs module of interface 1.2?)");
	if (pollfs_timer_arm(timerfd, CLOCK_MONOTONIC, 0, &period))
		die("pollfs_timer_arm");
	/* Armed before the thread starts: no wake can come before it. */
	if (pollfs_futex_watch(futexfd, &bell, 0, 0))
		die("pollfs_futex_watch");

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1");
	ev.events = EPOLLIN;
	ev.data.ptr = &timer_ring;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, timerfd, &ev))
		die("epoll_ctl");
	ev.data.ptr = &futex_ring;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, futexfd, &ev))
		die("epoll_ctl");
	if (pthread_create(&thread, NULL, ringer, NULL))
		die("pthread_create");

	while (ticks < TICKS || rings < RINGS) {
		struct pollfs_timer_event tev[ENTRIES];
		struct pollfs_futex_event fev[ENTRIES];
		ssize_t n, i;

		/* The only system call of the loop, but for overflows. */
		waits++;
		if (epoll_wait(ep, &ev, 1, -1) < 1) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		if (ev.data.ptr == &timer_ring) {
			while ((n = take_all(&timer_ring, tev, ENTRIES,
					     &by_read)) > 0)
				for (i = 0; i < n && ticks < TICKS; i++) {
					/* the expirations since the previous
					 * record, which the ring kept */
					ticks += tev[i].expirations;
					timer_records++;
					printf("timer: %llu expiration(s), next in %.1f ms\n",
					       (unsigned long long)tev[i].expirations,
					       tev[i].remaining.tv_nsec / 1e6);
				}
			if (ticks >= TICKS) {
				pollfs_timer_arm(timerfd, CLOCK_MONOTONIC, 0,
						 &off);
				epoll_ctl(ep, EPOLL_CTL_DEL, timerfd, NULL);
			}
		} else {
			while ((n = take_all(&futex_ring, fev, ENTRIES,
					     &by_read)) > 0)
				for (i = 0; i < n; i++) {
					/* the bell's value at that wake */
					rings++;
					printf("futex: watched, record {bell, %u}%s\n",
					       fev[i].val,
					       fev[i].addr == (uintptr_t)&bell ?
					       "" : " (wrong address!)");
				}
		}
	}
	pthread_join(thread, NULL);
	pollfs_ring_unmap(&timer_ring);
	pollfs_ring_unmap(&futex_ring);
	close(ep);
	close(timerfd);
	close(futexfd);
	printf("loop-ring: %lu epoll_wait calls, %lu records by read(2), the rest from the rings\n",
	       waits, by_read);
	printf("loop-ring: %lu timer expirations in %lu records, %lu futex wakes, FUTEX_WAKE woke %ld waiter(s)\n",
	       ticks, timer_records, rings, counted);
	return 0;
}
