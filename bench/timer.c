// SPDX-License-Identifier: MIT
/*
 * Periodic timers read through epoll: a pollfs timer against a timerfd.
 *
 * Each run arms one timer with an absolute first expiry and a period of
 * 1 ms (then 100 us), waits in epoll_wait, reads the expirations and
 * notes how late, once the read returned, it is after the latest expiry
 * that read counted.
 * Per run: lateness p50 and p99, the thread's CPU time per wake-up, and
 * the expirations per wake-up (above 1 when the reader fell behind and
 * the overruns were counted together).  Runs alternate A B B A.
 */
#include <stdio.h>

#include "bench.h"

static void bench_period(const char *variant, uint64_t period, int expiries,
			 int reps)
{
	struct samples p50[2] = {}, p99[2] = {}, cpu[2] = {}, per[2] = {};
	struct timer_run r;
	int i, k;
	bool pollfs;

	for (i = 0; i < reps; i++) {
		for (k = 0; k < 2; k++) {
			pollfs = (i + k) % 2 == 0;	/* A B, B A, ... */
			r = bench_timer_run(pollfs, period, expiries);
			bench_samples_add(&p50[pollfs], r.p50);
			bench_samples_add(&p99[pollfs], r.p99);
			bench_samples_add(&cpu[pollfs], r.cpu);
			bench_samples_add(&per[pollfs], r.per_wake);
		}
		bench_progress("%s: repetition %d/%d", variant, i + 1, reps);
	}
	bench_report("timer", variant, "lateness p50", "us", "timerfd",
		     &p50[1], &p50[0], 1.10);
	bench_report("timer", variant, "lateness p99", "us", "timerfd",
		     &p99[1], &p99[0], 1.10);
	bench_report("timer", variant, "CPU per wake-up", "us", "timerfd",
		     &cpu[1], &cpu[0], 1.10);
	bench_report("timer", variant, "expirations per wake-up", "count",
		     "timerfd", &per[1], &per[0], 0);
	for (k = 0; k < 2; k++) {
		bench_samples_free(&p50[k]);
		bench_samples_free(&p99[k]);
		bench_samples_free(&cpu[k]);
		bench_samples_free(&per[k]);
	}
}

int main(int argc, char **argv)
{
	bench_init(argc, argv, "timer");
	bench_pin_cpu(1);
	if (bench_quick) {
		bench_period("1ms", 1000000, 60, 4);
		bench_period("100us", 100000, 300, 4);
	} else {
		bench_period("1ms", 1000000, 150, 64);
		bench_period("100us", 100000, 800, 64);
	}
	return 0;
}
