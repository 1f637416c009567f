// SPDX-License-Identifier: MIT
/*
 * The record of a signal is the one signalfd gives for it: struct
 * pollfs_siginfo has struct signalfd_siginfo's size and field offsets,
 * and the same signal read once through signalfd and once through the
 * object (kill, tgkill, sigqueue with a value, a POSIX timer, SIGCHLD)
 * gives the same 128 bytes (for SIGCHLD, all but the child's pid and
 * CPU times).  Also what differs: the object's mask is written with
 * write(2), which signalfd refuses, and lseek is ESPIPE where signalfd
 * allows it.  Each source of a signal, and what differs, is a TEST of
 * its own, with a signalfd and an object of its own (a fixture); after
 * each source both see nothing.
 */
#include "lib/signal.h"

#include <stddef.h>
#include <sys/signalfd.h>

PT_BUDGET(60);

#define SAME(f, g)							\
	_Static_assert(offsetof(struct pollfs_siginfo, f) ==		\
		       offsetof(struct signalfd_siginfo, g) &&		\
		       sizeof(((struct pollfs_siginfo *)0)->f) ==	\
		       sizeof(((struct signalfd_siginfo *)0)->g), #f)

SAME(psi_signo, ssi_signo);
SAME(psi_errno, ssi_errno);
SAME(psi_code, ssi_code);
SAME(psi_pid, ssi_pid);
SAME(psi_uid, ssi_uid);
SAME(psi_fd, ssi_fd);
SAME(psi_tid, ssi_tid);
SAME(psi_band, ssi_band);
SAME(psi_overrun, ssi_overrun);
SAME(psi_trapno, ssi_trapno);
SAME(psi_status, ssi_status);
SAME(psi_int, ssi_int);
SAME(psi_ptr, ssi_ptr);
SAME(psi_utime, ssi_utime);
SAME(psi_stime, ssi_stime);
SAME(psi_addr, ssi_addr);
SAME(psi_addr_lsb, ssi_addr_lsb);
SAME(psi_syscall, ssi_syscall);
SAME(psi_call_addr, ssi_call_addr);
SAME(psi_arch, ssi_arch);
_Static_assert(sizeof(struct pollfs_siginfo) ==
	       sizeof(struct signalfd_siginfo), "size");

#define RT	(SIGRTMIN + 1)
#define MASK	(ps_bit(RT) | ps_bit(SIGCHLD))

/* A signalfd and an object, both O_NONBLOCK, of RT and SIGCHLD. */
FIXTURE(pair) {
	int pfd, sfd;
};

FIXTURE_SETUP(pair)
{
	sigset_t set;

	ps_sigset(&set, MASK);
	self->sfd = CHECK_SYS(signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
	self->pfd = ps_signal(MASK, POLLFS_NONBLOCK | POLLFS_CLOEXEC);
}

FIXTURE_TEARDOWN(pair)
{
	CHECK_SYS(close(self->sfd));
	CHECK_SYS(close(self->pfd));
}

static void read_both(const struct pt_fixture_pair *self,
		      struct pollfs_siginfo *p, struct signalfd_siginfo *s)
{
	memset(s, 0xa5, sizeof(*s));
	CHECK_EQ(read(self->sfd, s, sizeof(*s)), 128);
	CHECK_EQ(ps_read_one(self->pfd, p), 1);
}

static void compare(const struct pt_fixture_pair *self, const char *what)
{
	struct pollfs_siginfo p;
	struct signalfd_siginfo s;

	read_both(self, &p, &s);
	if (memcmp(&p, &s, 128)) {
		const unsigned char *a = (const void *)&p;
		const unsigned char *b = (const void *)&s;

		for (int i = 0; i < 128; i++)
			if (a[i] != b[i])
				FAIL("%s: byte %d differs: pollfs %#x, "
				     "signalfd %#x", what, i, a[i], b[i]);
	}
	CHECK(p.psi_signo != 0);
}

/* Both see nothing now. */
static void expect_both_empty(const struct pt_fixture_pair *self)
{
	struct signalfd_siginfo s;

	CHECK_ERR(read(self->sfd, &s, sizeof(s)), EAGAIN);
	ps_expect_empty(self->pfd);
}

/* kill: a real-time signal queues twice */
TEST_F(pair, kill)
{
	CHECK_SYS(kill(getpid(), RT));
	CHECK_SYS(kill(getpid(), RT));
	compare(self, "kill");
	expect_both_empty(self);
}

TEST_F(pair, tgkill)
{
	CHECK_SYS(ps_tgkill(getpid(), ps_gettid(), RT));
	CHECK_SYS(ps_tgkill(getpid(), ps_gettid(), RT));
	compare(self, "tgkill");
	expect_both_empty(self);
}

TEST_F(pair, sigqueue_int)
{
	ps_queue_int(getpid(), RT, -5);
	ps_queue_int(getpid(), RT, -5);
	compare(self, "sigqueue int");
	expect_both_empty(self);
}

TEST_F(pair, sigqueue_ptr)
{
	ps_queue_ptr(getpid(), RT, (void *)(uintptr_t)0x8877665544332211ULL);
	ps_queue_ptr(getpid(), RT, (void *)(uintptr_t)0x8877665544332211ULL);
	compare(self, "sigqueue ptr");
	expect_both_empty(self);
}

/* A POSIX timer, fired twice. */
TEST_F(pair, posix_timer)
{
	struct pollfs_siginfo p;
	struct signalfd_siginfo s;
	struct itimerspec its;
	struct sigevent sev;
	int id = -1;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = RT;
	sev.sigev_value.sival_ptr = (void *)(uintptr_t)0x0102030405060708ULL;
	CHECK_SYS(syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &id));
	memset(&its, 0, sizeof(its));
	its.it_value.tv_nsec = 1000000;
	CHECK_SYS(syscall(SYS_timer_settime, id, 0, &its, NULL));
	pt_wait_readable(self->pfd, PT_WAIT_MS);
	memset(&s, 0xa5, sizeof(s));
	CHECK_EQ(read(self->sfd, &s, sizeof(s)), 128);
	CHECK_SYS(syscall(SYS_timer_settime, id, 0, &its, NULL));
	pt_wait_readable(self->pfd, PT_WAIT_MS);
	CHECK_EQ(ps_read_one(self->pfd, &p), 1);
	CHECK_EQ(p.psi_code, SI_TIMER);
	CHECK(memcmp(&p, &s, 128) == 0);
	CHECK_SYS(syscall(SYS_timer_delete, id));
	expect_both_empty(self);
}

/* SIGCHLD of two children with the same status. */
TEST_F(pair, sigchld)
{
	struct pollfs_siginfo p;
	struct signalfd_siginfo s;
	pid_t c1, c2;

	c1 = fork();
	CHECK(c1 >= 0);
	if (c1 == 0)
		_exit(9);
	pt_wait_readable(self->pfd, PT_WAIT_MS);
	memset(&s, 0xa5, sizeof(s));
	CHECK_EQ(read(self->sfd, &s, sizeof(s)), 128);
	c2 = fork();
	CHECK(c2 >= 0);
	if (c2 == 0)
		_exit(9);
	pt_wait_readable(self->pfd, PT_WAIT_MS);
	CHECK_EQ(ps_read_one(self->pfd, &p), 1);
	CHECK_EQ(s.ssi_pid, c1);
	CHECK_EQ(p.psi_pid, c2);
	CHECK_EQ(p.psi_code, CLD_EXITED);
	CHECK_EQ(p.psi_status, 9);
	s.ssi_pid = p.psi_pid;
	s.ssi_utime = p.psi_utime;
	s.ssi_stime = p.psi_stime;
	CHECK(memcmp(&p, &s, 128) == 0);
	CHECK_EQ(waitpid(c1, NULL, 0), c1);
	CHECK_EQ(waitpid(c2, NULL, 0), c2);
	expect_both_empty(self);
}

/* What differs: the mask written with write(2), and lseek. */
TEST_F(pair, mask_write_and_lseek_differ)
{
	uint64_t m = ps_bit(RT);

	CHECK_ERR(write(self->sfd, &m, sizeof(m)), EINVAL);
	ps_set_mask(self->pfd, m);
	CHECK_EQ(lseek(self->sfd, 0, SEEK_CUR), 0);
	CHECK_ERR(lseek(self->pfd, 0, SEEK_CUR), ESPIPE);
}

/* Blocked here, for every TEST's child to inherit. */
int main(void)
{
	ps_block(MASK);
	return pt_run_tests();
}
