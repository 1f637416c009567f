// SPDX-License-Identifier: GPL-2.0
/*
 * The futex object on kernels where a process's private futexes hash
 * into a table of its own (6.16 and later).
 *
 * That table is freed with the address space's last user (__mmput()),
 * whatever is queued on it: a FUTEX_WAIT task is one of those users, an
 * object is not.  Holding a user would keep a dead process's memory for
 * as long as the object lives, and for ever when the object's file is
 * held by what that address space owns (an AIO poll request on it).  So
 * an mmu_notifier, one per address space with objects armed privately
 * on it, takes their waits off at its release, which exit_mmap() calls
 * before the table is freed; they then never fire, as on older kernels.
 * A wait is queued only while its address space has a user (the
 * writer, or the reader's mmget()), so never after that release; it is
 * taken off under the notifier's mutex.  The table is made before the
 * first wait is queued (futex_hash_allocate_default(), as io_uring
 * does): one made later, when a second thread starts, would not take
 * the waiters already in the global hash.
 */

#include <linux/mmu_notifier.h>
#include <linux/slab.h>

#include "futex.h"

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
struct futex_hash_bucket *
pollfs_futex_q_lock(struct pollfs_futex_wait *w, struct futex_private_hash **fph)
{
	union futex_key *key = pollfs_futex_q_key(w->q);
	struct futex_bucket_ref ref = pollfs_call(futex_hash)(key);

	*fph = ref.fph;
	pollfs_call(futex_q_lock)(pollfs_futex_wait_q(w), ref.hb);
	return ref.hb;
}

void pollfs_futex_bucket_put(struct futex_private_hash *fph)
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

/* The address space's end, before its private futex table is freed. */
static void pollfs_futex_mm_release(struct mmu_notifier *mn,
				    struct mm_struct *mm)
{
	struct pollfs_futex_mm *fmm = container_of(mn, struct pollfs_futex_mm,
						   mn);
	struct pollfs_futex_ctx *f, *next;
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
int pollfs_futex_track(struct pollfs_futex_ctx *f)
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
struct mutex *pollfs_futex_track_lock(struct pollfs_futex_ctx *f)
{
	return f->fmm ? &f->fmm->lock : NULL;
}

void pollfs_futex_put_mm(struct pollfs_futex_ctx *f)
{
	if (f->fmm)
		mmu_notifier_put(&f->fmm->mn);
}

/* At unload: every notifier freed (their free runs after SRCU). */
void pollfs_futex_sync_mm(void)
{
	mmu_notifier_synchronize();
}
