// SPDX-License-Identifier: MIT
/*
 * POLLFS_NONBLOCK sets O_NONBLOCK and a read of an empty object gives
 * EAGAIN; without it the read sleeps until a record is ready; setting
 * O_NONBLOCK later with fcntl makes the read give EAGAIN, and clearing it
 * makes it sleep again.
 */
#include "lib/timer.h"

PT_BUDGET(50);

static struct pollfs_timer_event ev;

/* A blocking read of a timer armed for `wait`: it must not return early. */
static void blocking_read(int t, int64_t wait)
{
	int64_t t0 = pt_mono();

	tmr_arm(t, CLOCK_MONOTONIC, 0, wait, 0);
	tmr_read_event(t, &ev);
	CHECK(pt_mono() - t0 >= wait);
	tmr_check_oneshot(&ev);
}

int main(void)
{
	char buf[40];
	int t, fl;

	t = tmr_new(POLLFS_NONBLOCK);
	CHECK(CHECK_SYS(fcntl(t, F_GETFL)) & O_NONBLOCK);
	CHECK_ERR(read(t, buf, sizeof(buf)), EAGAIN);
	/* armed, not yet expired: still EAGAIN */
	tmr_arm(t, CLOCK_MONOTONIC, 0, 10 * NSEC_PER_SEC, 0);
	CHECK_ERR(read(t, buf, sizeof(buf)), EAGAIN);
	CHECK_SYS(close(t));

	t = tmr_new(0);
	fl = CHECK_SYS(fcntl(t, F_GETFL));
	CHECK(!(fl & O_NONBLOCK));
	blocking_read(t, MS(100));

	CHECK_SYS(fcntl(t, F_SETFL, fl | O_NONBLOCK));
	CHECK_ERR(read(t, buf, sizeof(buf)), EAGAIN);
	tmr_arm(t, CLOCK_MONOTONIC, 0, 10 * NSEC_PER_SEC, 0);
	CHECK_ERR(read(t, buf, sizeof(buf)), EAGAIN);
	/* a ready record is returned all the same */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(1), 0);
	pt_wait_readable(t, PT_WAIT_MS);
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	CHECK_ERR(read(t, buf, sizeof(buf)), EAGAIN);

	CHECK_SYS(fcntl(t, F_SETFL, fl));
	blocking_read(t, MS(100));
	CHECK_SYS(close(t));
	return PT_PASS;
}
