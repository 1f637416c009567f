// SPDX-License-Identifier: MIT
/*
 * pollfs in a libuv loop: uv_poll_t watchers on a pollfs timer and on a
 * pollfs futex object that another thread wakes with a plain FUTEX_WAKE.
 *
 * What no stock descriptor does: the armed futex object is a real waiter
 * on the word, so FUTEX_WAKE counts it in its return value, and the loop
 * needs no thread parked in FUTEX_WAIT to turn the wake into an fd event.
 *
 * Build: cc loop-uv.c $(pkg-config --cflags --libs libuv libpollfs)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>

#include <uv.h>
#include <pollfs.h>

#define TICKS	4	/* timer expirations to wait for */
#define RINGS	3	/* FUTEX_WAKEs from the other thread */

static uint32_t bell;	/* the futex word the pollfs object waits on */
static uint32_t ack;	/* the value the object was last re-armed on */
static long counted;	/* waiters the thread's FUTEX_WAKEs woke */

static int timerfd, futexfd;
static uv_poll_t timer_watch, futex_watch;
static unsigned long ticks, timer_reads, rings;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static long futex(uint32_t *word, int op, uint32_t val)
{
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

/*
 * The other side, which knows nothing of pollfs: it rings the bell only
 * once the loop has re-armed on the previous value (ack), so that every
 * FUTEX_WAKE finds the object waiting, and adds up what FUTEX_WAKE says
 * it woke.
 */
static void *ringer(void *arg)
{
	uint32_t i, seen;

	(void)arg;
	for (i = 1; i <= RINGS; i++) {
		while ((seen = __atomic_load_n(&ack, __ATOMIC_ACQUIRE)) != i - 1)
			futex(&ack, FUTEX_WAIT_PRIVATE, seen);
		usleep(20 * 1000);
		__atomic_store_n(&bell, i, __ATOMIC_RELEASE);
		counted += futex(&bell, FUTEX_WAKE_PRIVATE, 1);
	}
	return NULL;
}

static void stop_when_done(void)
{
	if (ticks >= TICKS && rings == RINGS)
		uv_stop(uv_default_loop());
}

static void on_timer(uv_poll_t *w, int status, int events)
{
	static const struct itimerspec off;
	struct pollfs_timer_event ev;

	(void)events;
	if (status < 0 || pollfs_timer_read(timerfd, &ev) != 1)
		die("timer");
	/* One record holds every expiration since the last read. */
	ticks += ev.expirations;
	timer_reads++;
	printf("timer: %llu expiration(s), next in %.1f ms\n",
	       (unsigned long long)ev.expirations,
	       ev.remaining.tv_nsec / 1e6);
	if (ticks >= TICKS) {
		pollfs_timer_arm(timerfd, CLOCK_MONOTONIC, 0, &off);
		uv_poll_stop(w);
	}
	stop_when_done();
}

static void on_futex(uv_poll_t *w, int status, int events)
{
	struct pollfs_futex_event ev;
	uint32_t now;

	(void)events;
	/*
	 * Read once: the record the object was armed with comes back and the
	 * object is left unarmed.  A second read would fail with EINVAL, not
	 * EAGAIN: "read until EAGAIN" is not the pattern for a futex object.
	 */
	if (status < 0 || pollfs_futex_read(futexfd, &ev, 1) != 1)
		die("futex read");
	rings++;
	now = __atomic_load_n(&bell, __ATOMIC_ACQUIRE);
	printf("futex: woken, record {bell, %u}%s, bell now %u\n", ev.val,
	       ev.addr == (uintptr_t)&bell ? "" : " (wrong address!)", now);
	if (rings == RINGS) {
		uv_poll_stop(w);
	} else if (pollfs_futex_arm(futexfd, &bell, now, 0)) {
		/*
		 * A write arms again, on the value just seen.  EAGAIN would
		 * mean the word moved on meanwhile: then read it and arm
		 * again.  The ringer's handshake rules that out here.
		 */
		die("futex re-arm");
	}
	__atomic_store_n(&ack, now, __ATOMIC_RELEASE);
	futex(&ack, FUTEX_WAKE_PRIVATE, 1);
	stop_when_done();
}

int main(void)
{
	struct itimerspec period = {
		.it_value = { .tv_nsec = 25 * 1000 * 1000 },
		.it_interval = { .tv_nsec = 25 * 1000 * 1000 },
	};
	uv_loop_t *loop = uv_default_loop();
	pthread_t thread;

	setvbuf(stdout, NULL, _IOLBF, 0);
	timerfd = pollfs_timer(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	futexfd = pollfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	if (timerfd < 0 || futexfd < 0)
		die("pollfs object (is the module loaded?)");
	if (pollfs_timer_arm(timerfd, CLOCK_MONOTONIC, 0, &period))
		die("pollfs_timer_arm");
	/* Armed before the thread starts: no wake can come before the wait. */
	if (pollfs_futex_arm(futexfd, &bell, 0, 0))
		die("pollfs_futex_arm");

	/* uv_poll_t watches any descriptor that poll(2) can watch. */
	if (uv_poll_init(loop, &timer_watch, timerfd) ||
	    uv_poll_init(loop, &futex_watch, futexfd) ||
	    uv_poll_start(&timer_watch, UV_READABLE, on_timer) ||
	    uv_poll_start(&futex_watch, UV_READABLE, on_futex))
		die("uv_poll");
	if (pthread_create(&thread, NULL, ringer, NULL))
		die("pthread_create");

	uv_run(loop, UV_RUN_DEFAULT);
	pthread_join(thread, NULL);

	uv_close((uv_handle_t *)&timer_watch, NULL);
	uv_close((uv_handle_t *)&futex_watch, NULL);
	uv_run(loop, UV_RUN_DEFAULT);	/* runs the close callbacks */
	uv_loop_close(loop);
	close(timerfd);
	close(futexfd);
	printf("loop-uv: %lu timer expirations in %lu reads, %lu futex wakes, FUTEX_WAKE woke %ld waiter(s)\n",
	       ticks, timer_reads, rings, counted);
	return 0;
}
