/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The small differences between the kernels pollfs builds for, each a
 * call of one shape: module/internals.list says which shape the target
 * has (from its BTF, never its version), and here is the one call site
 * that follows it.  A difference that makes a whole mechanism go another
 * way is a file of its own instead, which Kbuild chooses.
 */
#ifndef _POLLFS_COMPAT_H
#define _POLLFS_COMPAT_H

#include <linux/alarmtimer.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>

#include "ksyms.h"

/*
 * get_futex_key()'s second argument: bool fshared until 6.6, since 6.7
 * the FLAGS_* of kernel/futex/futex.h (an MMU kernel's), which BTF does
 * not carry.
 */
#define POLLFS_FUTEX_FLAGS_SIZE_32	0x0002
#define POLLFS_FUTEX_FLAGS_SHARED	0x0010

static inline int pollfs_get_futex_key(u32 __user *uaddr, bool shared,
				       union futex_key *key)
{
#ifdef POLLFS_FUTEX_KEY_FLAGS
	return pollfs_call(get_futex_key)(uaddr, POLLFS_FUTEX_FLAGS_SIZE_32 |
					  (shared ? POLLFS_FUTEX_FLAGS_SHARED : 0),
					  key, FUTEX_ACCESS_READ);
#else
	return pollfs_call(get_futex_key)(uaddr, shared, key,
					  FUTEX_ACCESS_READ);
#endif
}

/* Since 6.12.20 (a stable backport) __futex_queue() takes the task. */
static inline void pollfs_futex_queue(struct futex_q *q,
				      struct futex_hash_bucket *hb,
				      struct task_struct *task)
{
#ifdef POLLFS_FUTEX_QUEUE_TASK
	pollfs_call(__futex_queue)(q, hb, task);
#else
	pollfs_call(__futex_queue)(q, hb);
#endif
}

/* 6.5 dropped the vmas argument. */
static inline long pollfs_pin_page_remote(struct mm_struct *mm,
					  unsigned long addr,
					  struct page **page)
{
#if defined(POLLFS_PIN_REMOTE)
	return pin_user_pages_remote(mm, addr, 1, 0, page, NULL);
#elif defined(POLLFS_PIN_REMOTE_VMAS)
	return pin_user_pages_remote(mm, addr, 1, 0, page, NULL, NULL);
#else
#error "this kernel's pin_user_pages_remote() has a shape pollfs does not know"
#endif
}

/* 6.10 dropped the task: it was always current. */
static inline int pollfs_dequeue_signal(sigset_t *blocked,
					kernel_siginfo_t *info,
					enum pid_type *type)
{
#if defined(POLLFS_DEQUEUE_SIGNAL_CURRENT)
	return dequeue_signal(blocked, info, type);
#elif defined(POLLFS_DEQUEUE_SIGNAL_TASK)
	return dequeue_signal(current, blocked, info, type);
#else
#error "this kernel's dequeue_signal() has a shape pollfs does not know"
#endif
}

/* hrtimer_setup() replaced hrtimer_init() in 6.13. */
static inline void pollfs_hrtimer_setup(struct hrtimer *tmr,
					enum hrtimer_restart (*fn)(struct hrtimer *),
					clockid_t clockid,
					enum hrtimer_mode mode)
{
#ifdef POLLFS_HRTIMER_SETUP
	hrtimer_setup(tmr, fn, clockid, mode);
#else
	hrtimer_init(tmr, clockid, mode);
	tmr->function = fn;
#endif
}

/* Exported only where PREEMPT_RT or softirq-expiring timers need it. */
static inline void pollfs_hrtimer_cancel_wait(struct hrtimer *tmr)
{
#ifdef POLLFS_HRTIMER_CANCEL_WAIT
	pollfs_call(hrtimer_cancel_wait_running)(tmr);
#else
	hrtimer_cancel_wait_running(tmr);
#endif
}

/*
 * Start an alarm: false when it had expired already and was not armed.
 * Since alarm_start_timer() one that has expired is not armed (its
 * callback would take the caller's lock); before it, it always is.
 */
static inline bool pollfs_alarm_start(struct alarm *alarm, ktime_t expires,
				      bool relative)
{
#ifdef POLLFS_ALARM_START_TIMER
	return alarm_start_timer(alarm, expires, relative);
#else
	if (relative)
		alarm_start_relative(alarm, expires);
	else
		alarm_start(alarm, expires);
	return true;
#endif
}

/* 6.3 made vm_flags private to its helpers. */
static inline void pollfs_vma_flags_mod(struct vm_area_struct *vma,
					unsigned long set, unsigned long clear)
{
#if defined(VMA_FLAGS_PRIVATE) || defined(VMA_FLAGS_T)
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

#endif /* _POLLFS_COMPAT_H */
