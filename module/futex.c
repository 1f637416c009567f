// SPDX-License-Identifier: GPL-2.0
/*
 * The futex object: a futex wait that poll and epoll can watch.
 *
 * An armed object is a waiter in the kernel's own futex hash queue, one
 * struct futex_q per armed record, queued with the kernel's own helpers
 * exactly as FUTEX_WAIT queues a sleeping task: the value is read under
 * the hash-bucket lock, so no FUTEX_WAKE can fall between check and
 * queue (FUTEX_FD's race), and every wake operation (WAKE, WAKE_BITSET,
 * WAKE_OP, REQUEUE, CMP_REQUEUE) counts it as the waiter it is.
 *
 * The futex core is not exported: its functions are found by name at
 * load time and the futex_q layout comes from the target kernel's BTF
 * (module/internals.list, ksyms.h).  The wake is seen, with the
 * hash-bucket lock held, by the futex_q's own wake function where the
 * kernel has one (futex-wake-fn.c), before that by a kprobe on
 * futex_wake_mark() (futex-wake-kprobe.c): the wake hook below.
 *
 * The protocol, and why each step is safe:
 *  - A queued futex_q names the task to wake.  Ours names the idle task
 *    of CPU 0 (init_task): it is always TASK_RUNNING, so the
 *    wake_up_process() that futex_wake_mark() queues for it is a no-op,
 *    and no user task ever is init_task, so the kprobe can tell our
 *    waiters from all others by that pointer alone.  __futex_queue()
 *    sets q->task = current; it is overwritten before the bucket lock is
 *    dropped, so no waker ever sees the writer there.
 *  - The kprobe runs before futex_wake_mark()'s body, still under the
 *    bucket lock (the wake function before __futex_wake_mark()).  It
 *    marks the record woken and wakes pollers then, not after: a woken
 *    poller that reads must call futex_unqueue(), which takes the same
 *    bucket lock if q->lock_ptr is still set, and so
 *    waits for the waker to finish (the lock_ptr protocol of
 *    kernel/futex/core.c).  Readiness is our flag, never "lock_ptr is
 *    NULL", which would be false until the body has run.
 *  - The object cannot be freed under the hook: release calls
 *    futex_unqueue() on every queued futex_q, which returns only once no
 *    waker holds the bucket lock over it.
 *  - A private futex key names the writer's mm_struct by address.  The
 *    object holds a reference on it (mmgrab) while armed, so the address
 *    cannot be reused by another process whose wakes would then match a
 *    stale waiter.  Shared keys name an inode sequence number or an
 *    mm, and hold no references either, as for FUTEX_WAIT.
 *  - Where a process's private futexes hash into a table of its own
 *    (6.16 and later), waits are taken off at its address space's end
 *    (futex-hash-private.c).
 *
 * A watched set (POLLFS_FUTEX_WATCH) stays armed: a read takes each
 * woken record and queues it again at once, on the value its word holds
 * then, read under the bucket lock like any arm.  The reader may be
 * another process (fork, SCM_RIGHTS) than the writer whose address space
 * holds the word: the re-arm uses the key the write computed, and reads
 * the word through its page, which the write pinned (charged to the
 * writer's RLIMIT_MEMLOCK) and which stays pinned while the watch is
 * armed, so that no reader ever looks into the writer's address space.
 *
 * Locks, outer first:
 *  - f->lock, a mutex: an object's arming (a write) and its reads.  It
 *    is held only for the kernel's own work: a write copies its records
 *    in, computes their keys and pins watched words before taking it,
 *    and a write or read faults in an absent word with it dropped.  The one wait under
 *    it that a user can stretch is the writer's own address space's
 *    mmap_lock, which the first private arming in an address space
 *    takes to register a notifier (6.16 and later).  So a blocking read
 *    and a write wait for it interruptibly, a non-blocking read not at
 *    all (POLLFS_FUTEX_MISSED), and fdinfo never takes it.
 *  - fmm->lock, a mutex (6.16 and later): the objects armed privately
 *    on one address space; under f->lock, or alone at that address
 *    space's end.
 *  - the hash bucket's lock, the futex core's spinlock_t: taken by
 *    futex_q_lock() under the locks above, and held by every waker
 *    around our wake hook.
 *  - f->wqh.lock, a spinlock_t taken with interrupts off: the state,
 *    the waits array fdinfo shows, the pollers; taken in the wake hook
 *    under the bucket lock.
 * On PREEMPT_RT the two spinlock_t locks sleep: 6.1's kprobe handler,
 * which runs with preemption off, then leaves the pollers' wake-up to an
 * irq_work.  The ring's lock (ring.c), a raw spinlock, nests inside all
 * of them.
 *
 * The record ring (POLLFS_IOC_RING, contract 1.2; ring.c holds the ring
 * itself, its memory ordering and what a hostile head does):
 *
 *  - A watched set's records are written by the wake hook, in the
 *    waker's context, under the bucket lock the waker holds: the record
 *    is the armed one with val the word's value at that wake, read as a
 *    re-arm reads it (through the waker's own mapping when it is the
 *    writer's address space, the only one a private wake can come from,
 *    without a fault; else, or if the page is not present there,
 *    through the page the watch pinned).  The waker's store to the word
 *    comes before its FUTEX_WAKE on the same CPU, so the value read is
 *    that store's or a later one.  When the ring takes the record, the
 *    wait stays on its chain, untouched: with a wake function of its own
 *    (6.11 and later) ours returns without calling __futex_wake_mark(),
 *    and with the kprobe on futex_wake_mark() the handler makes that
 *    function return at once, as the kernel's own error injection does
 *    (compat.h).  The waker counts the wait as one it woke (its ++ret
 *    follows the call) and goes on from the next waiter on the chain,
 *    so each FUTEX_WAKE that reaches the wait counts it exactly once,
 *    and there is no moment when the object is off the chain: no re-arm,
 *    so no window in which a wake could miss it.  Since it never leaves
 *    its place, where a woken thread would queue again at the end, such
 *    a wait is queued behind every thread (a priority past any a thread
 *    has; moved there when the ring comes if it was armed before): a
 *    wake of fewer waiters than are queued wakes the threads first, and
 *    no thread waits for ever behind an object.  (FUTEX_WAKE_OP with one
 *    word for both counts it once per loop, as it would a thread.)
 *  - When the ring does not take the record (full, a head not to be
 *    trusted, or records of the object already waiting outside it), the
 *    wake is what it is without a ring: the wait is taken off, the
 *    record waits in the object, woken, with OVERFLOW set, and read(2)
 *    re-arms it on the word's value then (1.1).  So a full ring costs a
 *    waker nothing more than a wake-up: it never waits, and it drops
 *    nothing; the object is not a waiter until read(2) has taken the
 *    record.  The decision and the woken mark are made under the ring's
 *    lock, which read(2) takes to clear the flag once nothing is woken,
 *    so the flag is never cleared over a record that waits.  While the
 *    write that arms a set is still queueing it, a wake's record waits
 *    in the object the same way: a set that then fails (a later word
 *    changed) must leave nothing in the ring.  With a ring, records
 *    that wait in the object are read oldest first (each is numbered
 *    when woken), after those in the ring.
 *  - A wait requeued to another word (FUTEX_CMP_REQUEUE) and woken there
 *    is no longer on the word the watch is about: the record waits in
 *    the object, flagged, and read(2) re-arms it on its own word (1.1).
 *  - A one-shot object or set: the hook marks the record woken as
 *    without a ring and queues the object's ring work, which takes the
 *    object's lock and does what read(2) would (the set disarmed, its
 *    woken records taken, oldest first) into the ring; what the ring
 *    refuses stays in the object, flagged.  The records are those read(2)
 *    returns, since it is read(2)'s code; read(2) may take them first.
 *  - A write or a release takes every wait off (futex_unqueue() waits for
 *    a waker that holds the bucket lock, so a record that waker pushes is
 *    in the ring before the write returns); what waited in the object is
 *    dropped, the records in the ring stay, and the flag is cleared.
 */

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/plist.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "futex.h"

/* As the kernel's own, which is inline since 6.16: no fault, no sleep. */
static int pollfs_futex_get_value_locked(u32 *dest, u32 __user *from)
{
	int ret;

	pagefault_disable();
	ret = get_user(*dest, from);
	pagefault_enable();
	return ret ? -EFAULT : 0;
}

/*
 * A watched wait whose records go into a ring stays queued from wake to
 * wake, where a woken thread would queue again at the end: it is put
 * behind every waiter a thread can be (their priorities go up to
 * MAX_RT_PRIO), so that a wake of fewer than all wakes the threads
 * first and none of them waits for ever behind it.
 */
#define POLLFS_FUTEX_PRIO_BEHIND	(MAX_RT_PRIO + 1)

/* Move queued @w behind every thread.  Its bucket's lock held. */
static void pollfs_futex_queue_behind(struct pollfs_futex_wait *w,
				      struct futex_hash_bucket *hb)
{
	struct plist_node *node = (void *)w->q + FUTEX_Q_LIST;
	struct plist_head *chain = (void *)hb + FUTEX_HB_CHAIN;

	lockdep_assert_held(pollfs_futex_q_lock_ptr(w->q));
	pollfs_call(plist_del)(node, chain);
	node->prio = POLLFS_FUTEX_PRIO_BEHIND;
	pollfs_call(plist_add)(node, chain);
}

/*
 * A watched set armed before its ring moves behind the threads when the
 * ring comes: the lock_ptr dance of futex_unqueue(), which follows a
 * requeue or a rehash to the bucket the wait is on now.
 */
static void pollfs_futex_requeue_behind(struct pollfs_futex_wait *w)
{
	spinlock_t *lock;

	for (;;) {
		lock = READ_ONCE(*(spinlock_t **)(w->q + FUTEX_Q_LOCK_PTR));
		if (!lock)
			return;		/* woken: queued again by read(2) */
		spin_lock(lock);
		if (lock == pollfs_futex_q_lock_ptr(w->q))
			break;
		spin_unlock(lock);
	}
	pollfs_futex_queue_behind(w, (void *)lock - FUTEX_HB_LOCK);
	spin_unlock(lock);
}

/* The waits of a watched set with a ring queue behind the threads. */
static bool pollfs_futex_rings_watch(struct pollfs_futex_ctx *f)
{
	return READ_ONCE(f->watch) && pollfs_ring_of(&f->obj);
}

/* Queue @w on its bucket, whose lock is held, as init_task's waiter. */
static void pollfs_futex_queue_locked(struct pollfs_futex_wait *w,
				      struct futex_hash_bucket *hb)
{
	lockdep_assert_held(pollfs_futex_q_lock_ptr(w->q));
	pollfs_futex_queue(pollfs_futex_wait_q(w), hb, &init_task);
	WRITE_ONCE(*pollfs_futex_q_task(w->q), &init_task);
	w->queued = true;
	if (pollfs_futex_rings_watch(w->owner))
		pollfs_futex_queue_behind(w, hb);
}

static void pollfs_futex_set_state(struct pollfs_futex_ctx *f,
				   enum pollfs_futex_state state)
{
	spin_lock_irq(&f->wqh.lock);
	f->state = state;
	clear_bit(POLLFS_FUTEX_FIRED, &f->fired);
	spin_unlock_irq(&f->wqh.lock);
}

/* Mark @w woken, for a read: under the bucket lock. */
static void pollfs_futex_mark_woken(struct pollfs_futex_wait *w)
{
	w->woken_seq = atomic64_inc_return(&w->owner->wake_seq);
	WRITE_ONCE(w->woken, true);
	smp_mb__before_atomic();	/* @woken before the bit: see FIRED */
	set_bit(POLLFS_FUTEX_FIRED, &w->owner->fired);
}

static void pollfs_futex_wake_pollers(struct pollfs_futex_ctx *f)
{
	unsigned long flags;

	if (IS_ENABLED(CONFIG_PREEMPT_RT)) {
		irq_work_queue(&f->wake_work);
		return;
	}
	spin_lock_irqsave(&f->wqh.lock, flags);
	wake_up_locked_poll(&f->wqh, EPOLLIN);
	spin_unlock_irqrestore(&f->wqh.lock, flags);
}

/*
 * A watched word's value at a wake, in the waker's context under the
 * bucket lock: no fault, no sleep (the head comment says which page).
 */
static u32 pollfs_futex_word_at_wake(struct pollfs_futex_ctx *f,
				     struct pollfs_futex_wait *w)
{
	u32 uval, *word;

	if (current->mm == f->mm &&
	    !pollfs_futex_get_value_locked(&uval, pollfs_futex_wait_uaddr(w)))
		return uval;
	word = kmap_local_page(w->page) + offset_in_page(w->ev.addr);
	uval = READ_ONCE(*word);
	kunmap_local(word);
	return uval;
}

/* Still on the word it was armed on, not requeued to another. */
static bool pollfs_futex_on_own_word(struct pollfs_futex_wait *w)
{
	union futex_key *key = pollfs_futex_q_key(w->q);

	return key->both.ptr == w->key.both.ptr &&
	       key->both.word == w->key.both.word &&
	       key->both.offset == w->key.both.offset;
}

/*
 * A watched wait's record into the ring, or, if the ring refuses it, the
 * wait woken for read(2), under the ring's lock (see the head comment).
 * Not while the write that queues the set is still at it: a set that
 * then fails must leave nothing in the ring, so the record waits in the
 * object, for the write to drop or to leave for read(2).  True when the
 * ring took it.
 */
static bool pollfs_futex_ring_watch(struct pollfs_futex_wait *w,
				    struct pollfs_ring *ring)
{
	struct pollfs_futex_ctx *f = w->owner;
	struct pollfs_futex_event rec = w->ev;
	bool own = pollfs_futex_on_own_word(w);
	unsigned long flags;
	bool pushed = false;

	if (own)
		rec.val = pollfs_futex_word_at_wake(f, w);
	pollfs_ring_lock(ring, flags);
	if (own && !test_bit(POLLFS_FUTEX_ARMING, &f->fired))
		pushed = pollfs_ring_push_locked(ring, &rec);
	if (!pushed) {
		pollfs_ring_flag_overflow_locked(ring);
		pollfs_futex_mark_woken(w);
	}
	pollfs_ring_unlock(ring, flags);
	return pushed;
}

/*
 * A wake took @w: in the waker's context, with the hash bucket lock held,
 * before @w is unqueued.  True when @w is to stay queued: a watched
 * wait whose record its ring took.
 */
bool pollfs_futex_woken(struct pollfs_futex_wait *w)
{
	struct pollfs_futex_ctx *f = w->owner;
	struct pollfs_ring *ring = pollfs_ring_of(&f->obj);
	bool stays = false;

	lockdep_assert_held(pollfs_futex_q_lock_ptr(w->q));
	if (ring && READ_ONCE(f->watch)) {
		stays = pollfs_futex_ring_watch(w, ring);
	} else {
		pollfs_futex_mark_woken(w);
		if (ring)
			queue_work(system_wq, &f->ring_work);
	}
	pollfs_futex_wake_pollers(f);
	return stays;
}

/*
 * The pollers' wake-up on PREEMPT_RT, where the 6.1 kprobe's handler,
 * which runs with preemption off, may not take our queue's lock (a
 * spinlock_t sleeps there): an irq_work runs in a thread.  Readiness is
 * the bit, set already; a late wake-up only makes a poller look again.
 */
static void pollfs_futex_wake_work(struct irq_work *work)
{
	struct pollfs_futex_ctx *f = container_of(work, struct pollfs_futex_ctx,
					      wake_work);

	wake_up_poll(&f->wqh, EPOLLIN);
}

/*
 * Take @w off its hash chain if a waker has not already.  A futex_q whose
 * lock_ptr was cleared was woken even if the hook did not see it (a
 * kprobe can be missed), so that, not our flag, decides.
 */
void pollfs_futex_unqueue(struct pollfs_futex_wait *w)
{
	if (!w->queued)
		return;
	w->queued = false;
	if (pollfs_call(futex_unqueue)(pollfs_futex_wait_q(w)))
		return;
	/* Pairs with the release store of NULL to lock_ptr. */
	smp_rmb();
	if (!w->woken) {
		w->woken_seq = atomic64_inc_return(&w->owner->wake_seq);
		w->woken = true;
	}
}

/*
 * The object's lock.  A blocking read or a write waits for it
 * interruptibly; a non-blocking read does not wait (see MISSED).  It is
 * held only for the kernel's own work, never across a fault on a
 * user's page or a look into another address space, but whoever holds
 * it may still wait for its own address space's locks (the first
 * private arm of 6.16+ registers a notifier there), so no reader of
 * another user waits on it uninterruptibly, and a writer only killably.
 */
static int pollfs_futex_lock(struct pollfs_futex_ctx *f, bool nowait)
{
	/* A read's: a write waits killably, see pollfs_futex_write(). */
	if (!nowait)
		return mutex_lock_interruptible(&f->lock) ? -ERESTARTSYS : 0;
	if (mutex_trylock(&f->lock))
		return 0;
	set_bit(POLLFS_FUTEX_MISSED, &f->fired);
	smp_mb__after_atomic();	/* the bit before the second try */
	if (mutex_trylock(&f->lock))
		return 0;
	return -EAGAIN;
}

static void pollfs_futex_unlock(struct pollfs_futex_ctx *f)
{
	mutex_unlock(&f->lock);
	smp_mb__before_atomic();	/* the unlock before the bits' test */
	if (test_and_clear_bit(POLLFS_FUTEX_MISSED, &f->fired))
		wake_up_poll(&f->wqh, EPOLLIN);
	if (test_and_clear_bit(POLLFS_FUTEX_RING_MISSED, &f->fired))
		queue_work(system_wq, &f->ring_work);
}

/*
 * Change what fdinfo shows, under the queue's lock, which fdinfo takes
 * instead of the object's (a reader of /proc must not hold up the
 * object's users).
 */
static void pollfs_futex_publish(struct pollfs_futex_ctx *f,
				 enum pollfs_futex_state state,
				 unsigned int nr, bool watch)
{
	lockdep_assert_held(&f->lock);
	spin_lock_irq(&f->wqh.lock);
	f->state = state;
	f->nr = nr;
	f->watch = watch;
	clear_bit(POLLFS_FUTEX_FIRED, &f->fired);
	spin_unlock_irq(&f->wqh.lock);
}

/*
 * Watched words stay pinned while armed, so that a reader in another
 * address space re-arms through the page it was armed on and never
 * looks into the writer's address space: the pins are charged to the
 * writer's RLIMIT_MEMLOCK, as io_uring charges its registered buffers.
 */
static int pollfs_futex_charge(struct user_struct *user, unsigned long pages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long locked = atomic_long_read(&user->locked_vm), next;

	do {
		next = locked + pages;
		if (next > limit && !capable(CAP_IPC_LOCK))
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &locked, next));
	return 0;
}

static void pollfs_futex_uncharge(struct user_struct *user,
				  unsigned long pages)
{
	atomic_long_sub(pages, &user->locked_vm);
}

/*
 * Pin a watched word's page, writable where the mapping allows it (a
 * private page is then unshared, so the page pinned is the one the
 * writer's stores go to), long-term: it stays until the watch ends.
 */
static int pollfs_futex_pin(struct pollfs_futex_staged *st)
{
	unsigned long addr = st->ev.addr;

	if (pin_user_pages_fast(addr, 1, FOLL_WRITE | FOLL_LONGTERM,
				&st->page) == 1)
		return 0;
	if (pin_user_pages_fast(addr, 1, FOLL_LONGTERM, &st->page) == 1)
		return 0;
	st->page = NULL;
	return -EFAULT;
}

static void pollfs_futex_unpin_staged(struct pollfs_futex_staged *set,
				      unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (set[i].page)
			unpin_user_page(set[i].page);
		set[i].page = NULL;
	}
}

/* The pins of the armed set, with their charge.  Lock held. */
static void pollfs_futex_unpin(struct pollfs_futex_ctx *f)
{
	unsigned int i;

	lockdep_assert_held(&f->lock);
	for (i = 0; i < f->nr; i++) {
		if (f->waits[i].page)
			unpin_user_page(f->waits[i].page);
		f->waits[i].page = NULL;
	}
	if (f->pin_user) {
		pollfs_futex_uncharge(f->pin_user, f->nr_pinned);
		free_uid(f->pin_user);
		f->pin_user = NULL;
	}
	f->nr_pinned = 0;
}

/* Off its address space's notifier, every wait off its chain. */
static void pollfs_futex_untrack(struct pollfs_futex_ctx *f)
{
	struct mutex *lock = pollfs_futex_track_lock(f);
	unsigned int i;

	if (lock)
		mutex_lock(lock);
	for (i = 0; i < f->nr; i++)
		pollfs_futex_unqueue(&f->waits[i]);
	list_del_init(&f->fmm_link);
	if (lock)
		mutex_unlock(lock);
	mmdrop(f->mm);
	f->mm = NULL;
}

/* Drop every queued wait, keeping the woken records.  Lock held. */
static void pollfs_futex_dequeue_all(struct pollfs_futex_ctx *f)
{
	unsigned int i;

	lockdep_assert_held(&f->lock);
	pollfs_futex_untrack(f);
	f->nr_pending = 0;
	for (i = 0; i < f->nr; i++)
		f->nr_pending += f->waits[i].woken;
	pollfs_futex_set_state(f, f->nr_pending ? POLLFS_FUTEX_PENDING :
						  POLLFS_FUTEX_UNARMED);
}

/*
 * Records wait in the object, for read(2): a one-shot set's woken ones,
 * or a watched set's that its ring refused (their bit is set under the
 * ring's lock).  Lock held.
 */
static bool pollfs_futex_holds_records(struct pollfs_futex_ctx *f)
{
	lockdep_assert_held(&f->lock);
	return f->state == POLLFS_FUTEX_PENDING ||
	       (f->state == POLLFS_FUTEX_ARMED &&
		test_bit(POLLFS_FUTEX_FIRED, &f->fired));
}

/* Once nothing waits in the object, the ring takes records again. */
static void pollfs_futex_ring_drained(struct pollfs_futex_ctx *f)
{
	struct pollfs_ring *ring = pollfs_ring_of(&f->obj);
	unsigned long flags;

	if (!ring)
		return;
	pollfs_ring_lock(ring, flags);
	if (!pollfs_futex_holds_records(f))
		pollfs_ring_drained_locked(ring);
	pollfs_ring_unlock(ring, flags);
}

/* Disarm, and drop the woken records not read yet.  Lock held. */
static void pollfs_futex_drop(struct pollfs_futex_ctx *f)
{
	lockdep_assert_held(&f->lock);
	if (f->state == POLLFS_FUTEX_ARMED)
		pollfs_futex_dequeue_all(f);
	pollfs_futex_unpin(f);
	f->nr_pending = 0;
	pollfs_futex_publish(f, POLLFS_FUTEX_UNARMED, 0, false);
	pollfs_futex_ring_drained(f);
}

/*
 * A futex_q as kernel/futex/requeue.c's futex_q_init makes one: all zero
 * (the key FUTEX_KEY_INIT, no PI state, requeue_state
 * Q_REQUEUE_PI_NONE) but the bitset, which matches any, and, since
 * 6.11, the wake function, which pollfs_futex_set_wake() sets to its
 * own.  Made here, not copied, because kallsyms names that variable only
 * with KALLSYMS_ALL (Debian's arm64 6.1 has none); where it does,
 * pollfs_futex_check() refuses the load unless the two are the same
 * bytes, the wake function aside.
 */
static void pollfs_futex_q_init(void *q)
{
	memset(q, 0, FUTEX_Q_SIZE);
	*(u32 *)(q + FUTEX_Q_BITSET) = FUTEX_BITSET_MATCH_ANY;
}

static int pollfs_futex_check(void)
{
	u8 ours[FUTEX_Q_SIZE] __aligned(sizeof(void *));
	u8 theirs[FUTEX_Q_SIZE] __aligned(sizeof(void *));

	if (!pollfs_ksyms.futex_q_init)	/* no KALLSYMS_ALL (ksyms.c) */
		return 0;
	pollfs_futex_q_init(ours);
	memcpy(theirs, pollfs_ksyms.futex_q_init, FUTEX_Q_SIZE);
#ifdef FUTEX_Q_WAKE
	*(void **)(theirs + FUTEX_Q_WAKE) = NULL;
#endif
	if (memcmp(ours, theirs, FUTEX_Q_SIZE)) {
		pr_err("this kernel's futex_q_init is not the futex_q pollfs makes; this kernel is not supported\n");
		return -ENOEXEC;
	}
	return 0;
}

/*
 * Queue a wait for each of the @f->nr records, if every futex word still
 * holds its expected value, as futex_waitv() does: each value read and
 * the futex_q queued under its bucket lock, one bucket at a time.  A
 * mismatch unqueues what was queued, unless a wake already took one of
 * them: then the wait has happened and the write succeeds with the
 * object readable.  Not for a watched set, which a read re-arms only
 * where it was woken: it fails whole (its words changed; the caller
 * reads them again).  A word whose page is not present gives -EFAULT
 * and its index in *@absent: the caller faults it in without the lock
 * and tries again.  Lock held; the state is ARMED throughout, so a wake
 * during the loop is seen.
 */
static int pollfs_futex_queue_all(struct pollfs_futex_ctx *f,
				  unsigned int *absent)
{
	struct futex_private_hash *fph;
	struct futex_hash_bucket *hb;
	struct pollfs_futex_wait *w;
	unsigned int i, j;
	bool woken;
	u32 uval;
	int ret;

	lockdep_assert_held(&f->lock);
	for (i = 0; i < f->nr; i++) {
		w = &f->waits[i];
		pollfs_futex_q_init(w->q);
		pollfs_futex_set_wake(w);
		w->owner = f;
		w->queued = false;
		w->woken = false;
		*pollfs_futex_q_key(w->q) = w->key;
	}

	for (i = 0; i < f->nr; i++) {
		w = &f->waits[i];
		hb = pollfs_futex_q_lock(w, &fph);
		__acquire(pollfs_futex_q_lock_ptr(w->q));
		ret = pollfs_futex_get_value_locked(&uval, pollfs_futex_wait_uaddr(w));
		if (!ret && uval == w->ev.val) {
			pollfs_futex_queue_locked(w, hb);
			spin_unlock(pollfs_futex_q_lock_ptr(w->q));
			pollfs_futex_bucket_put(fph);
			continue;
		}
		pollfs_call(futex_q_unlock)(hb);
		__release(pollfs_futex_q_lock_ptr(w->q));
		pollfs_futex_bucket_put(fph);

		woken = false;
		for (j = 0; j < i; j++) {
			pollfs_futex_unqueue(&f->waits[j]);
			woken |= f->waits[j].woken;
		}
		if (woken && !f->watch)
			return 0;
		*absent = i;
		return ret ?: -EAGAIN;
	}
	return 0;
}

/*
 * Copy a write's records in and check them, before any lock: a fault on
 * the writer's buffer holds up nobody but the writer.  1: the one
 * record of zeros, the explicit disarm.
 */
static int pollfs_futex_stage(struct pollfs_futex_staged *set,
			      struct iov_iter *from, unsigned int nr)
{
	struct pollfs_futex_event *ev;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		ev = &set[i].ev;
		set[i].page = NULL;
		if (copy_from_iter(ev, sizeof(*ev), from) != sizeof(*ev))
			return -EFAULT;
		if (ev->flags & ~(POLLFS_FUTEX_SHARED | POLLFS_FUTEX_WATCH) ||
		    ev->addr % sizeof(u32))
			return -EINVAL;
		/* A set is watched as a whole or not at all. */
		if ((ev->flags ^ set[0].ev.flags) & POLLFS_FUTEX_WATCH)
			return -EINVAL;
	}
	if (nr == 1 && !memchr_inv(&set[0].ev, 0, sizeof(set[0].ev)))
		return 1;
	return 0;
}

/*
 * The futex keys, which may fault (a shared key looks the page up), and
 * a watched set's pins, charged to the writer: still before any lock.
 */
static int pollfs_futex_stage_keys(struct pollfs_futex_staged *set,
				   unsigned int nr, bool watch)
{
	unsigned int i;
	int ret;

	for (i = 0; i < nr; i++) {
		ret = pollfs_get_futex_key(u64_to_user_ptr(set[i].ev.addr),
					   set[i].ev.flags & POLLFS_FUTEX_SHARED,
					   &set[i].key);
		if (ret)
			return ret;
	}
	if (!watch)
		return 0;
	ret = pollfs_futex_charge(current_user(), nr);
	if (ret)
		return ret;
	for (i = 0; i < nr; i++) {
		ret = pollfs_futex_pin(&set[i]);
		if (ret) {
			pollfs_futex_unpin_staged(set, i);
			pollfs_futex_uncharge(current_user(), nr);
			return ret;
		}
	}
	return 0;
}

static int pollfs_futex_reserve(struct pollfs_futex_ctx *f, unsigned int nr)
{
	struct pollfs_futex_wait *waits, *old = f->waits;

	if (nr <= f->capacity)
		return 0;
	waits = kvmalloc_array(nr, sizeof(*waits), GFP_KERNEL_ACCOUNT);
	if (!waits)
		return -ENOMEM;
	/* fdinfo looks at the array under the queue's lock. */
	spin_lock_irq(&f->wqh.lock);
	f->waits = waits;
	spin_unlock_irq(&f->wqh.lock);
	f->capacity = nr;
	kvfree(old);
	return 0;
}

/*
 * Arm the staged set, replacing what was armed.  On success the pins
 * are the object's; on failure they are still the caller's, and the
 * object is unarmed.  Lock held.
 */
static int pollfs_futex_install(struct pollfs_futex_ctx *f,
				struct pollfs_futex_staged *set,
				unsigned int nr, bool watch,
				unsigned int *absent)
{
	struct pollfs_futex_wait *w;
	unsigned int i;
	int ret;

	lockdep_assert_held(&f->lock);
	pollfs_futex_drop(f);
	ret = pollfs_futex_reserve(f, nr);
	if (ret)
		return ret;
	for (i = 0; i < nr; i++) {
		w = &f->waits[i];
		w->ev = set[i].ev;
		w->key = set[i].key;
		w->page = set[i].page;
		w->queued = false;
		w->woken = false;
	}
	f->mm = current->mm;
	mmgrab(f->mm);
	f->generation++;
	pollfs_futex_publish(f, POLLFS_FUTEX_ARMED, nr, watch);
	ret = pollfs_futex_track(f);
	if (!ret) {
		set_bit(POLLFS_FUTEX_ARMING, &f->fired);
		ret = pollfs_futex_queue_all(f, absent);
		clear_bit(POLLFS_FUTEX_ARMING, &f->fired);
	}
	if (ret) {
		/* Whatever was queued is off already; off the list too. */
		pollfs_futex_untrack(f);
		for (i = 0; i < nr; i++)
			f->waits[i].page = NULL;
		pollfs_futex_publish(f, POLLFS_FUTEX_UNARMED, 0, false);
		return ret;
	}
	if (watch) {
		f->pin_user = get_uid(current_user());
		f->nr_pinned = nr;
		for (i = 0; i < nr; i++)
			set[i].page = NULL;
	}
	return 0;
}

/* Nonzero when the word at @addr cannot be made present for reading. */
static size_t pollfs_futex_fault_in_word(u64 addr)
{
	return fault_in_readable((const char __user *)u64_to_user_ptr(addr),
				 sizeof(u32));
}

/*
 * Every write of at least one record replaces the previous wait, armed
 * or woken and unread; one that fails, and the disarm record, leave the
 * object unarmed.  (A write shorter than a record is refused by the core
 * and changes nothing.)  The records are copied, keyed and pinned before
 * the lock is taken; a word found absent under the bucket lock is
 * faulted in with the lock dropped, and the arming made again.
 */
static ssize_t pollfs_futex_write(struct pollfs_object *obj,
				  struct iov_iter *from, size_t nrec)
{
	struct pollfs_futex_ctx *f = pollfs_futex_of(obj);
	struct pollfs_futex_staged one, *set = &one;
	unsigned int absent;
	bool watch = false;
	int ret;

	if (nrec > POLLFS_FUTEX_WAITV_MAX) {
		ret = -EINVAL;
		goto disarm;
	}
	if (!current->mm) {
		ret = -EFAULT;
		goto disarm;
	}
	if (nrec > 1) {
		set = kvmalloc_array(nrec, sizeof(*set), GFP_KERNEL_ACCOUNT);
		if (!set) {
			ret = -ENOMEM;
			goto disarm;
		}
	}
	ret = pollfs_futex_stage(set, from, nrec);
	if (ret)
		goto disarm;
	watch = set[0].ev.flags & POLLFS_FUTEX_WATCH;
	ret = pollfs_futex_stage_keys(set, nrec, watch);
	if (ret)
		goto disarm;

	for (;;) {
		/* Only a fatal signal: a failed write must leave it unarmed. */
		ret = mutex_lock_killable(&f->lock);
		if (ret)
			break;
		ret = pollfs_futex_install(f, set, nrec, watch, &absent);
		pollfs_futex_unlock(f);
		if (ret != -EFAULT)
			break;
		/* Its page was not present: fault it in, unlocked. */
		if (pollfs_futex_fault_in_word(set[absent].ev.addr))
			break;
		if (signal_pending(current)) {
			ret = -ERESTARTNOINTR;
			break;
		}
		cond_resched();
	}
	if (ret && watch) {
		pollfs_futex_unpin_staged(set, nrec);
		pollfs_futex_uncharge(current_user(), nrec);
	}
	if (set != &one)
		kvfree(set);
	return ret ? ret : nrec;

disarm:
	if (set != &one)
		kvfree(set);
	if (mutex_lock_killable(&f->lock))
		return ret < 0 ? ret : -EINTR;
	pollfs_futex_drop(f);
	pollfs_futex_unlock(f);
	return ret < 0 ? ret : nrec;
}

/*
 * The word's value now, under its bucket lock: through the reader's own
 * mapping when it is the writer's address space, else through the page
 * pinned when the watch was armed.  -EFAULT: not present in the reader's
 * mapping (it may fault it in and try again).
 */
static int pollfs_futex_word(struct pollfs_futex_ctx *f,
			     struct pollfs_futex_wait *w, u32 *uval)
{
	u32 *word;

	if (current->mm == f->mm)
		return pollfs_futex_get_value_locked(uval, pollfs_futex_wait_uaddr(w));
	word = kmap_local_page(w->page) + offset_in_page(w->ev.addr);
	*uval = READ_ONCE(*word);
	kunmap_local(word);
	return 0;
}

/*
 * Queue a watched record that a wake took off its chain again, on the
 * value its word holds now, which goes into the record.  The key is the
 * one of the write, so a requeue to another word does not carry over.
 * The caller holds a user of the writer's address space.  1, with the
 * record still off its chain, when the word is not present in the
 * reader's own mapping: the caller faults it in without the lock.
 * Lock held.
 */
static int pollfs_futex_rewatch(struct pollfs_futex_ctx *f,
				struct pollfs_futex_wait *w)
{
	struct futex_private_hash *fph;
	struct futex_hash_bucket *hb;
	u32 uval;

	lockdep_assert_held(&f->lock);
	pollfs_futex_q_init(w->q);
	pollfs_futex_set_wake(w);
	*pollfs_futex_q_key(w->q) = w->key;
	hb = pollfs_futex_q_lock(w, &fph);
	__acquire(pollfs_futex_q_lock_ptr(w->q));
	if (pollfs_futex_word(f, w, &uval)) {
		pollfs_call(futex_q_unlock)(hb);
		__release(pollfs_futex_q_lock_ptr(w->q));
		pollfs_futex_bucket_put(fph);
		return 1;
	}
	w->woken = false;
	pollfs_futex_queue_locked(w, hb);
	WRITE_ONCE(w->ev.val, uval);
	spin_unlock(pollfs_futex_q_lock_ptr(w->q));
	pollfs_futex_bucket_put(fph);
	return 0;
}

/*
 * The woken record to read next, NULL if none; *@more when it is not the
 * only one.  With a ring, the one woken first: records that wait in the
 * object follow those in the ring in the order they were made.  Without
 * one, the first of the set, as 1.1 has always read them.  Lock held.
 */
static struct pollfs_futex_wait *
pollfs_futex_oldest_woken(struct pollfs_futex_ctx *f, bool *more)
{
	bool by_age = pollfs_ring_of(&f->obj);
	struct pollfs_futex_wait *w, *oldest = NULL;
	unsigned int i;

	lockdep_assert_held(&f->lock);
	*more = false;
	for (i = 0; i < f->nr; i++) {
		w = &f->waits[i];
		if (!READ_ONCE(w->woken))
			continue;
		if (oldest)
			*more = true;
		if (!oldest || (by_age && w->woken_seq < oldest->woken_seq))
			oldest = w;
	}
	return oldest;
}

/* A read found a word absent from the reader's own mapping. */
#define POLLFS_FUTEX_ABSENT	2

/*
 * Read a watched set: the oldest woken record, queued again.  Readiness
 * is cleared before the records are looked at, so a wake that comes
 * during the look sets it again.  A word that can no longer be read
 * (unmapped, or the writer's address space gone) ends the watch: the
 * object is left unarmed and the read fails with EFAULT.  A word absent
 * from the reader's own mapping: the record stays woken, its address in
 * *@absent, and POLLFS_FUTEX_ABSENT.  Lock held.
 */
static int pollfs_futex_read_watch(struct pollfs_futex_ctx *f, void *rec,
				   u64 *absent)
{
	struct pollfs_futex_wait *w;
	bool other, more;
	int ret;

	lockdep_assert_held(&f->lock);
	/* Fully ordered: the records are looked at after the bit. */
	if (!test_and_clear_bit(POLLFS_FUTEX_FIRED, &f->fired))
		return -EAGAIN;
	w = pollfs_futex_oldest_woken(f, &more);
	if (more)
		set_bit(POLLFS_FUTEX_FIRED, &f->fired);
	if (!w)
		return -EAGAIN;

	/*
	 * A user of the writer's address space, held while the wait is
	 * taken off and queued again (its private futex table lives as long
	 * as its users): the reader itself, in that address space, or a
	 * reference taken here; an address space that is gone can hold no
	 * word to watch.  Its last put may free it: not here, under the
	 * lock, but in a worker.
	 */
	other = current->mm != f->mm;
	if (other && !mmget_not_zero(f->mm)) {
		ret = -EFAULT;
	} else {
		pollfs_futex_unqueue(w);
		ret = pollfs_futex_rewatch(f, w);
		if (other)
			mmput_async(f->mm);
	}
	if (ret == POLLFS_FUTEX_ABSENT) {
		set_bit(POLLFS_FUTEX_FIRED, &f->fired);
		*absent = w->ev.addr;
		return ret;
	}
	if (ret) {
		pollfs_futex_drop(f);
		return ret;
	}
	memcpy(rec, &w->ev, sizeof(w->ev));
	return 1;
}

/*
 * The oldest woken record of a one-shot set, the set disarmed by its
 * first read: what read(2) takes, and the ring work too.  Lock held.
 */
static struct pollfs_futex_wait *
pollfs_futex_next_woken(struct pollfs_futex_ctx *f)
{
	bool more;

	lockdep_assert_held(&f->lock);
	if (f->state == POLLFS_FUTEX_ARMED && !f->watch &&
	    test_bit(POLLFS_FUTEX_FIRED, &f->fired))
		pollfs_futex_dequeue_all(f);
	if (f->state != POLLFS_FUTEX_PENDING)
		return NULL;
	return pollfs_futex_oldest_woken(f, &more);
}

/* Taken: once the last is, the object is unarmed.  Lock held. */
static void pollfs_futex_take(struct pollfs_futex_ctx *f,
			      struct pollfs_futex_wait *w)
{
	w->woken = false;
	if (!--f->nr_pending)
		pollfs_futex_publish(f, POLLFS_FUTEX_UNARMED, 0, false);
}

/*
 * A one-shot set's woken records into the ring, as read(2) would take
 * them, oldest first, until the ring refuses one, which then waits in
 * the object, flagged.  A worker never waits for the object's lock: if
 * a writer or reader holds it, that one queues the work again when it
 * lets go (RING_MISSED).
 */
static void pollfs_futex_ring_work(struct work_struct *work)
{
	struct pollfs_futex_ctx *f = container_of(work, struct pollfs_futex_ctx,
						  ring_work);
	struct pollfs_ring *ring = pollfs_ring_of(&f->obj);
	struct pollfs_futex_wait *w;
	unsigned long flags;
	bool pushed;

	if (!mutex_trylock(&f->lock)) {
		set_bit(POLLFS_FUTEX_RING_MISSED, &f->fired);
		smp_mb__after_atomic();	/* the bit before the second try */
		if (!mutex_trylock(&f->lock))
			return;
	}
	while ((w = pollfs_futex_next_woken(f))) {
		pollfs_ring_lock(ring, flags);
		pushed = pollfs_ring_push_locked(ring, &w->ev);
		pollfs_ring_unlock(ring, flags);
		if (!pushed)
			break;
		pollfs_futex_take(f, w);
		wake_up_poll(&f->wqh, EPOLLIN);
	}
	pollfs_futex_unlock(f);
}

/*
 * A word absent from the reader's own mapping is faulted in with the
 * lock dropped, and the read made again; one that cannot be ends the
 * watch, unless a write replaced it meanwhile.
 */
static int pollfs_futex_fault_in(struct pollfs_futex_ctx *f, u64 addr)
{
	unsigned int generation = f->generation;
	int ret;

	pollfs_futex_unlock(f);
	if (!pollfs_futex_fault_in_word(addr))
		return signal_pending(current) ? -ERESTARTSYS : -EAGAIN;
	ret = mutex_lock_killable(&f->lock);
	if (ret)
		return ret;
	if (f->generation == generation)
		pollfs_futex_drop(f);
	pollfs_futex_unlock(f);
	return -EFAULT;
}

static int pollfs_futex_pop(struct pollfs_object *obj, void *rec, bool nowait)
{
	struct pollfs_futex_ctx *f = pollfs_futex_of(obj);
	struct pollfs_futex_wait *w;
	u64 absent;
	int ret;

again:
	ret = pollfs_futex_lock(f, nowait);
	if (ret)
		return ret;
	if (f->state == POLLFS_FUTEX_ARMED && f->watch) {
		ret = pollfs_futex_read_watch(f, rec, &absent);
		if (ret == POLLFS_FUTEX_ABSENT) {
			ret = pollfs_futex_fault_in(f, absent);
			if (ret == -EAGAIN)
				goto again;
			return ret;
		}
	} else if (f->state == POLLFS_FUTEX_ARMED &&
		   !test_bit(POLLFS_FUTEX_FIRED, &f->fired)) {
		ret = -EAGAIN;
	} else {
		w = pollfs_futex_next_woken(f);
		ret = -EINVAL;
		if (w) {
			memcpy(rec, &w->ev, sizeof(w->ev));
			pollfs_futex_take(f, w);
			ret = 1;
		}
	}
	pollfs_futex_ring_drained(f);
	pollfs_futex_unlock(f);
	return ret;
}

static __poll_t pollfs_futex_poll(struct pollfs_object *obj)
{
	struct pollfs_futex_ctx *f = pollfs_futex_of(obj);
	__poll_t events = 0;

	spin_lock_irq(&f->wqh.lock);
	if (f->state == POLLFS_FUTEX_PENDING ||
	    (f->state == POLLFS_FUTEX_ARMED &&
	     test_bit(POLLFS_FUTEX_FIRED, &f->fired)))
		events = EPOLLIN;
	spin_unlock_irq(&f->wqh.lock);
	return events;
}

static wait_queue_head_t *pollfs_futex_waitq(struct pollfs_object *obj)
{
	return &pollfs_futex_of(obj)->wqh;
}

/*
 * Under the queue's lock, not the object's: a look at /proc never waits
 * for the object's users.  The records are copied out a few at a time,
 * since a waker takes that lock too, and printed without it.  The values
 * a concurrent read or wake is changing may be shown either way.
 */
#define POLLFS_FUTEX_FDINFO_BATCH	16

static void pollfs_futex_show_fdinfo(struct seq_file *m,
				     struct pollfs_object *obj)
{
	static const char * const states[] = {
		[POLLFS_FUTEX_UNARMED]	= "unarmed",
		[POLLFS_FUTEX_ARMED]	= "armed",
		[POLLFS_FUTEX_PENDING]	= "woken",
	};
	struct pollfs_futex_ctx *f = pollfs_futex_of(obj);
	struct {
		struct pollfs_futex_event ev;
		bool woken;
	} batch[POLLFS_FUTEX_FDINFO_BATCH];
	enum pollfs_futex_state state;
	unsigned int nr, i, j, n;
	bool fired, watch;

	spin_lock_irq(&f->wqh.lock);
	state = f->state;
	fired = test_bit(POLLFS_FUTEX_FIRED, &f->fired);
	watch = f->watch;
	nr = f->nr;
	spin_unlock_irq(&f->wqh.lock);
	seq_printf(m, "state: %s\nfired: %d\nwatch: %d\nrecords: %u\n",
		   states[state], fired, watch, nr);

	for (i = 0; i < nr; i += n) {
		spin_lock_irq(&f->wqh.lock);
		n = i < f->nr ? min_t(unsigned int, f->nr - i,
					    POLLFS_FUTEX_FDINFO_BATCH) : 0;
		for (j = 0; j < n; j++) {
			batch[j].ev = f->waits[i + j].ev;
			batch[j].ev.val = READ_ONCE(f->waits[i + j].ev.val);
			batch[j].woken = READ_ONCE(f->waits[i + j].woken);
		}
		spin_unlock_irq(&f->wqh.lock);
		if (!n)
			break;
		for (j = 0; j < n; j++)
			seq_printf(m, "wait: addr %#llx val %u flags %#x%s\n",
				   batch[j].ev.addr, batch[j].ev.val,
				   batch[j].ev.flags,
				   batch[j].woken ? " woken" : "");
	}
}

/*
 * The last reference: no reader or writer is left, but the ring work
 * may be, queued by a wake before the drop; none comes after it.
 */
static void pollfs_futex_release(struct pollfs_object *obj)
{
	struct pollfs_futex_ctx *f = pollfs_futex_of(obj);

	mutex_lock(&f->lock);
	pollfs_futex_drop(f);
	mutex_unlock(&f->lock);
	cancel_work_sync(&f->ring_work);
	irq_work_sync(&f->wake_work);
	pollfs_futex_put_mm(f);
	kvfree(f->waits);
	mutex_destroy(&f->lock);
}

static int pollfs_futex_setup(struct pollfs_object *obj, const void *arg)
{
	struct pollfs_futex_ctx *f = pollfs_futex_of(obj);

	init_waitqueue_head(&f->wqh);
	init_irq_work(&f->wake_work, pollfs_futex_wake_work);
	INIT_WORK(&f->ring_work, pollfs_futex_ring_work);
	mutex_init(&f->lock);
	INIT_LIST_HEAD(&f->fmm_link);
	return 0;
}

/* Its watched set, armed before, moves behind the threads. */
static void pollfs_futex_ring_attached(struct pollfs_object *obj)
{
	struct pollfs_futex_ctx *f = pollfs_futex_of(obj);
	unsigned int i;

	mutex_lock(&f->lock);
	if (f->state == POLLFS_FUTEX_ARMED && f->watch)
		for (i = 0; i < f->nr; i++)
			if (f->waits[i].queued)
				pollfs_futex_requeue_behind(&f->waits[i]);
	pollfs_futex_unlock(f);
}

static_assert(offsetof(struct pollfs_futex_wait, q) == 0);
static_assert(sizeof(struct pollfs_futex_event) == 16);

const struct pollfs_kind pollfs_futex_kind = {
	.name		= "[futex]",
	POLLFS_OBJECT(struct pollfs_futex_ctx),
	POLLFS_OPEN(struct pollfs_open),
	.setup		= pollfs_futex_setup,
	.check		= pollfs_futex_check,
	.hook		= &pollfs_futex_wake_hook,
	.exit		= pollfs_futex_sync_mm,
	.read_size	= sizeof(struct pollfs_futex_event),
	.write_size	= sizeof(struct pollfs_futex_event),
	.read		= pollfs_futex_pop,
	.write		= pollfs_futex_write,
	.poll		= pollfs_futex_poll,
	.waitq		= pollfs_futex_waitq,
	.show_fdinfo	= pollfs_futex_show_fdinfo,
	.release	= pollfs_futex_release,
	.ring		= true,
	.ring_attached	= pollfs_futex_ring_attached,
};
