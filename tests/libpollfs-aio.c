// SPDX-License-Identifier: MIT
/*
 * libpollfs: pollfs_aio(), pollfs_aio_read().
 *
 * The object reports the unreaped completions of its context: a read
 * returns 1 and {ctx, available} without reaping, a blocking read sleeps
 * until a completion; once the context is destroyed a read returns 0,
 * also one asleep at the time; and the documented errors.
 */
#include "lib/aio.h"
#include "lib/futex.h"

#include <stdatomic.h>
#include <sys/mman.h>

#include <pollfs.h>

PT_BUDGET(50);

static void write_one(aio_context_t ctx, int file, struct iocb *cb,
		      uint64_t data)
{
	static char buf[512];

	ax_prep_pwrite(cb, file, buf, sizeof(buf), 0, data);
	ax_submit1(ctx, cb);
}

/* Waits until the ring of ctx holds n unreaped completions. */
static void wait_ring(aio_context_t ctx, unsigned int n)
{
	volatile struct ax_ring_head *ring = ax_ring(ctx);
	int64_t end = pt_mono() + MS(PT_WAIT_MS);

	while ((ring->tail + ring->nr - ring->head) % ring->nr != n) {
		if (pt_mono() > end)
			FAIL("%u completions not in the ring within %d ms", n,
			     PT_WAIT_MS);
		pt_sleep_ms(1);
	}
}

static void expect_record(int fd, aio_context_t ctx, uint64_t available)
{
	struct pollfs_aio_event ev;

	memset(&ev, 0xa5, sizeof(ev));
	CHECK_EQ(pollfs_aio_read(fd, &ev), 1);
	CHECK_EQ(ev.ctx, ctx);
	CHECK_EQ(ev.available, available);
}

/* ---- creation ---- */

/* In a child: the parent's context is not one of its own. */
static int create_in_child(void *arg)
{
	aio_context_t ctx = *(aio_context_t *)arg;

	CHECK_ERR(pollfs_aio(ctx, 0), EINVAL);
	return PT_PASS;
}

TEST(create)
{
	aio_context_t ctx = ax_setup(8), dead;
	int fd;

	CHECK_ERR(pollfs_aio(ctx, O_WRONLY), EINVAL);
	CHECK_ERR(pollfs_aio(ctx, -1), EINVAL);
	CHECK_ERR(pollfs_aio(ctx, POLLFS_NONBLOCK | 0x10000000), EINVAL);
	CHECK_ERR(pollfs_aio(0, 0), EINVAL);
	CHECK_ERR(pollfs_aio(ctx + 4096, 0), EINVAL);
	dead = ax_setup(4);
	ax_destroy(dead);
	CHECK_ERR(pollfs_aio(dead, 0), EINVAL);
	CHECK_EQ(pt_run_child(create_in_child, &ctx, PT_WAIT_MS), 0);

	fd = CHECK_SYS(pollfs_aio(ctx, 0));
	CHECK_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	CHECK_SYS(close(fd));
	fd = CHECK_SYS(pollfs_aio(ctx, POLLFS_CLOEXEC | POLLFS_NONBLOCK));
	CHECK_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_SYS(close(fd));
	ax_destroy(ctx);
}

/* ---- reading ---- */

TEST(read)
{
	aio_context_t ctx = ax_setup(16);
	struct pollfs_aio_event ev;
	struct io_event done[4];
	struct iocb cb[3];
	int fd, file;

	file = ax_tmpfile("/tmp", 0);
	fd = CHECK_SYS(pollfs_aio(ctx, POLLFS_NONBLOCK));
	CHECK_ERR(pollfs_aio_read(fd, &ev), EAGAIN);
	CHECK(!pt_poll_in(fd, 0));

	write_one(ctx, file, &cb[0], 1);
	wait_ring(ctx, 1);
	pt_wait_readable(fd, PT_WAIT_MS);
	/* nothing reaped: the same again */
	expect_record(fd, ctx, 1);
	expect_record(fd, ctx, 1);

	write_one(ctx, file, &cb[1], 2);
	write_one(ctx, file, &cb[2], 3);
	wait_ring(ctx, 3);
	expect_record(fd, ctx, 3);

	ax_reap(ctx, 2, 2, done, PT_WAIT_MS);
	expect_record(fd, ctx, 1);
	ax_reap(ctx, 1, 4, done, PT_WAIT_MS);
	CHECK_ERR(pollfs_aio_read(fd, &ev), EAGAIN);
	CHECK(!pt_poll_in(fd, 0));

	/* the context destroyed: end of file, and POLLHUP */
	write_one(ctx, file, &cb[0], 4);
	wait_ring(ctx, 1);
	ax_destroy(ctx);
	memset(&ev, 0xa5, sizeof(ev));
	CHECK_EQ(pollfs_aio_read(fd, &ev), 0);
	CHECK_EQ(ev.ctx, 0xa5a5a5a5a5a5a5a5ULL);	/* nothing stored */
	CHECK_EQ(pollfs_aio_read(fd, &ev), 0);
	CHECK_EQ(ax_revents(fd, POLLIN, 0), POLLHUP);
	CHECK_SYS(close(fd));
	CHECK_SYS(close(file));
}

/* ---- blocking reads ---- */

static int reader_fd;
static atomic_int reader_tid;
static struct pollfs_aio_event reader_ev;

static void *reader(void *unused)
{
	(void)unused;
	atomic_store(&reader_tid, gettid());
	return (void *)(intptr_t)pollfs_aio_read(reader_fd, &reader_ev);
}

static void start_reader(pthread_t *th)
{
	atomic_store(&reader_tid, 0);
	memset(&reader_ev, 0xa5, sizeof(reader_ev));
	CHECK_EQ(pthread_create(th, NULL, reader, NULL), 0);
	while (!atomic_load(&reader_tid))
		pt_sleep_ms(1);
	fx_wait_sleeping(atomic_load(&reader_tid), SYS_read);
}

TEST(blocking)
{
	aio_context_t ctx = ax_setup(8);
	struct io_event done[1];
	struct iocb cb;
	pthread_t th;
	void *ret;
	int file;

	file = ax_tmpfile("/tmp", 0);
	reader_fd = CHECK_SYS(pollfs_aio(ctx, 0));

	/* woken by a completion */
	start_reader(&th);
	write_one(ctx, file, &cb, 9);
	CHECK_EQ(pthread_join(th, &ret), 0);
	CHECK_EQ((intptr_t)ret, 1);
	CHECK_EQ(reader_ev.ctx, ctx);
	CHECK_EQ(reader_ev.available, 1);
	ax_reap(ctx, 1, 1, done, PT_WAIT_MS);
	CHECK_EQ(done[0].data, 9);

	/* woken by io_destroy(): 0 */
	start_reader(&th);
	ax_destroy(ctx);
	CHECK_EQ(pthread_join(th, &ret), 0);
	CHECK_EQ((intptr_t)ret, 0);
	CHECK_EQ(reader_ev.ctx, 0xa5a5a5a5a5a5a5a5ULL);
	CHECK_SYS(close(reader_fd));
	CHECK_SYS(close(file));
}

/* ---- errors ---- */

TEST(errors)
{
	aio_context_t ctx = ax_setup(8);
	struct pollfs_aio_event ev;
	struct iocb cb;
	void *none;
	int fd, file, ffd, p[2];

	file = ax_tmpfile("/tmp", 0);
	fd = CHECK_SYS(pollfs_aio(ctx, POLLFS_NONBLOCK));
	CHECK_ERR(pollfs_aio_read(-1, &ev), EBADF);

	write_one(ctx, file, &cb, 1);
	wait_ring(ctx, 1);
	none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(none != MAP_FAILED);
	CHECK_ERR(pollfs_aio_read(fd, none), EFAULT);
	CHECK_SYS(munmap(none, 4096));
	expect_record(fd, ctx, 1);	/* nothing was consumed */

	/* another kind: an unarmed futex object refuses the read */
	ffd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK));
	CHECK_ERR(pollfs_aio_read(ffd, &ev), EINVAL);
	CHECK_SYS(close(ffd));

	/* part of a record */
	CHECK_SYS(pipe2(p, O_CLOEXEC | O_NONBLOCK));
	CHECK_EQ(write(p[1], "abc", 3), 3);
	CHECK_ERR(pollfs_aio_read(p[0], &ev), EIO);
	CHECK_SYS(close(p[0]));
	CHECK_SYS(close(p[1]));

	CHECK_SYS(close(fd));
	ax_destroy(ctx);
	CHECK_SYS(close(file));
}

int main(void)
{
	return pt_run_tests();
}
