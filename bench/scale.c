// SPDX-License-Identifier: MIT
/*
 * Does one wake-up cost the same however many other files live?
 *
 * Part 1, live files: with N other pollfs objects open (N = 1, 1,000 and
 * 100,000; a mix of timers armed an hour ahead, unarmed futex objects,
 * signal objects and AIO objects on one context) and, beside them, N
 * stock twins (timerfds armed as far ahead, eventfds, signalfds),
 * measure a pollfs futex wake-to-epoll latency against an eventfd's and
 * a 1 ms pollfs timer's wake-up lateness against a timerfd's, each with
 * the waiter's CPU per wake-up, side by side.  The goal: pollfs within
 * 1.10 of its stock twin at every N; each side against its own N = 1 is
 * reported too.  Levels go up and down (1, 1k, 100k, 100k, 1k, 1), four
 * samples of each side at each visit.
 *
 * Part 2, armed futex objects: N objects armed on other futex words are
 * N waiters in the kernel's futex hash table, exactly as N threads
 * blocked in FUTEX_WAIT on those words would be: each bucket's chain
 * grows, and a FUTEX_WAKE on an unrelated word that hashes to a busy
 * bucket walks it.  Measured: a futex ping-pong between two threads and
 * FUTEX_WAKE on words nobody waits on, with N = 0, 1,000 and 100,000
 * armed objects (reported against N = 0, no goal: this is the kernel's
 * futex hash at work), and 1,000 armed objects against 1,000 threads
 * blocked in FUTEX_WAIT on the same words (goal: no worse).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "bench.h"

#define FLAGS	(POLLFS_NONBLOCK | POLLFS_CLOEXEC)

static aio_context_t aio_ctx;

/*
 * Part 1: the other live files, created round robin by kind: pollfs
 * objects and, as many, their stock twins (a timerfd armed as far ahead,
 * an eventfd for the futex object, a signalfd, an eventfd for the AIO
 * object), both sets live through every measurement of a level.
 */

struct live {
	int *fd;
	int n;
	bool pollfs;
};

static int live_open(bool pollfs, int kind)
{
	struct pollfs_timer_spec later = {
		.clockid = CLOCK_MONOTONIC,
		.value = { 3600, 0 },
	};
	struct itimerspec its = { .it_value = { 3600, 0 } };
	sigset_t mask;
	int fd;

	switch (kind) {
	case 0:
		if (pollfs) {
			fd = bench_pfs_timer(FLAGS);
			if (fd >= 0 &&
			    write(fd, &later, sizeof(later)) != sizeof(later))
				bench_die("arm a timer");
		} else {
			fd = timerfd_create(CLOCK_MONOTONIC,
					    TFD_NONBLOCK | TFD_CLOEXEC);
			if (fd >= 0 && timerfd_settime(fd, 0, &its, NULL))
				bench_die("arm a timerfd");
		}
		return fd;
	case 1:
		return pollfs ? bench_pfs_futex(FLAGS) :
				eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	case 2:
		if (pollfs)
			return bench_pfs_signal(1ull << (SIGRTMIN - 1), FLAGS);
		sigemptyset(&mask);
		sigaddset(&mask, SIGRTMIN);
		return signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	default:
		return pollfs ? bench_pfs_aio(aio_ctx, FLAGS) :
				eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	}
}

static void live_resize(struct live *l, int target)
{
	while (l->n > target)
		close(l->fd[--l->n]);
	while (l->n < target) {
		l->fd[l->n] = live_open(l->pollfs, l->n % 4);
		if (l->fd[l->n] < 0)
			bench_die("create live %s %d",
				  l->pollfs ? "object" : "fd", l->n);
		l->n++;
	}
}

enum { STOCK, POLLFS, SIDES };

static void live_report(const char *variant, const char *metric,
			const char *anchor, struct samples *s, int idx)
{
	char flat[64];

	bench_report("scale", variant, metric, "us", anchor,
		     &s[POLLFS * 3 + idx], &s[STOCK * 3 + idx], 1.10);
	if (!idx)
		return;
	snprintf(flat, sizeof(flat), "%s vs N=1", metric);
	bench_report_apart("scale", variant, flat, "us", "pollfs at N=1",
			   &s[POLLFS * 3 + idx], &s[POLLFS * 3]);
	bench_report_apart("scale", variant, flat, "us", "stock at N=1",
			   &s[STOCK * 3 + idx], &s[STOCK * 3]);
}

static void part_live(void)
{
	static const int full[] = { 1, 1000, 100000, 100000, 1000, 1 };
	static const int quick[] = { 1, 1000, 1000, 1 };
	const int *levels = bench_quick ? quick : full;
	int nlevels = bench_quick ? 4 : 6;
	int wakes = bench_quick ? 40 : 150;
	int expiries = bench_quick ? 100 : 250;
	int per_visit = bench_quick ? 1 : 4;
	/* [side * 3 + level index] */
	struct samples lat[SIDES * 3] = {}, wcpu[SIDES * 3] = {};
	struct samples tlate[SIDES * 3] = {}, tcpu[SIDES * 3] = {};
	struct live live[SIDES] = {
		[STOCK] = { .pollfs = false }, [POLLFS] = { .pollfs = true },
	};
	struct wake_result res = {};
	struct bench_futex f = {};
	struct wake_ops ops[SIDES];
	const char *names[3] = { "N=1", "1000 other live files",
				 "100000 other live files" };
	struct timer_run tr;
	int efd, l, v, k, side, idx, at;

	for (side = 0; side < SIDES; side++) {
		live[side].fd = calloc(100000, sizeof(int));
		if (!live[side].fd)
			bench_die("out of memory");
	}
	f.fd = bench_pfs_futex(FLAGS);
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (f.fd < 0 || efd < 0)
		bench_die("create the futex object and the eventfd");
	ops[POLLFS] = (struct wake_ops){
		.fd = f.fd, .arm = bench_futex_arm, .fire = bench_futex_fire,
		.consume = bench_futex_consume, .arg = &f,
	};
	ops[STOCK] = (struct wake_ops){
		.fd = efd, .fire = bench_eventfd_fire,
		.consume = bench_eventfd_consume, .arg = &efd,
	};

	for (l = 0; l < nlevels; l++) {
		live_resize(&live[POLLFS], levels[l]);
		live_resize(&live[STOCK], levels[l]);
		bench_quiesce();
		idx = levels[l] == 1 ? 0 : levels[l] == 1000 ? 1 : 2;
		for (v = 0; v < per_visit; v++) {
			for (k = 0; k < SIDES; k++) {
				side = (l + v + k) % SIDES;	/* A B B A */
				at = side * 3 + idx;
				bench_wake_run(&ops[side], wakes, &res);
				bench_samples_add(&lat[at],
					bench_samples_quantile(&res.lat, 0.5) / 1e3);
				bench_samples_add(&wcpu[at],
						  res.waiter_cpu / 1e3);
				tr = bench_timer_run(side == POLLFS, 1000000,
						     expiries);
				bench_samples_add(&tlate[at], tr.p50);
				bench_samples_add(&tcpu[at], tr.cpu);
			}
		}
		bench_progress("live files: N=%d", levels[l]);
	}
	for (side = 0; side < SIDES; side++) {
		live_resize(&live[side], 0);
		free(live[side].fd);
	}
	close(f.fd);
	close(efd);

	for (idx = 0; idx < (bench_quick ? 2 : 3); idx++) {
		live_report(names[idx], "futex wake-to-epoll p50", "eventfd",
			    lat, idx);
		live_report(names[idx], "futex waiter CPU per wake-up",
			    "eventfd", wcpu, idx);
		live_report(names[idx], "timer 1ms lateness p50", "timerfd",
			    tlate, idx);
		live_report(names[idx], "timer CPU per wake-up", "timerfd",
			    tcpu, idx);
	}
	bench_samples_free(&res.lat);
}

/* Part 2: armed futex objects, or blocked threads, on words[0..n). */

static uint32_t *words;
static int *armed;
static int narmed;
static pthread_t *threads;
static int nthreads;

static void armed_resize(int target)
{
	while (narmed > target)
		close(armed[--narmed]);
	while (narmed < target) {
		armed[narmed] = bench_pfs_futex(FLAGS);
		if (armed[narmed] < 0 ||
		    bench_pfs_futex_arm(armed[narmed], &words[narmed], 0))
			bench_die("arm futex object %d", narmed);
		narmed++;
	}
}

struct blocked {
	uint32_t *word;
	pid_t tid;
};

static struct blocked *blocked;

static void *blocked_thread(void *arg)
{
	struct blocked *b = arg;

	__atomic_store_n(&b->tid, gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(b->word, __ATOMIC_ACQUIRE))
		bench_futex_wait(b->word, 0);
	return NULL;
}

static bool thread_asleep(pid_t tid)
{
	char path[64], buf[256], *p = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			p = strrchr(buf, ')');
		fclose(f);
	}
	return p && p[1] == ' ' && p[2] == 'S';
}

/* Start @n threads blocked in FUTEX_WAIT on words[0..n), all asleep. */
static void threads_start(int n)
{
	pthread_attr_t attr;
	int i;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < n; i++) {
		blocked[i] = (struct blocked){ .word = &words[i] };
		if (pthread_create(&threads[i], &attr, blocked_thread,
				   &blocked[i]))
			bench_die("start blocked thread %d", i);
	}
	pthread_attr_destroy(&attr);
	nthreads = n;
	for (i = 0; i < n; i++)
		while (!__atomic_load_n(&blocked[i].tid, __ATOMIC_ACQUIRE) ||
		       !thread_asleep(blocked[i].tid))
			usleep(1000);
}

static void threads_stop(void)
{
	int i;

	for (i = 0; i < nthreads; i++) {
		__atomic_store_n(&words[i], 1, __ATOMIC_RELEASE);
		bench_futex_wake(&words[i], 1);
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	for (i = 0; i < nthreads; i++)
		words[i] = 0;
	nthreads = 0;
}

enum hash_level { F0, F1K, T1K, F100K, NLEVELS };

/* F1K and T1K: 1,000 (250 under --quick) objects or threads. */
static int small_n;

static void hash_set(enum hash_level level, int big)
{
	threads_stop();
	switch (level) {
	case F0:
		armed_resize(0);
		break;
	case F1K:
		armed_resize(small_n);
		break;
	case T1K:
		armed_resize(0);
		threads_start(small_n);
		break;
	case F100K:
		armed_resize(big);
		break;
	default:
		break;
	}
}

/*
 * Visits F0 T1K F1K F1K T1K F0 a few times (1,000 armed objects against
 * 1,000 blocked threads, and against none), then F0 F100K F100K F0.
 */
static void part_hash(void)
{
	static const enum hash_level small[] = { F0, T1K, F1K, F1K, T1K, F0 };
	static const enum hash_level large[] = { F0, F100K, F100K, F0 };
	int cycles = bench_quick ? 1 : 3;
	int batches = bench_quick ? 9 : 11;
	int big = 100000;
	struct samples pp[NLEVELS] = {}, nobody[NLEVELS] = {};
	const enum hash_level *levels;
	char names[NLEVELS][40];
	int c, l, nlevels;

	words = calloc(big, sizeof(*words));
	armed = calloc(big, sizeof(*armed));
	small_n = bench_quick ? 250 : 1000;
	threads = calloc(small_n, sizeof(*threads));
	blocked = calloc(small_n, sizeof(*blocked));
	if (!words || !armed || !threads || !blocked)
		bench_die("out of memory");
	snprintf(names[F0], sizeof(names[F0]), "0 armed");
	snprintf(names[F1K], sizeof(names[F1K]), "%d armed futex objects",
		 small_n);
	snprintf(names[T1K], sizeof(names[T1K]), "%d FUTEX_WAIT threads",
		 small_n);
	snprintf(names[F100K], sizeof(names[F100K]),
		 "%d armed futex objects", big);

	bench_pin_cpu(0);
	for (c = 0; c < cycles + !bench_quick; c++) {
		levels = c < cycles ? small : large;
		nlevels = c < cycles ? 6 : 4;
		for (l = 0; l < nlevels; l++) {
			hash_set(levels[l], big);
			bench_quiesce();
			bench_futex_pingpong(2, 100);
			bench_samples_add(&pp[levels[l]],
				bench_futex_pingpong(batches, 100) / 1e3);
			bench_samples_add(&nobody[levels[l]],
				bench_futex_wake_nobody(batches, 500) / 1e3);
			bench_progress("futex hash: %s: ping-pong %.2f us, FUTEX_WAKE %.2f us",
				       names[levels[l]],
				       pp[levels[l]].v[pp[levels[l]].n - 1],
				       nobody[levels[l]].v[nobody[levels[l]].n - 1]);
		}
	}
	hash_set(F0, big);

	bench_report("futex-hash", names[F1K], "unrelated futex ping-pong",
		     "us", names[T1K], &pp[F1K], &pp[T1K], 1.10);
	bench_report("futex-hash", names[F1K], "FUTEX_WAKE with no waiter",
		     "us", names[T1K], &nobody[F1K], &nobody[T1K], 1.10);
	bench_report("futex-hash", names[F1K], "unrelated futex ping-pong",
		     "us", names[F0], &pp[F1K], &pp[F0], 0);
	bench_report("futex-hash", names[F1K], "FUTEX_WAKE with no waiter",
		     "us", names[F0], &nobody[F1K], &nobody[F0], 0);
	if (!bench_quick) {
		bench_report("futex-hash", names[F100K],
			     "unrelated futex ping-pong", "us", names[F0],
			     &pp[F100K], &pp[F0], 0);
		bench_report("futex-hash", names[F100K],
			     "FUTEX_WAKE with no waiter", "us", names[F0],
			     &nobody[F100K], &nobody[F0], 0);
	}
	free(words);
	free(armed);
	free(threads);
	free(blocked);
}

int main(int argc, char **argv)
{
	bench_init(argc, argv, "scale");
	bench_raise_nofile(210000);
	if (syscall(SYS_io_setup, 8, &aio_ctx))
		bench_die("io_setup");
	part_live();
	part_hash();
	syscall(SYS_io_destroy, aio_ctx);
	return 0;
}
