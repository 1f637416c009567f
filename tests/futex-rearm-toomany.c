// SPDX-License-Identifier: MIT
/*
 * A write of more than POLLFS_FUTEX_WAITV_MAX (128) records gives EINVAL
 * and, like every write that fails, leaves the object unarmed: armed
 * before, a FUTEX_WAKE of its old word then counts nothing; woken and
 * not read before, the record is gone.
 */
#include "lib/futex.h"

PT_BUDGET(30);

static uint32_t a = 1, b = 2;
static struct pollfs_futex_event big[1000];

static void too_many(int fd, size_t n)
{
	CHECK_ERR(write(fd, big, n * sizeof(big[0])), EINVAL);
	fx_expect_unarmed(fd);
	CHECK_EQ(fx_wake(&a, INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&a, INT_MAX, FX_SHARED), 0);
	CHECK_EQ(fx_wake(&b, INT_MAX, FX_PRIVATE), 0);
}

int main(void)
{
	static const size_t ns[] = { 129, 130, 256, 1000 };
	int fd = fx_new(POLLFS_NONBLOCK);

	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		big[i] = fx_ev(&b, 2, FX_PRIVATE);

	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		/* unarmed before */
		too_many(fd, ns[i]);

		/* armed before */
		fx_arm(fd, &a, 1, FX_PRIVATE);
		too_many(fd, ns[i]);

		/* armed with a wait-any of 128 before */
		fx_armv(fd, big, 128);
		too_many(fd, ns[i]);

		/* woken and not read before */
		fx_arm(fd, &a, 1, FX_SHARED);
		CHECK_EQ(fx_wake(&a, 1, FX_SHARED), 1);
		fx_expect_ready(fd);
		too_many(fd, ns[i]);

		/* and it works afterwards */
		fx_arm(fd, &a, 1, FX_PRIVATE);
		CHECK_EQ(fx_wake(&a, 1, FX_PRIVATE), 1);
		fx_expect_rec(fd, &a, 1, FX_PRIVATE);
	}
	CHECK_SYS(close(fd));
	return PT_PASS;
}
