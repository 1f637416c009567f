// SPDX-License-Identifier: MIT
/*
 * Invalid specs give EINVAL and change nothing: a timespec with tv_nsec
 * outside [0, 1e9) or a negative tv_sec (in value or interval), a clock
 * that is not one of the five timer clocks, unknown flag bits.
 */
#include "lib/timer.h"

#include <stdio.h>

PT_BUDGET(50);

struct bad {
	const char *what;
	struct pollfs_timer_spec spec;
};

int main(void)
{
	struct bad bad[32];
	struct pollfs_timer_event ev;
	struct pollfs_timer_spec s;
	const clockid_t bad_clocks[] = {
		CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID,
		CLOCK_MONOTONIC_RAW, CLOCK_REALTIME_COARSE,
		CLOCK_MONOTONIC_COARSE, CLOCK_TAI, 99, -1, 12, 1000,
		(clockid_t)0x80000000u,
	};
	const unsigned int bad_flags[] = { 0x2, 0x4, 0x80000000u, ~0u };
	char what[32][48];
	size_t n = 0;
	int64_t t0;
	int t;

#define ADD(desc, ...) do {						\
	s = tmr_spec(CLOCK_MONOTONIC, 0, MS(5), MS(5));			\
	__VA_ARGS__;							\
	bad[n].what = desc;						\
	bad[n++].spec = s;						\
} while (0)
	ADD("value.tv_nsec = 1e9", s.value.tv_nsec = NSEC_PER_SEC);
	ADD("value.tv_nsec = -1", s.value.tv_nsec = -1);
	ADD("value.tv_nsec = 2^32", s.value.tv_nsec = 1LL << 32);
	ADD("value.tv_sec = -1", s.value.tv_sec = -1);
	ADD("value = {-1, 0}", s.value.tv_sec = -1; s.value.tv_nsec = 0);
	ADD("value.tv_sec = INT64_MIN", s.value.tv_sec = INT64_MIN);
	ADD("interval.tv_nsec = 1e9", s.interval.tv_nsec = NSEC_PER_SEC);
	ADD("interval.tv_nsec = -1", s.interval.tv_nsec = -1);
	ADD("interval.tv_sec = -1", s.interval.tv_sec = -1);
	ADD("abstime value.tv_nsec = 1e9",
	    s.flags = POLLFS_TIMER_ABSTIME; s.value.tv_sec = 1;
	    s.value.tv_nsec = NSEC_PER_SEC);
	for (size_t i = 0; i < sizeof(bad_clocks) / sizeof(bad_clocks[0]); i++) {
		snprintf(what[n], sizeof(what[n]), "clockid %d", (int)bad_clocks[i]);
		ADD(what[n], s.clockid = bad_clocks[i]);
	}
	for (size_t i = 0; i < sizeof(bad_flags) / sizeof(bad_flags[0]); i++) {
		snprintf(what[n], sizeof(what[n]), "flags %#x", bad_flags[i]);
		ADD(what[n], s.flags = bad_flags[i]);
	}
#undef ADD

	/* on a disarmed timer: refused, and it stays disarmed */
	t = tmr_new(POLLFS_NONBLOCK);
	for (size_t i = 0; i < n; i++) {
		pt_diag("%s", bad[i].what);
		CHECK_ERR(write(t, &bad[i].spec, sizeof(bad[i].spec)), EINVAL);
	}
	CHECK(!pt_poll_in(t, 100));
	pt_expect_empty(t);

	/* on an armed timer: refused, and its arming and count are kept */
	t0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(300), 0);
	for (size_t i = 0; i < n; i++)
		CHECK_ERR(write(t, &bad[i].spec, sizeof(bad[i].spec)), EINVAL);
	pt_wait_readable(t, PT_WAIT_MS);
	CHECK(pt_mono() >= t0 + MS(300));
	for (size_t i = 0; i < n; i++)
		CHECK_ERR(write(t, &bad[i].spec, sizeof(bad[i].spec)), EINVAL);
	CHECK(pt_poll_in(t, 0));
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);

	/* the limits themselves are valid */
	s = tmr_spec(CLOCK_MONOTONIC, 0, 0, 0);
	s.value.tv_nsec = NSEC_PER_SEC - 1;
	s.interval.tv_nsec = NSEC_PER_SEC - 1;
	CHECK_EQ(write(t, &s, sizeof(s)), 40);
	s.value.tv_sec = 1000000;	/* 11 days away */
	CHECK_EQ(write(t, &s, sizeof(s)), 40);
	tmr_disarm(t);
	CHECK_SYS(close(t));
	return PT_PASS;
}
