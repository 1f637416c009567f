// SPDX-License-Identifier: MIT
/*
 * A blocking read of the AIO object is interruptible: a caught signal
 * without SA_RESTART gives EINTR; with SA_RESTART the read goes on
 * sleeping and returns the completion that comes later.
 */
#include "lib/aio.h"

PT_BUDGET(60);

static volatile sig_atomic_t caught;

static void on_usr1(int sig)
{
	(void)sig;
	caught++;
}

struct reader {
	int fd;
	ssize_t r;
	int err;
	struct pollfs_aio_event ev;
};

static void *reader_main(void *arg)
{
	struct reader *rd = arg;

	/* no retry on EINTR here: that is what is tested */
	rd->r = read(rd->fd, &rd->ev, sizeof(rd->ev));
	rd->err = errno;
	return NULL;
}

static void set_handler(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
}

int main(void)
{
	static char data[64];
	struct io_event ev[2];
	struct reader rd;
	struct iocb cb;
	aio_context_t ctx;
	pthread_t th;
	int file;

	ctx = ax_setup(8);
	file = ax_tmpfile("/tmp", 0);
	memset(&rd, 0, sizeof(rd));
	rd.fd = ax_fd(ctx, 0);

	/* without SA_RESTART: EINTR */
	set_handler(0);
	CHECK_EQ(pthread_create(&th, NULL, reader_main, &rd), 0);
	pt_sleep_ms(200);
	CHECK_EQ(pthread_kill(th, SIGUSR1), 0);
	pthread_join(th, NULL);
	CHECK_EQ(caught, 1);
	if (rd.r != -1 || rd.err != EINTR)
		FAIL("interrupted read: %zd, errno %d (%s), expected EINTR",
		     rd.r, rd.err, strerror(rd.err));

	/* with SA_RESTART: sleeps on, returns the later completion */
	set_handler(SA_RESTART);
	CHECK_EQ(pthread_create(&th, NULL, reader_main, &rd), 0);
	pt_sleep_ms(200);
	CHECK_EQ(pthread_kill(th, SIGUSR1), 0);
	pt_sleep_ms(200);
	CHECK_EQ(caught, 2);
	ax_prep_pwrite(&cb, file, data, sizeof(data), 0, 3);
	ax_submit1(ctx, &cb);
	pthread_join(th, NULL);
	if (rd.r != AX_EVENT_SIZE)
		FAIL("restarted read: %zd, errno %d (%s)", rd.r, rd.err,
		     strerror(rd.err));
	CHECK_EQ(rd.ev.ctx, ctx);
	CHECK_EQ(rd.ev.available, 1);
	CHECK_EQ(ax_reap(ctx, 1, 2, ev, 0), 1);

	CHECK_SYS(close(rd.fd));
	CHECK_SYS(close(file));
	ax_destroy(ctx);
	return PT_PASS;
}
