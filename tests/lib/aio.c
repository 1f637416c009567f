// SPDX-License-Identifier: MIT
/* Helpers of the AIO tests; see aio.h. */
#include "aio.h"

aio_context_t ax_setup_at(const char *file, int line, unsigned int nr)
{
	aio_context_t ctx = 0;

	if (ax_sys_setup(nr, &ctx))
		pt_fail_at(file, line, "io_setup(%u): errno %d (%s)", nr,
			   errno, strerror(errno));
	if (!ctx)
		pt_fail_at(file, line, "io_setup(%u) gave context 0", nr);
	return ctx;
}

void ax_destroy_at(const char *file, int line, aio_context_t ctx)
{
	if (ax_sys_destroy(ctx))
		pt_fail_at(file, line, "io_destroy(%#llx): errno %d (%s)",
			   (unsigned long long)ctx, errno, strerror(errno));
}

void ax_prep_rw(struct iocb *cb, int op, int fd, void *buf, size_t len,
		off_t off, uint64_t data)
{
	memset(cb, 0, sizeof(*cb));
	cb->aio_data = data;
	cb->aio_lio_opcode = (__u16)op;
	cb->aio_fildes = (__u32)fd;
	cb->aio_buf = (__u64)(uintptr_t)buf;
	cb->aio_nbytes = len;
	cb->aio_offset = off;
}

void ax_prep_pwrite(struct iocb *cb, int fd, const void *buf, size_t len,
		    off_t off, uint64_t data)
{
	ax_prep_rw(cb, IOCB_CMD_PWRITE, fd, (void *)buf, len, off, data);
}

void ax_prep_pread(struct iocb *cb, int fd, void *buf, size_t len, off_t off,
		   uint64_t data)
{
	ax_prep_rw(cb, IOCB_CMD_PREAD, fd, buf, len, off, data);
}

void ax_prep_poll(struct iocb *cb, int fd, short events, uint64_t data)
{
	memset(cb, 0, sizeof(*cb));
	cb->aio_data = data;
	cb->aio_lio_opcode = IOCB_CMD_POLL;
	cb->aio_fildes = (__u32)fd;
	cb->aio_buf = (__u64)(unsigned short)events;
}

void ax_submit_at(const char *file, int line, aio_context_t ctx, long n,
		  struct iocb **cbs)
{
	long r = ax_sys_submit(ctx, n, cbs);

	if (r != n)
		pt_fail_at(file, line, "io_submit(%ld iocbs): returned %ld, "
			   "errno %d (%s)", n, r, errno, strerror(errno));
}

long ax_reap_at(const char *file, int line, aio_context_t ctx, long min_nr,
		long nr, struct io_event *ev, int timeout_ms)
{
	struct timespec ts = { timeout_ms / 1000, (timeout_ms % 1000) * 1000000L };
	long r;

	do
		r = ax_sys_getevents(ctx, min_nr, nr, ev,
				     timeout_ms < 0 ? NULL : &ts);
	while (r < 0 && errno == EINTR);
	if (r < min_nr || r > nr)
		pt_fail_at(file, line, "io_getevents(min %ld, nr %ld, %d ms): "
			   "returned %ld, errno %d (%s)", min_nr, nr,
			   timeout_ms, r, errno, strerror(errno));
	return r;
}

int ax_fd_try(aio_context_t ctx, unsigned int flags)
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

int ax_fd_at(const char *file, int line, aio_context_t ctx, unsigned int flags)
{
	int fd = ax_fd_try(ctx, flags);

	if (fd < 0)
		pt_fail_at(file, line, "POLLFS_IOC_AIO(ctx %#llx, flags %#x): "
			   "errno %d (%s)", (unsigned long long)ctx, flags,
			   errno, strerror(errno));
	return fd;
}

ssize_t ax_read_rec(int fd, struct pollfs_aio_event *ev)
{
	ssize_t r;

	memset(ev, 0xa5, sizeof(*ev));
	do
		r = read(fd, ev, sizeof(*ev));
	while (r < 0 && errno == EINTR);
	return r;
}

short ax_revents_at(const char *file, int line, int fd, short events,
		    int timeout_ms)
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

void ax_expect_avail_at(const char *file, int line, int fd, aio_context_t ctx,
			uint64_t n)
{
	struct pollfs_aio_event ev;
	short rev = ax_revents_at(file, line, fd, POLLIN, 0);
	ssize_t r;

	if (rev != POLLIN)
		pt_fail_at(file, line, "fd %d: poll revents %#x, expected "
			   "POLLIN alone (%llu completions unreaped)", fd,
			   (unsigned)rev, (unsigned long long)n);
	r = ax_read_rec(fd, &ev);
	if (r != AX_EVENT_SIZE)
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

void ax_expect_woken_at(const char *file, int line, int ep, int fd,
			aio_context_t ctx, int timeout_ms, const char *what,
			int round)
{
	struct io_event ev;

	if (!pt_epoll_wait_one(ep, timeout_ms, 0))
		pt_fail_at(file, line, "%s %d: the object was not woken", what,
			   round);
	ax_expect_avail_at(file, line, fd, ctx, 1);
	ax_reap_at(file, line, ctx, 1, 1, &ev, 0);
}

void ax_expect_empty_at(const char *file, int line, int fd)
{
	short rev = ax_revents_at(file, line, fd, POLLIN, 0);

	if (rev)
		pt_fail_at(file, line, "fd %d: poll revents %#x while the "
			   "ring should be empty", fd, (unsigned)rev);
	pt_expect_empty_at(file, line, fd);
}

void ax_expect_hup_at(const char *file, int line, int fd)
{
	struct pollfs_aio_event ev;
	short rev = ax_revents_at(file, line, fd, POLLIN, 0);
	ssize_t r;
	int fl;

	if (rev != POLLHUP)
		pt_fail_at(file, line, "fd %d: poll revents %#x after the "
			   "context's end, expected POLLHUP alone", fd,
			   (unsigned)rev);
	r = ax_read_rec(fd, &ev);
	if (r != 0)
		pt_fail_at(file, line, "read(aio fd %d) after the context's "
			   "end: returned %zd, errno %d (%s), expected 0", fd,
			   r, errno, strerror(errno));
	/* and in the other blocking mode */
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl ^ O_NONBLOCK))
		pt_fail_at(file, line, "fcntl: %s", strerror(errno));
	r = ax_read_rec(fd, &ev);
	if (fcntl(fd, F_SETFL, fl))
		pt_fail_at(file, line, "fcntl: %s", strerror(errno));
	if (r != 0)
		pt_fail_at(file, line, "read(aio fd %d, %s) after the "
			   "context's end: returned %zd, errno %d (%s), "
			   "expected 0", fd,
			   (fl & O_NONBLOCK) ? "blocking" : "O_NONBLOCK", r,
			   errno, strerror(errno));
}

void ax_wait_hup_at(const char *file, int line, int fd, int timeout_ms)
{
	/* events 0: poll sleeps until POLLHUP (or POLLERR) alone */
	short rev = ax_revents_at(file, line, fd, 0, timeout_ms);

	if (!(rev & POLLHUP))
		pt_fail_at(file, line, "fd %d: no POLLHUP within %d ms "
			   "(revents %#x)", fd, timeout_ms, (unsigned)rev);
	ax_expect_hup_at(file, line, fd);
}

int ax_tmpfile_at(const char *file, int line, const char *dir, int flags)
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

void ax_check_event_at(const char *file, int line, const struct io_event *ev,
		       uint64_t data, int64_t res)
{
	if (ev->data != data || ev->res != res)
		pt_fail_at(file, line, "io_event {data %#llx, res %lld}, "
			   "expected {%#llx, %lld}",
			   (unsigned long long)ev->data, (long long)ev->res,
			   (unsigned long long)data, (long long)res);
}

const char *ax_trigger_name(int mode)
{
	switch (mode) {
	case AX_TRIGGER_WRITE:
		return "buffered write";
	case AX_TRIGGER_PIPE:
		return "poll of a pipe";
	case AX_TRIGGER_FSYNC:
		return "fsync";
	default:
		return "?";
	}
}

static void *ax_trigger_main(void *arg)
{
	struct ax_trigger *t = arg;

	pt_sleep_ms(t->delay_ms);
	__atomic_store_n(&t->fired, 1, __ATOMIC_SEQ_CST);
	switch (t->mode) {
	case AX_TRIGGER_WRITE:
		ax_prep_pwrite(&t->cb, t->file, t->buf, sizeof(t->buf), 0,
			       t->data);
		ax_submit1(t->ctx, &t->cb);
		break;
	case AX_TRIGGER_PIPE:
		if (write(t->pipe[1], "x", 1) != 1)
			FAIL("write(pipe): %s", strerror(errno));
		break;
	case AX_TRIGGER_FSYNC:
		memset(&t->cb, 0, sizeof(t->cb));
		t->cb.aio_lio_opcode = IOCB_CMD_FSYNC;
		t->cb.aio_fildes = (__u32)t->file;
		t->cb.aio_data = t->data;
		ax_submit1(t->ctx, &t->cb);
		break;
	}
	return NULL;
}

void ax_trigger_init(struct ax_trigger *t, aio_context_t ctx, int mode,
		     int delay_ms, uint64_t data)
{
	memset(t, 0, sizeof(*t));
	t->ctx = ctx;
	t->mode = mode;
	t->delay_ms = delay_ms;
	t->data = data;
	t->file = -1;
	t->pipe[0] = t->pipe[1] = -1;
	memset(t->buf, 'w', sizeof(t->buf));
	if (mode == AX_TRIGGER_PIPE) {
		CHECK_SYS(pipe2(t->pipe, O_CLOEXEC));
		ax_prep_poll(&t->cb, t->pipe[0], POLLIN, data);
		ax_submit1(ctx, &t->cb);
	} else {
		t->file = ax_tmpfile("/tmp", 0);
	}
}

void ax_trigger_start(struct ax_trigger *t)
{
	int e = pthread_create(&t->thread, NULL, ax_trigger_main, t);

	if (e)
		FAIL("pthread_create: %s", strerror(e));
}

void ax_trigger_check(struct ax_trigger *t, const struct io_event *ev)
{
	int64_t want = t->mode == AX_TRIGGER_WRITE ? (int64_t)sizeof(t->buf) :
		       t->mode == AX_TRIGGER_PIPE ? POLLIN : 0;
	int64_t res = ev->res;

	/* a poll's result is the pipe's wake-up key: POLLRDNORM may come
	 * with POLLIN */
	if (t->mode == AX_TRIGGER_PIPE && res == (POLLIN | POLLRDNORM))
		res = POLLIN;
	if (ev->data != t->data || res != want ||
	    ev->obj != (uint64_t)(uintptr_t)&t->cb)
		FAIL("%s: io_event {data %#llx, obj %#llx, res %lld}, "
		     "expected {%#llx, %p, %lld}", ax_trigger_name(t->mode),
		     (unsigned long long)ev->data,
		     (unsigned long long)ev->obj, (long long)ev->res,
		     (unsigned long long)t->data, (void *)&t->cb,
		     (long long)want);
}

void ax_trigger_fini(struct ax_trigger *t)
{
	if (t->file >= 0)
		close(t->file);
	if (t->pipe[0] >= 0) {
		close(t->pipe[0]);
		close(t->pipe[1]);
	}
}

void ax_send_at(const char *file, int line, int fd, char c)
{
	ssize_t r;

	do
		r = write(fd, &c, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		pt_fail_at(file, line, "sending '%c': errno %d (%s)", c,
			   errno, strerror(errno));
}

void ax_expect_msg_at(const char *file, int line, int fd, char c)
{
	char got = 0;
	ssize_t r;

	if (!(ax_revents_at(file, line, fd, POLLIN, PT_WAIT_MS) & POLLIN))
		pt_fail_at(file, line, "no '%c' within %d ms", c, PT_WAIT_MS);
	do
		r = read(fd, &got, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1 || got != c)
		pt_fail_at(file, line, "expected '%c', read returned %zd "
			   "('%c'), errno %d", c, r, r == 1 ? got : '?', errno);
}
