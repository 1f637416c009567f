// SPDX-License-Identifier: MIT
/*
 * An unprivileged user (uid and gid 65534, no capabilities) can open
 * /dev/pollfs, create a timer and use it.
 */
#include "lib/timer.h"

PT_BUDGET(50);

static int child(void *unused)
{
	struct pollfs_timer_event ev;
	int64_t t0;
	int dev, t;

	(void)unused;
	if (geteuid() == 0)
		pt_become_nobody();
	dev = CHECK_SYS(open("/dev/pollfs", O_RDWR));
	{
		struct pollfs_open op = { .flags = 0, .reserved = 0 };

		t = CHECK_SYS(ioctl(dev, POLLFS_IOC_TIMER, &op));
	}
	CHECK_SYS(close(dev));

	t0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(5), 0);
	tmr_read_event(t, &ev);
	CHECK(pt_mono() - t0 >= MS(5));
	tmr_check_oneshot(&ev);
	CHECK_SYS(close(t));
	return PT_PASS;
}

int main(void)
{
	int r;

	if (geteuid() != 0)
		pt_diag("not root: running as uid %d as it is", (int)getuid());
	r = pt_run_child(child, NULL, 30000);
	CHECK_EQ(r, PT_PASS);
	return PT_PASS;
}
