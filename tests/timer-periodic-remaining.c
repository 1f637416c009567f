// SPDX-License-Identifier: MIT
/*
 * The record of a running periodic timer has remaining within
 * (0, interval] and interval equal to the period armed, also when the
 * first expiry differs from the period.
 */
#include "lib/timer.h"

PT_BUDGET(50);

static void check_reads(int t, int64_t first, int64_t period, int reads)
{
	struct pollfs_timer_event ev;
	int64_t a0, total = 0;

	a0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, first, period);
	for (int i = 0; i < reads; i++) {
		tmr_read_event(t, &ev);
		CHECK(ev.expirations >= 1);
		total += (int64_t)ev.expirations;
		CHECK_EQ(pt_ts_ns(&ev.interval), period);
		CHECK_RANGE(pt_ts_ns(&ev.remaining), 1, period);
		CHECK(ev.remaining.tv_nsec >= 0 &&
		      ev.remaining.tv_nsec < NSEC_PER_SEC);
		CHECK(ev.interval.tv_nsec >= 0 &&
		      ev.interval.tv_nsec < NSEC_PER_SEC);
	}
	/* never more expirations than could have happened */
	CHECK(total <= 1 + (pt_mono() - a0 - first) / period);
	tmr_disarm(t);
}

int main(void)
{
	int t;

	t = tmr_new(0);
	check_reads(t, MS(50), MS(50), 5);
	check_reads(t, MS(20), MS(100), 3);
	check_reads(t, MS(1), MS(1500), 2);	/* interval with whole seconds */
	check_reads(t, US(1), MS(5), 10);
	CHECK_SYS(close(t));
	return PT_PASS;
}
