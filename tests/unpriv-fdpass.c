// SPDX-License-Identifier: MIT
/*
 * A pollfs descriptor passed to another process, of another user, over
 * a UNIX socket gives it nothing of the sender's.  The receiver is uid
 * 65534 when the test runs as root (the same user otherwise).  Each
 * TEST passes the descriptors it needs to a receiver of its own:
 *  - signals: a signal object reads the signals of whoever reads it.
 *    The receiver reads none of the sender's pending signals, only its
 *    own (its pid, its uid, its value); the sender's stay pending for it;
 *  - futex: a private futex object the sender armed is a waiter on the
 *    sender's memory: the receiver's private wakes (and shared ones) at
 *    the same address, which in its own memory is another futex, count
 *    nothing and leave the object unwoken; the sender's own wake does;
 *  - arming writes in the writer's memory: the receiver arming a passed
 *    object on an address it cannot read - mapped only in the sender, a
 *    PROT_NONE page, a kernel address - gets EFAULT; on its own word it
 *    works, woken by its own wake.  The sender, likewise, on what it
 *    cannot read;
 *  - AIO: the receiver cannot create an object for the sender's context,
 *    through its own /dev/pollfs handle nor the sender's (EINVAL), even
 *    with a page of its own at the context's address.
 */
#include "lib/futex.h"

#include <linux/aio_abi.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

PT_BUDGET(60);

#define MAX_FDS	4

struct msg {
	uint64_t ctx;
	uint64_t sender_only;	/* a word mapped only in the sender */
	pid_t sender;
	int nfds;
};

static uint32_t word = 41;	/* at the same address in both processes */

static void block_sigusr1(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &set, NULL));
}

typedef void receiver_fn(const int *fds, const struct msg *m);

struct receiver {
	int sock;
	pid_t pid;
};

/*
 * Forks the receiver before the sender makes anything it passes: the
 * receiver shares none of it but through the socket.  It becomes nobody,
 * takes the descriptors, runs fn, closes them and says it is done.
 */
static struct receiver receiver_start(receiver_fn *fn)
{
	struct receiver r;
	struct msg m;
	int sv[2], fds[MAX_FDS];
	char ok = 1;

	block_sigusr1();
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	r.pid = fx_fork();
	if (r.pid == 0) {
		close(sv[0]);
		if (geteuid() == 0)
			pt_become_nobody();
		CHECK_EQ(pt_recv_fds(sv[1], fds, MAX_FDS, &m, sizeof(m)),
			 m.nfds);
		pt_diag("receiver: pid %d uid %d got %d of the sender's "
			"(pid %d) descriptors", (int)getpid(), (int)getuid(),
			m.nfds, (int)m.sender);
		fn(fds, &m);
		for (int i = 0; i < m.nfds; i++)
			CHECK_SYS(close(fds[i]));
		CHECK_EQ(write(sv[1], &ok, 1), 1);
		_exit(PT_PASS);
	}
	close(sv[1]);
	r.sock = sv[0];
	return r;
}

/* Passes the descriptors and waits for the receiver to pass its checks. */
static void receiver_run(struct receiver r, const int *fds, struct msg *m)
{
	int status;
	char c;

	m->sender = getpid();
	pt_send_fds(r.sock, fds, m->nfds, m, sizeof(*m));
	if (read(r.sock, &c, 1) != 1)
		pt_diag("the receiver ended without reporting");
	CHECK_EQ(waitpid(r.pid, &status, 0), r.pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != PT_PASS)
		FAIL("receiver: status %#x", status);
	CHECK_SYS(close(r.sock));
}

/* A word of a page mapped after the receiver's fork: only here, 9. */
static uint32_t *sender_only_word(struct msg *m)
{
	uint32_t *only = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(only != MAP_FAILED);
	*only = 9;
	m->sender_only = (uintptr_t)only;
	return only;
}

static void signal_receiver(const int *fds, const struct msg *m)
{
	union sigval v = { .sival_int = 2222 };
	struct pollfs_siginfo si;

	(void)m;
	CHECK(!pt_poll_in(fds[0], 0));
	CHECK_ERR(pt_read_nb(fds[0], &si, sizeof(si)), EAGAIN);
	CHECK_SYS(sigqueue(getpid(), SIGUSR1, v));
	CHECK_EQ(pt_read_nb(fds[0], &si, sizeof(si)), (long)sizeof(si));
	CHECK_EQ(si.psi_signo, SIGUSR1);
	CHECK_EQ(si.psi_int, 2222);
	CHECK_EQ(si.psi_pid, getpid());
	CHECK_EQ(si.psi_uid, getuid());
	CHECK_ERR(pt_read_nb(fds[0], &si, sizeof(si)), EAGAIN);
}

TEST(signal_object_reads_only_the_readers_signals)
{
	struct pollfs_signal_open so = { 1ull << (SIGUSR1 - 1), 0, 0 };
	struct receiver r = receiver_start(signal_receiver);
	union sigval v = { .sival_int = 1111 };
	struct msg m = { .nfds = 1 };
	struct pollfs_siginfo si;
	int dev = pt_dev(), fd;

	fd = CHECK_SYS(ioctl(dev, POLLFS_IOC_SIGNAL, &so));
	CHECK_SYS(sigqueue(getpid(), SIGUSR1, v));
	receiver_run(r, &fd, &m);
	/* the sender's signal is still its own to read */
	CHECK_EQ(pt_read_nb(fd, &si, sizeof(si)), (long)sizeof(si));
	CHECK_EQ(si.psi_signo, SIGUSR1);
	CHECK_EQ(si.psi_int, 1111);
	CHECK_EQ(si.psi_pid, getpid());
	CHECK_EQ(si.psi_uid, getuid());
	CHECK_SYS(close(fd));
	CHECK_SYS(close(dev));
}

static void futex_receiver(const int *fds, const struct msg *m)
{
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_SHARED), 0);
	CHECK_EQ(fx_futex((void *)(uintptr_t)m->sender_only,
			  fx_op(FUTEX_WAKE, FX_PRIVATE), INT_MAX, 0, NULL, 0),
		 0);
	fx_expect_armed(fds[0]);
}

TEST(private_futex_is_woken_only_in_the_armers_memory)
{
	struct receiver r = receiver_start(futex_receiver);
	struct msg m = { .nfds = 1 };
	int fd;

	sender_only_word(&m);
	fd = fx_new(0);
	fx_arm(fd, &word, 41, FX_PRIVATE);
	receiver_run(r, &fd, &m);
	/* still armed, woken by the sender's wake */
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(fd, &word, 41, FX_PRIVATE);
	CHECK_SYS(close(fd));
}

static void arming_receiver(const int *fds, const struct msg *m)
{
	void *none, *sender_only = (void *)(uintptr_t)m->sender_only;

	none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(none != MAP_FAILED);
	CHECK_ERR(fx_write1(fds[0], sender_only, 0, FX_PRIVATE), EFAULT);
	CHECK_ERR(fx_write1(fds[0], sender_only, 0, FX_SHARED), EFAULT);
	CHECK_ERR(fx_write1(fds[0], none, 0, FX_PRIVATE), EFAULT);
	CHECK_ERR(fx_write1(fds[0], none, 0, FX_SHARED), EFAULT);
	CHECK_ERR(fx_write1(fds[0], (void *)0xffffffff81000000ull, 0,
			    FX_PRIVATE), EFAULT);
	CHECK_ERR(fx_write1(fds[0], (void *)0xffff888000000000ull, 0,
			    FX_SHARED), EFAULT);
	fx_expect_unarmed(fds[0]);
	word = 77;
	fx_arm(fds[0], &word, 77, FX_PRIVATE);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(fds[0], &word, 77, FX_PRIVATE);
}

TEST(arming_on_unreadable_memory_is_efault)
{
	struct receiver r = receiver_start(arming_receiver);
	struct msg m = { .nfds = 1 };
	uint32_t *only = sender_only_word(&m);
	int fd;

	fd = fx_new(0);
	receiver_run(r, &fd, &m);
	/* what the sender cannot read, it cannot arm on either */
	CHECK_ERR(fx_write1(fd, (void *)0xffffffff81000000ull, 0,
			    FX_PRIVATE), EFAULT);
	CHECK_SYS(mprotect(only, 4096, PROT_NONE));
	CHECK_ERR(fx_write1(fd, only, 9, FX_PRIVATE), EFAULT);
	CHECK_ERR(fx_write1(fd, only, 9, FX_SHARED), EFAULT);
	fx_expect_unarmed(fd);
	CHECK_SYS(close(fd));
}

/* fds: the sender's /dev/pollfs handle, its object on its context. */
static void aio_receiver(const int *fds, const struct msg *m)
{
	struct pollfs_aio_open o = { m->ctx, 0, 0 };
	struct pollfs_aio_event ae;
	aio_context_t own = 0;
	int own_dev = pt_dev(), fd;
	void *fake;

	CHECK_ERR(ioctl(fds[0], POLLFS_IOC_AIO, &o), EINVAL);
	CHECK_ERR(ioctl(own_dev, POLLFS_IOC_AIO, &o), EINVAL);
	/* a context of our own, and a page of ours where the sender's
	 * ring is, holding the ring's header */
	CHECK_SYS(syscall(SYS_io_setup, 4, &own));
	fake = mmap((void *)(uintptr_t)m->ctx, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (fake != MAP_FAILED) {
		memcpy(fake, (void *)(uintptr_t)own, 32);
		CHECK_ERR(ioctl(fds[0], POLLFS_IOC_AIO, &o), EINVAL);
		CHECK_ERR(ioctl(own_dev, POLLFS_IOC_AIO, &o), EINVAL);
	} else {
		pt_diag("the sender's context address is taken here: %s",
			strerror(errno));
	}
	/* our own context works through the sender's handle */
	o.ctx = own;
	fd = CHECK_SYS(ioctl(fds[0], POLLFS_IOC_AIO, &o));
	CHECK_ERR(pt_read_nb(fd, &ae, sizeof(ae)), EAGAIN);
	CHECK_SYS(close(fd));
	CHECK_SYS(syscall(SYS_io_destroy, own));
	CHECK_SYS(close(own_dev));
}

TEST(no_object_for_another_process_aio_context)
{
	struct receiver r = receiver_start(aio_receiver);
	struct pollfs_aio_open ao = { 0, 0, 0 };
	struct msg m = { .nfds = 2 };
	struct pollfs_aio_event ae;
	aio_context_t ctx = 0;
	int fds[2];

	CHECK_SYS(syscall(SYS_io_setup, 4, &ctx));
	fds[0] = pt_dev();
	ao.ctx = ctx;
	fds[1] = CHECK_SYS(ioctl(fds[0], POLLFS_IOC_AIO, &ao));
	m.ctx = ctx;
	receiver_run(r, fds, &m);
	/* the sender's object still follows its context */
	CHECK_ERR(pt_read_nb(fds[1], &ae, sizeof(ae)), EAGAIN);
	CHECK_SYS(syscall(SYS_io_destroy, ctx));
	CHECK_EQ(pt_read_nb(fds[1], &ae, sizeof(ae)), 0);
	CHECK_SYS(close(fds[1]));
	CHECK_SYS(close(fds[0]));
}

int main(void)
{
	if (geteuid() != 0)
		pt_diag("not root: the receiver runs as uid %d too",
			(int)getuid());
	return pt_run_tests();
}
