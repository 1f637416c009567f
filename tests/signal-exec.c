// SPDX-License-Identifier: MIT
/*
 * Across execve() an object without close-on-exec stays open and reads
 * the signals of the process, which keeps its blocked mask and pending
 * signals: the new program reads the signal sent before the exec.  An
 * object created with POLLFS_CLOEXEC is closed by the exec.
 */
#include "lib/signal.h"

PT_BUDGET(60);

static int after_exec(int fd, int cfd, pid_t pid)
{
	struct pollfs_siginfo psi;

	pt_watchdog(30);
	CHECK_EQ(getpid(), pid);
	CHECK_ERR(fcntl(cfd, F_GETFD), EBADF);
	pt_expect_fd_link(fd, "pollfs:[signal]");
	CHECK_EQ(ps_fdinfo_mask(0, fd), ps_bit(SIGUSR1) | ps_bit(SIGRTMIN));

	CHECK(ps_pending(SIGUSR1));
	CHECK(pt_poll_in(fd, 0));
	CHECK_EQ(ps_read_n(fd, &psi, 1), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	CHECK_EQ(psi.psi_pid, getppid());
	CHECK_EQ(ps_read_n(fd, &psi, 1), 1);
	ps_check_sig(&psi, SIGRTMIN, SI_QUEUE);
	CHECK_EQ(psi.psi_int, 5);
	CHECK_EQ(psi.psi_pid, getpid());
	ps_expect_empty(fd);

	/* and new ones */
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(ps_read_n(fd, &psi, 1), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	CHECK_EQ(psi.psi_pid, getpid());
	return PT_PASS;
}

int main(int argc, char **argv)
{
	uint64_t mask = ps_bit(SIGUSR1) | ps_bit(SIGRTMIN);
	int to_child[2];
	pid_t child;

	if (argc == 5 && strcmp(argv[1], "after-exec") == 0)
		return after_exec(atoi(argv[2]), atoi(argv[3]),
				  (pid_t)atoi(argv[4]));

	CHECK_SYS(pipe2(to_child, O_CLOEXEC));
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		char a2[16], a3[16], a4[16];
		int fd, cfd;

		alarm(0);
		ps_block(mask);
		fd = ps_signal(mask, POLLFS_NONBLOCK);
		cfd = ps_signal(mask, POLLFS_CLOEXEC);
		ps_queue_int(getpid(), SIGRTMIN, 5);
		ps_wait_post(to_child[0]);	/* the parent sent SIGUSR1 */
		CHECK(ps_pending(SIGUSR1));
		snprintf(a2, sizeof(a2), "%d", fd);
		snprintf(a3, sizeof(a3), "%d", cfd);
		snprintf(a4, sizeof(a4), "%d", (int)getpid());
		execl("/proc/self/exe", argv[0], "after-exec", a2, a3, a4,
		      (char *)NULL);
		FAIL("execl(/proc/self/exe): %s", strerror(errno));
	}
	/* SIGUSR1 is blocked in the child once it is asleep on the pipe */
	ps_wait_in_syscall(child, child, PT_SYS_POLL, SYS_ppoll);
	CHECK_SYS(kill(child, SIGUSR1));
	ps_post(to_child[1]);
	ps_check_exit0(ps_wait_child(child, PT_WAIT_MS));
	return PT_PASS;
}
