// SPDX-License-Identifier: MIT
/*
 * Completions racing with io_getevents from another thread: a submitter
 * submits N buffered writes in batches while a reaper, woken by poll on
 * the AIO object (or sleeping in io_getevents itself every other round),
 * reaps them, and checkers read the count all along.  The count never
 * exceeds submitted - reaped, every completion is reaped exactly once,
 * and a poll that times out with completions unreaped (a lost wake-up)
 * fails the test.  At the end io_destroy wakes the blocking checker.
 */
#include "lib/aio.h"

PT_BUDGET(200);

enum { N = 20000, BATCH = 32, LEN = 64 };

static aio_context_t ctx;
static int file, fd_block, fd_nb, fd_poll;
static long submitted, reaped, eagain;	/* __atomic */
static volatile int done;
static bool seen[N];
static char wbuf[LEN];

static long load(long *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void add(long *p, long v)
{
	__atomic_add_fetch(p, v, __ATOMIC_SEQ_CST);
}

static void *submitter(void *unused)
{
	struct iocb cbs[BATCH], *ptrs[BATCH];
	unsigned int seed = 1;
	long next = 0;

	(void)unused;
	for (int i = 0; i < BATCH; i++)
		ptrs[i] = &cbs[i];
	while (next < N) {
		long n = 1 + rand_r(&seed) % BATCH, r;

		if (n > N - next)
			n = N - next;
		for (long i = 0; i < n; i++)
			ax_prep_pwrite(&cbs[i], file, wbuf, LEN,
				       ((next + i) % 64) * LEN,
				       (uint64_t)(next + i));
		/* counted before they can complete */
		add(&submitted, n);
		r = ax_sys_submit(ctx, n, ptrs);
		if (r < 0 && errno == EAGAIN) {
			r = 0;		/* the ring is full: wait for reaps */
			add(&eagain, 1);
		} else if (r < 0) {
			FAIL("io_submit(%ld): errno %d (%s)", n, errno,
			     strerror(errno));
		}
		add(&submitted, r - n);
		next += r;
		if (r < n)
			sched_yield();
	}
	return NULL;
}

static void take(struct io_event *ev, long n)
{
	for (long i = 0; i < n; i++) {
		if (ev[i].data >= N || seen[ev[i].data] || ev[i].res != LEN)
			FAIL("reaped {data %llu, res %lld}: unknown, twice, or "
			     "failed", (unsigned long long)ev[i].data,
			     (long long)ev[i].res);
		seen[ev[i].data] = true;
	}
	add(&reaped, n);
}

static void *reaper(void *unused)
{
	struct io_event ev[64];
	long rounds = 0, polls = 0;

	(void)unused;
	while (load(&reaped) < N) {
		long n;

		if (rounds++ % 2) {
			/* sleep in io_getevents itself */
			n = ax_reap(ctx, 1, 64, ev, PT_WAIT_MS);
			if (n == 0)
				FAIL("io_getevents: nothing within %d ms, "
				     "%ld submitted, %ld reaped", PT_WAIT_MS,
				     load(&submitted), load(&reaped));
		} else {
			short rev = ax_revents(fd_poll, POLLIN, PT_WAIT_MS);

			polls++;
			if (rev != POLLIN)
				FAIL("poll of the AIO object: revents %#x "
				     "after %d ms, %ld submitted, %ld reaped",
				     (unsigned)rev, PT_WAIT_MS,
				     load(&submitted), load(&reaped));
			/* POLLIN promised at least one */
			n = ax_reap(ctx, 1, 64, ev, 0);
		}
		take(ev, n);
	}
	pt_diag("reaper: %ld rounds, %ld polls", rounds, polls);
	return NULL;
}

/* The count may never exceed what was submitted and not yet reaped. */
static void check_bound(const struct pollfs_aio_event *pev, long r1,
			const char *who)
{
	long s2 = load(&submitted);

	CHECK_EQ(pev->ctx, ctx);
	if (pev->available < 1 || (long)pev->available > s2 - r1)
		FAIL("%s read available %llu with at most %ld submitted and "
		     "at least %ld reaped", who,
		     (unsigned long long)pev->available, s2, r1);
}

static long block_reads;

static void *block_checker(void *unused)
{
	struct pollfs_aio_event pev;

	(void)unused;
	for (;;) {
		long r1 = load(&reaped);
		ssize_t r = ax_read_rec(fd_block, &pev);

		if (r == 0)
			break;		/* io_destroy at the end */
		if (r != AX_EVENT_SIZE)
			FAIL("blocking read: %zd, errno %d (%s)", r, errno,
			     strerror(errno));
		check_bound(&pev, r1, "blocking reader");
		block_reads++;
		sched_yield();
	}
	if (!done)
		FAIL("blocking read returned 0 before io_destroy");
	return NULL;
}

int main(void)
{
	pthread_t sub, rea, blk;
	struct pollfs_aio_event pev;
	long nb_reads = 0, nb_empty = 0;
	int64_t t0;

	memset(wbuf, 'r', sizeof(wbuf));
	ctx = ax_setup(128);
	file = ax_tmpfile("/tmp", 0);
	fd_block = ax_fd(ctx, 0);
	fd_nb = ax_fd(ctx, POLLFS_NONBLOCK);
	fd_poll = ax_fd(ctx, 0);

	t0 = pt_mono();
	CHECK_EQ(pthread_create(&blk, NULL, block_checker, NULL), 0);
	CHECK_EQ(pthread_create(&rea, NULL, reaper, NULL), 0);
	CHECK_EQ(pthread_create(&sub, NULL, submitter, NULL), 0);

	while (load(&reaped) < N) {
		long r1 = load(&reaped);
		ssize_t r = ax_read_rec(fd_nb, &pev);

		if (r < 0 && errno == EAGAIN) {
			nb_empty++;
		} else if (r == AX_EVENT_SIZE) {
			check_bound(&pev, r1, "non-blocking reader");
			nb_reads++;
		} else {
			FAIL("non-blocking read: %zd, errno %d (%s)", r, errno,
			     strerror(errno));
		}
		if ((nb_reads + nb_empty) % 16 == 0)
			sched_yield();
		if (pt_mono() - t0 > MS(150000))
			FAIL("still running: %ld submitted, %ld reaped",
			     load(&submitted), load(&reaped));
	}
	pthread_join(sub, NULL);
	pthread_join(rea, NULL);
	CHECK_EQ(load(&submitted), N);
	CHECK_EQ(load(&reaped), N);
	for (int i = 0; i < N; i++)
		if (!seen[i])
			FAIL("completion %d was never reaped", i);
	ax_expect_empty(fd_nb);
	ax_expect_empty(fd_poll);

	done = 1;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	ax_destroy(ctx);
	pthread_join(blk, NULL);
	ax_expect_hup(fd_block);
	pt_diag("%d completions in %lld ms; %ld full-ring EAGAINs; reads: "
		"%ld non-blocking (%ld empty), %ld blocking", N,
		(long long)((pt_mono() - t0) / NSEC_PER_MSEC), load(&eagain),
		nb_reads, nb_empty, block_reads);
	CHECK_SYS(close(fd_block));
	CHECK_SYS(close(fd_nb));
	CHECK_SYS(close(fd_poll));
	CHECK_SYS(close(file));
	return PT_PASS;
}
