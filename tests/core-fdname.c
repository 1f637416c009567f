// SPDX-License-Identifier: MIT
/* readlink /proc/self/fd/N of a timer is "pollfs:[timer]". */
#include "lib/timer.h"

#include <stdio.h>

PT_BUDGET(50);

int main(void)
{
	int dev, t1, t2;

	dev = pt_dev();
	pt_expect_fd_link(dev, "/dev/pollfs");
	t1 = tmr_new(0);
	t2 = tmr_new(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	pt_expect_fd_link(t1, "pollfs:[timer]");
	pt_expect_fd_link(t2, "pollfs:[timer]");
	tmr_arm(t1, CLOCK_MONOTONIC, 0, MS(1), MS(1));
	pt_expect_fd_link(t1, "pollfs:[timer]");
	CHECK_SYS(close(t1));
	CHECK_SYS(close(t2));
	CHECK_SYS(close(dev));
	return PT_PASS;
}
