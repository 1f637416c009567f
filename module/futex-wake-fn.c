// SPDX-License-Identifier: GPL-2.0
/*
 * How a wake reaches a futex object on kernels whose futex_q has a wake
 * function (6.11 and later): every non-PI wake path calls q->wake() with
 * the hash-bucket lock held, before the waiter is unqueued.  Ours marks
 * the record, then has __futex_wake_mark() unqueue it as the kernel's
 * own would, except for a watched wait whose record a ring took, which
 * stays on its chain (futex.c).  No hook into the kernel is needed.
 */

#include "futex.h"

#ifndef POLLFS_FUTEX_WAKE_MARK
#error "this kernel's futex_q has a wake function but no __futex_wake_mark()"
#endif

struct pollfs_hook pollfs_futex_wake_hook =
	POLLFS_HOOK_INIT(pollfs_futex_wake_hook, "futex_q.wake");

/* The futex_q's wake function (a futex_wake_fn) of every armed record. */
static void pollfs_futex_wake(struct wake_q_head *wake_q, struct futex_q *q)
{
	if (!pollfs_futex_woken(pollfs_futex_wait_of(q)))
		pollfs_call(__futex_wake_mark)(q);
}

void pollfs_futex_set_wake(struct pollfs_futex_wait *w)
{
	*(void **)(w->q + FUTEX_Q_WAKE) = pollfs_futex_wake;
}
