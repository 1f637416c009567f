// SPDX-License-Identifier: GPL-2.0
/*
 * The record ring (contract 1.2): the records an object makes, written by
 * the kernel into pages the application maps and takes them from with
 * loads and stores, so that a stream of events costs no syscall each; the
 * object's file is used only to sleep on, and read(2) still works.
 *
 * The memory, vmalloc()ed at POLLFS_IOC_RING and charged to the
 * caller's memory cgroup, is mapped by the application with mmap() of
 * the object's file (MAP_SHARED, offset 0, faulted in one page at a
 * time, so that fork and madvise behave as for any shared mapping).
 * Its layout:
 *
 *	POLLFS_RING_OFF_HEAD	__u32 head: the application's
 *	POLLFS_RING_OFF_TAIL	__u32 tail: the kernel's
 *	POLLFS_RING_OFF_FLAGS	__u32 flags: the kernel's (OVERFLOW)
 *	POLLFS_RING_OFF_RECORDS	entries records, record i at slot i & (entries - 1)
 *
 * each word on a cache line of its own, so that the application's stores
 * to head and the kernel's to tail do not bounce one line between them.
 *
 * Who writes what.  The kernel never reads back what it wrote for the
 * application: it keeps its own tail (@ring->tail) and overflow flag
 * (@ring->overflow) and stores copies of them in the pages, so garbage
 * the application writes there changes nothing but its own view.  The
 * one word it reads from the pages is head, and it trusts head only as
 * far as it goes: a head ahead of tail, or more than entries behind it,
 * makes the ring full for the kernel's writes and empty for read(2) and
 * poll, so that the records go to the object, where read(2) returns
 * them.  Every slot the kernel writes is masked into the ring.
 *
 * Producers.  A kind's producers (a timer's expiry in hard interrupt
 * context, a futex wake under the hash-bucket lock, a worker) call
 * pollfs_ring_push() with their own lock held or not; one at a time per
 * ring is the raw spinlock @ring->lock's job, raw because 6.1's futex
 * kprobe handler runs with preemption off on PREEMPT_RT too.  A push
 * copies the record into slot tail, then stores tail + 1 with release
 * ordering: the application that loads tail with acquire ordering sees
 * the record whole.  It loads head with acquire ordering before it
 * writes a slot: the application stores head with release ordering after
 * it has copied the records below it, so no slot is written while it is
 * still being read.  A push never waits, never sleeps and never fails
 * but for room: when tail - head >= entries, or when the object already
 * holds records (@ring->overflow; later records join them, so that the
 * order holds), it refuses, sets OVERFLOW, and the kind keeps the record
 * in the object as it would without a ring.  The kind clears the flag
 * (pollfs_ring_drained()) once read(2) has taken what waited there.
 *
 * Consumers.  The application, alone or several at once: a lone consumer
 * stores head with release ordering; several take record i by copying it
 * and then moving head from i to i + 1 with a compare-and-swap, retrying
 * on failure, so that a record is taken once and a copy a producer
 * overwrote (head had moved past it) is thrown away with the failed
 * swap.  read(2) is such a consumer (pollfs_ring_read_one()); it gives up
 * after a few failed swaps in a row, as another consumer is then taking
 * the records, so a consumer that scribbles on head cannot keep it in
 * the kernel.
 *
 * Wake-ups are the kind's: it wakes its pollers when it adds a record,
 * with or without a ring, and poll reports POLLIN when the ring holds a
 * record or the object does.
 *
 * Lifetime: the ring is the object's from the ioctl on, published with
 * release ordering for producers that find it without the object's
 * locks; a mapping holds the object's file, so the ring is freed with
 * the object, after the kind's release has stopped every producer (and
 * a grace period later for a kind whose hooks look at objects under
 * RCU: vfree() may be called there).  A page the application pinned
 * from its mapping keeps its own reference.
 */

#include <linux/cache.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/pollfs.h>

#include "compat.h"
#include "ring.h"

#define POLLFS_RING_OFF_HEAD	0
#define POLLFS_RING_OFF_TAIL	SMP_CACHE_BYTES
#define POLLFS_RING_OFF_FLAGS	(2 * SMP_CACHE_BYTES)
#define POLLFS_RING_OFF_RECORDS	(4 * SMP_CACHE_BYTES)

/*
 * Failed swaps in a row after which read(2) leaves the ring's records to
 * the consumers that won them.
 */
#define POLLFS_RING_TAKE_TRIES	8

static u32 *pollfs_ring_word(struct pollfs_ring *ring, size_t offset)
{
	return ring->base + offset;
}

static void *pollfs_ring_slot(struct pollfs_ring *ring, u32 index)
{
	return ring->base + POLLFS_RING_OFF_RECORDS +
	       (size_t)(index & (ring->entries - 1)) * ring->size;
}

/* Records between head and the kernel's tail, if head is one to trust. */
static u32 pollfs_ring_count(struct pollfs_ring *ring, u32 head, u32 tail)
{
	u32 count = tail - head;

	return count <= ring->entries ? count : 0;
}

static void pollfs_ring_set_flags(struct pollfs_ring *ring)
{
	WRITE_ONCE(*pollfs_ring_word(ring, POLLFS_RING_OFF_FLAGS),
		   ring->overflow ? POLLFS_RING_OVERFLOW : 0);
}

/**
 * pollfs_ring_push_locked - add a record, if the ring takes it
 * @ring:	the object's ring, its lock held
 * @rec:	the record, as read(2) would return it
 *
 * False when the ring is full (or its head is not to be trusted) or
 * records wait in the object: the flag is then set, and the record is
 * the caller's to keep in the object, which it does before it drops the
 * lock if a reader that clears the flag could otherwise miss it.
 */
bool pollfs_ring_push_locked(struct pollfs_ring *ring, const void *rec)
{
	u32 *head = pollfs_ring_word(ring, POLLFS_RING_OFF_HEAD);
	u32 *tail = pollfs_ring_word(ring, POLLFS_RING_OFF_TAIL);
	bool pushed = false;
	u32 first;

	lockdep_assert_held(&ring->lock);
	if (!ring->overflow) {
		/* Pairs with the consumer's release store of head. */
		first = smp_load_acquire(head);
		if (ring->tail - first < ring->entries) {
			memcpy(pollfs_ring_slot(ring, ring->tail), rec,
			       ring->size);
			/* Pairs with read_one's and nonempty's acquires. */
			smp_store_release(&ring->tail, ring->tail + 1);
			/* Pairs with the consumer's acquire load of tail. */
			smp_store_release(tail, ring->tail);
			pushed = true;
		}
	}
	if (!pushed)
		pollfs_ring_flag_overflow_locked(ring);
	return pushed;
}

/* The same, taking the lock: from any context. */
bool pollfs_ring_push(struct pollfs_ring *ring, const void *rec)
{
	unsigned long flags;
	bool pushed;

	raw_spin_lock_irqsave(&ring->lock, flags);
	pushed = pollfs_ring_push_locked(ring, rec);
	raw_spin_unlock_irqrestore(&ring->lock, flags);
	return pushed;
}

/*
 * Something waits in the object for read(2), a record the ring refused
 * or a timer's ECANCELED: the application is told by the flag.
 */
void pollfs_ring_flag_overflow_locked(struct pollfs_ring *ring)
{
	lockdep_assert_held(&ring->lock);
	if (!ring->overflow) {
		ring->overflow = true;
		pollfs_ring_set_flags(ring);
	}
}

void pollfs_ring_flag_overflow(struct pollfs_ring *ring)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&ring->lock, flags);
	pollfs_ring_flag_overflow_locked(ring);
	raw_spin_unlock_irqrestore(&ring->lock, flags);
}

/* Nothing waits in the object any more: records go to the ring again. */
void pollfs_ring_drained_locked(struct pollfs_ring *ring)
{
	lockdep_assert_held(&ring->lock);
	if (ring->overflow) {
		ring->overflow = false;
		pollfs_ring_set_flags(ring);
	}
}

void pollfs_ring_drained(struct pollfs_ring *ring)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&ring->lock, flags);
	pollfs_ring_drained_locked(ring);
	raw_spin_unlock_irqrestore(&ring->lock, flags);
}

/*
 * read(2)'s take of the oldest record, by the consumers' protocol: 1 if
 * it took one into @rec, 0 if the ring holds none, -EBUSY if it gave up
 * (other consumers kept moving head, or head cannot be trusted).
 */
int pollfs_ring_read_one(struct pollfs_ring *ring, void *rec)
{
	u32 *head = pollfs_ring_word(ring, POLLFS_RING_OFF_HEAD);
	unsigned int tries;
	u32 first, last;

	for (tries = 0; tries < POLLFS_RING_TAKE_TRIES; tries++) {
		first = READ_ONCE(*head);
		/* Pairs with the push's release: the record is whole. */
		last = smp_load_acquire(&ring->tail);
		if (first == last)
			return 0;
		/* Head moved past the tail just read, or is garbage. */
		if (!pollfs_ring_count(ring, first, last))
			continue;
		/*
		 * A producer may be writing this slot already if another
		 * consumer moved head past it: the swap then fails, and the
		 * copy is thrown away.
		 */
		data_race(memcpy(rec, pollfs_ring_slot(ring, first),
				 ring->size));
		/* Fully ordered: the copy is done before head moves. */
		if (cmpxchg(head, first, first + 1) == first)
			return 1;
	}
	return -EBUSY;
}

/* The kernel's tail, for a reader to wait until it moves. */
u32 pollfs_ring_tail(struct pollfs_ring *ring)
{
	/* Pairs with the push's release, as in read_one. */
	return smp_load_acquire(&ring->tail);
}

bool pollfs_ring_nonempty(struct pollfs_ring *ring)
{
	u32 first = READ_ONCE(*pollfs_ring_word(ring, POLLFS_RING_OFF_HEAD));
	/* Pairs with the push's release, as in read_one. */
	u32 last = smp_load_acquire(&ring->tail);

	return pollfs_ring_count(ring, first, last);
}

/*
 * POLLFS_IOC_RING's ring for records of @record_size bytes, its layout
 * written into @params; an ERR_PTR on failure.
 */
struct pollfs_ring *pollfs_ring_alloc(struct pollfs_ring_params *params,
				      size_t record_size)
{
	struct pollfs_ring *ring;
	size_t bytes;

	if (params->flags || params->reserved ||
	    params->entries < POLLFS_RING_ENTRIES_MIN ||
	    params->entries > POLLFS_RING_ENTRIES_MAX ||
	    !is_power_of_2(params->entries))
		return ERR_PTR(-EINVAL);

	ring = kzalloc(sizeof(*ring), GFP_KERNEL_ACCOUNT);
	if (!ring)
		return ERR_PTR(-ENOMEM);
	raw_spin_lock_init(&ring->lock);
	ring->entries = params->entries;
	ring->size = record_size;
	bytes = POLLFS_RING_OFF_RECORDS + (size_t)ring->entries * record_size;
	ring->nr_pages = DIV_ROUND_UP(bytes, PAGE_SIZE);
	ring->base = __vmalloc(ring->nr_pages << PAGE_SHIFT,
			       GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!ring->base) {
		kfree(ring);
		return ERR_PTR(-ENOMEM);
	}

	params->record_size = record_size;
	params->off_head = POLLFS_RING_OFF_HEAD;
	params->off_tail = POLLFS_RING_OFF_TAIL;
	params->off_flags = POLLFS_RING_OFF_FLAGS;
	params->off_records = POLLFS_RING_OFF_RECORDS;
	params->mmap_size = (u64)ring->nr_pages << PAGE_SHIFT;
	return ring;
}

/* From any context. */
void pollfs_ring_free(struct pollfs_ring *ring)
{
	vfree(ring->base);
	kfree(ring);
}

static vm_fault_t pollfs_ring_fault(struct vm_fault *vmf)
{
	struct pollfs_ring *ring = vmf->vma->vm_private_data;

	if (vmf->pgoff >= ring->nr_pages)
		return VM_FAULT_SIGBUS;
	vmf->page = vmalloc_to_page(ring->base + (vmf->pgoff << PAGE_SHIFT));
	get_page(vmf->page);
	return 0;
}

static const struct vm_operations_struct pollfs_ring_vm_ops = {
	.fault	= pollfs_ring_fault,
};

/*
 * The whole ring or its start, shared, never executable, never grown:
 * any other offset, a longer length or MAP_PRIVATE fail with EINVAL,
 * PROT_EXEC with EPERM.
 */
int pollfs_ring_mmap(struct pollfs_ring *ring, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff || vma_pages(vma) > ring->nr_pages ||
	    !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	pollfs_vma_flags_mod(vma, VM_DONTEXPAND, VM_MAYEXEC);
	vma->vm_ops = &pollfs_ring_vm_ops;
	vma->vm_private_data = ring;
	return 0;
}

void pollfs_ring_show_fdinfo(struct seq_file *m, struct pollfs_ring *ring)
{
	seq_printf(m, "ring: entries %u head %u tail %u overflow %d\n",
		   ring->entries,
		   READ_ONCE(*pollfs_ring_word(ring, POLLFS_RING_OFF_HEAD)),
		   READ_ONCE(ring->tail), READ_ONCE(ring->overflow));
}
