// SPDX-License-Identifier: GPL-2.0
/*
 * The AIO object: polls a Linux AIO context's completion ring.
 *
 * It is readable while the ring of an io_setup(2) context holds
 * completions nobody has reaped, and reads report how many without
 * reaping them.  The return of aio_complete(), after each completion,
 * and the context's own wait queue, which kill_ioctx() wakes once it has
 * marked the context dead, tell the object when to look again.
 *
 * The object takes no reference on the context: a reference on its
 * users or reqs would keep io_destroy(2), and the exit of a process
 * whose files still hold the object, waiting forever.  Instead the
 * objects of one context share a hub, which keeps one entry on the
 * context's wait queue however many objects there are, and forgets the
 * context in the wake-up that kill_ioctx() sends before anything of the
 * context is freed; the context itself is freed an RCU grace period
 * after that (free_ioctx() is queued with queue_rcu_work()), so a reader
 * that found the pointer still set, under rcu_read_lock(), may use it.
 * So what a completion does for pollfs under the context's lock, with
 * interrupts off, is one entry's work whatever the number of objects:
 * their pollers and readers wait on the hub's queue, woken once.
 *
 * The entry's function is called with every completion before 6.7 and
 * only by kill_ioctx() since ("aio: obey min_nr when doing wakeups"),
 * where aio_complete() takes each entry of the queue for a struct
 * aio_waiter: ours is one whose min_nr no ring ever reaches.  So the
 * function tells the object of the context's death alone, and the
 * completions come from the return of aio_complete(), on every kernel,
 * hooked from an ftrace callback at its entry (aio.h names the two
 * files, one an architecture; module/README.md says why neither a
 * kprobe nor an fprobe): at the return the completion is in the ring,
 * and the completing iocb still holds its context.
 *
 * That return wakes the hub's queue directly, as the eventfd of an
 * IOCB_FLAG_RESFD iocb is signalled a few instructions earlier in the
 * same function, after every lock of the context is dropped: our
 * wake-up takes the locks that eventfd_signal() takes (the woken file's
 * queue, then its pollers': epoll, an IOCB_CMD_POLL, a waiting task)
 * under whatever lock the completing driver holds.  None of them is held
 * there: a read, write or fsync completes from a driver's completion (an
 * interrupt, a workqueue, io_submit() itself), never inside a wake-up,
 * and each of them is taken with interrupts off, so no interrupt's
 * completion lands inside one.  One completion is the exception: an
 * IOCB_CMD_POLL completed inline by aio_poll_wake(), inside the wake-up
 * of the queue it polls, under that queue's lock.  If it polls an object
 * of this context, or an epoll file holding one, a direct wake-up would
 * take that lock again.  A poll iocb's completion therefore goes through
 * the hub's irq_work, which runs once interrupts are on again, when no
 * queue lock is held on this CPU (each is taken with interrupts off);
 * so does the death's wake-up, which comes under the context's queue
 * lock.  The hop costs a self-IPI on x86, a tenth of the submitter's
 * time in bench-aio.
 *
 * Nothing in aio_complete() sleeps (it is called from interrupts too),
 * but on PREEMPT_RT, where its spinlock_t locks do: there no return is
 * hooked, and the context's wait queue, whose entries aio_complete()
 * calls after every completion before 6.7, wakes the hub through its
 * irq_work, which runs in a thread.
 *
 * Locks, outer first: the context's ctx->wait.lock (the hub on its
 * queue, the hub's context pointer and its last object's leaving), then
 * ctx->completion_lock (the ring's tail and page 0, read for the count),
 * never both at once; the hub's queue lock alone, after ctx->wait.lock
 * is dropped.  All are spinlocks taken with interrupts off, which sleep
 * on PREEMPT_RT (where nothing of this runs from a hook).
 *
 * The context's layout comes from the target kernel's BTF
 * (module/internals.list).
 */

#include <linux/highmem.h>
#include <linux/irq_work.h>
#include <linux/mm_types.h>
#include <linux/nospec.h>
#include <linux/pollfs.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "aio.h"

/* An entry of a kioctx's wait queue, shaped as the kernel's aio_waiter. */
struct pollfs_aio_waiter {
	wait_queue_entry_t w;
#ifdef AIO_WAITER_SIZE
	size_t min_nr;		/* SIZE_MAX: aio_complete() never takes it */
#endif
};

/*
 * What every object of one context shares: the one entry pollfs puts on
 * the kioctx's wait queue, and the queue their pollers and readers wait
 * on.  A completion finds it there and wakes that queue once, so what it
 * costs under the context's lock, with interrupts off, does not grow with
 * the number of objects; the wake-up of their pollers is an eventfd's.
 */
struct pollfs_aio_hub {
	struct pollfs_aio_waiter ctx_wait;	/* on the kioctx's wait queue */
	void *ctx;	/* the kioctx, NULL once dead; RCU, ctx->wait.lock */
	refcount_t users;	/* the objects on it */
	wait_queue_head_t wqh;
	struct irq_work work;
	bool hup;	/* the context died: the work wakes with EPOLLHUP */
	struct rcu_head rcu;
};

struct pollfs_aio_ctx {
	struct pollfs_object obj;
	struct pollfs_aio_hub *hub;
	u64 user_id;
};

static struct pollfs_aio_ctx *to_aio(struct pollfs_object *obj)
{
	return container_of(obj, struct pollfs_aio_ctx, obj);
}

static atomic_t *kioctx_dead(void *ctx)
{
	return ctx + KIOCTX_DEAD;
}

static wait_queue_head_t *kioctx_wait(void *ctx)
{
	return ctx + KIOCTX_WAIT;
}

/*
 * Unreaped completions, counted as fs/aio.c counts them: the kernel's
 * tail against the head user space writes, taken modulo the ring size
 * because user space may write anything there.  Ring page 0 is looked
 * up under the completion lock: aio_migrate_folio() replaces it under
 * that lock and frees the old page once it drops it.
 */
static unsigned int pollfs_aio_available(void *ctx)
{
	spinlock_t *lock = ctx + KIOCTX_COMPLETION_LOCK;
	unsigned int nr = *(unsigned int *)(ctx + KIOCTX_NR_EVENTS);
	unsigned int head, tail;
	struct page *page0;
	unsigned long flags;
	void *ring;

	spin_lock_irqsave(lock, flags);
#if defined(KIOCTX_RING_PAGES)
	page0 = (*(struct page ***)(ctx + KIOCTX_RING_PAGES))[0];
#elif defined(KIOCTX_RING_FOLIOS)
	page0 = folio_page((*(struct folio ***)(ctx + KIOCTX_RING_FOLIOS))[0], 0);
#else
#error "this kernel's struct kioctx has neither ring_pages nor ring_folios"
#endif
	tail = *(unsigned int *)(ctx + KIOCTX_TAIL);
	ring = kmap_local_page(page0);
	head = READ_ONCE(*(unsigned int *)(ring + AIO_RING_HEAD));
	kunmap_local(ring);
	spin_unlock_irqrestore(lock, flags);

	head %= nr;
	return head <= tail ? tail - head : nr - (head - tail);
}

/*
 * Called under ctx->wait.lock by kill_ioctx(), and before 6.7 by every
 * completion too, which the return of aio_complete() tells instead but on
 * PREEMPT_RT.  On death the hub leaves the queue and drops the pointer;
 * after that last store it must not touch @hub, which the last object's
 * release may free.
 *
 * The death is told to the work before it is queued: a work a poll
 * iocb's completion queued may still be pending, and then this queueing
 * does nothing and that work is the last wake-up.  irq_work_queue()
 * finding it pending is ordered before the work's run clearing the
 * pending bit, so that run sees @hup.
 */
static int pollfs_aio_ctx_woken(wait_queue_entry_t *wait, unsigned int mode,
				int sync, void *key)
{
	struct pollfs_aio_hub *hub = container_of(wait, struct pollfs_aio_hub,
						  ctx_wait.w);

	lockdep_assert_held(&kioctx_wait(hub->ctx)->lock);
	if (!atomic_read(kioctx_dead(hub->ctx))) {
		if (IS_ENABLED(CONFIG_PREEMPT_RT))
			irq_work_queue(&hub->work);
		return 0;
	}
	WRITE_ONCE(hub->hup, true);
	irq_work_queue(&hub->work);
	list_del_init(&wait->entry);
	/* Pairs with the acquire loads of the readers and release. */
	smp_store_release(&hub->ctx, NULL);
	return 0;
}

static void pollfs_aio_wake(struct irq_work *work)
{
	struct pollfs_aio_hub *hub = container_of(work, struct pollfs_aio_hub,
						  work);

	wake_up_poll(&hub->wqh, READ_ONCE(hub->hup) ? EPOLLHUP : EPOLLIN);
}

#ifdef AIO_WAITER_SIZE
static_assert(sizeof(struct pollfs_aio_waiter) == AIO_WAITER_SIZE);
static_assert(offsetof(struct pollfs_aio_waiter, min_nr) == AIO_WAITER_MIN_NR);
#endif
#if defined(CONFIG_PREEMPT_RT) && defined(AIO_WAITER_SIZE)
#error "PREEMPT_RT since 6.7: aio_complete() no longer calls its waiters, and its return cannot be hooked without preemption off"
#endif

/*
 * The hub on a context's wait queue, if any: at most one, among the
 * kernel's own waiters (io_getevents() callers), which aio_complete()
 * walks itself.  ctx->wait.lock held.
 */
static struct pollfs_aio_hub *pollfs_aio_find_hub(wait_queue_head_t *wq)
{
	wait_queue_entry_t *w;

	lockdep_assert_held(&wq->lock);
	list_for_each_entry(w, &wq->head, entry)
		if (w->func == pollfs_aio_ctx_woken)
			return container_of(w, struct pollfs_aio_hub,
					    ctx_wait.w);
	return NULL;
}

/*
 * The completion is in the ring: wake the objects' queue, after the
 * context's lock is dropped (their wake-up takes the pollers' locks).
 * The hub may lose its last object meanwhile: its memory outlives this
 * RCU reader.
 */
void pollfs_aio_completed(void *ctx, bool poll)
{
	wait_queue_head_t *wq = kioctx_wait(ctx);
	struct pollfs_aio_hub *hub;
	unsigned long flags;

	/* aio_complete() ordered its tail store before this test. */
	if (!waitqueue_active(wq))
		return;
	rcu_read_lock();
	spin_lock_irqsave(&wq->lock, flags);
	hub = pollfs_aio_find_hub(wq);
	if (hub && poll)
		irq_work_queue(&hub->work);
	spin_unlock_irqrestore(&wq->lock, flags);
	if (hub && !poll)
		wake_up_poll(&hub->wqh, EPOLLIN);
	rcu_read_unlock();
}

int pollfs_aio_entry_hook(struct ftrace_ops *ops)
{
	char name[] = "aio_complete";	/* the filter's parser may write */
	int err;

	err = ftrace_set_filter(ops, name, strlen(name), 1);
	if (!err)
		err = register_ftrace_function(ops);
	if (err) {
		ftrace_free_filter(ops);
		return err;
	}
	/*
	 * A completion that entered aio_complete() before the hook has no
	 * return hooked, and the object about to be made could miss it:
	 * wait until every such call has returned.  A task may be preempted
	 * in one, and is past it at its next voluntary switch (Tasks RCU); a
	 * softirq's or hardirq's ends within a grace period.
	 */
	synchronize_rcu_tasks();
	synchronize_rcu();
	return 0;
}

/*
 * The entry disables preemption until the return, so a grace period
 * after the last entry every return hooked is done.
 */
void pollfs_aio_entry_unhook(struct ftrace_ops *ops)
{
	unregister_ftrace_function(ops);
	synchronize_rcu();
	ftrace_free_filter(ops);
}

/*
 * The context while it lives, NULL once it is dying.  Under
 * rcu_read_lock(): a context is freed a grace period after kill_ioctx()
 * woke us.
 */
static void *pollfs_aio_live_ctx(struct pollfs_aio_hub *hub)
{
	void *ctx = smp_load_acquire(&hub->ctx);	/* pairs with ctx_woken's release */

	return ctx && !atomic_read(kioctx_dead(ctx)) ? ctx : NULL;
}

static struct pollfs_aio_hub *pollfs_aio_hub_alloc(void)
{
	struct pollfs_aio_hub *hub = kzalloc(sizeof(*hub), GFP_KERNEL_ACCOUNT);

	if (!hub)
		return NULL;
	init_waitqueue_func_entry(&hub->ctx_wait.w, pollfs_aio_ctx_woken);
#ifdef AIO_WAITER_SIZE
	hub->ctx_wait.min_nr = SIZE_MAX;
#endif
	refcount_set(&hub->users, 1);
	init_waitqueue_head(&hub->wqh);
	init_irq_work(&hub->work, pollfs_aio_wake);
	return hub;
}

/*
 * Find the context @a->user_id names in the caller's mm, as io_getevents
 * does, and join its hub, or put a new one on its wait queue, unless the
 * context is already dying.
 */
static int pollfs_aio_attach(struct pollfs_aio_ctx *a)
{
	struct pollfs_aio_hub *hub, *spare;
	struct mm_struct *mm = current->mm;
	void __rcu **slots;
	void *table, *ctx;
	unsigned int nr;
	u32 id;
	int ret = -EINVAL;

	if (!mm || get_user(id, (u32 __user *)u64_to_user_ptr(a->user_id +
							      AIO_RING_ID)))
		return -EINVAL;
	spare = pollfs_aio_hub_alloc();
	if (!spare)
		return -ENOMEM;

	rcu_read_lock();
	table = rcu_dereference(mm->ioctx_table);
	if (!table)
		goto out;
	nr = *(unsigned int *)(table + KIOCTX_TABLE_NR);
	if (id >= nr)
		goto out;
	slots = table + KIOCTX_TABLE_TABLE;
	ctx = rcu_dereference(slots[array_index_nospec(id, nr)]);
	if (!ctx || *(unsigned long *)(ctx + KIOCTX_USER_ID) != a->user_id)
		goto out;

	/* kill_ioctx() sets dead before it takes this lock to wake us. */
	spin_lock_irq(&kioctx_wait(ctx)->lock);
	if (!atomic_read(kioctx_dead(ctx))) {
		hub = pollfs_aio_find_hub(kioctx_wait(ctx));
		if (hub) {
			refcount_inc(&hub->users);
		} else {
			hub = spare;
			spare = NULL;
			hub->ctx = ctx;
			__add_wait_queue(kioctx_wait(ctx), &hub->ctx_wait.w);
		}
		a->hub = hub;
		ret = 0;
	}
	spin_unlock_irq(&kioctx_wait(ctx)->lock);
out:
	rcu_read_unlock();
	kfree(spare);
	return ret;
}

static int pollfs_aio_pop(struct pollfs_object *obj, void *rec, bool nowait)
{
	struct pollfs_aio_event *ev = rec;
	struct pollfs_aio_ctx *a = to_aio(obj);
	unsigned int available;
	void *ctx;
	int ret = 0;

	rcu_read_lock();
	ctx = pollfs_aio_live_ctx(a->hub);
	if (ctx) {
		available = pollfs_aio_available(ctx);
		ret = available ? 1 : -EAGAIN;
		ev->ctx = a->user_id;
		ev->available = available;
	}
	rcu_read_unlock();
	return ret;
}

static __poll_t pollfs_aio_poll(struct pollfs_object *obj)
{
	struct pollfs_aio_ctx *a = to_aio(obj);
	__poll_t events = EPOLLHUP;
	void *ctx;

	rcu_read_lock();
	ctx = pollfs_aio_live_ctx(a->hub);
	if (ctx)
		events = pollfs_aio_available(ctx) ? EPOLLIN : 0;
	rcu_read_unlock();
	return events;
}

static wait_queue_head_t *pollfs_aio_waitq(struct pollfs_object *obj)
{
	return &to_aio(obj)->hub->wqh;
}

static void pollfs_aio_show_fdinfo(struct seq_file *m,
				   struct pollfs_object *obj)
{
	struct pollfs_aio_ctx *a = to_aio(obj);
	void *ctx;

	seq_printf(m, "ctx: %#llx\n", a->user_id);
	rcu_read_lock();
	ctx = pollfs_aio_live_ctx(a->hub);
	if (ctx)
		seq_printf(m, "state: live\navailable: %u\n",
			   pollfs_aio_available(ctx));
	else
		seq_puts(m, "state: destroyed\n");
	rcu_read_unlock();
}

/*
 * Leave the hub; the last object takes it off a live context's queue.
 * Attaching joins a hub only under the context's lock while it is on
 * the queue, so a hub off it (the context died) gains no object, and
 * its count may drop without that lock.  A completion's return that
 * found the hub on the queue may still queue its work until the lock is
 * dropped and wake its queue until a grace period has passed.
 */
static void pollfs_aio_release(struct pollfs_object *obj)
{
	struct pollfs_aio_hub *hub = to_aio(obj)->hub;
	unsigned long flags;
	bool last;
	void *ctx;

	rcu_read_lock();
	ctx = smp_load_acquire(&hub->ctx);	/* pairs with ctx_woken's release */
	if (ctx) {
		spin_lock_irqsave(&kioctx_wait(ctx)->lock, flags);
		last = refcount_dec_and_test(&hub->users);
		if (last && hub->ctx) {
			list_del_init(&hub->ctx_wait.w.entry);
			hub->ctx = NULL;
		}
		spin_unlock_irqrestore(&kioctx_wait(ctx)->lock, flags);
	} else {
		last = refcount_dec_and_test(&hub->users);
	}
	rcu_read_unlock();
	if (last) {
		irq_work_sync(&hub->work);
		kfree_rcu(hub, rcu);
	}
}

static int pollfs_aio_setup(struct pollfs_object *obj, const void *arg)
{
	const struct pollfs_aio_open *open = arg;
	struct pollfs_aio_ctx *a = to_aio(obj);

	a->user_id = open->ctx;
	return pollfs_aio_attach(a);
}

static_assert(sizeof(struct pollfs_aio_event) == 16);

const struct pollfs_kind pollfs_aio_kind = {
	.name		= "[aio]",
	POLLFS_OBJECT(struct pollfs_aio_ctx),
	POLLFS_OPEN(struct pollfs_aio_open),
	.setup		= pollfs_aio_setup,
	.hook		= IS_ENABLED(CONFIG_PREEMPT_RT) ? NULL : &pollfs_aio_hook,
	.read_size	= sizeof(struct pollfs_aio_event),
	.read_max	= 1,
	.read		= pollfs_aio_pop,
	.poll		= pollfs_aio_poll,
	.waitq		= pollfs_aio_waitq,
	.show_fdinfo	= pollfs_aio_show_fdinfo,
	.release	= pollfs_aio_release,
};
