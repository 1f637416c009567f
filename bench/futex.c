// SPDX-License-Identifier: MIT
/*
 * Wake-to-epoll latency: a pollfs futex object against an eventfd used
 * the same way.
 *
 * pollfs: the waiter arms the object on a futex word, sleeps in
 * epoll_wait and reads the record; the waker stores to the word and
 * calls FUTEX_WAKE.  Watched (POLLFS_FUTEX_WATCH, 1.1): armed once, the
 * read re-arms, so the waiter has one syscall per wake-up fewer.
 * eventfd: the waiter sleeps in epoll_wait and reads the counter; the
 * waker writes 1.  The time runs from just before the waker's store (or
 * write) to the waiter's return from epoll_wait.  Per run: latency p50
 * and p99, the waiter's CPU per wake-up (arming, waiting and reading)
 * and the waker's CPU per wake-up (store and FUTEX_WAKE, or write).  The
 * three take turns, each repetition starting with the next.
 *
 * The cost that loading pollfs adds to unrelated futex traffic is
 * measured by bench-hooks.
 */
#include <stdio.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bench.h"

enum { EVENTFD, ARMED, WATCHED, KINDS };

static void report(const char *variant, int kind, struct samples *p50,
		   struct samples *p99, struct samples *wcpu,
		   struct samples *kcpu, double wcpu_goal)
{
	bench_report("futex", variant, "latency p50", "us", "eventfd",
		     &p50[kind], &p50[EVENTFD], 1.10);
	bench_report("futex", variant, "latency p99", "us", "eventfd",
		     &p99[kind], &p99[EVENTFD], 1.10);
	bench_report("futex", variant, "waiter CPU per wake-up", "us",
		     "eventfd", &wcpu[kind], &wcpu[EVENTFD], wcpu_goal);
	bench_report("futex", variant, "waker CPU per wake-up", "us",
		     "eventfd", &kcpu[kind], &kcpu[EVENTFD], 1.10);
}

int main(int argc, char **argv)
{
	struct samples p50[KINDS] = {}, p99[KINDS] = {}, wcpu[KINDS] = {};
	struct samples kcpu[KINDS] = {};
	struct bench_futex f = {}, w = {};
	struct wake_result res = {};
	struct wake_ops ops[KINDS];
	int efd, reps, n, i, k, kind;

	bench_init(argc, argv, "futex");
	reps = bench_quick ? 4 : 128;
	n = bench_quick ? 30 : 120;

	f.fd = bench_pfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	w.fd = bench_pfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (f.fd < 0 || w.fd < 0 || efd < 0)
		bench_die("create the futex objects and the eventfd");
	if (bench_pfs_futex_watch(w.fd, &w.word, w.word))
		bench_die("watch the futex word");
	ops[ARMED] = (struct wake_ops){
		.fd = f.fd, .arm = bench_futex_arm, .fire = bench_futex_fire,
		.consume = bench_futex_consume, .arg = &f,
	};
	ops[WATCHED] = (struct wake_ops){
		.fd = w.fd, .fire = bench_futex_fire,
		.consume = bench_futex_consume, .arg = &w,
	};
	ops[EVENTFD] = (struct wake_ops){
		.fd = efd, .fire = bench_eventfd_fire,
		.consume = bench_eventfd_consume, .arg = &efd,
	};

	for (i = 0; i < reps; i++) {
		for (k = 0; k < KINDS; k++) {
			kind = (i + k) % KINDS;
			bench_wake_run(&ops[kind], n, &res);
			bench_samples_add(&p50[kind],
				bench_samples_quantile(&res.lat, 0.5) / 1e3);
			bench_samples_add(&p99[kind],
				bench_samples_quantile(&res.lat, 0.99) / 1e3);
			bench_samples_add(&wcpu[kind], res.waiter_cpu / 1e3);
			bench_samples_add(&kcpu[kind], res.waker_cpu / 1e3);
		}
		bench_progress("wake-to-epoll: repetition %d/%d", i + 1, reps);
	}
	report("wake-to-epoll", ARMED, p50, p99, wcpu, kcpu, 1.10);
	/* One read per event and no write: no more than eventfd's read. */
	report("watched wake-to-epoll", WATCHED, p50, p99, wcpu, kcpu, 1.00);
	close(f.fd);
	close(w.fd);
	close(efd);
	bench_samples_free(&res.lat);
	return 0;
}
