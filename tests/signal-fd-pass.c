// SPDX-License-Identifier: MIT
/*
 * An object passed to another process over a UNIX socket (SCM_RIGHTS)
 * reads that process's signals there, never the sender's: the sender's
 * pending signal is not readable nor POLLIN in the receiver, which reads
 * the signal sent to it (also in a blocking read, and through epoll),
 * while the sender goes on reading its own.  The two share one object:
 * a mask written by the receiver is the sender's.  Each behaviour is a
 * TEST with a receiver and an object of its own.
 */
#include "lib/signal.h"

#include <sys/epoll.h>
#include <sys/socket.h>

PT_BUDGET(60);

static uint64_t mask;	/* SIGUSR1 and SIGUSR2 */
static int sock[2];
static pid_t sender;

static void expect_word(int s, char w)
{
	char c = 0;

	if (!pt_poll_in(s, PT_WAIT_MS))
		FAIL("no '%c' from the other process within %d ms", w,
		     PT_WAIT_MS);
	CHECK_EQ(read(s, &c, 1), 1);
	CHECK_EQ(c, w);
}

/*
 * Forks the receiver before the object exists, then makes the object
 * (SIGUSR1 and SIGUSR2, both blocked, non-blocking), raises the sender's
 * own SIGUSR1 if asked, and passes the object.  The receiver runs fn on
 * the descriptor it received and exits with its status.
 */
static int pass_object(void (*fn)(int fd), bool sender_pending,
		       pid_t *child)
{
	int fd;

	sender = getpid();
	ps_block(mask);
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock));
	*child = fork();
	CHECK(*child >= 0);
	if (*child == 0) {
		alarm(0);
		fn(pt_recv_fd(sock[1], NULL, 0));
		_exit(PT_PASS);
	}
	fd = ps_signal(mask, POLLFS_NONBLOCK);
	if (sender_pending)
		CHECK_SYS(kill(getpid(), SIGUSR1));
	pt_send_fd(sock[0], fd, NULL, 0);
	return fd;
}

/* Once the receiver is done: the sender's SIGUSR1 is still its own. */
static void sender_reads_its_own(pid_t child, int fd)
{
	struct pollfs_siginfo psi;

	ps_check_exit0(ps_wait_child(child, PT_WAIT_MS));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	CHECK_EQ(psi.psi_pid, getpid());
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
}

static void receiver_own_only(int fd)
{
	struct pollfs_siginfo psi;

	pt_expect_fd_link(fd, "pollfs:[signal]");
	CHECK_EQ(ps_fdinfo_mask(0, fd), mask);

	/* the sender has SIGUSR1 pending: not ours */
	CHECK(!ps_pending(SIGUSR1));
	ps_expect_empty(fd);

	/* our own */
	CHECK_SYS(kill(getpid(), SIGUSR2));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR2, SI_USER);
	CHECK_EQ(psi.psi_pid, getpid());
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
}

TEST(receiver_reads_its_own_signals_not_the_senders)
{
	pid_t child;
	int fd = pass_object(receiver_own_only, true, &child);

	/* ours, pending since before the fd was passed */
	sender_reads_its_own(child, fd);
}

static void receiver_blocking_read(int fd)
{
	struct pollfs_siginfo psi;

	CHECK_SYS(fcntl(fd, F_SETFL, 0));
	pt_send_byte(sock[1], 'R');
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	CHECK_EQ(psi.psi_pid, sender);
	CHECK_SYS(close(fd));
}

/*
 * The receiver says w and sleeps in syscall nr1 (or nr2) on the object;
 * sig, sent to it, wakes it there.  None of it is left for the sender.
 */
static void wake_receiver(void (*fn)(int fd), char w, long nr1, long nr2,
			  int sig)
{
	pid_t child;
	int fd = pass_object(fn, false, &child);

	expect_word(sock[0], w);
	ps_wait_in_syscall(child, child, nr1, nr2);
	CHECK_SYS(kill(child, sig));
	ps_check_exit0(ps_wait_child(child, PT_WAIT_MS));
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
}

TEST(blocking_read_in_the_receiver_woken_by_its_signal)
{
	wake_receiver(receiver_blocking_read, 'R', SYS_read, SYS_read, SIGUSR1);
}

static void receiver_epoll(int fd)
{
	struct pollfs_siginfo psi;
	struct epoll_event e;
	int ep;

	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	memset(&e, 0, sizeof(e));
	e.events = EPOLLIN;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	CHECK_EQ(epoll_wait(ep, &e, 1, 0), 0);
	pt_send_byte(sock[1], 'E');
	CHECK_EQ(epoll_wait(ep, &e, 1, PT_WAIT_MS), 1);
	CHECK_EQ(e.events, EPOLLIN);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR2, SI_USER);
	CHECK_EQ(psi.psi_pid, sender);
	CHECK_SYS(close(ep));
	CHECK_SYS(close(fd));
}

TEST(epoll_in_the_receiver_woken_by_its_signal)
{
	wake_receiver(receiver_epoll, 'E', PT_SYS_EPOLL_WAIT, SYS_epoll_pwait,
		      SIGUSR2);
}

static void receiver_sees_none(int fd)
{
	pt_send_byte(sock[1], 'P');
	expect_word(sock[1], 'S');
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
}

TEST(sender_signal_raised_after_passing_stays_the_senders)
{
	pid_t child;
	int fd = pass_object(receiver_sees_none, false, &child);

	expect_word(sock[0], 'P');
	CHECK_SYS(kill(getpid(), SIGUSR1));
	pt_send_byte(sock[0], 'S');
	sender_reads_its_own(child, fd);
}

static void receiver_sets_mask(int fd)
{
	ps_set_mask(fd, ps_bit(SIGUSR2));
	pt_send_byte(sock[1], 'M');
	CHECK_SYS(close(fd));
	expect_word(sock[1], 'Q');
}

TEST(mask_written_by_the_receiver_is_the_senders)
{
	struct pollfs_siginfo psi;
	pid_t child;
	int fd = pass_object(receiver_sets_mask, true, &child);

	expect_word(sock[0], 'M');
	CHECK_EQ(ps_fdinfo_mask(0, fd), ps_bit(SIGUSR2));
	/* SIGUSR1 pending, no longer in the mask */
	ps_expect_empty(fd);
	ps_set_mask(fd, mask);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	pt_send_byte(sock[0], 'Q');
	ps_check_exit0(ps_wait_child(child, PT_WAIT_MS));
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
}

int main(void)
{
	mask = ps_bit(SIGUSR1) | ps_bit(SIGUSR2);
	return pt_run_tests();
}
