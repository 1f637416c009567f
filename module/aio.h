/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The AIO object's parts.  aio.c is the object: its hub on the context's
 * wait queue, its reads and polls.  What tells it of a completion is a
 * hook of aio_complete()'s return, whose means differ by architecture;
 * Kbuild chooses the file from the target's config:
 *
 *   aio-return-rethook.c  rethook, from an ftrace callback at the entry
 *                         (CONFIG_RETHOOK: x86-64)
 *   aio-return-lr.c       the return address swapped in the link
 *                         register that ftrace restores (arm64, which
 *                         has no rethook)
 *
 * Either one disables preemption from the entry to the return, so that
 * what is pending on a CPU is the completions nested there, a handful,
 * and never a task preempted inside aio_complete(): its store of pending
 * returns, shared by every user, holds POLLFS_AIO_RETURNS_PER_CPU of
 * them.  The first completion that finds it full all the same is told
 * in the kernel log; that completion wakes no object.
 */
#ifndef _POLLFS_AIO_H
#define _POLLFS_AIO_H

#include <linux/ftrace.h>

#include "core.h"
#include "ksyms.h"

#define POLLFS_AIO_RETURNS_PER_CPU	64

#ifndef POLLFS_AIO_COMPLETE
#error "this kernel's aio_complete() is inlined: AIO objects could not see completions"
#endif

/* The hook each file defines, installed before the first AIO object. */
extern struct pollfs_hook pollfs_aio_hook;

/* A completion of @ctx is in its ring (aio.c); @poll: an IOCB_CMD_POLL's. */
void pollfs_aio_completed(void *ctx, bool poll);

/* @ops on aio_complete()'s entry, and off it (aio.c). */
int pollfs_aio_entry_hook(struct ftrace_ops *ops);
void pollfs_aio_entry_unhook(struct ftrace_ops *ops);

/*
 * What the entry of aio_complete(iocb) notes for its return: the
 * iocb's context, which the iocb holds until after that return, and
 * whether it is a poll iocb, whose wait entry's function is
 * aio_poll_wake(): aio_poll() sets it before the iocb can be woken, and
 * nothing changes it.  The word is another member of the union in a
 * read or write iocb; stale bytes of an earlier poll iocb there make a
 * read or write complete through the hop, never the other way round.
 */
static inline void *pollfs_aio_iocb_ctx(void *iocb)
{
	return *(void **)(iocb + AIO_KIOCB_CTX);
}

static inline bool pollfs_aio_iocb_polls(void *iocb)
{
	wait_queue_entry_t *wait = iocb + AIO_KIOCB_POLL + POLL_IOCB_WAIT;

	return READ_ONCE(wait->func) == pollfs_ksyms.aio_poll_wake;
}

#endif /* _POLLFS_AIO_H */
