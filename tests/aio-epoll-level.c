// SPDX-License-Identifier: MIT
/*
 * Level-triggered epoll reports the AIO object at every epoll_wait while
 * completions wait unreaped, and stops once they are reaped; with
 * EPOLLONESHOT, once per arming.
 */
#include "lib/aio.h"

#include <sys/epoll.h>

PT_BUDGET(60);

static int wait_one(int ep, int timeout_ms)
{
	struct epoll_event e[2];
	int n = CHECK_SYS(epoll_wait(ep, e, 2, timeout_ms));

	if (n) {
		CHECK_EQ(n, 1);
		CHECK_EQ(e[0].events, EPOLLIN);
		CHECK_EQ(e[0].data.u64, 0x5eed);
	}
	return n;
}

int main(void)
{
	static char data[128];
	struct iocb cbs[8], *ptrs[8];
	struct io_event ev[8];
	struct epoll_event e = { .events = EPOLLIN, .data.u64 = 0x5eed };
	aio_context_t ctx;
	int fd, file, ep, ep1;

	ctx = ax_setup(16);
	fd = ax_fd(ctx, POLLFS_NONBLOCK);
	file = ax_tmpfile("/tmp", 0);
	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	ep1 = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	e.events = EPOLLIN | EPOLLONESHOT;
	CHECK_SYS(epoll_ctl(ep1, EPOLL_CTL_ADD, fd, &e));
	for (int i = 0; i < 8; i++) {
		ax_prep_pwrite(&cbs[i], file, data, sizeof(data),
			       i * (off_t)sizeof(data), i);
		ptrs[i] = &cbs[i];
	}

	CHECK_EQ(wait_one(ep, 0), 0);
	CHECK_EQ(wait_one(ep, 100), 0);
	CHECK_EQ(wait_one(ep1, 0), 0);

	ax_submit(ctx, 3, ptrs);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(wait_one(ep, 0), 1);
	CHECK_EQ(wait_one(ep1, 0), 1);
	CHECK_EQ(wait_one(ep1, 100), 0);	/* one-shot: disarmed */
	ax_expect_avail(fd, ctx, 3);
	CHECK_EQ(wait_one(ep, 0), 1);		/* reading reaped nothing */

	/* reaping some leaves it readable; reaping all ends it */
	CHECK_EQ(ax_reap(ctx, 2, 2, ev, 0), 2);
	CHECK_EQ(wait_one(ep, 0), 1);
	ax_expect_avail(fd, ctx, 1);
	CHECK_EQ(ax_reap(ctx, 1, 8, ev, 0), 1);
	ax_check_event(&ev[0], 2, sizeof(data));
	CHECK_EQ(wait_one(ep, 0), 0);
	CHECK_EQ(wait_one(ep, 100), 0);

	/* re-armed one-shot with nothing pending: quiet until a completion */
	CHECK_SYS(epoll_ctl(ep1, EPOLL_CTL_MOD, fd, &e));
	CHECK_EQ(wait_one(ep1, 100), 0);
	ax_submit(ctx, 1, ptrs);
	CHECK_EQ(wait_one(ep1, 0), 1);
	CHECK_EQ(wait_one(ep1, 0), 0);
	CHECK_EQ(wait_one(ep, 0), 1);
	/* re-armed while still readable: reported again at once */
	CHECK_SYS(epoll_ctl(ep1, EPOLL_CTL_MOD, fd, &e));
	CHECK_EQ(wait_one(ep1, 0), 1);
	CHECK_EQ(ax_reap(ctx, 1, 8, ev, 0), 1);
	CHECK_EQ(wait_one(ep, 0), 0);
	ax_expect_empty(fd);

	CHECK_SYS(close(ep1));
	CHECK_SYS(close(ep));
	CHECK_SYS(close(fd));
	CHECK_SYS(close(file));
	ax_destroy(ctx);
	return PT_PASS;
}
