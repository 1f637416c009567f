// SPDX-License-Identifier: MIT
/*
 * Consumers sharing a ring (contract 1.2): each takes record i by
 * copying it and moving head from i to i + 1 with a compare-and-swap,
 * and read(2) takes records that way too, so no record is lost,
 * repeated or torn.  A waker thread bumps the words of a watched set of
 * four and wakes each after its store, 20,000 times; every record is
 * told apart by its value, which carries the word's index (in the top
 * byte) and the wake's sequence number (below), so that a record made
 * of two (an address of one, a value of another) shows.  The waker
 * keeps the ring from filling (it waits while it is nearly full), so
 * every wake counts the object and makes one record.  Checked:
 *  - every wake counted the object (FUTEX_WAKE returned 1);
 *  - the sequence numbers taken, by all consumers together, are 1 to
 *    20,000, each exactly once; each record's address, value and flags
 *    belong together;
 *  - each consumer took its records in order;
 *  - the overflow flag never came up.
 * Consumers: two threads by compare-and-swap and one by read(2); then a
 * forked child and a thread of the parent by compare-and-swap, and a
 * thread by read(2), on words in MAP_SHARED memory.
 */
#include "lib/futex.h"
#include "lib/ring.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

PT_BUDGET(120);

#define NWORDS		4
#define WAKES		20000
#define ENTRIES		64
#define SEQ_MASK	0x00ffffffu

struct shared {
	uint32_t words[NWORDS];
	_Atomic unsigned char seen[WAKES + 1];
	atomic_long taken;	/* records taken, all consumers */
	atomic_long counted;	/* wakes that counted the object */
	atomic_int done;
};

static struct shared *sh;
static struct rg_ring ring;
static uint32_t wflags;

static void *waker(void *arg)
{
	(void)arg;
	for (uint32_t i = 1; i <= WAKES; i++) {
		uint32_t j = i % NWORDS;
		long r;

		/* room for the record: nothing waits in the object */
		while (rg_ready(&ring) >= ENTRIES - 2)
			pt_sleep_ns(US(50));
		__atomic_store_n(&sh->words[j], j << 24 | i, __ATOMIC_SEQ_CST);
		r = fx_wake(&sh->words[j], INT_MAX, wflags);
		if (r != 1)
			FAIL("wake %u: FUTEX_WAKE returned %ld, the object "
			     "not a waiter", i, r);
		atomic_fetch_add(&sh->counted, 1);
	}
	atomic_store(&sh->done, 1);
	return NULL;
}

/* One record: whole, never seen before, after the consumer's last. */
static void took(const struct pollfs_futex_event *ev, uint32_t *last)
{
	uint32_t j = ev->val >> 24, seq = ev->val & SEQ_MASK;

	if (j >= NWORDS || ev->addr != (uintptr_t)&sh->words[j] ||
	    ev->flags != (wflags | FX_WATCH) || seq < 1 || seq > WAKES ||
	    seq % NWORDS != j)
		FAIL("torn record {addr %#llx, val %#x, flags %#x}",
		     (unsigned long long)ev->addr, ev->val, ev->flags);
	if (atomic_fetch_add(&sh->seen[seq], 1))
		FAIL("wake %u's record taken twice", seq);
	if (seq <= *last)
		FAIL("a consumer took wake %u's record after %u's", seq,
		     *last);
	*last = seq;
	atomic_fetch_add(&sh->taken, 1);
}

static bool all_taken(void)
{
	return atomic_load(&sh->done) &&
	       atomic_load(&sh->taken) == atomic_load(&sh->counted);
}

static void cas_consumer(long *mine)
{
	struct pollfs_futex_event ev;
	uint32_t last = 0;
	int64_t idle = 0;

	while (!all_taken()) {
		int r = rg_take_cas(&ring, &ev);

		if (r < 0)
			FAIL("head %u tail %u: not a ring's", rg_head(&ring),
			     rg_tail(&ring));
		if (r) {
			took(&ev, &last);
			(*mine)++;
			idle = 0;
			continue;
		}
		if (!idle)
			idle = pt_mono();
		else if (pt_mono() - idle > MS(PT_WAIT_MS))
			FAIL("nothing to take for %d ms, %ld of %ld taken",
			     PT_WAIT_MS, atomic_load(&sh->taken),
			     atomic_load(&sh->counted));
		sched_yield();
	}
}

static void *cas_thread(void *arg)
{
	cas_consumer(arg);
	return NULL;
}

static void *read_thread(void *arg)
{
	struct pollfs_futex_event ev[3];
	long *mine = arg;
	uint32_t last = 0;

	while (!all_taken()) {
		ssize_t r;

		if (!pt_poll_in(ring.fd, 5))
			continue;
		r = pt_read_nb(ring.fd, ev, sizeof(ev));
		if (r < 0 && errno == EAGAIN)
			continue;
		if (r <= 0 || r % FX_REC)
			FAIL("read: %zd, errno %d (%s)", r, errno,
			     strerror(errno));
		for (ssize_t k = 0; k < r / FX_REC; k++)
			took(&ev[k], &last);
		*mine += r / FX_REC;
	}
	return NULL;
}

static void setup(void)
{
	struct pollfs_futex_event set[NWORDS];
	int fd = fx_new(POLLFS_NONBLOCK);

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	rg_setup(&ring, fd, ENTRIES, RG_FUTEX_REC);
	for (uint32_t j = 0; j < NWORDS; j++) {
		sh->words[j] = j << 24;
		set[j] = fx_ev(&sh->words[j], j << 24, wflags | FX_WATCH);
	}
	fx_armv(fd, set, NWORDS);
}

static void verify(void)
{
	CHECK_EQ(atomic_load(&sh->counted), WAKES);
	CHECK_EQ(atomic_load(&sh->taken), WAKES);
	for (uint32_t i = 1; i <= WAKES; i++)
		if (atomic_load(&sh->seen[i]) != 1)
			FAIL("wake %u's record taken %u times", i,
			     atomic_load(&sh->seen[i]));
	CHECK(!rg_overflow(&ring));
	rg_expect_empty(&ring);
	pt_expect_empty(ring.fd);
}

TEST(threads_and_read)
{
	pthread_t w, c[2], rd;
	long n[3] = { 0 };

	wflags = FX_PRIVATE;
	setup();
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&c[i], NULL, cas_thread, &n[i]), 0);
	CHECK_EQ(pthread_create(&rd, NULL, read_thread, &n[2]), 0);
	CHECK_EQ(pthread_create(&w, NULL, waker, NULL), 0);
	CHECK_EQ(pthread_join(w, NULL), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_join(c[i], NULL), 0);
	CHECK_EQ(pthread_join(rd, NULL), 0);
	pt_diag("taken: %ld and %ld by compare-and-swap, %ld by read(2)",
		n[0], n[1], n[2]);
	verify();
}

TEST(a_child_process_too)
{
	pthread_t w, c, rd;
	long n[2] = { 0 }, in_child = 0;
	int status;
	pid_t pid;

	wflags = FX_SHARED;
	setup();
	pid = fx_fork();
	if (pid == 0) {
		cas_consumer(&in_child);
		pt_diag("taken by the child: %ld", in_child);
		_exit(PT_PASS);
	}
	CHECK_EQ(pthread_create(&c, NULL, cas_thread, &n[0]), 0);
	CHECK_EQ(pthread_create(&rd, NULL, read_thread, &n[1]), 0);
	CHECK_EQ(pthread_create(&w, NULL, waker, NULL), 0);
	CHECK_EQ(pthread_join(w, NULL), 0);
	CHECK_EQ(pthread_join(c, NULL), 0);
	CHECK_EQ(pthread_join(rd, NULL), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == PT_PASS);
	pt_diag("taken in the parent: %ld by compare-and-swap, %ld by read(2)",
		n[0], n[1]);
	verify();
}

int main(void)
{
	return pt_run_tests();
}
