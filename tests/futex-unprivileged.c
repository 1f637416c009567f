// SPDX-License-Identifier: MIT
/*
 * An unprivileged user (uid and gid 65534, no capabilities) creates a
 * futex object, arms it privately and shared, and is woken.
 */
#include "lib/futex.h"

#include <sys/mman.h>

PT_BUDGET(30);

static int child(void *shm)
{
	uint32_t *w = shm;
	int dev, fd;

	if (geteuid() == 0)
		pt_become_nobody();
	dev = CHECK_SYS(open("/dev/pollfs", O_RDWR));
	{
		struct pollfs_open op = { .flags = POLLFS_NONBLOCK };

		fd = CHECK_SYS(ioctl(dev, POLLFS_IOC_FUTEX, &op));
	}
	CHECK_SYS(close(dev));
	for (int shared = 0; shared < 2; shared++) {
		uint32_t fl = shared ? FX_SHARED : FX_PRIVATE;

		fx_arm(fd, w, 4, fl);
		fx_expect_armed(fd);
		CHECK_EQ(fx_wake(w, INT_MAX, fl), 1);
		fx_expect_rec(fd, w, 4, fl);
	}
	CHECK_SYS(close(fd));
	return PT_PASS;
}

int main(void)
{
	uint32_t *shm;

	if (geteuid() != 0)
		pt_diag("not root: running as uid %d as it is", (int)getuid());
	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	shm[0] = 4;
	CHECK_EQ(pt_run_child(child, shm, 20000), PT_PASS);
	return PT_PASS;
}
