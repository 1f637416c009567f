// SPDX-License-Identifier: MIT
/*
 * A periodic timer not read for several periods reports all its overruns
 * in one record, and the read consumes them.
 *
 * The count at a read is the number of periods elapsed since arming.  The
 * clock is read before and after arming and around each read, so the
 * upper bound is exact; the lower bound allows the guest to run the timer
 * late by PT_LAG.
 */
#include "lib/timer.h"

PT_BUDGET(50);

#define PERIOD MS(10)

static int64_t periods(int64_t ns)
{
	return ns > 0 ? ns / PERIOD : 0;
}

int main(void)
{
	struct pollfs_timer_event ev;
	int64_t a0, a1, r0, r1, s0, s1, n1, n2, lo, hi;
	int t;

	t = tmr_new(0);

	a0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, PERIOD, PERIOD);
	a1 = pt_mono();
	pt_sleep_ms(105);

	r0 = pt_mono();
	tmr_read_event(t, &ev);
	r1 = pt_mono();
	n1 = (int64_t)ev.expirations;
	lo = periods(r0 - a1 - PT_LAG);
	hi = periods(r1 - a0);
	pt_diag("first read: %lld expirations after %lld ms (expected %lld..%lld)",
		(long long)n1, (long long)((r0 - a0) / NSEC_PER_MSEC),
		(long long)lo, (long long)hi);
	CHECK_RANGE(n1, lo > 2 ? lo : 2, hi);
	CHECK_EQ(pt_ts_ns(&ev.interval), PERIOD);
	CHECK_RANGE(pt_ts_ns(&ev.remaining), 1, PERIOD);

	/* The next read counts only what expired since: the first count was
	 * consumed.  Together they are no more than the periods elapsed. */
	pt_sleep_ms(55);
	s0 = pt_mono();
	tmr_read_event(t, &ev);
	s1 = pt_mono();
	n2 = (int64_t)ev.expirations;
	pt_diag("second read: %lld expirations", (long long)n2);
	CHECK_RANGE(n2, 1, periods(s1 - r0) + 1);
	CHECK_RANGE(n1 + n2, periods(s0 - a1 - PT_LAG), periods(s1 - a0));

	/* Disarm: nothing pending remains. */
	tmr_disarm(t);
	pt_expect_empty(t);
	CHECK_SYS(close(t));
	return PT_PASS;
}
