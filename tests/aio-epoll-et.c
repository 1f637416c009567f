// SPDX-License-Identifier: MIT
/*
 * Edge-triggered epoll (EPOLLET) reports the AIO object once per new
 * batch of completions: once for one completion however long it waits
 * unreaped, once more for each later completion or batch (submitted in
 * one io_submit, or completed together by one pipe write), and never for
 * a read or a reap, which add no completion.
 *
 * Two TESTs: the synchronous completions are one scenario whose steps
 * build on each other (each step's count of available events is what
 * the steps before it left unreaped); the pipe-driven batch is its own.
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
	}
	return n;
}

enum { BATCH = 10 };

struct setup {
	aio_context_t ctx;
	int fd, file, ep;
	struct iocb cbs[BATCH], *ptrs[BATCH];
};

static void setup(struct setup *st)
{
	static char data[64];
	struct epoll_event e = { .events = EPOLLIN | EPOLLET };

	st->ctx = ax_setup(64);
	st->fd = ax_fd(st->ctx, POLLFS_NONBLOCK);
	st->file = ax_tmpfile("/tmp", 0);
	st->ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	CHECK_SYS(epoll_ctl(st->ep, EPOLL_CTL_ADD, st->fd, &e));
	for (int i = 0; i < BATCH; i++) {
		ax_prep_pwrite(&st->cbs[i], st->file, data, sizeof(data), 0, i);
		st->ptrs[i] = &st->cbs[i];
	}
	CHECK_EQ(wait_one(st->ep, 0), 0);
}

static void teardown(struct setup *st)
{
	CHECK_SYS(close(st->ep));
	CHECK_SYS(close(st->fd));
	CHECK_SYS(close(st->file));
	ax_destroy(st->ctx);
}

TEST(one_report_per_completion_batch)
{
	static struct setup st;
	struct io_event ev[BATCH];
	aio_context_t ctx;
	int fd, ep;
	struct iocb **ptrs = st.ptrs;

	setup(&st);
	ctx = st.ctx;
	fd = st.fd;
	ep = st.ep;
	/* one completion: one report, however long it waits unreaped */
	ax_submit(ctx, 1, ptrs);
	CHECK_EQ(wait_one(ep, 0), 1);
	CHECK_EQ(wait_one(ep, 0), 0);
	CHECK_EQ(wait_one(ep, 200), 0);
	CHECK(ax_revents(fd, POLLIN, 0) == POLLIN);	/* still readable */

	/* reading reaps nothing and adds no completion: no new report */
	ax_expect_avail(fd, ctx, 1);
	CHECK_EQ(wait_one(ep, 100), 0);

	/* a second completion, the first still unreaped: a new report */
	ax_submit(ctx, 1, ptrs);
	CHECK_EQ(wait_one(ep, 0), 1);
	CHECK_EQ(wait_one(ep, 200), 0);
	ax_expect_avail(fd, ctx, 2);

	/* a batch of BATCH completions in one io_submit: one report */
	ax_submit(ctx, BATCH, ptrs);
	CHECK_EQ(wait_one(ep, 0), 1);
	CHECK_EQ(wait_one(ep, 200), 0);
	ax_expect_avail(fd, ctx, 2 + BATCH);

	/* reaping, partly or wholly, is no edge */
	CHECK_EQ(ax_reap(ctx, 5, 5, ev, 0), 5);
	CHECK_EQ(wait_one(ep, 100), 0);
	ax_expect_avail(fd, ctx, BATCH - 3);
	CHECK_EQ(ax_reap(ctx, BATCH - 3, BATCH, ev, 0), BATCH - 3);
	CHECK_EQ(wait_one(ep, 100), 0);
	ax_expect_empty(fd);

	/* a completion after everything was reaped: reported again */
	ax_submit(ctx, 1, ptrs);
	CHECK_EQ(wait_one(ep, 0), 1);
	CHECK_EQ(wait_one(ep, 100), 0);
	CHECK_EQ(ax_reap(ctx, 1, BATCH, ev, 0), 1);

	teardown(&st);
}

TEST(async_poll_batch_wakes_sleeping_epoll)
{
	static struct setup st;
	struct io_event ev[BATCH];
	aio_context_t ctx;
	int fd, ep, pfd[2];
	struct iocb *cbs = st.cbs, **ptrs = st.ptrs;

	setup(&st);
	ctx = st.ctx;
	fd = st.fd;
	ep = st.ep;
	/* BATCH poll iocbs on one pipe, completed asynchronously by one
	 * write, and the report wakes a sleeping epoll_wait */
	CHECK_SYS(pipe2(pfd, O_CLOEXEC));
	for (int i = 0; i < BATCH; i++)
		ax_prep_poll(&cbs[i], pfd[0], POLLIN, 100 + i);
	ax_submit(ctx, BATCH, ptrs);
	CHECK_EQ(wait_one(ep, 100), 0);
	{
		struct ax_trigger t;

		/* only its thread is used: it writes to our pipe */
		memset(&t, 0, sizeof(t));
		t.mode = AX_TRIGGER_PIPE;
		t.delay_ms = 100;
		t.pipe[0] = pfd[0];
		t.pipe[1] = pfd[1];
		ax_trigger_start(&t);
		CHECK_EQ(wait_one(ep, PT_WAIT_MS), 1);
		CHECK(ax_trigger_fired(&t));
		ax_trigger_join(&t);
	}
	/* all BATCH complete, eventually; those after the report just
	 * consumed, if any, make one more report between them all */
	{
		int64_t end = pt_mono() + MS(PT_WAIT_MS);
		struct pollfs_aio_event pev;

		for (;;) {
			CHECK_EQ(ax_read_rec(fd, &pev), AX_EVENT_SIZE);
			CHECK_RANGE(pev.available, 1, BATCH);
			if (pev.available == BATCH)
				break;
			if (pt_mono() > end)
				FAIL("only %llu of %d poll completions",
				     (unsigned long long)pev.available, BATCH);
			pt_sleep_ms(5);
		}
		CHECK_RANGE(wait_one(ep, 0), 0, 1);
		CHECK_EQ(wait_one(ep, 200), 0);
	}
	CHECK_EQ(ax_reap(ctx, BATCH, BATCH, ev, 0), BATCH);
	for (int i = 0; i < BATCH; i++)
		CHECK(ax_pipe_poll_res(ev[i].res));
	ax_expect_empty(fd);

	CHECK_SYS(close(pfd[0]));
	CHECK_SYS(close(pfd[1]));
	teardown(&st);
}

int main(void)
{
	return pt_run_tests();
}
