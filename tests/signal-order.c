// SPDX-License-Identifier: MIT
/*
 * The order of a read is the kernel's dequeue order: the reading thread's
 * own pending signals before its process's; within each, the synchronous
 * signals (SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGSYS) first, then
 * the lowest-numbered.
 */
#include "lib/signal.h"

PT_BUDGET(30);

int main(void)
{
	static const int std[] = { SIGHUP, SIGUSR1, SIGUSR2, SIGTERM };
	uint64_t mask = ps_bit(SIGHUP) | ps_bit(SIGUSR1) | ps_bit(SIGUSR2) |
			ps_bit(SIGTERM) | ps_bit(SIGSEGV) | ps_bit(SIGRTMIN) |
			ps_bit(SIGRTMIN + 2);
	struct pollfs_siginfo psi[16];
	pid_t pid = getpid(), tid = ps_gettid();
	int fd, n;

	ps_block(mask);
	fd = ps_signal(mask, POLLFS_NONBLOCK);

	/* sent in reverse order, read in the kernel's */
	CHECK_SYS(kill(pid, SIGRTMIN + 2));
	CHECK_SYS(kill(pid, SIGRTMIN));
	CHECK_SYS(kill(pid, SIGTERM));
	CHECK_SYS(kill(pid, SIGUSR2));
	CHECK_SYS(kill(pid, SIGUSR1));
	CHECK_SYS(kill(pid, SIGHUP));
	CHECK_SYS(kill(pid, SIGSEGV));
	n = ps_read_n(fd, psi, 16);
	CHECK_EQ(n, 7);
	ps_check_sig(&psi[0], SIGSEGV, SI_USER);
	for (int i = 0; i < 4; i++)
		ps_check_sig(&psi[1 + i], std[i], SI_USER);
	ps_check_sig(&psi[5], SIGRTMIN, SI_USER);
	ps_check_sig(&psi[6], SIGRTMIN + 2, SI_USER);
	ps_expect_empty(fd);

	/* the same one by one */
	CHECK_SYS(kill(pid, SIGTERM));
	CHECK_SYS(kill(pid, SIGHUP));
	CHECK_SYS(kill(pid, SIGUSR2));
	CHECK_EQ(ps_read_one(fd, psi), 1);
	ps_check_sig(&psi[0], SIGHUP, SI_USER);
	CHECK_EQ(ps_read_one(fd, psi), 1);
	ps_check_sig(&psi[0], SIGUSR2, SI_USER);
	CHECK_EQ(ps_read_one(fd, psi), 1);
	ps_check_sig(&psi[0], SIGTERM, SI_USER);
	ps_expect_empty(fd);

	/* this thread's own first, though the process's are lower */
	CHECK_SYS(kill(pid, SIGUSR1));
	CHECK_SYS(kill(pid, SIGHUP));
	CHECK_SYS(ps_tgkill(pid, tid, SIGRTMIN + 2));
	CHECK_SYS(ps_tgkill(pid, tid, SIGUSR2));
	n = ps_read_n(fd, psi, 16);
	CHECK_EQ(n, 4);
	ps_check_sig(&psi[0], SIGUSR2, SI_TKILL);
	ps_check_sig(&psi[1], SIGRTMIN + 2, SI_TKILL);
	ps_check_sig(&psi[2], SIGHUP, SI_USER);
	ps_check_sig(&psi[3], SIGUSR1, SI_USER);
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
