// SPDX-License-Identifier: MIT
/*
 * Arming on a word that is not mapped gives EFAULT and arms nothing: an
 * unmapped page, address 0, a PROT_NONE page, kernel addresses.  A
 * mapped page that was never touched (not present yet) arms normally,
 * alone or as the last record of a wait-any.
 */
#include "lib/futex.h"

#include <sys/mman.h>

PT_BUDGET(30);

static uint32_t word;

static void efault(int fd, uint64_t addr)
{
	for (int shared = 0; shared < 2; shared++) {
		struct pollfs_futex_event ev;

		/* val 1: the record of all zeros is the disarm (1.1) */
		ev = fx_ev((void *)(uintptr_t)addr, 1,
			   shared ? FX_SHARED : FX_PRIVATE);
		errno = 0;
		if (write(fd, &ev, sizeof(ev)) != -1 || errno != EFAULT)
			FAIL("arming on %#llx (%s): expected EFAULT, errno "
			     "%d (%s)", (unsigned long long)addr,
			     shared ? "shared" : "private", errno,
			     strerror(errno));
		fx_expect_unarmed(fd);
	}
}

int main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct pollfs_futex_event evs[3];
	char *map, *gone, *none, *fresh, path[] = "/tmp/pollfs-futex-XXXXXX";
	uint32_t *fw;
	int fd, file;

	fd = fx_new(POLLFS_NONBLOCK);

	gone = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(gone != MAP_FAILED);
	CHECK_SYS(munmap(gone, (size_t)page));
	efault(fd, (uintptr_t)gone);
	efault(fd, (uintptr_t)gone + 40);
	efault(fd, 0);
	efault(fd, 4);
	efault(fd, 0xffff800000000000ull);
	efault(fd, 0xffffffff81000000ull);
	efault(fd, 0xfffffffffffffffcull);
	efault(fd, 0x0000800000000000ull);	/* just past user space */

	none = mmap(NULL, (size_t)page, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(none != MAP_FAILED);
	efault(fd, (uintptr_t)none);

	/* a fault in a wait-any, after good records: EFAULT, nothing armed */
	evs[0] = fx_ev(&word, 0, FX_PRIVATE);
	evs[1] = fx_ev(&word, 0, FX_SHARED);
	evs[2] = fx_ev(gone, 0, FX_PRIVATE);
	CHECK_ERR(write(fd, evs, sizeof(evs)), EFAULT);
	fx_expect_unarmed(fd);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_SHARED), 0);

	/* never touched pages arm: private anonymous, zero */
	map = mmap(NULL, (size_t)page * 4, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(map != MAP_FAILED);
	fresh = map + 8;
	fx_arm(fd, fresh, 0, FX_PRIVATE);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(fresh, 1, FX_PRIVATE), 1);
	fx_expect_rec(fd, fresh, 0, FX_PRIVATE);
	/* ...and shared, on a page of its own */
	fresh = map + page + 12;
	fx_arm(fd, fresh, 0, FX_SHARED);
	CHECK_EQ(fx_wake(fresh, 1, FX_SHARED), 1);
	fx_expect_rec(fd, fresh, 0, FX_SHARED);
	/* ...and as the last of three records */
	evs[0] = fx_ev(&word, 0, FX_PRIVATE);
	evs[1] = fx_ev(&word, 0, FX_SHARED);
	evs[2] = fx_ev(map + 2 * page + 4, 0, FX_PRIVATE);
	fx_armv(fd, evs, 3);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(map + 2 * page + 4, INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(fd, map + 2 * page + 4, 0, FX_PRIVATE);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_SHARED), 0);

	/* a shared file mapping never touched */
	file = CHECK_SYS(mkstemp(path));
	CHECK_SYS(unlink(path));
	CHECK_SYS(ftruncate(file, page));
	fw = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
		  file, 0);
	CHECK(fw != MAP_FAILED);
	fx_arm(fd, fw + 5, 0, FX_SHARED);
	CHECK_EQ(fx_wake(fw + 5, 1, FX_SHARED), 1);
	fx_expect_rec(fd, fw + 5, 0, FX_SHARED);

	CHECK_SYS(close(fd));
	CHECK_SYS(munmap(map, (size_t)page * 4));
	CHECK_SYS(munmap(none, (size_t)page));
	CHECK_SYS(munmap(fw, (size_t)page));
	CHECK_SYS(close(file));
	return PT_PASS;
}
