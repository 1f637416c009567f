// SPDX-License-Identifier: MIT
/*
 * Level-triggered epoll reports an object while a record is ready, for
 * every kind of tests/lib/kinds.c, each a TEST: not before the record
 * is made; at every epoll_wait until it is taken (read, and for AIO,
 * whose read takes nothing, reaped), and not after; a sleeping
 * epoll_wait is woken by it.  With EPOLLONESHOT, once per arming: armed
 * again with nothing ready, quiet until the next record; armed again
 * while readable, reported at once.
 *
 * And what only one kind does under it, each a TEST of its own:
 *  - signal: with two queued and one read, still reported; a signal
 *    outside the mask is never reported, nor wakes a sleeping
 *    epoll_wait;
 *  - timer: not reported before it expires, and an unarmed timer in the
 *    same set never;
 *  - AIO: reaping some of the completions leaves it readable, reaping
 *    them all ends it.
 */
#include "lib/aio.h"
#include "lib/kinds.h"
#include "lib/signal.h"
#include "lib/timer.h"

#include <sys/epoll.h>

PT_BUDGET(60);

#define TAG	7

static void add(int ep, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event e = { .events = events, .data.u64 = tag };

	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
}

/* An epoll set of fd alone, with events. */
static int epoll_of(int fd, uint32_t events)
{
	int ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));

	add(ep, fd, events, TAG);
	return ep;
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

/* The thread that makes the record once the main one sleeps in
 * epoll_wait. */
struct maker {
	const struct pt_kind *k;
	int fd;
	pid_t waiter;
};

static void *make_after_wait(void *arg)
{
	const struct maker *m = arg;

	ps_wait_in_syscall(getpid(), m->waiter, PT_SYS_EPOLL_WAIT,
			   SYS_epoll_pwait);
	pt_kind_ready(m->k, m->fd);
	return NULL;
}

static void until_taken(const struct pt_kind *k)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLONESHOT,
				 .data.u64 = TAG };
	struct maker m = { .k = k, .waiter = ps_gettid() };
	int dev, fd, ep, ep1;
	pthread_t t;

	pt_kinds_prepare();
	dev = pt_dev();
	fd = pt_kind_new(k, dev, POLLFS_NONBLOCK);
	CHECK_SYS(close(dev));
	ep = epoll_of(fd, EPOLLIN);
	ep1 = epoll_of(fd, EPOLLIN | EPOLLONESHOT);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 0);
	CHECK_EQ(pt_epoll_wait_one(ep, 100, TAG), 0);
	CHECK_EQ(pt_epoll_wait_one(ep1, 0, TAG), 0);

	/* at every wait until taken; one-shot: once */
	pt_kind_ready(k, fd);
	CHECK_EQ(pt_epoll_wait_one(ep, PT_WAIT_MS, TAG), 1);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 1);
	CHECK_EQ(pt_epoll_wait_one(ep, 100, TAG), 1);
	CHECK_EQ(pt_epoll_wait_one(ep1, 0, TAG), 1);
	CHECK_EQ(pt_epoll_wait_one(ep1, 100, TAG), 0);	/* one-shot: disarmed */
	read_record(k, fd);
	/* a read that takes nothing: still reported, until taken */
	if (k->read_peeks)
		CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 1);
	if (k->take)
		k->take(fd);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 0);
	CHECK_EQ(pt_epoll_wait_one(ep, 100, TAG), 0);

	/* one-shot armed again with nothing ready: quiet until a record */
	CHECK_SYS(epoll_ctl(ep1, EPOLL_CTL_MOD, fd, &e));
	CHECK_EQ(pt_epoll_wait_one(ep1, 100, TAG), 0);
	pt_kind_ready(k, fd);
	CHECK_EQ(pt_epoll_wait_one(ep1, PT_WAIT_MS, TAG), 1);
	CHECK_EQ(pt_epoll_wait_one(ep1, 0, TAG), 0);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 1);
	/* armed again while readable: reported again at once */
	CHECK_SYS(epoll_ctl(ep1, EPOLL_CTL_MOD, fd, &e));
	CHECK_EQ(pt_epoll_wait_one(ep1, 0, TAG), 1);
	read_and_take(k, fd);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 0);

	/* a sleeping epoll_wait woken */
	m.fd = fd;
	CHECK_EQ(pthread_create(&t, NULL, make_after_wait, &m), 0);
	CHECK_EQ(pt_epoll_wait_one(ep, PT_WAIT_MS, TAG), 1);
	ps_join(t);
	read_and_take(k, fd);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 0);

	CHECK_SYS(close(ep1));
	CHECK_SYS(close(ep));
	CHECK_SYS(close(fd));
}

/* ---- signal ---- */

static pid_t main_tid;

static void *send_after_wait(void *arg)
{
	int sig = (int)(intptr_t)arg;

	ps_wait_in_syscall(getpid(), main_tid, PT_SYS_EPOLL_WAIT,
			   SYS_epoll_pwait);
	CHECK_SYS(kill(getpid(), sig));
	return NULL;
}

TEST(signal_queued_and_outside_the_mask)
{
	struct pollfs_siginfo psi[4];
	pthread_t t;
	int ep, fd;

	main_tid = ps_gettid();
	ps_block(ps_bit(SIGUSR1) | ps_bit(SIGUSR2) | ps_bit(SIGRTMIN));
	fd = ps_signal(ps_bit(SIGUSR1) | ps_bit(SIGRTMIN), POLLFS_NONBLOCK);
	ep = epoll_of(fd, EPOLLIN);

	/* outside the mask: not reported */
	CHECK_SYS(kill(getpid(), SIGUSR2));
	CHECK_EQ(pt_epoll_wait_one(ep, 100, TAG), 0);

	/* two queued, one read: still reported */
	CHECK_SYS(kill(getpid(), SIGRTMIN));
	CHECK_SYS(kill(getpid(), SIGRTMIN));
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 1);
	CHECK_EQ(ps_read_one(fd, psi), 1);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 1);
	CHECK_EQ(ps_read_one(fd, psi), 1);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 0);

	/* a sleeping epoll_wait not woken by one outside the mask */
	CHECK_EQ(pthread_create(&t, NULL, send_after_wait,
				(void *)(intptr_t)SIGUSR2), 0);
	CHECK_EQ(pt_epoll_wait_one(ep, 500, TAG), 0);
	ps_join(t);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 0);
	CHECK_SYS(close(ep));
	CHECK_SYS(close(fd));
}

/* ---- timer ---- */

/* Ready no sooner than it expires, at every wait until read; the timer
 * beside it, never armed, never reported. */
TEST(timer_not_before_it_expires_nor_another)
{
	struct pollfs_timer_event ev;
	int ep, t, other;
	int64_t t0;

	t = tmr_new(POLLFS_NONBLOCK);
	other = tmr_new(POLLFS_NONBLOCK);
	ep = epoll_of(t, EPOLLIN);
	add(ep, other, EPOLLIN, TAG + 1);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 0);
	CHECK_EQ(pt_epoll_wait_one(ep, 100, TAG), 0);

	for (int round = 0; round < 3; round++) {
		t0 = pt_mono();
		tmr_arm(t, CLOCK_MONOTONIC, 0, MS(50), 0);
		CHECK_EQ(pt_epoll_wait_one(ep, PT_WAIT_MS, TAG), 1);
		CHECK(pt_mono() >= t0 + MS(50));
		/* again and again until read */
		for (int i = 0; i < 5; i++)
			CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 1);
		CHECK_EQ(pt_epoll_wait_one(ep, 1000, TAG), 1);
		tmr_read_event(t, &ev);
		tmr_check_oneshot(&ev);
		CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 0);
		CHECK_EQ(pt_epoll_wait_one(ep, 100, TAG), 0);
	}
	CHECK_SYS(close(t));
	CHECK_SYS(close(other));
	CHECK_SYS(close(ep));
}

/* ---- AIO ---- */

/* Reaping some leaves it readable; reaping all ends it. */
TEST(aio_reaped_in_parts)
{
	static char data[128];
	struct iocb cbs[3], *ptrs[3];
	struct io_event ev[8];
	aio_context_t ctx;
	int fd, file, ep;

	ctx = ax_setup(16);
	fd = ax_fd(ctx, POLLFS_NONBLOCK);
	file = ax_tmpfile("/tmp", 0);
	ep = epoll_of(fd, EPOLLIN);
	for (int i = 0; i < 3; i++) {
		ax_prep_pwrite(&cbs[i], file, data, sizeof(data),
			       i * (off_t)sizeof(data), i);
		ptrs[i] = &cbs[i];
	}
	ax_submit(ctx, 3, ptrs);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 1);
	ax_expect_avail(fd, ctx, 3);
	CHECK_EQ(ax_reap(ctx, 2, 2, ev, 0), 2);
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 1);
	ax_expect_avail(fd, ctx, 1);
	CHECK_EQ(ax_reap(ctx, 1, 8, ev, 0), 1);
	ax_check_event(&ev[0], 2, sizeof(data));
	CHECK_EQ(pt_epoll_wait_one(ep, 0, TAG), 0);
	CHECK_EQ(pt_epoll_wait_one(ep, 100, TAG), 0);
	ax_expect_empty(fd);
	CHECK_SYS(close(ep));
	CHECK_SYS(close(fd));
	CHECK_SYS(close(file));
	ax_destroy(ctx);
}

int main(void)
{
	pt_for_each_kind(k)
		pt_add_kind_test(k, "until_taken", until_taken);
	return pt_run_tests();
}
