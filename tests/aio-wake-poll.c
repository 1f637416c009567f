// SPDX-License-Identifier: MIT
/*
 * A completion wakes poll, select and epoll_wait sleeping on the AIO
 * object, whatever completes it: a buffered write submitted by another
 * thread, a pending IOCB_CMD_POLL completed by a pipe write, or an fsync
 * completed from a workqueue.  The sleeper wakes only after the
 * completion was caused, and sees exactly one.
 */
#include "lib/aio.h"

#include <sys/epoll.h>
#include <sys/select.h>

PT_BUDGET(120);

enum { W_POLL, W_SELECT, W_EPOLL, W_EPOLL_ET, W_KINDS };
static const char *const wname[] = { "poll", "select", "epoll", "epoll ET" };

/* Sleeps up to PT_WAIT_MS until fd is readable by waiter kind w. */
static bool wait_readable(int kind, int fd, int ep, int epet)
{
	switch (kind) {
	case W_POLL:
		return ax_revents(fd, POLLIN, PT_WAIT_MS) == POLLIN;
	case W_SELECT: {
		struct timeval tv = { PT_WAIT_MS / 1000, 0 };
		fd_set r;
		int n;

		FD_ZERO(&r);
		FD_SET(fd, &r);
		n = CHECK_SYS(select(fd + 1, &r, NULL, NULL, &tv));
		return n == 1 && FD_ISSET(fd, &r);
	}
	default: {
		struct epoll_event e[2];
		int n = CHECK_SYS(epoll_wait(kind == W_EPOLL ? ep : epet, e, 2,
					     PT_WAIT_MS));

		if (n)
			CHECK_EQ(e[0].events, EPOLLIN);
		return n == 1;
	}
	}
}

int main(void)
{
	struct ax_trigger t;
	struct io_event ev[4];
	struct epoll_event e = { .events = EPOLLIN };
	aio_context_t ctx;
	int fd, ep, epet;

	ctx = ax_setup(16);
	fd = ax_fd(ctx, 0);
	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	epet = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	e.events = EPOLLIN | EPOLLET;
	CHECK_SYS(epoll_ctl(epet, EPOLL_CTL_ADD, fd, &e));

	for (int mode = 0; mode < AX_TRIGGER_MODES; mode++) {
		for (int w = 0; w < W_KINDS; w++) {
			uint64_t data = (uint64_t)(mode * 16 + w);
			int64_t t0;

			ax_expect_empty(fd);
			ax_trigger_init(&t, ctx, mode, 150, data);
			ax_expect_empty(fd);
			t0 = pt_mono();
			ax_trigger_start(&t);
			if (!wait_readable(w, fd, ep, epet))
				FAIL("%s: %s not woken by a completion within "
				     "%d ms", ax_trigger_name(mode), wname[w],
				     PT_WAIT_MS);
			if (!ax_trigger_fired(&t))
				FAIL("%s: %s woke before the completion was "
				     "caused", ax_trigger_name(mode), wname[w]);
			pt_diag("%s woken by %s after %lld ms", wname[w],
				ax_trigger_name(mode),
				(long long)((pt_mono() - t0) / NSEC_PER_MSEC));
			ax_trigger_join(&t);
			ax_expect_avail(fd, ctx, 1);
			CHECK_EQ(ax_reap(ctx, 1, 4, ev, 0), 1);
			ax_trigger_check(&t, &ev[0]);
			ax_trigger_fini(&t);
			ax_expect_empty(fd);
			/* drain the edge-triggered set's report, if any */
			{
				struct epoll_event x[2];

				CHECK_SYS(epoll_wait(epet, x, 2, 0));
			}
		}
	}

	CHECK_SYS(close(epet));
	CHECK_SYS(close(ep));
	CHECK_SYS(close(fd));
	ax_destroy(ctx);
	return PT_PASS;
}
