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
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "bench.h"

struct run {
	double p50, p99;	/* lateness, us */
	double cpu;		/* us per wake-up */
	double per_wake;	/* expirations per wake-up */
};

static int timer_open(bool pollfs)
{
	int fd;

	if (pollfs)
		fd = pfs_timer(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	else
		fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		die("create a %s", pollfs ? "pollfs timer" : "timerfd");
	return fd;
}

static void timer_arm(bool pollfs, int fd, uint64_t start, uint64_t period)
{
	struct pollfs_timer_spec spec = {
		.clockid = CLOCK_MONOTONIC,
		.flags = POLLFS_TIMER_ABSTIME,
		.value = { start / 1000000000, start % 1000000000 },
		.interval = { period / 1000000000, period % 1000000000 },
	};
	struct itimerspec its = {
		.it_value = { start / 1000000000, start % 1000000000 },
		.it_interval = { period / 1000000000, period % 1000000000 },
	};
	int ret;

	if (pollfs)
		ret = write(fd, &spec, sizeof(spec)) == sizeof(spec) ? 0 : -1;
	else
		ret = timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL);
	if (ret)
		die("arm the timer");
}

static uint64_t timer_take(bool pollfs, int fd)
{
	struct pollfs_timer_event ev;
	uint64_t ticks;

	if (pollfs) {
		if (read(fd, &ev, sizeof(ev)) != sizeof(ev))
			die("read the pollfs timer");
		return ev.expirations;
	}
	if (read(fd, &ticks, sizeof(ticks)) != sizeof(ticks))
		die("read the timerfd");
	return ticks;
}

static struct run run_one(bool pollfs, uint64_t period, int expiries)
{
	struct epoll_event ev = { .events = EPOLLIN };
	static struct samples late;
	uint64_t start, t, cpu, total = 0;
	int fd, ep, wakes = 0;
	struct run r;

	fd = timer_open(pollfs);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die("epoll set-up");
	samples_clear(&late);
	start = now_ns() + 2 * period;
	timer_arm(pollfs, fd, start, period);
	cpu = thread_cpu_ns();
	while (total < (uint64_t)expiries) {
		if (epoll_wait(ep, &ev, 1, 5000) != 1)
			die("the timer did not fire for 5 s");
		total += timer_take(pollfs, fd);
		t = now_ns();
		wakes++;
		samples_add(&late, (double)(int64_t)(t - (start + (total - 1) *
							     period)) / 1e3);
	}
	cpu = thread_cpu_ns() - cpu;
	close(ep);
	close(fd);

	r.p50 = samples_quantile(&late, 0.5);
	r.p99 = samples_quantile(&late, 0.99);
	r.cpu = cpu / 1e3 / wakes;
	r.per_wake = (double)total / wakes;
	return r;
}

static void bench_period(const char *variant, uint64_t period, int expiries,
			 int reps)
{
	struct samples p50[2] = {}, p99[2] = {}, cpu[2] = {}, per[2] = {};
	struct run r;
	int i, k;
	bool pollfs;

	for (i = 0; i < reps; i++) {
		for (k = 0; k < 2; k++) {
			pollfs = (i + k) % 2 == 0;	/* A B, B A, ... */
			r = run_one(pollfs, period, expiries);
			samples_add(&p50[pollfs], r.p50);
			samples_add(&p99[pollfs], r.p99);
			samples_add(&cpu[pollfs], r.cpu);
			samples_add(&per[pollfs], r.per_wake);
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
		samples_free(&p50[k]);
		samples_free(&p99[k]);
		samples_free(&cpu[k]);
		samples_free(&per[k]);
	}
}

int main(int argc, char **argv)
{
	bench_init(argc, argv, "timer");
	pin_cpu(1);
	if (bench_quick) {
		bench_period("1ms", 1000000, 60, 4);
		bench_period("100us", 100000, 300, 4);
	} else {
		bench_period("1ms", 1000000, 150, 16);
		bench_period("100us", 100000, 800, 16);
	}
	return 0;
}
