// SPDX-License-Identifier: MIT
/* Unknown ioctls, on /dev/pollfs and on an object, fail with ENOTTY. */
#include "lib/timer.h"

#include <termios.h>

PT_BUDGET(50);

int main(void)
{
	/* Each argument points at valid zeroed memory, so that EFAULT or
	 * EINVAL cannot stand in for ENOTTY. */
	static unsigned char arg[256];
	const unsigned long unknown[] = {
		_IO(POLLFS_IOC_MAGIC, 0),
		_IOW(POLLFS_IOC_MAGIC, 0, struct pollfs_open),
		_IOW(POLLFS_IOC_MAGIC, 5, struct pollfs_open),
		_IOW(POLLFS_IOC_MAGIC, 255, struct pollfs_open),
		/* a known number with the wrong size or direction */
		_IOW(POLLFS_IOC_MAGIC, 2, struct pollfs_signal_open),
		_IOR(POLLFS_IOC_MAGIC, 2, struct pollfs_open),
		_IOWR(POLLFS_IOC_MAGIC, 2, struct pollfs_open),
		_IO(POLLFS_IOC_MAGIC, 2),
		/* another driver's numbers */
		TCGETS,
		FIONREAD,
		_IOW('T', 0xB8, int),
	};
	int dev, t, probe;

	dev = pt_dev();
	probe = CHECK_SYS(dup(dev));
	CHECK_SYS(close(probe));
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		pt_diag("ioctl %#lx on /dev/pollfs", unknown[i]);
		CHECK_ERR(ioctl(dev, unknown[i], arg), ENOTTY);
	}
	/* nothing was created by the failed calls */
	CHECK_EQ(CHECK_SYS(dup(dev)), probe);
	CHECK_SYS(close(probe));

	/* An object has no ioctls of its own, not even the creating ones. */
	t = tmr_new(0);
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		pt_diag("ioctl %#lx on a timer", unknown[i]);
		CHECK_ERR(ioctl(t, unknown[i], arg), ENOTTY);
	}
	CHECK_ERR(ioctl(t, POLLFS_IOC_TIMER, arg), ENOTTY);
	CHECK_SYS(close(t));
	CHECK_SYS(close(dev));
	return PT_PASS;
}
