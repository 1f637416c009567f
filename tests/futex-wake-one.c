// SPDX-License-Identifier: MIT
/*
 * One armed object is one waiter: FUTEX_WAKE(addr, 1) returns 1 and the
 * fd becomes readable (poll, select); the read returns the armed record
 * once and leaves the object unarmed (a second FUTEX_WAKE returns 0, a
 * second read gives EINVAL).  A read buffer smaller than a record gives
 * EINVAL and consumes nothing.  Not readable before the wake.
 */
#include "lib/futex.h"

#include <sys/mman.h>
#include <sys/select.h>

PT_BUDGET(50);

static bool select_readable(int fd, int timeout_ms)
{
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	fd_set rd;

	FD_ZERO(&rd);
	FD_SET(fd, &rd);
	return CHECK_SYS(select(fd + 1, &rd, NULL, NULL, &tv)) == 1 &&
	       FD_ISSET(fd, &rd);
}

static void cycle(int fd, uint32_t *w, uint32_t flags, int n)
{
	struct pollfs_futex_event small;
	char odd[FX_REC + 7];

	fx_arm(fd, w, *w, flags);
	/* not readable before the wake, however long one waits */
	CHECK_EQ(fx_revents(fd, 50), 0);
	CHECK(!select_readable(fd, 0));
	fx_expect_armed(fd);

	CHECK_EQ(fx_wake(w, n, flags), 1);
	CHECK_EQ(fx_revents(fd, 0), POLLIN);
	CHECK(select_readable(fd, 0));
	/* woken: no longer a waiter */
	CHECK_EQ(fx_wake(w, INT_MAX, flags), 0);

	/* a read buffer too small for a record consumes nothing */
	CHECK_ERR(read(fd, &small, sizeof(small) - 1), EINVAL);
	CHECK_ERR(read(fd, &small, 1), EINVAL);
	CHECK_EQ(fx_revents(fd, 0), POLLIN);

	if (n == 1) {
		fx_expect_rec(fd, w, *w, flags);
	} else {
		/* 16 to 31 bytes: one record */
		memset(odd, 0, sizeof(odd));
		CHECK_EQ(read(fd, odd, sizeof(odd)), FX_REC);
		memcpy(&small, odd, sizeof(small));
		fx_check_rec(&small, w, *w, flags);
	}

	/* exactly once */
	fx_expect_unarmed(fd);
	CHECK_ERR(read(fd, &small, sizeof(small)), EINVAL);
	CHECK_EQ(fx_wake(w, INT_MAX, flags), 0);
	CHECK_EQ(fx_revents(fd, 50), 0);
}

int main(void)
{
	static uint32_t word = 0x1234;
	uint32_t *shm;
	int fd, nb;

	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	shm[3] = 99;

	fd = fx_new(0);		/* blocking: reads must not sleep here */
	nb = fx_new(POLLFS_NONBLOCK);
	for (int i = 0; i < 10; i++) {
		int n = (i % 3 == 0) ? 1 : (i % 3 == 1) ? 2 : INT_MAX;

		cycle(fd, &word, FX_PRIVATE, n);
		cycle(nb, &word, FX_PRIVATE, n);
		cycle(fd, &word, FX_SHARED, n);
		cycle(fd, &shm[3], FX_SHARED, n);
		cycle(nb, &shm[3], FX_PRIVATE, n);
		word++;
		shm[3] += 1000;
	}
	CHECK_SYS(close(fd));
	CHECK_SYS(close(nb));
	CHECK_SYS(munmap(shm, 4096));
	return PT_PASS;
}
