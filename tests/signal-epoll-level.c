// SPDX-License-Identifier: MIT
/*
 * Level-triggered epoll reports the object while a signal of the mask is
 * pending, again at every epoll_wait until it is read; a sleeping
 * epoll_wait is woken by one; a signal outside the mask is not reported.
 */
#include "lib/signal.h"

#include <sys/epoll.h>

PT_BUDGET(60);

static pid_t main_tid;

static void *send_after_wait(void *arg)
{
	int sig = (int)(intptr_t)arg;

	ps_wait_in_syscall(getpid(), main_tid, SYS_epoll_wait,
			   SYS_epoll_pwait);
	CHECK_SYS(kill(getpid(), sig));
	return NULL;
}

static int wait_one(int ep, int timeout_ms)
{
	struct epoll_event e[2];
	int n = CHECK_SYS(epoll_wait(ep, e, 2, timeout_ms));

	if (n > 0) {
		CHECK_EQ(n, 1);
		CHECK_EQ(e[0].events, EPOLLIN);
		CHECK_EQ(e[0].data.u64, 7);
	}
	return n;
}

int main(void)
{
	struct pollfs_siginfo psi[4];
	struct epoll_event e;
	pthread_t t;
	int ep, fd;

	main_tid = ps_gettid();
	ps_block(ps_bit(SIGUSR1) | ps_bit(SIGUSR2) | ps_bit(SIGRTMIN));
	fd = ps_signal(ps_bit(SIGUSR1) | ps_bit(SIGRTMIN), POLLFS_NONBLOCK);
	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	memset(&e, 0, sizeof(e));
	e.events = EPOLLIN;
	e.data.u64 = 7;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	CHECK_EQ(wait_one(ep, 0), 0);

	CHECK_SYS(kill(getpid(), SIGUSR2));
	CHECK_EQ(wait_one(ep, 100), 0);

	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(wait_one(ep, 0), 1);
	CHECK_EQ(wait_one(ep, 0), 1);
	CHECK_EQ(wait_one(ep, 100), 1);
	CHECK_EQ(ps_read_one(fd, psi), 1);
	ps_check_sig(&psi[0], SIGUSR1, SI_USER);
	CHECK_EQ(wait_one(ep, 0), 0);

	/* two queued, one read: still reported */
	CHECK_SYS(kill(getpid(), SIGRTMIN));
	CHECK_SYS(kill(getpid(), SIGRTMIN));
	CHECK_EQ(wait_one(ep, 0), 1);
	CHECK_EQ(ps_read_one(fd, psi), 1);
	CHECK_EQ(wait_one(ep, 0), 1);
	CHECK_EQ(ps_read_one(fd, psi), 1);
	CHECK_EQ(wait_one(ep, 0), 0);

	/* a sleeping epoll_wait woken */
	CHECK_EQ(pthread_create(&t, NULL, send_after_wait,
				(void *)(intptr_t)SIGUSR1), 0);
	CHECK_EQ(wait_one(ep, PT_WAIT_MS), 1);
	ps_join(t);
	CHECK_EQ(ps_read_n(fd, psi, 4), 1);
	ps_check_sig(&psi[0], SIGUSR1, SI_USER);

	/* not by a signal outside the mask */
	CHECK_EQ(pthread_create(&t, NULL, send_after_wait,
				(void *)(intptr_t)SIGUSR2), 0);
	CHECK_EQ(wait_one(ep, 500), 0);
	ps_join(t);
	CHECK_EQ(wait_one(ep, 0), 0);
	CHECK_SYS(close(ep));
	CHECK_SYS(close(fd));
	return PT_PASS;
}
