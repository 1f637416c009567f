// SPDX-License-Identifier: MIT
/*
 * Readiness is that of the thread that polls.  A thread sleeping in
 * poll() or epoll_wait() on the object is woken by a process-directed
 * signal of the mask (sent by another thread) and reads it; a signal sent
 * to another thread of the process neither wakes it nor makes it
 * readable for it, while that other thread sees POLLIN and reads it; a
 * signal sent to the polling thread itself wakes it.
 */
#include "lib/signal.h"

#include <stdatomic.h>
#include <sys/epoll.h>

PT_BUDGET(60);

static int fd, ep;
static int to_p[2], to_main[2];
static atomic_int p_tid;
static pid_t main_tid;

static void poll_read(int timeout_ms, int sig, int code)
{
	struct pollfs_siginfo psi;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	CHECK_EQ(poll(&p, 1, timeout_ms), 1);
	CHECK_EQ(p.revents, POLLIN);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, sig, code);
}

static void *poller(void *unused)
{
	struct epoll_event e[2];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int64_t t0;

	(void)unused;
	p_tid = ps_gettid();

	/* 1: woken by kill() to the process */
	poll_read(PT_WAIT_MS, SIGUSR1, SI_USER);
	ps_post(to_main[1]);

	/* 2: main sends a signal to itself: not ours */
	ps_wait_post(to_p[0]);
	t0 = pt_mono();
	CHECK_EQ(poll(&p, 1, 300), 0);
	CHECK(pt_mono() - t0 >= MS(290));
	ps_expect_empty(fd);
	ps_post(to_main[1]);

	/* 3: woken by a signal sent to this thread */
	poll_read(PT_WAIT_MS, SIGUSR2, SI_TKILL);
	ps_post(to_main[1]);

	/* 4: epoll_wait, woken by kill() to the process */
	CHECK_EQ(epoll_wait(ep, e, 2, PT_WAIT_MS), 1);
	CHECK_EQ(e[0].events, EPOLLIN);
	poll_read(0, SIGUSR1, SI_USER);
	ps_post(to_main[1]);

	/* 5: epoll_wait: a signal for main is not ours */
	CHECK_EQ(epoll_wait(ep, e, 2, 300), 0);
	ps_expect_empty(fd);
	ps_post(to_main[1]);
	return NULL;
}

int main(void)
{
	uint64_t mask = ps_bit(SIGUSR1) | ps_bit(SIGUSR2);
	struct epoll_event e;
	pthread_t t;
	pid_t pid = getpid();

	main_tid = ps_gettid();
	ps_block(mask);
	CHECK_SYS(pipe2(to_p, O_CLOEXEC));
	CHECK_SYS(pipe2(to_main, O_CLOEXEC));
	fd = ps_signal(mask, POLLFS_NONBLOCK);
	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	memset(&e, 0, sizeof(e));
	e.events = EPOLLIN;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));

	CHECK_EQ(pthread_create(&t, NULL, poller, NULL), 0);
	while (!p_tid)
		pt_sleep_ms(1);

	/* 1 */
	ps_wait_in_syscall(pid, p_tid, PT_SYS_POLL, SYS_ppoll);
	CHECK_SYS(kill(pid, SIGUSR1));
	ps_wait_post(to_main[0]);
	ps_expect_empty(fd);

	/* 2 */
	CHECK_SYS(ps_tgkill(pid, main_tid, SIGUSR2));
	ps_post(to_p[1]);
	ps_wait_post(to_main[0]);
	poll_read(0, SIGUSR2, SI_TKILL);

	/* 3 */
	ps_wait_in_syscall(pid, p_tid, PT_SYS_POLL, SYS_ppoll);
	CHECK_SYS(ps_tgkill(pid, p_tid, SIGUSR2));
	ps_wait_post(to_main[0]);
	ps_expect_empty(fd);

	/* 4 */
	ps_wait_in_syscall(pid, p_tid, PT_SYS_EPOLL_WAIT, SYS_epoll_pwait);
	CHECK_SYS(kill(pid, SIGUSR1));
	ps_wait_post(to_main[0]);

	/* 5 */
	ps_wait_in_syscall(pid, p_tid, PT_SYS_EPOLL_WAIT, SYS_epoll_pwait);
	CHECK_SYS(ps_tgkill(pid, main_tid, SIGUSR2));
	ps_wait_post(to_main[0]);
	poll_read(0, SIGUSR2, SI_TKILL);

	ps_join(t);
	CHECK_SYS(close(ep));
	CHECK_SYS(close(fd));
	return PT_PASS;
}
