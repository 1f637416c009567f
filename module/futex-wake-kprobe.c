// SPDX-License-Identifier: GPL-2.0
/*
 * How a wake reaches a futex object on kernels whose futex_q has no wake
 * function (before 6.11): a kprobe on futex_wake_mark(), the one
 * function every non-PI wake path calls for each waiter it wakes, with
 * the hash-bucket lock held, before the waiter is unqueued.
 *
 * Our futex_q names init_task as the task to wake (futex.c): no user
 * task ever is init_task, so the handler tells our waiters from all
 * others by that pointer alone, and the wake_up_process() that
 * futex_wake_mark() then queues for it is a no-op.  The probe costs
 * every futex wake in the system a call: it goes in with the first
 * futex object, before any can be armed.
 */

#include <linux/kprobes.h>
#include <linux/sched/task.h>

#include "futex.h"

#ifdef FUTEX_Q_WAKE
#error "this kernel's futex_q has a wake function: futex-wake-fn.c is its file"
#endif

/* kprobe pre-handler of futex_wake_mark(wake_q, q). */
static int pollfs_futex_wake_mark_probe(struct kprobe *kp,
					struct pt_regs *regs)
{
	void *q = (void *)regs_get_kernel_argument(regs, 1);

	if (READ_ONCE(*q_task(q)) == &init_task)
		pollfs_futex_woken(q);
	return 0;
}

static struct kprobe pollfs_futex_kprobe = {
	.symbol_name	= "futex_wake_mark",
	.pre_handler	= pollfs_futex_wake_mark_probe,
};

struct pollfs_hook pollfs_futex_wake_hook =
	POLLFS_HOOK_INIT(pollfs_futex_wake_hook,
			 .kprobe = &pollfs_futex_kprobe);

void pollfs_futex_set_wake(struct pollfs_futex_wait *w)
{
}
