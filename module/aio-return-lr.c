// SPDX-License-Identifier: GPL-2.0
/*
 * How AIO objects hear of aio_complete()'s return on arm64, which has no
 * rethook: an ftrace callback at the entry swaps the return address in
 * the link register for pollfs_aio_return_trampoline and keeps the
 * caller's on a stack of this CPU's, as the function-graph tracer does
 * with return_to_handler.  arm64's ftrace_caller hands its callbacks the
 * callsite's link register in its ftrace_regs (in their pt_regs with
 * DYNAMIC_FTRACE_WITH_REGS, before 6.2) and loads it back from there
 * after them, before aio_complete()'s first instruction, which (with
 * pointer authentication) signs whatever it finds there.
 *
 * Not a kretprobe, though arm64's have a trampoline of their own: its
 * handler runs with the kretprobe as the CPU's running kprobe, and the
 * kprobe core skips as recursion every probe hit meanwhile, so the entry
 * of an aio_complete() called there, an IOCB_CMD_POLL completed inline
 * by our own wake-up or an interrupt's completion landing while the
 * trampoline runs, would go unseen.  Not the function-graph tracer:
 * 6.12's passes its entry callback no arguments, so not the iocb.
 *
 * Preemption is off from the entry to the return (aio.h), so the returns
 * pending on a CPU nest strictly: an interrupt's aio_complete() returns
 * before the one it interrupted.  Their stack is a per-CPU array, each
 * push and pop with interrupts off.  aio_complete() returns nothing
 * (internals.list checks its prototype), so the trampoline keeps no
 * register of its: it calls pollfs_aio_returned(), which wakes the
 * objects and gives back the caller's address, and returns there.
 */

#include <linux/linkage.h>
#include <linux/percpu.h>

#include "aio.h"

#ifndef CONFIG_ARM64
#error "AIO objects need CONFIG_RETHOOK to hook aio_complete()'s return, or arm64's link register: this kernel has neither"
#endif

/* A pending return of aio_complete(). */
struct pollfs_aio_pending {
	unsigned long caller;	/* where it returns to */
	unsigned long sp;	/* the stack pointer there */
	void *ctx;
	bool poll;
};

struct pollfs_aio_returns {
	unsigned int depth;
	struct pollfs_aio_pending pending[POLLFS_AIO_RETURNS_PER_CPU];
};

static DEFINE_PER_CPU(struct pollfs_aio_returns, pollfs_aio_returns);

asmlinkage void pollfs_aio_return_trampoline(void);
asmlinkage unsigned long pollfs_aio_returned(unsigned long sp);

/*
 * Where aio_complete() returns to instead of its caller: a frame record,
 * for whatever unwinds the stack meanwhile, then a call to
 * pollfs_aio_returned() with the stack pointer the caller had, and a
 * return to the address it gives.
 */
asm(".pushsection .text\n"
	".type pollfs_aio_return_trampoline, %function\n"
	"pollfs_aio_return_trampoline:\n"
	"	mov	x0, sp\n"
	"	stp	x29, x30, [sp, #-16]!\n"
	"	mov	x29, sp\n"
	"	bl	pollfs_aio_returned\n"
	"	ldp	x29, x30, [sp], #16\n"
	"	ret	x0\n"
	".size pollfs_aio_return_trampoline, .-pollfs_aio_return_trampoline\n"
	".popsection\n");

/*
 * Where ftrace_caller keeps the link register it restores, the callsite's
 * stack pointer and the first argument.
 */
#if IS_ENABLED(CONFIG_DYNAMIC_FTRACE_WITH_ARGS)
#define POLLFS_AIO_FTRACE_FLAGS	0

static unsigned long *pollfs_ftrace_lr(struct ftrace_regs *fregs)
{
#ifdef arch_ftrace_regs
	return &arch_ftrace_regs(fregs)->lr;
#else
	return &fregs->lr;
#endif
}

static unsigned long pollfs_ftrace_sp(struct ftrace_regs *fregs)
{
	return ftrace_regs_get_stack_pointer(fregs);
}

static void *pollfs_ftrace_arg0(struct ftrace_regs *fregs)
{
	return (void *)ftrace_regs_get_argument(fregs, 0);
}
#elif IS_ENABLED(CONFIG_DYNAMIC_FTRACE_WITH_REGS)
#define POLLFS_AIO_FTRACE_FLAGS	FTRACE_OPS_FL_SAVE_REGS

static unsigned long *pollfs_ftrace_lr(struct ftrace_regs *fregs)
{
	return (unsigned long *)&ftrace_get_regs(fregs)->regs[30];
}

static unsigned long pollfs_ftrace_sp(struct ftrace_regs *fregs)
{
	return ftrace_get_regs(fregs)->sp;
}

static void *pollfs_ftrace_arg0(struct ftrace_regs *fregs)
{
	return (void *)ftrace_get_regs(fregs)->regs[0];
}
#else
#error "AIO objects need CONFIG_DYNAMIC_FTRACE_WITH_ARGS or _WITH_REGS on arm64: the hook of aio_complete()'s return swaps the link register that ftrace_caller passes its callbacks and restores"
#endif

/*
 * Return of aio_complete(), from the trampoline: ends what the entry
 * began.  The top of the stack is this return's: @sp tells.
 */
asmlinkage unsigned long pollfs_aio_returned(unsigned long sp)
{
	struct pollfs_aio_returns *rets = this_cpu_ptr(&pollfs_aio_returns);
	struct pollfs_aio_pending ret;
	unsigned long flags;

	local_irq_save(flags);
	ret = rets->pending[--rets->depth];
	local_irq_restore(flags);
	WARN_ON_ONCE(ret.sp != sp);
	pollfs_aio_completed(ret.ctx, ret.poll);
	preempt_enable_notrace();	/* disabled by the entry */
	return ret.caller;
}

/*
 * Entry of aio_complete(iocb), an ftrace callback: hook its return, with
 * preemption off until then.  As aio-return-rethook.c's, its ops asks
 * for no recursion protection: nothing it calls completes AIO, and an
 * aio_complete() inside another probe's handler is a real completion.
 */
static void pollfs_aio_complete_entry(unsigned long ip, unsigned long parent_ip,
				      struct ftrace_ops *ops,
				      struct ftrace_regs *fregs)
{
	void *iocb = pollfs_ftrace_arg0(fregs);
	unsigned long *lr = pollfs_ftrace_lr(fregs);
	struct pollfs_aio_returns *rets;
	struct pollfs_aio_pending *ret;
	unsigned long flags;

	preempt_disable_notrace();
	rets = this_cpu_ptr(&pollfs_aio_returns);
	local_irq_save(flags);
	if (unlikely(rets->depth == POLLFS_AIO_RETURNS_PER_CPU)) {
		local_irq_restore(flags);
		pr_warn_once("more than %d AIO completions nested on one CPU: an AIO object may miss one\n",
			     POLLFS_AIO_RETURNS_PER_CPU);
		preempt_enable_notrace();
		return;
	}
	/* An interrupt from here on pushes and pops above this slot. */
	ret = &rets->pending[rets->depth++];
	local_irq_restore(flags);
	ret->caller = *lr;
	ret->sp = pollfs_ftrace_sp(fregs);
	ret->ctx = pollfs_aio_iocb_ctx(iocb);
	ret->poll = pollfs_aio_iocb_polls(iocb);
	*lr = (unsigned long)pollfs_aio_return_trampoline;
}

static struct ftrace_ops pollfs_aio_ftrace_ops = {
	.func	= pollfs_aio_complete_entry,
	.flags	= POLLFS_AIO_FTRACE_FLAGS,
};

static int pollfs_aio_hook_install(void)
{
	return pollfs_aio_entry_hook(&pollfs_aio_ftrace_ops);
}

/*
 * Once the entry is unhooked no return is pending, but a task may have
 * been interrupted on the trampoline's last instructions, after
 * pollfs_aio_returned() let preemption back on: it has left them at its
 * next voluntary switch (Tasks RCU), and then the module's text may go.
 */
static void pollfs_aio_hook_remove(void)
{
	pollfs_aio_entry_unhook(&pollfs_aio_ftrace_ops);
	synchronize_rcu_tasks();
}

struct pollfs_hook pollfs_aio_hook =
	POLLFS_HOOK_INIT(pollfs_aio_hook, "aio_complete",
			 .install = pollfs_aio_hook_install,
			 .remove = pollfs_aio_hook_remove);
