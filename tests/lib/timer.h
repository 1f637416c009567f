/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the timer object's tests, and of the tests that use a timer
 * as their sample object (core-*, module-*, leak-slab, memcg-limit):
 * creating, arming and reading timers.  Include it instead of lib.h.
 */
#ifndef POLLFS_TESTS_TIMER_H
#define POLLFS_TESTS_TIMER_H

#include "lib.h"

#define TMR_SPEC_SIZE	((ssize_t)sizeof(struct pollfs_timer_spec))
#define TMR_EVENT_SIZE	((ssize_t)sizeof(struct pollfs_timer_event))

_Static_assert(sizeof(struct pollfs_timer_spec) == 40, "timer spec size");
_Static_assert(sizeof(struct pollfs_timer_event) == 40, "timer event size");

/* POLLFS_IOC_TIMER; returns the fd, or -1 with errno. */
int tmr_try(unsigned int flags);
/* POLLFS_IOC_TIMER, failing the test if it fails. */
#define tmr_new(flags) tmr_new_at(__FILE__, __LINE__, (flags))
int tmr_new_at(const char *file, int line, unsigned int flags);

struct pollfs_timer_spec tmr_spec(clockid_t clk, unsigned int flags,
				  int64_t value_ns, int64_t interval_ns);
/* Writes one spec; returns what write() returned (errno kept). */
ssize_t tmr_set(int fd, clockid_t clk, unsigned int flags,
		int64_t value_ns, int64_t interval_ns);
/* Writes one spec and checks that all 40 bytes were accepted. */
#define tmr_arm(fd, clk, flags, value_ns, interval_ns)			\
	tmr_arm_at(__FILE__, __LINE__, (fd), (clk), (flags),		\
		   (value_ns), (interval_ns))
void tmr_arm_at(const char *file, int line, int fd, clockid_t clk,
		unsigned int flags, int64_t value_ns, int64_t interval_ns);
#define tmr_disarm(fd) tmr_arm(fd, CLOCK_MONOTONIC, 0, 0, 0)

/* Reads one record, failing unless read() returns exactly 40 bytes. */
#define tmr_read_event(fd, ev)						\
	tmr_read_event_at(__FILE__, __LINE__, (fd), (ev))
void tmr_read_event_at(const char *file, int line, int fd,
		       struct pollfs_timer_event *ev);
/* Fails unless a one-shot event: expirations 1, remaining 0, interval 0. */
#define tmr_check_oneshot(ev) tmr_check_oneshot_at(__FILE__, __LINE__, (ev))
void tmr_check_oneshot_at(const char *file, int line,
			  const struct pollfs_timer_event *ev);

/* ---- 1.1: POLLFS_IOC_TIMER_GET ---- */

/* ioctl(fd, POLLFS_IOC_TIMER_GET, ev); returns what ioctl returned. */
int tmr_get_try(int fd, struct pollfs_timer_event *ev);
/*
 * POLLFS_IOC_TIMER_GET, failing unless it returns 0 with a well-formed
 * record: both timespecs with tv_sec >= 0 and tv_nsec in [0, 1e9).
 */
#define tmr_get(fd, ev) tmr_get_at(__FILE__, __LINE__, (fd), (ev))
void tmr_get_at(const char *file, int line, int fd,
		struct pollfs_timer_event *ev);

/* ---- 1.1: setting the realtime clock (root) ---- */

/*
 * tmr_real_save() notes the realtime and monotonic clocks, and makes a
 * failing check restore the realtime clock (pt_on_fail);
 * tmr_real_restore() sets the realtime clock to where it would be had
 * no one set it since (saved realtime + monotonic time since);
 * tmr_real_step(delta) sets it delta ns from where it is now, failing
 * the test if clock_settime fails.  Async-signal-safe but for the step.
 */
void tmr_real_save(void);
void tmr_real_restore(void);
#define tmr_real_step(delta) tmr_real_step_at(__FILE__, __LINE__, (delta))
void tmr_real_step_at(const char *file, int line, int64_t delta);

/* True if this kernel has the alarm clocks and we may use them. */
bool tmr_have_alarm(void);

#endif /* POLLFS_TESTS_TIMER_H */
