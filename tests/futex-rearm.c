// SPDX-License-Identifier: MIT
/*
 * A write replaces the object's wait: armed on A then re-armed on B, a
 * wake of A counts nothing and one of B counts it; re-armed on the same
 * word it is one waiter, not two; a woken record not yet read is dropped
 * by the re-arm; re-arming from a wait-any drops every record of it.
 */
#include "lib/futex.h"

#include <sys/mman.h>

PT_BUDGET(50);

static uint32_t a = 1, b = 2;
static uint32_t many[128];

int main(void)
{
	struct pollfs_futex_event evs[128], buf[4];
	uint32_t *shm;
	int fd = fx_new(POLLFS_NONBLOCK);

	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);

	/* A then B */
	fx_arm(fd, &a, 1, FX_PRIVATE);
	fx_arm(fd, &b, 2, FX_PRIVATE);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&a, INT_MAX, FX_PRIVATE), 0);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&b, INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(fd, &b, 2, FX_PRIVATE);
	fx_expect_unarmed(fd);

	/* the same word twice: still one waiter */
	fx_arm(fd, &a, 1, FX_PRIVATE);
	fx_arm(fd, &a, 1, FX_PRIVATE);
	fx_arm(fd, &a, 1, FX_PRIVATE);
	CHECK_EQ(fx_wake(&a, INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(fd, &a, 1, FX_PRIVATE);

	/* private then shared on one word: only the shared wait is left */
	fx_arm(fd, &shm[0], 0, FX_PRIVATE);
	fx_arm(fd, &shm[0], 0, FX_SHARED);
	CHECK_EQ(fx_wake(&shm[0], INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&shm[0], INT_MAX, FX_SHARED), 1);
	fx_expect_rec(fd, &shm[0], 0, FX_SHARED);

	/* woken, not read, re-armed: the old record is gone */
	fx_arm(fd, &a, 1, FX_PRIVATE);
	CHECK_EQ(fx_wake(&a, 1, FX_PRIVATE), 1);
	fx_expect_ready(fd);
	fx_arm(fd, &b, 2, FX_PRIVATE);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&a, INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&b, INT_MAX, FX_PRIVATE), 1);
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(read(fd, buf, sizeof(buf)), FX_REC);
	fx_check_rec(&buf[0], &b, 2, FX_PRIVATE);
	fx_expect_unarmed(fd);

	/* 128 records, then one: the 128 words have no waiter */
	for (int i = 0; i < 128; i++) {
		many[i] = (uint32_t)i;
		evs[i] = fx_ev(&many[i], (uint32_t)i,
			       (i & 1) ? FX_SHARED : FX_PRIVATE);
	}
	fx_armv(fd, evs, 128);
	fx_arm(fd, &a, 1, FX_PRIVATE);
	for (int i = 0; i < 128; i++)
		CHECK_EQ(fx_wake(&many[i], INT_MAX,
				 (i & 1) ? FX_SHARED : FX_PRIVATE), 0);
	fx_expect_armed(fd);
	/* and one, then 128: the first word has no waiter */
	fx_armv(fd, evs, 128);
	CHECK_EQ(fx_wake(&a, INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&many[77], INT_MAX, FX_SHARED), 1);
	fx_expect_rec(fd, &many[77], 77, FX_SHARED);
	for (int i = 0; i < 128; i++)
		CHECK_EQ(fx_wake(&many[i], INT_MAX,
				 (i & 1) ? FX_SHARED : FX_PRIVATE), 0);

	/* a wait-any woken on two words, not read, re-armed: both gone */
	fx_armv(fd, evs, 4);
	CHECK_EQ(fx_wake(&many[0], 1, FX_PRIVATE), 1);
	CHECK_EQ(fx_wake(&many[3], 1, FX_SHARED), 1);
	fx_armv(fd, evs, 4);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&many[2], 1, FX_PRIVATE), 1);
	fx_expect_rec(fd, &many[2], 2, FX_PRIVATE);
	fx_expect_unarmed(fd);

	CHECK_SYS(close(fd));
	return PT_PASS;
}
