// SPDX-License-Identifier: MIT
/*
 * With O_NONBLOCK (POLLFS_NONBLOCK at creation, or fcntl) a read with no
 * signal of the mask pending fails with EAGAIN at once, also while
 * signals outside the mask, or pending for another thread, are there;
 * without it the read sleeps until one comes.
 */
#include "lib/signal.h"

#include <stdatomic.h>

PT_BUDGET(60);

static int fd;
static int to_t[2], to_main[2];
static atomic_int t_tid;

static void *other(void *unused)
{
	(void)unused;
	t_tid = ps_gettid();
	ps_post(to_main[1]);
	ps_wait_post(to_t[0]);	/* SIGUSR1 is pending for this thread */
	return NULL;
}

static void *reader(void *unused)
{
	struct pollfs_siginfo psi;

	(void)unused;
	t_tid = ps_gettid();
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	return NULL;
}

static void check_eagain(void)
{
	struct pollfs_siginfo psi[4];
	int64_t t0 = pt_mono();

	CHECK_ERR(read(fd, psi, sizeof(psi[0])), EAGAIN);
	CHECK_ERR(read(fd, psi, sizeof(psi)), EAGAIN);
	CHECK(pt_mono() - t0 < MS(2000));
}

int main(void)
{
	struct pollfs_siginfo psi;
	pthread_t t;

	ps_block(ps_bit(SIGUSR1) | ps_bit(SIGUSR2));
	CHECK_SYS(pipe2(to_t, O_CLOEXEC));
	CHECK_SYS(pipe2(to_main, O_CLOEXEC));

	fd = ps_signal(ps_bit(SIGUSR1), POLLFS_NONBLOCK);
	check_eagain();

	/* a pending signal outside the mask */
	CHECK_SYS(kill(getpid(), SIGUSR2));
	check_eagain();
	CHECK(ps_pending(SIGUSR2));

	/* a signal of the mask pending for another thread */
	CHECK_EQ(pthread_create(&t, NULL, other, NULL), 0);
	ps_wait_post(to_main[0]);
	CHECK_SYS(ps_tgkill(getpid(), t_tid, SIGUSR1));
	check_eagain();
	ps_post(to_t[1]);
	ps_join(t);	/* its pending signal goes with it */
	check_eagain();

	/* one of the mask: read */
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	check_eagain();

	/* fcntl clears O_NONBLOCK: a read sleeps until a signal comes */
	CHECK_SYS(fcntl(fd, F_SETFL, 0));
	t_tid = 0;
	CHECK_EQ(pthread_create(&t, NULL, reader, NULL), 0);
	while (!t_tid)
		pt_sleep_ms(1);
	ps_wait_in_read(t_tid);
	pt_sleep_ms(50);
	ps_wait_in_read(t_tid);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	ps_join(t);

	/* and sets it again */
	CHECK_SYS(fcntl(fd, F_SETFL, O_NONBLOCK));
	check_eagain();
	CHECK_SYS(close(fd));

	/* created blocking, made non-blocking */
	fd = ps_signal(ps_bit(SIGUSR1), 0);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	CHECK_SYS(fcntl(fd, F_SETFL, O_NONBLOCK));
	check_eagain();
	CHECK_SYS(close(fd));
	return PT_PASS;
}
