/* SPDX-License-Identifier: MIT */
/*
 * What every bench program shares: clocks, statistics, the CSV row, raw
 * pollfs ioctls, and a two-thread harness that times one wake-up from
 * the waker's event to the waiter's return from epoll_wait().
 *
 * Every program measures pollfs and its stock anchor in the same run,
 * interleaved (A B B A ...), and prints one CSV row per metric on
 * stdout; progress goes to stderr.  See bench/run for the columns.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/aio_abi.h>
#include <linux/pollfs.h>

/* --quick: a short run, well under a minute for all programs together. */
extern bool bench_quick;

void bench_init(int argc, char **argv, const char *name);
void bench_progress(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
void bench_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

uint64_t bench_now_ns(void);
uint64_t bench_thread_cpu_ns(void);
int bench_cpu_count(void);
/* Pins the calling thread to @cpu, taken modulo the CPUs. */
void bench_pin_cpu(int cpu);
void bench_raise_nofile(unsigned long n);
bool bench_kernel_cmdline_has(const char *word);	/* word or word=... */

/* A growable set of numbers and its order statistics. */
struct samples {
	double *v;
	size_t n, cap;
};

void bench_samples_add(struct samples *s, double x);
void bench_samples_clear(struct samples *s);
void bench_samples_free(struct samples *s);
double bench_samples_quantile(const struct samples *s, double q);
double bench_samples_mean(const struct samples *s);

/*
 * One CSV row: the median over the repetitions of each side, their
 * interquartile ranges, the ratio of the medians and the goal.  Every
 * metric is "lower is better"; @goal is the largest acceptable ratio,
 * or 0 for a row that only reports.
 */
void bench_report(const char *bench, const char *variant, const char *metric,
		  const char *unit, const char *anchor,
		  const struct samples *pollfs, const struct samples *base,
		  double goal);
/* A row that only reports, of samples not taken side by side. */
void bench_report_apart(const char *bench, const char *variant,
			const char *metric, const char *unit,
			const char *anchor, const struct samples *pollfs,
			const struct samples *base);

/* pollfs objects through the raw ioctls on one cached /dev/pollfs fd. */
int bench_pfs_timer(int flags);
int bench_pfs_futex(int flags);
int bench_pfs_signal(uint64_t mask, int flags);
int bench_pfs_aio(aio_context_t ctx, int flags);
int bench_pfs_futex_arm(int fd, const uint32_t *addr, uint32_t val);
int bench_pfs_futex_watch(int fd, const uint32_t *addr, uint32_t val);
void bench_pfs_dev_close(void);	/* so that the module can be unloaded */

/* Slab: of /proc/meminfo, in kB, once the RCU frees have settled. */
long bench_slab_kb(void);
long bench_slab_kb_settled(void);

int bench_futex_wake(uint32_t *addr, int n);
int bench_futex_wait(uint32_t *addr, uint32_t val);

/*
 * The wake-up harness.  A waiter thread loops: arm, epoll_wait on @fd,
 * note the time, consume.  The waker (the caller) waits until the waiter
 * sleeps in epoll_wait, notes the time and fires.  Latency is fire to
 * the return of epoll_wait.  Both threads run on CPU 0: the time is the
 * kernel's wake path and one switch to the waiter, the same for pollfs
 * and its anchor.  Across two vCPUs it would mostly measure how soon
 * the host schedules the halted vCPU's thread, which on a busy host
 * swamps everything else.
 */
struct wake_ops {
	int fd;
	void (*arm)(void *arg);		/* waiter, before each sleep; or NULL */
	void (*fire)(void *arg);	/* waker */
	void (*consume)(void *arg);	/* waiter, after each wake */
	void *arg;
	/*
	 * Waiter: sleep until the event, in place of epoll_wait on @fd
	 * (bench-uring: io_uring_enter until a completion); true when it
	 * came within @timeout_ms.  NULL: epoll.
	 */
	bool (*wait)(void *arg, int timeout_ms);
	/*
	 * A helper thread of the method (bench-peers: the thread blocked in
	 * FUTEX_WAIT that writes an eventfd), or 0: the waker also waits
	 * until that thread sleeps before it fires.
	 */
	pid_t helper;
};

struct wake_result {
	struct samples lat;	/* ns, one per wake-up */
	double waiter_cpu;	/* ns of the waiter's CPU per wake-up: arm,
				   epoll_wait and consume */
	double waker_cpu;	/* ns of the waker's CPU in fire(), per wake */
};

void bench_wake_run(const struct wake_ops *ops, int n, struct wake_result *res);

/*
 * A pollfs futex object on a word of its own, for wake_ops (arg: the
 * struct): armed on the word's current value (or watched, and so armed
 * again by each read); fired by bumping the word and a FUTEX_WAKE, which
 * must count the object; consumed by reading the record back.
 */
struct bench_futex {
	int fd;
	uint32_t word;
};

void bench_futex_arm(void *arg);
void bench_futex_fire(void *arg);
void bench_futex_consume(void *arg);

/*
 * Futex ping-pong between two threads on one CPU, and FUTEX_WAKE on
 * words nobody waits on: the median over @batches of the mean ns per
 * round trip (per call) in a batch.
 */
/* An eventfd as the wake harness's anchor; arg points to its fd. */
void bench_eventfd_fire(void *arg);
void bench_eventfd_consume(void *arg);

/*
 * One periodic timer (a pollfs timer, or a timerfd) read through epoll
 * until @expiries expirations were counted: how late each read returned
 * after the latest expiry it counted.
 */
struct timer_run {
	double p50, p99;	/* lateness, us */
	double cpu;		/* us of the reader's CPU per wake-up */
	double per_wake;	/* expirations per wake-up */
};
struct timer_run bench_timer_run(bool pollfs, uint64_t period_ns, int expiries);
/* Its figures from the lateness samples (us), CPU and counts of a run. */
struct timer_run bench_timer_run_summary(const struct samples *late,
					 uint64_t cpu_ns, uint64_t expirations,
					 int wakes);
/* Its parts: a non-blocking CLOCK_MONOTONIC timer, armed at @start_ns. */
int bench_timer_open(bool pollfs);
void bench_timer_arm(bool pollfs, int fd, uint64_t start_ns, uint64_t period_ns);

double bench_futex_pingpong(int batches, int trips);
double bench_futex_wake_nobody(int batches, int calls);

/* Wait for the deferred frees of closed files or an unloaded module. */
void bench_quiesce(void);

#endif /* BENCH_H */
