// SPDX-License-Identifier: MIT
/*
 * A bad argument pointer gives EFAULT and creates nothing; a write or a
 * read whose buffer is not mapped gives EFAULT.
 */
#include "lib/timer.h"

#include <sys/mman.h>

PT_BUDGET(50);

int main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	void *volatile null = NULL;	/* hidden from the compiler's checks */
	char *map, *hole;
	int dev, t, probe;

	/* Two pages: the first readable, the second a hole. */
	map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(map != MAP_FAILED);
	hole = map + page;
	CHECK_SYS(mprotect(hole, (size_t)page, PROT_NONE));
	memset(map, 0, (size_t)page);

	dev = pt_dev();
	probe = CHECK_SYS(dup(dev));
	CHECK_SYS(close(probe));

	CHECK_ERR(ioctl(dev, POLLFS_IOC_TIMER, NULL), EFAULT);
	CHECK_ERR(ioctl(dev, POLLFS_IOC_TIMER, (void *)1), EFAULT);
	CHECK_ERR(ioctl(dev, POLLFS_IOC_TIMER, hole), EFAULT);
	/* the struct straddles into the hole: only its first half is mapped */
	CHECK_ERR(ioctl(dev, POLLFS_IOC_TIMER, hole - 4), EFAULT);
	/* a kernel address */
	CHECK_ERR(ioctl(dev, POLLFS_IOC_TIMER, (void *)-4096L), EFAULT);

	/* none of them created a file */
	CHECK_EQ(CHECK_SYS(dup(dev)), probe);
	CHECK_SYS(close(probe));

	/* and the same struct, mapped whole, works */
	t = CHECK_SYS(ioctl(dev, POLLFS_IOC_TIMER, hole - 8));
	CHECK_SYS(close(t));

	t = tmr_new(POLLFS_NONBLOCK);
	CHECK_ERR(write(t, null, 40), EFAULT);
	CHECK_ERR(write(t, hole, 40), EFAULT);
	CHECK_ERR(write(t, hole - 20, 40), EFAULT);
	/* the faulting writes armed nothing */
	pt_sleep_ms(20);
	pt_expect_empty(t);

	/* a ready record and nowhere to put it */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(1), 0);
	pt_wait_readable(t, PT_WAIT_MS);
	CHECK_ERR(read(t, null, 40), EFAULT);
	/* whether the failed copy consumed the record is not specified:
	 * make a new one */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(1), 0);
	pt_wait_readable(t, PT_WAIT_MS);
	CHECK_ERR(read(t, hole, 40), EFAULT);

	CHECK_SYS(close(t));
	CHECK_SYS(close(dev));
	return PT_PASS;
}
