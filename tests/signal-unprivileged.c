// SPDX-License-Identifier: MIT
/*
 * An unprivileged user (uid and gid 65534, no capabilities) creates a
 * signal object and reads its signals: psi_uid is its uid, SIGKILL is
 * dropped from its mask too, a blocking read is woken.
 */
#include "lib/signal.h"

#include <sys/prctl.h>

#include <stdatomic.h>

PT_BUDGET(60);

static int reader_fd;
static atomic_int reader_tid;
static struct pollfs_siginfo got;

static void *reader(void *unused)
{
	(void)unused;
	reader_tid = ps_gettid();
	CHECK_EQ(ps_read_one(reader_fd, &got), 1);
	return NULL;
}

static int child(void *unused)
{
	uint64_t mask = ps_bit(SIGUSR1) | ps_bit(SIGRTMIN) | ps_bit(SIGKILL);
	struct pollfs_siginfo psi;
	pid_t sender;
	pthread_t t;
	int dev, fd;

	(void)unused;
	if (geteuid() == 0)
		pt_become_nobody();
	/* dumpable again, so that its /proc files are its own to read */
	CHECK_SYS(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0));
	ps_block(mask & ~ps_bit(SIGKILL));
	dev = CHECK_SYS(open("/dev/pollfs", O_RDWR));
	{
		struct pollfs_signal_open op;

		memset(&op, 0, sizeof(op));
		op.mask = mask;
		fd = CHECK_SYS(ioctl(dev, POLLFS_IOC_SIGNAL, &op));
	}
	CHECK_SYS(close(dev));
	CHECK_EQ(ps_fdinfo_mask(0, fd), ps_bit(SIGUSR1) | ps_bit(SIGRTMIN));

	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	CHECK_EQ(psi.psi_pid, getpid());
	CHECK_EQ(psi.psi_uid, getuid());

	ps_queue_int(getpid(), SIGRTMIN, 11);
	ps_queue_int(getpid(), SIGRTMIN, 12);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGRTMIN, SI_QUEUE);
	CHECK_EQ(psi.psi_int, 11);
	CHECK_EQ(psi.psi_uid, getuid());
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	CHECK_EQ(psi.psi_int, 12);

	/* a blocking read in a thread, woken by a process of the same user */
	reader_fd = fd;
	CHECK_EQ(pthread_create(&t, NULL, reader, NULL), 0);
	while (!reader_tid)
		pt_sleep_ms(1);
	ps_wait_in_read(reader_tid);
	sender = fork();
	CHECK(sender >= 0);
	if (sender == 0)
		_exit(kill(getppid(), SIGUSR1) ? 1 : 0);
	ps_join(t);
	ps_check_sig(&got, SIGUSR1, SI_USER);
	CHECK_EQ(got.psi_pid, sender);
	CHECK_EQ(got.psi_uid, getuid());
	ps_check_exit0(ps_wait_child(sender, PT_WAIT_MS));

	ps_set_mask(fd, ps_bit(SIGUSR1) | ps_bit(SIGSTOP));
	CHECK_EQ(ps_fdinfo_mask(0, fd), ps_bit(SIGUSR1));
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
	return PT_PASS;
}

int main(void)
{
	if (geteuid() != 0)
		pt_diag("not root: running as uid %d as it is", (int)getuid());
	CHECK_EQ(pt_run_child(child, NULL, 30000), PT_PASS);
	return PT_PASS;
}
