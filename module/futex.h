/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The futex object's parts.  futex.c is the object: its records, its
 * states, its reads and writes.  How a wake reaches it, and the hash its
 * waits are queued on, differ by kernel; Kbuild chooses one file of each
 * pair from the target's BTF:
 *
 *   futex-wake-fn.c       futex_q's own wake function (6.11 and later)
 *   futex-wake-kprobe.c   a kprobe on futex_wake_mark() (before 6.11)
 *   futex-hash-private.c  a table per process, and an mmu_notifier that
 *                         takes waits off at its end (6.16 and later)
 *   futex-hash-global.c   the one global table (before 6.16)
 */
#ifndef _POLLFS_FUTEX_H
#define _POLLFS_FUTEX_H

#include <linux/mutex.h>	/* before futex.h, which needs it since 6.12 */
#include <linux/futex.h>
#include <linux/irq_work.h>
#include <linux/workqueue.h>
#include <linux/pollfs.h>

#include "core.h"
#include "ksyms.h"

struct futex_private_hash;
struct pollfs_futex_mm;

/* One armed record: the kernel's futex_q and what it was armed with. */
struct pollfs_futex_wait {
	u8 q[FUTEX_Q_SIZE] __aligned(sizeof(void *));
	struct pollfs_futex_ctx *owner;
	struct pollfs_futex_event ev;
	union futex_key key;	/* of ev.addr in the writer's mm */
	struct page *page;	/* a watched word's, pinned while armed */
	u64 woken_seq;		/* when it was woken: records go oldest first */
	bool queued;		/* futex_unqueue() still owed */
	bool woken;		/* set by the wake hook under the bucket lock */
};

/*
 * A record of a write, checked, keyed and (if watched) pinned before the
 * object's lock is taken, which the write then holds only for the
 * kernel's own work.
 */
struct pollfs_futex_staged {
	struct pollfs_futex_event ev;
	union futex_key key;
	struct page *page;
};

enum pollfs_futex_state {
	POLLFS_FUTEX_UNARMED,
	POLLFS_FUTEX_ARMED,	/* waits queued; FIRED once one was woken */
	POLLFS_FUTEX_PENDING,	/* disarmed, woken records left to read */
};

struct pollfs_futex_ctx {
	struct pollfs_object obj;
	wait_queue_head_t wqh;	/* its lock: @state, and what fdinfo shows */
	enum pollfs_futex_state state;
	unsigned long fired;	/* POLLFS_FUTEX_FIRED, _MISSED, ... */
	atomic64_t wake_seq;	/* the woken records' order */
	unsigned int generation;	/* of the arming, counted by writes */
	struct irq_work wake_work;	/* PREEMPT_RT: the kprobe's wake-up */
	struct work_struct ring_work;	/* a one-shot set's records to the ring */
	struct mutex lock;	/* serializes write and read */
	struct mm_struct *mm;	/* the writer's, held while armed */
	struct pollfs_futex_mm *fmm;	/* its notifier, once armed privately */
	struct list_head fmm_link;	/* on @fmm's list while armed */
	struct user_struct *pin_user;	/* charged for the pinned words */
	unsigned int nr_pinned;
	bool watch;		/* armed with POLLFS_FUTEX_WATCH */
	unsigned int nr;	/* records in @waits armed by the last write */
	unsigned int nr_pending;
	unsigned int capacity;
	struct pollfs_futex_wait *waits;	/* allocated by the first arm */
};

/*
 * The bit of @fired.  A wake hook sets it after the record's @woken, and
 * a read that clears it looks at the records after: a bit op, not a
 * store under @wqh's lock, because on PREEMPT_RT the kprobe sets it
 * where that lock, which sleeps there, may not be taken.
 */
#define POLLFS_FUTEX_FIRED	0
/*
 * A non-blocking read found the lock taken and said EAGAIN: whoever held
 * it wakes the pollers when it lets go, so that an edge-triggered reader
 * is told again of a record it could not take.
 */
#define POLLFS_FUTEX_MISSED	1
/* The ring work found the lock taken: whoever held it queues it again. */
#define POLLFS_FUTEX_RING_MISSED	2
/*
 * A write is queueing the set: a wake meanwhile marks its record woken
 * for read(2) rather than put it in the ring, since a watched set that
 * then fails must leave no record behind.
 */
#define POLLFS_FUTEX_ARMING	3

static inline struct pollfs_futex_ctx *
pollfs_futex_of(struct pollfs_object *obj)
{
	return container_of(obj, struct pollfs_futex_ctx, obj);
}

static inline struct futex_q *pollfs_futex_wait_q(struct pollfs_futex_wait *w)
{
	return (struct futex_q *)w->q;
}

/* A futex_q of ours (its task is init_task) is the start of its wait. */
static inline struct pollfs_futex_wait *pollfs_futex_wait_of(void *q)
{
	return q;
}

static inline struct task_struct **pollfs_futex_q_task(void *q)
{
	return q + FUTEX_Q_TASK;
}

static inline spinlock_t *pollfs_futex_q_lock_ptr(void *q)
{
	return *(spinlock_t **)(q + FUTEX_Q_LOCK_PTR);
}

static inline union futex_key *pollfs_futex_q_key(void *q)
{
	return q + FUTEX_Q_KEY;
}

static inline u32 __user *pollfs_futex_wait_uaddr(struct pollfs_futex_wait *w)
{
	return u64_to_user_ptr(w->ev.addr);
}

/*
 * futex.c, for the files below.  pollfs_futex_woken(): true when the
 * wait stays on its chain (a ring took its record), else the waker is
 * to unqueue it as any woken waiter.
 */
bool pollfs_futex_woken(struct pollfs_futex_wait *w);
void pollfs_futex_unqueue(struct pollfs_futex_wait *w);

/*
 * futex-wake-*.c: the hook the kind installs before its first object,
 * and what makes a futex_q tell us its wake.
 */
extern struct pollfs_hook pollfs_futex_wake_hook;
void pollfs_futex_set_wake(struct pollfs_futex_wait *w);

/*
 * futex-hash-*.c: lock @w's bucket (*@fph is held until
 * pollfs_futex_bucket_put()); put an object armed by its writer on what
 * tracks that writer's address space (which may wait for that address
 * space's locks), and the lock to take waits off under; drop that at
 * release, and wait for all of it at unload.
 */
struct futex_hash_bucket *
pollfs_futex_q_lock(struct pollfs_futex_wait *w,
		    struct futex_private_hash **fph);
void pollfs_futex_bucket_put(struct futex_private_hash *fph);
int pollfs_futex_track(struct pollfs_futex_ctx *f);
struct mutex *pollfs_futex_track_lock(struct pollfs_futex_ctx *f);
void pollfs_futex_put_mm(struct pollfs_futex_ctx *f);
void pollfs_futex_sync_mm(void);

#endif /* _POLLFS_FUTEX_H */
