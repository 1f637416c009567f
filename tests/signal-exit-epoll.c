// SPDX-License-Identifier: MIT
/*
 * An epoll instance that outlives the process whose signal queue it
 * watched (the kernel detaches it with wake_up_pollfree when that
 * process's signal handlers go away, as for signalfd): a child registers
 * its object in the parent's epoll instance and hands the object to the
 * parent, then exits, also while one of its threads sleeps in epoll_wait
 * on that instance.  The parent then uses, modifies, removes and closes
 * both without harm (the runner checks the kernel log), and an object
 * registered again by the parent reports the parent's signals.  The two
 * exits (and the two orders of closing) are a TEST each.
 */
#include "lib/signal.h"

#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/socket.h>

PT_BUDGET(60);

static int ep;
static int sock[2];
static atomic_int w_tid;

/* Receives an fd, sent with its number as the data (epoll knows it by
 * that number), and installs it at that number. */
static int recv_fd(int s)
{
	int c = -1;
	int fd = pt_recv_fd(s, &c, sizeof(c));

	if (fd != c) {
		CHECK_ERR(fcntl(c, F_GETFD), EBADF);
		CHECK_EQ(dup3(fd, c, O_CLOEXEC), c);
		CHECK_SYS(close(fd));
	}
	return c;
}

static void *waiter(void *unused)
{
	struct epoll_event e;

	(void)unused;
	w_tid = ps_gettid();
	epoll_wait(ep, &e, 1, -1);
	_exit(3);	/* must not return: nothing the child reads comes */
}

static int child(void *arg)
{
	bool sleeper = arg != NULL;
	struct epoll_event e;
	pthread_t t;
	int fd;

	fd = ps_signal(ps_bit(SIGUSR1), POLLFS_NONBLOCK);
	memset(&e, 0, sizeof(e));
	e.events = EPOLLIN;
	e.data.u64 = 1;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	/* a signal of the child: reported while the child lives */
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(epoll_wait(ep, &e, 1, 0), 1);
	pt_send_fd(sock[1], fd, &fd, sizeof(fd));
	if (sleeper) {
		struct pollfs_siginfo psi;

		CHECK_EQ(ps_read_one(fd, &psi), 1);
		CHECK_EQ(pthread_create(&t, NULL, waiter, NULL), 0);
		while (!w_tid)
			pt_sleep_ms(1);
		ps_wait_in_syscall(getpid(), w_tid, PT_SYS_EPOLL_WAIT,
				   SYS_epoll_pwait);
	}
	exit(0);
}

/*
 * The child (with a thread asleep in epoll_wait if asleep) registers
 * its object in ep and exits; then the parent uses the instance, and
 * closes the two in the order given.
 */
static void outlive(bool asleep, bool close_ep_first)
{
	struct pollfs_siginfo psi;
	struct epoll_event e[2];
	int fd;

	ps_block(ps_bit(SIGUSR1));
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock));
	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	CHECK_EQ(pt_run_child(child, asleep ? (void *)1 : NULL, PT_WAIT_MS),
		 PT_PASS);
	fd = recv_fd(sock[0]);

	/* the child is gone; its queue with it */
	CHECK_SYS(epoll_wait(ep, e, 2, 50));
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_SYS(epoll_wait(ep, e, 2, 50));
	e[0].events = EPOLLIN | EPOLLET;
	e[0].data.u64 = 2;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &e[0]));
	CHECK_SYS(epoll_wait(ep, e, 2, 50));
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL));
	CHECK_EQ(epoll_wait(ep, e, 2, 0), 0);

	/* registered again here: the parent's signal */
	e[0].events = EPOLLIN;
	e[0].data.u64 = 3;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e[0]));
	CHECK_EQ(epoll_wait(ep, e, 2, 0), 1);
	CHECK_EQ(e[0].data.u64, 3);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	CHECK_EQ(psi.psi_pid, getpid());
	CHECK_EQ(epoll_wait(ep, e, 2, 0), 0);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(epoll_wait(ep, e, 2, PT_WAIT_MS), 1);
	CHECK_EQ(ps_read_one(fd, &psi), 1);

	if (close_ep_first) {
		CHECK_SYS(close(ep));
		CHECK_SYS(close(fd));
	} else {
		CHECK_SYS(close(fd));
		CHECK_SYS(close(ep));
	}
}

TEST(registrant_exits_object_closed_first)
{
	outlive(false, false);
}

TEST(registrant_exits_asleep_in_epoll_epoll_closed_first)
{
	outlive(true, true);
}

int main(void)
{
	return pt_run_tests();
}
