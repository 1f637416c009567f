// SPDX-License-Identifier: MIT
/*
 * io_destroy(2) of a context while AIO objects on it are open: it returns
 * promptly (pollfs holds nothing that delays it), poll shows POLLHUP,
 * reads return 0 (blocking and non-blocking), and a blocking read, a poll
 * and an epoll_wait sleeping at the time all wake up.  The same with
 * completions still unreaped, with a request still in flight, and with a
 * new context taking the old one's address.  Closing afterwards, or
 * before the destroy, is clean.
 */
#include "lib/aio.h"

#include <sys/epoll.h>

PT_BUDGET(90);

static int fd_block;
static ssize_t read_ret;
static int read_err;
static short poll_rev;
static struct epoll_event ep_ev;
static int ep_n, ep_fd;

static void *blocked_read(void *unused)
{
	struct pollfs_aio_event ev;

	(void)unused;
	read_ret = ax_read_rec(fd_block, &ev);
	read_err = errno;
	return NULL;
}

static void *blocked_poll(void *unused)
{
	(void)unused;
	poll_rev = ax_revents(fd_block, POLLIN, PT_WAIT_MS);
	return NULL;
}

static void *blocked_epoll(void *unused)
{
	(void)unused;
	do
		ep_n = epoll_wait(ep_fd, &ep_ev, 1, PT_WAIT_MS);
	while (ep_n < 0 && errno == EINTR);
	return NULL;
}

/* io_destroy, failing unless it returns within 2 s. */
static void timed_destroy(aio_context_t ctx, const char *what)
{
	int64_t t0 = pt_mono(), dt;

	ax_destroy(ctx);
	dt = pt_mono() - t0;
	pt_diag("%s: io_destroy took %lld us", what, (long long)(dt / 1000));
	if (dt > MS(2000))
		FAIL("%s: io_destroy took %lld ms", what,
		     (long long)(dt / NSEC_PER_MSEC));
}

int main(void)
{
	static char data[64];
	struct iocb cbs[4], *ptrs[4];
	struct epoll_event e;
	pthread_t th[3];
	aio_context_t ctx, ctx2;
	int fd_nb, file, pfd[2], et, fd2;

	file = ax_tmpfile("/tmp", 0);
	for (int i = 0; i < 4; i++) {
		ax_prep_pwrite(&cbs[i], file, data, sizeof(data), 0, i);
		ptrs[i] = &cbs[i];
	}

	/* 1: sleepers in read, poll and epoll_wait at the time */
	ctx = ax_setup(8);
	fd_block = ax_fd(ctx, 0);
	fd_nb = ax_fd(ctx, POLLFS_NONBLOCK);
	ep_fd = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	e.events = EPOLLIN;
	e.data.u64 = 1;
	CHECK_SYS(epoll_ctl(ep_fd, EPOLL_CTL_ADD, fd_block, &e));
	et = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	e.events = EPOLLIN | EPOLLET;
	CHECK_SYS(epoll_ctl(et, EPOLL_CTL_ADD, fd_nb, &e));
	ax_expect_empty(fd_block);
	CHECK_EQ(pthread_create(&th[0], NULL, blocked_read, NULL), 0);
	CHECK_EQ(pthread_create(&th[1], NULL, blocked_poll, NULL), 0);
	CHECK_EQ(pthread_create(&th[2], NULL, blocked_epoll, NULL), 0);
	pt_sleep_ms(300);		/* let them fall asleep */
	timed_destroy(ctx, "with sleepers");
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	if (read_ret != 0)
		FAIL("blocking read sleeping at io_destroy: returned %zd, "
		     "errno %d (%s), expected 0", read_ret, read_err,
		     strerror(read_err));
	CHECK_EQ(poll_rev, POLLHUP);
	CHECK_EQ(ep_n, 1);
	CHECK_EQ(ep_ev.events, EPOLLHUP);
	ax_expect_hup(fd_block);
	ax_expect_hup(fd_nb);
	CHECK_EQ(epoll_wait(et, &e, 1, 0), 1);		/* ET: once */
	CHECK_EQ(e.events, EPOLLHUP);
	CHECK_EQ(epoll_wait(et, &e, 1, 100), 0);
	CHECK_EQ(epoll_wait(ep_fd, &e, 1, 0), 1);	/* level: always */
	CHECK_EQ(e.events, EPOLLHUP);
	ax_expect_hup(fd_block);	/* and it stays so */
	CHECK_SYS(close(et));
	CHECK_SYS(close(ep_fd));
	CHECK_SYS(close(fd_block));
	CHECK_SYS(close(fd_nb));

	/* 2: completions still unreaped: they are gone with the context */
	ctx = ax_setup(8);
	fd_block = ax_fd(ctx, 0);
	ax_submit(ctx, 3, ptrs);
	ax_expect_avail(fd_block, ctx, 3);
	timed_destroy(ctx, "with 3 unreaped");
	ax_expect_hup(fd_block);
	CHECK_SYS(close(fd_block));

	/* 3: a request in flight (a poll of a pipe nobody writes) */
	ctx = ax_setup(8);
	fd_block = ax_fd(ctx, 0);
	CHECK_SYS(pipe2(pfd, O_CLOEXEC));
	ax_prep_poll(&cbs[0], pfd[0], POLLIN, 77);
	ax_submit(ctx, 1, ptrs);
	ax_expect_empty(fd_block);
	CHECK_EQ(pthread_create(&th[0], NULL, blocked_read, NULL), 0);
	pt_sleep_ms(200);
	timed_destroy(ctx, "with a poll in flight");
	pthread_join(th[0], NULL);
	CHECK_EQ(read_ret, 0);
	ax_expect_hup(fd_block);
	CHECK_SYS(close(pfd[0]));
	CHECK_SYS(close(pfd[1]));

	/* 4: a new context, maybe at the old one's address: the old object
	 * stays hung up, a new one follows the new context */
	ax_prep_pwrite(&cbs[0], file, data, sizeof(data), 0, 0);
	ctx2 = ax_setup(8);
	pt_diag("new context %s the destroyed one's address",
		ctx2 == ctx ? "at" : "not at");
	fd2 = ax_fd(ctx2, 0);
	ax_submit(ctx2, 2, ptrs);
	ax_expect_hup(fd_block);
	ax_expect_avail(fd2, ctx2, 2);
	CHECK_SYS(close(fd_block));

	/* 5: closed before the destroy: nothing left behind */
	fd_block = ax_fd(ctx2, 0);
	CHECK_SYS(close(fd_block));
	CHECK_SYS(close(fd2));
	timed_destroy(ctx2, "after close");
	CHECK_ERR(ax_fd_try(ctx2, 0), EINVAL);

	/* 6: destroyed right after a completion woke the object */
	for (int i = 0; i < 50; i++) {
		ctx = ax_setup(8);
		fd_block = ax_fd(ctx, 0);
		ax_submit(ctx, 1, ptrs);
		ax_destroy(ctx);
		ax_expect_hup(fd_block);
		CHECK_SYS(close(fd_block));
	}

	CHECK_SYS(close(file));
	return PT_PASS;
}
