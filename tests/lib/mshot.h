/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the multishot read tests (tests/uring-multishot-*):
 * IORING_OP_READ_MULTISHOT (Linux 6.7) with a ring of provided buffers.
 * Debian 12's liburing 2.3 has neither the opcode nor its helper, so the
 * request is prepared by hand; the kernel is asked at run time whether
 * it has the op, and a test without it skips.  Include it after the
 * other helper headers.
 */
#ifndef POLLFS_TESTS_MSHOT_H
#define POLLFS_TESTS_MSHOT_H

#include "uring.h"

#include <sys/mman.h>
#include <sys/utsname.h>

/* <linux/io_uring.h> of 6.7 and later: the number of the op. */
#define MS_OP_READ_MULTISHOT	49

/* Skips the test unless the running kernel's io_uring has the op. */
static inline void ms_require(void)
{
	struct io_uring_probe *probe = io_uring_get_probe_ring(&ut_ring);
	struct utsname u;
	bool have;

	if (!probe)
		FAIL("io_uring_get_probe_ring failed");
	have = io_uring_opcode_supported(probe, MS_OP_READ_MULTISHOT);
	io_uring_free_probe(probe);
	if (!have) {
		uname(&u);
		pt_skip("no IORING_OP_READ_MULTISHOT on %s (Linux 6.7 added it)",
			u.release);
	}
}

/*
 * A ring of @count provided buffers of @size bytes each, group @bgid,
 * registered with ut_ring; buffer i is mem + i * size.  All are handed
 * to the kernel at first (count is a power of two).
 */
struct ms_bufs {
	struct io_uring_buf_ring *br;
	char *mem;
	unsigned int count, size;
	uint16_t bgid;
};

static inline void ms_bufs_give(struct ms_bufs *b, unsigned int bid)
{
	io_uring_buf_ring_add(b->br, b->mem + (size_t)bid * b->size, b->size,
			      bid, io_uring_buf_ring_mask(b->count), 0);
	io_uring_buf_ring_advance(b->br, 1);
}

static inline void ms_bufs_init(struct ms_bufs *b, uint16_t bgid,
				unsigned int count, unsigned int size,
				bool give_all)
{
	struct io_uring_buf_reg reg;
	size_t ring_len = (size_t)count * sizeof(struct io_uring_buf);
	unsigned int i;
	int r;

	b->bgid = bgid;
	b->count = count;
	b->size = size;
	/* page-aligned, as the kernel wants the ring */
	b->br = mmap(NULL, ring_len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b->mem = malloc((size_t)count * size);
	if (b->br == MAP_FAILED || !b->mem)
		FAIL("buffer ring memory: %s", strerror(errno));
	io_uring_buf_ring_init(b->br);
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uintptr_t)b->br;
	reg.ring_entries = count;
	reg.bgid = bgid;
	r = io_uring_register_buf_ring(&ut_ring, &reg, 0);
	if (r)
		FAIL("io_uring_register_buf_ring: %s", strerror(-r));
	if (give_all)
		for (i = 0; i < count; i++)
			ms_bufs_give(b, i);
}

static inline void ms_bufs_free(struct ms_bufs *b)
{
	int r = io_uring_unregister_buf_ring(&ut_ring, b->bgid);

	if (r)
		FAIL("io_uring_unregister_buf_ring: %s", strerror(-r));
	munmap(b->br, (size_t)b->count * sizeof(struct io_uring_buf));
	free(b->mem);
}

/* One multishot read of @fd into the buffers of group @bgid, submitted. */
static inline void ms_read(uint64_t tag, int fd, uint16_t bgid)
{
	struct io_uring_sqe *sqe = ut_sqe(tag);

	io_uring_prep_rw(MS_OP_READ_MULTISHOT, sqe, fd, NULL, 0, -1);
	io_uring_sqe_set_data64(sqe, tag);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = bgid;
	ut_submit();
}

/* IORING_OP_ASYNC_CANCEL of the request tagged @tag, submitted. */
static inline void ms_cancel(uint64_t cancel_tag, uint64_t tag)
{
	io_uring_prep_cancel64(ut_sqe(cancel_tag), tag, 0);
	ut_submit();
}

/* A completion of a multishot read. */
struct ms_cqe {
	int res;
	uint64_t tag;
	unsigned int flags;
	bool more;		/* IORING_CQE_F_MORE: the request goes on */
	int bid;		/* the buffer filled, or -1 */
};

/* The next completion within @timeout_ms (times the kernel's scale). */
#define ms_next(c, timeout_ms) ms_next_at(__FILE__, __LINE__, (c), (timeout_ms))
static inline void ms_next_at(const char *file, int line, struct ms_cqe *c,
			      int timeout_ms)
{
	int ms = timeout_ms * (int)pt_time_scale();

	if (!ut_wait(ms, &c->res, &c->tag, &c->flags))
		pt_fail_at(file, line, "no completion within %d ms", ms);
	c->more = c->flags & IORING_CQE_F_MORE;
	c->bid = (c->flags & IORING_CQE_F_BUFFER) ?
		 (int)(c->flags >> IORING_CQE_BUFFER_SHIFT) : -1;
}

/* Fails if a completion comes within @ms. */
#define ms_none(ms) ms_none_at(__FILE__, __LINE__, (ms))
static inline void ms_none_at(const char *file, int line, int ms)
{
	struct ms_cqe c;

	if (ut_wait(ms, &c.res, &c.tag, &c.flags))
		pt_fail_at(file, line,
			   "unexpected completion: tag %llu, res %d, flags %#x",
			   (unsigned long long)c.tag, c.res, c.flags);
}

/*
 * The next completion must be records read by the multishot request
 * @tag, still going: res a whole, non-zero number of @rec-byte records
 * in a buffer of @b.  Returns that buffer.
 */
#define ms_expect_data(b, tag, rec, timeout_ms, c)			\
	ms_expect_data_at(__FILE__, __LINE__, (b), (tag), (rec),	\
			  (timeout_ms), (c))
static inline const void *ms_expect_data_at(const char *file, int line,
					    const struct ms_bufs *b,
					    uint64_t tag, int rec,
					    int timeout_ms,
					    struct ms_cqe *c)
{
	ms_next_at(file, line, c, timeout_ms);
	if (c->tag != tag || c->res <= 0 || c->res % rec || !c->more ||
	    c->bid < 0 || c->bid >= (int)b->count ||
	    c->res > (int)b->size)
		pt_fail_at(file, line,
			   "expected records of %d bytes from request %llu, "
			   "still going: got tag %llu, res %d (%s), flags %#x",
			   rec, (unsigned long long)tag,
			   (unsigned long long)c->tag, c->res,
			   c->res < 0 ? strerror(-c->res) : "-", c->flags);
	return b->mem + (size_t)c->bid * b->size;
}

/* The end of the multishot request @tag: result @res, no F_MORE. */
#define ms_expect_end(c, tag, res)					\
	ms_expect_end_at(__FILE__, __LINE__, (c), (tag), (res))
static inline void ms_expect_end_at(const char *file, int line,
				    const struct ms_cqe *c, uint64_t tag,
				    int res)
{
	if (c->tag != tag || c->res != res || c->more)
		pt_fail_at(file, line,
			   "expected the end of request %llu with %d (%s): "
			   "got tag %llu, res %d, flags %#x",
			   (unsigned long long)tag, res,
			   res < 0 ? strerror(-res) : "-",
			   (unsigned long long)c->tag, c->res, c->flags);
}

/*
 * Cancels the multishot request @tag (IORING_OP_ASYNC_CANCEL, tagged
 * @cancel_tag) and checks both ends: the cancel completes with 0, the
 * request once with ECANCELED and no F_MORE.  Records read just before
 * the cancel (whole @rec-byte records in a buffer of @b, F_MORE) may
 * come first: returns how many completions of those came.
 */
#define ms_cancel_end(b, tag, cancel_tag, rec)				\
	ms_cancel_end_at(__FILE__, __LINE__, (b), (tag), (cancel_tag), (rec))
static inline int ms_cancel_end_at(const char *file, int line,
				   const struct ms_bufs *b, uint64_t tag,
				   uint64_t cancel_tag, int rec)
{
	int ended = 0, cancelled = 0, records = 0;
	struct ms_cqe c;

	ms_cancel(cancel_tag, tag);
	while (!ended || !cancelled) {
		ms_next_at(file, line, &c, 1000);
		if (c.tag == cancel_tag && !cancelled && c.res == 0) {
			cancelled = 1;
		} else if (c.tag == tag && c.more && c.res > 0 &&
			   c.res % rec == 0 && c.bid >= 0 &&
			   c.bid < (int)b->count && !ended) {
			records++;
		} else if (c.tag == tag && !c.more && !ended) {
			ms_expect_end_at(file, line, &c, tag, -ECANCELED);
			ended = 1;
		} else {
			pt_fail_at(file, line,
				   "cancelling request %llu: unexpected "
				   "completion: tag %llu, res %d, flags %#x",
				   (unsigned long long)tag,
				   (unsigned long long)c.tag, c.res, c.flags);
		}
	}
	return records;
}

#endif /* POLLFS_TESTS_MSHOT_H */
