// SPDX-License-Identifier: MIT
/*
 * FUTEX_REQUEUE and FUTEX_CMP_REQUEUE move an armed object to another
 * word like any waiter: the count returned includes it; then a wake on
 * the old word returns 0, one on the new word returns 1 and the fd
 * fires with the record it was armed with.  A requeued object closed or
 * re-armed leaves no waiter on the new word.
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
	return fx_futex(a, fx_op(FUTEX_CMP_REQUEUE, wflags),
			(uint32_t)nr_wake, (unsigned long)nr_requeue, b, cmp);
}

static void run(uint32_t *a, uint32_t *b, uint32_t *c)
{
	struct pollfs_futex_event evs[2];
	int f1 = fx_new(POLLFS_NONBLOCK), f2 = fx_new(POLLFS_NONBLOCK);

	*a = 100;
	*b = 200;
	*c = 300;

	/* FUTEX_REQUEUE a -> b */
	fx_arm(f1, a, 100, wflags);
	CHECK_EQ(requeue(a, 0, 1, b), 1);
	fx_expect_armed(f1);
	CHECK_EQ(fx_wake(a, INT_MAX, wflags), 0);
	fx_expect_armed(f1);
	CHECK_EQ(fx_wake(b, INT_MAX, wflags), 1);
	fx_expect_ready(f1);
	fx_expect_rec(f1, a, 100, wflags);
	fx_expect_unarmed(f1);
	CHECK_EQ(fx_wake(b, INT_MAX, wflags), 0);

	/* FUTEX_CMP_REQUEUE a -> b, value right */
	fx_arm(f1, a, 100, wflags);
	CHECK_EQ(cmp_requeue(a, 0, INT_MAX, b, 100), 1);
	CHECK_EQ(fx_wake(a, INT_MAX, wflags), 0);
	fx_expect_armed(f1);
	CHECK_EQ(fx_wake(b, 1, wflags), 1);
	fx_expect_rec(f1, a, 100, wflags);

	/* FUTEX_CMP_REQUEUE, value wrong: EAGAIN, still on a */
	fx_arm(f1, a, 100, wflags);
	CHECK_ERR(cmp_requeue(a, 0, INT_MAX, b, 101), EAGAIN);
	CHECK_EQ(fx_wake(b, INT_MAX, wflags), 0);
	fx_expect_armed(f1);
	CHECK_EQ(fx_wake(a, INT_MAX, wflags), 1);
	fx_expect_rec(f1, a, 100, wflags);

	/* two on a: one woken, one requeued; the count is both */
	fx_arm(f1, a, 100, wflags);
	fx_arm(f2, a, 100, wflags);
	CHECK_EQ(requeue(a, 1, 1, b), 2);
	CHECK_EQ(fx_wake(a, INT_MAX, wflags), 0);
	{
		bool r1 = fx_revents(f1, 0) == POLLIN;
		bool r2 = fx_revents(f2, 0) == POLLIN;
		int woken = r1 ? f1 : f2, moved = r1 ? f2 : f1;

		CHECK_EQ(r1 + r2, 1);
		fx_expect_rec(woken, a, 100, wflags);
		fx_expect_armed(moved);
		CHECK_EQ(fx_wake(b, INT_MAX, wflags), 1);
		fx_expect_rec(moved, a, 100, wflags);
	}

	/* requeued twice, a -> b -> c, with CMP_REQUEUE */
	fx_arm(f1, a, 100, wflags);
	CHECK_EQ(cmp_requeue(a, 0, 1, b, 100), 1);
	CHECK_EQ(cmp_requeue(b, 0, 1, c, 200), 1);
	CHECK_EQ(fx_wake(a, INT_MAX, wflags), 0);
	CHECK_EQ(fx_wake(b, INT_MAX, wflags), 0);
	CHECK_EQ(fx_wake(c, INT_MAX, wflags), 1);
	fx_expect_rec(f1, a, 100, wflags);

	/* requeued, then closed: nothing left on b */
	fx_arm(f2, a, 100, wflags);
	CHECK_EQ(requeue(a, 0, 1, b), 1);
	CHECK_SYS(close(f2));
	CHECK_EQ(fx_wake(b, INT_MAX, wflags), 0);
	CHECK_EQ(fx_wake(a, INT_MAX, wflags), 0);

	/* requeued, then re-armed on c: nothing left on b */
	fx_arm(f1, a, 100, wflags);
	CHECK_EQ(requeue(a, 0, 1, b), 1);
	fx_arm(f1, c, 300, wflags);
	CHECK_EQ(fx_wake(b, INT_MAX, wflags), 0);
	CHECK_EQ(fx_wake(a, INT_MAX, wflags), 0);
	CHECK_EQ(fx_wake(c, INT_MAX, wflags), 1);
	fx_expect_rec(f1, c, 300, wflags);

	/* a wait-any on a and c: a's record requeued to b, woken there;
	 * the read disarms c too */
	evs[0] = fx_ev(a, 100, wflags);
	evs[1] = fx_ev(c, 300, wflags);
	fx_armv(f1, evs, 2);
	CHECK_EQ(requeue(a, 0, INT_MAX, b), 1);
	CHECK_EQ(fx_wake(b, INT_MAX, wflags), 1);
	fx_expect_rec(f1, a, 100, wflags);
	CHECK_EQ(fx_wake(c, INT_MAX, wflags), 0);
	CHECK_EQ(fx_wake(a, INT_MAX, wflags), 0);
	fx_expect_unarmed(f1);

	CHECK_SYS(close(f1));
}

static uint32_t *shared_pages(void)
{
	uint32_t *shm = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	CHECK(shm != MAP_FAILED);
	return shm;
}

TEST(private)
{
	static uint32_t pa, pb, pc;

	wflags = FX_PRIVATE;
	run(&pa, &pb, &pc);
}

/* Shared anonymous memory: words on three pages, then on one. */
TEST(shared_three_pages)
{
	uint32_t *shm = shared_pages();

	wflags = FX_SHARED;
	run(&shm[0], &shm[1024], &shm[2048 + 1]);
}

TEST(shared_one_page)
{
	uint32_t *shm = shared_pages();

	wflags = FX_SHARED;
	run(&shm[4], &shm[5], &shm[6]);
}

int main(void)
{
	return pt_run_tests();
}
