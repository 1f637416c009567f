// SPDX-License-Identifier: MIT
/*
 * 100,000 wakes of a watched futex word streamed through the object's
 * ring (contract 1.2), from another thread (a private word) and from
 * another process (a word in MAP_SHARED memory, shared wakes): nothing
 * lost or repeated.  The waker stores 1, 2, ... 100,000 in the word,
 * calling FUTEX_WAKE after each store (one waiter, or all), as fast as
 * it can; the consumer takes the records from the ring, sleeps in poll
 * when it is empty, and read(2)s when records wait in the object (the
 * ring full: the watched record waits there and the object is not a
 * waiter until the read arms it again).  Checked:
 *  - the records equal, in number, the FUTEX_WAKEs that counted the
 *    object (each returned 0 or 1: one waiter at most);
 *  - each record is the watched record, with the word's value at its
 *    wake: between 1 and the value stored last, never below the
 *    previous record's;
 *  - the last one has the word's final value;
 *  - afterwards the object is still a waiter, armed on that value: the
 *    next FUTEX_WAKE counts it and adds one record.
 */
#include "lib/futex.h"
#include "lib/ring.h"

#include <pthread.h>
#include <sys/wait.h>

PT_BUDGET(150);

#define WAKES		100000
#define ENTRIES		256
#define BATCH		64

/* What the waker leaves for the consumer, in memory both can see. */
struct shared {
	uint32_t word;
	long counted;		/* FUTEX_WAKEs that counted the object */
	int done;
};

static struct shared *sh;
static uint32_t wflags;

static void wake_all(void)
{
	long counted = 0;

	for (uint32_t i = 1; i <= WAKES; i++) {
		long r;

		__atomic_store_n(&sh->word, i, __ATOMIC_SEQ_CST);
		r = fx_wake(&sh->word, (i & 1) ? 1 : INT_MAX, wflags);
		if (r != 0 && r != 1)
			FAIL("FUTEX_WAKE returned %ld with one waiter", r);
		counted += r;
	}
	__atomic_store_n(&sh->counted, counted, __ATOMIC_SEQ_CST);
	__atomic_store_n(&sh->done, 1, __ATOMIC_SEQ_CST);
}

static void *waker_thread(void *arg)
{
	(void)arg;
	wake_all();
	return NULL;
}

struct consumer {
	long records, polls, reads;
	uint32_t last;
};

static void got(struct consumer *c, const struct pollfs_futex_event *ev)
{
	uint32_t now = __atomic_load_n(&sh->word, __ATOMIC_SEQ_CST);

	fx_check_rec(ev, &sh->word, ev->val, wflags | FX_WATCH);
	if (ev->val < 1 || ev->val > now || ev->val < c->last)
		FAIL("record %ld: val %u, the previous %u, the word now %u",
		     c->records, ev->val, c->last, now);
	c->last = ev->val;
	c->records++;
}

/* Takes records until the waker is done and every counted wake is in. */
static void consume(struct rg_ring *ring, struct consumer *c)
{
	struct pollfs_futex_event buf[BATCH];
	int64_t idle_since = 0;

	for (;;) {
		size_t n = rg_take(ring, buf, BATCH);
		ssize_t r;

		if (!n && rg_overflow(ring)) {
			r = pt_read_nb(ring->fd, buf, sizeof(buf));
			if (r > 0 && r % FX_REC == 0) {
				n = (size_t)r / FX_REC;
				c->reads++;
			} else if (r >= 0 || errno != EAGAIN) {
				FAIL("read with the flag set: %zd, errno %d "
				     "(%s)", r, errno, strerror(errno));
			}
		}
		for (size_t i = 0; i < n; i++)
			got(c, &buf[i]);
		if (n) {
			idle_since = 0;
			continue;
		}
		if (__atomic_load_n(&sh->done, __ATOMIC_SEQ_CST)) {
			if (c->records == __atomic_load_n(&sh->counted,
							  __ATOMIC_SEQ_CST))
				return;
			if (!idle_since)
				idle_since = pt_mono();
			else if (pt_mono() - idle_since > MS(PT_WAIT_MS))
				FAIL("%ld records, %ld wakes counted the "
				     "object, nothing more for %d ms",
				     c->records, sh->counted, PT_WAIT_MS);
		}
		c->polls++;
		pt_poll_in(ring->fd, 10);
	}
}

static void finish(struct rg_ring *ring, const struct consumer *c)
{
	struct pollfs_futex_event ev;

	pt_diag("%ld records, %ld wakes counted the object (of %d), %ld "
		"polls, %ld reads with the flag set", c->records, sh->counted,
		WAKES, c->polls, c->reads);
	CHECK_EQ(c->records, sh->counted);
	CHECK_EQ(c->last, WAKES);
	CHECK_EQ(sh->word, WAKES);
	rg_expect_empty(ring);
	/* still a waiter, on the final value */
	CHECK_EQ(fx_wake(&sh->word, INT_MAX, wflags), 1);
	rg_wait_ready(ring, 1);
	CHECK_EQ(rg_take(ring, &ev, 1), 1);
	fx_check_rec(&ev, &sh->word, WAKES, wflags | FX_WATCH);
	pt_expect_empty(ring->fd);
}

TEST(from_a_thread)
{
	struct consumer c = { 0 };
	struct rg_ring ring;
	pthread_t th;
	int fd;

	sh = calloc(1, sizeof(*sh));
	CHECK(sh);
	wflags = FX_PRIVATE;
	fd = fx_new(POLLFS_NONBLOCK);
	rg_setup(&ring, fd, ENTRIES, RG_FUTEX_REC);
	fx_arm(fd, &sh->word, 0, wflags | FX_WATCH);
	CHECK_EQ(pthread_create(&th, NULL, waker_thread, NULL), 0);
	consume(&ring, &c);
	CHECK_EQ(pthread_join(th, NULL), 0);
	finish(&ring, &c);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
	CHECK_EQ(fx_wake(&sh->word, INT_MAX, wflags), 0);
}

TEST(from_a_process)
{
	struct consumer c = { 0 };
	struct rg_ring ring;
	int fd, status;
	pid_t pid;

	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	wflags = FX_SHARED;
	fd = fx_new(POLLFS_NONBLOCK);
	rg_setup(&ring, fd, ENTRIES, RG_FUTEX_REC);
	fx_arm(fd, &sh->word, 0, wflags | FX_WATCH);
	pid = fx_fork();
	if (pid == 0) {
		/* the waker knows nothing of the object or its ring */
		close(fd);
		rg_unmap(&ring);
		wake_all();
		_exit(PT_PASS);
	}
	consume(&ring, &c);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == PT_PASS);
	finish(&ring, &c);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
	CHECK_EQ(fx_wake(&sh->word, INT_MAX, wflags), 0);
}

int main(void)
{
	return pt_run_tests();
}
