// SPDX-License-Identifier: MIT
/*
 * A signal sent with sigqueue(3) is read with psi_code SI_QUEUE, the
 * sender's psi_pid and psi_uid, and the value it carried in psi_int and
 * psi_ptr (the two views of one union sigval), for real-time and standard
 * signals, from this process or another one, and to one thread
 * (pthread_sigqueue).
 */
#include "lib/signal.h"

PT_BUDGET(30);

static void check_queued(const struct pollfs_siginfo *psi, int sig, pid_t pid,
			 union sigval v)
{
	ps_check_sig(psi, sig, SI_QUEUE);
	CHECK_EQ(psi->psi_pid, pid);
	CHECK_EQ(psi->psi_uid, getuid());
	CHECK_EQ(psi->psi_int, v.sival_int);
	CHECK_EQ(psi->psi_ptr, (uint64_t)(uintptr_t)v.sival_ptr);
	CHECK_EQ(psi->psi_status, 0);
	CHECK_EQ(psi->psi_tid, 0);
	CHECK_EQ(psi->psi_overrun, 0);
}

int main(void)
{
	uint64_t mask = ps_bit(SIGUSR1) | ps_bit(SIGRTMIN + 1) |
			ps_bit(SIGRTMIN + 2);
	struct pollfs_siginfo psi;
	union sigval v;
	pid_t child;
	int fd;

	ps_block(mask);
	fd = ps_signal(mask, POLLFS_NONBLOCK);

	/* an int value */
	memset(&v, 0, sizeof(v));
	v.sival_int = 42;
	CHECK_SYS(sigqueue(getpid(), SIGRTMIN + 1, v));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	check_queued(&psi, SIGRTMIN + 1, getpid(), v);
	CHECK_EQ(psi.psi_int, 42);
	CHECK_EQ(psi.psi_ptr, 42);
	ps_expect_empty(fd);

	/* a pointer value: all 64 bits in psi_ptr */
	memset(&v, 0, sizeof(v));
	v.sival_ptr = (void *)(uintptr_t)0x0123456789abcdefULL;
	CHECK_SYS(sigqueue(getpid(), SIGRTMIN + 1, v));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	check_queued(&psi, SIGRTMIN + 1, getpid(), v);
	CHECK_EQ(psi.psi_ptr, 0x0123456789abcdefULL);
	ps_expect_empty(fd);

	/* a standard signal carries its value too */
	memset(&v, 0, sizeof(v));
	v.sival_int = -7;
	CHECK_SYS(sigqueue(getpid(), SIGUSR1, v));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	check_queued(&psi, SIGUSR1, getpid(), v);
	CHECK_EQ(psi.psi_int, -7);
	ps_expect_empty(fd);

	/* from another process */
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		union sigval cv;

		memset(&cv, 0, sizeof(cv));
		cv.sival_int = 1234;
		_exit(sigqueue(getppid(), SIGRTMIN + 1, cv) ? 1 : 0);
	}
	ps_check_exit0(ps_wait_child(child, PT_WAIT_MS));
	memset(&v, 0, sizeof(v));
	v.sival_int = 1234;
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	check_queued(&psi, SIGRTMIN + 1, child, v);
	ps_expect_empty(fd);

	/* to one thread: this one */
	memset(&v, 0, sizeof(v));
	v.sival_ptr = (void *)(uintptr_t)0xfedcba9876543210ULL;
	CHECK_EQ(pthread_sigqueue(pthread_self(), SIGRTMIN + 2, v), 0);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	check_queued(&psi, SIGRTMIN + 2, getpid(), v);
	ps_expect_empty(fd);

	CHECK_SYS(close(fd));
	return PT_PASS;
}
