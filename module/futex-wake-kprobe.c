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
 *
 * A watched wait whose record a ring took stays on its chain (futex.c):
 * the handler then makes futex_wake_mark() return at once, before its
 * first instruction, as the kernel's error injection does with
 * override_function_with_return() (which Debian's kernels do not build):
 * the waker goes on as if it had woken the wait, which it has.  As
 * fail_function's, the probe has a post handler that does nothing: it
 * keeps the probe from being optimized into a jump, which ignores a
 * changed instruction pointer, and arms an ftrace-based probe with
 * FTRACE_OPS_FL_IPMODIFY, so that another user of the function that
 * would run its body regardless (a livepatch, a BPF trampoline) is
 * refused, or told, rather than silently undoing the skip.
 */

#include <linux/kprobes.h>
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <linux/sched/task.h>

#include "futex.h"

#ifdef FUTEX_Q_WAKE
#error "this kernel's futex_q has a wake function: futex-wake-fn.c is its file"
#endif

#if defined(CONFIG_X86_64)
/* What the probed function's first instruction becomes: its return. */
asmlinkage void pollfs_just_return(void);
asm(".text\n"
	".type pollfs_just_return, @function\n"
	"pollfs_just_return:\n"
	ANNOTATE_NOENDBR
	ASM_RET
	".size pollfs_just_return, .-pollfs_just_return\n");

static void pollfs_return_at_once(struct pt_regs *regs)
{
	instruction_pointer_set(regs, (unsigned long)pollfs_just_return);
}
#elif defined(CONFIG_ARM64)
/* At a function's entry its return address is still in the link register. */
static void pollfs_return_at_once(struct pt_regs *regs)
{
	instruction_pointer_set(regs, procedure_link_pointer(regs));
}
#else
#error "pollfs cannot make a probed function return at once on this architecture"
#endif

/*
 * kprobe pre-handler of futex_wake_mark(wake_q, q).  Returning 1 after
 * changing the registers skips the function (the kprobe core then leaves
 * them as they are).
 */
static int pollfs_futex_wake_mark_probe(struct kprobe *kp,
					struct pt_regs *regs)
{
	void *q = (void *)regs_get_kernel_argument(regs, 1);

	if (READ_ONCE(*pollfs_futex_q_task(q)) != &init_task)
		return 0;
	if (!pollfs_futex_woken(pollfs_futex_wait_of(q)))
		return 0;
	pollfs_return_at_once(regs);
	return 1;
}

static void pollfs_futex_wake_mark_post(struct kprobe *kp,
					struct pt_regs *regs,
					unsigned long flags)
{
}

static struct kprobe pollfs_futex_kprobe = {
	.symbol_name	= "futex_wake_mark",
	.pre_handler	= pollfs_futex_wake_mark_probe,
	.post_handler	= pollfs_futex_wake_mark_post,
};

struct pollfs_hook pollfs_futex_wake_hook =
	POLLFS_HOOK_INIT(pollfs_futex_wake_hook, "futex_wake_mark",
			 .kprobe = &pollfs_futex_kprobe);

void pollfs_futex_set_wake(struct pollfs_futex_wait *w)
{
}
