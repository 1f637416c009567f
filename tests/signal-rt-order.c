// SPDX-License-Identifier: MIT
/*
 * Real-time signals keep their count and their order: five SIGRTMIN
 * queued with values 0..4 are five records in that order, read one by one
 * or in one read; of several real-time signals the lower-numbered ones
 * come first, each in the order it was queued; kill(2) queues a
 * real-time signal as many times as it is sent.
 */
#include "lib/signal.h"

PT_BUDGET(30);

int main(void)
{
	int rt0 = SIGRTMIN, rt1 = SIGRTMIN + 1;
	struct pollfs_siginfo psi[16];
	int fd, n;

	ps_block(ps_bit(rt0) | ps_bit(rt1));
	fd = ps_signal(ps_bit(rt0) | ps_bit(rt1), POLLFS_NONBLOCK);

	/* one by one */
	for (int i = 0; i < 5; i++)
		ps_queue_int(getpid(), rt0, i);
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(ps_read_one(fd, psi), 1);
		ps_check_sig(&psi[0], rt0, SI_QUEUE);
		CHECK_EQ(psi[0].psi_int, i);
		CHECK_EQ(psi[0].psi_pid, getpid());
	}
	ps_expect_empty(fd);

	/* in one read */
	for (int i = 0; i < 5; i++)
		ps_queue_int(getpid(), rt0, 10 + i);
	n = ps_read_n(fd, psi, 16);
	CHECK_EQ(n, 5);
	for (int i = 0; i < 5; i++) {
		ps_check_sig(&psi[i], rt0, SI_QUEUE);
		CHECK_EQ(psi[i].psi_int, 10 + i);
	}
	ps_expect_empty(fd);

	/* interleaved: the lower signal first, each in its order */
	ps_queue_int(getpid(), rt1, 100);
	ps_queue_int(getpid(), rt0, 0);
	ps_queue_int(getpid(), rt1, 101);
	ps_queue_int(getpid(), rt0, 1);
	ps_queue_int(getpid(), rt1, 102);
	n = ps_read_n(fd, psi, 16);
	CHECK_EQ(n, 5);
	ps_check_sig(&psi[0], rt0, SI_QUEUE);
	CHECK_EQ(psi[0].psi_int, 0);
	ps_check_sig(&psi[1], rt0, SI_QUEUE);
	CHECK_EQ(psi[1].psi_int, 1);
	for (int i = 0; i < 3; i++) {
		ps_check_sig(&psi[2 + i], rt1, SI_QUEUE);
		CHECK_EQ(psi[2 + i].psi_int, 100 + i);
	}
	ps_expect_empty(fd);

	/* kill queues a real-time signal each time */
	for (int i = 0; i < 3; i++)
		CHECK_SYS(kill(getpid(), rt1));
	n = ps_read_n(fd, psi, 16);
	CHECK_EQ(n, 3);
	for (int i = 0; i < 3; i++) {
		ps_check_sig(&psi[i], rt1, SI_USER);
		CHECK_EQ(psi[i].psi_pid, getpid());
	}
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
