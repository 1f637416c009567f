// SPDX-License-Identifier: MIT
/*
 * The record ring (interface 1.2): a timer's or futex object's records,
 * which the kernel writes into memory this process maps, taken with
 * loads and stores; a system call only to sleep.
 *
 * The kernel writes a record, then stores tail (release).  A consumer
 * loads tail (acquire), copies the records from head up to it, then
 * moves head past them: a lone consumer by a release store, consumers
 * that share the ring by a compare-and-swap from the head they copied
 * at, which fails, and is tried again, if another one took a record
 * first.  Head and tail count records modulo 2^32; a head that is not
 * within entries behind tail was written by someone outside the
 * protocol, and the kernel then takes the ring for full and empty
 * alike: its records wait in the object, for read(2).
 *
 * Nothing here trusts the mapping further than that: the layout is
 * checked once, when it is mapped, and every index is masked.
 */
/* preadv2() and RWF_NOWAIT */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "pollfs.h"

/* A __u32 word of the mapping at @off: in it, and aligned. */
static bool ring_word_ok(uint64_t off, uint64_t size)
{
	return off % sizeof(uint32_t) == 0 && off + sizeof(uint32_t) <= size;
}

/*
 * A layout this library can use: entries a power of two (the index is
 * masked), every part inside the mapping.  The kernel's is; one passed
 * to pollfs_ring_map() by hand may not be.
 */
static bool ring_layout_ok(const struct pollfs_ring_params *p)
{
	uint64_t size = p->mmap_size;

	return p->entries >= 2 && !(p->entries & (p->entries - 1)) &&
	       p->record_size && size && size <= SIZE_MAX &&
	       ring_word_ok(p->off_head, size) &&
	       ring_word_ok(p->off_tail, size) &&
	       ring_word_ok(p->off_flags, size) &&
	       p->off_records + (uint64_t)p->entries * p->record_size <= size;
}

int pollfs_ring_map(int fd, const struct pollfs_ring_params *params,
		    struct pollfs_ring *ring)
{
	unsigned char *map;

	if (!ring_layout_ok(params)) {
		errno = EINVAL;
		return -1;
	}
	map = mmap(NULL, params->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, 0);
	if (map == MAP_FAILED)
		return -1;
	ring->fd = fd;
	ring->mask = params->entries - 1;
	ring->head = (uint32_t *)(map + params->off_head);
	ring->tail = (const uint32_t *)(map + params->off_tail);
	ring->flags = (const uint32_t *)(map + params->off_flags);
	ring->records = map + params->off_records;
	ring->map = map;
	ring->params = *params;
	return 0;
}

/*
 * The params are kept before the mapping is tried: a ring, once set up,
 * cannot be set up again (EBUSY), so a caller whose mmap failed needs
 * them to try pollfs_ring_map() again.
 */
int pollfs_ring_setup(int fd, unsigned int entries, struct pollfs_ring *ring)
{
	struct pollfs_ring_params params;

	memset(&params, 0, sizeof(params));
	params.entries = entries;
	if (ioctl(fd, POLLFS_IOC_RING, &params))
		return -1;
	memset(ring, 0, sizeof(*ring));
	ring->fd = fd;
	ring->params = params;
	return pollfs_ring_map(fd, &params, ring);
}

int pollfs_ring_unmap(struct pollfs_ring *ring)
{
	if (!ring->map) {
		errno = EINVAL;
		return -1;
	}
	if (munmap(ring->map, ring->params.mmap_size))
		return -1;
	ring->map = NULL;
	ring->head = NULL;
	ring->tail = NULL;
	ring->flags = NULL;
	ring->records = NULL;
	return 0;
}

/* Records between head and tail; more than entries: not a ring's. */
static uint32_t ring_span(const struct pollfs_ring *ring, uint32_t head)
{
	return __atomic_load_n(ring->tail, __ATOMIC_ACQUIRE) - head;
}

unsigned int pollfs_ring_ready(const struct pollfs_ring *ring)
{
	uint32_t head = __atomic_load_n(ring->head, __ATOMIC_RELAXED);
	uint32_t span = ring_span(ring, head);

	return span <= ring->params.entries ? span : 0;
}

int pollfs_ring_overflow(const struct pollfs_ring *ring)
{
	return !!(__atomic_load_n(ring->flags, __ATOMIC_ACQUIRE) &
		  POLLFS_RING_OVERFLOW);
}

/* Copies @count records from index @from on, across the end if need be. */
static void ring_copy(const struct pollfs_ring *ring, uint32_t from,
		      uint32_t count, void *records)
{
	size_t size = ring->params.record_size;
	uint32_t first = from & ring->mask;
	uint32_t run = ring->params.entries - first;

	if (run > count)
		run = count;
	memcpy(records, ring->records + first * size, run * size);
	memcpy((unsigned char *)records + run * size, ring->records,
	       (count - run) * size);
}

static uint32_t ring_clamp(size_t n, uint32_t span)
{
	return n < span ? (uint32_t)n : span;
}

ssize_t pollfs_ring_take(struct pollfs_ring *ring, void *records, size_t n)
{
	uint32_t head = __atomic_load_n(ring->head, __ATOMIC_RELAXED);
	uint32_t span = ring_span(ring, head), count;

	if (span > ring->params.entries) {
		errno = EIO;
		return -1;
	}
	count = ring_clamp(n, span);
	if (!count)
		return 0;
	ring_copy(ring, head, count, records);
	/* the copies are done before the kernel may write over them */
	__atomic_store_n(ring->head, head + count, __ATOMIC_RELEASE);
	return count;
}

/*
 * Copies from the head it saw, then moves head past the copies only if
 * it is still there.  A slot is written again only once head has passed
 * it, so a copy that a successful swap covers is whole; one that raced
 * is dropped with the failed swap.  Several records go in one swap,
 * which is taking them one by one with nobody in between.
 */
ssize_t pollfs_ring_take_shared(struct pollfs_ring *ring, void *records,
				size_t n)
{
	uint32_t head = __atomic_load_n(ring->head, __ATOMIC_ACQUIRE);

	for (;;) {
		uint32_t span = ring_span(ring, head), count;

		if (span > ring->params.entries) {
			/*
			 * Another consumer moved head on after this one
			 * loaded it, and the kernel filled the room: look
			 * again.  A head that stayed is not a ring's.
			 */
			uint32_t again = __atomic_load_n(ring->head,
							 __ATOMIC_ACQUIRE);

			if (again != head) {
				head = again;
				continue;
			}
			errno = EIO;
			return -1;
		}
		count = ring_clamp(n, span);
		if (!count)
			return 0;
		ring_copy(ring, head, count, records);
		if (__atomic_compare_exchange_n(ring->head, &head,
						head + count, false,
						__ATOMIC_RELEASE,
						__ATOMIC_ACQUIRE))
			return count;
	}
}

/*
 * One read(2) that never sleeps, whether or not the file is O_NONBLOCK:
 * RWF_NOWAIT (a pollfs file answers it as O_NONBLOCK).  Nothing to read
 * is 0, not an error.  read(2) takes the ring's records first, by the
 * shared protocol, then the object's.
 */
static ssize_t ring_read_nowait(struct pollfs_ring *ring, void *records,
				size_t n)
{
	size_t size = ring->params.record_size;
	struct iovec iov;
	ssize_t got;

	if (n > SSIZE_MAX / size)
		n = SSIZE_MAX / size;
	iov.iov_base = records;
	iov.iov_len = n * size;
	got = preadv2(ring->fd, &iov, 1, -1, RWF_NOWAIT);
	if (got < 0 && errno == EOPNOTSUPP)
		got = read(ring->fd, records, n * size);
	if (got < 0)
		return errno == EAGAIN ? 0 : -1;
	if ((size_t)got % size) {
		errno = EIO;
		return -1;
	}
	return got / (ssize_t)size;
}

ssize_t pollfs_ring_read(struct pollfs_ring *ring, void *records, size_t n)
{
	uint32_t head = __atomic_load_n(ring->head, __ATOMIC_RELAXED);

	if (!n) {
		errno = EINVAL;
		return -1;
	}
	if (!pollfs_ring_overflow(ring) &&
	    ring_span(ring, head) <= ring->params.entries)
		return 0;
	return ring_read_nowait(ring, records, n);
}

static int64_t ring_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

ssize_t pollfs_ring_wait(struct pollfs_ring *ring, void *records, size_t n,
			 int timeout_ms)
{
	struct pollfd pfd = { .fd = ring->fd, .events = POLLIN };
	int64_t deadline = timeout_ms > 0 ? ring_now_ms() + timeout_ms : 0;
	bool polled_in = false;

	if (!n) {
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		ssize_t got = pollfs_ring_take_shared(ring, records, n);
		int ready;

		if (got > 0)
			return got;
		/*
		 * Records wait outside the ring: the flag says so, or the
		 * ring is not one (EIO), or poll said readable with the ring
		 * empty, which a flags word written over by hand would
		 * otherwise turn into a loop of polls.
		 */
		if (got < 0 || polled_in || pollfs_ring_overflow(ring)) {
			got = ring_read_nowait(ring, records, n);
			if (got)
				return got;
		}
		if (timeout_ms > 0) {
			int64_t left = deadline - ring_now_ms();

			timeout_ms = left > 0 ? (left < INT_MAX ? (int)left :
							     INT_MAX) : 0;
		}
		ready = poll(&pfd, 1, timeout_ms);
		if (ready < 0)
			return -1;
		if (!ready) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (!(pfd.revents & POLLIN)) {
			errno = (pfd.revents & POLLNVAL) ? EBADF : EIO;
			return -1;
		}
		polled_in = true;
	}
}
