// SPDX-License-Identifier: MIT
/*
 * One epoll loop waiting at once on a signal, a periodic timer, a futex
 * woken by another thread and an AIO read, printing each event as it
 * arrives.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include <pollfs.h>

#define TICKS	5

static uint32_t doorbell;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Rings the doorbell a while after start: an ordinary FUTEX_WAKE. */
static void *ringer(void *arg)
{
	long woken;

	(void)arg;
	usleep(120 * 1000);
	__atomic_store_n(&doorbell, 1, __ATOMIC_RELEASE);
	woken = syscall(SYS_futex, &doorbell, FUTEX_WAKE_PRIVATE, 1, NULL,
			NULL, 0);
	printf("  [thread] FUTEX_WAKE(doorbell, 1) woke %ld waiter(s)\n",
	       woken);
	return NULL;
}

static int aio_start(aio_context_t *ctx, struct iocb *cb, char *buf,
		     size_t len)
{
	struct iocb *cbs[1] = { cb };
	int file;

	file = open("/proc/version", O_RDONLY);
	if (file < 0)
		return -1;
	memset(cb, 0, sizeof(*cb));
	cb->aio_fildes = file;
	cb->aio_lio_opcode = IOCB_CMD_PREAD;
	cb->aio_buf = (uintptr_t)buf;
	cb->aio_nbytes = len;
	if (syscall(SYS_io_setup, 8, ctx) < 0)
		return -1;
	return syscall(SYS_io_submit, *ctx, 1, cbs) == 1 ? 0 : -1;
}

static void add(int ep, int fd, const char *name)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = (void *)name };

	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die("epoll_ctl");
}

int main(void)
{
	struct itimerspec period = {
		.it_value = { .tv_nsec = 50 * 1000 * 1000 },
		.it_interval = { .tv_nsec = 50 * 1000 * 1000 },
	};
	int sigfd, timerfd, futexfd, aiofd, ep, ticks = 0, pending = 3;
	static char buf[256];
	aio_context_t ctx = 0;
	struct iocb cb;
	pthread_t thread;
	sigset_t mask;
	double start;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		die("sigprocmask");

	sigfd = pollfs_signal(&mask, POLLFS_CLOEXEC);
	timerfd = pollfs_timer(POLLFS_CLOEXEC);
	futexfd = pollfs_futex(POLLFS_CLOEXEC);
	if (sigfd < 0 || timerfd < 0 || futexfd < 0)
		die("pollfs object");
	if (pollfs_timer_arm(timerfd, CLOCK_MONOTONIC, 0, &period))
		die("pollfs_timer_arm");
	if (pollfs_futex_arm(futexfd, &doorbell, 0, 0))
		die("pollfs_futex_arm");
	if (aio_start(&ctx, &cb, buf, sizeof(buf) - 1))
		die("io_submit");
	aiofd = pollfs_aio(ctx, POLLFS_CLOEXEC);
	if (aiofd < 0)
		die("pollfs_aio");

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1");
	add(ep, sigfd, "signal");
	add(ep, timerfd, "timer");
	add(ep, futexfd, "futex");
	add(ep, aiofd, "aio");
	printf("pollfs demo: one epoll set of a signal, a 50 ms timer, a futex and an AIO context\n");

	start = now();
	if (pthread_create(&thread, NULL, ringer, NULL))
		die("pthread_create");
	kill(getpid(), SIGUSR1);

	while (pending || ticks < TICKS) {
		struct epoll_event ev;
		const char *name;

		if (epoll_wait(ep, &ev, 1, 5000) != 1)
			die("epoll_wait (nothing in 5 s)");
		name = ev.data.ptr;
		printf("%7.1f ms  %-6s ", (now() - start) * 1e3, name);
		if (!strcmp(name, "signal")) {
			struct pollfs_siginfo si;

			if (pollfs_signal_read(sigfd, &si, 1) != 1)
				die("read signal");
			printf("signal %u (%s) from pid %u\n", si.psi_signo,
			       strsignal(si.psi_signo), si.psi_pid);
			epoll_ctl(ep, EPOLL_CTL_DEL, sigfd, NULL);
			pending--;
		} else if (!strcmp(name, "timer")) {
			struct pollfs_timer_event te;

			if (pollfs_timer_read(timerfd, &te) < 0)
				die("read timer");
			ticks += te.expirations;
			printf("%llu expiration(s), next in %.1f ms\n",
			       (unsigned long long)te.expirations,
			       te.remaining.tv_nsec / 1e6);
			if (ticks >= TICKS)
				epoll_ctl(ep, EPOLL_CTL_DEL, timerfd, NULL);
		} else if (!strcmp(name, "futex")) {
			struct pollfs_futex_event fe;

			if (pollfs_futex_read(futexfd, &fe, 1) != 1)
				die("read futex");
			printf("woken: word at %#llx armed with %u, now %u\n",
			       (unsigned long long)fe.addr, fe.val, doorbell);
			epoll_ctl(ep, EPOLL_CTL_DEL, futexfd, NULL);
			pending--;
		} else {
			struct pollfs_aio_event ae;
			struct io_event done;
			char *nl;

			if (pollfs_aio_read(aiofd, &ae) != 1)
				die("read aio");
			if (syscall(SYS_io_getevents, ctx, 1, 1, &done,
				    NULL) != 1)
				die("io_getevents");
			nl = strchr(buf, '\n');
			if (nl)
				*nl = '\0';
			printf("%llu completion(s); read %lld bytes: %.40s...\n",
			       (unsigned long long)ae.available,
			       (long long)done.res, buf);
			epoll_ctl(ep, EPOLL_CTL_DEL, aiofd, NULL);
			pending--;
		}
	}
	pthread_join(thread, NULL);
	syscall(SYS_io_destroy, ctx);
	printf("pollfs demo: all four kinds of event arrived through one epoll_wait loop\n");
	return 0;
}
