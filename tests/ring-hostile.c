// SPDX-License-Identifier: MIT
/*
 * Whatever an unprivileged process writes into its ring's mapping, the
 * kernel goes on (contract 1.2): it never writes outside the ring, never
 * crashes, never blocks, and the kernel log stays clean (tests/run
 * checks it after the test).  As uid 65534, with no capability:
 *  - a head ahead of tail (by 1, by many, by half the index space) or
 *    more than entries behind it: the kernel takes the ring for full
 *    (a watched wake's record, a timer's expirations wait in the
 *    object, the flag set, tail and head untouched) and for empty
 *    (no POLLIN but for what waits in the object; read(2) returns the
 *    object's records only, none of the slots, and leaves head where
 *    it was); storing tail in head makes it a ring again;
 *  - garbage in the flags word: records still reach the consumer;
 *  - garbage in the records: read(2) returns whole records, and the
 *    kernel's next record, in a slot it writes, is right;
 *  - garbage in tail: records still reach the consumer, through the
 *    ring or read(2);
 *  - a thread scribbling head, tail, flags and records at random while
 *    a 1 ms timer and a watched futex woken by another thread make
 *    records and the main thread polls and reads both for 2 s: every
 *    call returns at once, with whole records or EAGAIN; then, head set
 *    to tail and the objects drained, both deliver again.
 */
#include "lib/futex.h"
#include "lib/timer.h"
#include "lib/ring.h"

#include <pthread.h>
#include <stdatomic.h>

PT_BUDGET(90);

#define WATCHED		(FX_PRIVATE | FX_WATCH)
#define ENTRIES		8

static void store_and_wake(uint32_t *word, uint32_t val, long counted)
{
	__atomic_store_n(word, val, __ATOMIC_SEQ_CST);
	CHECK_EQ(fx_wake(word, INT_MAX, FX_PRIVATE), counted);
}

/*
 * The next record of @ring's object, wherever the kernel put it: taken
 * from the ring while that is one, else read(2).  Fails after
 * PT_WAIT_MS.
 */
static void receive(struct rg_ring *ring, void *rec)
{
	int64_t end = pt_mono() + MS(PT_WAIT_MS);
	size_t size = ring->p.record_size;

	for (;;) {
		uint32_t ready = rg_ready(ring);
		ssize_t r;

		if (ready && ready <= ring->p.entries &&
		    rg_take(ring, rec, 1) == 1)
			return;
		r = pt_read_nb(ring->fd, rec, size);
		if (r == (ssize_t)size)
			return;
		if (r >= 0 || errno != EAGAIN)
			FAIL("read(fd %d): %zd, errno %d (%s)", ring->fd, r,
			     errno, strerror(errno));
		if (pt_mono() > end)
			FAIL("no record on fd %d within %d ms (head %u tail "
			     "%u flags %#x)", ring->fd, PT_WAIT_MS,
			     rg_head(ring), rg_tail(ring), *ring->flags);
		pt_poll_in(ring->fd, 2);
	}
}

/* A watched word's object with a ring of ENTRIES, armed on 0. */
static int watched(struct rg_ring *ring, uint32_t *word)
{
	int fd = fx_new(0);

	*word = 0;
	rg_setup(ring, fd, ENTRIES, RG_FUTEX_REC);
	fx_arm(fd, word, 0, WATCHED);
	return fd;
}

/* With head at @head, the kernel takes the ring for full and empty. */
static void check_head(struct rg_ring *ring, uint32_t *word, uint32_t head)
{
	struct pollfs_futex_event got[ENTRIES + 2];
	uint32_t tail = rg_tail(ring), val = *word + 1;

	pt_diag("head %u with tail %u", head, tail);
	__atomic_store_n(ring->head, head, __ATOMIC_RELEASE);
	/* empty: the slots are not records, nothing waits */
	pt_expect_empty(ring->fd);
	/* full: the record waits in the object */
	store_and_wake(word, val, 1);
	rg_wait_overflow(ring);
	CHECK_EQ(rg_tail(ring), tail);
	CHECK_EQ(rg_head(ring), head);
	CHECK(pt_poll_in(ring->fd, 0));
	/* the object's record alone; head left alone */
	CHECK_EQ(read(ring->fd, got, sizeof(got)), FX_REC);
	fx_check_rec(&got[0], word, val, WATCHED);
	CHECK_EQ(rg_head(ring), head);
	CHECK_EQ(rg_tail(ring), tail);
	CHECK(!rg_overflow(ring));
	pt_expect_empty(ring->fd);
	/* a ring again, and the object a waiter again */
	__atomic_store_n(ring->head, tail, __ATOMIC_RELEASE);
	store_and_wake(word, val + 1, 1);
	rg_wait_ready(ring, 1);
	CHECK(!rg_overflow(ring));
	CHECK_EQ(rg_take(ring, got, 1), 1);
	fx_check_rec(&got[0], word, val + 1, WATCHED);
}

TEST(head_ahead_of_tail)
{
	static uint32_t word;
	struct rg_ring ring;
	int fd = watched(&ring, &word);

	check_head(&ring, &word, rg_tail(&ring) + 1);
	check_head(&ring, &word, rg_tail(&ring) + ENTRIES);
	check_head(&ring, &word, rg_tail(&ring) + 1000);
	check_head(&ring, &word, rg_tail(&ring) + 0x80000000u);
	check_head(&ring, &word, ~rg_tail(&ring));
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

TEST(head_far_behind_tail)
{
	static uint32_t word;
	struct pollfs_futex_event ev;
	struct rg_ring ring;
	int fd = watched(&ring, &word);

	/* a few real records first, so that the slots hold something */
	for (uint32_t v = 1; v <= 3; v++) {
		store_and_wake(&word, v, 1);
		rg_wait_ready(&ring, 1);
		CHECK_EQ(rg_take(&ring, &ev, 1), 1);
	}
	check_head(&ring, &word, rg_tail(&ring) - ENTRIES - 1);
	check_head(&ring, &word, rg_tail(&ring) - 2 * ENTRIES);
	check_head(&ring, &word, rg_tail(&ring) - 0x7fffffffu);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

TEST(timer_with_a_hostile_head)
{
	struct pollfs_timer_event got[ENTRIES + 2];
	int fd = tmr_new(0);
	struct rg_ring ring;
	uint32_t head, tail;
	ssize_t r;

	rg_setup(&ring, fd, ENTRIES, RG_TIMER_REC);
	tail = rg_tail(&ring);
	head = tail + 5;
	__atomic_store_n(ring.head, head, __ATOMIC_RELEASE);
	tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(2), MS(5));
	rg_wait_overflow(&ring);
	pt_sleep_ms(20);
	/* a blocking read: the object's count is ready, it returns */
	r = read(fd, got, sizeof(got));
	CHECK_EQ(r, TMR_EVENT_SIZE);
	CHECK(got[0].expirations >= 1);
	CHECK_EQ(pt_ts_ns(&got[0].interval), MS(5));
	CHECK_EQ(rg_head(&ring), head);
	CHECK_EQ(rg_tail(&ring), tail);
	/* a ring again: records in it */
	__atomic_store_n(ring.head, tail, __ATOMIC_RELEASE);
	rg_wait_ready(&ring, 1);
	tmr_disarm(fd);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

TEST(garbage_in_flags)
{
	static const uint32_t garbage[] = { 0xffffffffu, 0, 0xfffffffeu,
					    POLLFS_RING_OVERFLOW, 0x80000000u };
	static uint32_t word;
	struct pollfs_futex_event ev;
	struct rg_ring ring;
	int fd = watched(&ring, &word);

	for (uint32_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
		__atomic_store_n(ring.flags, garbage[i], __ATOMIC_RELEASE);
		store_and_wake(&word, i + 1, 1);
		receive(&ring, &ev);
		fx_check_rec(&ev, &word, i + 1, WATCHED);
		pt_expect_empty(fd);
	}
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

TEST(garbage_in_records)
{
	static uint32_t word;
	struct pollfs_futex_event got[ENTRIES + 2];
	struct rg_ring ring;
	int fd = watched(&ring, &word);

	store_and_wake(&word, 1, 1);
	store_and_wake(&word, 2, 1);
	rg_wait_ready(&ring, 2);
	memset(ring.records, 0xa5, (size_t)ENTRIES * RG_FUTEX_REC);
	/* whatever the slots hold, whole records come back */
	CHECK_EQ(read(fd, got, sizeof(got)), 2 * FX_REC);
	CHECK_EQ(rg_head(&ring), rg_tail(&ring));
	pt_expect_empty(fd);
	/* the kernel's next record is its own, whatever was there */
	memset(ring.records, 0x5a, (size_t)ENTRIES * RG_FUTEX_REC);
	store_and_wake(&word, 3, 1);
	rg_wait_ready(&ring, 1);
	CHECK_EQ(rg_take(&ring, got, 1), 1);
	fx_check_rec(&got[0], &word, 3, WATCHED);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

/*
 * Where a record goes once tail is garbage depends on whether the kernel
 * keeps tail for itself: in the ring or in the object.  Either way it
 * must come out (POLLIN, read(2)); once head is set to tail again, the
 * next record is right.
 */
TEST(garbage_in_tail)
{
	static uint32_t word;
	struct pollfs_futex_event ev, got[ENTRIES + 2];
	struct rg_ring ring;
	int fd = watched(&ring, &word);
	uint32_t tail = rg_tail(&ring);
	const uint32_t garbage[] = { tail + 3, tail - 1, tail + ENTRIES + 1,
				     0xdeadbeefu, tail + 0x80000000u };

	for (uint32_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
		long r;
		int reads = 0;

		__atomic_store_n(ring.tail, garbage[i], __ATOMIC_RELEASE);
		__atomic_store_n(&word, i + 1, __ATOMIC_SEQ_CST);
		r = fx_wake(&word, INT_MAX, FX_PRIVATE);
		CHECK_RANGE(r, 0, 1);
		if (!pt_poll_in(fd, PT_WAIT_MS))
			FAIL("tail %#x: no POLLIN after a wake (counted %ld)",
			     garbage[i], r);
		while (pt_read_nb(fd, got, sizeof(got)) > 0)
			CHECK(++reads < 100);
		CHECK_EQ(errno, EAGAIN);
		__atomic_store_n(ring.head, rg_tail(&ring), __ATOMIC_RELEASE);
	}
	__atomic_store_n(&word, 100, __ATOMIC_SEQ_CST);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
	receive(&ring, &ev);
	fx_check_rec(&ev, &word, 100, WATCHED);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

/* ---- a scribbler while records are made ---- */

static atomic_int stop;
static struct rg_ring *scribbled[2];

static uint64_t next_rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void *scribbler(void *arg)
{
	uint64_t x = 0x9e3779b97f4a7c15ull ^ (uintptr_t)arg;

	while (!atomic_load(&stop)) {
		struct rg_ring *r = scribbled[next_rnd(&x) % 2];
		uint32_t v = (uint32_t)next_rnd(&x);
		size_t bytes = (size_t)r->p.entries * r->p.record_size;

		switch (next_rnd(&x) % 8) {
		case 0:
			__atomic_store_n(r->head, v, __ATOMIC_RELAXED);
			break;
		case 1:	/* near tail, either way */
			__atomic_store_n(r->head, rg_tail(r) + v % 32 - 16,
					 __ATOMIC_RELEASE);
			break;
		case 2:
			__atomic_store_n(r->tail, v, __ATOMIC_RELAXED);
			break;
		case 3:
			__atomic_store_n(r->flags, v, __ATOMIC_RELAXED);
			break;
		case 4:
			((volatile unsigned char *)r->records)[v % bytes] =
				(unsigned char)(v >> 24);
			break;
		case 5:
			memset(r->records + v % bytes, (int)(v >> 8),
			       bytes - v % bytes);
			break;
		default:	/* a ring again, for a moment */
			__atomic_store_n(r->head, rg_tail(r), __ATOMIC_RELEASE);
			break;
		}
		if (!(v & 63))
			sched_yield();
	}
	return NULL;
}

static uint32_t scribble_word;

static void *waker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		long r;

		__atomic_add_fetch(&scribble_word, 1, __ATOMIC_SEQ_CST);
		r = fx_wake(&scribble_word, INT_MAX, FX_PRIVATE);
		if (r != 0 && r != 1)
			FAIL("FUTEX_WAKE returned %ld with one waiter", r);
		pt_sleep_ns(US(100));
	}
	return NULL;
}

/* A non-blocking read that must return at once, whole records or EAGAIN. */
static long read_once(int fd, size_t size)
{
	char buf[(ENTRIES + 4) * RG_TIMER_REC];
	int64_t t = pt_mono();
	ssize_t r = pt_read_nb(fd, buf, (ENTRIES + 4) * size);

	if (pt_mono() - t > NSEC_PER_SEC)
		FAIL("a non-blocking read of fd %d took %lld ms", fd,
		     (long long)((pt_mono() - t) / NSEC_PER_MSEC));
	if (r < 0 && errno == EAGAIN)
		return 0;
	if (r <= 0 || r % (ssize_t)size)
		FAIL("read(fd %d): %zd, errno %d (%s)", fd, r, errno,
		     strerror(errno));
	return r / (ssize_t)size;
}

TEST(scribbler_while_records_come)
{
	struct pollfs_futex_event fev;
	struct pollfs_timer_event tev;
	struct rg_ring tring, fring;
	pthread_t sth, wth;
	long reads = 0, records = 0, polls = 0;
	int tfd = tmr_new(0), ffd = fx_new(0);
	int64_t end;

	rg_setup(&tring, tfd, ENTRIES, RG_TIMER_REC);
	rg_setup(&fring, ffd, ENTRIES, RG_FUTEX_REC);
	tmr_arm(tfd, CLOCK_MONOTONIC, 0, MS(1), MS(1));
	fx_arm(ffd, &scribble_word, 0, WATCHED);
	scribbled[0] = &tring;
	scribbled[1] = &fring;
	CHECK_EQ(pthread_create(&sth, NULL, scribbler, NULL), 0);
	CHECK_EQ(pthread_create(&wth, NULL, waker, NULL), 0);
	end = pt_mono() + 2 * NSEC_PER_SEC;
	while (pt_mono() < end) {
		struct pollfd p[2] = { { tfd, POLLIN, 0 }, { ffd, POLLIN, 0 } };
		int64_t t = pt_mono();

		if (poll(p, 2, 100) < 0 && errno != EINTR)
			FAIL("poll: %s", strerror(errno));
		if (pt_mono() - t > NSEC_PER_SEC)
			FAIL("poll with a 100 ms timeout took %lld ms",
			     (long long)((pt_mono() - t) / NSEC_PER_MSEC));
		polls++;
		records += read_once(tfd, RG_TIMER_REC);
		records += read_once(ffd, RG_FUTEX_REC);
		reads += 2;
	}
	atomic_store(&stop, 1);
	CHECK_EQ(pthread_join(sth, NULL), 0);
	CHECK_EQ(pthread_join(wth, NULL), 0);
	pt_diag("%ld polls, %ld reads, %ld records read while scribbled",
		polls, reads, records);

	/* rings again, the objects drained: both deliver */
	__atomic_store_n(tring.head, rg_tail(&tring), __ATOMIC_RELEASE);
	__atomic_store_n(fring.head, rg_tail(&fring), __ATOMIC_RELEASE);
	for (int i = 0; i < 1000 && read_once(tfd, RG_TIMER_REC); i++)
		;
	for (int i = 0; i < 1000 && read_once(ffd, RG_FUTEX_REC); i++)
		;
	receive(&tring, &tev);
	CHECK(tev.expirations >= 1);
	__atomic_add_fetch(&scribble_word, 1, __ATOMIC_SEQ_CST);
	fx_wake(&scribble_word, INT_MAX, FX_PRIVATE);
	receive(&fring, &fev);
	CHECK(fev.addr == (uintptr_t)&scribble_word && fev.flags == WATCHED);
	tmr_disarm(tfd);
	rg_unmap(&tring);
	rg_unmap(&fring);
	CHECK_SYS(close(tfd));
	CHECK_SYS(close(ffd));
}

int main(void)
{
	pt_become_nobody();
	return pt_run_tests();
}
