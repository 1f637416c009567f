// SPDX-License-Identifier: MIT
/*
 * A futex wait in an epoll loop, with or without the pollfs module: a
 * pollfs futex object when /dev/pollfs exists, otherwise the usual
 * substitute, a thread blocked in FUTEX_WAIT that writes an eventfd.
 * See docs/without-the-module.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>

#include <pollfs.h>

static uint32_t ready;		/* the futex word: 0, then 1 */

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static long futex(uint32_t *word, int op, uint32_t val)
{
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

/* The fallback: a thread waits on the word and signals an eventfd. */
static void *waiter(void *arg)
{
	int efd = (int)(intptr_t)arg;
	uint64_t one = 1;

	while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		futex(&ready, FUTEX_WAIT_PRIVATE, 0);
	if (write(efd, &one, sizeof(one)) != sizeof(one))
		die("write eventfd");
	return NULL;
}

/* Some other thread's work, which ends by setting the word. */
static void *setter(void *arg)
{
	(void)arg;
	usleep(100 * 1000);
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	futex(&ready, FUTEX_WAKE_PRIVATE, 1);
	return NULL;
}

int main(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	pthread_t wthread, sthread;
	bool fallback = false;
	int fd, ep;

	fd = pollfs_futex(POLLFS_CLOEXEC);
	if (fd >= 0) {
		/* The object itself is the waiter, while the word is 0. */
		if (pollfs_futex_arm(fd, &ready, 0, 0))
			die("pollfs_futex_arm");
		printf("waiting with a pollfs futex object\n");
	} else if (errno == ENOENT) {
		/* No /dev/pollfs: the module is not loaded. */
		printf("no /dev/pollfs (%s): waiting with a thread and an eventfd\n",
		       strerror(errno));
		fd = eventfd(0, EFD_CLOEXEC);
		if (fd < 0)
			die("eventfd");
		if (pthread_create(&wthread, NULL, waiter, (void *)(intptr_t)fd))
			die("pthread_create");
		fallback = true;
	} else {
		die("pollfs_futex");
	}

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die("epoll");
	if (pthread_create(&sthread, NULL, setter, NULL))
		die("pthread_create");
	if (epoll_wait(ep, &ev, 1, 5000) != 1)
		die("epoll_wait (nothing in 5 s)");
	pthread_join(sthread, NULL);

	if (fallback) {
		uint64_t count;

		if (read(fd, &count, sizeof(count)) != sizeof(count))
			die("read eventfd");
		pthread_join(wthread, NULL);
	} else {
		struct pollfs_futex_event woken;

		if (pollfs_futex_read(fd, &woken, 1) != 1)
			die("pollfs_futex_read");
	}
	printf("epoll: the word is %u\n", ready);
	return 0;
}
