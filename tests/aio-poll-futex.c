// SPDX-License-Identifier: MIT
/*
 * An IOCB_CMD_POLL of an armed futex object, completed by a FUTEX_WAKE
 * of its word, reaches the AIO object of the poll's context.  On 6.1 the
 * futex object is woken from a kprobe on futex_wake_mark(), and the
 * poll completes inline in that wake-up: the AIO object's hook on
 * aio_complete() runs inside a kprobe handler there, and a hook that
 * kprobes or ftrace skip as recursion (a kretprobe, an fprobe) would
 * lose that completion.
 */
#include "lib/aio.h"
#include "lib/futex.h"

#include <sys/epoll.h>

PT_BUDGET(120);

#define ROUNDS 50

static uint32_t word = 7;

int main(void)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLET };
	struct iocb cb;
	struct io_event ev;
	aio_context_t ctx;
	int fd, ep, futex;

	ctx = ax_setup(8);
	fd = ax_fd(ctx, POLLFS_NONBLOCK);
	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));

	for (int i = 0; i < ROUNDS; i++) {
		futex = fx_new(0);
		fx_arm(futex, &word, word, FX_PRIVATE);
		ax_prep_poll(&cb, futex, POLLIN, i);
		ax_submit1(ctx, &cb);
		ax_expect_empty(fd);
		CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
		if (CHECK_SYS(epoll_wait(ep, &e, 1, PT_WAIT_MS)) != 1)
			FAIL("round %d: the poll's completion did not wake the "
			     "AIO object", i);
		ax_expect_avail(fd, ctx, 1);
		CHECK_EQ(ax_reap(ctx, 1, 1, &ev, 0), 1);
		CHECK_EQ(ev.data, (uint64_t)i);
		CHECK_EQ(ev.res, (int64_t)POLLIN);
		CHECK_SYS(close(futex));
	}

	close(ep);
	close(fd);
	ax_destroy(ctx);
	return 0;
}
