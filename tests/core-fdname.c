// SPDX-License-Identifier: MIT
/* readlink /proc/self/fd/N of a timer is "pollfs:[timer]". */
#include "lib/timer.h"

#include <stdio.h>

PT_BUDGET(50);

static void check_link(int fd, const char *want)
{
	char path[64], link[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = CHECK_SYS(readlink(path, link, sizeof(link) - 1));
	link[n] = 0;
	if (strcmp(link, want))
		FAIL("readlink(%s) = \"%s\", expected \"%s\"", path, link, want);
}

int main(void)
{
	int dev, t1, t2;

	dev = pt_dev();
	check_link(dev, "/dev/pollfs");
	t1 = tmr_new(0);
	t2 = tmr_new(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	check_link(t1, "pollfs:[timer]");
	check_link(t2, "pollfs:[timer]");
	tmr_arm(t1, CLOCK_MONOTONIC, 0, MS(1), MS(1));
	check_link(t1, "pollfs:[timer]");
	CHECK_SYS(close(t1));
	CHECK_SYS(close(t2));
	CHECK_SYS(close(dev));
	return PT_PASS;
}
