// SPDX-License-Identifier: MIT
/*
 * Writing an 8-byte mask replaces the object's mask at once: a signal no
 * longer in it is not read (EAGAIN, no POLLIN, it stays pending) and a
 * newly added one is.  Several masks in one write apply in order, the
 * last one staying; fewer than 8 bytes are EINVAL and change nothing; a
 * bad buffer is EFAULT; SIGKILL and SIGSTOP are dropped from a written
 * mask as from the created one.
 */
#include "lib/signal.h"

PT_BUDGET(30);

int main(void)
{
	uint64_t u1 = ps_bit(SIGUSR1), u2 = ps_bit(SIGUSR2);
	void *volatile null = NULL;	/* hidden from the compiler's checks */
	void *volatile low = (void *)8;
	uint64_t masks[3];
	struct pollfs_siginfo psi;
	int fd;

	ps_block(u1 | u2);
	fd = ps_signal(u1, POLLFS_NONBLOCK);

	/* SIGUSR2 is not in the mask: pending, not read */
	CHECK_SYS(kill(getpid(), SIGUSR2));
	ps_expect_empty(fd);
	CHECK(ps_pending(SIGUSR2));

	/* now it is, at once */
	ps_set_mask(fd, u2);
	CHECK_EQ(ps_fdinfo_mask(0, fd), u2);
	CHECK(pt_poll_in(fd, 0));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR2, SI_USER);
	ps_expect_empty(fd);

	/* SIGUSR1 no longer is */
	CHECK_SYS(kill(getpid(), SIGUSR1));
	ps_expect_empty(fd);
	CHECK(ps_pending(SIGUSR1));
	ps_set_mask(fd, u1 | u2);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	ps_expect_empty(fd);

	/* an empty mask reads nothing */
	ps_set_mask(fd, 0);
	CHECK_EQ(ps_fdinfo_mask(0, fd), 0);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	ps_expect_empty(fd);
	ps_set_mask(fd, u1);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);

	/* short writes: EINVAL, the mask unchanged */
	masks[0] = u2;
	CHECK_ERR(write(fd, masks, 7), EINVAL);
	CHECK_ERR(write(fd, masks, 4), EINVAL);
	CHECK_ERR(write(fd, masks, 1), EINVAL);
	CHECK_ERR(write(fd, masks, 0), EINVAL);
	CHECK_EQ(ps_fdinfo_mask(0, fd), u1);

	/* three masks in one write: all applied, the last one stays */
	masks[0] = u2;
	masks[1] = 0;
	masks[2] = u1 | u2;
	CHECK_EQ(write(fd, masks, sizeof(masks)), 24);
	CHECK_EQ(ps_fdinfo_mask(0, fd), u1 | u2);
	/* 12 bytes: one mask applied, 8 bytes taken */
	CHECK_EQ(write(fd, masks, 12), 8);
	CHECK_EQ(ps_fdinfo_mask(0, fd), u2);

	/* a bad buffer */
	CHECK_ERR(write(fd, null, 8), EFAULT);
	CHECK_ERR(write(fd, low, 16), EFAULT);
	CHECK_EQ(ps_fdinfo_mask(0, fd), u2);

	/* SIGKILL and SIGSTOP dropped, nothing else */
	ps_set_mask(fd, u1 | ps_bit(SIGKILL) | ps_bit(SIGSTOP));
	CHECK_EQ(ps_fdinfo_mask(0, fd), u1);
	ps_set_mask(fd, ~0ULL);
	CHECK_EQ(ps_fdinfo_mask(0, fd), ~(ps_bit(SIGKILL) | ps_bit(SIGSTOP)));
	ps_set_mask(fd, ps_bit(SIGKILL));
	CHECK_EQ(ps_fdinfo_mask(0, fd), 0);
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
