// SPDX-License-Identifier: MIT
/*
 * A read whose buffer is smaller than one record (40 bytes for a timer)
 * gives EINVAL, before anything else: on an empty non-blocking object
 * (not EAGAIN), on an empty blocking one (without sleeping), and on one
 * with a ready record, which it leaves in place.
 */
#include "lib/timer.h"

PT_BUDGET(50);

static const size_t sizes[] = { 0, 1, 8, 16, 39 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

int main(void)
{
	struct pollfs_timer_event ev;
	char buf[64];
	int t;

	t = tmr_new(POLLFS_NONBLOCK);
	for (size_t i = 0; i < NSIZES; i++)
		CHECK_ERR(read(t, buf, sizes[i]), EINVAL);
	CHECK_SYS(close(t));

	/* blocking and empty: must fail at once, not sleep (watchdog) */
	t = tmr_new(0);
	for (size_t i = 0; i < NSIZES; i++)
		CHECK_ERR(read(t, buf, sizes[i]), EINVAL);
	tmr_arm(t, CLOCK_MONOTONIC, 0, 100 * NSEC_PER_SEC, 0);
	for (size_t i = 0; i < NSIZES; i++)
		CHECK_ERR(read(t, buf, sizes[i]), EINVAL);

	/* a ready record survives the short reads */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(1), 0);
	pt_wait_readable(t, PT_WAIT_MS);
	for (size_t i = 0; i < NSIZES; i++)
		CHECK_ERR(read(t, buf, sizes[i]), EINVAL);
	CHECK(pt_poll_in(t, 0));
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	pt_expect_empty(t);
	CHECK_SYS(close(t));
	return PT_PASS;
}
