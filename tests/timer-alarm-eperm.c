// SPDX-License-Identifier: MIT
/*
 * Arming an alarm clock (CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM)
 * without CAP_WAKE_ALARM gives EPERM and leaves the timer as it was;
 * other clocks work.  Checked as nobody (setuid 65534) and as root with
 * only CAP_WAKE_ALARM dropped from the effective set, where raising it
 * again makes the alarm clocks work.
 */
#include "lib/timer.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>

PT_BUDGET(50);

static const clockid_t alarms[] = { CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM };

static void set_wake_alarm(bool on)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0,
	};
	struct __user_cap_data_struct data[2];
	const int idx = CAP_TO_INDEX(CAP_WAKE_ALARM);
	const __u32 bit = CAP_TO_MASK(CAP_WAKE_ALARM);

	CHECK_SYS(syscall(SYS_capget, &hdr, data));
	if (on)
		data[idx].effective |= bit;
	else
		data[idx].effective &= ~bit;
	CHECK_SYS(syscall(SYS_capset, &hdr, data));
	CHECK_SYS(syscall(SYS_capget, &hdr, data));
	CHECK_EQ(!!(data[idx].effective & bit), on);
}

/* With no CAP_WAKE_ALARM: EPERM, relative and absolute, and a timer that
 * was armed stays armed as it was. */
static void check_eperm(void)
{
	struct pollfs_timer_event ev;
	int64_t t0;
	int t;

	t = tmr_new(POLLFS_NONBLOCK);
	for (size_t i = 0; i < 2; i++) {
		clockid_t base = pt_base_clock(alarms[i]);

		CHECK_ERR(tmr_set(t, alarms[i], 0, MS(10), 0), EPERM);
		CHECK_ERR(tmr_set(t, alarms[i], 0, MS(10), MS(10)), EPERM);
		CHECK_ERR(tmr_set(t, alarms[i], POLLFS_TIMER_ABSTIME,
				  pt_now(base) + MS(10), 0), EPERM);
	}
	pt_sleep_ms(50);
	pt_expect_empty(t);

	/* an armed timer is untouched by the refused writes */
	t0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(200), 0);
	CHECK_ERR(tmr_set(t, CLOCK_REALTIME_ALARM, 0, MS(1), 0), EPERM);
	CHECK_ERR(tmr_set(t, CLOCK_BOOTTIME_ALARM, 0, MS(1), 0), EPERM);
	pt_sleep_ms(50);
	if (pt_poll_in(t, 0))
		CHECK(pt_mono() - t0 >= MS(200));
	pt_wait_readable(t, PT_WAIT_MS);
	CHECK(pt_mono() - t0 >= MS(200));
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	CHECK_SYS(close(t));
}

static void check_works(void)
{
	struct pollfs_timer_event ev;
	int t = tmr_new(POLLFS_NONBLOCK);

	for (size_t i = 0; i < 2; i++) {
		tmr_arm(t, alarms[i], 0, MS(5), 0);
		pt_wait_readable(t, PT_WAIT_MS);
		tmr_read_event(t, &ev);
		tmr_check_oneshot(&ev);
	}
	CHECK_SYS(close(t));
}

static int as_nobody(void *unused)
{
	struct pollfs_timer_event ev;
	int t;

	(void)unused;
	pt_become_nobody();
	check_eperm();
	/* the same user can arm the other clocks */
	t = tmr_new(POLLFS_NONBLOCK);
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(5), 0);
	pt_wait_readable(t, PT_WAIT_MS);
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	tmr_arm(t, CLOCK_BOOTTIME, 0, MS(5), 0);
	pt_wait_readable(t, PT_WAIT_MS);
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	CHECK_SYS(close(t));
	return PT_PASS;
}

static int without_cap(void *unused)
{
	(void)unused;
	set_wake_alarm(false);
	check_eperm();
	set_wake_alarm(true);
	check_works();
	return PT_PASS;
}

int main(void)
{
	int fd;

	if (geteuid() != 0) {
		/* unprivileged already (tests/run -u): timerfd agrees */
		fd = timerfd_create(CLOCK_REALTIME_ALARM, TFD_CLOEXEC);
		if (fd >= 0 || errno != EPERM)
			pt_skip("not root, and timerfd_create(CLOCK_REALTIME_ALARM) "
				"does not fail with EPERM either: %d %s", fd,
				strerror(errno));
		pt_diag("not root: as uid %d as it is", (int)geteuid());
		return as_nobody(NULL);
	}
	fd = timerfd_create(CLOCK_REALTIME_ALARM, TFD_CLOEXEC);
	if (fd < 0)
		pt_skip("timerfd_create(CLOCK_REALTIME_ALARM): %s: no alarm clocks",
			strerror(errno));
	close(fd);

	/* root can use them: the refusals below are not for another reason */
	check_works();
	pt_diag("as nobody");
	CHECK_EQ(pt_run_child(as_nobody, NULL, 30000), PT_PASS);
	pt_diag("as root without CAP_WAKE_ALARM");
	CHECK_EQ(pt_run_child(without_cap, NULL, 30000), PT_PASS);
	return PT_PASS;
}
