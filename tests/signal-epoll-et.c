// SPDX-License-Identifier: MIT
/*
 * Edge-triggered epoll (EPOLLET) reports a signal of the mask once: not
 * again while it stays unread or partly read, again when a new signal of
 * the mask arrives.  EPOLLONESHOT reports once until re-armed with
 * EPOLL_CTL_MOD.
 */
#include "lib/signal.h"

#include <sys/epoll.h>

PT_BUDGET(60);

static int wait_one(int ep, int timeout_ms)
{
	struct epoll_event e[2];
	int n = CHECK_SYS(epoll_wait(ep, e, 2, timeout_ms));

	if (n > 0) {
		CHECK_EQ(n, 1);
		CHECK(e[0].events & EPOLLIN);
	}
	return n;
}

int main(void)
{
	struct pollfs_siginfo psi[4];
	struct epoll_event e;
	int ep, fd, n;

	ps_block(ps_bit(SIGUSR1) | ps_bit(SIGRTMIN));
	fd = ps_signal(ps_bit(SIGUSR1) | ps_bit(SIGRTMIN), POLLFS_NONBLOCK);
	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	memset(&e, 0, sizeof(e));
	e.events = EPOLLIN | EPOLLET;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	CHECK_EQ(wait_one(ep, 0), 0);

	/* once, however long it waits unread */
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(wait_one(ep, PT_WAIT_MS), 1);
	CHECK_EQ(wait_one(ep, 0), 0);
	CHECK_EQ(wait_one(ep, 200), 0);
	CHECK(pt_poll_in(fd, 0));

	/* a new signal is a new edge */
	CHECK_SYS(kill(getpid(), SIGRTMIN));
	CHECK_EQ(wait_one(ep, PT_WAIT_MS), 1);
	CHECK_EQ(wait_one(ep, 200), 0);

	/* partly read: no new report */
	CHECK_EQ(ps_read_one(fd, psi), 1);
	ps_check_sig(&psi[0], SIGUSR1, SI_USER);
	CHECK_EQ(wait_one(ep, 200), 0);
	CHECK_EQ(ps_read_one(fd, psi), 1);
	ps_check_sig(&psi[0], SIGRTMIN, SI_USER);
	CHECK_EQ(wait_one(ep, 100), 0);
	ps_expect_empty(fd);

	/* empty again: the next signal is reported */
	CHECK_SYS(kill(getpid(), SIGRTMIN));
	CHECK_SYS(kill(getpid(), SIGRTMIN));
	n = wait_one(ep, PT_WAIT_MS);
	CHECK_EQ(n, 1);
	CHECK_EQ(ps_read_n(fd, psi, 4), 2);
	CHECK_EQ(wait_one(ep, 100), 0);

	/* EPOLLONESHOT */
	e.events = EPOLLIN | EPOLLONESHOT;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &e));
	CHECK_EQ(wait_one(ep, 0), 0);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(wait_one(ep, PT_WAIT_MS), 1);
	CHECK_EQ(wait_one(ep, 0), 0);
	CHECK_SYS(kill(getpid(), SIGRTMIN));
	CHECK_EQ(wait_one(ep, 200), 0);
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &e));
	CHECK_EQ(wait_one(ep, 0), 1);
	CHECK_EQ(ps_read_n(fd, psi, 4), 2);
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &e));
	CHECK_EQ(wait_one(ep, 0), 0);
	CHECK_SYS(close(ep));
	CHECK_SYS(close(fd));
	return PT_PASS;
}
