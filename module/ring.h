/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The record ring of an object (contract 1.2): ring.c says how it works.
 * A kind that takes rings sets .ring in its struct pollfs_kind; its
 * producers hand records to pollfs_ring_push(), keep in the object what
 * the ring refuses (pollfs_ring_push() then sets the overflow flag), and
 * clear the flag with pollfs_ring_drained() once nothing waits there.
 */
#ifndef _POLLFS_RING_H
#define _POLLFS_RING_H

#include <linux/mm_types.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct pollfs_ring_params;

struct pollfs_ring {
	void *base;		/* the memory the application maps */
	raw_spinlock_t lock;	/* one producer at a time */
	u32 tail;		/* the kernel's own: the mapped one is a copy */
	u32 entries;
	u32 size;		/* of a record */
	bool overflow;		/* records wait in the object */
	unsigned int nr_pages;
};

/*
 * A producer's: from any context.  The _locked forms let a kind decide
 * what a refused record becomes under the ring's own lock
 * (pollfs_ring_lock()), which nests inside every lock of the kinds.
 */
bool pollfs_ring_push(struct pollfs_ring *ring, const void *rec);
void pollfs_ring_drained(struct pollfs_ring *ring);
void pollfs_ring_flag_overflow(struct pollfs_ring *ring);
bool pollfs_ring_push_locked(struct pollfs_ring *ring, const void *rec);
void pollfs_ring_drained_locked(struct pollfs_ring *ring);
void pollfs_ring_flag_overflow_locked(struct pollfs_ring *ring);

#define pollfs_ring_lock(ring, flags) \
	raw_spin_lock_irqsave(&(ring)->lock, flags)
#define pollfs_ring_unlock(ring, flags) \
	raw_spin_unlock_irqrestore(&(ring)->lock, flags)

/* For the core. */
struct pollfs_ring *pollfs_ring_alloc(struct pollfs_ring_params *params,
				      size_t record_size);
int pollfs_ring_read_one(struct pollfs_ring *ring, void *rec);
u32 pollfs_ring_tail(struct pollfs_ring *ring);
bool pollfs_ring_nonempty(struct pollfs_ring *ring);
int pollfs_ring_mmap(struct pollfs_ring *ring, struct vm_area_struct *vma);
void pollfs_ring_show_fdinfo(struct seq_file *m, struct pollfs_ring *ring);
void pollfs_ring_free(struct pollfs_ring *ring);

#endif /* _POLLFS_RING_H */
