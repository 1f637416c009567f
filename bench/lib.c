// SPDX-License-Identifier: MIT
/*
 * The bench programs' shared code; see bench.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "bench.h"

bool bench_quick;
static const char *bench_name = "bench";

void bench_init(int argc, char **argv, const char *name)
{
	int i;

	bench_name = name;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			bench_quick = true;
		} else {
			fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
			exit(2);
		}
	}
}

void bench_progress(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "  %s: ", bench_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void bench_die(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	fprintf(stderr, "%s: error: ", bench_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (errno %d: %s)\n", err, strerror(err));
	exit(1);
}

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint64_t bench_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int bench_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? n : 1;
}

void bench_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % bench_cpu_count(), &set);
	errno = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (errno)
		bench_die("pin to CPU %d", cpu);
}

void bench_raise_nofile(unsigned long n)
{
	struct rlimit rl = { .rlim_cur = n, .rlim_max = n };

	if (setrlimit(RLIMIT_NOFILE, &rl))
		bench_die("setrlimit(RLIMIT_NOFILE, %lu) (needs root)", n);
}

void bench_samples_add(struct samples *s, double x)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			bench_die("out of memory");
	}
	s->v[s->n++] = x;
}

void bench_samples_clear(struct samples *s)
{
	s->n = 0;
}

void bench_samples_free(struct samples *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Linear interpolation between the closest ranks. */
double bench_samples_quantile(const struct samples *s, double q)
{
	double *v, pos, x;
	size_t i;

	if (!s->n)
		return NAN;
	v = malloc(s->n * sizeof(*v));
	if (!v)
		bench_die("out of memory");
	memcpy(v, s->v, s->n * sizeof(*v));
	qsort(v, s->n, sizeof(*v), cmp_double);
	pos = q * (s->n - 1);
	i = (size_t)pos;
	x = i + 1 < s->n ? v[i] + (pos - i) * (v[i + 1] - v[i]) : v[i];
	free(v);
	return x;
}

double bench_samples_mean(const struct samples *s)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < s->n; i++)
		sum += s->v[i];
	return s->n ? sum / s->n : NAN;
}

static void report(const char *bench, const char *variant, const char *metric,
		   const char *unit, const char *anchor,
		   const struct samples *pollfs, const struct samples *base,
		   double goal, bool side_by_side)
{
	double p = bench_samples_quantile(pollfs, 0.5);
	double a = bench_samples_quantile(base, 0.5);
	double ratio = a > 0 ? p / a : NAN;
	struct samples pairs = {};
	char goal_s[16] = "-";
	const char *met = "-";
	size_t i;

	if (goal > 0) {
		snprintf(goal_s, sizeof(goal_s), "<=%.2f", goal);
		met = ratio <= goal ? "yes" : "no";
	}
	/*
	 * The programs add both sides' samples in the order they measured
	 * them, alternating: the i-th of each were taken side by side, and
	 * their ratio is spared most of what the host did to both.
	 */
	if (side_by_side && pollfs->n == base->n)
		for (i = 0; i < base->n; i++)
			if (base->v[i] > 0)
				bench_samples_add(&pairs,
						  pollfs->v[i] / base->v[i]);
	printf("%s,%s,%s,%s,%s,%.6g,%.6g,%.4f,%.4g,%.4g,%zu,%s,%s,%.4f,%.4g\n",
	       bench, variant, metric, unit, anchor, p, a, ratio,
	       bench_samples_quantile(pollfs, 0.75) -
	       bench_samples_quantile(pollfs, 0.25),
	       bench_samples_quantile(base, 0.75) -
	       bench_samples_quantile(base, 0.25),
	       pollfs->n < base->n ? pollfs->n : base->n, goal_s, met,
	       pairs.n ? bench_samples_quantile(&pairs, 0.5) : NAN,
	       pairs.n ? bench_samples_quantile(&pairs, 0.75) -
			 bench_samples_quantile(&pairs, 0.25) : NAN);
	bench_samples_free(&pairs);
}

void bench_report(const char *bench, const char *variant, const char *metric,
		  const char *unit, const char *anchor,
		  const struct samples *pollfs, const struct samples *base,
		  double goal)
{
	report(bench, variant, metric, unit, anchor, pollfs, base, goal, true);
}

void bench_report_apart(const char *bench, const char *variant,
			const char *metric, const char *unit,
			const char *anchor, const struct samples *pollfs,
			const struct samples *base)
{
	report(bench, variant, metric, unit, anchor, pollfs, base, 0, false);
}

static int pfs_dev_fd = -1;

static int pfs_create(unsigned long cmd, void *arg)
{
	if (pfs_dev_fd < 0) {
		pfs_dev_fd = open("/dev/pollfs", O_RDWR | O_CLOEXEC);
		if (pfs_dev_fd < 0)
			bench_die("open /dev/pollfs (is the module loaded?)");
	}
	return ioctl(pfs_dev_fd, cmd, arg);
}

void bench_pfs_dev_close(void)
{
	if (pfs_dev_fd >= 0)
		close(pfs_dev_fd);
	pfs_dev_fd = -1;
}

int bench_pfs_timer(int flags)
{
	struct pollfs_open args = { .flags = flags };

	return pfs_create(POLLFS_IOC_TIMER, &args);
}

int bench_pfs_futex(int flags)
{
	struct pollfs_open args = { .flags = flags };

	return pfs_create(POLLFS_IOC_FUTEX, &args);
}

int bench_pfs_signal(uint64_t mask, int flags)
{
	struct pollfs_signal_open args = { .mask = mask, .flags = flags };

	return pfs_create(POLLFS_IOC_SIGNAL, &args);
}

int bench_pfs_aio(aio_context_t ctx, int flags)
{
	struct pollfs_aio_open args = { .ctx = ctx, .flags = flags };

	return pfs_create(POLLFS_IOC_AIO, &args);
}

static int pfs_futex_write(int fd, const uint32_t *addr, uint32_t val,
			   uint32_t flags)
{
	struct pollfs_futex_event ev = {
		.addr = (uintptr_t)addr,
		.val = val,
		.flags = flags,
	};

	return write(fd, &ev, sizeof(ev)) == sizeof(ev) ? 0 : -1;
}

int bench_pfs_futex_arm(int fd, const uint32_t *addr, uint32_t val)
{
	return pfs_futex_write(fd, addr, val, 0);
}

int bench_pfs_futex_watch(int fd, const uint32_t *addr, uint32_t val)
{
	return pfs_futex_write(fd, addr, val, POLLFS_FUTEX_WATCH);
}

long bench_slab_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f;

	f = fopen("/proc/meminfo", "re");
	if (!f)
		bench_die("open /proc/meminfo");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %ld kB", &kb) == 1)
			break;
	fclose(f);
	if (kb < 0)
		bench_die("no Slab: line in /proc/meminfo");
	return kb;
}

/*
 * Closed files, dentries and their slab pages go back an RCU grace
 * period or more after close(): wait until Slab stops shrinking.
 */
long bench_slab_kb_settled(void)
{
	long prev = bench_slab_kb(), cur;
	int i;

	for (i = 0; i < 50; i++) {
		usleep(100 * 1000);
		cur = bench_slab_kb();
		if (prev - cur < 64)
			return cur;
		prev = cur;
	}
	return prev;
}

int bench_futex_wake(uint32_t *addr, int n)
{
	return syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

int bench_futex_wait(uint32_t *addr, uint32_t val)
{
	return syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

/* The wake-up harness. */

struct wake_run {
	const struct wake_ops *ops;
	struct wake_result *res;
	int n;
	pid_t tid;		/* the waiter's */
	unsigned int ready;	/* wake-ups the waiter is ready for */
	unsigned int done;	/* wake-ups the waiter has handled */
	uint64_t t0;		/* when the waker fired */
};

/*
 * The handshakes sleep in FUTEX_WAIT rather than spin: under emulation a
 * spinning vCPU takes the host CPU that the other vCPU needs.  They run
 * outside the timed window and outside the waiter's CPU count.
 */
static void counter_set(unsigned int *counter, unsigned int value)
{
	__atomic_store_n(counter, value, __ATOMIC_RELEASE);
	bench_futex_wake(counter, 1);
}

static void counter_wait(unsigned int *counter, unsigned int value)
{
	unsigned int now;

	while ((now = __atomic_load_n(counter, __ATOMIC_ACQUIRE)) != value)
		bench_futex_wait(counter, now);
}

static void *wake_waiter(void *arg)
{
	struct wake_run *run = arg;
	const struct wake_ops *ops = run->ops;
	struct epoll_event ev = { .events = EPOLLIN };
	uint64_t cpu = 0, c, t1;
	int ep, i;

	bench_pin_cpu(0);
	ep = ops->wait ? -1 : epoll_create1(EPOLL_CLOEXEC);
	if (!ops->wait &&
	    (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, ops->fd, &ev)))
		bench_die("epoll set-up");
	__atomic_store_n(&run->tid, gettid(), __ATOMIC_RELEASE);
	for (i = 0; i < run->n; i++) {
		c = bench_thread_cpu_ns();
		if (ops->arm)
			ops->arm(ops->arg);
		cpu += bench_thread_cpu_ns() - c;
		counter_set(&run->ready, i + 1);
		c = bench_thread_cpu_ns();
		if (ops->wait ? !ops->wait(ops->arg, 10000) :
				epoll_wait(ep, &ev, 1, 10000) != 1)
			bench_die("wake-up %d never came", i);
		t1 = bench_now_ns();
		ops->consume(ops->arg);
		cpu += bench_thread_cpu_ns() - c;
		bench_samples_add(&run->res->lat, t1 -
				  __atomic_load_n(&run->t0, __ATOMIC_ACQUIRE));
		counter_set(&run->done, i + 1);
	}
	run->res->waiter_cpu = (double)cpu / run->n;
	if (ep >= 0)
		close(ep);
	return NULL;
}

/* Until the waiter's state in /proc is S: asleep, in epoll_wait. */
static void wait_asleep(int stat)
{
	char buf[512], *p;
	ssize_t len;

	for (;;) {
		len = pread(stat, buf, sizeof(buf) - 1, 0);
		if (len <= 0)
			bench_die("read the waiter's /proc stat");
		buf[len] = '\0';
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'S')
			return;
		usleep(20);
	}
}

void bench_wake_run(const struct wake_ops *ops, int n, struct wake_result *res)
{
	struct wake_run run = { .ops = ops, .res = res, .n = n };
	uint64_t waker_cpu = 0, c;
	char path[64];
	pthread_t thread;
	cpu_set_t saved;
	int stat, helper, i;

	bench_samples_clear(&res->lat);
	if (pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved))
		bench_die("pthread_getaffinity_np");
	bench_pin_cpu(0);
	if (pthread_create(&thread, NULL, wake_waiter, &run))
		bench_die("pthread_create");
	counter_wait(&run.ready, 1);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", run.tid);
	stat = open(path, O_RDONLY | O_CLOEXEC);
	if (stat < 0)
		bench_die("open %s", path);

	helper = -1;
	if (ops->helper) {
		snprintf(path, sizeof(path), "/proc/self/task/%d/stat",
			 ops->helper);
		helper = open(path, O_RDONLY | O_CLOEXEC);
		if (helper < 0)
			bench_die("open %s", path);
	}

	for (i = 0; i < n; i++) {
		counter_wait(&run.ready, i + 1);
		wait_asleep(stat);
		if (helper >= 0)
			wait_asleep(helper);
		__atomic_store_n(&run.t0, bench_now_ns(), __ATOMIC_RELEASE);
		c = bench_thread_cpu_ns();
		ops->fire(ops->arg);
		waker_cpu += bench_thread_cpu_ns() - c;
		counter_wait(&run.done, i + 1);
	}
	pthread_join(thread, NULL);
	close(stat);
	if (helper >= 0)
		close(helper);
	res->waker_cpu = (double)waker_cpu / n;
	pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
}

/*
 * Futex ping-pong: both threads on CPU 0, so each wake switches to the
 * other thread.  Timed in batches; the median batch resists the moments
 * the emulator's host takes the CPU away.
 */

struct pingpong {
	uint32_t word;		/* 1: the ball is with B; 0: with A */
	int batches, trips;
	struct samples ns;
};

static void *pingpong_b(void *arg)
{
	struct pingpong *pp = arg;
	int i;

	bench_pin_cpu(0);
	for (i = 0; i < pp->batches * pp->trips; i++) {
		while (__atomic_load_n(&pp->word, __ATOMIC_ACQUIRE) != 1)
			bench_futex_wait(&pp->word, 0);
		__atomic_store_n(&pp->word, 0, __ATOMIC_RELEASE);
		bench_futex_wake(&pp->word, 1);
	}
	return NULL;
}

static void *pingpong_a(void *arg)
{
	struct pingpong *pp = arg;
	uint64_t t0;
	int b, i;

	bench_pin_cpu(0);
	for (b = 0; b < pp->batches; b++) {
		t0 = bench_now_ns();
		for (i = 0; i < pp->trips; i++) {
			__atomic_store_n(&pp->word, 1, __ATOMIC_RELEASE);
			bench_futex_wake(&pp->word, 1);
			while (__atomic_load_n(&pp->word, __ATOMIC_ACQUIRE))
				bench_futex_wait(&pp->word, 1);
		}
		bench_samples_add(&pp->ns,
				  (double)(bench_now_ns() - t0) / pp->trips);
	}
	return NULL;
}

double bench_futex_pingpong(int batches, int trips)
{
	struct pingpong pp = { .batches = batches, .trips = trips };
	pthread_t a, b;
	double ns;

	if (pthread_create(&b, NULL, pingpong_b, &pp) ||
	    pthread_create(&a, NULL, pingpong_a, &pp))
		bench_die("pthread_create");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	ns = bench_samples_quantile(&pp.ns, 0.5);
	bench_samples_free(&pp.ns);
	return ns;
}

/* 64 words a cache line apart, which nobody ever waits on. */
static uint32_t nobody_words[64 * 16] __attribute__((aligned(64)));

double bench_futex_wake_nobody(int batches, int calls)
{
	struct samples ns = {};
	uint64_t t0;
	double med;
	int b, i;

	for (b = 0; b < batches; b++) {
		t0 = bench_now_ns();
		for (i = 0; i < calls; i++)
			bench_futex_wake(&nobody_words[(i % 64) * 16], 1);
		bench_samples_add(&ns, (double)(bench_now_ns() - t0) / calls);
	}
	med = bench_samples_quantile(&ns, 0.5);
	bench_samples_free(&ns);
	return med;
}

/*
 * After closing many files or unloading the module, their memory goes
 * back from RCU callbacks and workers for a while: let that finish
 * before timing anything else.
 */
void bench_quiesce(void)
{
	bench_slab_kb_settled();
	usleep(100 * 1000);
}

bool bench_kernel_cmdline_has(const char *word)
{
	char line[4096], *p;
	size_t len = strlen(word);
	FILE *f;

	f = fopen("/proc/cmdline", "re");
	if (!f || !fgets(line, sizeof(line), f))
		bench_die("read /proc/cmdline");
	fclose(f);
	for (p = line; (p = strstr(p, word)); p += len)
		if ((p == line || p[-1] == ' ') &&
		    (p[len] == '=' || p[len] == ' ' || p[len] == '\n' ||
		     !p[len]))
			return true;
	return false;
}

void bench_futex_arm(void *arg)
{
	struct bench_futex *f = arg;

	if (bench_pfs_futex_arm(f->fd, &f->word,
				__atomic_load_n(&f->word, __ATOMIC_ACQUIRE)))
		bench_die("arm the futex object");
}

void bench_futex_fire(void *arg)
{
	struct bench_futex *f = arg;

	__atomic_add_fetch(&f->word, 1, __ATOMIC_RELEASE);
	if (bench_futex_wake(&f->word, 1) != 1)
		bench_die("FUTEX_WAKE did not count the armed object");
}

void bench_futex_consume(void *arg)
{
	struct bench_futex *f = arg;
	struct pollfs_futex_event ev;

	if (read(f->fd, &ev, sizeof(ev)) != sizeof(ev) ||
	    ev.addr != (uintptr_t)&f->word)
		bench_die("read the futex object");
}

void bench_eventfd_fire(void *arg)
{
	uint64_t one = 1;

	if (write(*(int *)arg, &one, sizeof(one)) != sizeof(one))
		bench_die("write the eventfd");
}

void bench_eventfd_consume(void *arg)
{
	uint64_t count;

	if (read(*(int *)arg, &count, sizeof(count)) != sizeof(count))
		bench_die("read the eventfd");
}

int bench_timer_open(bool pollfs)
{
	int fd;

	if (pollfs)
		fd = bench_pfs_timer(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	else
		fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		bench_die("create a %s", pollfs ? "pollfs timer" : "timerfd");
	return fd;
}

void bench_timer_arm(bool pollfs, int fd, uint64_t start, uint64_t period)
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
		bench_die("arm the timer");
}

static uint64_t timer_take(bool pollfs, int fd)
{
	struct pollfs_timer_event ev;
	uint64_t ticks;

	if (pollfs) {
		if (read(fd, &ev, sizeof(ev)) != sizeof(ev))
			bench_die("read the pollfs timer");
		return ev.expirations;
	}
	if (read(fd, &ticks, sizeof(ticks)) != sizeof(ticks))
		bench_die("read the timerfd");
	return ticks;
}

struct timer_run bench_timer_run_summary(const struct samples *late,
					 uint64_t cpu_ns, uint64_t expirations,
					 int wakes)
{
	struct timer_run r = {
		.p50 = bench_samples_quantile(late, 0.5),
		.p99 = bench_samples_quantile(late, 0.99),
		.cpu = cpu_ns / 1e3 / wakes,
		.per_wake = (double)expirations / wakes,
	};

	return r;
}

struct timer_run bench_timer_run(bool pollfs, uint64_t period, int expiries)
{
	struct epoll_event ev = { .events = EPOLLIN };
	static struct samples late;
	uint64_t start, t, cpu, total = 0;
	int fd, ep, wakes = 0;

	fd = bench_timer_open(pollfs);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		bench_die("epoll set-up");
	bench_samples_clear(&late);
	start = bench_now_ns() + 2 * period;
	bench_timer_arm(pollfs, fd, start, period);
	cpu = bench_thread_cpu_ns();
	while (total < (uint64_t)expiries) {
		if (epoll_wait(ep, &ev, 1, 5000) != 1)
			bench_die("the timer did not fire for 5 s");
		total += timer_take(pollfs, fd);
		t = bench_now_ns();
		wakes++;
		bench_samples_add(&late, (double)(int64_t)(t - (start +
				  (total - 1) * period)) / 1e3);
	}
	cpu = bench_thread_cpu_ns() - cpu;
	close(ep);
	close(fd);
	return bench_timer_run_summary(&late, cpu, total, wakes);
}
