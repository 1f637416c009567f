// SPDX-License-Identifier: MIT
/*
 * Wait-any: one write of k records (2, 3, 128) arms all k (k * 16 bytes
 * written); a FUTEX_WAKE of any one word returns 1 and the fd fires; the
 * read returns exactly the woken record and disarms the others (a wake
 * of them counts nothing).  Records may mix private and shared words.
 */
#include "lib/futex.h"

#include <sys/mman.h>

PT_BUDGET(50);

static uint32_t words[128];
static uint32_t *shm;

static void *addr_of(int i)
{
	/* odd records on shared memory, spread over its pages */
	return (i & 1) ? (void *)&shm[(i * 1031) % (4 * 1024)] :
			 (void *)&words[i];
}

static void setup(struct pollfs_futex_event *evs, int k)
{
	for (int i = 0; i < k; i++) {
		uint32_t *w = addr_of(i);

		*w = 0x1000u + (uint32_t)i * 7u;
		evs[i] = fx_ev(w, *w, (i % 4 == 1) ? FX_PRIVATE :
				      (i & 1) ? FX_SHARED : (i % 3 ? FX_SHARED :
								  FX_PRIVATE));
	}
}

static void run(int fd, int k, int j)
{
	struct pollfs_futex_event evs[128], buf[128];

	setup(evs, k);
	CHECK_EQ(write(fd, evs, (size_t)k * sizeof(evs[0])),
		 (ssize_t)k * FX_REC);
	fx_expect_armed(fd);
	/* a wake of the other kind counts nothing */
	CHECK_EQ(fx_wake(addr_of(j), INT_MAX, evs[j].flags ^ FX_SHARED), 0);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(addr_of(j), INT_MAX, evs[j].flags), 1);
	fx_expect_ready(fd);
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(read(fd, buf, (size_t)k * sizeof(buf[0])), FX_REC);
	fx_check_rec(&buf[0], addr_of(j), evs[j].val, evs[j].flags);
	fx_expect_unarmed(fd);
	for (int i = 0; i < k; i++) {
		CHECK_EQ(fx_wake(addr_of(i), INT_MAX, FX_PRIVATE), 0);
		CHECK_EQ(fx_wake(addr_of(i), INT_MAX, FX_SHARED), 0);
	}
}

int main(void)
{
	static const int ks[] = { 2, 3, 5, 64, 127, 128 };
	int fd, bfd;

	shm = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	fd = fx_new(POLLFS_NONBLOCK);
	bfd = fx_new(0);

	for (size_t n = 0; n < sizeof(ks) / sizeof(ks[0]); n++) {
		int k = ks[n];

		run(fd, k, 0);
		run(fd, k, k - 1);
		run(bfd, k, k / 2);
		if (k <= 5)
			for (int j = 0; j < k; j++)
				run(fd, k, j);
	}
	/* 128 records, every one of them woken in turn */
	for (int j = 0; j < 128; j++)
		run(fd, 128, j);
	CHECK_SYS(close(fd));
	CHECK_SYS(close(bfd));
	return PT_PASS;
}
