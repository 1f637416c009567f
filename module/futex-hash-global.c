// SPDX-License-Identifier: GPL-2.0
/*
 * The futex object on kernels with one global futex hash (before 6.16):
 * no table to make, and nothing to track per address space: a wait left
 * queued when its process is gone stays valid, since the object holds
 * the mm its private key names (mmgrab) until the wait is taken off.
 */

#include "futex.h"

#ifdef POLLFS_FUTEX_Q_LOCK_HB
#error "this kernel's futex_q_lock() takes a bucket but it has no futex_hash()"
#endif

struct futex_hash_bucket *
pollfs_futex_q_lock(struct pollfs_futex_wait *w, struct futex_private_hash **fph)
{
	*fph = NULL;
	return pollfs_call(futex_q_lock)(pollfs_futex_wait_q(w));
}

void pollfs_futex_bucket_put(struct futex_private_hash *fph)
{
}

int pollfs_futex_track(struct pollfs_futex_ctx *f)
{
	return 0;
}

struct mutex *pollfs_futex_track_lock(struct pollfs_futex_ctx *f)
{
	return NULL;
}

void pollfs_futex_put_mm(struct pollfs_futex_ctx *f)
{
}

void pollfs_futex_sync_mm(void)
{
}
