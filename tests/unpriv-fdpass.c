// SPDX-License-Identifier: MIT
/*
 * A pollfs descriptor passed to another process, of another user, over
 * a UNIX socket gives it nothing of the sender's:
 *  - signals: a signal object reads the signals of whoever reads it.
 *    The receiver (uid 65534 when the test runs as root; the same user
 *    otherwise) reads none of the sender's pending signals, only its own
 *    (its pid, its uid, its value); the sender's stay pending for it;
 *  - futex: a private futex object the sender armed is a waiter on the
 *    sender's memory: the receiver's private wakes (and shared ones) at
 *    the same address, which in its own memory is another futex, count
 *    nothing and leave the object unwoken; the sender's own wake does;
 *  - AIO: the receiver cannot create an object for the sender's context,
 *    through its own /dev/pollfs handle nor the sender's (EINVAL), even
 *    with a page of its own at the context's address;
 *  - arming writes in the writer's memory: the receiver arming a passed
 *    object on an address it cannot read - mapped only in the sender, a
 *    PROT_NONE page, a kernel address - gets EFAULT; on its own word it
 *    works, woken by its own wake.
 */
#include "lib/futex.h"

#include <linux/aio_abi.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

PT_BUDGET(50);

#define NFD 5	/* dev, signal, armed futex, spare futex, aio */

struct msg {
	uint64_t ctx;
	uint64_t sender_only;	/* a word mapped only in the sender */
	uint32_t armed_val;
	pid_t sender;
};

static uint32_t word = 41;	/* at the same address in both processes */

static void send_fds(int sock, const int *fds, const struct msg *m)
{
	char cbuf[CMSG_SPACE(NFD * sizeof(int))];
	struct iovec iov = { (void *)m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(NFD * sizeof(int));
	memcpy(CMSG_DATA(c), fds, NFD * sizeof(int));
	CHECK_EQ(sendmsg(sock, &mh, 0), (long)sizeof(*m));
}

static void recv_fds(int sock, int *fds, struct msg *m)
{
	char cbuf[CMSG_SPACE(NFD * sizeof(int))];
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;

	CHECK_EQ(recvmsg(sock, &mh, MSG_CMSG_CLOEXEC), (long)sizeof(*m));
	c = CMSG_FIRSTHDR(&mh);
	CHECK(c && c->cmsg_type == SCM_RIGHTS &&
	      c->cmsg_len == CMSG_LEN(NFD * sizeof(int)));
	memcpy(fds, CMSG_DATA(c), NFD * sizeof(int));
}

static void block(int sig)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &set, NULL));
}

static int receiver(int sock)
{
	struct pollfs_siginfo si;
	struct pollfs_futex_event ev;
	struct msg m;
	int fds[NFD], own_dev;
	void *none;
	char ok = 1;

	if (geteuid() == 0)
		pt_become_nobody();
	block(SIGUSR1);
	recv_fds(sock, fds, &m);
	pt_diag("receiver: pid %d uid %d got the sender's (pid %d) dev, "
		"signal, futex and AIO descriptors", (int)getpid(),
		(int)getuid(), (int)m.sender);

	/* signals: none of the sender's pending ones */
	CHECK(!pt_poll_in(fds[1], 0));
	CHECK_ERR(fx_read_nb(fds[1], &si, sizeof(si)), EAGAIN);
	{
		union sigval v = { .sival_int = 2222 };

		CHECK_SYS(sigqueue(getpid(), SIGUSR1, v));
	}
	CHECK_EQ(fx_read_nb(fds[1], &si, sizeof(si)), (long)sizeof(si));
	CHECK_EQ(si.psi_signo, SIGUSR1);
	CHECK_EQ(si.psi_int, 2222);
	CHECK_EQ(si.psi_pid, getpid());
	CHECK_EQ(si.psi_uid, getuid());
	CHECK_ERR(fx_read_nb(fds[1], &si, sizeof(si)), EAGAIN);

	/* futex: our wakes at the sender's address are another futex */
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_SHARED), 0);
	CHECK_EQ(fx_futex((void *)(uintptr_t)m.sender_only,
			  fx_op(FUTEX_WAKE, FX_PRIVATE), INT_MAX, 0, NULL, 0),
		 0);
	fx_expect_armed(fds[2]);

	/* arming in our own memory: what we cannot read is EFAULT */
	none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(none != MAP_FAILED);
	CHECK_ERR(fx_write1(fds[3], (void *)(uintptr_t)m.sender_only, 0,
			    FX_PRIVATE), EFAULT);
	CHECK_ERR(fx_write1(fds[3], (void *)(uintptr_t)m.sender_only, 0,
			    FX_SHARED), EFAULT);
	CHECK_ERR(fx_write1(fds[3], none, 0, FX_PRIVATE), EFAULT);
	CHECK_ERR(fx_write1(fds[3], none, 0, FX_SHARED), EFAULT);
	CHECK_ERR(fx_write1(fds[3], (void *)0xffffffff81000000ull, 0,
			    FX_PRIVATE), EFAULT);
	CHECK_ERR(fx_write1(fds[3], (void *)0xffff888000000000ull, 0,
			    FX_SHARED), EFAULT);
	fx_expect_unarmed(fds[3]);
	word = 77;
	fx_arm(fds[3], &word, 77, FX_PRIVATE);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(fds[3], &word, 77, FX_PRIVATE);

	/* aio: no object for the sender's context, by any handle */
	{
		struct pollfs_aio_open o = { m.ctx, 0, 0 };
		aio_context_t own = 0;
		void *fake;

		own_dev = pt_dev();
		CHECK_ERR(ioctl(fds[0], POLLFS_IOC_AIO, &o), EINVAL);
		CHECK_ERR(ioctl(own_dev, POLLFS_IOC_AIO, &o), EINVAL);
		/* a context of our own, and a page of ours where the
		 * sender's ring is, holding the ring's header */
		CHECK_SYS(syscall(SYS_io_setup, 4, &own));
		fake = mmap((void *)(uintptr_t)m.ctx, 4096,
			    PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			    -1, 0);
		if (fake != MAP_FAILED) {
			memcpy(fake, (void *)(uintptr_t)own, 32);
			CHECK_ERR(ioctl(fds[0], POLLFS_IOC_AIO, &o), EINVAL);
			CHECK_ERR(ioctl(own_dev, POLLFS_IOC_AIO, &o), EINVAL);
		}
		/* our own context works through the sender's handle */
		o.ctx = own;
		{
			int fd = CHECK_SYS(ioctl(fds[0], POLLFS_IOC_AIO, &o));
			struct pollfs_aio_event ae;

			CHECK_ERR(fx_read_nb(fd, &ae, sizeof(ae)), EAGAIN);
			CHECK_SYS(close(fd));
		}
		CHECK_SYS(syscall(SYS_io_destroy, own));
		CHECK_SYS(close(own_dev));
	}
	(void)ev;
	for (int i = 0; i < NFD; i++)
		CHECK_SYS(close(fds[i]));
	CHECK_EQ(write(sock, &ok, 1), 1);
	return PT_PASS;
}

int main(void)
{
	struct pollfs_signal_open so = { 1ull << (SIGUSR1 - 1), 0, 0 };
	struct pollfs_open fo = { 0, 0 };
	struct pollfs_siginfo si;
	struct pollfs_aio_open ao = { 0, 0, 0 };
	aio_context_t ctx = 0;
	struct msg m;
	int sv[2], fds[NFD], status;
	uint32_t *only;
	pid_t pid;
	char c;

	if (geteuid() != 0)
		pt_diag("not root: the receiver runs as uid %d too",
			(int)getuid());
	block(SIGUSR1);
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fx_fork();
	if (pid == 0) {
		close(sv[0]);
		_exit(receiver(sv[1]));
	}
	close(sv[1]);

	/* after the fork: the receiver has none of this */
	only = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(only != MAP_FAILED);
	*only = 9;
	CHECK_SYS(syscall(SYS_io_setup, 4, &ctx));
	fds[0] = pt_dev();
	fds[1] = CHECK_SYS(ioctl(fds[0], POLLFS_IOC_SIGNAL, &so));
	fds[2] = CHECK_SYS(ioctl(fds[0], POLLFS_IOC_FUTEX, &fo));
	fds[3] = CHECK_SYS(ioctl(fds[0], POLLFS_IOC_FUTEX, &fo));
	ao.ctx = ctx;
	fds[4] = CHECK_SYS(ioctl(fds[0], POLLFS_IOC_AIO, &ao));
	{
		union sigval v = { .sival_int = 1111 };

		CHECK_SYS(sigqueue(getpid(), SIGUSR1, v));
	}
	fx_arm(fds[2], &word, 41, FX_PRIVATE);

	memset(&m, 0, sizeof(m));
	m.ctx = ctx;
	m.sender_only = (uintptr_t)only;
	m.armed_val = 41;
	m.sender = getpid();
	send_fds(sv[0], fds, &m);
	if (read(sv[0], &c, 1) != 1)
		pt_diag("the receiver ended without reporting");
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != PT_PASS)
		FAIL("receiver: status %#x", status);

	/* the sender's signal is still its own to read */
	CHECK_EQ(fx_read_nb(fds[1], &si, sizeof(si)), (long)sizeof(si));
	CHECK_EQ(si.psi_signo, SIGUSR1);
	CHECK_EQ(si.psi_int, 1111);
	CHECK_EQ(si.psi_pid, getpid());
	CHECK_EQ(si.psi_uid, getuid());
	/* the armed futex: still armed, woken by the sender's wake */
	fx_expect_armed(fds[2]);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(fds[2], &word, 41, FX_PRIVATE);
	/* and what the sender cannot read, it cannot arm on either */
	CHECK_ERR(fx_write1(fds[3], (void *)0xffffffff81000000ull, 0,
			    FX_PRIVATE), EFAULT);
	CHECK_SYS(mprotect(only, 4096, PROT_NONE));
	CHECK_ERR(fx_write1(fds[3], only, 9, FX_PRIVATE), EFAULT);
	CHECK_ERR(fx_write1(fds[3], only, 9, FX_SHARED), EFAULT);
	for (int i = 0; i < NFD; i++)
		CHECK_SYS(close(fds[i]));
	CHECK_SYS(syscall(SYS_io_destroy, ctx));
	return PT_PASS;
}
