// SPDX-License-Identifier: MIT
/*
 * io_uring's IORING_OP_READ and IORING_OP_WRITE, and their fixed-buffer
 * and vectored forms, on every kind and on blocking and O_NONBLOCK files
 * (contract 1.1, "Readiness for writing, io_uring"): each gives what
 * read(2) or write(2) gives, a write completes at once, a read when a
 * record is ready, and both complete inline, as on an eventfd, with no
 * io_uring worker thread.  With nothing ready, a read waits for the
 * record even on an O_NONBLOCK file, exactly as on an O_NONBLOCK eventfd
 * (io_uring retries when poll says ready), unless it asks RWF_NOWAIT.
 * A mismatched futex arm completes with EAGAIN, as write(2) fails (after
 * one retry in an io_uring worker).  Each kind on each kind of file is a
 * TEST of its own, in a process and on a ring of its own.
 */
#include "lib/aio.h"
#include "lib/futex.h"
#include "lib/signal.h"
#include "lib/timer.h"
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

static void check_timer(unsigned int flags)
{
	struct pollfs_timer_spec spec = tmr_spec(CLOCK_MONOTONIC, 0, MS(30), 0);
	struct pollfs_timer_event ev;
	struct iovec iov[2];
	int fd = tmr_new(flags);

	CHECK_EQ(uring_write(fd, &spec, sizeof(spec)), TMR_SPEC_SIZE);
	io_uring_prep_read(ut_sqe(0), fd, &ev, sizeof(ev), -1);
	ut_submit();
	CHECK_EQ(ut_result(1000), TMR_EVENT_SIZE);
	tmr_check_oneshot(&ev);

	/* vectored, a record across two iovecs each way */
	iov[0] = (struct iovec){ &spec, 16 };
	iov[1] = (struct iovec){ (char *)&spec + 16, sizeof(spec) - 16 };
	io_uring_prep_writev(ut_sqe(0), fd, iov, 2, -1);
	ut_submit();
	CHECK_EQ(ut_result(1000), TMR_SPEC_SIZE);
	memset(&ev, 0xff, sizeof(ev));
	iov[0] = (struct iovec){ &ev, 24 };
	iov[1] = (struct iovec){ (char *)&ev + 24, sizeof(ev) - 24 };
	io_uring_prep_readv(ut_sqe(0), fd, iov, 2, -1);
	ut_submit();
	CHECK_EQ(ut_result(1000), TMR_EVENT_SIZE);
	tmr_check_oneshot(&ev);

	/* fixed buffers */
	memcpy(fixed, &spec, sizeof(spec));
	io_uring_prep_write_fixed(ut_sqe(0), fd, fixed, sizeof(spec), -1, 0);
	ut_submit();
	CHECK_EQ(ut_result(1000), TMR_SPEC_SIZE);
	io_uring_prep_read_fixed(ut_sqe(0), fd, fixed, 2 * sizeof(ev), -1, 0);
	ut_submit();
	CHECK_EQ(ut_result(1000), TMR_EVENT_SIZE);
	tmr_check_oneshot((struct pollfs_timer_event *)fixed);

	/* errors are write(2)'s and read(2)'s */
	spec.value.tv_nsec = 2 * NSEC_PER_SEC;
	CHECK_EQ(uring_write(fd, &spec, sizeof(spec)), -EINVAL);
	CHECK_ERR(write(fd, &spec, sizeof(spec)), EINVAL);
	CHECK_EQ(uring_write(fd, &spec, sizeof(spec) - 1), -EINVAL);
	io_uring_prep_read(ut_sqe(0), fd, &ev, sizeof(ev) - 1, -1);
	ut_submit();
	CHECK_EQ(ut_result(1000), -EINVAL);

	/* nothing ready: RWF_NOWAIT says so at once, else the read waits */
	tmr_disarm(fd);
	check_nothing_ready(fd, &ev, sizeof(ev));
	tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(10), 0);
	CHECK_EQ(ut_result(1000), TMR_EVENT_SIZE);
	tmr_check_oneshot(&ev);
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

static void check_futex(unsigned int flags)
{
	static uint32_t word;
	struct pollfs_futex_event rec = fx_ev(&word, 0, FX_PRIVATE), got;
	int fd = fx_new(flags);

	CHECK_EQ(uring_write(fd, &rec, sizeof(rec)), FX_REC);
	uring_read_pending(fd, &got, sizeof(got));
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	CHECK_EQ(ut_result(1000), FX_REC);
	fx_check_rec(&got, &word, 0, FX_PRIVATE);
	CHECK_SYS(close(fd));
}

/*
 * A mismatch: EAGAIN, as write(2) fails.  io_uring takes EAGAIN for "try
 * again when writable" and retries once in a worker thread (which then
 * lingers a while): these go last.
 */
static void check_futex_mismatch(unsigned int flags)
{
	static uint32_t word;
	struct pollfs_futex_event rec = fx_ev(&word, 1, FX_PRIVATE);
	int fd = fx_new(flags);

	CHECK_ERR(write(fd, &rec, sizeof(rec)), EAGAIN);
	CHECK_EQ(uring_write(fd, &rec, sizeof(rec)), -EAGAIN);
	CHECK_SYS(close(fd));
}

static void check_signal(unsigned int flags)
{
	uint64_t mask = ps_bit(SIGUSR1);
	struct pollfs_siginfo si;
	sigset_t set;
	int fd = ps_signal(0, flags);

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &set, NULL));
	CHECK_EQ(uring_write(fd, &mask, sizeof(mask)), 8);
	uring_read_pending(fd, &si, sizeof(si));
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(ut_result(1000), SIGINFO_SIZE);
	CHECK_EQ(si.psi_signo, SIGUSR1);
	CHECK_EQ(si.psi_pid, getpid());
	CHECK_SYS(close(fd));
}

static void check_aio(unsigned int flags)
{
	aio_context_t ctx = ax_setup(4);
	int fd = ax_fd(ctx, flags), zero;
	struct pollfs_aio_event ev;
	struct iocb cb;
	char buf[8];

	CHECK_EQ(uring_write(fd, &ev, sizeof(ev)), -EINVAL);
	uring_read_pending(fd, &ev, sizeof(ev));
	zero = CHECK_SYS(open("/dev/zero", O_RDONLY | O_CLOEXEC));
	ax_prep_pread(&cb, zero, buf, sizeof(buf), 0, 7);
	ax_submit1(ctx, &cb);
	CHECK_EQ(ut_result(1000), AX_EVENT_SIZE);
	CHECK_EQ(ev.ctx, ctx);
	CHECK_EQ(ev.available, 1);
	CHECK_SYS(close(zero));
	CHECK_SYS(close(fd));
	ax_destroy(ctx);
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

TEST(timer_blocking)
{
	setup();
	check_timer(0);
	expect_no_workers();
}

TEST(signal_blocking)
{
	setup();
	check_signal(0);
	expect_no_workers();
}

TEST(aio_blocking)
{
	setup();
	check_aio(0);
	expect_no_workers();
}

TEST(futex_blocking)
{
	setup();
	check_futex(0);
	expect_no_workers();
}

TEST(eventfd_nonblock)
{
	setup();
	check_eventfd(POLLFS_NONBLOCK);
	expect_no_workers();
}

TEST(timer_nonblock)
{
	setup();
	check_timer(POLLFS_NONBLOCK);
	expect_no_workers();
}

TEST(signal_nonblock)
{
	setup();
	check_signal(POLLFS_NONBLOCK);
	expect_no_workers();
}

TEST(aio_nonblock)
{
	setup();
	check_aio(POLLFS_NONBLOCK);
	expect_no_workers();
}

TEST(futex_nonblock)
{
	setup();
	check_futex(POLLFS_NONBLOCK);
	expect_no_workers();
}

TEST(futex_mismatch_blocking)
{
	setup();
	check_futex_mismatch(0);
	pt_diag("io_uring workers at the end: %d (the futex EAGAIN's retry)",
		ut_workers());
}

TEST(futex_mismatch_nonblock)
{
	setup();
	check_futex_mismatch(POLLFS_NONBLOCK);
	pt_diag("io_uring workers at the end: %d (the futex EAGAIN's retry)",
		ut_workers());
}

/* Without io_uring the whole program skips; each TEST makes its ring. */
int main(void)
{
	ut_init();
	io_uring_queue_exit(&ut_ring);
	return pt_run_tests();
}
