// SPDX-License-Identifier: MIT
/*
 * POLLFS_TIMER_CANCEL_ON_SET (1.1) is valid only together with
 * POLLFS_TIMER_ABSTIME on CLOCK_REALTIME or CLOCK_REALTIME_ALARM:
 * without ABSTIME, or on CLOCK_MONOTONIC, CLOCK_BOOTTIME or
 * CLOCK_BOOTTIME_ALARM, the write gives EINVAL, whether it arms or
 * disarms (value {0,0}), and changes nothing: a disarmed timer stays
 * disarmed, an armed one keeps its arming and its pending count.
 * Unknown flag bits beside it: EINVAL too.  The valid combination is
 * accepted (the alarm clock as root with the alarm clocks, EPERM
 * without CAP_WAKE_ALARM as for any alarm timer).  Nothing needs root.
 */
#include "lib/timer.h"

PT_BUDGET(50);

#define CANCEL	POLLFS_TIMER_CANCEL_ON_SET
#define ABS	POLLFS_TIMER_ABSTIME

struct bad {
	clockid_t clk;
	unsigned int flags;
	bool zero;	/* value {0,0} */
};

static struct pollfs_timer_spec bad_spec(const struct bad *b)
{
	int64_t v = 0;

	if (!b->zero)
		v = (b->flags & ABS) ? pt_now(pt_base_clock(b->clk)) +
				       10 * NSEC_PER_SEC : 10 * NSEC_PER_SEC;
	return tmr_spec(b->clk, b->flags, v, b->zero ? 0 : MS(100));
}

int main(void)
{
	struct bad bad[64];
	struct pollfs_timer_event ev;
	struct pollfs_timer_spec s;
	size_t n = 0;
	bool alarm_ok = geteuid() == 0 && tmr_have_alarm();
	int64_t t0;
	int t;

	/* without ABSTIME, on any clock */
	static const clockid_t all[] = { CLOCK_REALTIME, CLOCK_MONOTONIC,
					 CLOCK_BOOTTIME };
	for (size_t i = 0; i < 3; i++)
		for (int z = 0; z < 2; z++)
			bad[n++] = (struct bad){ all[i], CANCEL, z };
	/* with ABSTIME, on the clocks that are not realtime */
	for (int z = 0; z < 2; z++) {
		bad[n++] = (struct bad){ CLOCK_MONOTONIC, CANCEL | ABS, z };
		bad[n++] = (struct bad){ CLOCK_BOOTTIME, CANCEL | ABS, z };
	}
	/* unknown bits beside it */
	for (int z = 0; z < 2; z++) {
		bad[n++] = (struct bad){ CLOCK_REALTIME, CANCEL | ABS | 0x4, z };
		bad[n++] = (struct bad){ CLOCK_REALTIME, CANCEL | 0x80000000u,
					 z };
		bad[n++] = (struct bad){ CLOCK_REALTIME, ~0u, z };
	}
	if (alarm_ok) {
		for (int z = 0; z < 2; z++) {
			bad[n++] = (struct bad){ CLOCK_BOOTTIME_ALARM,
						 CANCEL | ABS, z };
			bad[n++] = (struct bad){ CLOCK_BOOTTIME_ALARM, CANCEL,
						 z };
			bad[n++] = (struct bad){ CLOCK_REALTIME_ALARM, CANCEL,
						 z };
		}
	}

	/* a disarmed timer: refused, stays disarmed */
	t = tmr_new(POLLFS_NONBLOCK);
	for (size_t i = 0; i < n; i++) {
		s = bad_spec(&bad[i]);
		pt_diag("%s flags %#x value %s", pt_clock_name(bad[i].clk),
			bad[i].flags, bad[i].zero ? "0" : "set");
		CHECK_ERR(write(t, &s, sizeof(s)), EINVAL);
	}
	tmr_get(t, &ev);
	CHECK_EQ(ev.expirations, 0);
	CHECK_EQ(pt_ts_ns(&ev.remaining), 0);
	pt_expect_empty(t);

	/* an armed timer: refused, its arming and count kept */
	t0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(300), 0);
	for (size_t i = 0; i < n; i++) {
		s = bad_spec(&bad[i]);
		CHECK_ERR(write(t, &s, sizeof(s)), EINVAL);
	}
	tmr_get(t, &ev);
	CHECK_EQ(ev.expirations, 0);
	CHECK(pt_ts_ns(&ev.remaining) > 0);
	pt_wait_readable(t, PT_WAIT_MS);
	CHECK(pt_mono() >= t0 + MS(300));
	for (size_t i = 0; i < n; i++) {
		s = bad_spec(&bad[i]);
		CHECK_ERR(write(t, &s, sizeof(s)), EINVAL);
	}
	CHECK(pt_poll_in(t, 0));
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);

	/* the valid combination */
	s = tmr_spec(CLOCK_REALTIME, CANCEL | ABS,
		     pt_now(CLOCK_REALTIME) + 100 * NSEC_PER_SEC, 0);
	CHECK_EQ(write(t, &s, sizeof(s)), TMR_SPEC_SIZE);
	tmr_get(t, &ev);
	CHECK_RANGE(pt_ts_ns(&ev.remaining), 90 * NSEC_PER_SEC,
		    100 * NSEC_PER_SEC);
	/* and disarming with it */
	s = tmr_spec(CLOCK_REALTIME, CANCEL | ABS, 0, 0);
	CHECK_EQ(write(t, &s, sizeof(s)), TMR_SPEC_SIZE);
	tmr_get(t, &ev);
	CHECK_EQ(pt_ts_ns(&ev.remaining), 0);
	pt_expect_empty(t);

	s = tmr_spec(CLOCK_REALTIME_ALARM, CANCEL | ABS,
		     pt_now(CLOCK_REALTIME) + 100 * NSEC_PER_SEC, 0);
	if (alarm_ok) {
		CHECK_EQ(write(t, &s, sizeof(s)), TMR_SPEC_SIZE);
		tmr_get(t, &ev);
		CHECK_RANGE(pt_ts_ns(&ev.remaining), 90 * NSEC_PER_SEC,
			    100 * NSEC_PER_SEC);
		tmr_disarm(t);
	} else if (geteuid() != 0) {
		/* no CAP_WAKE_ALARM: as any alarm timer */
		CHECK_ERR(write(t, &s, sizeof(s)), EPERM);
	}
	pt_expect_empty(t);
	CHECK_SYS(close(t));
	return PT_PASS;
}
