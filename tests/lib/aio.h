/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the AIO object tests: raw io_setup(2) family syscalls, iocb
 * preparation, and checks of what a pollfs AIO fd reports.  Include it
 * instead of lib.h.
 *
 * Their prefix is ax_, not aio_: aio_ and AIO_ belong to POSIX <aio.h>
 * (aio_read, aio_error, ...), which a test may well include beside this.
 */
#ifndef POLLFS_TESTS_AIO_H
#define POLLFS_TESTS_AIO_H

#include "lib.h"

#include <linux/aio_abi.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>

#define AX_EVENT_SIZE	((ssize_t)sizeof(struct pollfs_aio_event))

_Static_assert(sizeof(struct pollfs_aio_open) == 16, "aio open size");
_Static_assert(sizeof(struct pollfs_aio_event) == 16, "aio event size");
_Static_assert(sizeof(struct iocb) == 64, "iocb size");
_Static_assert(sizeof(struct io_event) == 32, "io_event size");

/* The head of the completion ring that io_setup maps at the context id. */
struct ax_ring_head {
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

static inline long ax_sys_setup(unsigned int nr, aio_context_t *ctx)
{
	return syscall(SYS_io_setup, nr, ctx);
}

static inline long ax_sys_destroy(aio_context_t ctx)
{
	return syscall(SYS_io_destroy, ctx);
}

static inline long ax_sys_submit(aio_context_t ctx, long n, struct iocb **iocbs)
{
	return syscall(SYS_io_submit, ctx, n, iocbs);
}

static inline long ax_sys_getevents(aio_context_t ctx, long min_nr, long nr,
				    struct io_event *ev, struct timespec *ts)
{
	return syscall(SYS_io_getevents, ctx, min_nr, nr, ev, ts);
}

static inline long ax_sys_cancel(aio_context_t ctx, struct iocb *iocb,
				 struct io_event *ev)
{
	return syscall(SYS_io_cancel, ctx, iocb, ev);
}

/* io_setup(nr), failing the test if it fails. */
#define ax_setup(nr) ax_setup_at(__FILE__, __LINE__, (nr))
aio_context_t ax_setup_at(const char *file, int line, unsigned int nr);

/* io_destroy(ctx), failing the test if it fails. */
#define ax_destroy(ctx) ax_destroy_at(__FILE__, __LINE__, (ctx))
void ax_destroy_at(const char *file, int line, aio_context_t ctx);

/* ---- iocbs ---- */

void ax_prep_rw(struct iocb *cb, int op, int fd, void *buf, size_t len,
		off_t off, uint64_t data);

void ax_prep_pwrite(struct iocb *cb, int fd, const void *buf, size_t len,
		    off_t off, uint64_t data);

void ax_prep_pread(struct iocb *cb, int fd, void *buf, size_t len, off_t off,
		   uint64_t data);

/* IOCB_CMD_POLL: completes once fd shows one of events (one-shot). */
void ax_prep_poll(struct iocb *cb, int fd, short events, uint64_t data);

/* Submits n iocbs, failing unless all n are accepted. */
#define ax_submit(ctx, n, cbs) ax_submit_at(__FILE__, __LINE__, (ctx), (n), (cbs))
void ax_submit_at(const char *file, int line, aio_context_t ctx, long n,
		  struct iocb **cbs);

#define ax_submit1(ctx, cb) do {					\
	struct iocb *one_[1] = { (cb) };				\
	ax_submit_at(__FILE__, __LINE__, (ctx), 1, one_);		\
} while (0)

/*
 * io_getevents(min_nr, nr) with a timeout (-1: none), retried on EINTR;
 * fails the test unless it returns between min_nr and nr events.
 */
#define ax_reap(ctx, min_nr, nr, ev, timeout_ms)			\
	ax_reap_at(__FILE__, __LINE__, (ctx), (min_nr), (nr), (ev), (timeout_ms))
long ax_reap_at(const char *file, int line, aio_context_t ctx, long min_nr,
		long nr, struct io_event *ev, int timeout_ms);

/* The completion ring's header, which io_setup maps at the context id. */
static inline volatile struct ax_ring_head *ax_ring(aio_context_t ctx)
{
	return (volatile struct ax_ring_head *)(uintptr_t)ctx;
}

/* ---- pollfs AIO objects ---- */

/* POLLFS_IOC_AIO on a fresh /dev/pollfs handle; the fd, or -1 with errno. */
int ax_fd_try(aio_context_t ctx, unsigned int flags);

/* POLLFS_IOC_AIO, failing the test if it fails. */
#define ax_fd(ctx, flags) ax_fd_at(__FILE__, __LINE__, (ctx), (flags))
int ax_fd_at(const char *file, int line, aio_context_t ctx, unsigned int flags);

/* read() of one record, retried on EINTR; returns what read returned. */
ssize_t ax_read_rec(int fd, struct pollfs_aio_event *ev);

/* poll() for events up to timeout_ms, retried on EINTR; the revents. */
#define ax_revents(fd, events, timeout_ms)				\
	ax_revents_at(__FILE__, __LINE__, (fd), (events), (timeout_ms))
short ax_revents_at(const char *file, int line, int fd, short events,
		    int timeout_ms);

/*
 * Fails unless fd is readable now and one read returns exactly one record
 * {ctx, available}.
 */
#define ax_expect_avail(fd, ctx, n)					\
	ax_expect_avail_at(__FILE__, __LINE__, (fd), (ctx), (n))
void ax_expect_avail_at(const char *file, int line, int fd, aio_context_t ctx,
			uint64_t n);

/*
 * Fails unless nothing is unreaped: no POLLIN (nor POLLHUP), and a
 * non-blocking read gives EAGAIN (O_NONBLOCK set for it and restored).
 */
#define ax_expect_empty(fd) ax_expect_empty_at(__FILE__, __LINE__, (fd))
void ax_expect_empty_at(const char *file, int line, int fd);

/*
 * Fails unless the context is gone: poll shows POLLHUP without POLLIN, and
 * read returns 0, both blocking and with O_NONBLOCK (the other mode is set
 * for one read and restored).
 */
#define ax_expect_hup(fd) ax_expect_hup_at(__FILE__, __LINE__, (fd))
void ax_expect_hup_at(const char *file, int line, int fd);

/*
 * Fails unless one epoll_wait of ep (the object fd in it, tagged 0)
 * reports fd within timeout_ms, fd then reads one completion of ctx
 * (ax_expect_avail), and io_getevents reaps it; what and round name the
 * completion in the failure.
 */
#define ax_expect_woken(ep, fd, ctx, timeout_ms, what, round)		\
	ax_expect_woken_at(__FILE__, __LINE__, (ep), (fd), (ctx),	\
			   (timeout_ms), (what), (round))
void ax_expect_woken_at(const char *file, int line, int ep, int fd,
			aio_context_t ctx, int timeout_ms, const char *what,
			int round);

/* Waits up to timeout_ms for POLLHUP, then checks as ax_expect_hup. */
#define ax_wait_hup(fd, timeout_ms)					\
	ax_wait_hup_at(__FILE__, __LINE__, (fd), (timeout_ms))
void ax_wait_hup_at(const char *file, int line, int fd, int timeout_ms);

/* ---- files ---- */

/* An unlinked regular file in dir (O_RDWR, extra flags added). */
#define ax_tmpfile(dir, flags) ax_tmpfile_at(__FILE__, __LINE__, (dir), (flags))
int ax_tmpfile_at(const char *file, int line, const char *dir, int flags);

/* True if res is what a completed IOCB_CMD_POLL for POLLIN of a pipe
 * gives: POLLIN, with POLLRDNORM when the pipe's wake-up key named it. */
static inline bool ax_pipe_poll_res(int64_t res)
{
	return res == POLLIN || res == (POLLIN | POLLRDNORM);
}

/* Checks one completion event: its data and its result. */
#define ax_check_event(ev, data, res)					\
	ax_check_event_at(__FILE__, __LINE__, (ev), (data), (res))
void ax_check_event_at(const char *file, int line, const struct io_event *ev,
		       uint64_t data, int64_t res);

/* ---- a completion that happens later, in another thread ---- */

enum ax_trigger_mode {
	AX_TRIGGER_WRITE,	/* the thread submits a buffered write */
	AX_TRIGGER_PIPE,	/* a pending IOCB_CMD_POLL; the thread writes
				   to its pipe */
	AX_TRIGGER_FSYNC,	/* the thread submits IOCB_CMD_FSYNC, which
				   completes from a workqueue */
	AX_TRIGGER_MODES
};

const char *ax_trigger_name(int mode);

struct ax_trigger {
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

/*
 * Prepares a completion on ctx that a thread will cause delay_ms after
 * ax_trigger_start; for AX_TRIGGER_PIPE the poll iocb is submitted now.
 */
void ax_trigger_init(struct ax_trigger *t, aio_context_t ctx, int mode,
		     int delay_ms, uint64_t data);

void ax_trigger_start(struct ax_trigger *t);

static inline bool ax_trigger_fired(struct ax_trigger *t)
{
	return __atomic_load_n(&t->fired, __ATOMIC_SEQ_CST);
}

/* Fails unless ev is the completion the trigger caused. */
void ax_trigger_check(struct ax_trigger *t, const struct io_event *ev);

static inline void ax_trigger_join(struct ax_trigger *t)
{
	pthread_join(t->thread, NULL);
}

void ax_trigger_fini(struct ax_trigger *t);

/* ---- a byte at a time between processes ---- */

/* Writes one byte to fd. */
#define ax_send(fd, c) ax_send_at(__FILE__, __LINE__, (fd), (c))
void ax_send_at(const char *file, int line, int fd, char c);

/* Waits up to PT_WAIT_MS for one byte from fd, failing unless it is c. */
#define ax_expect_msg(fd, c) ax_expect_msg_at(__FILE__, __LINE__, (fd), (c))
void ax_expect_msg_at(const char *file, int line, int fd, char c);

#endif /* POLLFS_TESTS_AIO_H */
