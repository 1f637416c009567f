// SPDX-License-Identifier: MIT
/*
 * Wait-any with several records woken before the read: a read with room
 * for them returns them all, each once; a read with room for one returns
 * one, the fd stays readable, and the next read returns the next, until
 * the object is unarmed.  The first read disarms the records not woken.
 */
#include "lib/futex.h"

#include <sys/mman.h>

PT_BUDGET(50);

static uint32_t w[4] = { 10, 20, 30, 40 };
static uint32_t *shm;

static void *addr_of(int i)
{
	return (i == 3) ? (void *)&shm[5] : (void *)&w[i];
}

/* Each expected record exactly once in got[0..n). */
static void check_set(const struct pollfs_futex_event *got, int n,
		      const struct pollfs_futex_event *evs, const int *which)
{
	bool seen[4] = { false };

	for (int i = 0; i < n; i++) {
		int m = -1;

		for (int j = 0; j < n; j++)
			if (!memcmp(&got[i], &evs[which[j]], sizeof(got[i])))
				m = which[j];
		if (m < 0 || seen[m])
			FAIL("record %d {%#llx, %u, %#x} unexpected or twice",
			     i, (unsigned long long)got[i].addr, got[i].val,
			     got[i].flags);
		seen[m] = true;
	}
}

static void arm(int fd, struct pollfs_futex_event *evs)
{
	for (int i = 0; i < 4; i++)
		evs[i] = fx_ev(addr_of(i), *(uint32_t *)addr_of(i),
			       i == 3 ? FX_SHARED : FX_PRIVATE);
	fx_armv(fd, evs, 4);
}

int main(void)
{
	struct pollfs_futex_event evs[4], got[8];
	static const int w02[] = { 0, 2 }, w013[] = { 0, 1, 3 };
	static const int w0123[] = { 0, 1, 2, 3 };
	int fd;

	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	shm[5] = 50;
	fd = fx_new(0);

	/* two woken, one big read */
	arm(fd, evs);
	CHECK_EQ(fx_wake(&w[0], INT_MAX, FX_PRIVATE), 1);
	CHECK_EQ(fx_wake(&w[2], INT_MAX, FX_PRIVATE), 1);
	CHECK_EQ(read(fd, got, sizeof(got)), 2 * FX_REC);
	check_set(got, 2, evs, w02);
	fx_expect_unarmed(fd);
	CHECK_EQ(fx_wake(&w[1], INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&shm[5], INT_MAX, FX_SHARED), 0);

	/* two woken, reads of one record */
	arm(fd, evs);
	CHECK_EQ(fx_wake(&w[0], 1, FX_PRIVATE), 1);
	CHECK_EQ(fx_wake(&w[2], 1, FX_PRIVATE), 1);
	CHECK_EQ(read(fd, &got[0], FX_REC), FX_REC);
	/* the first read disarmed the rest */
	CHECK_EQ(fx_wake(&w[1], INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&shm[5], INT_MAX, FX_SHARED), 0);
	fx_expect_ready(fd);
	CHECK_EQ(read(fd, &got[1], FX_REC + 15), FX_REC);
	check_set(got, 2, evs, w02);
	fx_expect_unarmed(fd);
	CHECK_ERR(read(fd, got, sizeof(got)), EINVAL);

	/* three woken, a read of two then a read of two */
	arm(fd, evs);
	CHECK_EQ(fx_wake(&shm[5], 1, FX_SHARED), 1);
	CHECK_EQ(fx_wake(&w[1], 1, FX_PRIVATE), 1);
	CHECK_EQ(fx_wake(&w[0], 1, FX_PRIVATE), 1);
	CHECK_EQ(read(fd, &got[0], 2 * FX_REC), 2 * FX_REC);
	CHECK_EQ(fx_wake(&w[2], INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(read(fd, &got[2], 2 * FX_REC), FX_REC);
	check_set(got, 3, evs, w013);
	fx_expect_unarmed(fd);

	/* all four woken by one wake each, one read */
	arm(fd, evs);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(fx_wake(addr_of(i), INT_MAX, evs[i].flags), 1);
	CHECK_EQ(read(fd, got, sizeof(got)), 4 * FX_REC);
	check_set(got, 4, evs, w0123);
	fx_expect_unarmed(fd);

	/* two records on one word: two waiters */
	evs[0] = fx_ev(&w[3], 40, FX_PRIVATE);
	evs[1] = fx_ev(&w[3], 40, FX_PRIVATE);
	fx_armv(fd, evs, 2);
	CHECK_EQ(fx_wake(&w[3], INT_MAX, FX_PRIVATE), 2);
	CHECK_EQ(read(fd, got, sizeof(got)), 2 * FX_REC);
	fx_check_rec(&got[0], &w[3], 40, FX_PRIVATE);
	fx_check_rec(&got[1], &w[3], 40, FX_PRIVATE);
	fx_expect_unarmed(fd);

	CHECK_SYS(close(fd));
	return PT_PASS;
}
