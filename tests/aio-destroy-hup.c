// SPDX-License-Identifier: MIT
/*
 * io_destroy(2) racing completions: the hang-up reaches a watcher that
 * asked for nothing but EPOLLHUP (epoll reports it whatever the events),
 * however the last completion's wake-up and the context's death
 * interleave.  A thread completes reads of /dev/zero on the context as
 * fast as it can while the main thread destroys it after a random delay;
 * each round, epoll must then report EPOLLHUP within a second.  (A wake
 * that a completion had queued could run after the death, with EPOLLIN as
 * its key, which such a watcher ignores: the hang-up was lost.)
 */
#include "lib/aio.h"

#include <sys/epoll.h>

PT_BUDGET(60);

struct completer {
	aio_context_t ctx;
	int zero;
	_Atomic int stop;
	long done;
};

static void *complete_reads(void *arg)
{
	struct completer *c = arg;
	struct io_event ev[8];
	struct iocb cb, *cbs[1] = { &cb };
	char buf[8];

	while (!c->stop) {
		ax_prep_pread(&cb, c->zero, buf, sizeof(buf), 0, 0);
		if (ax_sys_submit(c->ctx, 1, cbs) != 1)
			break;		/* the context is gone */
		c->done++;
		if (ax_sys_getevents(c->ctx, 0, 8, ev, NULL) < 0)
			break;
	}
	return NULL;
}

int main(void)
{
	int64_t until = pt_mono() + MS(4000) * pt_time_scale();
	struct epoll_event ev = { .events = 0 };
	long rounds = 0, completions = 0;
	struct completer c;
	pthread_t thr;
	int ep, fd;

	c.zero = CHECK_SYS(open("/dev/zero", O_RDONLY | O_CLOEXEC));
	srandom(getpid());
	while (pt_mono() < until) {
		c.ctx = ax_setup(8);
		c.stop = 0;
		c.done = 0;
		fd = ax_fd(c.ctx, 0);
		ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
		ev.events = 0;		/* EPOLLHUP alone */
		CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));

		CHECK_EQ(pthread_create(&thr, NULL, complete_reads, &c), 0);
		pt_sleep_ns(US(random() % 2000));
		CHECK_SYS(ax_sys_destroy(c.ctx));
		c.stop = 1;
		CHECK_EQ(pthread_join(thr, NULL), 0);

		if (epoll_wait(ep, &ev, 1, 1000 * pt_time_scale()) != 1)
			FAIL("round %ld: no EPOLLHUP within 1 s of io_destroy "
			     "(after %ld completions)", rounds, c.done);
		CHECK(ev.events & EPOLLHUP);
		ax_expect_hup(fd);
		CHECK_SYS(close(ep));
		CHECK_SYS(close(fd));
		completions += c.done;
		rounds++;
	}
	pt_diag("%ld rounds, %ld completions", rounds, completions);
	CHECK(rounds >= 20);
	return PT_PASS;
}
