// SPDX-License-Identifier: MIT
/*
 * pollfs in a libevent 2.1 loop: EV_READ | EV_PERSIST events on a pollfs
 * timer and on a pollfs futex object armed on a word in shared memory,
 * which another process wakes with a plain FUTEX_WAKE.
 *
 * What no stock descriptor does: the armed object is a real waiter on the
 * shared futex word (POLLFS_FUTEX_SHARED), counted by FUTEX_WAKE in any
 * process that maps the memory, with no thread parked in FUTEX_WAIT.
 *
 * Build: cc loop-libevent.c $(pkg-config --cflags --libs libevent libpollfs)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/futex.h>

#include <event2/event.h>
#include <pollfs.h>

#define TICKS	4	/* timer expirations to wait for */
#define RINGS	3	/* FUTEX_WAKEs from the other process */

/* In a MAP_SHARED page, seen by both processes. */
struct shared {
	uint32_t bell;	/* the futex word the pollfs object waits on */
	uint32_t ack;	/* the value the object was last re-armed on */
	long counted;	/* waiters the child's FUTEX_WAKEs woke */
};

static struct shared *sh;
static struct event_base *base;
static unsigned long ticks, timer_reads, rings;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Shared futex operations: no FUTEX_PRIVATE_FLAG across processes. */
static long futex(uint32_t *word, int op, uint32_t val)
{
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

/*
 * The other process, which knows nothing of pollfs: it rings the bell
 * only once the loop has re-armed on the previous value (ack), so that
 * every FUTEX_WAKE finds the object waiting, and adds up what FUTEX_WAKE
 * says it woke.
 */
static void ringer(void)
{
	uint32_t i, seen;

	for (i = 1; i <= RINGS; i++) {
		while ((seen = __atomic_load_n(&sh->ack, __ATOMIC_ACQUIRE)) != i - 1)
			futex(&sh->ack, FUTEX_WAIT, seen);
		usleep(20 * 1000);
		__atomic_store_n(&sh->bell, i, __ATOMIC_RELEASE);
		sh->counted += futex(&sh->bell, FUTEX_WAKE, 1);
	}
	_exit(0);
}

static void stop_when_done(void)
{
	if (ticks >= TICKS && rings == RINGS)
		event_base_loopbreak(base);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	static const struct itimerspec off;
	struct pollfs_timer_event ev;

	(void)what;
	if (pollfs_timer_read(fd, &ev) != 1)
		die("timer read");
	/* One record holds every expiration since the last read. */
	ticks += ev.expirations;
	timer_reads++;
	printf("timer: %llu expiration(s), next in %.1f ms\n",
	       (unsigned long long)ev.expirations,
	       ev.remaining.tv_nsec / 1e6);
	if (ticks >= TICKS) {
		pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &off);
		event_del(arg);
	}
	stop_when_done();
}

static void on_futex(evutil_socket_t fd, short what, void *arg)
{
	struct pollfs_futex_event ev;
	uint32_t now;

	(void)what;
	/*
	 * Read once: the record the object was armed with comes back and the
	 * object is left unarmed.  A second read would fail with EINVAL, not
	 * EAGAIN: "read until EAGAIN" is not the pattern for a futex object.
	 */
	if (pollfs_futex_read(fd, &ev, 1) != 1)
		die("futex read");
	rings++;
	now = __atomic_load_n(&sh->bell, __ATOMIC_ACQUIRE);
	printf("futex: woken, record {bell, %u}%s, bell now %u\n", ev.val,
	       ev.addr == (uintptr_t)&sh->bell ? "" : " (wrong address!)",
	       now);
	if (rings == RINGS) {
		event_del(arg);
	} else if (pollfs_futex_arm(fd, &sh->bell, now, POLLFS_FUTEX_SHARED)) {
		/*
		 * A write arms again, on the value just seen.  EAGAIN would
		 * mean the word moved on meanwhile: then read it and arm
		 * again.  The ringer's handshake rules that out here.
		 */
		die("futex re-arm");
	}
	__atomic_store_n(&sh->ack, now, __ATOMIC_RELEASE);
	futex(&sh->ack, FUTEX_WAKE, 1);
	stop_when_done();
}

int main(void)
{
	struct itimerspec period = {
		.it_value = { .tv_nsec = 25 * 1000 * 1000 },
		.it_interval = { .tv_nsec = 25 * 1000 * 1000 },
	};
	struct event *timer_ev, *futex_ev;
	int timerfd, futexfd, status;
	pid_t child;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap");
	timerfd = pollfs_timer(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	futexfd = pollfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	if (timerfd < 0 || futexfd < 0)
		die("pollfs object (is the module loaded?)");
	if (pollfs_timer_arm(timerfd, CLOCK_MONOTONIC, 0, &period))
		die("pollfs_timer_arm");
	/* Armed before the child starts: no wake can come before the wait. */
	if (pollfs_futex_arm(futexfd, &sh->bell, 0, POLLFS_FUTEX_SHARED))
		die("pollfs_futex_arm");
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0)
		ringer();

	/*
	 * EV_PERSIST keeps each event added after its callback; libevent's
	 * epoll backend is level-triggered, so one read per callback will do.
	 */
	base = event_base_new();
	if (!base)
		die("event_base_new");
	timer_ev = event_new(base, timerfd, EV_READ | EV_PERSIST, on_timer,
			     event_self_cbarg());
	futex_ev = event_new(base, futexfd, EV_READ | EV_PERSIST, on_futex,
			     event_self_cbarg());
	if (!timer_ev || !futex_ev || event_add(timer_ev, NULL) ||
	    event_add(futex_ev, NULL))
		die("event_new");

	event_base_dispatch(base);
	if (waitpid(child, &status, 0) != child)
		die("waitpid");
	if (status) {
		fprintf(stderr, "ringer process: status %#x\n", status);
		return 1;
	}

	event_free(timer_ev);
	event_free(futex_ev);
	event_base_free(base);
	close(timerfd);
	close(futexfd);
	printf("loop-libevent: %lu timer expirations in %lu reads, %lu futex wakes, FUTEX_WAKE woke %ld waiter(s)\n",
	       ticks, timer_reads, rings, sh->counted);
	return 0;
}
