// SPDX-License-Identifier: MIT
/*
 * A signal sent with kill(2) is read as one record: psi_signo, psi_code
 * SI_USER, psi_pid and psi_uid of the sender, whether the process sends
 * it to itself or another process sends it.
 */
#include "lib/signal.h"

PT_BUDGET(30);

static void check_kill_record(const struct pollfs_siginfo *psi, int sig,
			      pid_t pid)
{
	ps_check_sig(psi, sig, SI_USER);
	CHECK_EQ(psi->psi_pid, pid);
	CHECK_EQ(psi->psi_uid, getuid());
	CHECK_EQ(psi->psi_status, 0);
	CHECK_EQ(psi->psi_int, 0);
	CHECK_EQ(psi->psi_ptr, 0);
	CHECK_EQ(psi->psi_tid, 0);
	CHECK_EQ(psi->psi_overrun, 0);
	CHECK_EQ(psi->psi_fd, 0);
	CHECK_EQ(psi->psi_addr, 0);
}

int main(void)
{
	uint64_t mask = ps_bit(SIGUSR1) | ps_bit(SIGUSR2) | ps_bit(SIGTERM) |
			ps_bit(SIGRTMIN + 3);
	struct pollfs_siginfo psi;
	int fd;
	pid_t child;

	ps_block(mask);
	fd = ps_signal(mask, POLLFS_NONBLOCK);
	ps_expect_empty(fd);

	/* to itself */
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK(pt_poll_in(fd, 0));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	check_kill_record(&psi, SIGUSR1, getpid());
	CHECK(!ps_pending(SIGUSR1));
	ps_expect_empty(fd);

	/* a real-time signal by kill: SI_USER too */
	CHECK_SYS(kill(getpid(), SIGRTMIN + 3));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	check_kill_record(&psi, SIGRTMIN + 3, getpid());
	ps_expect_empty(fd);

	/* from another process */
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		alarm(0);
		_exit(kill(getppid(), SIGTERM) ? 1 : 0);
	}
	ps_check_exit0(ps_wait_child(child, PT_WAIT_MS));
	CHECK(ps_pending(SIGTERM));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	check_kill_record(&psi, SIGTERM, child);
	CHECK(!ps_pending(SIGTERM));
	ps_expect_empty(fd);

	/* a blocked signal outside the mask stays pending, unread */
	ps_block(ps_bit(SIGHUP));
	CHECK_SYS(kill(getpid(), SIGHUP));
	ps_expect_empty(fd);
	CHECK(ps_pending(SIGHUP));
	CHECK_SYS(close(fd));
	return PT_PASS;
}
