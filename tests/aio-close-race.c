// SPDX-License-Identifier: MIT
/*
 * Races at the edges of an AIO object's life, for the kernel's memory
 * checks (slub_debug in the guest) to catch a use after free: objects
 * created, polled and closed while completions stream in; objects closed
 * while io_destroy runs; objects created while io_destroy runs (each
 * either fails with EINVAL or is hung up at once and stays so).  Each
 * race is a TEST.
 */
#include "lib/aio.h"

#include <sys/epoll.h>

PT_BUDGET(150);

static aio_context_t ctx;
static int file;
static volatile int stop;
static long created, streamed;

static void *churn(void *unused)
{
	struct pollfs_aio_event ev;
	int ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));

	(void)unused;
	while (!stop) {
		struct epoll_event e = { .events = EPOLLIN | EPOLLET };
		int fd = ax_fd(ctx, POLLFS_NONBLOCK);

		CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
		ax_revents(fd, POLLIN, 0);
		if (ax_read_rec(fd, &ev) == AX_EVENT_SIZE)
			CHECK_EQ(ev.ctx, ctx);
		CHECK_SYS(close(fd));	/* leaves the epoll set too */
		created++;
	}
	close(ep);
	return NULL;
}

static void *stream(void *unused)
{
	static char data[64];
	struct iocb cbs[8], *ptrs[8];
	struct io_event ev[8];

	(void)unused;
	for (int i = 0; i < 8; i++) {
		ax_prep_pwrite(&cbs[i], file, data, sizeof(data), 0, i);
		ptrs[i] = &cbs[i];
	}
	while (!stop) {
		ax_submit(ctx, 8, ptrs);
		ax_reap(ctx, 8, 8, ev, PT_WAIT_MS);
		streamed += 8;
	}
	return NULL;
}

static void *long_poll(void *arg)
{
	int fd = *(int *)arg;

	while (!stop)
		ax_revents(fd, POLLIN, 5);
	return NULL;
}

enum { NFD = 8 };
static int fds[NFD];
static volatile int go;

static void *closer(void *unused)
{
	(void)unused;
	while (!go)
		;
	for (int i = 0; i < NFD; i++)
		CHECK_SYS(close(fds[i]));
	return NULL;
}

static int made[256];
static int nmade, einval;

static void *creator(void *unused)
{
	(void)unused;
	while (!go)
		;
	while (nmade < 256) {
		int fd = ax_fd_try(ctx, POLLFS_NONBLOCK);

		if (fd < 0) {
			CHECK_EQ(errno, EINVAL);
			einval++;
			break;
		}
		made[nmade++] = fd;
	}
	return NULL;
}

TEST(objects_made_polled_and_closed_while_completions_stream)
{
	pthread_t th[4];
	int64_t t0;
	int keep;

	ctx = ax_setup(64);
	keep = ax_fd(ctx, 0);
	t0 = pt_mono();
	CHECK_EQ(pthread_create(&th[0], NULL, churn, NULL), 0);
	CHECK_EQ(pthread_create(&th[1], NULL, churn, NULL), 0);
	CHECK_EQ(pthread_create(&th[2], NULL, stream, NULL), 0);
	CHECK_EQ(pthread_create(&th[3], NULL, long_poll, &keep), 0);
	pt_sleep_ms(3000);
	stop = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	pt_diag("%ld objects made and closed, %ld completions, in %lld ms",
		created, streamed,
		(long long)((pt_mono() - t0) / NSEC_PER_MSEC));
	CHECK(created > 0 && streamed > 0);
	ax_expect_empty(keep);
	ax_destroy(ctx);
	ax_expect_hup(keep);
	CHECK_SYS(close(keep));
}

TEST(close_racing_with_io_destroy)
{
	pthread_t th;

	for (int round = 0; round < 200; round++) {
		ctx = ax_setup(8);
		for (int i = 0; i < NFD; i++)
			fds[i] = ax_fd(ctx, i % 2 ? POLLFS_NONBLOCK : 0);
		go = 0;
		CHECK_EQ(pthread_create(&th, NULL, closer, NULL), 0);
		go = 1;
		if (round % 2)
			sched_yield();
		ax_destroy(ctx);
		pthread_join(th, NULL);
	}
}

/* Each object made either fails with EINVAL or is hung up at once. */
TEST(creation_racing_with_io_destroy)
{
	long total = 0, failed = 0;
	pthread_t th;

	for (int round = 0; round < 100; round++) {
		ctx = ax_setup(8);
		nmade = einval = 0;
		go = 0;
		CHECK_EQ(pthread_create(&th, NULL, creator, NULL), 0);
		go = 1;
		pt_sleep_ns(US(round * 20));
		ax_destroy(ctx);
		pthread_join(th, NULL);
		for (int i = 0; i < nmade; i++) {
			ax_expect_hup(made[i]);
			CHECK_SYS(close(made[i]));
		}
		total += nmade;
		failed += einval;
	}
	pt_diag("creation vs destroy: %ld objects made, %ld EINVAL", total,
		failed);
}

int main(void)
{
	file = ax_tmpfile("/tmp", 0);
	return pt_run_tests();
}
