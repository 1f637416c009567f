// SPDX-License-Identifier: MIT
/*
 * SIGCHLD is read with the child's fate: psi_code CLD_EXITED and the exit
 * status, CLD_KILLED and the signal, CLD_STOPPED and CLD_CONTINUED; the
 * child's psi_pid and psi_uid; its CPU time in psi_utime + psi_stime
 * (clock ticks).  The child is still a zombie for waitpid() afterwards.
 */
#include "lib/signal.h"

PT_BUDGET(60);

static int fd;

static void read_chld(int code, int status, pid_t child)
{
	struct pollfs_siginfo psi;

	pt_wait_readable(fd, PT_WAIT_MS);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGCHLD, code);
	CHECK_EQ(psi.psi_status, status);
	CHECK_EQ(psi.psi_pid, child);
	CHECK_EQ(psi.psi_uid, getuid());
	ps_expect_empty(fd);
}

static pid_t spawn(int exit_status, int64_t spin_ns)
{
	pid_t child = fork();

	CHECK(child >= 0);
	if (child == 0) {
		int64_t end = pt_now(CLOCK_PROCESS_CPUTIME_ID) + spin_ns;

		while (spin_ns && pt_now(CLOCK_PROCESS_CPUTIME_ID) < end)
			;
		if (exit_status >= 0)
			_exit(exit_status);
		for (;;)
			pause();
	}
	return child;
}

int main(void)
{
	struct pollfs_siginfo psi;
	long hz = sysconf(_SC_CLK_TCK);
	int64_t t0, life;
	int status;
	pid_t child;

	ps_block(ps_bit(SIGCHLD));
	fd = ps_signal(ps_bit(SIGCHLD), POLLFS_NONBLOCK);
	ps_expect_empty(fd);

	/* exit status */
	child = spawn(42, 0);
	read_chld(CLD_EXITED, 42, child);
	CHECK_EQ(waitpid(child, &status, 0), child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 42);
	ps_expect_empty(fd);

	/* CPU time: the child spins 300 ms of CPU first.  Ticks are
	 * sampled, and TCG delays them: some of it shows, but never more
	 * than the child's lifetime (it has one thread) */
	t0 = pt_mono();
	child = spawn(0, MS(300));
	pt_wait_readable(fd, 3 * PT_WAIT_MS);
	life = pt_mono() - t0;
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGCHLD, CLD_EXITED);
	CHECK_EQ(psi.psi_status, 0);
	CHECK_EQ(psi.psi_pid, child);
	pt_diag("utime %llu stime %llu ticks of %ld Hz, lifetime %lld ms",
		(unsigned long long)psi.psi_utime,
		(unsigned long long)psi.psi_stime, hz,
		(long long)(life / NSEC_PER_MSEC));
	CHECK_RANGE(psi.psi_utime + psi.psi_stime, 1,
		    life * hz / NSEC_PER_SEC + 2);
	CHECK_EQ(waitpid(child, &status, 0), child);

	/* killed by SIGKILL, and by SIGTERM's default action */
	child = spawn(-1, 0);
	CHECK_SYS(kill(child, SIGKILL));
	read_chld(CLD_KILLED, SIGKILL, child);
	CHECK_EQ(waitpid(child, &status, 0), child);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	child = spawn(-1, 0);
	CHECK_SYS(kill(child, SIGTERM));
	read_chld(CLD_KILLED, SIGTERM, child);
	CHECK_EQ(waitpid(child, &status, 0), child);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);

	/* stopped, continued, killed */
	child = spawn(-1, 0);
	CHECK_SYS(kill(child, SIGSTOP));
	read_chld(CLD_STOPPED, SIGSTOP, child);
	CHECK_SYS(kill(child, SIGCONT));
	read_chld(CLD_CONTINUED, SIGCONT, child);
	CHECK_SYS(kill(child, SIGKILL));
	read_chld(CLD_KILLED, SIGKILL, child);
	CHECK_EQ(waitpid(child, &status, 0), child);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
