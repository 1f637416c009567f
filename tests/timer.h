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

#endif /* POLLFS_TESTS_TIMER_H */
