// SPDX-License-Identifier: MIT
/*
 * A watched object (POLLFS_FUTEX_WATCH, 1.1) moved by FUTEX_REQUEUE or
 * FUTEX_CMP_REQUEUE is a waiter like any: the requeue counts it, a wake
 * of the old word then counts nothing and one of the new word counts
 * it.  The read returns the record as it was written, its addr the
 * original word's (never the word it was moved to), with val that
 * word's value now, and arms it again there: afterwards a wake of the
 * original word counts it and one of the word it had been moved to does
 * not.  The same for a record of a watched wait-any set (the others
 * stay armed where they were).  Private and shared.
 */
#include "lib/futex.h"

#include <sys/mman.h>

PT_BUDGET(50);

static uint32_t wflags;

static long requeue(uint32_t *a, int nr_wake, int nr_requeue, uint32_t *b)
{
	long r = fx_futex(a, fx_op(FUTEX_REQUEUE, wflags), (uint32_t)nr_wake,
			  (unsigned long)nr_requeue, b, 0);

	if (r < 0)
		FAIL("FUTEX_REQUEUE: errno %d (%s)", errno, strerror(errno));
	return r;
}

static long cmp_requeue(uint32_t *a, int nr_wake, int nr_requeue,
			uint32_t *b, uint32_t cmp)
{
	long r = fx_futex(a, fx_op(FUTEX_CMP_REQUEUE, wflags),
			  (uint32_t)nr_wake, (unsigned long)nr_requeue, b, cmp);

	if (r < 0)
		FAIL("FUTEX_CMP_REQUEUE: errno %d (%s)", errno, strerror(errno));
	return r;
}

static void run(int fd, uint32_t *a, uint32_t *b, uint32_t *c)
{
	const uint32_t fl = wflags | FX_WATCH;
	struct pollfs_futex_event evs[2];

	*a = 100;
	*b = 200;
	*c = 300;

	/* CMP_REQUEUE a -> b, woken on b; re-armed on a */
	fx_arm(fd, a, 100, fl);
	CHECK_EQ(cmp_requeue(a, 0, INT_MAX, b, 100), 1);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(a, INT_MAX, wflags), 0);
	CHECK_EQ(fx_wake(b, 1, wflags), 1);
	fx_expect_ready(fd);
	*a = 101;
	fx_expect_watch(fd, a, 101, fl);
	CHECK_EQ(fx_wake(b, INT_MAX, wflags), 0);
	CHECK_EQ(fx_wake(a, 1, wflags), 1);
	fx_expect_watch(fd, a, 101, fl);

	/* again, now that it was re-armed by a read: moved and woken */
	CHECK_EQ(cmp_requeue(a, 0, 1, b, 101), 1);
	CHECK_EQ(fx_wake(a, INT_MAX, wflags), 0);
	*b = 201;	/* b's value is not what the record reports */
	CHECK_EQ(fx_wake(b, INT_MAX, wflags), 1);
	fx_expect_watch(fd, a, 101, fl);
	CHECK_EQ(fx_wake(b, INT_MAX, wflags), 0);

	/* FUTEX_REQUEUE, then CMP_REQUEUE again: a -> b -> c */
	CHECK_EQ(requeue(a, 0, 1, b), 1);
	CHECK_EQ(cmp_requeue(b, 0, 1, c, 201), 1);
	CHECK_EQ(fx_wake(a, INT_MAX, wflags), 0);
	CHECK_EQ(fx_wake(b, INT_MAX, wflags), 0);
	*a = 102;
	CHECK_EQ(fx_wake(c, INT_MAX, wflags), 1);
	fx_expect_watch(fd, a, 102, fl);
	CHECK_EQ(fx_wake(c, INT_MAX, wflags), 0);
	CHECK_EQ(fx_wake(b, INT_MAX, wflags), 0);
	CHECK_EQ(fx_wake(a, INT_MAX, wflags), 1);
	fx_expect_watch(fd, a, 102, fl);

	/* a requeue that wakes it (nr_wake 1): woken on a, read, re-armed */
	CHECK_EQ(requeue(a, 1, INT_MAX, b), 1);
	fx_expect_watch(fd, a, 102, fl);
	CHECK_EQ(fx_wake(b, INT_MAX, wflags), 0);
	CHECK_EQ(fx_wake(a, INT_MAX, wflags), 1);
	fx_expect_watch(fd, a, 102, fl);

	/* moved to b, then replaced by the disarm record: none left on b */
	CHECK_EQ(requeue(a, 0, 1, b), 1);
	fx_disarm(fd);
	CHECK_EQ(fx_wake(b, INT_MAX, wflags), 0);
	CHECK_EQ(fx_wake(a, INT_MAX, wflags), 0);
	fx_expect_unarmed(fd);

	/* a watched set {a, c}: a's record moved to b and woken there */
	evs[0] = fx_ev(a, *a, fl);
	evs[1] = fx_ev(c, *c, fl);
	fx_armv(fd, evs, 2);
	CHECK_EQ(requeue(a, 0, INT_MAX, b), 1);
	CHECK_EQ(fx_wake(b, INT_MAX, wflags), 1);
	*a = 103;
	fx_expect_watch(fd, a, 103, fl);
	/* both armed where they were written */
	CHECK_EQ(fx_wake(b, INT_MAX, wflags), 0);
	CHECK_EQ(fx_wake(c, INT_MAX, wflags), 1);
	fx_expect_watch(fd, c, 300, fl);
	CHECK_EQ(fx_wake(a, INT_MAX, wflags), 1);
	fx_expect_watch(fd, a, 103, fl);
	fx_disarm(fd);
}

int main(void)
{
	static uint32_t pa, pb, pc;
	uint32_t *shm;
	int fd, bfd;

	shm = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	fd = fx_new(POLLFS_NONBLOCK);
	bfd = fx_new(0);
	wflags = FX_PRIVATE;
	run(fd, &pa, &pb, &pc);
	run(bfd, &pa, &pb, &pc);
	wflags = FX_SHARED;
	run(fd, &shm[0], &shm[1024], &shm[2048 + 1]);
	run(bfd, &shm[4], &shm[5], &shm[6]);
	CHECK_SYS(close(fd));
	CHECK_SYS(close(bfd));
	CHECK_SYS(munmap(shm, 3 * 4096));
	return PT_PASS;
}
