// SPDX-License-Identifier: MIT
/* An object cannot seek: lseek gives ESPIPE, whatever its state. */
#include "lib/timer.h"

PT_BUDGET(50);

static void check_lseek(int fd)
{
	CHECK_ERR(lseek(fd, 0, SEEK_SET), ESPIPE);
	CHECK_ERR(lseek(fd, 0, SEEK_CUR), ESPIPE);
	CHECK_ERR(lseek(fd, 0, SEEK_END), ESPIPE);
	CHECK_ERR(lseek(fd, 40, SEEK_SET), ESPIPE);
	CHECK_ERR(lseek(fd, -40, SEEK_CUR), ESPIPE);
}

int main(void)
{
	struct pollfs_timer_event ev;
	int t;

	t = tmr_new(POLLFS_NONBLOCK);
	check_lseek(t);
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(1), 0);
	pt_wait_readable(t, PT_WAIT_MS);
	check_lseek(t);
	/* the record is still there, untouched */
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	check_lseek(t);
	CHECK_SYS(close(t));
	return PT_PASS;
}
