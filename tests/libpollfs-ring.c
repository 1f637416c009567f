// SPDX-License-Identifier: MIT
/*
 * libpollfs 1.2: the record ring's functions (pollfs_ring(3)).
 *  - pollfs_ring_setup() sets up and maps a ring, fills in its layout
 *    (40-byte records for a timer, 16 for a futex object), and passes
 *    the kernel's refusals on (EBUSY, EINVAL, EOPNOTSUPP); unmap once;
 *  - pollfs_ring_take() takes the records in order, as many as asked,
 *    and 0 when there is none; pollfs_ring_ready() and
 *    pollfs_ring_overflow() say what there is;
 *  - pollfs_ring_take_shared() from two threads while a third wakes:
 *    every record once;
 *  - pollfs_ring_read(): 0 while nothing waits outside the ring; the
 *    ring's records then the object's once the ring overflowed;
 *  - pollfs_ring_wait(): at once when there are records, ETIMEDOUT
 *    after its timeout when none come, wakes up for a record another
 *    thread causes, reads what overflowed, streams a periodic timer;
 *  - a head that is not a ring's: the takes fail with EIO,
 *    pollfs_ring_ready() says 0, and pollfs_ring_wait() still delivers
 *    (read(2)); head set to tail, the takes work again;
 *  - pollfs_ring_map() maps the ring again from the layout kept in the
 *    structure, refuses a layout that is not a ring's (EINVAL) and an
 *    object without a ring (ENODEV).
 */
#include "lib/futex.h"
#include "lib/timer.h"

#include <pthread.h>
#include <stdatomic.h>

#include <pollfs.h>

PT_BUDGET(60);

#define WATCHED		(FX_PRIVATE | FX_WATCH)

static void store_and_wake(uint32_t *word, uint32_t val, long counted)
{
	__atomic_store_n(word, val, __ATOMIC_SEQ_CST);
	CHECK_EQ(fx_wake(word, INT_MAX, FX_PRIVATE), counted);
}

/* Until pollfs_ring_ready() says @n. */
static void ready(const struct pollfs_ring *ring, unsigned int n)
{
	int64_t end = pt_mono() + MS(PT_WAIT_MS);

	while (pollfs_ring_ready(ring) < n) {
		if (pt_mono() > end)
			FAIL("%u records in the ring, waited for %u",
			     pollfs_ring_ready(ring), n);
		pt_sleep_ms(1);
	}
}

/* A watched futex object on @word with a ring of @entries. */
static int watched(struct pollfs_ring *ring, uint32_t *word,
		   unsigned int entries)
{
	int fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC));

	CHECK_SYS(pollfs_ring_setup(fd, entries, ring));
	CHECK_EQ(pollfs_futex_watch(fd, word, *word, 0), 0);
	return fd;
}

TEST(setup)
{
	struct pollfs_ring ring, other;
	sigset_t mask;
	int t = CHECK_SYS(pollfs_timer(0)), f = CHECK_SYS(pollfs_futex(0));
	int s;

	CHECK_SYS(pollfs_ring_setup(t, 16, &ring));
	CHECK_EQ(ring.fd, t);
	CHECK_EQ(ring.mask, 15);
	CHECK_EQ(ring.params.entries, 16);
	CHECK_EQ(ring.params.record_size, sizeof(struct pollfs_timer_event));
	CHECK_EQ(ring.params.mmap_size % sysconf(_SC_PAGESIZE), 0);
	CHECK(ring.map && ring.head && ring.tail && ring.flags && ring.records);
	CHECK_EQ(pollfs_ring_ready(&ring), 0);
	CHECK_EQ(pollfs_ring_overflow(&ring), 0);
	CHECK_ERR(pollfs_ring_setup(t, 16, &other), EBUSY);
	CHECK_ERR(pollfs_ring_setup(f, 3, &other), EINVAL);
	CHECK_ERR(pollfs_ring_setup(f, 8192, &other), EINVAL);
	CHECK_SYS(pollfs_ring_setup(f, 2, &other));
	CHECK_EQ(other.params.record_size, sizeof(struct pollfs_futex_event));
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	s = CHECK_SYS(pollfs_signal(&mask, 0));
	CHECK_ERR(pollfs_ring_setup(s, 16, &other), EOPNOTSUPP);
	CHECK_SYS(pollfs_ring_unmap(&ring));
	CHECK(!ring.map);
	CHECK_ERR(pollfs_ring_unmap(&ring), EINVAL);
	close(t);
	close(f);
	close(s);
}

TEST(take_in_order)
{
	struct pollfs_futex_event got[8];
	struct pollfs_ring ring;
	uint32_t word = 0;
	int fd = watched(&ring, &word, 8);

	CHECK_EQ(pollfs_ring_take(&ring, got, 8), 0);
	for (uint32_t v = 1; v <= 5; v++)
		store_and_wake(&word, v, 1);
	ready(&ring, 5);
	CHECK_EQ(pollfs_ring_ready(&ring), 5);
	CHECK_EQ(pollfs_ring_take(&ring, got, 2), 2);
	fx_check_rec(&got[0], &word, 1, WATCHED);
	fx_check_rec(&got[1], &word, 2, WATCHED);
	CHECK_EQ(pollfs_ring_ready(&ring), 3);
	CHECK_EQ(pollfs_ring_take(&ring, got, 8), 3);
	for (uint32_t i = 0; i < 3; i++)
		fx_check_rec(&got[i], &word, 3 + i, WATCHED);
	CHECK_EQ(pollfs_ring_take(&ring, got, 8), 0);
	/* across the end of the ring, many times */
	for (uint32_t v = 6; v < 100; v += 3) {
		for (uint32_t k = 0; k < 3; k++)
			store_and_wake(&word, v + k, 1);
		ready(&ring, 3);
		CHECK_EQ(pollfs_ring_take_shared(&ring, got, 8), 3);
		for (uint32_t k = 0; k < 3; k++)
			fx_check_rec(&got[k], &word, v + k, WATCHED);
	}
	CHECK_SYS(pollfs_ring_unmap(&ring));
	close(fd);
}

#define SHARED_WAKES	5000

static struct pollfs_ring shared_ring;
static uint32_t shared_word;
static unsigned char shared_seen[SHARED_WAKES + 1];
static atomic_long shared_taken;
static atomic_int shared_done;

static void *shared_waker(void *arg)
{
	(void)arg;
	for (uint32_t v = 1; v <= SHARED_WAKES; v++) {
		/* never full: every wake makes a record */
		while (pollfs_ring_ready(&shared_ring) >=
		       shared_ring.params.entries - 2)
			pt_sleep_ns(US(50));
		store_and_wake(&shared_word, v, 1);
	}
	atomic_store(&shared_done, 1);
	return NULL;
}

static void *shared_taker(void *arg)
{
	struct pollfs_futex_event got[4];
	uint32_t last = 0;

	(void)arg;
	while (atomic_load(&shared_taken) < SHARED_WAKES) {
		ssize_t n = pollfs_ring_take_shared(&shared_ring, got, 4);

		CHECK(n >= 0);
		for (ssize_t k = 0; k < n; k++) {
			fx_check_rec(&got[k], &shared_word, got[k].val,
				     WATCHED);
			if (got[k].val < 1 || got[k].val > SHARED_WAKES ||
			    got[k].val <= last ||
			    __atomic_fetch_add(&shared_seen[got[k].val], 1,
					       __ATOMIC_RELAXED))
				FAIL("record %u after %u, or twice",
				     got[k].val, last);
			last = got[k].val;
		}
		atomic_fetch_add(&shared_taken, n);
		if (!n)
			sched_yield();
	}
	return NULL;
}

TEST(take_shared_two_threads)
{
	pthread_t w, t[2];
	int fd = watched(&shared_ring, &shared_word, 64);

	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, shared_taker, NULL), 0);
	CHECK_EQ(pthread_create(&w, NULL, shared_waker, NULL), 0);
	CHECK_EQ(pthread_join(w, NULL), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_join(t[i], NULL), 0);
	CHECK_EQ(atomic_load(&shared_taken), SHARED_WAKES);
	for (uint32_t v = 1; v <= SHARED_WAKES; v++)
		CHECK_EQ(shared_seen[v], 1);
	CHECK_EQ(pollfs_ring_overflow(&shared_ring), 0);
	CHECK_SYS(pollfs_ring_unmap(&shared_ring));
	close(fd);
}

TEST(read_what_overflowed)
{
	struct pollfs_futex_event got[8];
	struct pollfs_ring ring;
	uint32_t word = 0;
	int fd = watched(&ring, &word, 2);

	CHECK_EQ(pollfs_ring_read(&ring, got, 8), 0);
	CHECK_ERR(pollfs_ring_read(&ring, got, 0), EINVAL);
	store_and_wake(&word, 1, 1);
	store_and_wake(&word, 2, 1);
	ready(&ring, 2);
	/* full, not overflowed: nothing for read */
	CHECK_EQ(pollfs_ring_read(&ring, got, 8), 0);
	store_and_wake(&word, 3, 1);
	for (int64_t end = pt_mono() + MS(PT_WAIT_MS);
	     !pollfs_ring_overflow(&ring);) {
		CHECK(pt_mono() < end);
		pt_sleep_ms(1);
	}
	store_and_wake(&word, 4, 0);
	CHECK_EQ(pollfs_ring_read(&ring, got, 8), 3);
	fx_check_rec(&got[0], &word, 1, WATCHED);
	fx_check_rec(&got[1], &word, 2, WATCHED);
	fx_check_rec(&got[2], &word, 4, WATCHED);
	CHECK_EQ(pollfs_ring_overflow(&ring), 0);
	CHECK_EQ(pollfs_ring_read(&ring, got, 8), 0);
	CHECK_SYS(pollfs_ring_unmap(&ring));
	close(fd);
}

static uint32_t later_word;

static void *wake_later(void *arg)
{
	(void)arg;
	pt_sleep_ms(50);
	store_and_wake(&later_word, 1, 1);
	return NULL;
}

TEST(wait)
{
	struct pollfs_futex_event got[8];
	struct pollfs_ring ring;
	uint32_t word = 0;
	int fd = watched(&ring, &word, 2);
	int64_t t0;
	pthread_t th;
	int fd2;

	CHECK_ERR(pollfs_ring_wait(&ring, got, 0, 0), EINVAL);
	CHECK_ERR(pollfs_ring_wait(&ring, got, 8, 0), ETIMEDOUT);
	t0 = pt_mono();
	CHECK_ERR(pollfs_ring_wait(&ring, got, 8, 50), ETIMEDOUT);
	CHECK(pt_mono() - t0 >= MS(50));
	/* records there: at once */
	store_and_wake(&word, 1, 1);
	CHECK_EQ(pollfs_ring_wait(&ring, got, 8, -1), 1);
	fx_check_rec(&got[0], &word, 1, WATCHED);
	/* overflowed: the ring's, then the object's, by read(2) */
	store_and_wake(&word, 2, 1);
	store_and_wake(&word, 3, 1);
	store_and_wake(&word, 4, 1);
	ready(&ring, 2);
	for (int64_t end = pt_mono() + MS(PT_WAIT_MS);
	     !pollfs_ring_overflow(&ring);) {
		CHECK(pt_mono() < end);
		pt_sleep_ms(1);
	}
	CHECK_EQ(pollfs_ring_wait(&ring, got, 1, -1), 1);
	fx_check_rec(&got[0], &word, 2, WATCHED);
	CHECK_EQ(pollfs_ring_wait(&ring, got, 8, -1), 1);
	fx_check_rec(&got[0], &word, 3, WATCHED);
	CHECK_EQ(pollfs_ring_wait(&ring, got, 8, -1), 1);
	fx_check_rec(&got[0], &word, 4, WATCHED);
	CHECK_EQ(pollfs_ring_overflow(&ring), 0);
	CHECK_SYS(pollfs_ring_unmap(&ring));
	close(fd);

	/* asleep, woken by another thread's FUTEX_WAKE */
	fd2 = watched(&ring, &later_word, 4);
	CHECK_EQ(pthread_create(&th, NULL, wake_later, NULL), 0);
	t0 = pt_mono();
	CHECK_EQ(pollfs_ring_wait(&ring, got, 8, PT_WAIT_MS), 1);
	CHECK(pt_mono() - t0 < MS(PT_WAIT_MS) / 2);
	fx_check_rec(&got[0], &later_word, 1, WATCHED);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_SYS(pollfs_ring_unmap(&ring));
	close(fd2);
}

TEST(wait_streams_a_timer)
{
	struct pollfs_timer_event got[16];
	struct pollfs_ring ring;
	struct itimerspec its = {
		.it_value = { 0, 2 * NSEC_PER_MSEC },
		.it_interval = { 0, 2 * NSEC_PER_MSEC },
	};
	static const struct itimerspec off;
	int fd = CHECK_SYS(pollfs_timer(0));
	uint64_t total = 0;

	CHECK_SYS(pollfs_ring_setup(fd, 16, &ring));
	CHECK_SYS(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &its));
	while (total < 50) {
		ssize_t n = pollfs_ring_wait(&ring, got, 16, PT_WAIT_MS);

		CHECK(n >= 1);
		for (ssize_t i = 0; i < n; i++) {
			CHECK(got[i].expirations >= 1);
			CHECK_EQ(pt_ts_ns(&got[i].interval), MS(2));
			total += got[i].expirations;
		}
	}
	CHECK_SYS(pollfs_timer_arm(fd, CLOCK_MONOTONIC, 0, &off));
	CHECK_SYS(pollfs_ring_unmap(&ring));
	close(fd);
}

TEST(head_not_a_ring)
{
	struct pollfs_futex_event got[8];
	struct pollfs_ring ring;
	uint32_t word = 0, tail;
	int fd = watched(&ring, &word, 4);

	tail = __atomic_load_n(ring.tail, __ATOMIC_ACQUIRE);
	__atomic_store_n(ring.head, tail + 1, __ATOMIC_RELEASE);
	CHECK_ERR(pollfs_ring_take(&ring, got, 8), EIO);
	CHECK_ERR(pollfs_ring_take_shared(&ring, got, 8), EIO);
	CHECK_EQ(pollfs_ring_ready(&ring), 0);
	/* the kernel keeps records in the object: wait reads them */
	store_and_wake(&word, 1, 1);
	CHECK_EQ(pollfs_ring_wait(&ring, got, 8, PT_WAIT_MS), 1);
	fx_check_rec(&got[0], &word, 1, WATCHED);
	/* a ring again */
	__atomic_store_n(ring.head, tail, __ATOMIC_RELEASE);
	CHECK_EQ(pollfs_ring_take(&ring, got, 8), 0);
	store_and_wake(&word, 2, 1);
	ready(&ring, 1);
	CHECK_EQ(pollfs_ring_take(&ring, got, 8), 1);
	fx_check_rec(&got[0], &word, 2, WATCHED);
	CHECK_SYS(pollfs_ring_unmap(&ring));
	close(fd);
}

TEST(map_again)
{
	struct pollfs_futex_event got[4];
	struct pollfs_ring ring, again;
	struct pollfs_ring_params bad;
	uint32_t word = 0;
	int fd = watched(&ring, &word, 8);
	int plain = CHECK_SYS(pollfs_futex(0));

	store_and_wake(&word, 1, 1);
	ready(&ring, 1);
	CHECK_SYS(pollfs_ring_unmap(&ring));
	CHECK_SYS(pollfs_ring_map(fd, &ring.params, &again));
	CHECK_EQ(pollfs_ring_ready(&again), 1);
	CHECK_EQ(pollfs_ring_take(&again, got, 4), 1);
	fx_check_rec(&got[0], &word, 1, WATCHED);
	/* a layout that is not a ring's */
	bad = ring.params;
	bad.entries = 3;
	CHECK_ERR(pollfs_ring_map(fd, &bad, &ring), EINVAL);
	bad = ring.params;
	bad.off_records = (uint32_t)bad.mmap_size;
	CHECK_ERR(pollfs_ring_map(fd, &bad, &ring), EINVAL);
	bad = ring.params;
	bad.off_tail = 2;
	CHECK_ERR(pollfs_ring_map(fd, &bad, &ring), EINVAL);
	/* an object without a ring */
	CHECK_ERR(pollfs_ring_map(plain, &ring.params, &ring), ENODEV);
	CHECK_SYS(pollfs_ring_unmap(&again));
	close(plain);
	close(fd);
}

int main(void)
{
	return pt_run_tests();
}
