// SPDX-License-Identifier: MIT
/*
 * Edge-triggered epoll (EPOLLET) reports an object once per new record,
 * for every kind of tests/lib/kinds.c, each a TEST: nothing before the
 * record is made; once for it, however long it waits unread; not for
 * its read, nor for taking what the read left (AIO's reap); again for
 * the next record.  EPOLLONESHOT reports once until EPOLL_CTL_MOD arms
 * it again, at once if the object is still readable then.
 *
 * And what only one kind does under it, each a TEST of its own:
 *  - signal: a new signal of the mask is a new edge while the first
 *    waits unread, a partial read is none, two signals queued before a
 *    read are one; under EPOLLONESHOT, one arriving while disarmed is
 *    not reported;
 *  - timer: re-armed without a read, the new expiry is reported once; a
 *    periodic timer read after each report is reported again, and one
 *    left unread is never reported more often than it expired (a
 *    level-triggered report, coming back at once, would be);
 *  - AIO: a second completion while the first waits unreaped is a new
 *    report, a batch completed by one io_submit is one, reaping partly
 *    or wholly is none; a batch completed together by one pipe write
 *    wakes a sleeping epoll_wait, and all of it is seen.
 */
#include "lib/aio.h"
#include "lib/kinds.h"
#include "lib/signal.h"
#include "lib/timer.h"

#include <sys/epoll.h>

PT_BUDGET(60);

#define TAG	0x5eed

/* An epoll set of fd alone, with events. */
static int epoll_of(int fd, uint32_t events)
{
	struct epoll_event e = { .events = events, .data.u64 = TAG };
	int ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));

	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	return ep;
}

static void rearm(int ep, int fd, uint32_t events)
{
	struct epoll_event e = { .events = events, .data.u64 = TAG };

	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &e));
}

/* The record made, read and checked. */
static void read_record(const struct pt_kind *k, int fd)
{
	char rec[2 * PT_KIND_REC_MAX] __attribute__((aligned(8)));

	CHECK_EQ(read(fd, rec, 2 * k->read_size), k->read_size);
	k->expect(rec);
}

static void read_and_take(const struct pt_kind *k, int fd)
{
	read_record(k, fd);
	if (k->take)
		k->take(fd);
}

static void once_per_record(const struct pt_kind *k)
{
	int dev, fd, ep;

	pt_kinds_prepare();
	dev = pt_dev();
	fd = pt_kind_new(k, dev, POLLFS_NONBLOCK);
	CHECK_SYS(close(dev));
	ep = epoll_of(fd, EPOLLIN | EPOLLET);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 0);

	/* once, however long the record waits unread */
	pt_kind_ready(k, fd);
	CHECK_EQ(pt_epoll_wait_one(ep, PT_WAIT_MS, TAG), 1);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 0);
	CHECK_EQ(pt_epoll_wait_one(ep, 200, TAG), 0);
	CHECK(pt_poll_in(fd, 0));	/* still ready, as poll says */

	/* reading it, and taking what the read left, make no edge */
	read_record(k, fd);
	CHECK_EQ(pt_epoll_wait_one(ep, 100, TAG), 0);
	if (k->take) {
		k->take(fd);
		CHECK_EQ(pt_epoll_wait_one(ep, 100, TAG), 0);
	}
	CHECK(!pt_poll_in(fd, 0));

	/* the next record is a new edge */
	pt_kind_ready(k, fd);
	CHECK_EQ(pt_epoll_wait_one(ep, PT_WAIT_MS, TAG), 1);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 0);
	read_and_take(k, fd);
	CHECK_EQ(pt_epoll_wait_one(ep, 100, TAG), 0);

	/* EPOLLONESHOT: once, until armed again */
	rearm(ep, fd, EPOLLIN | EPOLLONESHOT);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 0);
	pt_kind_ready(k, fd);
	CHECK_EQ(pt_epoll_wait_one(ep, PT_WAIT_MS, TAG), 1);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 0);
	rearm(ep, fd, EPOLLIN | EPOLLONESHOT);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 1);	/* still unread */
	read_and_take(k, fd);
	rearm(ep, fd, EPOLLIN | EPOLLONESHOT);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 0);

	CHECK_SYS(close(ep));
	CHECK_SYS(close(fd));
}

/* ---- signal ---- */

TEST(signal_new_signals_and_partial_reads)
{
	struct pollfs_siginfo psi[4];
	int ep, fd;

	ps_block(ps_bit(SIGUSR1) | ps_bit(SIGRTMIN));
	fd = ps_signal(ps_bit(SIGUSR1) | ps_bit(SIGRTMIN), POLLFS_NONBLOCK);
	ep = epoll_of(fd, EPOLLIN | EPOLLET);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(pt_epoll_wait_one(ep, PT_WAIT_MS, TAG), 1);

	/* a new signal is a new edge, the first still unread */
	CHECK_SYS(kill(getpid(), SIGRTMIN));
	CHECK_EQ(pt_epoll_wait_one(ep, PT_WAIT_MS, TAG), 1);
	CHECK_EQ(pt_epoll_wait_one(ep, 200, TAG), 0);

	/* partly read: no new report */
	CHECK_EQ(ps_read_one(fd, psi), 1);
	ps_check_sig(&psi[0], SIGUSR1, SI_USER);
	CHECK_EQ(pt_epoll_wait_one(ep, 200, TAG), 0);
	CHECK_EQ(ps_read_one(fd, psi), 1);
	ps_check_sig(&psi[0], SIGRTMIN, SI_USER);
	CHECK_EQ(pt_epoll_wait_one(ep, 100, TAG), 0);
	ps_expect_empty(fd);

	/* two queued while nothing was: one edge */
	CHECK_SYS(kill(getpid(), SIGRTMIN));
	CHECK_SYS(kill(getpid(), SIGRTMIN));
	CHECK_EQ(pt_epoll_wait_one(ep, PT_WAIT_MS, TAG), 1);
	CHECK_EQ(ps_read_n(fd, psi, 4), 2);
	CHECK_EQ(pt_epoll_wait_one(ep, 100, TAG), 0);

	/* EPOLLONESHOT: one arriving while disarmed is not reported, and
	 * both are there when it is armed again */
	rearm(ep, fd, EPOLLIN | EPOLLONESHOT);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(pt_epoll_wait_one(ep, PT_WAIT_MS, TAG), 1);
	CHECK_SYS(kill(getpid(), SIGRTMIN));
	CHECK_EQ(pt_epoll_wait_one(ep, 200, TAG), 0);
	rearm(ep, fd, EPOLLIN | EPOLLONESHOT);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 1);
	CHECK_EQ(ps_read_n(fd, psi, 4), 2);
	CHECK_SYS(close(ep));
	CHECK_SYS(close(fd));
}

/* ---- timer ---- */

TEST(timer_rearmed_unread_and_periodic)
{
	struct pollfs_timer_event ev;
	int64_t t0, period = MS(100);
	int ep, t, events;

	t = tmr_new(POLLFS_NONBLOCK);
	ep = epoll_of(t, EPOLLIN | EPOLLET);
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(20), 0);
	CHECK_EQ(pt_epoll_wait_one(ep, PT_WAIT_MS, TAG), 1);

	/* re-armed without reading: the new expiry is reported once */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(20), 0);
	CHECK_EQ(pt_epoll_wait_one(ep, PT_WAIT_MS, TAG), 1);
	CHECK_EQ(pt_epoll_wait_one(ep, 200, TAG), 0);
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	CHECK_EQ(pt_epoll_wait_one(ep, 100, TAG), 0);

	/* periodic, read after each report: the next expiry after a read is
	 * a new edge, reported again */
	t0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, period, period);
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(pt_epoll_wait_one(ep, PT_WAIT_MS, TAG), 1);
		tmr_read_event(t, &ev);
		CHECK(ev.expirations >= 1);
	}
	CHECK(pt_mono() - t0 >= 5 * period);

	/* periodic, not read: whether the expiries after the first are
	 * reported before the read is not specified (timerfd counts them
	 * only when read), but never more reports than expirations, which a
	 * level-triggered report, coming back at once, would exceed */
	tmr_disarm(t);
	t0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, period, period);
	CHECK_EQ(pt_epoll_wait_one(ep, PT_WAIT_MS, TAG), 1);
	for (events = 1; pt_mono() - t0 < MS(400) && events < 1000; )
		events += pt_epoll_wait_one(ep, 20, TAG);
	tmr_read_event(t, &ev);
	pt_diag("%d reports, %llu expirations in %lld ms", events,
		(unsigned long long)ev.expirations,
		(long long)((pt_mono() - t0) / NSEC_PER_MSEC));
	CHECK(ev.expirations >= (uint64_t)events);
	tmr_disarm(t);
	CHECK_SYS(close(t));
	CHECK_SYS(close(ep));
}

/* ---- AIO ---- */

enum { BATCH = 10 };

/* A context, its object in an edge-triggered epoll set, and BATCH
 * writes to submit. */
FIXTURE(aio) {
	aio_context_t ctx;
	int fd, file, ep;
	struct iocb cbs[BATCH], *ptrs[BATCH];
};

FIXTURE_SETUP(aio)
{
	static char data[64];

	self->ctx = ax_setup(64);
	self->fd = ax_fd(self->ctx, POLLFS_NONBLOCK);
	self->file = ax_tmpfile("/tmp", 0);
	self->ep = epoll_of(self->fd, EPOLLIN | EPOLLET);
	for (int i = 0; i < BATCH; i++) {
		ax_prep_pwrite(&self->cbs[i], self->file, data, sizeof(data),
			       0, i);
		self->ptrs[i] = &self->cbs[i];
	}
	CHECK_EQ(pt_epoll_wait_one(self->ep, 0, TAG), 0);
}

FIXTURE_TEARDOWN(aio)
{
	CHECK_SYS(close(self->ep));
	CHECK_SYS(close(self->fd));
	CHECK_SYS(close(self->file));
	ax_destroy(self->ctx);
}

/*
 * One scenario whose steps build on each other: each step's count of
 * available events is what the steps before it left unreaped.
 */
TEST_F(aio, aio_one_report_per_completion_batch)
{
	struct io_event ev[BATCH];
	aio_context_t ctx = self->ctx;
	int fd = self->fd, ep = self->ep;
	struct iocb **ptrs = self->ptrs;

	ax_submit(ctx, 1, ptrs);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 1);
	ax_expect_avail(fd, ctx, 1);

	/* a second completion, the first still unreaped: a new report */
	ax_submit(ctx, 1, ptrs);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 1);
	CHECK_EQ(pt_epoll_wait_one(ep, 200, TAG), 0);
	ax_expect_avail(fd, ctx, 2);

	/* a batch of BATCH completions in one io_submit: one report */
	ax_submit(ctx, BATCH, ptrs);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 1);
	CHECK_EQ(pt_epoll_wait_one(ep, 200, TAG), 0);
	ax_expect_avail(fd, ctx, 2 + BATCH);

	/* reaping, partly or wholly, is no edge */
	CHECK_EQ(ax_reap(ctx, 5, 5, ev, 0), 5);
	CHECK_EQ(pt_epoll_wait_one(ep, 100, TAG), 0);
	ax_expect_avail(fd, ctx, BATCH - 3);
	CHECK_EQ(ax_reap(ctx, BATCH - 3, BATCH, ev, 0), BATCH - 3);
	CHECK_EQ(pt_epoll_wait_one(ep, 100, TAG), 0);
	ax_expect_empty(fd);
}

TEST_F(aio, aio_async_poll_batch_wakes_sleeping_epoll)
{
	struct io_event ev[BATCH];
	aio_context_t ctx = self->ctx;
	int fd = self->fd, ep = self->ep, pfd[2];
	struct iocb *cbs = self->cbs, **ptrs = self->ptrs;

	/* BATCH poll iocbs on one pipe, completed asynchronously by one
	 * write, and the report wakes a sleeping epoll_wait */
	CHECK_SYS(pipe2(pfd, O_CLOEXEC));
	for (int i = 0; i < BATCH; i++)
		ax_prep_poll(&cbs[i], pfd[0], POLLIN, 100 + i);
	ax_submit(ctx, BATCH, ptrs);
	CHECK_EQ(pt_epoll_wait_one(ep, 100, TAG), 0);
	{
		struct ax_trigger t;

		/* only its thread is used: it writes to our pipe */
		memset(&t, 0, sizeof(t));
		t.mode = AX_TRIGGER_PIPE;
		t.delay_ms = 100;
		t.pipe[0] = pfd[0];
		t.pipe[1] = pfd[1];
		ax_trigger_start(&t);
		CHECK_EQ(pt_epoll_wait_one(ep, PT_WAIT_MS, TAG), 1);
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
		CHECK_RANGE(pt_epoll_wait_one(ep, 0, TAG), 0, 1);
		CHECK_EQ(pt_epoll_wait_one(ep, 200, TAG), 0);
	}
	CHECK_EQ(ax_reap(ctx, BATCH, BATCH, ev, 0), BATCH);
	for (int i = 0; i < BATCH; i++)
		CHECK(ax_pipe_poll_res(ev[i].res));
	ax_expect_empty(fd);

	CHECK_SYS(close(pfd[0]));
	CHECK_SYS(close(pfd[1]));
}

int main(void)
{
	pt_for_each_kind(k)
		pt_add_kind_test(k, "once_per_record", once_per_record);
	return pt_run_tests();
}
