// SPDX-License-Identifier: GPL-2.0
/*
 * The AIO object: polls a Linux AIO context's completion ring.
 *
 * It is readable while the ring of an io_setup(2) context holds
 * completions nobody has reaped, and reads report how many without
 * reaping them.  The context's own wait queue, which aio_complete()
 * wakes after publishing each completion and kill_ioctx() wakes once it
 * has marked the context dead, tells the object when to look again.
 *
 * The object takes no reference on the context: a reference on its
 * users or reqs would keep io_destroy(2), and the exit of a process
 * whose files still hold the object, waiting forever.  Instead it keeps
 * an entry on the context's wait queue and forgets the context in the
 * wake-up that kill_ioctx() sends before anything of the context is
 * freed; the context itself is freed an RCU grace period after that
 * (free_ioctx() is queued with queue_rcu_work()), so a reader that
 * found the pointer still set, under rcu_read_lock(), may use it.
 *
 * The entry's wake function never wakes anyone itself: it runs under the
 * context's wait-queue lock, and a poller of this file can be an
 * IOCB_CMD_POLL of the same context, whose completion takes that lock
 * again.  It queues an irq_work that wakes our own queue instead.
 *
 * That hop (a self-IPI on x86) is the AIO object's cost over an eventfd
 * signalled by IOCB_FLAG_RESFD, and the return hook below could not do
 * without it either: aio_poll_wake() completes a poll request inside the
 * wake-up of the queue it waits on, under that queue's lock, so when the
 * request polls this object, or an epoll file this object is in, the
 * completion's return runs under a lock our wake-up takes again (the
 * object's queue, or the epoll file's poll_wait).  Only a caller holding
 * no spinlock could wake directly, and neither hook can tell: the wake
 * function runs under the queue's lock, the return handler with
 * preemption off (rethook's).  The irq_work runs once interrupts are on
 * again, and each of those locks is taken with interrupts off, so none
 * is held on this CPU then.
 *
 * Since 6.7 ("aio: obey min_nr when doing wakeups") aio_complete() takes
 * each entry of the queue for a struct aio_waiter and calls no entry's
 * function; kill_ioctx() still does.  On such kernels the entry is an
 * aio_waiter whose min_nr no ring ever reaches, so aio_complete() leaves
 * it alone; an fprobe at aio_complete()'s entry hooks its return, which
 * queues the work of each of our entries on the completion's context,
 * under the queue's lock as the wake function would.  The context is
 * alive then: the completing iocb holds a reference on it until after
 * that return.  The return is hooked with rethook, the trampoline of
 * kretprobes, not with an fprobe exit handler: since 6.14 those run from
 * the function-graph tracer's return_to_handler, whose unwind data in
 * 7.3 make a stack trace taken by an interrupt at its last instructions
 * print "stack going in the wrong direction?" (module/README.md).
 *
 * The context's layout comes from the target kernel's BTF
 * (module/internals.list).
 */

#include <linux/fprobe.h>
#include <linux/highmem.h>
#include <linux/irq_work.h>
#include <linux/mm_types.h>
#include <linux/nospec.h>
#include <linux/pollfs.h>
#include <linux/rcupdate.h>
#include <linux/rethook.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "core.h"
#include "ksyms.h"

/* An entry of a kioctx's wait queue, shaped as the kernel's aio_waiter. */
struct pollfs_aio_waiter {
	wait_queue_entry_t w;
#ifdef AIO_WAITER_SIZE
	size_t min_nr;		/* SIZE_MAX: aio_complete() never takes it */
#endif
};

struct pollfs_aio {
	struct pollfs_object obj;
	wait_queue_head_t wqh;
	struct pollfs_aio_waiter ctx_wait;	/* on the kioctx's wait queue */
	void *ctx;	/* the kioctx, NULL once dead; RCU, ctx->wait.lock */
	struct irq_work work;
	bool hup;	/* the context died: the work wakes with EPOLLHUP */
	u64 user_id;
};

static struct kmem_cache *pollfs_aio_cache;

static struct pollfs_aio *to_aio(struct pollfs_object *obj)
{
	return container_of(obj, struct pollfs_aio, obj);
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
 * because user space may write anything there.  The completion lock
 * keeps ring page 0 from being migrated under us.
 */
static unsigned int pollfs_aio_available(void *ctx)
{
	spinlock_t *lock = ctx + KIOCTX_COMPLETION_LOCK;
	unsigned int nr = *(unsigned int *)(ctx + KIOCTX_NR_EVENTS);
#if defined(KIOCTX_RING_PAGES)
	struct page *page0 = (*(struct page ***)(ctx + KIOCTX_RING_PAGES))[0];
#elif defined(KIOCTX_RING_FOLIOS)
	struct page *page0 =
		folio_page((*(struct folio ***)(ctx + KIOCTX_RING_FOLIOS))[0], 0);
#else
#error "this kernel's struct kioctx has neither ring_pages nor ring_folios"
#endif
	unsigned int head, tail;
	unsigned long flags;
	void *ring;

	spin_lock_irqsave(lock, flags);
	tail = *(unsigned int *)(ctx + KIOCTX_TAIL);
	ring = kmap_local_page(page0);
	head = READ_ONCE(*(unsigned int *)(ring + AIO_RING_HEAD));
	kunmap_local(ring);
	spin_unlock_irqrestore(lock, flags);

	head %= nr;
	return head <= tail ? tail - head : nr - (head - tail);
}

/*
 * Called under ctx->wait.lock, for each completion and once when the
 * context dies.  On death it leaves the queue and drops the pointer;
 * after that last store it must not touch @a, which release may free.
 *
 * The death is told to the work before it is queued: a work a completion
 * queued may still be pending, and then this queueing does nothing and
 * that work is the last wake-up.  irq_work_queue() finding it pending is
 * ordered before the work's run clearing the pending bit, so that run
 * sees @hup.
 */
static int pollfs_aio_ctx_woken(wait_queue_entry_t *wait, unsigned int mode,
				int sync, void *key)
{
	struct pollfs_aio *a = container_of(wait, struct pollfs_aio, ctx_wait.w);
	bool dead = atomic_read(kioctx_dead(a->ctx));

	if (dead)
		WRITE_ONCE(a->hup, true);
	irq_work_queue(&a->work);
	if (dead) {
		list_del_init(&wait->entry);
		/* Pairs with the acquire loads of the readers and release. */
		smp_store_release(&a->ctx, NULL);
	}
	return 0;
}

static void pollfs_aio_wake(struct irq_work *work)
{
	struct pollfs_aio *a = container_of(work, struct pollfs_aio, work);

	wake_up_poll(&a->wqh, READ_ONCE(a->hup) ? EPOLLHUP : EPOLLIN);
}

#ifdef AIO_WAITER_SIZE

#if !IS_ENABLED(CONFIG_FPROBE)
#error "on a kernel with struct aio_waiter, AIO objects need CONFIG_FPROBE"
#endif
static_assert(sizeof(struct pollfs_aio_waiter) == AIO_WAITER_SIZE);
static_assert(offsetof(struct pollfs_aio_waiter, min_nr) == AIO_WAITER_MIN_NR);

#if !defined(POLLFS_RETHOOK) || !defined(POLLFS_RETHOOK_TRY_GET) || \
	!defined(POLLFS_RETHOOK_HOOK) || !defined(POLLFS_RETHOOK_FREE)
#error "on a kernel with struct aio_waiter, AIO objects need CONFIG_RETHOOK"
#endif

/*
 * The entry handler's registers: fprobe's rewrite on the function-graph
 * tracer (6.14) passes a struct ftrace_regs, which rethook_hook() reads
 * (the stack pointer alone, on x86) as the struct pt_regs it holds.
 */
#ifdef FPROBE_NR_MAXACTIVE
#define pollfs_fprobe_regs		pt_regs
#define pollfs_fprobe_arg(regs, n)	regs_get_kernel_argument(regs, n)
#define pollfs_fprobe_pt_regs(regs, buf) (regs)
#else
#define pollfs_fprobe_regs		ftrace_regs
#define pollfs_fprobe_arg(regs, n)	ftrace_regs_get_argument(regs, n)
#define pollfs_fprobe_pt_regs(regs, buf) ftrace_partial_regs(regs, buf)
#endif

/* A pending return of aio_complete(): the completion's context. */
struct pollfs_aio_return {
	struct rethook_node node;
	void *ctx;
};

/*
 * Completions nest (an interrupt's inside a task's) and a task may be
 * preempted in one, so returns pending at once are not bounded by the
 * CPUs: the pool is as large as 6.12's fprobes made theirs, and the
 * first completion that finds it empty is told in the kernel log.
 */
#define POLLFS_AIO_RETURNS_PER_CPU	64

static struct rethook *pollfs_aio_rethook;

/* Return of aio_complete(): the completion is in the ring. */
static void pollfs_aio_complete_return(struct rethook_node *node, void *data,
				       unsigned long ret_addr,
				       struct pt_regs *regs)
{
	void *ctx = container_of(node, struct pollfs_aio_return, node)->ctx;
	wait_queue_head_t *wq = kioctx_wait(ctx);
	wait_queue_entry_t *w;
	unsigned long flags;

	/* aio_complete() ordered its tail store before this test. */
	if (!waitqueue_active(wq))
		return;
	spin_lock_irqsave(&wq->lock, flags);
	list_for_each_entry(w, &wq->head, entry)
		if (w->func == pollfs_aio_ctx_woken)
			irq_work_queue(&container_of(w, struct pollfs_aio,
						     ctx_wait.w)->work);
	spin_unlock_irqrestore(&wq->lock, flags);
}

/*
 * Entry of aio_complete(iocb): hook its return.  The iocb holds its
 * context until after that return, so the context is alive there.
 */
static int pollfs_aio_complete_entry(struct fprobe *fp, unsigned long ip,
				     unsigned long ret_ip,
				     struct pollfs_fprobe_regs *regs,
				     void *data)
{
	void *iocb = (void *)pollfs_fprobe_arg(regs, 0);
	struct pollfs_aio_return *ret;
	struct rethook_node *node;
	struct pt_regs buf;

	node = pollfs_call(rethook_try_get)(pollfs_aio_rethook);
	if (unlikely(!node)) {
		pr_warn_once("more than %d AIO completions per CPU at once: an AIO object may miss one\n",
			     POLLFS_AIO_RETURNS_PER_CPU);
		return 0;
	}
	ret = container_of(node, struct pollfs_aio_return, node);
	ret->ctx = *(void **)(iocb + AIO_KIOCB_CTX);
	pollfs_call(rethook_hook)(node, pollfs_fprobe_pt_regs(regs, &buf), true);
	return 0;
}

static struct fprobe pollfs_aio_fprobe = {
	.entry_handler	= pollfs_aio_complete_entry,
};

static struct pollfs_once pollfs_aio_fprobed =
	POLLFS_ONCE_INIT(pollfs_aio_fprobed);

static int pollfs_aio_fprobe_install(void)
{
	int err;

	pollfs_aio_rethook =
		pollfs_call(rethook_alloc)(NULL, pollfs_aio_complete_return,
					   sizeof(struct pollfs_aio_return),
					   POLLFS_AIO_RETURNS_PER_CPU *
					   num_possible_cpus());
	if (IS_ERR(pollfs_aio_rethook))
		return PTR_ERR(pollfs_aio_rethook);
	err = register_fprobe(&pollfs_aio_fprobe, "aio_complete", NULL);
	if (err) {
		pr_err("cannot probe aio_complete (%d)\n", err);
		pollfs_call(rethook_free)(pollfs_aio_rethook);
	}
	return err;
}

/* In when the first AIO object is created, until unload. */
static int pollfs_aio_probe(void)
{
	return pollfs_once(&pollfs_aio_fprobed, pollfs_aio_fprobe_install);
}

/*
 * Returns still pending call no handler once the rethook is freed; the
 * grace period waits out a handler already running (rethook runs them
 * with preemption off).
 */
static void pollfs_aio_unprobe(void)
{
	if (!pollfs_aio_fprobed.done)
		return;
	unregister_fprobe(&pollfs_aio_fprobe);
	pollfs_call(rethook_free)(pollfs_aio_rethook);
	synchronize_rcu();
}

static void pollfs_aio_init_waiter(struct pollfs_aio_waiter *waiter)
{
	init_waitqueue_func_entry(&waiter->w, pollfs_aio_ctx_woken);
	waiter->min_nr = SIZE_MAX;
}

#else

static int pollfs_aio_probe(void)
{
	return 0;
}

static void pollfs_aio_unprobe(void)
{
}

static void pollfs_aio_init_waiter(struct pollfs_aio_waiter *waiter)
{
	init_waitqueue_func_entry(&waiter->w, pollfs_aio_ctx_woken);
}

#endif

/*
 * The context while it lives, NULL once it is dying.  Under
 * rcu_read_lock(): a context is freed a grace period after kill_ioctx()
 * woke us.
 */
static void *pollfs_aio_live_ctx(struct pollfs_aio *a)
{
	void *ctx = smp_load_acquire(&a->ctx);	/* pairs with ctx_woken's release */

	return ctx && !atomic_read(kioctx_dead(ctx)) ? ctx : NULL;
}

/*
 * Find the context @a->user_id names in the caller's mm, as io_getevents
 * does, and hook onto its wait queue unless it is already dying.
 */
static int pollfs_aio_attach(struct pollfs_aio *a)
{
	struct mm_struct *mm = current->mm;
	void __rcu **slots;
	void *table, *ctx;
	unsigned int nr;
	u32 id;
	int ret = -EINVAL;

	if (!mm || get_user(id, (u32 __user *)u64_to_user_ptr(a->user_id +
							      AIO_RING_ID)))
		return -EINVAL;

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
		a->ctx = ctx;
		__add_wait_queue(kioctx_wait(ctx), &a->ctx_wait.w);
		ret = 0;
	}
	spin_unlock_irq(&kioctx_wait(ctx)->lock);
out:
	rcu_read_unlock();
	return ret;
}

static int pollfs_aio_read(struct pollfs_object *obj, void *rec)
{
	struct pollfs_aio_event *ev = rec;
	struct pollfs_aio *a = to_aio(obj);
	unsigned int available;
	void *ctx;
	int ret = 0;

	rcu_read_lock();
	ctx = pollfs_aio_live_ctx(a);
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
	struct pollfs_aio *a = to_aio(obj);
	__poll_t events = EPOLLHUP;
	void *ctx;

	rcu_read_lock();
	ctx = pollfs_aio_live_ctx(a);
	if (ctx)
		events = pollfs_aio_available(ctx) ? EPOLLIN : 0;
	rcu_read_unlock();
	return events;
}

static wait_queue_head_t *pollfs_aio_waitq(struct pollfs_object *obj)
{
	return &to_aio(obj)->wqh;
}

static void pollfs_aio_show_fdinfo(struct seq_file *m,
				   struct pollfs_object *obj)
{
	struct pollfs_aio *a = to_aio(obj);
	void *ctx;

	seq_printf(m, "ctx: %#llx\n", a->user_id);
	rcu_read_lock();
	ctx = pollfs_aio_live_ctx(a);
	if (ctx)
		seq_printf(m, "state: live\navailable: %u\n",
			   pollfs_aio_available(ctx));
	else
		seq_puts(m, "state: destroyed\n");
	rcu_read_unlock();
}

/* Unhook if the context still lives, then wait out a queued wake-up. */
static void pollfs_aio_release(struct pollfs_object *obj)
{
	struct pollfs_aio *a = to_aio(obj);
	unsigned long flags;
	void *ctx;

	rcu_read_lock();
	ctx = smp_load_acquire(&a->ctx);	/* pairs with ctx_woken's release */
	if (ctx) {
		spin_lock_irqsave(&kioctx_wait(ctx)->lock, flags);
		if (!list_empty(&a->ctx_wait.w.entry))
			list_del_init(&a->ctx_wait.w.entry);
		a->ctx = NULL;
		spin_unlock_irqrestore(&kioctx_wait(ctx)->lock, flags);
	}
	rcu_read_unlock();
	irq_work_sync(&a->work);
	kmem_cache_free(pollfs_aio_cache, a);
}

static int pollfs_aio_create(const void __user *arg)
{
	struct pollfs_aio_open args;
	struct pollfs_aio *a;
	int err, fd;

	if (copy_from_user(&args, arg, sizeof(args)))
		return -EFAULT;
	err = pollfs_check_flags(args.flags, args.reserved);
	if (err)
		return err;
	err = pollfs_aio_probe();
	if (err)
		return err;

	a = kmem_cache_zalloc(pollfs_aio_cache, GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	init_waitqueue_head(&a->wqh);
	pollfs_aio_init_waiter(&a->ctx_wait);
	init_irq_work(&a->work, pollfs_aio_wake);
	a->user_id = args.ctx;

	err = pollfs_aio_attach(a);
	if (err) {
		kmem_cache_free(pollfs_aio_cache, a);
		return err;
	}
	fd = pollfs_install(&a->obj, &pollfs_aio_kind, args.flags);
	if (fd < 0)
		pollfs_aio_release(&a->obj);
	return fd;
}

static int pollfs_aio_init(void)
{
	BUILD_BUG_ON(sizeof(struct pollfs_aio_event) != 16);

	pollfs_aio_cache = KMEM_CACHE(pollfs_aio, SLAB_ACCOUNT);
	return pollfs_aio_cache ? 0 : -ENOMEM;
}

static void pollfs_aio_exit(void)
{
	pollfs_aio_unprobe();
	kmem_cache_destroy(pollfs_aio_cache);
}

const struct pollfs_kind pollfs_aio_kind = {
	.name		= "[aio]",
	.cmd		= POLLFS_IOC_AIO,
	.create		= pollfs_aio_create,
	.init		= pollfs_aio_init,
	.exit		= pollfs_aio_exit,
	.read_size	= sizeof(struct pollfs_aio_event),
	.read_max	= 1,
	.read		= pollfs_aio_read,
	.poll		= pollfs_aio_poll,
	.waitq		= pollfs_aio_waitq,
	.show_fdinfo	= pollfs_aio_show_fdinfo,
	.release	= pollfs_aio_release,
};
