// SPDX-License-Identifier: MIT
/*
 * Through io_uring: a pollfs futex object and a pollfs timer read with
 * IORING_OP_READ, against an eventfd and a timerfd read the same way.
 *
 * A pollfs file has FMODE_NOWAIT and its read_iter answers IOCB_NOWAIT
 * like O_NONBLOCK: io_uring's inline try finds nothing, io_uring arms its
 * internal poll on the file, and the wake-up that makes the file readable
 * queues the retry as task work for the submitter, which completes the
 * read inline on its way out of io_uring_enter.  All four files are
 * opened O_NONBLOCK, as in bench-futex and bench-timer, which sends the
 * stock ones the same way (a blocking timerfd of this kernel, with no
 * FMODE_NOWAIT, would be read by an io_uring worker thread instead).
 * Every wait is one io_uring_enter that submits what is queued and
 * sleeps until a completion (io_uring_submit_and_wait_timeout), the way
 * an io_uring event loop waits; one ring, default flags.
 *
 * futex: the wake-up harness of bench-futex (waiter and waker on CPU 0),
 * with the waiter in io_uring_enter instead of epoll_wait.  pollfs: each
 * cycle queues the arming write (16 bytes, the word's value now) linked
 * to the read (IOSQE_IO_LINK; the write's completion skipped on success),
 * both submitted by the enter that waits; the waker stores to the word
 * and calls FUTEX_WAKE.  Watched (POLLFS_FUTEX_WATCH): armed once, each
 * cycle queues the read alone, which re-arms.  eventfd: each cycle queues the read of the
 * counter; the waker writes 1.  Latency runs from just before the store
 * (or write) to the return of io_uring_enter with the read's completion.
 * Per run: latency p50 and p99, the waiter's CPU per wake-up (queueing,
 * the enter, the completion) and the waker's (store and FUTEX_WAKE, or
 * write; in both, io_uring's poll callback that queues the task work).
 *
 * timer: periodic timers of 1 ms and 100 us, as bench-timer, with one
 * read in flight at a time: queue the read, enter until it completes,
 * note how late after the latest expiry it counted.  Per run: lateness
 * p50 and p99, CPU per wake-up, expirations per wake-up.
 *
 * Runs alternate A B B A (the futex's three kinds take turns).
 */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bench.h"

/* user_data of the requests */
enum { REQ_ARM = 1, REQ_READ };

static struct io_uring ring;

static void ring_init(void)
{
	int r = io_uring_queue_init(8, &ring, 0);

	if (r) {
		errno = -r;
		bench_die("io_uring_queue_init");
	}
	/* a timeout without an extra request; the skipped arm completion */
	errno = ENOSYS;
	if (!(ring.features & IORING_FEAT_EXT_ARG) ||
	    !(ring.features & IORING_FEAT_CQE_SKIP))
		bench_die("io_uring without IORING_FEAT_EXT_ARG or _CQE_SKIP");
}

static struct io_uring_sqe *ring_sqe(uint64_t data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

	if (!sqe)
		bench_die("io_uring_get_sqe: the submission queue is full");
	io_uring_sqe_set_data64(sqe, data);
	return sqe;
}

static void ring_read(int fd, void *buf, unsigned int len)
{
	io_uring_prep_read(ring_sqe(REQ_READ), fd, buf, len, -1);
}

/*
 * One io_uring_enter: submit what is queued, sleep until a completion or
 * @timeout_ms.  The completion must be the read's; its result.
 */
static bool ring_wait(int timeout_ms, int *res)
{
	struct __kernel_timespec ts = {
		.tv_sec = timeout_ms / 1000,
		.tv_nsec = (timeout_ms % 1000) * 1000000L,
	};
	struct io_uring_cqe *cqe;
	uint64_t data;
	int r;

	r = io_uring_submit_and_wait_timeout(&ring, &cqe, 1, &ts, NULL);
	if (r == -ETIME)
		return false;
	if (r < 0) {
		errno = -r;
		bench_die("io_uring_submit_and_wait_timeout");
	}
	*res = cqe->res;
	data = io_uring_cqe_get_data64(cqe);
	io_uring_cqe_seen(&ring, cqe);
	if (data != REQ_READ) {
		errno = *res < 0 ? -*res : 0;
		bench_die("io_uring: the arming write completed with %d", *res);
	}
	return true;
}

/* futex: the waiter's side of both, for wake_ops */

struct uring_futex {
	struct bench_futex f;
	struct pollfs_futex_event arm, ev;
	bool watched;		/* armed once, re-armed by each read */
	int res;
};

static void uring_futex_arm(void *arg)
{
	struct uring_futex *u = arg;
	struct io_uring_sqe *sqe;

	if (u->watched) {
		ring_read(u->f.fd, &u->ev, sizeof(u->ev));
		return;
	}
	sqe = ring_sqe(REQ_ARM);
	u->arm = (struct pollfs_futex_event){
		.addr = (uintptr_t)&u->f.word,
		.val = __atomic_load_n(&u->f.word, __ATOMIC_ACQUIRE),
	};
	io_uring_prep_write(sqe, u->f.fd, &u->arm, sizeof(u->arm), -1);
	sqe->flags |= IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS;
	ring_read(u->f.fd, &u->ev, sizeof(u->ev));
}

static bool uring_futex_wait(void *arg, int timeout_ms)
{
	struct uring_futex *u = arg;

	return ring_wait(timeout_ms, &u->res);
}

static void uring_futex_fire(void *arg)
{
	bench_futex_fire(&((struct uring_futex *)arg)->f);
}

static void uring_futex_consume(void *arg)
{
	struct uring_futex *u = arg;

	errno = u->res < 0 ? -u->res : 0;
	if (u->res != sizeof(u->ev) || u->ev.addr != (uintptr_t)&u->f.word)
		bench_die("io_uring read of the futex object: %d", u->res);
}

struct uring_eventfd {
	int fd, res;
	uint64_t count;
};

static void uring_eventfd_arm(void *arg)
{
	struct uring_eventfd *u = arg;

	ring_read(u->fd, &u->count, sizeof(u->count));
}

static bool uring_eventfd_wait(void *arg, int timeout_ms)
{
	struct uring_eventfd *u = arg;

	return ring_wait(timeout_ms, &u->res);
}

static void uring_eventfd_fire(void *arg)
{
	struct uring_eventfd *u = arg;
	uint64_t one = 1;

	if (write(u->fd, &one, sizeof(one)) != sizeof(one))
		bench_die("write the eventfd");
}

static void uring_eventfd_consume(void *arg)
{
	struct uring_eventfd *u = arg;

	errno = u->res < 0 ? -u->res : 0;
	if (u->res != sizeof(u->count) || u->count != 1)
		bench_die("io_uring read of the eventfd: %d", u->res);
}

enum { EVENTFD, ARMED, WATCHED, KINDS };

static void futex_report(const char *variant, int kind, struct samples *p50,
			 struct samples *p99, struct samples *wcpu,
			 struct samples *kcpu, double wcpu_goal)
{
	bench_report("uring", variant, "latency p50", "us", "eventfd",
		     &p50[kind], &p50[EVENTFD], 1.10);
	bench_report("uring", variant, "latency p99", "us", "eventfd",
		     &p99[kind], &p99[EVENTFD], 1.10);
	bench_report("uring", variant, "waiter CPU per wake-up", "us",
		     "eventfd", &wcpu[kind], &wcpu[EVENTFD], wcpu_goal);
	bench_report("uring", variant, "waker CPU per wake-up", "us",
		     "eventfd", &kcpu[kind], &kcpu[EVENTFD], 1.10);
}

static void bench_futex_uring(int reps, int n)
{
	struct samples p50[KINDS] = {}, p99[KINDS] = {}, wcpu[KINDS] = {};
	struct samples kcpu[KINDS] = {};
	const char *variant = "futex wake-to-completion";
	struct uring_futex uf = {}, uw = { .watched = true };
	struct wake_result res = {};
	struct uring_eventfd ue = {};
	struct wake_ops ops[KINDS];
	int i, k, kind;

	uf.f.fd = bench_pfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	uw.f.fd = bench_pfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	ue.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (uf.f.fd < 0 || uw.f.fd < 0 || ue.fd < 0)
		bench_die("create the futex objects and the eventfd");
	if (bench_pfs_futex_watch(uw.f.fd, &uw.f.word, uw.f.word))
		bench_die("watch the futex word");
	ops[ARMED] = (struct wake_ops){
		.fd = uf.f.fd, .arm = uring_futex_arm,
		.wait = uring_futex_wait, .fire = uring_futex_fire,
		.consume = uring_futex_consume, .arg = &uf,
	};
	ops[WATCHED] = (struct wake_ops){
		.fd = uw.f.fd, .arm = uring_futex_arm,
		.wait = uring_futex_wait, .fire = uring_futex_fire,
		.consume = uring_futex_consume, .arg = &uw,
	};
	ops[EVENTFD] = (struct wake_ops){
		.fd = ue.fd, .arm = uring_eventfd_arm,
		.wait = uring_eventfd_wait, .fire = uring_eventfd_fire,
		.consume = uring_eventfd_consume, .arg = &ue,
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
		bench_progress("%s: repetition %d/%d", variant, i + 1, reps);
	}
	futex_report(variant, ARMED, p50, p99, wcpu, kcpu, 1.10);
	futex_report("futex watched wake-to-completion", WATCHED, p50, p99,
		     wcpu, kcpu, 1.00);
	for (k = 0; k < KINDS; k++) {
		bench_samples_free(&p50[k]);
		bench_samples_free(&p99[k]);
		bench_samples_free(&wcpu[k]);
		bench_samples_free(&kcpu[k]);
	}
	bench_samples_free(&res.lat);
	close(uf.f.fd);
	close(uw.f.fd);
	close(ue.fd);
}

/* timer */

static struct timer_run timer_one(bool pollfs, uint64_t period, int expiries)
{
	struct pollfs_timer_event ev;
	static struct samples late;
	uint64_t start, t, cpu, ticks, total = 0;
	int fd, res, wakes = 0;
	unsigned int len;
	void *buf;

	fd = bench_timer_open(pollfs);
	buf = pollfs ? (void *)&ev : (void *)&ticks;
	len = pollfs ? sizeof(ev) : sizeof(ticks);
	bench_samples_clear(&late);
	start = bench_now_ns() + 2 * period;
	bench_timer_arm(pollfs, fd, start, period);
	cpu = bench_thread_cpu_ns();
	while (total < (uint64_t)expiries) {
		ring_read(fd, buf, len);
		if (!ring_wait(5000, &res))
			bench_die("the timer did not fire for 5 s");
		t = bench_now_ns();
		errno = res < 0 ? -res : 0;
		if (res != (int)len)
			bench_die("io_uring read of the %s: %d",
				  pollfs ? "pollfs timer" : "timerfd", res);
		total += pollfs ? ev.expirations : ticks;
		wakes++;
		bench_samples_add(&late, (double)(int64_t)(t - (start +
				  (total - 1) * period)) / 1e3);
	}
	cpu = bench_thread_cpu_ns() - cpu;
	close(fd);
	return bench_timer_run_summary(&late, cpu, total, wakes);
}

static void bench_timer_uring(const char *variant, uint64_t period,
			      int expiries, int reps)
{
	struct samples p50[2] = {}, p99[2] = {}, cpu[2] = {}, per[2] = {};
	struct timer_run r;
	int i, k;
	bool pollfs;

	for (i = 0; i < reps; i++) {
		for (k = 0; k < 2; k++) {
			pollfs = (i + k) % 2 == 0;
			r = timer_one(pollfs, period, expiries);
			bench_samples_add(&p50[pollfs], r.p50);
			bench_samples_add(&p99[pollfs], r.p99);
			bench_samples_add(&cpu[pollfs], r.cpu);
			bench_samples_add(&per[pollfs], r.per_wake);
		}
		bench_progress("%s: repetition %d/%d", variant, i + 1, reps);
	}
	bench_report("uring", variant, "lateness p50", "us", "timerfd",
		     &p50[1], &p50[0], 1.10);
	bench_report("uring", variant, "lateness p99", "us", "timerfd",
		     &p99[1], &p99[0], 1.10);
	bench_report("uring", variant, "CPU per wake-up", "us", "timerfd",
		     &cpu[1], &cpu[0], 1.10);
	bench_report("uring", variant, "expirations per wake-up", "count",
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
	bench_init(argc, argv, "uring");
	ring_init();
	if (bench_quick) {
		bench_futex_uring(4, 30);
		bench_pin_cpu(1);
		bench_timer_uring("timer 1ms", 1000000, 60, 4);
		bench_timer_uring("timer 100us", 100000, 300, 4);
	} else {
		bench_futex_uring(96, 120);
		bench_pin_cpu(1);
		bench_timer_uring("timer 1ms", 1000000, 150, 64);
		bench_timer_uring("timer 100us", 100000, 800, 64);
	}
	io_uring_queue_exit(&ring);
	return 0;
}
