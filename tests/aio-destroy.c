// SPDX-License-Identifier: MIT
/*
 * io_destroy(2) of a context while AIO objects on it are open: it returns
 * promptly (pollfs holds nothing that delays it), poll shows POLLHUP,
 * reads return 0 (blocking and non-blocking), and a blocking read, a poll
 * and an epoll_wait sleeping at the time all wake up.  The same with
 * completions still unreaped, with a request still in flight, and with a
 * new context taking the old one's address.  Closing afterwards, or
 * before the destroy, is clean.  Each case is a TEST of its own.
 */
#include "lib/aio.h"

#include <sys/epoll.h>

PT_BUDGET(90);

static char data[64];
static struct iocb cbs[4], *ptrs[4];
static int file;

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

TEST(sleepers_in_read_poll_and_epoll_wake_with_hup)
{
	struct epoll_event e;
	pthread_t th[3];
	aio_context_t ctx;
	int fd_nb, et;

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
}

/* Completions still unreaped are gone with the context. */
TEST(unreaped_completions_do_not_delay_it)
{
	aio_context_t ctx = ax_setup(8);

	fd_block = ax_fd(ctx, 0);
	ax_submit(ctx, 3, ptrs);
	ax_expect_avail(fd_block, ctx, 3);
	timed_destroy(ctx, "with 3 unreaped");
	ax_expect_hup(fd_block);
	CHECK_SYS(close(fd_block));
}

/* A request in flight: a poll of a pipe nobody writes. */
TEST(request_in_flight_and_a_sleeping_read)
{
	aio_context_t ctx = ax_setup(8);
	pthread_t th;
	int pfd[2];

	fd_block = ax_fd(ctx, 0);
	CHECK_SYS(pipe2(pfd, O_CLOEXEC));
	ax_prep_poll(&cbs[0], pfd[0], POLLIN, 77);
	ax_submit(ctx, 1, ptrs);
	ax_expect_empty(fd_block);
	CHECK_EQ(pthread_create(&th, NULL, blocked_read, NULL), 0);
	pt_sleep_ms(200);
	timed_destroy(ctx, "with a poll in flight");
	pthread_join(th, NULL);
	CHECK_EQ(read_ret, 0);
	ax_expect_hup(fd_block);
	CHECK_SYS(close(fd_block));
	CHECK_SYS(close(pfd[0]));
	CHECK_SYS(close(pfd[1]));
}

/* The old object stays hung up; a new one follows the new context. */
TEST(new_context_maybe_at_the_old_address)
{
	aio_context_t ctx = ax_setup(8), ctx2;
	int fd2;

	fd_block = ax_fd(ctx, 0);
	ax_destroy(ctx);
	ctx2 = ax_setup(8);
	pt_diag("new context %s the destroyed one's address",
		ctx2 == ctx ? "at" : "not at");
	fd2 = ax_fd(ctx2, 0);
	ax_submit(ctx2, 2, ptrs);
	ax_expect_hup(fd_block);
	ax_expect_avail(fd2, ctx2, 2);
	CHECK_SYS(close(fd_block));
	CHECK_SYS(close(fd2));
	ax_destroy(ctx2);
}

/* Closed before the destroy: nothing left behind. */
TEST(objects_closed_before_the_destroy)
{
	aio_context_t ctx = ax_setup(8);
	int fd2;

	fd_block = ax_fd(ctx, 0);
	fd2 = ax_fd(ctx, 0);
	ax_submit(ctx, 2, ptrs);
	ax_expect_avail(fd2, ctx, 2);
	CHECK_SYS(close(fd_block));
	CHECK_SYS(close(fd2));
	timed_destroy(ctx, "after close");
	CHECK_ERR(ax_fd_try(ctx, 0), EINVAL);
}

TEST(destroyed_right_after_a_completion_woke_it)
{
	for (int i = 0; i < 50; i++) {
		aio_context_t ctx = ax_setup(8);

		fd_block = ax_fd(ctx, 0);
		ax_submit(ctx, 1, ptrs);
		ax_destroy(ctx);
		ax_expect_hup(fd_block);
		CHECK_SYS(close(fd_block));
	}
}

int main(void)
{
	file = ax_tmpfile("/tmp", 0);
	for (int i = 0; i < 4; i++) {
		ax_prep_pwrite(&cbs[i], file, data, sizeof(data), 0, i);
		ptrs[i] = &cbs[i];
	}
	return pt_run_tests();
}
