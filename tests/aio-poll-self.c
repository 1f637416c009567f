// SPDX-License-Identifier: MIT
/*
 * An IOCB_CMD_POLL of the AIO object submitted to the object's own
 * context: the completion that makes the object readable completes the
 * poll too (a completion that causes a completion on the same ring), and
 * nothing hangs.  Also: a poll submitted while already readable completes
 * at once; several at once; two contexts each polling the other's object;
 * an epoll fd holding the object, polled through the same context (level
 * and edge-triggered); io_destroy and process exit with such polls
 * pending.  Each is a TEST of its own, on a context of its own.  The
 * budget fails the test if anything deadlocks.
 */
#include "lib/aio.h"

#include <sys/epoll.h>

PT_BUDGET(60);

static char data[64];
static int file;

/* Waits until read reports exactly n (never more), within PT_WAIT_MS. */
static void wait_avail(int fd, aio_context_t ctx, uint64_t n, const char *what)
{
	int64_t end = pt_mono() + MS(PT_WAIT_MS);
	struct pollfs_aio_event ev;

	for (;;) {
		CHECK(ax_revents(fd, POLLIN, PT_WAIT_MS) & POLLIN);
		CHECK_EQ(ax_read_rec(fd, &ev), AX_EVENT_SIZE);
		CHECK_EQ(ev.ctx, ctx);
		if (ev.available > n)
			FAIL("%s: %llu completions, expected %llu", what,
			     (unsigned long long)ev.available,
			     (unsigned long long)n);
		if (ev.available == n)
			return;
		if (pt_mono() > end)
			FAIL("%s: %llu of %llu completions within %d ms", what,
			     (unsigned long long)ev.available,
			     (unsigned long long)n, PT_WAIT_MS);
		pt_sleep_ms(2);
	}
}

/* Reaps n events: the writes with data < 100, the polls with >= 100. */
static void reap_check(aio_context_t ctx, int n, int polls)
{
	struct io_event ev[16];
	int got = 0, npoll = 0;

	while (got < n)
		got += (int)ax_reap(ctx, 1, n - got, ev + got, 0);
	for (int i = 0; i < n; i++) {
		if (ev[i].data >= 100) {
			npoll++;
			if (!ax_pipe_poll_res(ev[i].res))
				FAIL("poll iocb %llu: res %#llx, expected "
				     "POLLIN", (unsigned long long)ev[i].data,
				     (unsigned long long)ev[i].res);
		} else if (ev[i].res != (int64_t)sizeof(data)) {
			FAIL("write %llu: res %lld",
			     (unsigned long long)ev[i].data,
			     (long long)ev[i].res);
		}
	}
	CHECK_EQ(npoll, polls);
}

static void submit_write(aio_context_t ctx, uint64_t id)
{
	struct iocb cb;

	ax_prep_pwrite(&cb, file, data, sizeof(data), 0, id);
	ax_submit1(ctx, &cb);
}

static void submit_poll(aio_context_t ctx, int fd, uint64_t id)
{
	struct iocb cb;

	ax_prep_poll(&cb, fd, POLLIN, id);
	ax_submit1(ctx, &cb);
}

static int exit_with_self_poll(void *unused)
{
	aio_context_t ctx = ax_setup(8);
	int fd = ax_fd(ctx, 0), ep;
	struct epoll_event e = { .events = EPOLLIN };

	(void)unused;
	submit_poll(ctx, fd, 100);
	ep = CHECK_SYS(epoll_create1(0));
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	submit_poll(ctx, ep, 101);
	/* the iocbs hold the files; close our fds so they alone do */
	CHECK_SYS(close(fd));
	CHECK_SYS(close(ep));
	return PT_PASS;
}

/* A fresh context of 32 and its O_NONBLOCK object. */
static aio_context_t setup(int *fd)
{
	aio_context_t ctx = ax_setup(32);

	*fd = ax_fd(ctx, POLLFS_NONBLOCK);
	return ctx;
}

/* Submitted while empty: pending; a write completes both. */
TEST(pending_self_poll_completes_with_a_write)
{
	int fd;
	aio_context_t ctx = setup(&fd);

	submit_poll(ctx, fd, 100);
	ax_expect_empty(fd);
	CHECK_EQ(ax_revents(fd, POLLIN, 100), 0);
	submit_write(ctx, 1);
	wait_avail(fd, ctx, 2, "write + self poll");
	reap_check(ctx, 2, 1);
	ax_expect_empty(fd);
}

/* Submitted while readable: completes inside io_submit. */
TEST(self_poll_while_readable_completes_at_once)
{
	int fd;
	aio_context_t ctx = setup(&fd);

	submit_write(ctx, 2);
	submit_poll(ctx, fd, 101);
	ax_expect_avail(fd, ctx, 2);
	reap_check(ctx, 2, 1);
}

/* Eight pending polls of the object, one write. */
TEST(eight_self_polls_complete_with_one_write)
{
	int fd;
	aio_context_t ctx = setup(&fd);

	for (int i = 0; i < 8; i++)
		submit_poll(ctx, fd, 110 + i);
	ax_expect_empty(fd);
	submit_write(ctx, 3);
	wait_avail(fd, ctx, 9, "write + 8 self polls");
	reap_check(ctx, 9, 8);
}

/* Two contexts, each polling the other's object, both ways round. */
TEST(two_contexts_polling_each_others_object)
{
	int fd, fd2;
	aio_context_t ctx = setup(&fd), ctx2 = setup(&fd2);

	for (int round = 0; round < 2; round++) {
		submit_poll(ctx, fd2, 120);
		submit_poll(ctx2, fd, 121);
		ax_expect_empty(fd);
		ax_expect_empty(fd2);
		submit_write(round ? ctx2 : ctx, 4);
		/* one write and one poll on one ring, one poll on the other */
		wait_avail(fd, ctx, round ? 1 : 2, "crossed polls, ctx");
		wait_avail(fd2, ctx2, round ? 2 : 1, "crossed polls, ctx2");
		reap_check(ctx, round ? 1 : 2, 1);
		reap_check(ctx2, round ? 2 : 1, 1);
	}
}

/* An epoll fd holding the object, polled through the same context. */
static void check_epoll_poll(bool et)
{
	struct epoll_event e;
	int fd, ep;
	aio_context_t ctx = setup(&fd);

	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	e.events = EPOLLIN | (et ? EPOLLET : 0);
	e.data.u64 = 0;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	submit_poll(ctx, ep, 130);
	ax_expect_empty(fd);
	CHECK_EQ(ax_revents(ep, POLLIN, 100), 0);
	submit_write(ctx, 5);
	wait_avail(fd, ctx, 2, et ? "epoll ET poll" : "epoll poll");
	reap_check(ctx, 2, 1);
	ax_expect_empty(fd);
	CHECK_SYS(close(ep));
}

TEST(epoll_fd_holding_it_polled_through_its_context)
{
	check_epoll_poll(false);
}

TEST(edge_triggered_epoll_fd_polled_through_its_context)
{
	check_epoll_poll(true);
}

/*
 * io_destroy with a poll of the object, and one of an epoll fd holding
 * it, pending in the same context; another context's poll of the object
 * completes with the hang-up.
 */
TEST(io_destroy_with_self_polls_pending)
{
	struct epoll_event e = { .events = EPOLLIN };
	int fd, fd2, ep;
	aio_context_t ctx = setup(&fd), ctx2 = setup(&fd2);
	struct io_event ev;
	int64_t t0;

	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	submit_poll(ctx, fd, 140);
	submit_poll(ctx, ep, 141);
	submit_poll(ctx2, fd, 142);
	t0 = pt_mono();
	ax_destroy(ctx);
	CHECK(pt_mono() - t0 < MS(2000));
	ax_expect_hup(fd);
	wait_avail(fd2, ctx2, 1, "poll of a destroyed context's object");
	CHECK_EQ(ax_reap(ctx2, 1, 1, &ev, 0), 1);
	CHECK_EQ(ev.data, 142);
	CHECK(ev.res & POLLHUP);
	CHECK_SYS(close(ep));
	CHECK_SYS(close(fd));
	CHECK_SYS(close(fd2));
	ax_destroy(ctx2);
}

/* A process exits with such polls pending, their fds closed. */
TEST(exit_with_self_polls_pending)
{
	for (int i = 0; i < 5; i++)
		CHECK_EQ(pt_run_child(exit_with_self_poll, NULL, 20000),
			 PT_PASS);
}

int main(void)
{
	int ret;

	file = ax_tmpfile("/tmp", 0);
	ret = pt_run_tests();
	CHECK_SYS(close(file));
	return ret;
}
