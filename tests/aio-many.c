// SPDX-License-Identifier: MIT
/*
 * Many AIO objects on one context: 100 objects on one context all become
 * readable with one completion (one poll() of all of them, and one
 * epoll_wait, report all 100), all go quiet with one reap, and all hang
 * up with one io_destroy, whether some were closed before it or not.
 * Several contexts with objects of their own do not see each other's
 * completions.
 */
#include "lib/aio.h"

#include <sys/epoll.h>
#include <sys/resource.h>

PT_BUDGET(60);

enum { M = 100 };

static int fds[M];
static struct pollfd pfds[M];

/* One poll() of all M objects; returns how many show exactly want. */
static int poll_all(short want, int timeout_ms)
{
	int n, count = 0;

	for (int i = 0; i < M; i++) {
		pfds[i].fd = fds[i];
		pfds[i].events = POLLIN;
		pfds[i].revents = 0;
	}
	do
		n = poll(pfds, M, timeout_ms);
	while (n < 0 && errno == EINTR);
	CHECK_SYS(n);
	for (int i = 0; i < M; i++)
		if (pfds[i].revents == want && want)
			count++;
	return want ? count : n;
}

int main(void)
{
	static struct epoll_event evs[M + 1];
	static char data[64];
	struct epoll_event e;
	struct io_event ioev[4];
	struct iocb cb;
	aio_context_t ctx, other[4];
	int ep, file, ofd[4], n;

	ctx = ax_setup(8);
	file = ax_tmpfile("/tmp", 0);
	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	for (int i = 0; i < M; i++) {
		fds[i] = ax_fd(ctx, i % 2 ? POLLFS_NONBLOCK : 0);
		e.events = EPOLLIN;
		e.data.u32 = (uint32_t)i;
		CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &e));
	}
	/* other contexts, each with an object */
	for (int i = 0; i < 4; i++) {
		other[i] = ax_setup(4);
		ofd[i] = ax_fd(other[i], POLLFS_NONBLOCK);
	}

	CHECK_EQ(poll_all(0, 0), 0);
	CHECK_EQ(CHECK_SYS(epoll_wait(ep, evs, M + 1, 0)), 0);

	/* one completion: all M readable at once */
	ax_prep_pwrite(&cb, file, data, sizeof(data), 0, 1);
	ax_submit1(ctx, &cb);
	CHECK_EQ(poll_all(POLLIN, 0), M);
	n = CHECK_SYS(epoll_wait(ep, evs, M + 1, 0));
	CHECK_EQ(n, M);
	for (int i = 0; i < n; i++)
		CHECK_EQ(evs[i].events, EPOLLIN);
	for (int i = 0; i < M; i++)
		ax_expect_avail(fds[i], ctx, 1);
	for (int i = 0; i < 4; i++)
		ax_expect_empty(ofd[i]);

	/* one reap: all quiet */
	CHECK_EQ(ax_reap(ctx, 1, 4, ioev, 0), 1);
	CHECK_EQ(poll_all(0, 0), 0);
	CHECK_EQ(CHECK_SYS(epoll_wait(ep, evs, M + 1, 0)), 0);

	/* a completion on another context wakes only its own object */
	ax_submit1(other[2], &cb);
	for (int i = 0; i < 4; i++)
		if (i == 2)
			ax_expect_avail(ofd[i], other[i], 1);
		else
			ax_expect_empty(ofd[i]);
	CHECK_EQ(poll_all(0, 0), 0);

	/* a completion wakes a poll() asleep on all M */
	{
		struct ax_trigger t;

		ax_trigger_init(&t, ctx, AX_TRIGGER_PIPE, 100, 7);
		ax_trigger_start(&t);
		CHECK_EQ(poll_all(0, PT_WAIT_MS), M);
		CHECK(ax_trigger_fired(&t));
		ax_trigger_join(&t);
		for (int i = 0; i < M; i++)
			CHECK_EQ(pfds[i].revents, POLLIN);
		CHECK_EQ(ax_reap(ctx, 1, 4, ioev, 0), 1);
		ax_trigger_check(&t, &ioev[0]);
		ax_trigger_fini(&t);
	}

	/* close a third before the destroy; the rest hang up together */
	for (int i = 0; i < M; i += 3) {
		CHECK_SYS(close(fds[i]));
		fds[i] = -1;	/* poll ignores it */
	}
	ax_destroy(ctx);
	{
		int hups = 0;

		n = poll_all(0, 0);
		for (int i = 0; i < M; i++) {
			if (fds[i] < 0)
				continue;
			CHECK_EQ(pfds[i].revents, POLLHUP);
			hups++;
		}
		CHECK_EQ(n, hups);
		CHECK_EQ(CHECK_SYS(epoll_wait(ep, evs, M + 1, 0)), hups);
		for (int i = 0; i < hups; i++)
			CHECK_EQ(evs[i].events, EPOLLHUP);
	}
	for (int i = 0; i < M; i++) {
		if (fds[i] < 0)
			continue;
		ax_expect_hup(fds[i]);
		CHECK_SYS(close(fds[i]));
	}
	/* the other contexts live on */
	for (int i = 0; i < 4; i++) {
		if (i == 2)
			ax_expect_avail(ofd[i], other[i], 1);
		else
			ax_expect_empty(ofd[i]);
		ax_destroy(other[i]);
		ax_expect_hup(ofd[i]);
		CHECK_SYS(close(ofd[i]));
	}
	CHECK_SYS(close(ep));
	CHECK_SYS(close(file));
	return PT_PASS;
}
