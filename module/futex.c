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
 * kernel has one (6.11 and later: every non-PI wake path calls
 * q->wake(), and ours marks the record, then has __futex_wake_mark()
 * unqueue it); before that by a kprobe on futex_wake_mark(), the one
 * function every non-PI wake path calls for each waiter it wakes.
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
 *    marks the record woken and wakes pollers then, not after: a woken poller that reads must call futex_unqueue(), which
 *    takes the same bucket lock if q->lock_ptr is still set, and so
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
 *    (6.16 and later), that table is freed with the address space's
 *    last user (__mmput()), whatever is queued on it: a FUTEX_WAIT task
 *    is one of those users, an object is not.  Holding a user would keep
 *    a dead process's memory for as long as the object lives, and for
 *    ever when the object's file is held by what that address space
 *    owns (an AIO poll request on it).  So an mmu_notifier, one per
 *    address space with objects armed privately on it, takes their
 *    waits off at its release, which exit_mmap() calls before the table
 *    is freed; they then never fire, as on older kernels.  A wait is
 *    queued only while its address space has a user (the writer, or
 *    the reader's mmget()), so never after that release; it is taken
 *    off under the notifier's mutex.  The table is made before the
 *    first wait is queued (futex_hash_allocate_default(), as io_uring
 *    does): one made later, when a second thread starts, would not take
 *    the waiters already in the global hash.
 *
 * A watched set (POLLFS_FUTEX_WATCH) stays armed: a read takes each
 * woken record and queues it again at once, on the value its word holds
 * then, read under the bucket lock like any arm.  The reader may be
 * another process (fork, SCM_RIGHTS) than the writer whose address space
 * holds the word: the re-arm uses the key the write computed, and reads
 * the word through a page pinned in the writer's mm.
 */

#include <linux/mutex.h>	/* before futex.h, which needs it since 6.12 */
#include <linux/futex.h>
#include <linux/highmem.h>
#include <linux/irq_work.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/pollfs.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "core.h"
#include "ksyms.h"

/* One armed record: the kernel's futex_q and what it was armed with. */
struct pollfs_futex_wait {
	u8 q[FUTEX_Q_SIZE] __aligned(sizeof(void *));
	struct pollfs_futex *owner;
	struct pollfs_futex_event ev;
	union futex_key key;	/* of ev.addr in the writer's mm */
	bool queued;		/* futex_unqueue() still owed */
	bool woken;		/* set by the wake hook under the bucket lock */
};

enum pollfs_futex_state {
	POLLFS_FUTEX_UNARMED,
	POLLFS_FUTEX_ARMED,	/* waits queued; FIRED once one was woken */
	POLLFS_FUTEX_PENDING,	/* disarmed, woken records left to read */
};

struct pollfs_futex {
	struct pollfs_object obj;
	wait_queue_head_t wqh;	/* its lock guards @state */
	enum pollfs_futex_state state;
	unsigned long fired;	/* POLLFS_FUTEX_FIRED: a record was woken */
	struct irq_work wake_work;	/* PREEMPT_RT: the kprobe's wake-up */
	struct mutex lock;	/* serializes write, read and release */
	struct mm_struct *mm;	/* the writer's, held while armed */
	struct pollfs_futex_mm *fmm;	/* its notifier, once armed privately */
	struct list_head fmm_link;	/* on @fmm's list while armed */
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

static struct kmem_cache *pollfs_futex_cache;

static struct pollfs_futex *to_futex(struct pollfs_object *obj)
{
	return container_of(obj, struct pollfs_futex, obj);
}

static struct futex_q *wait_q(struct pollfs_futex_wait *w)
{
	return (struct futex_q *)w->q;
}

static struct task_struct **q_task(void *q)
{
	return q + FUTEX_Q_TASK;
}

static spinlock_t *q_lock_ptr(void *q)
{
	return *(spinlock_t **)(q + FUTEX_Q_LOCK_PTR);
}

static union futex_key *q_key(void *q)
{
	return q + FUTEX_Q_KEY;
}

static u32 __user *wait_uaddr(struct pollfs_futex_wait *w)
{
	return u64_to_user_ptr(w->ev.addr);
}

/* As the kernel's own, which is inline since 6.16: no fault, no sleep. */
static int pollfs_futex_get_value_locked(u32 *dest, u32 __user *from)
{
	int ret;

	pagefault_disable();
	ret = get_user(*dest, from);
	pagefault_enable();
	return ret ? -EFAULT : 0;
}

#ifdef POLLFS_FUTEX_PRIVATE_HASH
#if !defined(POLLFS_FUTEX_Q_LOCK_HB) || \
	!defined(POLLFS_FUTEX_PRIVATE_HASH_PUT) || \
	!defined(POLLFS_FUTEX_HASH_ALLOCATE) || !defined(FUTEX_BUCKET_REF_SIZE)
#error "this kernel has futex_hash() but not the rest of the private hash API pollfs knows"
#endif
#if !IS_ENABLED(CONFIG_MMU_NOTIFIER)
#error "with per-process futex tables, futex objects need CONFIG_MMU_NOTIFIER"
#endif
struct futex_bucket_ref {
	struct futex_hash_bucket *hb;
	struct futex_private_hash *fph;
};
static_assert(sizeof(struct futex_bucket_ref) == FUTEX_BUCKET_REF_SIZE);
static_assert(offsetof(struct futex_bucket_ref, hb) == FUTEX_BUCKET_REF_HB);
static_assert(offsetof(struct futex_bucket_ref, fph) == FUTEX_BUCKET_REF_FPH);

/*
 * Lock @w's bucket, found from the key in its futex_q, as
 * futex_wait_setup() does; *@fph is the private table held meanwhile,
 * for pollfs_futex_bucket_put() once the bucket is unlocked.
 */
static struct futex_hash_bucket *
pollfs_futex_q_lock(struct pollfs_futex_wait *w, struct futex_private_hash **fph)
{
	struct futex_bucket_ref ref = pollfs_call(futex_hash)(q_key(w->q));

	*fph = ref.fph;
	pollfs_call(futex_q_lock)(wait_q(w), ref.hb);
	return ref.hb;
}

static void pollfs_futex_bucket_put(struct futex_private_hash *fph)
{
	if (fph)
		pollfs_call(futex_private_hash_put)(fph);
}

/* The objects armed privately on one address space (see the top). */
struct pollfs_futex_mm {
	struct mmu_notifier mn;
	struct mutex lock;	/* taking waits off, by objects and release */
	struct list_head objects;
};

static void pollfs_futex_unqueue(struct pollfs_futex_wait *w);

/* The address space's end, before its private futex table is freed. */
static void pollfs_futex_mm_release(struct mmu_notifier *mn,
				    struct mm_struct *mm)
{
	struct pollfs_futex_mm *fmm = container_of(mn, struct pollfs_futex_mm,
						   mn);
	struct pollfs_futex *f, *next;
	unsigned int i;

	mutex_lock(&fmm->lock);
	list_for_each_entry_safe(f, next, &fmm->objects, fmm_link) {
		for (i = 0; i < f->nr; i++)
			pollfs_futex_unqueue(&f->waits[i]);
		list_del_init(&f->fmm_link);
	}
	mutex_unlock(&fmm->lock);
}

static struct mmu_notifier *pollfs_futex_mm_alloc(struct mm_struct *mm)
{
	struct pollfs_futex_mm *fmm = kzalloc(sizeof(*fmm), GFP_KERNEL);

	if (!fmm)
		return ERR_PTR(-ENOMEM);
	mutex_init(&fmm->lock);
	INIT_LIST_HEAD(&fmm->objects);
	return &fmm->mn;
}

static void pollfs_futex_mm_free(struct mmu_notifier *mn)
{
	struct pollfs_futex_mm *fmm = container_of(mn, struct pollfs_futex_mm,
						   mn);

	mutex_destroy(&fmm->lock);
	kfree(fmm);
}

static const struct mmu_notifier_ops pollfs_futex_mm_ops = {
	.release	= pollfs_futex_mm_release,
	.alloc_notifier	= pollfs_futex_mm_alloc,
	.free_notifier	= pollfs_futex_mm_free,
};

/*
 * Armed by the writer, in its own address space (current->mm, f->mm):
 * the table made, and the object on its address space's notifier.
 */
static int pollfs_futex_track(struct pollfs_futex *f)
{
	struct mmu_notifier *mn;
	unsigned int i;
	int err;

	for (i = 0; i < f->nr; i++)
		if (!(f->waits[i].ev.flags & POLLFS_FUTEX_SHARED))
			break;
	if (i == f->nr)
		return 0;
	err = pollfs_call(futex_hash_allocate_default)();
	if (err)
		return err;
	if (f->fmm && f->fmm->mn.mm != f->mm) {
		mmu_notifier_put(&f->fmm->mn);
		f->fmm = NULL;
	}
	if (!f->fmm) {
		mn = mmu_notifier_get(&pollfs_futex_mm_ops, f->mm);
		/*
		 * Its first registration on an mm takes every lock of the
		 * address space, and gives up at a signal: the write is
		 * then made again after the handler, never EINTR.
		 */
		if (mn == ERR_PTR(-EINTR))
			return -ERESTARTNOINTR;
		if (IS_ERR(mn))
			return PTR_ERR(mn);
		f->fmm = container_of(mn, struct pollfs_futex_mm, mn);
	}
	mutex_lock(&f->fmm->lock);
	list_add(&f->fmm_link, &f->fmm->objects);
	mutex_unlock(&f->fmm->lock);
	return 0;
}

/*
 * The lock to take waits off under, NULL if none is needed: the
 * notifier's, once there is one, whether or not its release came.
 */
static struct mutex *pollfs_futex_track_lock(struct pollfs_futex *f)
{
	return f->fmm ? &f->fmm->lock : NULL;
}

static void pollfs_futex_put_mm(struct pollfs_futex *f)
{
	if (f->fmm)
		mmu_notifier_put(&f->fmm->mn);
}

/* At unload: every notifier freed (their free runs after SRCU). */
static void pollfs_futex_sync_mm(void)
{
	mmu_notifier_synchronize();
}
#elif defined(POLLFS_FUTEX_Q_LOCK_HB)
#error "this kernel's futex_q_lock() takes a bucket but it has no futex_hash()"
#else
struct futex_private_hash;

static struct futex_hash_bucket *
pollfs_futex_q_lock(struct pollfs_futex_wait *w, struct futex_private_hash **fph)
{
	*fph = NULL;
	return pollfs_call(futex_q_lock)(wait_q(w));
}

static void pollfs_futex_bucket_put(struct futex_private_hash *fph)
{
}

static int pollfs_futex_track(struct pollfs_futex *f)
{
	return 0;
}

static struct mutex *pollfs_futex_track_lock(struct pollfs_futex *f)
{
	return NULL;
}

static void pollfs_futex_put_mm(struct pollfs_futex *f)
{
}

static void pollfs_futex_sync_mm(void)
{
}
#endif

/*
 * get_futex_key()'s second argument: bool fshared until 6.6, since 6.7
 * the FLAGS_* of kernel/futex/futex.h, which BTF does not carry:
 * FLAGS_SIZE_32 0x0002, FLAGS_SHARED 0x0010 (an MMU kernel's).
 */
static int pollfs_futex_key(struct pollfs_futex_wait *w)
{
	bool shared = w->ev.flags & POLLFS_FUTEX_SHARED;

#ifdef POLLFS_FUTEX_KEY_FLAGS
	return pollfs_call(get_futex_key)(wait_uaddr(w),
					  0x0002 | (shared ? 0x0010 : 0),
					  &w->key, FUTEX_ACCESS_READ);
#else
	return pollfs_call(get_futex_key)(wait_uaddr(w), shared, &w->key,
					  FUTEX_ACCESS_READ);
#endif
}

/*
 * Queue @w on its bucket, whose lock is held, as init_task's waiter;
 * since 6.12.20 (a stable backport) __futex_queue() takes the task.
 */
static void pollfs_futex_queue_locked(struct pollfs_futex_wait *w,
				      struct futex_hash_bucket *hb)
{
#ifdef POLLFS_FUTEX_QUEUE_TASK
	pollfs_call(__futex_queue)(wait_q(w), hb, &init_task);
#else
	pollfs_call(__futex_queue)(wait_q(w), hb);
#endif
	WRITE_ONCE(*q_task(w->q), &init_task);
	w->queued = true;
}

static void pollfs_futex_set_state(struct pollfs_futex *f,
				   enum pollfs_futex_state state)
{
	spin_lock_irq(&f->wqh.lock);
	f->state = state;
	clear_bit(POLLFS_FUTEX_FIRED, &f->fired);
	spin_unlock_irq(&f->wqh.lock);
}

/* A wake took @w: with the hash bucket lock held, before @w is unqueued. */
static void pollfs_futex_woken(struct pollfs_futex_wait *w)
{
	struct pollfs_futex *f = w->owner;
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
	struct pollfs_futex *f = container_of(work, struct pollfs_futex,
					      wake_work);

	wake_up_poll(&f->wqh, EPOLLIN);
}

#if defined(FUTEX_Q_WAKE) && defined(POLLFS_FUTEX_WAKE_MARK)

/* The futex_q's wake function (a futex_wake_fn) of every armed record. */
static void pollfs_futex_wake(struct wake_q_head *wake_q, struct futex_q *q)
{
	pollfs_futex_woken((struct pollfs_futex_wait *)q);
	pollfs_call(__futex_wake_mark)(q);
}

static void pollfs_futex_set_wake(struct pollfs_futex_wait *w)
{
	*(void **)(w->q + FUTEX_Q_WAKE) = pollfs_futex_wake;
}

static int pollfs_futex_probe(void)
{
	return 0;
}

static void pollfs_futex_unprobe(void)
{
}

#elif defined(FUTEX_Q_WAKE)
#error "this kernel's futex_q has a wake function but no __futex_wake_mark()"
#else

static void pollfs_futex_set_wake(struct pollfs_futex_wait *w)
{
}

/*
 * kprobe pre-handler of futex_wake_mark(wake_q, q): runs with the hash
 * bucket lock of @q held, before @q is unqueued.  Our records name
 * init_task, no user task does.
 */
static int pollfs_futex_wake_hook(struct kprobe *kp, struct pt_regs *regs)
{
	void *q = (void *)regs_get_kernel_argument(regs, 1);

	if (READ_ONCE(*q_task(q)) == &init_task)
		pollfs_futex_woken(q);
	return 0;
}

static struct kprobe pollfs_futex_kprobe = {
	.symbol_name	= "futex_wake_mark",
	.pre_handler	= pollfs_futex_wake_hook,
};

static struct pollfs_once pollfs_futex_kprobed =
	POLLFS_ONCE_INIT(pollfs_futex_kprobed);

static int pollfs_futex_kprobe_install(void)
{
	int err = register_kprobe(&pollfs_futex_kprobe);

	if (err)
		pr_err("cannot probe futex_wake_mark (%d)\n", err);
	return err;
}

/*
 * The probe costs every futex wake in the system a call: it goes in when
 * the first futex object is created, before any can be armed.
 */
static int pollfs_futex_probe(void)
{
	return pollfs_once(&pollfs_futex_kprobed, pollfs_futex_kprobe_install);
}

static void pollfs_futex_unprobe(void)
{
	if (pollfs_futex_kprobed.done)
		unregister_kprobe(&pollfs_futex_kprobe);
}

#endif

/*
 * Take @w off its hash chain if a waker has not already.  A futex_q whose
 * lock_ptr was cleared was woken even if the hook did not see it (a
 * kprobe can be missed), so that, not our flag, decides.
 */
static void pollfs_futex_unqueue(struct pollfs_futex_wait *w)
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
static void pollfs_futex_untrack(struct pollfs_futex *f)
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
static void pollfs_futex_disarm(struct pollfs_futex *f)
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
static void pollfs_futex_drop(struct pollfs_futex *f)
{
	if (f->state == POLLFS_FUTEX_ARMED)
		pollfs_futex_disarm(f);
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
static int pollfs_futex_queue_all(struct pollfs_futex *f)
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

static int pollfs_futex_reserve(struct pollfs_futex *f, unsigned int nr)
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

static int pollfs_futex_arm(struct pollfs_futex *f, struct iov_iter *from,
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
	struct pollfs_futex *f = to_futex(obj);
	int ret;

	mutex_lock(&f->lock);
	pollfs_futex_drop(f);
	if (nrec > POLLFS_FUTEX_WAITV_MAX)
		ret = -EINVAL;
	else if (!current->mm)
		ret = -EFAULT;
	else
		ret = pollfs_futex_arm(f, from, nrec);
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
static int pollfs_futex_pin_word(struct pollfs_futex *f,
				 struct pollfs_futex_wait *w,
				 struct page **page)
{
	long pinned;

	mmap_read_lock(f->mm);
#if defined(POLLFS_PIN_REMOTE)
	pinned = pin_user_pages_remote(f->mm, w->ev.addr, 1, 0, page, NULL);
#elif defined(POLLFS_PIN_REMOTE_VMAS)
	pinned = pin_user_pages_remote(f->mm, w->ev.addr, 1, 0, page, NULL,
				       NULL);
#else
#error "this kernel's pin_user_pages_remote() has a shape pollfs does not know"
#endif
	mmap_read_unlock(f->mm);
	return pinned == 1 ? 0 : -EFAULT;
}

/*
 * Queue a watched record that a wake took off its chain again, on the
 * value its word holds now, which goes into the record.  The key is the
 * one of the write, so a requeue to another word does not carry over.
 * Mutex held.
 */
static int pollfs_futex_rewatch(struct pollfs_futex *f,
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
static int pollfs_futex_read_watch(struct pollfs_futex *f, void *rec)
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

static int pollfs_futex_read(struct pollfs_object *obj, void *rec)
{
	struct pollfs_futex *f = to_futex(obj);
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
		pollfs_futex_disarm(f);
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
	struct pollfs_futex *f = to_futex(obj);
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
	struct pollfs_futex *f = to_futex(obj);
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
	struct pollfs_futex *f = to_futex(obj);

	if (f->state == POLLFS_FUTEX_ARMED)
		pollfs_futex_disarm(f);
	irq_work_sync(&f->wake_work);
	pollfs_futex_put_mm(f);
	kvfree(f->waits);
	mutex_destroy(&f->lock);
	kmem_cache_free(pollfs_futex_cache, f);
}

static int pollfs_futex_create(const void __user *arg)
{
	struct pollfs_futex *f;
	u32 flags;
	int err, fd;

	err = pollfs_get_open_flags(arg, &flags);
	if (err)
		return err;
	err = pollfs_futex_probe();
	if (err)
		return err;

	f = kmem_cache_zalloc(pollfs_futex_cache, GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	init_waitqueue_head(&f->wqh);
	init_irq_work(&f->wake_work, pollfs_futex_wake_work);
	mutex_init(&f->lock);
	INIT_LIST_HEAD(&f->fmm_link);

	fd = pollfs_install(&f->obj, &pollfs_futex_kind, flags);
	if (fd < 0)
		pollfs_futex_release(&f->obj);
	return fd;
}

static int pollfs_futex_init(void)
{
	BUILD_BUG_ON(offsetof(struct pollfs_futex_wait, q) != 0);
	BUILD_BUG_ON(sizeof(struct pollfs_futex_event) != 16);

	pollfs_futex_cache = KMEM_CACHE(pollfs_futex, SLAB_ACCOUNT);
	return pollfs_futex_cache ? 0 : -ENOMEM;
}

static void pollfs_futex_exit(void)
{
	pollfs_futex_unprobe();
	pollfs_futex_sync_mm();
	kmem_cache_destroy(pollfs_futex_cache);
}

const struct pollfs_kind pollfs_futex_kind = {
	.name		= "[futex]",
	.cmd		= POLLFS_IOC_FUTEX,
	.create		= pollfs_futex_create,
	.init		= pollfs_futex_init,
	.exit		= pollfs_futex_exit,
	.read_size	= sizeof(struct pollfs_futex_event),
	.write_size	= sizeof(struct pollfs_futex_event),
	.read		= pollfs_futex_read,
	.write		= pollfs_futex_write,
	.poll		= pollfs_futex_poll,
	.waitq		= pollfs_futex_waitq,
	.show_fdinfo	= pollfs_futex_show_fdinfo,
	.release	= pollfs_futex_release,
};
