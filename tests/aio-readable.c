// SPDX-License-Identifier: MIT
/*
 * POLLIN exactly while the completion ring holds unreaped completions:
 * none before a submit; after a buffered write completes, poll, select
 * and epoll show it, and reads report {ctx, 1} without reaping (a second
 * read reports the same); io_getevents reaps it, and then nothing is
 * readable and a non-blocking read gives EAGAIN.
 */
#include "lib/aio.h"

#include <sys/epoll.h>
#include <sys/select.h>

PT_BUDGET(60);

static int epoll_count(int ep, int timeout_ms)
{
	struct epoll_event e[4];
	int n = CHECK_SYS(epoll_wait(ep, e, 4, timeout_ms));

	if (n) {
		CHECK_EQ(n, 1);
		CHECK_EQ(e[0].events, EPOLLIN);
		CHECK_EQ(e[0].data.u64, 7);
	}
	return n;
}

static bool select_readable(int fd)
{
	struct timeval tv = { 0, 0 };
	fd_set r;

	FD_ZERO(&r);
	FD_SET(fd, &r);
	return CHECK_SYS(select(fd + 1, &r, NULL, NULL, &tv)) == 1 &&
	       FD_ISSET(fd, &r);
}

int main(void)
{
	static char data[512];
	struct pollfs_aio_event evs[4];
	struct io_event ioev[4];
	struct epoll_event e;
	struct iocb cb;
	aio_context_t ctx;
	int fd, file, ep;

	ctx = ax_setup(16);
	fd = ax_fd(ctx, 0);
	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	e.events = EPOLLIN;
	e.data.u64 = 7;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	file = ax_tmpfile("/tmp", 0);
	memset(data, 'x', sizeof(data));

	/* nothing submitted: nothing to report */
	ax_expect_empty(fd);
	CHECK(!select_readable(fd));
	CHECK_EQ(epoll_count(ep, 0), 0);

	for (int round = 0; round < 3; round++) {
		/* a buffered write on tmpfs completes inside io_submit */
		ax_prep_pwrite(&cb, file, data, sizeof(data),
			       round * (off_t)sizeof(data), 100 + round);
		ax_submit1(ctx, &cb);

		CHECK_EQ(ax_revents(fd, POLLIN | POLLOUT | POLLPRI, 0),
			 POLLIN);
		CHECK(select_readable(fd));
		CHECK_EQ(epoll_count(ep, 0), 1);
		CHECK_EQ(epoll_count(ep, 0), 1);	/* level-triggered */

		/* reading does not reap */
		ax_expect_avail(fd, ctx, 1);
		ax_expect_avail(fd, ctx, 1);
		/* a larger buffer still gets one record */
		CHECK_EQ(read(fd, evs, sizeof(evs)), AX_EVENT_SIZE);
		CHECK_EQ(evs[0].ctx, ctx);
		CHECK_EQ(evs[0].available, 1);
		CHECK_EQ(ax_ring(ctx)->tail - ax_ring(ctx)->head, 1);

		/* io_getevents reaps it, exactly as without pollfs */
		CHECK_EQ(ax_reap(ctx, 1, 4, ioev, 0), 1);
		ax_check_event(&ioev[0], 100 + round, sizeof(data));
		CHECK_EQ(ioev[0].obj, (uint64_t)(uintptr_t)&cb);

		ax_expect_empty(fd);
		CHECK(!select_readable(fd));
		CHECK_EQ(epoll_count(ep, 0), 0);
		/* nor does it come back by itself */
		CHECK_EQ(epoll_count(ep, 100), 0);
		ax_expect_empty(fd);
	}

	/* the same through an O_NONBLOCK object */
	{
		int nb = ax_fd(ctx, POLLFS_NONBLOCK);

		CHECK_ERR(read(nb, evs, sizeof(evs)), EAGAIN);
		ax_prep_pwrite(&cb, file, data, 16, 0, 9);
		ax_submit1(ctx, &cb);
		ax_expect_avail(nb, ctx, 1);
		ax_expect_avail(fd, ctx, 1);
		CHECK_EQ(ax_reap(ctx, 1, 4, ioev, 0), 1);
		ax_check_event(&ioev[0], 9, 16);
		CHECK_ERR(read(nb, evs, sizeof(evs)), EAGAIN);
		ax_expect_empty(fd);
		CHECK_SYS(close(nb));
	}

	CHECK_SYS(close(ep));
	CHECK_SYS(close(fd));
	CHECK_SYS(close(file));
	ax_destroy(ctx);
	return PT_PASS;
}
