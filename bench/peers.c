// SPDX-License-Identifier: MIT
/*
 * Against the peers a program whose wakers are futex code it does not own
 * really has (issue 27): the thread fallback (a helper thread blocked in
 * FUTEX_WAIT, or futex_waitv, that writes an eventfd) and, on 6.7 and
 * later, io_uring's IORING_OP_FUTEX_WAIT and IORING_OP_FUTEX_WAITV
 * submitted again after every completion.
 *
 * one word: the wake-up harness of bench-futex (waiter, waker and any
 * helper all on CPU 0; the waker fires only once the waiter and the
 * helper sleep).  pollfs: a watched futex object (POLLFS_FUTEX_WATCH),
 * epoll_wait and one read per event, which re-arms.  fallback: the helper
 * sleeps in FUTEX_WAIT on the word; woken, it writes 1 to an eventfd and
 * waits again on the word's new value; the waiter sleeps in epoll_wait on
 * the eventfd and reads it.  The fallback's waiter CPU is the waiter's
 * plus the helper's, per event.  io_uring: the waiter queues a
 * FUTEX_WAIT on the word's value now and sleeps in the io_uring_enter
 * that submits it.  The waker stores to the word and calls FUTEX_WAKE.
 *
 * any of 64 words: the same, the waker bumping the next word of 64 in
 * turn.  pollfs: one futex object armed on all 64 (a watched wait-any
 * set), a read returns the woken record(s) and re-arms them.  fallback:
 * the helper sleeps in futex_waitv (syscall 449) on the 64 words.
 * io_uring: a FUTEX_WAITV of the 64 words, queued again per event.
 *
 * streams: a waker thread on CPU 1 bumps a word and calls FUTEX_WAKE
 * every 100 us (10,000 per second); the consumer on CPU 0 takes what
 * completes: all the completions that are there without a syscall, and
 * one io_uring_enter (submit and wait) when there are none, which for a
 * multishot read waits for up to 16 completions or 1 ms.  pollfs: a
 * watched futex object read by one IORING_OP_READ_MULTISHOT with a
 * provided buffer ring (queued again only if it ends); io_uring: a
 * FUTEX_WAIT queued again per completion.  Timer: a periodic 100 us
 * pollfs timer and a timerfd, both read by the same multishot op.  An
 * event is one completion carrying a record (a wake, or expirations);
 * per run: the consumer's CPU and io_uring_enter calls (counted here,
 * the only syscalls of the loop) per event, and events per second.
 *
 * The io_uring rows need the ops (6.7+): on a kernel without them only
 * the fallback rows are measured.
 */
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "bench.h"

/* Newer than Debian 12's liburing 2.3 and kernel headers. */
#define OP_READ_MULTISHOT	49
#define OP_FUTEX_WAIT		51
#define OP_FUTEX_WAITV		53
#define F2_SIZE_U32		0x02
#define F2_PRIVATE		128
#define NWORDS			64
#define BGID			7
#define NBUFS			16
#define BUFSZ			64

static bool have_futex_ops, have_multishot;

static void uring_init(struct io_uring *ring)
{
	int r = io_uring_queue_init(16, ring, 0);

	if (r) {
		errno = -r;
		bench_die("io_uring_queue_init");
	}
}

static void probe_ops(void)
{
	struct io_uring_probe *probe;
	struct io_uring ring;

	uring_init(&ring);
	probe = io_uring_get_probe_ring(&ring);
	if (probe) {
		have_futex_ops = io_uring_opcode_supported(probe, OP_FUTEX_WAIT) &&
				 io_uring_opcode_supported(probe, OP_FUTEX_WAITV);
		have_multishot = io_uring_opcode_supported(probe,
							   OP_READ_MULTISHOT);
		io_uring_free_probe(probe);
	}
	io_uring_queue_exit(&ring);
}

static struct io_uring_sqe *get_sqe(struct io_uring *ring, uint64_t data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		bench_die("io_uring_get_sqe: the submission queue is full");
	io_uring_sqe_set_data64(sqe, data);
	return sqe;
}

static void prep_futex_wait(struct io_uring *ring, uint32_t *word)
{
	struct io_uring_sqe *sqe = get_sqe(ring, 1);

	/* fd: the futex2 flags; off (addr2): the value; addr3: the mask */
	io_uring_prep_rw(OP_FUTEX_WAIT, sqe, F2_SIZE_U32 | F2_PRIVATE, word, 0,
			 __atomic_load_n(word, __ATOMIC_ACQUIRE));
	sqe->addr3 = 0xffffffffu;
}

static void fill_waitv(struct futex_waitv *wv, uint32_t *words)
{
	int i;

	for (i = 0; i < NWORDS; i++)
		wv[i] = (struct futex_waitv){
			.val = __atomic_load_n(&words[i], __ATOMIC_ACQUIRE),
			.uaddr = (uintptr_t)&words[i],
			.flags = FUTEX_32 | FUTEX_PRIVATE_FLAG,
		};
}

static void prep_futex_waitv(struct io_uring *ring, struct futex_waitv *wv,
			     uint32_t *words)
{
	struct io_uring_sqe *sqe = get_sqe(ring, 1);

	fill_waitv(wv, words);
	io_uring_prep_rw(OP_FUTEX_WAITV, sqe, 0, wv, NWORDS, 0);
	sqe->addr3 = 0;
}

/* The wake-up rows: one word, or any of 64 */

struct peer {
	uint32_t words[NWORDS];
	int nwords;		/* 1 or NWORDS */
	unsigned int next;	/* the word the waker bumps next */
	int fd;			/* pollfs object or eventfd */
	/* the fallback's helper */
	pthread_t thread;
	pid_t tid;
	bool stop;
	uint64_t helper_cpu;
	/* io_uring */
	struct io_uring ring;
	struct futex_waitv wv[NWORDS];
	int res;
};

static void peer_fire(void *arg)
{
	struct peer *p = arg;
	uint32_t *w = &p->words[p->next++ % p->nwords];

	__atomic_add_fetch(w, 1, __ATOMIC_RELEASE);
	bench_futex_wake(w, 1);
}

static void watch_consume(void *arg)
{
	struct pollfs_futex_event ev[NWORDS];
	struct peer *p = arg;
	ssize_t r;

	r = read(p->fd, ev, sizeof(ev));
	if (r < (ssize_t)sizeof(ev[0]) || r % sizeof(ev[0]))
		bench_die("read the futex object: %zd", r);
}

static void watch_words(struct peer *p)
{
	struct pollfs_futex_event ev[NWORDS];
	ssize_t len = p->nwords * sizeof(ev[0]);
	int i;

	p->fd = bench_pfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	if (p->fd < 0)
		bench_die("create a futex object");
	for (i = 0; i < p->nwords; i++)
		ev[i] = (struct pollfs_futex_event){
			.addr = (uintptr_t)&p->words[i],
			.val = p->words[i],
			.flags = POLLFS_FUTEX_WATCH,
		};
	if (write(p->fd, ev, len) != len)
		bench_die("watch %d futex words", p->nwords);
}

static void *helper_main(void *arg)
{
	struct futex_waitv wv[NWORDS];
	uint32_t seen[NWORDS];
	struct peer *p = arg;
	uint64_t one = 1, cpu;
	bool changed;
	int i;

	bench_pin_cpu(0);
	cpu = bench_thread_cpu_ns();
	for (i = 0; i < p->nwords; i++)
		seen[i] = __atomic_load_n(&p->words[i], __ATOMIC_ACQUIRE);
	__atomic_store_n(&p->tid, gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		if (p->nwords == 1) {
			bench_futex_wait(&p->words[0], seen[0]);
		} else {
			for (i = 0; i < NWORDS; i++)
				wv[i] = (struct futex_waitv){
					.val = seen[i],
					.uaddr = (uintptr_t)&p->words[i],
					.flags = FUTEX_32 | FUTEX_PRIVATE_FLAG,
				};
			syscall(449, wv, NWORDS, 0, NULL, CLOCK_MONOTONIC);
		}
		changed = false;
		for (i = 0; i < p->nwords; i++) {
			uint32_t now = __atomic_load_n(&p->words[i],
						       __ATOMIC_ACQUIRE);

			changed |= now != seen[i];
			seen[i] = now;
		}
		if (changed && !__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE) &&
		    write(p->fd, &one, sizeof(one)) != sizeof(one))
			bench_die("write the eventfd");
	}
	p->helper_cpu = bench_thread_cpu_ns() - cpu;
	return NULL;
}

static void fallback_start(struct peer *p)
{
	p->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->fd < 0)
		bench_die("eventfd");
	p->stop = false;
	p->tid = 0;
	if (pthread_create(&p->thread, NULL, helper_main, p))
		bench_die("pthread_create");
	while (!__atomic_load_n(&p->tid, __ATOMIC_ACQUIRE))
		usleep(100);
}

static void fallback_stop(struct peer *p)
{
	__atomic_store_n(&p->stop, true, __ATOMIC_RELEASE);
	peer_fire(p);
	pthread_join(p->thread, NULL);
	close(p->fd);
}

static void uring_arm(void *arg)
{
	struct peer *p = arg;

	if (p->nwords == 1)
		prep_futex_wait(&p->ring, &p->words[0]);
	else
		prep_futex_waitv(&p->ring, p->wv, p->words);
}

static bool uring_wait(void *arg, int timeout_ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = timeout_ms / 1000,
		.tv_nsec = (timeout_ms % 1000) * 1000000L,
	};
	struct peer *p = arg;
	struct io_uring_cqe *cqe;
	int r;

	r = io_uring_submit_and_wait_timeout(&p->ring, &cqe, 1, &ts, NULL);
	if (r == -ETIME)
		return false;
	if (r < 0) {
		errno = -r;
		bench_die("io_uring_submit_and_wait_timeout");
	}
	p->res = cqe->res;
	io_uring_cqe_seen(&p->ring, cqe);
	return true;
}

static void uring_consume(void *arg)
{
	struct peer *p = arg;

	/* woken: 0 (FUTEX_WAIT) or the word's index (FUTEX_WAITV) */
	/*
	 * EAGAIN: a word moved before the wait was queued, which is the
	 * event too.  The waker can fire while a FUTEX_WAITV is queueing
	 * its 64 waiters, since futex_wait_multiple_setup() sleeps in
	 * TASK_INTERRUPTIBLE (shown as S) from before the first.
	 */
	errno = p->res < 0 ? -p->res : 0;
	if (p->res == -EAGAIN)
		return;
	if (p->res < 0 || p->res >= p->nwords)
		bench_die("io_uring futex wait completed with %d", p->res);
}

static void eventfd_consume(void *arg)
{
	bench_eventfd_consume(&((struct peer *)arg)->fd);
}

enum { POLLFS, FALLBACK, URING, KINDS };
static const char *const anchor_name[KINDS] = {
	[FALLBACK] = "thread fallback", [URING] = "io_uring",
};

static void wake_rows(const char *variant, int nwords, int reps, int n)
{
	struct samples p50[KINDS] = {}, p99[KINDS] = {}, wcpu[KINDS] = {};
	struct samples kcpu[KINDS] = {}, threads[KINDS] = {};
	struct wake_result res = {};
	static struct peer peers[KINDS];
	struct wake_ops ops;
	int kinds = have_futex_ops ? KINDS : URING;
	int i, k, kind;
	char v[96];
	double extra;

	for (k = 0; k < KINDS; k++) {
		memset(&peers[k], 0, sizeof(peers[k]));
		peers[k].nwords = nwords;
	}
	watch_words(&peers[POLLFS]);
	if (have_futex_ops)
		uring_init(&peers[URING].ring);

	for (i = 0; i < reps; i++) {
		for (k = 0; k < kinds; k++) {
			kind = (i + k) % kinds;
			/* A B B A: every other repetition runs backwards */
			if (i % 2)
				kind = (kinds - 1 - (i + k) % kinds);
			ops = (struct wake_ops){
				.fire = peer_fire, .arg = &peers[kind],
			};
			extra = 0;
			switch (kind) {
			case POLLFS:
				ops.fd = peers[kind].fd;
				ops.consume = watch_consume;
				break;
			case FALLBACK:
				fallback_start(&peers[kind]);
				ops.fd = peers[kind].fd;
				ops.consume = eventfd_consume;
				ops.helper = peers[kind].tid;
				break;
			case URING:
				ops.arm = uring_arm;
				ops.wait = uring_wait;
				ops.consume = uring_consume;
				break;
			}
			bench_wake_run(&ops, n, &res);
			if (kind == FALLBACK) {
				fallback_stop(&peers[kind]);
				extra = (double)peers[kind].helper_cpu / n;
			}
			bench_samples_add(&p50[kind],
				bench_samples_quantile(&res.lat, 0.5) / 1e3);
			bench_samples_add(&p99[kind],
				bench_samples_quantile(&res.lat, 0.99) / 1e3);
			bench_samples_add(&wcpu[kind],
					  (res.waiter_cpu + extra) / 1e3);
			bench_samples_add(&kcpu[kind], res.waker_cpu / 1e3);
			bench_samples_add(&threads[kind],
					  kind == FALLBACK ? 2 : 1);
		}
		bench_progress("%s: repetition %d/%d", variant, i + 1, reps);
	}
	for (k = FALLBACK; k < kinds; k++) {
		/* the goals are against the fallback; io_uring's rows report */
		double goal = k == FALLBACK ? 0.70 : 0;

		snprintf(v, sizeof(v), "%s vs %s", variant,
			 k == FALLBACK ? "fallback" : "io_uring");
		bench_report("peers", v, "latency p50", "us", anchor_name[k],
			     &p50[POLLFS], &p50[k], goal);
		bench_report("peers", v, "latency p99", "us", anchor_name[k],
			     &p99[POLLFS], &p99[k], 0);
		bench_report("peers", v, "waiter CPU per event", "us",
			     anchor_name[k], &wcpu[POLLFS], &wcpu[k], goal);
		bench_report("peers", v, "waker CPU per event", "us",
			     anchor_name[k], &kcpu[POLLFS], &kcpu[k], 0);
		bench_report("peers", v, "threads", "count", anchor_name[k],
			     &threads[POLLFS], &threads[k], 0);
	}
	for (k = 0; k < KINDS; k++) {
		bench_samples_free(&p50[k]);
		bench_samples_free(&p99[k]);
		bench_samples_free(&wcpu[k]);
		bench_samples_free(&kcpu[k]);
		bench_samples_free(&threads[k]);
	}
	bench_samples_free(&res.lat);
	close(peers[POLLFS].fd);
	if (have_futex_ops)
		io_uring_queue_exit(&peers[URING].ring);
}

/* Streams */

enum { S_PFUTEX, S_REFUTEX, S_PTIMER, S_TIMERFD };

struct stream_run {
	double cpu, enters, rate;	/* per event; events per second */
	double offered;			/* wakes (expiries) per second */
};

struct waker {
	uint32_t word;
	bool stop;
	uint64_t period;
	uint64_t fired;
};

/*
 * Paced by the clock: it sleeps until the next period's time and fires;
 * late (a 100 us sleep can take a millisecond under emulation), it fires
 * the missed periods back to back, so the offered rate holds where the
 * waker can keep up.  (Spinning in between instead made each side's
 * consumer far slower under emulation, 120 events/s.)
 */
static void *waker_main(void *arg)
{
	struct waker *w = arg;
	struct timespec ts;
	uint64_t t;

	bench_pin_cpu(1);
	t = bench_now_ns();
	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		t += w->period;
		ts.tv_sec = t / 1000000000;
		ts.tv_nsec = t % 1000000000;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		__atomic_add_fetch(&w->word, 1, __ATOMIC_RELEASE);
		bench_futex_wake(&w->word, 1);
		__atomic_add_fetch(&w->fired, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void prep_multishot(struct io_uring *ring, int fd)
{
	struct io_uring_sqe *sqe = get_sqe(ring, 2);

	io_uring_prep_rw(OP_READ_MULTISHOT, sqe, fd, NULL, 0, -1);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
}

static struct stream_run stream_one(int kind, uint64_t period, double secs)
{
	static char bufs[NBUFS][BUFSZ];
	struct __kernel_timespec ts = { .tv_nsec = 100000000 };
	struct io_uring_buf_reg reg = {};
	struct io_uring_buf_ring *br = NULL;
	struct waker w = { .period = period };
	uint64_t cpu, t0, t1, end, events = 0, enters = 0;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	pthread_t thread;
	bool futex = kind <= S_REFUTEX;
	int fd = -1, r, i, bid, wait_nr = 1;
	struct stream_run out;
	unsigned int flags;

	uring_init(&ring);
	if (kind != S_REFUTEX) {
		br = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (br == MAP_FAILED)
			bench_die("mmap the buffer ring");
		reg.ring_addr = (uintptr_t)br;
		reg.ring_entries = NBUFS;
		reg.bgid = BGID;
		r = io_uring_register_buf_ring(&ring, &reg, 0);
		if (r) {
			errno = -r;
			bench_die("io_uring_register_buf_ring");
		}
		io_uring_buf_ring_init(br);
		for (i = 0; i < NBUFS; i++)
			io_uring_buf_ring_add(br, bufs[i], BUFSZ, i,
					      io_uring_buf_ring_mask(NBUFS), i);
		io_uring_buf_ring_advance(br, NBUFS);
	}
	switch (kind) {
	case S_PFUTEX:
		fd = bench_pfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
		if (fd < 0 || bench_pfs_futex_watch(fd, &w.word, w.word))
			bench_die("watch the futex word");
		prep_multishot(&ring, fd);
		break;
	case S_REFUTEX:
		prep_futex_wait(&ring, &w.word);
		break;
	default:
		fd = bench_timer_open(kind == S_PTIMER);
		bench_timer_arm(kind == S_PTIMER, fd, bench_now_ns() + period,
				period);
		prep_multishot(&ring, fd);
		break;
	}
	if (futex && pthread_create(&thread, NULL, waker_main, &w))
		bench_die("pthread_create");

	/*
	 * A multishot read can complete many times per enter: the loop
	 * waits for up to 16 completions or 1 ms, whichever comes first, as
	 * an io_uring event loop bounds its batches.  A FUTEX_WAIT has one
	 * completion per submission: one at a time.
	 */
	if (kind != S_REFUTEX) {
		wait_nr = 16;
		ts.tv_nsec = 1000000;
	}
	t0 = bench_now_ns();
	end = t0 + secs * 1e9;
	cpu = bench_thread_cpu_ns();
	for (;;) {
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			r = cqe->res;
			flags = cqe->flags;
			io_uring_cqe_seen(&ring, cqe);
			if (kind == S_REFUTEX) {
				/* woken (0), or the word moved on (EAGAIN) */
				if (r != 0 && r != -EAGAIN) {
					errno = -r;
					bench_die("io_uring FUTEX_WAIT: %d", r);
				}
				events++;
				prep_futex_wait(&ring, &w.word);
				continue;
			}
			if (r > 0) {
				if (!(flags & IORING_CQE_F_BUFFER))
					bench_die("a multishot read without a buffer");
				bid = flags >> IORING_CQE_BUFFER_SHIFT;
				events++;
				io_uring_buf_ring_add(br, bufs[bid], BUFSZ, bid,
					io_uring_buf_ring_mask(NBUFS), 0);
				io_uring_buf_ring_advance(br, 1);
			} else if (r != -ENOBUFS) {
				errno = -r;
				bench_die("multishot read of the %s: %d",
					  kind == S_PFUTEX ? "futex object" :
					  kind == S_PTIMER ? "pollfs timer" :
					  "timerfd", r);
			}
			if (!(flags & IORING_CQE_F_MORE))
				prep_multishot(&ring, fd);
		}
		if (bench_now_ns() >= end)
			break;
		enters++;
		r = io_uring_submit_and_wait_timeout(&ring, &cqe, wait_nr, &ts,
						     NULL);
		if (r < 0 && r != -ETIME) {
			errno = -r;
			bench_die("io_uring_submit_and_wait_timeout");
		}
	}
	cpu = bench_thread_cpu_ns() - cpu;
	t1 = bench_now_ns();
	if (futex) {
		__atomic_store_n(&w.stop, true, __ATOMIC_RELEASE);
		pthread_join(thread, NULL);
	}
	io_uring_queue_exit(&ring);
	if (br)
		munmap(br, 4096);
	if (fd >= 0)
		close(fd);
	if (!events)
		bench_die("no event in %.2f s", secs);
	out.cpu = cpu / 1e3 / events;
	out.enters = (double)enters / events;
	out.rate = events / ((t1 - t0) / 1e9);
	out.offered = futex ? w.fired / ((t1 - t0) / 1e9) : 1e9 / period;
	return out;
}

static void stream_rows(const char *variant, int a, int b, const char *anchor,
			double cpu_goal, int reps, double secs)
{
	struct samples cpu[2] = {}, sys[2] = {}, rate[2] = {}, one = {};
	struct samples off[2] = {};
	struct stream_run r;
	int i, k, side;

	for (i = 0; i < reps; i++) {
		for (k = 0; k < 2; k++) {
			side = (i + k) % 2;
			r = stream_one(side ? b : a, 100000, secs);
			bench_samples_add(&cpu[side], r.cpu);
			bench_samples_add(&sys[side], r.enters);
			bench_samples_add(&rate[side], r.rate);
			bench_samples_add(&off[side], r.offered);
		}
		bench_samples_add(&one, 1);
		bench_progress("%s: repetition %d/%d", variant, i + 1, reps);
	}
	bench_report("peers", variant, "CPU per event", "us", anchor,
		     &cpu[0], &cpu[1], cpu_goal);
	bench_report("peers", variant, "syscalls per event", "count", anchor,
		     &sys[0], &sys[1], 0);
	bench_report("peers", variant, "syscalls per event", "count",
		     "one per event", &sys[0], &one, 0.10);
	bench_report("peers", variant, "events per second", "1/s", anchor,
		     &rate[0], &rate[1], 0);
	bench_report("peers", variant, "offered per second", "1/s", anchor,
		     &off[0], &off[1], 0);
	for (k = 0; k < 2; k++) {
		bench_samples_free(&cpu[k]);
		bench_samples_free(&sys[k]);
		bench_samples_free(&rate[k]);
		bench_samples_free(&off[k]);
	}
	bench_samples_free(&one);
}

int main(int argc, char **argv)
{
	int reps, n;

	bench_init(argc, argv, "peers");
	probe_ops();
	if (!have_futex_ops)
		bench_progress("no IORING_OP_FUTEX_WAIT(V): fallback rows only");
	reps = bench_quick ? 4 : 48;
	n = bench_quick ? 30 : 100;
	wake_rows("one word", 1, reps, n);
	wake_rows("any of 64 words", NWORDS, reps, n);
	if (have_futex_ops && have_multishot) {
		reps = bench_quick ? 3 : 16;
		stream_rows("stream futex 10k/s multishot vs FUTEX_WAIT again",
			    S_PFUTEX, S_REFUTEX, "io_uring FUTEX_WAIT", 1.00,
			    reps, bench_quick ? 0.2 : 0.3);
		stream_rows("stream timer 100us multishot", S_PTIMER,
			    S_TIMERFD, "timerfd multishot", 1.10, reps,
			    bench_quick ? 0.2 : 0.3);
	}
	return 0;
}
