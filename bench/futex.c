// SPDX-License-Identifier: MIT
/*
 * Wake-to-epoll latency: a pollfs futex object against an eventfd used
 * the same way.
 *
 * pollfs: the waiter arms the object on a futex word, sleeps in
 * epoll_wait and reads the record; the waker stores to the word and
 * calls FUTEX_WAKE.  eventfd: the waiter sleeps in epoll_wait and reads
 * the counter; the waker writes 1.  The time runs from just before the
 * waker's store (or write) to the waiter's return from epoll_wait.  Per
 * run: latency p50 and p99, the waiter's CPU per wake-up (arming, waiting
 * and reading) and the waker's CPU per wake-up (store and FUTEX_WAKE, or
 * write).  Runs alternate A B B A.
 *
 * The cost that loading pollfs adds to unrelated futex traffic is
 * measured by bench-hooks.
 */
#include <stdio.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bench.h"

static void eventfd_fire(void *arg)
{
	uint64_t one = 1;

	if (write(*(int *)arg, &one, sizeof(one)) != sizeof(one))
		die("write the eventfd");
}

static void eventfd_consume(void *arg)
{
	uint64_t count;

	if (read(*(int *)arg, &count, sizeof(count)) != sizeof(count))
		die("read the eventfd");
}

int main(int argc, char **argv)
{
	struct samples p50[2] = {}, p99[2] = {}, wcpu[2] = {}, kcpu[2] = {};
	struct wake_result res = {};
	struct bench_futex f = {};
	struct wake_ops ops[2];
	int efd, reps, n, i, k;
	bool pollfs;

	bench_init(argc, argv, "futex");
	reps = bench_quick ? 4 : 16;
	n = bench_quick ? 30 : 120;

	f.fd = pfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (f.fd < 0 || efd < 0)
		die("create the futex object and the eventfd");
	ops[1] = (struct wake_ops){
		.fd = f.fd, .arm = bench_futex_arm, .fire = bench_futex_fire,
		.consume = bench_futex_consume, .arg = &f,
	};
	ops[0] = (struct wake_ops){
		.fd = efd, .fire = eventfd_fire,
		.consume = eventfd_consume, .arg = &efd,
	};

	for (i = 0; i < reps; i++) {
		for (k = 0; k < 2; k++) {
			pollfs = (i + k) % 2 == 0;
			wake_run(&ops[pollfs], n, &res);
			samples_add(&p50[pollfs],
				    samples_quantile(&res.lat, 0.5) / 1e3);
			samples_add(&p99[pollfs],
				    samples_quantile(&res.lat, 0.99) / 1e3);
			samples_add(&wcpu[pollfs], res.waiter_cpu / 1e3);
			samples_add(&kcpu[pollfs], res.waker_cpu / 1e3);
		}
		bench_progress("wake-to-epoll: repetition %d/%d", i + 1, reps);
	}
	bench_report("futex", "wake-to-epoll", "latency p50", "us", "eventfd",
		     &p50[1], &p50[0], 1.10);
	bench_report("futex", "wake-to-epoll", "latency p99", "us", "eventfd",
		     &p99[1], &p99[0], 1.10);
	bench_report("futex", "wake-to-epoll", "waiter CPU per wake-up", "us",
		     "eventfd", &wcpu[1], &wcpu[0], 1.10);
	bench_report("futex", "wake-to-epoll", "waker CPU per wake-up", "us",
		     "eventfd", &kcpu[1], &kcpu[0], 1.10);
	close(f.fd);
	close(efd);
	samples_free(&res.lat);
	return 0;
}
