// SPDX-License-Identifier: MIT
/*
 * Wait-any is atomic: if any record's word holds another value the write
 * gives EAGAIN and nothing is armed (a FUTEX_WAKE of every word counts
 * nothing), wherever the record is; a misaligned address or unknown
 * flags in any record give EINVAL and arm nothing.
 */
#include "lib/futex.h"

#include <sys/mman.h>

PT_BUDGET(50);

static uint32_t words[128];
static uint32_t *shm;

/* odd records on the shared mapping (3 pages), even ones private */
static void *addr_of(int i)
{
	return (i & 1) ? (void *)&shm[i * 17] : (void *)&words[i];
}

static void fill(struct pollfs_futex_event *evs, int k)
{
	for (int i = 0; i < k; i++) {
		uint32_t *w = addr_of(i);

		*w = (uint32_t)i + 500;
		evs[i] = fx_ev(w, *w, (i % 3 == 1) ? FX_SHARED : FX_PRIVATE);
	}
}

static void nothing_armed(int fd, int k)
{
	fx_expect_unarmed(fd);
	for (int i = 0; i < k; i++) {
		CHECK_EQ(fx_wake(addr_of(i), INT_MAX, FX_PRIVATE), 0);
		CHECK_EQ(fx_wake(addr_of(i), INT_MAX, FX_SHARED), 0);
	}
}

static void bad(int fd, int k, int at, int how)
{
	struct pollfs_futex_event evs[128];
	int err = how == 0 ? EAGAIN : EINVAL;

	fill(evs, k);
	switch (how) {
	case 0:
		evs[at].val++;
		break;
	case 1:
		evs[at].addr += 2;
		break;
	default:
		evs[at].flags |= 0x4;
		break;
	}
	errno = 0;
	if (write(fd, evs, (size_t)k * sizeof(evs[0])) != -1 || errno != err)
		FAIL("%d records, record %d bad (%d): expected %s, errno %d",
		     k, at, how, strerrorname_np(err), errno);
	nothing_armed(fd, k);
}

int main(void)
{
	static const int ks[] = { 2, 3, 128 };
	struct pollfs_futex_event evs[128];
	int fd;

	shm = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	fd = fx_new(POLLFS_NONBLOCK);

	for (size_t n = 0; n < sizeof(ks) / sizeof(ks[0]); n++) {
		int k = ks[n];

		for (int how = 0; how < 3; how++) {
			bad(fd, k, 0, how);
			bad(fd, k, k - 1, how);
			bad(fd, k, k / 2, how);
			/* and from armed: the old wait goes too */
			fill(evs, k);
			fx_armv(fd, evs, (size_t)k);
			bad(fd, k, k - 1, how);
		}
	}
	/* every position of 3, mismatched */
	for (int at = 0; at < 3; at++)
		bad(fd, 3, at, 0);

	/* a good wait-any after all that works */
	fill(evs, 128);
	fx_armv(fd, evs, 128);
	CHECK_EQ(fx_wake(addr_of(100), 1, evs[100].flags), 1);
	fx_expect_rec(fd, addr_of(100), evs[100].val, evs[100].flags);
	nothing_armed(fd, 128);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
