/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the AIO object tests: raw io_setup(2) family syscalls, iocb
 * preparation, and checks of what a pollfs AIO fd reports.  Include it
 * instead of lib.h.
 */
#ifndef POLLFS_TESTS_AIO_H
#define POLLFS_TESTS_AIO_H

#include "lib.h"

#include <linux/aio_abi.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>

#define AIO_EVENT_SIZE	((ssize_t)sizeof(struct pollfs_aio_event))

_Static_assert(sizeof(struct pollfs_aio_open) == 16, "aio open size");
_Static_assert(sizeof(struct pollfs_aio_event) == 16, "aio event size");
_Static_assert(sizeof(struct iocb) == 64, "iocb size");
_Static_assert(sizeof(struct io_event) == 32, "io_event size");

/* The head of the completion ring that io_setup maps at the context id. */
struct aio_ring_head {
	unsigned int id;
	unsigned int nr;
	unsigned int head;
	unsigned int tail;
	unsigned int magic;
	unsigned int compat_features;
	unsigned int incompat_features;
	unsigned int header_length;
};

/* ---- raw syscalls ---- */

static inline long aio_sys_setup(unsigned int nr, aio_context_t *ctx)
{
	return syscall(SYS_io_setup, nr, ctx);
}

static inline long aio_sys_destroy(aio_context_t ctx)
{
	return syscall(SYS_io_destroy, ctx);
}

static inline long aio_sys_submit(aio_context_t ctx, long n, struct iocb **iocbs)
{
	return syscall(SYS_io_submit, ctx, n, iocbs);
}

static inline long aio_sys_getevents(aio_context_t ctx, long min_nr, long nr,
				     struct io_event *ev, struct timespec *ts)
{
	return syscall(SYS_io_getevents, ctx, min_nr, nr, ev, ts);
}

static inline long aio_sys_cancel(aio_context_t ctx, struct iocb *iocb,
				  struct io_event *ev)
{
	return syscall(SYS_io_cancel, ctx, iocb, ev);
}

/* io_setup(nr), failing the test if it fails. */
#define aio_setup(nr) aio_setup_at(__FILE__, __LINE__, (nr))
static inline aio_context_t aio_setup_at(const char *file, int line,
					 unsigned int nr)
{
	aio_context_t ctx = 0;

	if (aio_sys_setup(nr, &ctx))
		pt_fail_at(file, line, "io_setup(%u): errno %d (%s)", nr,
			   errno, strerror(errno));
	if (!ctx)
		pt_fail_at(file, line, "io_setup(%u) gave context 0", nr);
	return ctx;
}

/* io_destroy(ctx), failing the test if it fails. */
#define aio_destroy(ctx) aio_destroy_at(__FILE__, __LINE__, (ctx))
static inline void aio_destroy_at(const char *file, int line,
				  aio_context_t ctx)
{
	if (aio_sys_destroy(ctx))
		pt_fail_at(file, line, "io_destroy(%#llx): errno %d (%s)",
			   (unsigned long long)ctx, errno, strerror(errno));
}

/* ---- iocbs ---- */

static inline void aio_prep_rw(struct iocb *cb, int op, int fd, void *buf,
			       size_t len, off_t off, uint64_t data)
{
	memset(cb, 0, sizeof(*cb));
	cb->aio_data = data;
	cb->aio_lio_opcode = (__u16)op;
	cb->aio_fildes = (__u32)fd;
	cb->aio_buf = (__u64)(uintptr_t)buf;
	cb->aio_nbytes = len;
	cb->aio_offset = off;
}

static inline void aio_prep_pwrite(struct iocb *cb, int fd, const void *buf,
				   size_t len, off_t off, uint64_t data)
{
	aio_prep_rw(cb, IOCB_CMD_PWRITE, fd, (void *)buf, len, off, data);
}

static inline void aio_prep_pread(struct iocb *cb, int fd, void *buf,
				  size_t len, off_t off, uint64_t data)
{
	aio_prep_rw(cb, IOCB_CMD_PREAD, fd, buf, len, off, data);
}

/* IOCB_CMD_POLL: completes once fd shows one of events (one-shot). */
static inline void aio_prep_poll(struct iocb *cb, int fd, short events,
				 uint64_t data)
{
	memset(cb, 0, sizeof(*cb));
	cb->aio_data = data;
	cb->aio_lio_opcode = IOCB_CMD_POLL;
	cb->aio_fildes = (__u32)fd;
	cb->aio_buf = (__u64)(unsigned short)events;
}

/* Submits n iocbs, failing unless all n are accepted. */
#define aio_submit(ctx, n, cbs) aio_submit_at(__FILE__, __LINE__, (ctx), (n), (cbs))
static inline void aio_submit_at(const char *file, int line, aio_context_t ctx,
				 long n, struct iocb **cbs)
{
	long r = aio_sys_submit(ctx, n, cbs);

	if (r != n)
		pt_fail_at(file, line, "io_submit(%ld iocbs): returned %ld, "
			   "errno %d (%s)", n, r, errno, strerror(errno));
}

#define aio_submit1(ctx, cb) do {					\
	struct iocb *one_[1] = { (cb) };				\
	aio_submit_at(__FILE__, __LINE__, (ctx), 1, one_);		\
} while (0)

/*
 * io_getevents(min_nr, nr) with a timeout (-1: none), retried on EINTR;
 * fails the test unless it returns between min_nr and nr events.
 */
#define aio_reap(ctx, min_nr, nr, ev, timeout_ms)			\
	aio_reap_at(__FILE__, __LINE__, (ctx), (min_nr), (nr), (ev), (timeout_ms))
static inline long aio_reap_at(const char *file, int line, aio_context_t ctx,
			       long min_nr, long nr, struct io_event *ev,
			       int timeout_ms)
{
	struct timespec ts = { timeout_ms / 1000, (timeout_ms % 1000) * 1000000L };
	long r;

	do
		r = aio_sys_getevents(ctx, min_nr, nr, ev,
				      timeout_ms < 0 ? NULL : &ts);
	while (r < 0 && errno == EINTR);
	if (r < min_nr || r > nr)
		pt_fail_at(file, line, "io_getevents(min %ld, nr %ld, %d ms): "
			   "returned %ld, errno %d (%s)", min_nr, nr,
			   timeout_ms, r, errno, strerror(errno));
	return r;
}

/* The completion ring's header, which io_setup maps at the context id. */
static inline volatile struct aio_ring_head *aio_ring(aio_context_t ctx)
{
	return (volatile struct aio_ring_head *)(uintptr_t)ctx;
}

/* ---- pollfs AIO objects ---- */

/* POLLFS_IOC_AIO on a fresh /dev/pollfs handle; the fd, or -1 with errno. */
static inline int aio_fd_try(aio_context_t ctx, unsigned int flags)
{
	struct pollfs_aio_open op;
	int dev, fd, e;

	memset(&op, 0, sizeof(op));
	op.ctx = ctx;
	op.flags = flags;
	dev = open("/dev/pollfs", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -1;
	fd = ioctl(dev, POLLFS_IOC_AIO, &op);
	e = errno;
	close(dev);
	errno = e;
	return fd;
}

/* POLLFS_IOC_AIO, failing the test if it fails. */
#define aio_fd(ctx, flags) aio_fd_at(__FILE__, __LINE__, (ctx), (flags))
static inline int aio_fd_at(const char *file, int line, aio_context_t ctx,
			    unsigned int flags)
{
	int fd = aio_fd_try(ctx, flags);

	if (fd < 0)
		pt_fail_at(file, line, "POLLFS_IOC_AIO(ctx %#llx, flags %#x): "
			   "errno %d (%s)", (unsigned long long)ctx, flags,
			   errno, strerror(errno));
	return fd;
}

/* read() of one record, retried on EINTR; returns what read returned. */
static inline ssize_t aio_read_rec(int fd, struct pollfs_aio_event *ev)
{
	ssize_t r;

	memset(ev, 0xa5, sizeof(*ev));
	do
		r = read(fd, ev, sizeof(*ev));
	while (r < 0 && errno == EINTR);
	return r;
}

/* poll() for events up to timeout_ms, retried on EINTR; the revents. */
#define aio_revents(fd, events, timeout_ms)				\
	aio_revents_at(__FILE__, __LINE__, (fd), (events), (timeout_ms))
static inline short aio_revents_at(const char *file, int line, int fd,
				   short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r;

	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		pt_fail_at(file, line, "poll(fd %d): errno %d (%s)", fd,
			   errno, strerror(errno));
	if (r && (p.revents & POLLNVAL))
		pt_fail_at(file, line, "poll(fd %d): POLLNVAL", fd);
	return r ? p.revents : 0;
}

/*
 * Fails unless fd is readable now and one read returns exactly one record
 * {ctx, available}.
 */
#define aio_expect_avail(fd, ctx, n)					\
	aio_expect_avail_at(__FILE__, __LINE__, (fd), (ctx), (n))
static inline void aio_expect_avail_at(const char *file, int line, int fd,
				       aio_context_t ctx, uint64_t n)
{
	struct pollfs_aio_event ev;
	short rev = aio_revents_at(file, line, fd, POLLIN, 0);
	ssize_t r;

	if (rev != POLLIN)
		pt_fail_at(file, line, "fd %d: poll revents %#x, expected "
			   "POLLIN alone (%llu completions unreaped)", fd,
			   (unsigned)rev, (unsigned long long)n);
	r = aio_read_rec(fd, &ev);
	if (r != AIO_EVENT_SIZE)
		pt_fail_at(file, line, "read(aio fd %d, 16): returned %zd, "
			   "errno %d (%s), expected 16", fd, r, errno,
			   strerror(errno));
	if (ev.ctx != ctx || ev.available != n)
		pt_fail_at(file, line, "aio fd %d read {ctx %#llx, available "
			   "%llu}, expected {%#llx, %llu}", fd,
			   (unsigned long long)ev.ctx,
			   (unsigned long long)ev.available,
			   (unsigned long long)ctx, (unsigned long long)n);
}

/*
 * Fails unless nothing is unreaped: no POLLIN (nor POLLHUP), and a
 * non-blocking read gives EAGAIN (O_NONBLOCK set for it and restored).
 */
#define aio_expect_empty(fd) aio_expect_empty_at(__FILE__, __LINE__, (fd))
static inline void aio_expect_empty_at(const char *file, int line, int fd)
{
	short rev = aio_revents_at(file, line, fd, POLLIN, 0);

	if (rev)
		pt_fail_at(file, line, "fd %d: poll revents %#x while the "
			   "ring should be empty", fd, (unsigned)rev);
	pt_expect_empty_at(file, line, fd);
}

/*
 * Fails unless the context is gone: poll shows POLLHUP without POLLIN, and
 * read returns 0, both blocking and with O_NONBLOCK (the other mode is set
 * for one read and restored).
 */
#define aio_expect_hup(fd) aio_expect_hup_at(__FILE__, __LINE__, (fd))
static inline void aio_expect_hup_at(const char *file, int line, int fd)
{
	struct pollfs_aio_event ev;
	short rev = aio_revents_at(file, line, fd, POLLIN, 0);
	ssize_t r;
	int fl;

	if (rev != POLLHUP)
		pt_fail_at(file, line, "fd %d: poll revents %#x after the "
			   "context's end, expected POLLHUP alone", fd,
			   (unsigned)rev);
	r = aio_read_rec(fd, &ev);
	if (r != 0)
		pt_fail_at(file, line, "read(aio fd %d) after the context's "
			   "end: returned %zd, errno %d (%s), expected 0", fd,
			   r, errno, strerror(errno));
	/* and in the other blocking mode */
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl ^ O_NONBLOCK))
		pt_fail_at(file, line, "fcntl: %s", strerror(errno));
	r = aio_read_rec(fd, &ev);
	if (fcntl(fd, F_SETFL, fl))
		pt_fail_at(file, line, "fcntl: %s", strerror(errno));
	if (r != 0)
		pt_fail_at(file, line, "read(aio fd %d, %s) after the "
			   "context's end: returned %zd, errno %d (%s), "
			   "expected 0", fd,
			   (fl & O_NONBLOCK) ? "blocking" : "O_NONBLOCK", r,
			   errno, strerror(errno));
}

/* Waits up to timeout_ms for POLLHUP, then checks as aio_expect_hup. */
#define aio_wait_hup(fd, timeout_ms)					\
	aio_wait_hup_at(__FILE__, __LINE__, (fd), (timeout_ms))
static inline void aio_wait_hup_at(const char *file, int line, int fd,
				   int timeout_ms)
{
	/* events 0: poll sleeps until POLLHUP (or POLLERR) alone */
	short rev = aio_revents_at(file, line, fd, 0, timeout_ms);

	if (!(rev & POLLHUP))
		pt_fail_at(file, line, "fd %d: no POLLHUP within %d ms "
			   "(revents %#x)", fd, timeout_ms, (unsigned)rev);
	aio_expect_hup_at(file, line, fd);
}

/* ---- files ---- */

/* An unlinked regular file in dir (O_RDWR, extra flags added). */
#define aio_tmpfile(dir, flags) aio_tmpfile_at(__FILE__, __LINE__, (dir), (flags))
static inline int aio_tmpfile_at(const char *file, int line, const char *dir,
				 int flags)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/pollfs-aio-XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC | flags);
	if (fd < 0)
		pt_fail_at(file, line, "mkostemp(%s): errno %d (%s)", path,
			   errno, strerror(errno));
	unlink(path);
	return fd;
}

/* True if res is what a completed IOCB_CMD_POLL for POLLIN of a pipe
 * gives: POLLIN, with POLLRDNORM when the pipe's wake-up key named it. */
static inline bool aio_pipe_poll_res(int64_t res)
{
	return res == POLLIN || res == (POLLIN | POLLRDNORM);
}

/* Checks one completion event: its data and its result. */
#define aio_check_event(ev, data, res)					\
	aio_check_event_at(__FILE__, __LINE__, (ev), (data), (res))
static inline void aio_check_event_at(const char *file, int line,
				      const struct io_event *ev,
				      uint64_t data, int64_t res)
{
	if (ev->data != data || ev->res != res)
		pt_fail_at(file, line, "io_event {data %#llx, res %lld}, "
			   "expected {%#llx, %lld}",
			   (unsigned long long)ev->data, (long long)ev->res,
			   (unsigned long long)data, (long long)res);
}

/* ---- a completion that happens later, in another thread ---- */

enum aio_trigger_mode {
	AIO_TRIGGER_WRITE,	/* the thread submits a buffered write */
	AIO_TRIGGER_PIPE,	/* a pending IOCB_CMD_POLL; the thread writes
				   to its pipe */
	AIO_TRIGGER_FSYNC,	/* the thread submits IOCB_CMD_FSYNC, which
				   completes from a workqueue */
	AIO_TRIGGER_MODES
};

static inline const char *aio_trigger_name(int mode)
{
	switch (mode) {
	case AIO_TRIGGER_WRITE:
		return "buffered write";
	case AIO_TRIGGER_PIPE:
		return "poll of a pipe";
	case AIO_TRIGGER_FSYNC:
		return "fsync";
	default:
		return "?";
	}
}

struct aio_trigger {
	aio_context_t ctx;
	int mode;
	int delay_ms;
	int file;
	int pipe[2];
	uint64_t data;
	char buf[64];
	struct iocb cb;
	volatile int fired;	/* set just before the completion is caused */
	pthread_t thread;
};

static void *aio_trigger_main(void *arg)
{
	struct aio_trigger *t = arg;

	pt_sleep_ms(t->delay_ms);
	__atomic_store_n(&t->fired, 1, __ATOMIC_SEQ_CST);
	switch (t->mode) {
	case AIO_TRIGGER_WRITE:
		aio_prep_pwrite(&t->cb, t->file, t->buf, sizeof(t->buf), 0,
				t->data);
		aio_submit1(t->ctx, &t->cb);
		break;
	case AIO_TRIGGER_PIPE:
		if (write(t->pipe[1], "x", 1) != 1)
			FAIL("write(pipe): %s", strerror(errno));
		break;
	case AIO_TRIGGER_FSYNC:
		memset(&t->cb, 0, sizeof(t->cb));
		t->cb.aio_lio_opcode = IOCB_CMD_FSYNC;
		t->cb.aio_fildes = (__u32)t->file;
		t->cb.aio_data = t->data;
		aio_submit1(t->ctx, &t->cb);
		break;
	}
	return NULL;
}

/*
 * Prepares a completion on ctx that a thread will cause delay_ms after
 * aio_trigger_start; for AIO_TRIGGER_PIPE the poll iocb is submitted now.
 */
static inline void aio_trigger_init(struct aio_trigger *t, aio_context_t ctx,
				    int mode, int delay_ms, uint64_t data)
{
	memset(t, 0, sizeof(*t));
	t->ctx = ctx;
	t->mode = mode;
	t->delay_ms = delay_ms;
	t->data = data;
	t->file = -1;
	t->pipe[0] = t->pipe[1] = -1;
	memset(t->buf, 'w', sizeof(t->buf));
	if (mode == AIO_TRIGGER_PIPE) {
		CHECK_SYS(pipe2(t->pipe, O_CLOEXEC));
		aio_prep_poll(&t->cb, t->pipe[0], POLLIN, data);
		aio_submit1(ctx, &t->cb);
	} else {
		t->file = aio_tmpfile("/tmp", 0);
	}
}

static inline void aio_trigger_start(struct aio_trigger *t)
{
	int e = pthread_create(&t->thread, NULL, aio_trigger_main, t);

	if (e)
		FAIL("pthread_create: %s", strerror(e));
}

static inline bool aio_trigger_fired(struct aio_trigger *t)
{
	return __atomic_load_n(&t->fired, __ATOMIC_SEQ_CST);
}

/* Fails unless ev is the completion the trigger caused. */
static inline void aio_trigger_check(struct aio_trigger *t,
				     const struct io_event *ev)
{
	int64_t want = t->mode == AIO_TRIGGER_WRITE ? (int64_t)sizeof(t->buf) :
		       t->mode == AIO_TRIGGER_PIPE ? POLLIN : 0;
	int64_t res = ev->res;

	/* a poll's result is the pipe's wake-up key: POLLRDNORM may come
	 * with POLLIN */
	if (t->mode == AIO_TRIGGER_PIPE && res == (POLLIN | POLLRDNORM))
		res = POLLIN;
	if (ev->data != t->data || res != want ||
	    ev->obj != (uint64_t)(uintptr_t)&t->cb)
		FAIL("%s: io_event {data %#llx, obj %#llx, res %lld}, "
		     "expected {%#llx, %p, %lld}", aio_trigger_name(t->mode),
		     (unsigned long long)ev->data,
		     (unsigned long long)ev->obj, (long long)ev->res,
		     (unsigned long long)t->data, (void *)&t->cb,
		     (long long)want);
}

static inline void aio_trigger_join(struct aio_trigger *t)
{
	pthread_join(t->thread, NULL);
}

static inline void aio_trigger_fini(struct aio_trigger *t)
{
	if (t->file >= 0)
		close(t->file);
	if (t->pipe[0] >= 0) {
		close(t->pipe[0]);
		close(t->pipe[1]);
	}
}

/* ---- a byte at a time between processes ---- */

/* Writes one byte to fd. */
#define aio_send(fd, c) aio_send_at(__FILE__, __LINE__, (fd), (c))
static inline void aio_send_at(const char *file, int line, int fd, char c)
{
	ssize_t r;

	do
		r = write(fd, &c, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		pt_fail_at(file, line, "sending '%c': errno %d (%s)", c,
			   errno, strerror(errno));
}

/* Waits up to PT_WAIT_MS for one byte from fd, failing unless it is c. */
#define aio_expect_msg(fd, c) aio_expect_msg_at(__FILE__, __LINE__, (fd), (c))
static inline void aio_expect_msg_at(const char *file, int line, int fd,
				     char c)
{
	char got = 0;
	ssize_t r;

	if (!(aio_revents_at(file, line, fd, POLLIN, PT_WAIT_MS) & POLLIN))
		pt_fail_at(file, line, "no '%c' within %d ms", c, PT_WAIT_MS);
	do
		r = read(fd, &got, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1 || got != c)
		pt_fail_at(file, line, "expected '%c', read returned %zd "
			   "('%c'), errno %d", c, r, r == 1 ? got : '?', errno);
}

#endif /* POLLFS_TESTS_AIO_H */
