// SPDX-License-Identifier: MIT
/*
 * FUTEX_WAKE_OP counts armed objects as waiters on both of its words:
 * the nr_wake on uaddr1 always, the nr_wake2 on uaddr2 when the
 * operation's comparison of uaddr2's old value holds.
 */
#include "lib/futex.h"

#include <sys/mman.h>

PT_BUDGET(50);

static long wake_op(uint32_t *a, int n1, int n2, uint32_t *b, uint32_t op,
		    uint32_t flags)
{
	long r = fx_futex(a, fx_op(FUTEX_WAKE_OP, flags), (uint32_t)n1,
			  (unsigned long)n2, b, op);

	if (r < 0)
		FAIL("FUTEX_WAKE_OP: errno %d (%s)", errno, strerror(errno));
	return r;
}

static void run(uint32_t *a, uint32_t *b, uint32_t flags)
{
	int fa = fx_new(POLLFS_NONBLOCK), fb = fx_new(POLLFS_NONBLOCK);
	int fb2 = fx_new(POLLFS_NONBLOCK);

	*a = 10;
	*b = 0;
	/* comparison true (old *b == 0): both words, *b set to 5 */
	fx_arm(fa, a, 10, flags);
	fx_arm(fb, b, 0, flags);
	CHECK_EQ(wake_op(a, 1, 1, b,
			 FUTEX_OP(FUTEX_OP_SET, 5, FUTEX_OP_CMP_EQ, 0), flags),
		 2);
	CHECK_EQ(*b, 5);
	fx_expect_rec(fa, a, 10, flags);
	fx_expect_rec(fb, b, 0, flags);

	/* comparison false (old *b == 5, not 0): only uaddr1's waiter, *b
	 * still changed to 6; fb stays armed although *b moved on */
	fx_arm(fa, a, 10, flags);
	fx_arm(fb, b, 5, flags);
	CHECK_EQ(wake_op(a, 1, 1, b,
			 FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 0), flags),
		 1);
	CHECK_EQ(*b, 6);
	fx_expect_rec(fa, a, 10, flags);
	fx_expect_armed(fb);
	CHECK_EQ(fx_wake(b, 1, flags), 1);
	fx_expect_rec(fb, b, 5, flags);

	/* only uaddr2 has waiters: two of them, nr_wake2 1 then 1 again */
	fx_arm(fb, b, 6, flags);
	fx_arm(fb2, b, 6, flags);
	CHECK_EQ(wake_op(a, 1, 1, b,
			 FUTEX_OP(FUTEX_OP_OR, 0, FUTEX_OP_CMP_GT, 0), flags),
		 1);
	CHECK_EQ(wake_op(a, 1, 1, b,
			 FUTEX_OP(FUTEX_OP_OR, 0, FUTEX_OP_CMP_GT, 0), flags),
		 1);
	CHECK_EQ(wake_op(a, 1, 1, b,
			 FUTEX_OP(FUTEX_OP_OR, 0, FUTEX_OP_CMP_GT, 0), flags),
		 0);
	fx_expect_rec(fb, b, 6, flags);
	fx_expect_rec(fb2, b, 6, flags);

	/* both words with two waiters each: 2 + 2 */
	fx_arm(fb, b, 6, flags);
	fx_arm(fb2, b, 6, flags);
	fx_arm(fa, a, 10, flags);
	{
		int fa2 = fx_new(POLLFS_NONBLOCK);

		fx_arm(fa2, a, 10, flags);
		CHECK_EQ(wake_op(a, INT_MAX, INT_MAX, b,
				 FUTEX_OP(FUTEX_OP_ANDN, 0, FUTEX_OP_CMP_NE, 7),
				 flags), 4);
		fx_expect_rec(fa2, a, 10, flags);
		CHECK_SYS(close(fa2));
	}
	fx_expect_rec(fa, a, 10, flags);
	fx_expect_rec(fb, b, 6, flags);
	fx_expect_rec(fb2, b, 6, flags);
	CHECK_EQ(fx_wake(a, INT_MAX, flags), 0);
	CHECK_EQ(fx_wake(b, INT_MAX, flags), 0);

	CHECK_SYS(close(fa));
	CHECK_SYS(close(fb));
	CHECK_SYS(close(fb2));
}

int main(void)
{
	static uint32_t pa, pb;
	uint32_t *shm;

	shm = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	run(&pa, &pb, FX_PRIVATE);
	/* two words on two pages of one shared mapping */
	run(&shm[3], &shm[1024 + 5], FX_SHARED);
	/* both on one page */
	run(&shm[7], &shm[8], FX_SHARED);
	CHECK_SYS(munmap(shm, 8192));
	return PT_PASS;
}
