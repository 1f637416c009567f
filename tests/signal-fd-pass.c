// SPDX-License-Identifier: MIT
/*
 * An object passed to another process over a UNIX socket (SCM_RIGHTS)
 * reads that process's signals there, never the sender's: the sender's
 * pending signal is not readable nor POLLIN in the receiver, which reads
 * the signal sent to it (also in a blocking read, and through epoll),
 * while the sender goes on reading its own.  The two share one object:
 * a mask written by the receiver is the sender's.
 */
#include "lib/signal.h"

#include <sys/epoll.h>
#include <sys/socket.h>

PT_BUDGET(60);

static int sock[2];
static pid_t sender;

static void send_fd(int s, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr msg;
	struct cmsghdr *cm;
	struct iovec iov;
	char c = 'F';

	memset(&msg, 0, sizeof(msg));
	memset(cbuf, 0, sizeof(cbuf));
	iov.iov_base = &c;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	CHECK_EQ(sendmsg(s, &msg, 0), 1);
}

static int recv_fd(int s)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr msg;
	struct cmsghdr *cm;
	struct iovec iov;
	char c;
	int fd;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &c;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	CHECK_EQ(recvmsg(s, &msg, MSG_CMSG_CLOEXEC), 1);
	cm = CMSG_FIRSTHDR(&msg);
	CHECK(cm && cm->cmsg_level == SOL_SOCKET &&
	      cm->cmsg_type == SCM_RIGHTS &&
	      cm->cmsg_len == CMSG_LEN(sizeof(int)));
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

static void word(int s, char w)
{
	CHECK_EQ(write(s, &w, 1), 1);
}

static void expect_word(int s, char w)
{
	char c = 0;

	if (!pt_poll_in(s, PT_WAIT_MS))
		FAIL("no '%c' from the other process within %d ms", w,
		     PT_WAIT_MS);
	CHECK_EQ(read(s, &c, 1), 1);
	CHECK_EQ(c, w);
}

static int receiver(void)
{
	struct pollfs_siginfo psi;
	struct epoll_event e;
	char path[64], target[64];
	int fd, ep;
	ssize_t n;

	fd = recv_fd(sock[1]);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = CHECK_SYS(readlink(path, target, sizeof(target) - 1));
	target[n] = 0;
	CHECK(strcmp(target, "pollfs:[signal]") == 0);
	CHECK_EQ(ps_fdinfo_mask(0, fd), ps_bit(SIGUSR1) | ps_bit(SIGUSR2));

	/* the sender has SIGUSR1 pending: not ours */
	CHECK(!ps_pending(SIGUSR1));
	ps_expect_empty(fd);

	/* our own */
	CHECK_SYS(kill(getpid(), SIGUSR2));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR2, SI_USER);
	CHECK_EQ(psi.psi_pid, getpid());
	ps_expect_empty(fd);

	/* a blocking read woken by the sender's signal to us */
	CHECK_SYS(fcntl(fd, F_SETFL, 0));
	word(sock[1], 'R');
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	CHECK_EQ(psi.psi_pid, sender);
	CHECK_SYS(fcntl(fd, F_SETFL, O_NONBLOCK));

	/* epoll, woken by the sender's signal to us */
	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	memset(&e, 0, sizeof(e));
	e.events = EPOLLIN;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	CHECK_EQ(epoll_wait(ep, &e, 1, 0), 0);
	word(sock[1], 'E');
	CHECK_EQ(epoll_wait(ep, &e, 1, PT_WAIT_MS), 1);
	CHECK_EQ(e.events, EPOLLIN);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR2, SI_USER);
	CHECK_EQ(psi.psi_pid, sender);
	CHECK_SYS(close(ep));

	/* the sender sent itself another one meanwhile: still not ours */
	expect_word(sock[1], 'S');
	ps_expect_empty(fd);

	/* a mask written here is the sender's too */
	ps_set_mask(fd, ps_bit(SIGUSR2));
	word(sock[1], 'M');
	CHECK_SYS(close(fd));
	expect_word(sock[1], 'Q');
	return PT_PASS;
}

int main(void)
{
	uint64_t mask = ps_bit(SIGUSR1) | ps_bit(SIGUSR2);
	struct pollfs_siginfo psi;
	pid_t child;
	int fd;

	sender = getpid();
	ps_block(mask);
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock));

	/* the receiver is forked before the object exists */
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		alarm(0);
		_exit(receiver());
	}
	fd = ps_signal(mask, POLLFS_NONBLOCK);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	send_fd(sock[0], fd);

	expect_word(sock[0], 'R');
	ps_wait_in_syscall(child, child, SYS_read, SYS_read);
	CHECK_SYS(kill(child, SIGUSR1));

	expect_word(sock[0], 'E');
	ps_wait_in_syscall(child, child, SYS_epoll_wait, SYS_epoll_pwait);
	CHECK_SYS(kill(child, SIGUSR2));

	/* ours, pending since before the fd was passed */
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	CHECK_EQ(psi.psi_pid, getpid());
	ps_expect_empty(fd);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	word(sock[0], 'S');

	expect_word(sock[0], 'M');
	CHECK_EQ(ps_fdinfo_mask(0, fd), ps_bit(SIGUSR2));
	/* SIGUSR1 pending, no longer in the mask */
	ps_expect_empty(fd);
	ps_set_mask(fd, mask);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	word(sock[0], 'Q');
	ps_check_exit0(ps_wait_child(child, PT_WAIT_MS));
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
