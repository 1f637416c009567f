// SPDX-License-Identifier: MIT
/*
 * A timer has at most one record ready: a read with room for 4 records
 * (or for 1.5, or 2) returns exactly 40 bytes, holding every expiration,
 * and writes nothing past them.
 */
#include "lib/timer.h"

PT_BUDGET(50);

int main(void)
{
	static const size_t sizes[] = { 160, 60, 80, 4096 };
	unsigned char buf[4096];
	struct pollfs_timer_event ev;
	ssize_t r;
	int t;

	t = tmr_new(POLLFS_NONBLOCK);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		tmr_arm(t, CLOCK_MONOTONIC, 0, MS(2), MS(2));
		pt_sleep_ms(100);	/* many expirations pending */
		memset(buf, 0xa5, sizeof(buf));
		r = read(t, buf, sizes[i]);
		if (r != 40)
			FAIL("read(%zu): returned %zd, errno %d (%s), expected 40",
			     sizes[i], r, errno, strerror(errno));
		memcpy(&ev, buf, sizeof(ev));
		CHECK(ev.expirations >= 2);
		CHECK_EQ(pt_ts_ns(&ev.interval), MS(2));
		for (size_t j = 40; j < sizes[i]; j++)
			if (buf[j] != 0xa5)
				FAIL("read(%zu) wrote byte %zu", sizes[i], j);
		tmr_disarm(t);
		pt_expect_empty(t);
	}

	/* one-shot: one record, then EAGAIN even with room for many */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(1), 0);
	pt_wait_readable(t, PT_WAIT_MS);
	CHECK_EQ(read(t, buf, 160), 40);
	memcpy(&ev, buf, sizeof(ev));
	tmr_check_oneshot(&ev);
	CHECK_ERR(read(t, buf, 160), EAGAIN);
	CHECK_SYS(close(t));
	return PT_PASS;
}
