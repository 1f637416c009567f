// SPDX-License-Identifier: MIT
/*
 * io_uring's IORING_OP_READ and IORING_OP_WRITE, and their fixed-buffer
 * and vectored forms, on every kind of tests/lib/kinds.c and on blocking
 * and O_NONBLOCK files (contract 1.1, "Readiness for writing, io_uring"):
 * each gives what read(2) or write(2) gives, a write completes at once, a
 * read when a record is ready, and both complete inline, as on an
 * eventfd, with no io_uring worker thread.  With nothing ready, a read
 * waits for the record even on an O_NONBLOCK file, exactly as on an
 * O_NONBLOCK eventfd (io_uring retries when poll says ready), unless it
 * asks RWF_NOWAIT.  A write of a record whose wait is already over (a
 * mismatched futex arm) completes with EAGAIN, as write(2) fails (after
 * one retry in an io_uring worker).  Each kind on each kind of file is a
 * TEST of its own, in a process and on a ring of its own.
 */
#include "lib/kinds.h"
#include "lib/uring.h"

#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/uio.h>

PT_BUDGET(60);

/* io_uring registers anonymous memory only: not .bss, file-backed. */
static char *fixed;

static int uring_write(int fd, const void *buf, size_t len)
{
	io_uring_prep_write(ut_sqe(0), fd, buf, len, -1);
	ut_submit();
	return ut_result(1000);
}

/* Submits a read that must not complete within 100 ms. */
static void uring_read_pending(int fd, void *buf, size_t len)
{
	int res;

	io_uring_prep_read(ut_sqe(0), fd, buf, len, -1);
	ut_submit();
	if (ut_wait(100, &res, NULL, NULL))
		FAIL("read of fd %d completed with %d, nothing was ready", fd,
		     res);
}

/*
 * With nothing ready: a read with RWF_NOWAIT completes at once with
 * EAGAIN, one without it stays pending (submitted, to be completed by
 * the caller).
 */
static void check_nothing_ready(int fd, void *buf, size_t len)
{
	struct io_uring_sqe *sqe = ut_sqe(0);

	io_uring_prep_read(sqe, fd, buf, len, -1);
	sqe->rw_flags = RWF_NOWAIT;
	ut_submit();
	CHECK_EQ(ut_result(1000), -EAGAIN);
	uring_read_pending(fd, buf, len);
}

/* The read's record, and what else the record's making left taken. */
static void expect_read(const struct pt_kind *k, int fd, const void *rec)
{
	CHECK_EQ(ut_result(1000), k->read_size);
	k->expect(rec);
	if (k->take)
		k->take(fd);
}

/*
 * One record at a time, the kind's way (kinds.h): the record that
 * readies the object written through io_uring, a read submitted, then
 * what makes the record it completes with.
 */
static void check_kind(const struct pt_kind *k, unsigned int flags)
{
	char rec[PT_KIND_REC_MAX] __attribute__((aligned(8)));
	char buf[PT_KIND_REC_MAX] __attribute__((aligned(8)));
	size_t rs = k->read_size, ws = k->write_size;
	struct iovec iov[2];
	int dev, fd;

	pt_kinds_prepare();
	dev = pt_dev();
	fd = pt_kind_new(k, dev, flags);
	CHECK_SYS(close(dev));

	/* a write completes at once; a read waits for the record (which
	 * the record written may make by itself, at once) */
	if (k->prime) {
		k->prime(rec);
		CHECK_EQ(uring_write(fd, rec, ws), ws);
	}
	if (k->fire) {
		uring_read_pending(fd, buf, rs);
		k->fire(fd);
	} else {
		io_uring_prep_read(ut_sqe(0), fd, buf, rs, -1);
		ut_submit();
	}
	expect_read(k, fd, buf);

	/* vectored, a record across two iovecs each way */
	if (k->prime) {
		k->prime(rec);
		iov[0] = (struct iovec){ rec, ws / 2 };
		iov[1] = (struct iovec){ rec + ws / 2, ws - ws / 2 };
		io_uring_prep_writev(ut_sqe(0), fd, iov, 2, -1);
		ut_submit();
		CHECK_EQ(ut_result(1000), ws);
	}
	memset(buf, 0xff, sizeof(buf));
	iov[0] = (struct iovec){ buf, rs / 2 };
	iov[1] = (struct iovec){ buf + rs / 2, rs - rs / 2 };
	io_uring_prep_readv(ut_sqe(0), fd, iov, 2, -1);
	ut_submit();
	if (k->fire)
		k->fire(fd);
	expect_read(k, fd, buf);

	/* fixed buffers, the read's with room for two records */
	if (k->prime) {
		k->prime(fixed);
		io_uring_prep_write_fixed(ut_sqe(0), fd, fixed, ws, -1, 0);
		ut_submit();
		CHECK_EQ(ut_result(1000), ws);
	}
	io_uring_prep_read_fixed(ut_sqe(0), fd, fixed, 2 * rs, -1, 0);
	ut_submit();
	if (k->fire)
		k->fire(fd);
	expect_read(k, fd, fixed);

	/* errors are write(2)'s and read(2)'s */
	if (k->invalid) {
		k->invalid(rec);
		CHECK_EQ(uring_write(fd, rec, ws), -EINVAL);
		CHECK_ERR(write(fd, rec, ws), EINVAL);
	}
	if (k->prime) {
		k->prime(rec);
		CHECK_EQ(uring_write(fd, rec, ws - 1), -EINVAL);
	} else {
		CHECK_EQ(uring_write(fd, buf, rs), -EINVAL);
	}
	io_uring_prep_read(ut_sqe(0), fd, buf, rs - 1, -1);
	ut_submit();
	CHECK_EQ(ut_result(1000), -EINVAL);

	/*
	 * Nothing ready - readied, for a kind whose record something else
	 * makes: RWF_NOWAIT says so at once, else the read waits for it.
	 */
	if (k->fire) {
		pt_kind_prime(k, fd);
		check_nothing_ready(fd, buf, rs);
		k->fire(fd);
	} else {
		check_nothing_ready(fd, buf, rs);
		pt_kind_prime(k, fd);
	}
	expect_read(k, fd, buf);
	CHECK_SYS(close(fd));
}

/* The same for an eventfd, the anchor, opened with the same flags. */
static void check_eventfd(unsigned int flags)
{
	int fd = CHECK_SYS(eventfd(0, EFD_CLOEXEC | (flags ? EFD_NONBLOCK : 0)));
	uint64_t one = 1, got = 0;

	check_nothing_ready(fd, &got, sizeof(got));
	CHECK_EQ(write(fd, &one, sizeof(one)), 8);
	CHECK_EQ(ut_result(1000), 8);
	CHECK_EQ(got, 1);
	CHECK_SYS(close(fd));
}

/*
 * A record whose wait is over (a mismatched futex arm): EAGAIN, as
 * write(2) fails.  io_uring takes EAGAIN for "try again when writable"
 * and retries once in a worker thread (which then lingers a while):
 * these go last.
 */
static void check_stale(const struct pt_kind *k, unsigned int flags)
{
	char rec[PT_KIND_REC_MAX] __attribute__((aligned(8)));
	int dev, fd;

	pt_kinds_prepare();
	dev = pt_dev();
	fd = pt_kind_new(k, dev, flags);
	CHECK_SYS(close(dev));
	k->stale(rec);
	CHECK_ERR(write(fd, rec, k->write_size), EAGAIN);
	CHECK_EQ(uring_write(fd, rec, k->write_size), -EAGAIN);
	CHECK_SYS(close(fd));
}

/* A ring of this TEST's own, with the fixed buffer registered. */
static void setup(void)
{
	struct iovec reg = { .iov_len = 4096 };

	ut_init();
	fixed = mmap(NULL, reg.iov_len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(fixed != MAP_FAILED);
	reg.iov_base = fixed;
	CHECK_EQ(io_uring_register_buffers(&ut_ring, &reg, 1), 0);
}

/* All inline: no io_uring worker thread. */
static void expect_no_workers(void)
{
	CHECK_EQ(ut_workers(), 0);
}

TEST(eventfd_blocking)
{
	setup();
	check_eventfd(0);
	expect_no_workers();
}

TEST(eventfd_nonblock)
{
	setup();
	check_eventfd(POLLFS_NONBLOCK);
	expect_no_workers();
}

static void blocking(const struct pt_kind *k)
{
	setup();
	check_kind(k, 0);
	expect_no_workers();
}

static void nonblock(const struct pt_kind *k)
{
	setup();
	check_kind(k, POLLFS_NONBLOCK);
	expect_no_workers();
}

static void stale_blocking(const struct pt_kind *k)
{
	setup();
	check_stale(k, 0);
	pt_diag("io_uring workers at the end: %d (the EAGAIN's retry)",
		ut_workers());
}

static void stale_nonblock(const struct pt_kind *k)
{
	setup();
	check_stale(k, POLLFS_NONBLOCK);
	pt_diag("io_uring workers at the end: %d (the EAGAIN's retry)",
		ut_workers());
}

/* Without io_uring the whole program skips; each TEST makes its ring. */
int main(void)
{
	ut_init();
	io_uring_queue_exit(&ut_ring);
	pt_for_each_kind(k)
		pt_add_kind_test(k, "blocking", blocking);
	pt_for_each_kind(k)
		pt_add_kind_test(k, "nonblock", nonblock);
	pt_for_each_kind(k) {
		if (!k->stale)
			continue;
		pt_add_kind_test(k, "mismatch_blocking", stale_blocking);
		pt_add_kind_test(k, "mismatch_nonblock", stale_nonblock);
	}
	return pt_run_tests();
}
