// SPDX-License-Identifier: MIT
/*
 * A signal sent to one thread with tgkill(2) is pending for that thread
 * only: it reads it (psi_code SI_TKILL, psi_pid and psi_uid of the
 * sender) and polls readable, while another thread of the same process
 * reading or polling the same object finds nothing.
 */
#include "lib/signal.h"

PT_BUDGET(30);

static int fd;
static int to_t[2], to_main[2];
static pid_t main_tid, t_tid;
static pid_t sender;

static void check_tkill(const struct pollfs_siginfo *psi, int sig, pid_t pid)
{
	ps_check_sig(psi, sig, SI_TKILL);
	CHECK_EQ(psi->psi_pid, pid);
	CHECK_EQ(psi->psi_uid, getuid());
	CHECK_EQ(psi->psi_int, 0);
	CHECK_EQ(psi->psi_ptr, 0);
}

static void *thread(void *unused)
{
	struct pollfs_siginfo psi;

	(void)unused;
	t_tid = ps_gettid();
	ps_post(to_main[1]);

	/* main sent SIGUSR1 to this thread and found nothing */
	ps_wait_post(to_t[0]);
	CHECK(ps_pending(SIGUSR1));
	CHECK(pt_poll_in(fd, 0));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	check_tkill(&psi, SIGUSR1, getpid());
	ps_expect_empty(fd);

	/* now one for the main thread: not this thread's */
	CHECK_SYS(ps_tgkill(getpid(), main_tid, SIGUSR2));
	ps_expect_empty(fd);
	CHECK(!ps_pending(SIGUSR2));
	ps_post(to_main[1]);

	/* another process sent SIGUSR1 to this thread */
	ps_wait_post(to_t[0]);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	check_tkill(&psi, SIGUSR1, sender);
	ps_expect_empty(fd);

	/* raise() is a tgkill to oneself */
	CHECK_SYS(raise(SIGUSR2));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	check_tkill(&psi, SIGUSR2, getpid());
	ps_expect_empty(fd);
	return NULL;
}

int main(void)
{
	uint64_t mask = ps_bit(SIGUSR1) | ps_bit(SIGUSR2);
	struct pollfs_siginfo psi;
	pthread_t t;
	pid_t pid = getpid();

	ps_block(mask);
	main_tid = ps_gettid();
	CHECK_SYS(pipe2(to_t, O_CLOEXEC));
	CHECK_SYS(pipe2(to_main, O_CLOEXEC));
	fd = ps_signal(mask, POLLFS_NONBLOCK);
	CHECK_EQ(pthread_create(&t, NULL, thread, NULL), 0);
	ps_wait_post(to_main[0]);

	CHECK_SYS(ps_tgkill(pid, t_tid, SIGUSR1));
	ps_expect_empty(fd);
	CHECK(!ps_pending(SIGUSR1));
	ps_post(to_t[1]);

	ps_wait_post(to_main[0]);
	CHECK(ps_pending(SIGUSR2));
	CHECK(pt_poll_in(fd, 0));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	check_tkill(&psi, SIGUSR2, pid);
	ps_expect_empty(fd);

	sender = fork();
	CHECK(sender >= 0);
	if (sender == 0)
		_exit(ps_tgkill(pid, t_tid, SIGUSR1) ? 1 : 0);
	ps_check_exit0(ps_wait_child(sender, PT_WAIT_MS));
	ps_expect_empty(fd);
	ps_post(to_t[1]);
	ps_join(t);
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
