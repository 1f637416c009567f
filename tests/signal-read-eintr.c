// SPDX-License-Identifier: MIT
/*
 * A blocking read is interrupted by a caught signal outside the mask:
 * EINTR when the handler has no SA_RESTART; with SA_RESTART the read
 * goes on sleeping after the handler and returns the next signal of the
 * mask.
 */
#include "lib/signal.h"

#include <stdatomic.h>

PT_BUDGET(60);

static atomic_int handled;
static pid_t main_tid;

static void on_usr2(int sig)
{
	(void)sig;
	handled++;
}

static void *sender(void *unused)
{
	(void)unused;
	/* this thread blocks everything: signals to the process go to main */
	ps_wait_in_read(main_tid);
	pt_sleep_ms(20);
	ps_wait_in_read(main_tid);
	CHECK_SYS(ps_tgkill(getpid(), main_tid, SIGUSR2));
	return NULL;
}

static void *restart_sender(void *unused)
{
	int64_t end = pt_mono() + MS(PT_WAIT_MS);

	(void)unused;
	ps_wait_in_read(main_tid);
	CHECK_SYS(ps_tgkill(getpid(), main_tid, SIGUSR2));
	while (handled < 1 && pt_mono() < end)
		pt_sleep_ms(1);
	CHECK_EQ(handled, 1);
	/* back asleep in the restarted read */
	ps_wait_in_read(main_tid);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	return NULL;
}

static void set_handler(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	CHECK_SYS(sigaction(SIGUSR2, &sa, NULL));
}

static pthread_t start(void *(*fn)(void *))
{
	sigset_t all, old;
	pthread_t t;

	sigfillset(&all);
	CHECK_EQ(pthread_sigmask(SIG_SETMASK, &all, &old), 0);
	CHECK_EQ(pthread_create(&t, NULL, fn, NULL), 0);
	CHECK_EQ(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
	return t;
}

int main(void)
{
	struct pollfs_siginfo psi;
	pthread_t t;
	int fd;

	main_tid = ps_gettid();
	ps_block(ps_bit(SIGUSR1));
	ps_unblock(ps_bit(SIGUSR2));
	fd = ps_signal(ps_bit(SIGUSR1), 0);

	/* no SA_RESTART: EINTR */
	set_handler(0);
	t = start(sender);
	CHECK_ERR(read(fd, &psi, sizeof(psi)), EINTR);
	CHECK_EQ(handled, 1);
	ps_join(t);
	ps_expect_empty(fd);

	/* SA_RESTART: the read goes on and returns SIGUSR1 */
	handled = 0;
	set_handler(SA_RESTART);
	t = start(restart_sender);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	CHECK_EQ(handled, 1);
	ps_join(t);
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
