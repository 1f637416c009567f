// SPDX-License-Identifier: MIT
/*
 * poll() and select() report POLLIN exactly when a signal of the mask is
 * pending for the caller: not for a pending signal outside the mask, yes
 * for one in it, no more once it is read, yes when a written mask takes
 * in a pending signal.  A sleeping poll() is woken by a signal of the
 * mask and returns POLLIN; a signal outside the mask does not end it.
 */
#include "lib/signal.h"

#include <sys/select.h>

PT_BUDGET(60);

static int fd;
static pid_t main_tid;

static short revents(void)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	CHECK_EQ(poll(&p, 1, 0), p.revents ? 1 : 0);
	return p.revents;
}

static bool selected(void)
{
	struct timeval tv = { 0, 0 };
	fd_set r;
	int n;

	FD_ZERO(&r);
	FD_SET(fd, &r);
	n = CHECK_SYS(select(fd + 1, &r, NULL, NULL, &tv));
	CHECK_EQ(n, FD_ISSET(fd, &r) ? 1 : 0);
	return n == 1;
}

static void *send_after_poll(void *arg)
{
	int sig = (int)(intptr_t)arg;

	ps_wait_in_syscall(getpid(), main_tid, PT_SYS_POLL, SYS_ppoll);
	CHECK_SYS(kill(getpid(), sig));
	return NULL;
}

int main(void)
{
	struct pollfs_siginfo psi;
	struct pollfd p;
	pthread_t t;
	int64_t t0;

	main_tid = ps_gettid();
	ps_block(ps_bit(SIGUSR1) | ps_bit(SIGUSR2));
	fd = ps_signal(ps_bit(SIGUSR1), 0);

	CHECK_EQ(revents(), 0);
	CHECK(!selected());

	CHECK_SYS(kill(getpid(), SIGUSR2));
	CHECK_EQ(revents(), 0);
	CHECK(!selected());

	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(revents(), POLLIN);
	CHECK(selected());
	CHECK_EQ(revents(), POLLIN);	/* polling consumes nothing */
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	CHECK_EQ(revents(), 0);
	CHECK(!selected());

	/* the written mask takes in the pending SIGUSR2 */
	ps_set_mask(fd, ps_bit(SIGUSR1) | ps_bit(SIGUSR2));
	CHECK_EQ(revents(), POLLIN);
	CHECK(selected());
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR2, SI_USER);
	CHECK_EQ(revents(), 0);
	ps_set_mask(fd, ps_bit(SIGUSR1));

	/* a sleeping poll woken by a signal of the mask */
	CHECK_EQ(pthread_create(&t, NULL, send_after_poll,
				(void *)(intptr_t)SIGUSR1), 0);
	p.fd = fd;
	p.events = POLLIN;
	p.revents = 0;
	CHECK_EQ(poll(&p, 1, PT_WAIT_MS), 1);
	CHECK_EQ(p.revents, POLLIN);
	ps_join(t);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);

	/* not by one outside it: the poll times out */
	CHECK_EQ(pthread_create(&t, NULL, send_after_poll,
				(void *)(intptr_t)SIGUSR2), 0);
	t0 = pt_mono();
	p.revents = 0;
	CHECK_EQ(poll(&p, 1, 500), 0);
	CHECK(pt_mono() - t0 >= MS(490));
	ps_join(t);
	CHECK(ps_pending(SIGUSR2));
	CHECK_EQ(revents(), 0);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
