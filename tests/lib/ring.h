/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the record ring's tests (contract 1.2, tests/ring-*.c):
 * POLLFS_IOC_RING and the mapping through the raw calls, the layout
 * checked, records taken by the lone consumer's protocol (release store
 * of head) and by the shared one (compare-and-swap), read(2) of what
 * waits in the object, and waits for the ring's words to change.  The
 * tests go through these, never libpollfs (libpollfs-ring tests that).
 * Include it after lib.h or a kind's header.
 */
#ifndef POLLFS_TESTS_RING_H
#define POLLFS_TESTS_RING_H

#include "lib.h"

#include <sys/mman.h>

#define RG_TIMER_REC	40	/* a timer's record, read or in a ring */
#define RG_FUTEX_REC	16	/* a futex object's */

_Static_assert(sizeof(struct pollfs_ring_params) == 40,
	       "pollfs_ring_params size");

/* A ring and its mapping. */
struct rg_ring {
	int fd;
	struct pollfs_ring_params p;
	unsigned char *map;	/* NULL when not mapped */
	size_t len;		/* bytes mapped */
	uint32_t *head, *tail, *flags;
	unsigned char *records;
};

/*
 * ioctl(fd, POLLFS_IOC_RING) with these fields; returns what the ioctl
 * returned (errno kept), the params filled in.
 */
int rg_ioctl(int fd, uint32_t entries, uint32_t flags, uint32_t reserved,
	     struct pollfs_ring_params *p);

/*
 * Fails unless @p is a layout of @entries records of @record_size bytes:
 * mmap_size a multiple of the page size, the three words aligned, apart
 * and inside it, the records inside it and clear of the words.
 */
#define rg_check_layout(p, entries, record_size)			\
	rg_check_layout_at(__FILE__, __LINE__, (p), (entries), (record_size))
void rg_check_layout_at(const char *file, int line,
			const struct pollfs_ring_params *p, uint32_t entries,
			size_t record_size);

/*
 * Gives @fd a ring of @entries records of @record_size bytes and maps
 * it whole, failing the test if anything fails or the layout is wrong.
 * head, tail and flags start at 0.
 */
#define rg_setup(ring, fd, entries, record_size)			\
	rg_setup_at(__FILE__, __LINE__, (ring), (fd), (entries), (record_size))
void rg_setup_at(const char *file, int line, struct rg_ring *ring, int fd,
		 uint32_t entries, size_t record_size);

/* Maps @fd's ring of layout @p (whole), failing the test if mmap fails. */
#define rg_map(ring, fd, p) rg_map_at(__FILE__, __LINE__, (ring), (fd), (p))
void rg_map_at(const char *file, int line, struct rg_ring *ring, int fd,
	       const struct pollfs_ring_params *p);

/* munmap of the whole mapping, failing the test if it fails. */
#define rg_unmap(ring) rg_unmap_at(__FILE__, __LINE__, (ring))
void rg_unmap_at(const char *file, int line, struct rg_ring *ring);

/* The words, as the protocol loads them. */
static inline uint32_t rg_tail(const struct rg_ring *r)
{
	return __atomic_load_n(r->tail, __ATOMIC_ACQUIRE);
}

static inline uint32_t rg_head(const struct rg_ring *r)
{
	return __atomic_load_n(r->head, __ATOMIC_ACQUIRE);
}

static inline bool rg_overflow(const struct rg_ring *r)
{
	return __atomic_load_n(r->flags, __ATOMIC_ACQUIRE) &
	       POLLFS_RING_OVERFLOW;
}

/* Records between head and tail (more than entries: not a ring's). */
static inline uint32_t rg_ready(const struct rg_ring *r)
{
	return rg_tail(r) - rg_head(r);
}

/* Where record @i lives. */
static inline void *rg_slot(const struct rg_ring *r, uint32_t i)
{
	return r->records + (size_t)(i & (r->p.entries - 1)) * r->p.record_size;
}

/*
 * The lone consumer: copies up to @n records into @buf and stores the new
 * head (release); returns how many.  Fails the test if head is not
 * within entries behind tail.
 */
#define rg_take(ring, buf, n) rg_take_at(__FILE__, __LINE__, (ring), (buf), (n))
size_t rg_take_at(const char *file, int line, struct rg_ring *ring, void *buf,
		  size_t n);

/*
 * A consumer among several: copies the record at head, then moves head
 * on by one with a compare-and-swap, again until one succeeds.  1 with
 * the record in @rec, 0 when the ring is empty, -1 when head is not
 * within entries behind tail (left as it is).
 */
int rg_take_cas(struct rg_ring *ring, void *rec);

/*
 * Everything there is, in order: the ring's records (lone consumer),
 * then, while records wait in the object or the ring is found empty,
 * non-blocking reads until EAGAIN.  Up to @max records into @buf;
 * returns how many.  Fails the test on a read error or a torn read.
 */
#define rg_drain(ring, buf, max)					\
	rg_drain_at(__FILE__, __LINE__, (ring), (buf), (max))
size_t rg_drain_at(const char *file, int line, struct rg_ring *ring, void *buf,
		   size_t max);

/* Waits (up to PT_WAIT_MS) until the ring holds at least @n records. */
#define rg_wait_ready(ring, n) rg_wait_ready_at(__FILE__, __LINE__, (ring), (n))
void rg_wait_ready_at(const char *file, int line, const struct rg_ring *ring,
		      uint32_t n);

/* Waits (up to PT_WAIT_MS) until POLLFS_RING_OVERFLOW is set. */
#define rg_wait_overflow(ring) rg_wait_overflow_at(__FILE__, __LINE__, (ring))
void rg_wait_overflow_at(const char *file, int line,
			 const struct rg_ring *ring);

/* Fails unless the ring is empty and the flag clear. */
#define rg_expect_empty(ring) rg_expect_empty_at(__FILE__, __LINE__, (ring))
void rg_expect_empty_at(const char *file, int line, const struct rg_ring *ring);

/* A record's bytes in hex, for a diagnostic. */
const char *rg_hex(const void *rec, size_t size, char *buf, size_t bufsize);

#endif /* POLLFS_TESTS_RING_H */
