// SPDX-License-Identifier: GPL-2.0
/*
 * How AIO objects hear of aio_complete()'s return where the kernel has
 * rethook (x86-64): an ftrace callback of pollfs's own at the entry (a
 * struct ftrace_ops filtered to aio_complete, with saved registers)
 * takes a node of its own rethook pool and hooks the return with it.
 * Rethook is the return trampoline of kretprobes, without the kprobe:
 * module/README.md says why neither a kretprobe nor an fprobe.
 *
 * The entry disables preemption until the return (aio.h says why): a
 * return pending when the rethook is freed would call no handler and
 * leave preemption off, but none is once the entry is unhooked.
 */

#include <linux/rethook.h>

#include "aio.h"

/*
 * What the hook needs, each refused by name: the kernel's config first,
 * then the shapes of rethook's functions in its BTF.
 */
#if !IS_ENABLED(CONFIG_DYNAMIC_FTRACE_WITH_REGS)
#error "AIO objects need CONFIG_DYNAMIC_FTRACE_WITH_REGS: the hook of aio_complete()'s return starts in an ftrace callback at its entry, and rethook_hook() needs that callback's saved registers"
#endif
#if !defined(POLLFS_RETHOOK_TRY_GET) || !defined(POLLFS_RETHOOK_HOOK) || \
	!defined(POLLFS_RETHOOK_FREE)
#error "this kernel's rethook_try_get(), rethook_hook() or rethook_free() has none of the shapes of module/internals.list"
#endif

/* A pending return of aio_complete(): what its iocb was. */
struct pollfs_aio_return {
	struct rethook_node node;
	void *ctx;
	bool poll;
};

static struct rethook *pollfs_aio_rethook;

/* Return of aio_complete(): ends what the entry began. */
static void pollfs_aio_complete_return(struct rethook_node *node, void *data,
				       struct pt_regs *regs)
{
	struct pollfs_aio_return *ret = container_of(node,
						     struct pollfs_aio_return,
						     node);

	pollfs_aio_completed(ret->ctx, ret->poll);
	preempt_enable_notrace();	/* disabled by the entry */
}

/*
 * The handler as this kernel's rethook calls it: later kernels pass the
 * return address too, which the rethook_handler_t of the headers the
 * module is built with tells.
 */
static void pollfs_aio_rethook_handler(struct rethook_node *node, void *data,
				       unsigned long ret_addr,
				       struct pt_regs *regs)
{
	pollfs_aio_complete_return(node, data, regs);
}

#define pollfs_aio_handler						\
	__builtin_choose_expr(						\
		__builtin_types_compatible_p(rethook_handler_t,		\
			typeof(&pollfs_aio_rethook_handler)),		\
		pollfs_aio_rethook_handler, pollfs_aio_complete_return)

/*
 * Entry of aio_complete(iocb), an ftrace callback: hook its return, with
 * preemption off until then.  Its ops does not ask for ftrace's
 * recursion protection (FTRACE_OPS_FL_RECURSION): called through the
 * ops' own trampoline it runs however it nests, and must, since an
 * aio_complete() inside another probe's handler is a real completion
 * (6.1's futex kprobe wakes an object whose poller may be an
 * IOCB_CMD_POLL, completed inline).  Nothing it calls completes AIO, so
 * it cannot recurse into itself.  Called through ftrace's list function
 * instead (when another ftrace user traces aio_complete() too), the
 * list's recursion test skips it inside another list-called callback of
 * the same context: that costs such a nested completion its wake-up (the
 * object sees it at the next).
 */
static void pollfs_aio_complete_entry(unsigned long ip, unsigned long parent_ip,
				      struct ftrace_ops *ops,
				      struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);
	void *iocb = (void *)regs_get_kernel_argument(regs, 0);
	struct pollfs_aio_return *ret;
	struct rethook_node *node;

	preempt_disable_notrace();
	node = pollfs_call(rethook_try_get)(pollfs_aio_rethook);
	if (unlikely(!node)) {
		pr_warn_once("more than %d AIO completions nested on one CPU: an AIO object may miss one\n",
			     POLLFS_AIO_RETURNS_PER_CPU);
		preempt_enable_notrace();
		return;
	}
	ret = container_of(node, struct pollfs_aio_return, node);
	ret->ctx = pollfs_aio_iocb_ctx(iocb);
	ret->poll = pollfs_aio_iocb_polls(iocb);
	pollfs_call(rethook_hook)(node, regs, true);
}

static struct ftrace_ops pollfs_aio_ftrace_ops = {
	.func	= pollfs_aio_complete_entry,
	.flags	= FTRACE_OPS_FL_SAVE_REGS,
};

static struct rethook *pollfs_aio_rethook_alloc(void)
{
	int num = POLLFS_AIO_RETURNS_PER_CPU * num_possible_cpus();
#ifdef POLLFS_RETHOOK_ALLOC_POOL
	return pollfs_call(rethook_alloc)(NULL, pollfs_aio_handler,
					  sizeof(struct pollfs_aio_return), num);
#elif defined(POLLFS_RETHOOK_ALLOC) && defined(POLLFS_RETHOOK_ADD_NODE)
	struct pollfs_aio_return *ret;
	struct rethook *rh;

	rh = pollfs_call(rethook_alloc)(NULL, pollfs_aio_handler);
	if (!rh)
		return ERR_PTR(-ENOMEM);
	while (num--) {
		ret = kzalloc(sizeof(*ret), GFP_KERNEL);
		if (!ret) {
			pollfs_call(rethook_free)(rh);
			return ERR_PTR(-ENOMEM);
		}
		pollfs_call(rethook_add_node)(rh, &ret->node);
	}
	return rh;
#else
#error "this kernel's rethook_alloc() makes no pool and has no rethook_add_node()"
#endif
}

static int pollfs_aio_hook_install(void)
{
	int err;

	pollfs_aio_rethook = pollfs_aio_rethook_alloc();
	if (IS_ERR(pollfs_aio_rethook))
		return PTR_ERR(pollfs_aio_rethook);
	err = pollfs_aio_entry_hook(&pollfs_aio_ftrace_ops);
	if (err)
		pollfs_call(rethook_free)(pollfs_aio_rethook);
	return err;
}

static void pollfs_aio_hook_remove(void)
{
	pollfs_aio_entry_unhook(&pollfs_aio_ftrace_ops);
	pollfs_call(rethook_free)(pollfs_aio_rethook);
}

struct pollfs_hook pollfs_aio_hook =
	POLLFS_HOOK_INIT(pollfs_aio_hook, "aio_complete",
			 .install = pollfs_aio_hook_install,
			 .remove = pollfs_aio_hook_remove);
