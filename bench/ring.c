// SPDX-License-Identifier: MIT
/*
 * The record ring (interface 1.2) against the other ways to take the
 * same events, in one run.
 *
 * busy futex stream: a waker thread on CPU 1 bumps a futex word and
 * calls FUTEX_WAKE as fast as it can, for a fixed time; the consumer,
 * on CPU 0, is an event loop whose turn does 150 us of other work (a
 * CPU-only loop, calibrated at the start, the same for every method),
 * then takes everything there is, so that events come faster than its
 * turn: several arrive during each turn's work.
 *   ring: a watched futex object with a ring of 4096; the consumer takes
 *     every record there is with loads and stores (a lone consumer's
 *     release store of head), read(2)s only when the overflow flag says
 *     records wait in the object, and sleeps in epoll_wait (1 ms at
 *     most) only when the ring is empty;
 *   (a) epoll + read: the same watched object without a ring: epoll_wait,
 *     then read(2) until EAGAIN (each read re-arms the watch);
 *   (b) eventfd: the waker writes 1 to an eventfd instead of the wake;
 *     the consumer reads it the same way (one read takes the count);
 *   (c) io_uring: an IORING_OP_FUTEX_WAIT on the word, queued again per
 *     completion; the consumer takes every completion there is, and
 *     enters (submit and wait for one, 1 ms at most) when there is none
 *     (6.7+ only);
 *   (d) thread fallback: a helper thread (on CPU 0 with the consumer)
 *     sleeps in FUTEX_WAIT on the word and writes 1 to an eventfd when
 *     it moved; the consumer reads the eventfd as in (b); the helper's
 *     CPU and system calls count as the consumer's.
 * An event is what the consumer receives: a record (ring, (a)), an
 * eventfd read's count ((b), (d)), a completion ((c)); the watched
 * object without a ring, an eventfd and FUTEX_WAIT coalesce the wakes
 * that come before the consumer's turn, the ring gives one record per
 * wake.  Per run: the consumer's CPU per event outside the turns' work
 * (the takes timed by the thread's CPU clock, the clock's own cost
 * measured in each turn and taken off: consumer_loop()), its system
 * calls per event (counted here: every epoll_wait, read and
 * io_uring_enter of the loop, and the helper's FUTEX_WAIT and write),
 * the waker's CPU per event and per wake, events per turn, events
 * delivered and wakes offered per second, the work's CPU per turn.
 *
 * The same stream with a consumer that does nothing but take reports
 * only: faster than the waker, it empties the ring and sleeps every
 * few records, so events never come faster than its turn.
 *
 * 100 us timer stream: a periodic 100 us timer, the consumer as above,
 * its turn of 150 us of work taking the one or two expirations that
 * came during it: a pollfs timer with a ring; (a) the same timer read
 * with epoll + read(2); (c) a timerfd read by one
 * IORING_OP_READ_MULTISHOT with a provided buffer ring, the loop
 * waiting for up to 16 completions or 1 ms when it reaped none (6.7+
 * only, as bench-peers); and a timerfd read with epoll + read(2),
 * which only reports.  Per run: the consumer's CPU per event and per
 * expiration outside the work, system calls per event (a record, a
 * read, a completion), expirations per event.  The same stream with a
 * consumer that does nothing but take reports only: it sleeps for
 * every record, a sleeping consumer's cost.
 *
 * sleeping consumer: the wake-up harness of bench-futex (waiter and
 * waker on CPU 0, the waker fires only once the waiter sleeps in
 * epoll_wait): the watched object with a ring, the waiter taking the
 * record from the ring, against (a), the waiter reading it; latency
 * from the store to the return of epoll_wait, p50 and p99, the
 * waiter's and the waker's CPU.  And a periodic 100 us timer the
 * consumer sleeps on in epoll_wait: how late after the latest expiry
 * it counted the consumer has its records, taken from the ring or
 * read, p50 and p99.
 *
 * Goals, ratios of the ring to (a) and (c): of the busy futex stream
 * with turns, system calls per event at most 0.01 (against one per
 * event), consumer CPU per event at most 0.50 of (a) and of (c), waker
 * CPU per event at most 1.10 of (a); of the timer stream with turns,
 * consumer CPU per expiration at most 0.50 of (a) and of (c); latency
 * p50 and p99 with a sleeping consumer at most 1.05 of (a).  The
 * consumer's CPU of a goal is its takes' and what its method put in
 * its work (interrupts, task work): the work's CPU per turn beyond
 * that of the work alone, timed in the same repetition.  The rest reports.  Runs take
 * turns, each repetition starting with the next method.
 */
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
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
#define F2_SIZE_U32		0x02
#define F2_PRIVATE		128
#define BGID			9
#define NBUFS			16
#define BUFSZ			64

#define ENTRIES			4096	/* the streams' rings */
#define BATCH			256	/* records taken at a time */

static bool have_futex_wait, have_multishot;

/* ---- a ring, through the raw ioctl and mmap ---- */

struct ring {
	int fd;
	struct pollfs_ring_params p;
	void *map;
	uint32_t *head;
	const uint32_t *tail, *flags;
	const unsigned char *records;
};

static void ring_setup(struct ring *r, int fd, uint32_t entries)
{
	unsigned char *map;

	memset(&r->p, 0, sizeof(r->p));
	r->p.entries = entries;
	if (ioctl(fd, POLLFS_IOC_RING, &r->p))
		bench_die("POLLFS_IOC_RING (a module of interface 1.2?)");
	map = mmap(NULL, r->p.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, 0);
	if (map == MAP_FAILED)
		bench_die("mmap the ring");
	r->fd = fd;
	r->map = map;
	r->head = (uint32_t *)(map + r->p.off_head);
	r->tail = (const uint32_t *)(map + r->p.off_tail);
	r->flags = (const uint32_t *)(map + r->p.off_flags);
	r->records = map + r->p.off_records;
}

static void ring_close(struct ring *r)
{
	munmap(r->map, r->p.mmap_size);
	close(r->fd);
}

/* The lone consumer's take: no system call. */
static uint32_t ring_take(struct ring *r, void *buf, uint32_t n)
{
	uint32_t head = *r->head, mask = r->p.entries - 1;
	uint32_t ready = __atomic_load_n(r->tail, __ATOMIC_ACQUIRE) - head;
	size_t size = r->p.record_size;

	if (ready > r->p.entries)
		bench_die("the ring's head is not a ring's");
	if (ready > n)
		ready = n;
	for (uint32_t k = 0; k < ready; k++)
		memcpy((char *)buf + k * size,
		       r->records + ((head + k) & mask) * size, size);
	if (ready)
		__atomic_store_n(r->head, head + ready, __ATOMIC_RELEASE);
	return ready;
}

static bool ring_overflow(const struct ring *r)
{
	return __atomic_load_n(r->flags, __ATOMIC_ACQUIRE) &
	       POLLFS_RING_OVERFLOW;
}

/* ---- counted system calls of the consumer ---- */

static __thread uint64_t calls;

static int counted_epoll_wait(int ep, int timeout_ms)
{
	struct epoll_event ev;

	calls++;
	return epoll_wait(ep, &ev, 1, timeout_ms);
}

static ssize_t counted_read(int fd, void *buf, size_t len)
{
	calls++;
	return read(fd, buf, len);
}

static int epoll_of(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		bench_die("epoll set-up");
	return ep;
}

/* ---- io_uring, 6.7+ ---- */

static void uring_init(struct io_uring *u)
{
	int r = io_uring_queue_init(16, u, 0);

	if (r) {
		errno = -r;
		bench_die("io_uring_queue_init");
	}
}

static void probe_ops(void)
{
	struct io_uring_probe *probe;
	struct io_uring u;

	uring_init(&u);
	probe = io_uring_get_probe_ring(&u);
	if (probe) {
		have_futex_wait = io_uring_opcode_supported(probe,
							    OP_FUTEX_WAIT);
		have_multishot = io_uring_opcode_supported(probe,
							   OP_READ_MULTISHOT);
		io_uring_free_probe(probe);
	}
	io_uring_queue_exit(&u);
}

static struct io_uring_sqe *uring_sqe(struct io_uring *u)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(u);

	if (!sqe)
		bench_die("io_uring_get_sqe: the submission queue is full");
	return sqe;
}

static void queue_futex_wait(struct io_uring *u, uint32_t *word)
{
	struct io_uring_sqe *sqe = uring_sqe(u);

	/* fd: the futex2 flags; off: the value; addr3: the bitset */
	io_uring_prep_rw(OP_FUTEX_WAIT, sqe, F2_SIZE_U32 | F2_PRIVATE, word, 0,
			 __atomic_load_n(word, __ATOMIC_ACQUIRE));
	sqe->addr3 = 0xffffffffu;
}

static void queue_multishot(struct io_uring *u, int fd)
{
	struct io_uring_sqe *sqe = uring_sqe(u);

	io_uring_prep_rw(OP_READ_MULTISHOT, sqe, fd, NULL, 0, -1);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
}

/* Submits what is queued and waits for @nr completions or @ns. */
static void counted_enter(struct io_uring *u, unsigned int nr, long ns)
{
	struct __kernel_timespec ts = { .tv_nsec = ns };
	struct io_uring_cqe *cqe;
	int r;

	calls++;
	r = io_uring_submit_and_wait_timeout(u, &cqe, nr, &ts, NULL);
	if (r < 0 && r != -ETIME) {
		errno = -r;
		bench_die("io_uring_submit_and_wait_timeout");
	}
}

/* ---- the consumer's turn ---- */

/*
 * The rest of an event loop's turn, the same for every method: CPU
 * only, with no memory traffic and no system call, so that nothing of
 * it depends on how the events are taken.  One step of a 64-bit LCG a
 * time; the empty asm hides the value, so that the compiler can
 * neither fold the loop nor drop it.
 */
#define TURN_NS		150000	/* a turn's work, in the thread's CPU */

static uint64_t turn_iters, turn_sink;

static void turn_work(uint64_t iters)
{
	uint64_t x = turn_sink;

	while (iters--) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	turn_sink = x;
}

static uint64_t turn_work_ns(uint64_t iters)
{
	uint64_t cpu = bench_thread_cpu_ns();

	turn_work(iters);
	return bench_thread_cpu_ns() - cpu;
}

/*
 * Sets turn_iters to TURN_NS of this thread's CPU on this guest: from
 * the median of 9 timings of a batch of at least 2 ms (in which the
 * clock's own cost is lost), the iterations per ns; then from the
 * median of 15 turns timed one by one, corrected once, since a short
 * loop need not run at a long one's rate under emulation.  The work is
 * timed again in every turn of the runs, and reported.
 */
static void turn_calibrate(void)
{
	struct samples ns = {};
	uint64_t batch = 1 << 12;
	int i, round;

	while (turn_work_ns(batch) < 2000000)
		batch *= 2;
	for (i = 0; i < 9; i++)
		bench_samples_add(&ns, turn_work_ns(batch));
	turn_iters = TURN_NS * (batch / bench_samples_quantile(&ns, 0.5));
	for (round = 0; round < 2; round++) {
		bench_samples_clear(&ns);
		for (i = 0; i < 15; i++)
			bench_samples_add(&ns, turn_work_ns(turn_iters));
		if (round == 0)
			turn_iters *= TURN_NS / bench_samples_quantile(&ns, 0.5);
	}
	bench_progress("a turn's work: %llu iterations, %.1f us of CPU "
		       "(median of 15; quartiles %.1f, %.1f)",
		       (unsigned long long)turn_iters,
		       bench_samples_quantile(&ns, 0.5) / 1e3,
		       bench_samples_quantile(&ns, 0.25) / 1e3,
		       bench_samples_quantile(&ns, 0.75) / 1e3);
	bench_samples_free(&ns);
}

/* ---- the busy futex stream ---- */

enum { M_RING, M_READ, M_EVENTFD, M_URING, M_FALLBACK, METHODS };

static const char *const method_name[METHODS] = {
	[M_RING] = "ring", [M_READ] = "epoll+read",
	[M_EVENTFD] = "eventfd", [M_URING] = "io_uring FUTEX_WAIT",
	[M_FALLBACK] = "thread fallback",
};

struct waker {
	uint32_t word;
	int efd;		/* >= 0: write this eventfd instead */
	bool stop;
	uint64_t wakes, cpu, ns;	/* its wakes, its CPU, its run */
};

/* As fast as it can: a store and FUTEX_WAKE (or an eventfd write). */
static void *waker_main(void *arg)
{
	struct waker *w = arg;
	uint64_t one = 1, cpu, t0;

	bench_pin_cpu(1);
	t0 = bench_now_ns();
	cpu = bench_thread_cpu_ns();
	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		if (w->efd >= 0) {
			if (write(w->efd, &one, sizeof(one)) != sizeof(one))
				bench_die("write the eventfd");
		} else {
			__atomic_add_fetch(&w->word, 1, __ATOMIC_RELEASE);
			bench_futex_wake(&w->word, 1);
		}
		w->wakes++;
	}
	w->cpu = bench_thread_cpu_ns() - cpu;
	w->ns = bench_now_ns() - t0;
	return NULL;
}

struct helper {
	uint32_t *word;
	int efd;
	bool stop;
	uint64_t cpu, calls;
};

/* The thread fallback: FUTEX_WAIT, and an eventfd write when it moved. */
static void *helper_main(void *arg)
{
	struct helper *h = arg;
	uint64_t one = 1, cpu;
	uint32_t seen;

	bench_pin_cpu(0);
	cpu = bench_thread_cpu_ns();
	seen = __atomic_load_n(h->word, __ATOMIC_ACQUIRE);
	while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE)) {
		uint32_t now;

		calls++;
		bench_futex_wait(h->word, seen);
		now = __atomic_load_n(h->word, __ATOMIC_ACQUIRE);
		if (now == seen)
			continue;
		seen = now;
		calls++;
		if (write(h->efd, &one, sizeof(one)) != sizeof(one))
			bench_die("write the eventfd");
	}
	h->cpu = bench_thread_cpu_ns() - cpu;
	h->calls = calls;
	return NULL;
}

/* One run of a method: what the consumer takes its events with. */
struct futex_stream {
	int method;
	int fd, ep;
	struct ring r;
	struct io_uring u;
	struct waker w;
	struct helper h;
	pthread_t waker, helper;
	struct pollfs_futex_event recs[BATCH];
};

static void futex_stream_open(struct futex_stream *s, int method)
{
	s->method = method;
	s->fd = s->ep = -1;
	s->w.efd = -1;
	s->h.word = &s->w.word;
	switch (method) {
	case M_RING:
	case M_READ:
		s->fd = bench_pfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
		if (s->fd < 0)
			bench_die("create a futex object");
		if (method == M_RING)
			ring_setup(&s->r, s->fd, ENTRIES);
		if (bench_pfs_futex_watch(s->fd, &s->w.word, s->w.word))
			bench_die("watch the futex word");
		s->ep = epoll_of(s->fd);
		break;
	case M_EVENTFD:
	case M_FALLBACK:
		s->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (s->fd < 0)
			bench_die("eventfd");
		s->ep = epoll_of(s->fd);
		if (method == M_EVENTFD) {
			s->w.efd = s->fd;
			break;
		}
		s->h.efd = s->fd;
		if (pthread_create(&s->helper, NULL, helper_main, &s->h))
			bench_die("pthread_create");
		break;
	case M_URING:
		uring_init(&s->u);
		queue_futex_wait(&s->u, &s->w.word);
		break;
	}
	if (pthread_create(&s->waker, NULL, waker_main, &s->w))
		bench_die("pthread_create");
}

/*
 * Stops the threads and closes.  Returns the helper's CPU in ns, and
 * counts its system calls, both the consumer's: its work is theirs.
 */
static uint64_t futex_stream_close(struct futex_stream *s)
{
	uint64_t helper_ns = 0;

	__atomic_store_n(&s->w.stop, true, __ATOMIC_RELEASE);
	pthread_join(s->waker, NULL);
	if (s->method == M_FALLBACK) {
		__atomic_store_n(&s->h.stop, true, __ATOMIC_RELEASE);
		__atomic_add_fetch(&s->w.word, 1, __ATOMIC_RELEASE);
		bench_futex_wake(&s->w.word, 1);
		pthread_join(s->helper, NULL);
		helper_ns = s->h.cpu;
		calls += s->h.calls;
	}
	if (s->method == M_RING)
		ring_close(&s->r);
	else if (s->fd >= 0)
		close(s->fd);
	if (s->ep >= 0)
		close(s->ep);
	if (s->method == M_URING)
		io_uring_queue_exit(&s->u);
	return helper_ns;
}

/*
 * Every record the ring holds when the consumer looks, with loads and
 * stores: batches of @cap until one comes back short, so that a waker
 * faster than the take cannot keep the consumer in it; then read(2)
 * while the overflow flag says records wait in the object.  @seen, if
 * any, looks at each batch.
 */
static uint64_t ring_take_all(struct ring *r, void *buf, uint32_t cap,
			      void (*seen)(void *arg, const void *recs,
					   uint32_t n),
			      void *arg)
{
	size_t size = r->p.record_size;
	uint64_t events = 0;
	uint32_t n;
	ssize_t got;

	do {
		n = ring_take(r, buf, cap);
		if (n && seen)
			seen(arg, buf, n);
		events += n;
	} while (n == cap);
	while (ring_overflow(r)) {
		got = counted_read(r->fd, buf, cap * size);
		if (got <= 0)
			break;
		n = got / size;
		if (seen)
			seen(arg, buf, n);
		events += n;
	}
	return events;
}

/*
 * A take by the ring: every record there is, and only when there is
 * none a sleep in epoll_wait (1 ms at most), then every record again.
 */
static uint64_t ring_take_or_sleep(struct ring *r, int ep, void *buf,
				   uint32_t cap,
				   void (*seen)(void *arg, const void *recs,
						uint32_t n),
				   void *arg)
{
	uint64_t events = ring_take_all(r, buf, cap, seen, arg);

	if (!events && counted_epoll_wait(ep, 1) > 0)
		events = ring_take_all(r, buf, cap, seen, arg);
	return events;
}

/*
 * A take by (a), a pollfs object read: epoll_wait (1 ms at most), then
 * read(2) of @size-byte records into @buf (@len bytes) until EAGAIN.
 */
static uint64_t epoll_read_all(int ep, int fd, void *buf, size_t len,
			       size_t size,
			       void (*seen)(void *arg, const void *recs,
					    uint32_t n),
			       void *arg)
{
	uint64_t events = 0;
	ssize_t got;

	if (counted_epoll_wait(ep, 1) < 1)
		return 0;
	while ((got = counted_read(fd, buf, len)) > 0) {
		if (seen)
			seen(arg, buf, got / size);
		events += got / size;
	}
	return events;
}

/* Every completion there is, each FUTEX_WAIT queued again. */
static uint64_t uring_take_all(struct futex_stream *s)
{
	struct io_uring_cqe *cqe;
	uint64_t events = 0;

	while (io_uring_peek_cqe(&s->u, &cqe) == 0) {
		/* woken (0) or the word moved on (EAGAIN) */
		if (cqe->res != 0 && cqe->res != -EAGAIN) {
			errno = -cqe->res;
			bench_die("io_uring FUTEX_WAIT");
		}
		io_uring_cqe_seen(&s->u, cqe);
		events++;
		queue_futex_wait(&s->u, &s->w.word);
	}
	return events;
}

/*
 * The consumer's take: everything there is, sleeping (1 ms at most)
 * only when there is nothing.  The ring sleeps in epoll_wait only when
 * it is empty; the others ask the kernel every time, as they must:
 * epoll_wait then read(2) until EAGAIN (a), one eventfd read of the
 * count (b, d), io_uring_enter to submit the FUTEX_WAIT queued again
 * and wait for a completion (c).
 */
static uint64_t futex_stream_take(void *arg)
{
	struct futex_stream *s = arg;
	uint64_t events = 0, count;

	switch (s->method) {
	case M_RING:
		events = ring_take_or_sleep(&s->r, s->ep, s->recs, BATCH,
					    NULL, NULL);
		break;
	case M_READ:
		events = epoll_read_all(s->ep, s->fd, s->recs, sizeof(s->recs),
					sizeof(s->recs[0]), NULL, NULL);
		break;
	case M_EVENTFD:
	case M_FALLBACK:
		if (counted_epoll_wait(s->ep, 1) < 1)
			break;
		if (counted_read(s->fd, &count, sizeof(count)) ==
		    sizeof(count))
			events++;
		break;
	case M_URING:
		events = uring_take_all(s);
		if (!events) {
			counted_enter(&s->u, 1, 1000000);
			events = uring_take_all(s);
		}
		break;
	}
	return events;
}

struct stream_result {
	double cpu;		/* consumer us per event (not the turns' work) */
	double all;		/* with turns: the same, with what the work
				 * gained over the repetition's baseline, per
				 * expiration (add_work_excess()) */
	double cpu_exp;		/* the same per expiration (timer) */
	double calls;		/* consumer system calls per event */
	double waker_cpu;	/* waker us per wake */
	double waker_event;	/* waker us per event */
	double rate;		/* events per second */
	double offered;		/* wakes (expirations) per second */
	double per_event;	/* expirations per event (timer) */
	double per_turn;	/* events per turn */
	double work;		/* consumer us per turn's work */
	double clock;		/* us per turn of a clock read, subtracted */
};

/*
 * The consumer, for @secs: what @take returns is its events.  Without
 * @turns it does nothing but take, and its CPU per event is all its
 * CPU.  With @turns each turn does the calibrated work, then takes; the
 * consumer's CPU per event is that of the takes alone, each timed by
 * the thread's CPU clock.  A read of that clock is a system call (no
 * vDSO for it), and the interval between two reads holds about one:
 * so a third read right after the second times an empty interval, and
 * the sum of those is taken off the takes' (and the works') sum.
 * Returns the events; fills in what the loop alone knows of @out.
 */
static uint64_t consumer_loop(uint64_t (*take)(void *arg), void *arg,
			      double secs, bool turns,
			      struct stream_result *out)
{
	uint64_t events = 0, nturns = 0, cpu, t0, t1, end;
	uint64_t c0, c1, c2, work_ns = 0, take_ns = 0, clock_ns = 0;

	calls = 0;
	t0 = bench_now_ns();
	end = t0 + secs * 1e9;
	cpu = bench_thread_cpu_ns();
	c0 = cpu;
	while (bench_now_ns() < end) {
		if (!turns) {
			events += take(arg);
			continue;
		}
		turn_work(turn_iters);
		c1 = bench_thread_cpu_ns();
		events += take(arg);
		c2 = bench_thread_cpu_ns();
		work_ns += c1 - c0;
		take_ns += c2 - c1;
		c0 = bench_thread_cpu_ns();
		clock_ns += c0 - c2;
		nturns++;
	}
	cpu = bench_thread_cpu_ns() - cpu;
	t1 = bench_now_ns();
	if (turns) {
		out->work = ((double)work_ns - clock_ns) / 1e3 / nturns;
		out->clock = clock_ns / 1e3 / nturns;
	}
	if (!events)
		return 0;
	out->cpu = (turns ? (double)take_ns - clock_ns : cpu) / 1e3 / events;
	out->rate = events / ((t1 - t0) / 1e9);
	out->per_event = 1;
	if (turns)
		out->per_turn = (double)events / nturns;
	return events;
}

static uint64_t take_nothing(void *arg)
{
	(void)arg;
	return 0;
}

/*
 * The turns' work with no events at all, timed as the streams time
 * theirs: the baseline that each repetition measures afresh, since the
 * work's rate moves with the host (its calibration is minutes old).
 */
static double turn_baseline(double secs)
{
	struct stream_result out = {};

	consumer_loop(take_nothing, NULL, secs, true, &out);
	return out.work;
}

/*
 * What a method costs the consumer per expiration (per event for the
 * futex stream, whose events each count one) with what fell in its
 * work: interrupts and task work that land there (a ring-fed periodic
 * timer interrupts at every expiry, a timerfd read or streamed by
 * io_uring once per read), beyond the repetition's @baseline.
 */
static void add_work_excess(struct stream_result *r, double baseline)
{
	r->all = (r->cpu + (r->work - baseline) / r->per_turn) / r->per_event;
}

static struct stream_result futex_stream(int method, double secs, bool turns)
{
	struct futex_stream *s = calloc(1, sizeof(*s));
	struct stream_result out = {};
	uint64_t events;
	double helper_us;

	if (!s)
		bench_die("out of memory");
	futex_stream_open(s, method);
	events = consumer_loop(futex_stream_take, s, secs, turns, &out);
	/* counts the helper's system calls as the consumer's, too */
	helper_us = futex_stream_close(s) / 1e3;
	if (!events)
		bench_die("%s: no event in %.2f s", method_name[method], secs);
	out.cpu += helper_us / events;
	out.calls = (double)calls / events;
	out.waker_cpu = s->w.cpu / 1e3 / (s->w.wakes ? s->w.wakes : 1);
	/* over the waker's own run, a little longer than the consumer's */
	out.offered = s->w.wakes / (s->w.ns / 1e9);
	/* the waker's CPU per second of its run, per event of a second */
	out.waker_event = s->w.cpu / 1e3 / (s->w.ns / 1e9) / out.rate;
	free(s);
	return out;
}

/* ---- the 100 us timer stream ---- */

enum { T_RING, T_READ, T_MULTISHOT, T_TIMERFD, TMETHODS };

static const char *const tmethod_name[TMETHODS] = {
	[T_RING] = "ring", [T_READ] = "epoll+read",
	[T_MULTISHOT] = "timerfd multishot", [T_TIMERFD] = "timerfd epoll+read",
};

/* One run of a method: what the consumer takes the expirations with. */
struct timer_stream {
	int method;
	int fd, ep;
	struct ring r;
	struct io_uring u;
	struct io_uring_buf_ring *br;
	char bufs[NBUFS][BUFSZ];
	uint64_t expirations;
	struct pollfs_timer_event recs[BATCH];
};

static void timer_stream_open(struct timer_stream *s, int method,
			      uint64_t period)
{
	bool pollfs = method == T_RING || method == T_READ;
	int n;

	s->method = method;
	s->ep = -1;
	s->fd = bench_timer_open(pollfs);
	if (method == T_RING)
		ring_setup(&s->r, s->fd, ENTRIES);
	if (method == T_MULTISHOT) {
		struct io_uring_buf_reg reg = { .ring_entries = NBUFS,
						.bgid = BGID };

		uring_init(&s->u);
		s->br = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (s->br == MAP_FAILED)
			bench_die("mmap the buffer ring");
		reg.ring_addr = (uintptr_t)s->br;
		n = io_uring_register_buf_ring(&s->u, &reg, 0);
		if (n) {
			errno = -n;
			bench_die("io_uring_register_buf_ring");
		}
		io_uring_buf_ring_init(s->br);
		for (n = 0; n < NBUFS; n++)
			io_uring_buf_ring_add(s->br, s->bufs[n], BUFSZ, n,
					      io_uring_buf_ring_mask(NBUFS), n);
		io_uring_buf_ring_advance(s->br, NBUFS);
		queue_multishot(&s->u, s->fd);
	} else {
		s->ep = epoll_of(s->fd);
	}
	bench_timer_arm(pollfs, s->fd, bench_now_ns() + period, period);
}

static void timer_stream_close(struct timer_stream *s)
{
	if (s->method == T_RING)
		ring_close(&s->r);
	else
		close(s->fd);
	if (s->ep >= 0)
		close(s->ep);
	if (s->method == T_MULTISHOT) {
		io_uring_queue_exit(&s->u);
		munmap(s->br, 4096);
	}
}

static void timer_records_seen(void *arg, const void *recs, uint32_t n)
{
	const struct pollfs_timer_event *ev = recs;
	struct timer_stream *s = arg;

	for (uint32_t i = 0; i < n; i++)
		s->expirations += ev[i].expirations;
}

/* Every completion there is, the multishot read queued again if it ended. */
static uint64_t multishot_take_all(struct timer_stream *s)
{
	struct io_uring_cqe *cqe;
	uint64_t events = 0, ticks;

	while (io_uring_peek_cqe(&s->u, &cqe) == 0) {
		int res = cqe->res, bid;
		unsigned int flags = cqe->flags;

		io_uring_cqe_seen(&s->u, cqe);
		if (res == sizeof(ticks)) {
			bid = flags >> IORING_CQE_BUFFER_SHIFT;
			memcpy(&ticks, s->bufs[bid], sizeof(ticks));
			events++;
			s->expirations += ticks;
			io_uring_buf_ring_add(s->br, s->bufs[bid], BUFSZ, bid,
					      io_uring_buf_ring_mask(NBUFS), 0);
			io_uring_buf_ring_advance(s->br, 1);
		} else if (res != -ENOBUFS) {
			errno = res < 0 ? -res : EIO;
			bench_die("the timerfd's multishot read");
		}
		if (!(flags & IORING_CQE_F_MORE))
			queue_multishot(&s->u, s->fd);
	}
	return events;
}

/*
 * The consumer's take, as the futex stream's: everything there is,
 * sleeping (1 ms at most) only when there is nothing.  The ring sleeps
 * in epoll_wait only when it is empty; (a) and the timerfd call
 * epoll_wait, then read(2) until EAGAIN; the multishot read's loop
 * enters to wait (for 16 completions or 1 ms, as bench-peers) only
 * when it has reaped none.
 */
static uint64_t timer_stream_take(void *arg)
{
	struct timer_stream *s = arg;
	uint64_t events = 0, ticks;

	switch (s->method) {
	case T_RING:
		events = ring_take_or_sleep(&s->r, s->ep, s->recs, BATCH,
					    timer_records_seen, s);
		break;
	case T_READ:
		events = epoll_read_all(s->ep, s->fd, s->recs, sizeof(s->recs),
					sizeof(s->recs[0]), timer_records_seen,
					s);
		break;
	case T_TIMERFD:
		if (counted_epoll_wait(s->ep, 1) < 1)
			break;
		while (counted_read(s->fd, &ticks, sizeof(ticks)) ==
		       sizeof(ticks)) {
			events++;
			s->expirations += ticks;
		}
		break;
	case T_MULTISHOT:
		events = multishot_take_all(s);
		if (!events) {
			counted_enter(&s->u, 16, 1000000);
			events = multishot_take_all(s);
		}
		break;
	}
	return events;
}

static struct stream_result timer_stream(int method, uint64_t period,
					 double secs, bool turns)
{
	struct timer_stream *s = calloc(1, sizeof(*s));
	struct stream_result out = {};
	uint64_t events;

	if (!s)
		bench_die("out of memory");
	timer_stream_open(s, method, period);
	events = consumer_loop(timer_stream_take, s, secs, turns, &out);
	timer_stream_close(s);
	if (!events)
		bench_die("%s: no event in %.2f s", tmethod_name[method], secs);
	out.calls = (double)calls / events;
	out.offered = 1e9 / period;
	out.per_event = (double)s->expirations / events;
	out.cpu_exp = out.cpu / out.per_event;
	free(s);
	return out;
}

/* ---- rows of the streams ---- */

struct stream_samples {
	struct samples cpu, cpu_exp, all, calls, waker, waker_event, rate;
	struct samples offered;
	struct samples per;
	struct samples per_turn, work, clock;
};

static void stream_add(struct stream_samples *s, const struct stream_result *r)
{
	bench_samples_add(&s->cpu, r->cpu);
	bench_samples_add(&s->cpu_exp, r->cpu_exp);
	bench_samples_add(&s->all, r->all);
	bench_samples_add(&s->calls, r->calls);
	bench_samples_add(&s->waker, r->waker_cpu);
	bench_samples_add(&s->waker_event, r->waker_event);
	bench_samples_add(&s->rate, r->rate);
	bench_samples_add(&s->offered, r->offered);
	bench_samples_add(&s->per, r->per_event);
	bench_samples_add(&s->per_turn, r->per_turn);
	bench_samples_add(&s->work, r->work);
	bench_samples_add(&s->clock, r->clock);
}

static void stream_free(struct stream_samples *s)
{
	bench_samples_free(&s->cpu);
	bench_samples_free(&s->cpu_exp);
	bench_samples_free(&s->all);
	bench_samples_free(&s->calls);
	bench_samples_free(&s->waker);
	bench_samples_free(&s->waker_event);
	bench_samples_free(&s->rate);
	bench_samples_free(&s->offered);
	bench_samples_free(&s->per);
	bench_samples_free(&s->per_turn);
	bench_samples_free(&s->work);
	bench_samples_free(&s->clock);
}

/*
 * With @turns, the stream the goals are about: events arrive while the
 * consumer does its turn's other work, so that the ring has records
 * when it looks.  Without, the consumer does nothing but take: faster
 * than the waker, it empties the ring and sleeps every few records;
 * those rows report.
 */
static void futex_stream_rows(int reps, double secs, bool turns)
{
	struct stream_samples s[METHODS] = {};
	struct samples one = {};
	int methods[METHODS], nm = 0, i, k;
	char stream[64], variant[128];

	if (turns)
		snprintf(stream, sizeof(stream),
			 "busy futex stream with %dus work per turn",
			 TURN_NS / 1000);
	else
		snprintf(stream, sizeof(stream),
			 "busy futex stream with no other work");
	for (k = 0; k < METHODS; k++)
		if (k != M_URING || have_futex_wait)
			methods[nm++] = k;
	for (i = 0; i < reps; i++) {
		double baseline = turns ? turn_baseline(secs) : 0;

		for (k = 0; k < nm; k++) {
			/* A B C .. C B A: every other repetition backwards */
			int m = methods[i % 2 ? nm - 1 - (i / 2 + k) % nm :
						(i / 2 + k) % nm];
			struct stream_result r = futex_stream(m, secs, turns);

			if (turns)
				add_work_excess(&r, baseline);
			stream_add(&s[m], &r);
		}
		bench_samples_add(&one, 1);
		bench_progress("%s: repetition %d/%d (the work alone: %.1f us "
			       "a turn)", stream, i + 1, reps, baseline);
	}
	bench_report("ring", stream, "syscalls per event", "count",
		     "one per event", &s[M_RING].calls, &one,
		     turns ? 0.01 : 0);
	for (k = 1; k < nm; k++) {
		int m = methods[k];
		bool goal_cpu = turns && (m == M_READ || m == M_URING);
		bool goal_waker = turns && m == M_READ;

		snprintf(variant, sizeof(variant), "%s vs %s", stream,
			 method_name[m]);
		bench_report("ring", variant, turns ?
			     "consumer CPU per event outside the work" :
			     "consumer CPU per event", "us",
			     method_name[m], &s[M_RING].cpu, &s[m].cpu, 0);
		bench_report("ring", variant, "waker CPU per event", "us",
			     method_name[m], &s[M_RING].waker_event,
			     &s[m].waker_event, goal_waker ? 1.10 : 0);
		bench_report("ring", variant, "waker CPU per wake", "us",
			     method_name[m], &s[M_RING].waker, &s[m].waker, 0);
		bench_report("ring", variant, "syscalls per event", "count",
			     method_name[m], &s[M_RING].calls, &s[m].calls, 0);
		bench_report("ring", variant, "events per second", "1/s",
			     method_name[m], &s[M_RING].rate, &s[m].rate, 0);
		bench_report("ring", variant, "wakes offered per second", "1/s",
			     method_name[m], &s[M_RING].offered,
			     &s[m].offered, 0);
		if (!turns)
			continue;
		/* with what fell in the work: interrupts, task work */
		bench_report("ring", variant,
			     "consumer CPU per event with the work's excess",
			     "us", method_name[m], &s[M_RING].all, &s[m].all,
			     goal_cpu ? 0.50 : 0);
		bench_report("ring", variant, "events per turn", "count",
			     method_name[m], &s[M_RING].per_turn,
			     &s[m].per_turn, 0);
		/* the same work, unless the method slows it down */
		bench_report("ring", variant, "consumer CPU per turn's work",
			     "us", method_name[m], &s[M_RING].work,
			     &s[m].work, 0);
		/* what was taken off each turn's take (and work) */
		bench_report("ring", variant, "clock read per turn (subtracted)",
			     "us", method_name[m], &s[M_RING].clock,
			     &s[m].clock, 0);
	}
	for (k = 0; k < METHODS; k++)
		stream_free(&s[k]);
	bench_samples_free(&one);
}

/*
 * With @turns, as the futex stream: a 100 us timer expires once or
 * twice during each 150 us turn's work, so the ring has records when
 * the consumer looks; those rows carry the goals.  Without, the
 * consumer has nothing else to do and sleeps for every record (a
 * sleeping consumer's cost, whose goal is its latency): they report.
 */
static void timer_stream_rows(int reps, double secs, bool turns)
{
	struct stream_samples s[TMETHODS] = {};
	int methods[TMETHODS], nm = 0, i, k;
	char stream[64], variant[128];

	if (turns)
		snprintf(stream, sizeof(stream),
			 "100us timer stream with %dus work per turn",
			 TURN_NS / 1000);
	else
		snprintf(stream, sizeof(stream),
			 "100us timer stream with no other work");
	for (k = 0; k < TMETHODS; k++)
		if (k != T_MULTISHOT || have_multishot)
			methods[nm++] = k;
	for (i = 0; i < reps; i++) {
		double baseline = turns ? turn_baseline(secs) : 0;

		for (k = 0; k < nm; k++) {
			int m = methods[i % 2 ? nm - 1 - (i / 2 + k) % nm :
						(i / 2 + k) % nm];
			struct stream_result r = timer_stream(m, 100000, secs,
							      turns);

			if (turns)
				add_work_excess(&r, baseline);
			stream_add(&s[m], &r);
		}
		bench_progress("%s: repetition %d/%d (the work alone: %.1f us "
			       "a turn)", stream, i + 1, reps, baseline);
	}
	for (k = 1; k < nm; k++) {
		int m = methods[k];
		bool goal = turns && (m == T_READ || m == T_MULTISHOT);

		snprintf(variant, sizeof(variant), "%s vs %s", stream,
			 tmethod_name[m]);
		bench_report("ring", variant, turns ?
			     "consumer CPU per event outside the work" :
			     "consumer CPU per event", "us", tmethod_name[m],
			     &s[T_RING].cpu, &s[m].cpu, 0);
		bench_report("ring", variant, turns ?
			     "consumer CPU per expiration outside the work" :
			     "consumer CPU per expiration", "us",
			     tmethod_name[m], &s[T_RING].cpu_exp,
			     &s[m].cpu_exp, 0);
		bench_report("ring", variant, "syscalls per event", "count",
			     tmethod_name[m], &s[T_RING].calls, &s[m].calls, 0);
		bench_report("ring", variant, "expirations per event", "count",
			     tmethod_name[m], &s[T_RING].per, &s[m].per, 0);
		if (!turns)
			continue;
		/* with what fell in the work: interrupts, task work */
		bench_report("ring", variant,
			     "consumer CPU per expiration with the work's excess",
			     "us", tmethod_name[m], &s[T_RING].all, &s[m].all,
			     goal ? 0.50 : 0);
		bench_report("ring", variant, "events per turn", "count",
			     tmethod_name[m], &s[T_RING].per_turn,
			     &s[m].per_turn, 0);
		bench_report("ring", variant, "consumer CPU per turn's work",
			     "us", tmethod_name[m], &s[T_RING].work,
			     &s[m].work, 0);
		bench_report("ring", variant, "clock read per turn (subtracted)",
			     "us", tmethod_name[m], &s[T_RING].clock,
			     &s[m].clock, 0);
	}
	for (k = 0; k < TMETHODS; k++)
		stream_free(&s[k]);
}

/* ---- a sleeping consumer ---- */

struct ring_futex {
	struct bench_futex f;	/* first: bench_futex_fire's argument */
	struct ring r;
};

static void ring_futex_consume(void *arg)
{
	struct ring_futex *rf = arg;
	struct pollfs_futex_event ev;

	if (ring_take(&rf->r, &ev, 1) != 1 ||
	    ev.addr != (uintptr_t)&rf->f.word)
		bench_die("no record in the ring after the wake-up");
}

static void futex_latency_rows(int reps, int n)
{
	struct samples p50[2] = {}, p99[2] = {}, wcpu[2] = {}, kcpu[2] = {};
	struct ring_futex rf = {};
	struct bench_futex plain = {};
	struct wake_result res = {};
	struct wake_ops ops[2];
	int i, k, side;

	rf.f.fd = bench_pfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	plain.fd = bench_pfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	if (rf.f.fd < 0 || plain.fd < 0)
		bench_die("create the futex objects");
	ring_setup(&rf.r, rf.f.fd, 64);
	if (bench_pfs_futex_watch(rf.f.fd, &rf.f.word, rf.f.word) ||
	    bench_pfs_futex_watch(plain.fd, &plain.word, plain.word))
		bench_die("watch the futex words");
	ops[0] = (struct wake_ops){
		.fd = rf.f.fd, .fire = bench_futex_fire,
		.consume = ring_futex_consume, .arg = &rf,
	};
	ops[1] = (struct wake_ops){
		.fd = plain.fd, .fire = bench_futex_fire,
		.consume = bench_futex_consume, .arg = &plain,
	};
	for (i = 0; i < reps; i++) {
		for (k = 0; k < 2; k++) {
			side = (i + k) % 2;
			bench_wake_run(&ops[side], n, &res);
			bench_samples_add(&p50[side],
				bench_samples_quantile(&res.lat, 0.5) / 1e3);
			bench_samples_add(&p99[side],
				bench_samples_quantile(&res.lat, 0.99) / 1e3);
			bench_samples_add(&wcpu[side], res.waiter_cpu / 1e3);
			bench_samples_add(&kcpu[side], res.waker_cpu / 1e3);
		}
		bench_progress("sleeping futex consumer: repetition %d/%d",
			       i + 1, reps);
	}
	bench_report("ring", "futex sleeping consumer vs epoll+read",
		     "latency p50", "us", "epoll+read", &p50[0], &p50[1], 1.05);
	bench_report("ring", "futex sleeping consumer vs epoll+read",
		     "latency p99", "us", "epoll+read", &p99[0], &p99[1], 1.05);
	bench_report("ring", "futex sleeping consumer vs epoll+read",
		     "waiter CPU per wake-up", "us", "epoll+read", &wcpu[0],
		     &wcpu[1], 0);
	bench_report("ring", "futex sleeping consumer vs epoll+read",
		     "waker CPU per wake-up", "us", "epoll+read", &kcpu[0],
		     &kcpu[1], 0);
	for (k = 0; k < 2; k++) {
		bench_samples_free(&p50[k]);
		bench_samples_free(&p99[k]);
		bench_samples_free(&wcpu[k]);
		bench_samples_free(&kcpu[k]);
	}
	bench_samples_free(&res.lat);
	ring_close(&rf.r);
	close(plain.fd);
}

/*
 * A periodic timer with a ring the consumer sleeps on in epoll_wait:
 * how late after the latest expiry it counted the consumer has its
 * records, as bench_timer_run() measures a read.
 */
static struct timer_run ring_timer_run(uint64_t period, int expiries)
{
	struct pollfs_timer_event recs[64];
	static struct samples late;
	uint64_t start, t, cpu, total = 0;
	struct ring r;
	int fd, ep, wakes = 0;

	fd = bench_timer_open(true);
	ring_setup(&r, fd, 64);
	ep = epoll_of(fd);
	bench_samples_clear(&late);
	start = bench_now_ns() + 2 * period;
	bench_timer_arm(true, fd, start, period);
	cpu = bench_thread_cpu_ns();
	while (total < (uint64_t)expiries) {
		uint32_t n;

		if (counted_epoll_wait(ep, 5000) != 1)
			bench_die("the timer did not fire for 5 s");
		n = ring_take(&r, recs, 64);
		if (!n && ring_overflow(&r)) {
			ssize_t got = counted_read(fd, recs, sizeof(recs));

			n = got > 0 ? got / sizeof(recs[0]) : 0;
		}
		if (!n)
			continue;
		for (uint32_t i = 0; i < n; i++)
			total += recs[i].expirations;
		t = bench_now_ns();
		wakes++;
		bench_samples_add(&late, (double)(int64_t)(t - (start +
				  (total - 1) * period)) / 1e3);
	}
	cpu = bench_thread_cpu_ns() - cpu;
	close(ep);
	ring_close(&r);
	return bench_timer_run_summary(&late, cpu, total, wakes);
}

static void timer_latency_rows(int reps, int expiries)
{
	struct samples p50[2] = {}, p99[2] = {}, cpu[2] = {}, per[2] = {};
	struct timer_run t;
	int i, k, side;

	for (i = 0; i < reps; i++) {
		for (k = 0; k < 2; k++) {
			side = (i + k) % 2;
			t = side ? bench_timer_run(true, 100000, expiries) :
				   ring_timer_run(100000, expiries);
			bench_samples_add(&p50[side], t.p50);
			bench_samples_add(&p99[side], t.p99);
			bench_samples_add(&cpu[side], t.cpu);
			bench_samples_add(&per[side], t.per_wake);
		}
		bench_progress("sleeping timer consumer: repetition %d/%d",
			       i + 1, reps);
	}
	bench_report("ring", "100us timer sleeping consumer vs epoll+read",
		     "lateness p50", "us", "epoll+read", &p50[0], &p50[1], 1.05);
	bench_report("ring", "100us timer sleeping consumer vs epoll+read",
		     "lateness p99", "us", "epoll+read", &p99[0], &p99[1], 1.05);
	bench_report("ring", "100us timer sleeping consumer vs epoll+read",
		     "CPU per wake-up", "us", "epoll+read", &cpu[0], &cpu[1],
		     0);
	bench_report("ring", "100us timer sleeping consumer vs epoll+read",
		     "expirations per wake-up", "count", "epoll+read", &per[0],
		     &per[1], 0);
	for (k = 0; k < 2; k++) {
		bench_samples_free(&p50[k]);
		bench_samples_free(&p99[k]);
		bench_samples_free(&cpu[k]);
		bench_samples_free(&per[k]);
	}
}

int main(int argc, char **argv)
{
	bench_init(argc, argv, "ring");
	probe_ops();
	if (!have_futex_wait || !have_multishot)
		bench_progress("no IORING_OP_FUTEX_WAIT or READ_MULTISHOT "
			       "(6.7+): no io_uring rows");
	bench_pin_cpu(0);
	turn_calibrate();
	if (bench_quick) {
		futex_stream_rows(3, 0.15, true);
		futex_stream_rows(3, 0.15, false);
		timer_stream_rows(3, 0.15, true);
		timer_stream_rows(3, 0.15, false);
		futex_latency_rows(4, 30);
		timer_latency_rows(4, 300);
	} else {
		futex_stream_rows(16, 0.3, true);
		futex_stream_rows(8, 0.3, false);
		timer_stream_rows(16, 0.3, true);
		timer_stream_rows(8, 0.3, false);
		futex_latency_rows(48, 100);
		timer_latency_rows(32, 800);
	}
	return 0;
}
