// SPDX-License-Identifier: MIT
/*
 * After fork() the object, inherited by the child, means the child's own
 * signals there: the parent's pending signal is neither readable nor
 * POLLIN in the child, the child reads the signals sent to it (by itself
 * and by the parent, also in a blocking read), and the parent still reads
 * its own afterwards, not the child's.  A mask written by the child is
 * the parent's too: they share one object.
 */
#include "lib/signal.h"

PT_BUDGET(60);

static int fd;
static int to_child[2], to_parent[2];
static pid_t parent;

static int child_main(void)
{
	struct pollfs_siginfo psi;

	/* the parent's SIGUSR1 is not this process's */
	CHECK(!ps_pending(SIGUSR1));
	ps_expect_empty(fd);

	/* its own */
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK(pt_poll_in(fd, 0));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	CHECK_EQ(psi.psi_pid, getpid());
	ps_expect_empty(fd);

	/* a blocking read, woken by the parent's signal */
	CHECK_SYS(fcntl(fd, F_SETFL, 0));
	ps_post(to_parent[1]);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR2, SI_USER);
	CHECK_EQ(psi.psi_pid, parent);
	CHECK_SYS(fcntl(fd, F_SETFL, O_NONBLOCK));

	/* one left pending here, for the parent not to see */
	CHECK_SYS(kill(getpid(), SIGUSR2));
	CHECK(ps_pending(SIGUSR2));
	ps_post(to_parent[1]);
	ps_wait_post(to_child[0]);

	/* the mask is shared */
	ps_set_mask(fd, ps_bit(SIGUSR1));
	ps_post(to_parent[1]);
	ps_wait_post(to_child[0]);
	return PT_PASS;
}

int main(void)
{
	uint64_t mask = ps_bit(SIGUSR1) | ps_bit(SIGUSR2);
	struct pollfs_siginfo psi;
	pid_t child;

	parent = getpid();
	ps_block(mask);
	CHECK_SYS(pipe2(to_child, O_CLOEXEC));
	CHECK_SYS(pipe2(to_parent, O_CLOEXEC));
	fd = ps_signal(mask, POLLFS_NONBLOCK);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK(pt_poll_in(fd, 0));

	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		alarm(0);
		_exit(child_main());
	}

	/* the child waits in a blocking read */
	ps_wait_post(to_parent[0]);
	ps_wait_in_syscall(child, child, SYS_read, SYS_read);
	/* the parent's pending SIGUSR1 did not end it; this does */
	CHECK_SYS(kill(child, SIGUSR2));

	/* the child has SIGUSR2 pending; the parent reads only its own */
	ps_wait_post(to_parent[0]);
	CHECK(pt_poll_in(fd, 0));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	CHECK_EQ(psi.psi_pid, getpid());
	ps_expect_empty(fd);
	CHECK(!ps_pending(SIGUSR2));
	ps_post(to_child[1]);

	/* the child wrote a mask without SIGUSR2 */
	ps_wait_post(to_parent[0]);
	CHECK_EQ(ps_fdinfo_mask(0, fd), ps_bit(SIGUSR1));
	ps_post(to_child[1]);

	ps_check_exit0(ps_wait_child(child, PT_WAIT_MS));
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
