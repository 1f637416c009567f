// SPDX-License-Identifier: MIT
/*
 * Standard signals coalesce as the kernel queues them: SIGUSR1 sent three
 * times while pending is one record; of three sigqueue() values of a
 * pending standard signal only the first is kept.  Once read, the signal
 * can be queued and read again.
 */
#include "lib/signal.h"

PT_BUDGET(30);

int main(void)
{
	struct pollfs_siginfo psi[8];
	int fd, n;

	ps_block(ps_bit(SIGUSR1) | ps_bit(SIGUSR2) | ps_bit(SIGRTMIN));
	fd = ps_signal(ps_bit(SIGUSR1) | ps_bit(SIGUSR2) | ps_bit(SIGRTMIN),
		       POLLFS_NONBLOCK);

	for (int i = 0; i < 3; i++)
		CHECK_SYS(kill(getpid(), SIGUSR1));
	n = ps_read_n(fd, psi, 8);
	CHECK_EQ(n, 1);
	ps_check_sig(&psi[0], SIGUSR1, SI_USER);
	ps_expect_empty(fd);

	/* and again, now that it was read */
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(ps_read_n(fd, psi, 8), 1);
	ps_check_sig(&psi[0], SIGUSR1, SI_USER);
	ps_expect_empty(fd);

	/* the first value stays, the later ones are dropped */
	ps_queue_int(getpid(), SIGUSR2, 1);
	ps_queue_int(getpid(), SIGUSR2, 2);
	ps_queue_int(getpid(), SIGUSR2, 3);
	n = ps_read_n(fd, psi, 8);
	CHECK_EQ(n, 1);
	ps_check_sig(&psi[0], SIGUSR2, SI_QUEUE);
	CHECK_EQ(psi[0].psi_int, 1);
	ps_expect_empty(fd);

	/* standard and real-time together: 1 + 2 records */
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_SYS(kill(getpid(), SIGRTMIN));
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_SYS(kill(getpid(), SIGRTMIN));
	n = ps_read_n(fd, psi, 8);
	CHECK_EQ(n, 3);
	ps_check_sig(&psi[0], SIGUSR1, SI_USER);
	ps_check_sig(&psi[1], SIGRTMIN, SI_USER);
	ps_check_sig(&psi[2], SIGRTMIN, SI_USER);
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
