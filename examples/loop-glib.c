// SPDX-License-Identifier: MIT
/*
 * pollfs in a GLib main loop: g_unix_fd_add() sources on a pollfs timer
 * and on a pollfs futex object that another thread wakes with a plain
 * FUTEX_WAKE.
 *
 * What no stock descriptor does: the armed futex object is a real waiter
 * on the word, so FUTEX_WAKE counts it in its return value, and the loop
 * needs no thread parked in FUTEX_WAIT to turn the wake into an fd event.
 *
 * Build: cc loop-glib.c $(pkg-config --cflags --libs glib-2.0 libpollfs)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>

#include <glib.h>
#include <glib-unix.h>
#include <pollfs.h>

#define TICKS	4	/* timer expirations to wait for */
#define RINGS	3	/* FUTEX_WAKEs from the other thread */

static uint32_t bell;	/* the futex word the pollfs object waits on */
static uint32_t ack;	/* the value the object was last re-armed on */
static long counted;	/* waiters the thread's FUTEX_WAKEs woke */

static GMainLoop *loop;
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
static gpointer ringer(gpointer arg)
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
		g_main_loop_quit(loop);
}

static gboolean on_timer(gint fd, GIOCondition cond, gpointer data)
{
	static const struct itimerspec off;
	struct pollfs_timer_event ev;

	(void)cond;
	(void)data;
	if (pollfs_timer_read(fd, &ev) != 1)
		die("timer read");
	/* One record holds every expiration since the last read. */
	ticks += ev.expirations;
	timer_reads++;
	printf("timer: %llu expiration(s), next in %.1f ms\n",
	       (unsigned long long)ev.expirations,
	       ev.remaining.tv_nsec / 1e6);
	stop_when_done();
	if (ticks < TICKS)
		return G_SOURCE_CONTINUE;
	pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &off);
	return G_SOURCE_REMOVE;
}

static gboolean on_futex(gint fd, GIOCondition cond, gpointer data)
{
	struct pollfs_futex_event ev;
	uint32_t now;

	(void)cond;
	(void)data;
	/*
	 * Read once: the record the object was armed with comes back and the
	 * object is left unarmed.  A second read would fail with EINVAL, not
	 * EAGAIN: "read until EAGAIN" is not the pattern for a futex object.
	 */
	if (pollfs_futex_read(fd, &ev, 1) != 1)
		die("futex read");
	rings++;
	now = __atomic_load_n(&bell, __ATOMIC_ACQUIRE);
	printf("futex: woken, record {bell, %u}%s, bell now %u\n", ev.val,
	       ev.addr == (uintptr_t)&bell ? "" : " (wrong address!)", now);
	/*
	 * A write arms again, on the value just seen.  EAGAIN would mean the
	 * word moved on meanwhile: then read it and arm again.  The ringer's
	 * handshake rules that out here.
	 */
	if (rings < RINGS && pollfs_futex_arm(fd, &bell, now, 0))
		die("futex re-arm");
	__atomic_store_n(&ack, now, __ATOMIC_RELEASE);
	futex(&ack, FUTEX_WAKE_PRIVATE, 1);
	stop_when_done();
	return rings < RINGS ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

int main(void)
{
	struct itimerspec period = {
		.it_value = { .tv_nsec = 25 * 1000 * 1000 },
		.it_interval = { .tv_nsec = 25 * 1000 * 1000 },
	};
	int timerfd, futexfd;
	GThread *thread;

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

	/* GLib polls the descriptors with poll(2); G_IO_IN is POLLIN. */
	loop = g_main_loop_new(NULL, FALSE);
	g_unix_fd_add(timerfd, G_IO_IN, on_timer, NULL);
	g_unix_fd_add(futexfd, G_IO_IN, on_futex, NULL);
	thread = g_thread_new("ringer", ringer, NULL);

	g_main_loop_run(loop);
	g_thread_join(thread);
	g_main_loop_unref(loop);
	close(timerfd);
	close(futexfd);
	printf("loop-glib: %lu timer expirations in %lu reads, %lu futex wakes, FUTEX_WAKE woke %ld waiter(s)\n",
	       ticks, timer_reads, rings, counted);
	return 0;
}
