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
 * the word through a page pinned in the writer's mm.
 */

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
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

static int pollfs_futex_key(struct pollfs_futex_wait *w)
{
	return pollfs_get_futex_key(wait_uaddr(w),
				    w->ev.flags & POLLFS_FUTEX_SHARED, &w->key);
}

/* Queue @w on its bucket, whose lock is held, as init_task's waiter. */
static void pollfs_futex_queue_locked(struct pollfs_futex_wait *w,
				      struct futex_hash_bucket *hb)
{
	pollfs_futex_queue(wait_q(w), hb, &init_task);
	WRITE_ONCE(*q_task(w->q), &init_task);
	w->queued = true;
}

static void pollfs_futex_set_state(struct pollfs_futex_ctx *f,
				   enum pollfs_futex_state state)
{
	spin_lock_irq(&f->wqh.lock);
	f->state = state;
	clear_bit(POLLFS_FUTEX_FIRED, &f->fired);
	spin_unlock_irq(&f->wqh.lock);
}

/* A wake took @w: with the hash bucket lock held, before @w is unqueued. */
void pollfs_futex_woken(struct pollfs_futex_wait *w)
{
	struct pollfs_futex_ctx *f = w->owner;
	unsigned long flags;

	WRITE_ONCE(w->woken, true);
	smp_mb__before_atomic();	/* @woken before the bit: see FIRED */
	set_bit(POLLFS_FUTEX_FIRED, &f->fired);
	if (IS_ENABLED(CONFIG_PREEMPT_RT)) {
		irq_work_queue(&f->wake_work);
		return;
	}
	spin_lock_irqsave(&f->wqh.lock, flags);
	wake_up_locked_poll(&f->wqh, EPOLLIN);
	spin_unlock_irqrestore(&f->wqh.lock, flags);
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
	if (!pollfs_call(futex_unqueue)(wait_q(w))) {
		/* Pairs with the release store of NULL to lock_ptr. */
		smp_rmb();
		w->woken = true;
	}
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

/* Drop every queued wait, keeping the woken records.  Mutex held. */
static void pollfs_futex_dequeue_all(struct pollfs_futex_ctx *f)
{
	unsigned int i;

	pollfs_futex_untrack(f);
	f->nr_pending = 0;
	for (i = 0; i < f->nr; i++)
		f->nr_pending += f->waits[i].woken;
	pollfs_futex_set_state(f, f->nr_pending ? POLLFS_FUTEX_PENDING :
						  POLLFS_FUTEX_UNARMED);
}

/* Disarm, and drop the woken records not read yet.  Mutex held. */
static void pollfs_futex_drop(struct pollfs_futex_ctx *f)
{
	if (f->state == POLLFS_FUTEX_ARMED)
		pollfs_futex_dequeue_all(f);
	f->nr = 0;
	f->nr_pending = 0;
	f->watch = false;
	if (f->state != POLLFS_FUTEX_UNARMED)
		pollfs_futex_set_state(f, POLLFS_FUTEX_UNARMED);
}

/*
 * Queue a wait for each of the @f->nr records, if every futex word still
 * holds its expected value, as futex_waitv() does: keys first (that may
 * fault and sleep), then each value read and the futex_q queued under
 * its bucket lock, one bucket at a time.  A mismatch unqueues what was
 * queued, unless a wake already took one of them: then the wait has
 * happened and the write succeeds with the object readable.  Not for a
 * watched set, which a read re-arms only where it was woken: it fails
 * whole (its words changed; the caller reads them again).  Mutex held;
 * the state is ARMED throughout, so a wake during the loop is seen.
 */
static int pollfs_futex_queue_all(struct pollfs_futex_ctx *f)
{
	struct futex_private_hash *fph;
	struct futex_hash_bucket *hb;
	struct pollfs_futex_wait *w;
	unsigned int i, j;
	bool woken;
	u32 uval;
	int ret;

retry:
	for (i = 0; i < f->nr; i++) {
		w = &f->waits[i];
		memcpy(w->q, pollfs_ksyms.futex_q_init, FUTEX_Q_SIZE);
		pollfs_futex_set_wake(w);
		w->owner = f;
		w->queued = false;
		w->woken = false;
		ret = pollfs_futex_key(w);
		if (ret)
			return ret;
		*q_key(w->q) = w->key;
	}

	for (i = 0; i < f->nr; i++) {
		w = &f->waits[i];
		hb = pollfs_futex_q_lock(w, &fph);
		__acquire(q_lock_ptr(w->q));
		ret = pollfs_futex_get_value_locked(&uval, wait_uaddr(w));
		if (!ret && uval == w->ev.val) {
			pollfs_futex_queue_locked(w, hb);
			spin_unlock(q_lock_ptr(w->q));
			pollfs_futex_bucket_put(fph);
			continue;
		}
		pollfs_call(futex_q_unlock)(hb);
		__release(q_lock_ptr(w->q));
		pollfs_futex_bucket_put(fph);

		woken = false;
		for (j = 0; j < i; j++) {
			pollfs_futex_unqueue(&f->waits[j]);
			woken |= f->waits[j].woken;
		}
		if (woken && !f->watch)
			return 0;
		if (!ret)
			return -EAGAIN;
		/* The page was not present: fault it in unlocked, retry. */
		if (get_user(uval, wait_uaddr(w)))
			return -EFAULT;
		goto retry;
	}
	return 0;
}

static int pollfs_futex_reserve(struct pollfs_futex_ctx *f, unsigned int nr)
{
	struct pollfs_futex_wait *waits;

	if (nr <= f->capacity)
		return 0;
	waits = kvmalloc_array(nr, sizeof(*waits), GFP_KERNEL_ACCOUNT);
	if (!waits)
		return -ENOMEM;
	kvfree(f->waits);
	f->waits = waits;
	f->capacity = nr;
	return 0;
}

static int pollfs_futex_queue_records(struct pollfs_futex_ctx *f, struct iov_iter *from,
			    unsigned int nr)
{
	struct pollfs_futex_wait *w;
	unsigned int i;
	int ret;

	ret = pollfs_futex_reserve(f, nr);
	if (ret)
		return ret;
	for (i = 0; i < nr; i++) {
		w = &f->waits[i];
		w->queued = false;
		if (copy_from_iter(&w->ev, sizeof(w->ev), from) !=
		    sizeof(w->ev))
			return -EFAULT;
		if (w->ev.flags & ~(POLLFS_FUTEX_SHARED | POLLFS_FUTEX_WATCH) ||
		    w->ev.addr % sizeof(u32))
			return -EINVAL;
		/* A set is watched as a whole or not at all. */
		if ((w->ev.flags ^ f->waits[0].ev.flags) & POLLFS_FUTEX_WATCH)
			return -EINVAL;
	}
	/* One record of zeros is the explicit disarm: done already. */
	if (nr == 1 && !memchr_inv(&f->waits[0].ev, 0, sizeof(w->ev)))
		return 0;

	f->watch = f->waits[0].ev.flags & POLLFS_FUTEX_WATCH;
	f->nr = nr;
	f->mm = current->mm;
	mmgrab(f->mm);
	ret = pollfs_futex_track(f);
	if (!ret) {
		pollfs_futex_set_state(f, POLLFS_FUTEX_ARMED);
		ret = pollfs_futex_queue_all(f);
	}
	if (ret) {
		/* Whatever was queued is off already; off the list too. */
		pollfs_futex_untrack(f);
		f->nr = 0;
		pollfs_futex_set_state(f, POLLFS_FUTEX_UNARMED);
	}
	return ret;
}

/*
 * Every write of at least one record replaces the previous wait, armed
 * or woken and unread; one that fails, and the disarm record, leave the
 * object unarmed.  (A write shorter than a record is refused by the core
 * and changes nothing.)
 */
static ssize_t pollfs_futex_write(struct pollfs_object *obj,
				  struct iov_iter *from, size_t nrec)
{
	struct pollfs_futex_ctx *f = to_futex(obj);
	int ret;

	mutex_lock(&f->lock);
	pollfs_futex_drop(f);
	if (nrec > POLLFS_FUTEX_WAITV_MAX)
		ret = -EINVAL;
	else if (!current->mm)
		ret = -EFAULT;
	else
		ret = pollfs_futex_queue_records(f, from, nrec);
	mutex_unlock(&f->lock);
	return ret ? ret : nrec;
}

/*
 * The reader is not in the writer's address space: pin the page of the
 * word there, to read it under the bucket lock through the kernel's
 * mapping.  A pin (FOLL_PIN), not a reference: it unshares an anonymous
 * page that fork left shared copy-on-write, so the page read is the one
 * the writer's next store goes to.  The caller holds a user of that mm.
 */
static int pollfs_futex_pin_word(struct pollfs_futex_ctx *f,
				 struct pollfs_futex_wait *w,
				 struct page **page)
{
	long pinned;

	mmap_read_lock(f->mm);
	pinned = pollfs_pin_page_remote(f->mm, w->ev.addr, page);
	mmap_read_unlock(f->mm);
	return pinned == 1 ? 0 : -EFAULT;
}

/*
 * Queue a watched record that a wake took off its chain again, on the
 * value its word holds now, which goes into the record.  The key is the
 * one of the write, so a requeue to another word does not carry over.
 * Mutex held.
 */
static int pollfs_futex_rewatch(struct pollfs_futex_ctx *f,
				struct pollfs_futex_wait *w)
{
	struct futex_private_hash *fph;
	struct futex_hash_bucket *hb;
	struct page *page = NULL;
	u32 *word;
	u32 uval;
	int ret;

	if (current->mm != f->mm) {
		ret = pollfs_futex_pin_word(f, w, &page);
		if (ret)
			return ret;
	}
retry:
	memcpy(w->q, pollfs_ksyms.futex_q_init, FUTEX_Q_SIZE);
	pollfs_futex_set_wake(w);
	*q_key(w->q) = w->key;
	w->woken = false;
	hb = pollfs_futex_q_lock(w, &fph);
	__acquire(q_lock_ptr(w->q));
	if (page) {
		word = kmap_local_page(page) + offset_in_page(w->ev.addr);
		uval = READ_ONCE(*word);
		kunmap_local(word);
		ret = 0;
	} else {
		ret = pollfs_futex_get_value_locked(&uval, wait_uaddr(w));
	}
	if (ret) {
		pollfs_call(futex_q_unlock)(hb);
		__release(q_lock_ptr(w->q));
		pollfs_futex_bucket_put(fph);
		/* The page was not present: fault it in unlocked, retry. */
		if (get_user(uval, wait_uaddr(w)))
			return -EFAULT;
		goto retry;
	}
	pollfs_futex_queue_locked(w, hb);
	w->ev.val = uval;
	spin_unlock(q_lock_ptr(w->q));
	pollfs_futex_bucket_put(fph);
	if (page)
		unpin_user_page(page);
	return 0;
}

/*
 * Read a watched set: the first woken record, queued again.  Readiness
 * is cleared before the records are looked at, so a wake that comes
 * during the look sets it again.  A word that can no longer be read
 * (unmapped, or the writer's address space gone) ends the watch: the
 * object is left unarmed and the read fails with EFAULT.
 */
static int pollfs_futex_read_watch(struct pollfs_futex_ctx *f, void *rec)
{
	struct pollfs_futex_wait *w = NULL;
	unsigned int i;
	bool other;
	int ret;

	/* Fully ordered: the records are looked at after the bit. */
	if (!test_and_clear_bit(POLLFS_FUTEX_FIRED, &f->fired))
		return -EAGAIN;

	for (i = 0; i < f->nr; i++) {
		if (!READ_ONCE(f->waits[i].woken))
			continue;
		if (w) {	/* more to read */
			set_bit(POLLFS_FUTEX_FIRED, &f->fired);
			break;
		}
		w = &f->waits[i];
	}
	if (!w)
		return -EAGAIN;

	/*
	 * A user of the writer's address space, held while the wait is
	 * taken off and queued again: the reader itself, in that address
	 * space, or a reference taken here; an address space that is gone
	 * can hold no word to watch.  Its last put may free it: not here,
	 * under the mutex, but in a worker.
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
	if (ret) {
		pollfs_futex_drop(f);
		return ret;
	}
	memcpy(rec, &w->ev, sizeof(w->ev));
	return 1;
}

static int pollfs_futex_pop(struct pollfs_object *obj, void *rec)
{
	struct pollfs_futex_ctx *f = to_futex(obj);
	struct pollfs_futex_wait *w;
	unsigned int i;
	int ret = -EINVAL;

	mutex_lock(&f->lock);
	if (f->state == POLLFS_FUTEX_ARMED && f->watch) {
		ret = pollfs_futex_read_watch(f, rec);
		goto out;
	}
	if (f->state == POLLFS_FUTEX_ARMED) {
		if (!test_bit(POLLFS_FUTEX_FIRED, &f->fired)) {
			ret = -EAGAIN;
			goto out;
		}
		pollfs_futex_dequeue_all(f);
	}
	if (f->state != POLLFS_FUTEX_PENDING)
		goto out;

	for (i = 0; i < f->nr; i++) {
		w = &f->waits[i];
		if (!w->woken)
			continue;
		w->woken = false;
		memcpy(rec, &w->ev, sizeof(w->ev));
		if (!--f->nr_pending) {
			f->nr = 0;
			pollfs_futex_set_state(f, POLLFS_FUTEX_UNARMED);
		}
		ret = 1;
		break;
	}
out:
	mutex_unlock(&f->lock);
	return ret;
}

static __poll_t pollfs_futex_poll(struct pollfs_object *obj)
{
	struct pollfs_futex_ctx *f = to_futex(obj);
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
	return &to_futex(obj)->wqh;
}

static void pollfs_futex_show_fdinfo(struct seq_file *m,
				     struct pollfs_object *obj)
{
	static const char * const states[] = {
		[POLLFS_FUTEX_UNARMED]	= "unarmed",
		[POLLFS_FUTEX_ARMED]	= "armed",
		[POLLFS_FUTEX_PENDING]	= "woken",
	};
	struct pollfs_futex_ctx *f = to_futex(obj);
	struct pollfs_futex_wait *w;
	unsigned int i;

	mutex_lock(&f->lock);
	seq_printf(m, "state: %s\nfired: %d\nwatch: %d\nrecords: %u\n",
		   states[f->state], test_bit(POLLFS_FUTEX_FIRED, &f->fired),
		   f->watch, f->nr);
	for (i = 0; i < f->nr; i++) {
		w = &f->waits[i];
		seq_printf(m, "wait: addr %#llx val %u flags %#x%s\n",
			   w->ev.addr, w->ev.val, w->ev.flags,
			   w->woken ? " woken" : "");
	}
	mutex_unlock(&f->lock);
}

static void pollfs_futex_release(struct pollfs_object *obj)
{
	struct pollfs_futex_ctx *f = to_futex(obj);

	if (f->state == POLLFS_FUTEX_ARMED)
		pollfs_futex_dequeue_all(f);
	irq_work_sync(&f->wake_work);
	pollfs_futex_put_mm(f);
	kvfree(f->waits);
	mutex_destroy(&f->lock);
}

static int pollfs_futex_setup(struct pollfs_object *obj, const void *arg)
{
	struct pollfs_futex_ctx *f = to_futex(obj);

	init_waitqueue_head(&f->wqh);
	init_irq_work(&f->wake_work, pollfs_futex_wake_work);
	mutex_init(&f->lock);
	INIT_LIST_HEAD(&f->fmm_link);
	return 0;
}

static_assert(offsetof(struct pollfs_futex_wait, q) == 0);
static_assert(sizeof(struct pollfs_futex_event) == 16);

const struct pollfs_kind pollfs_futex_kind = {
	.name		= "[futex]",
	POLLFS_OBJECT(struct pollfs_futex_ctx),
	POLLFS_OPEN(struct pollfs_open),
	.setup		= pollfs_futex_setup,
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
};
