// SPDX-License-Identifier: MIT
/*
 * A blocking read sleeps until a signal of the mask arrives and then
 * returns it: a process-directed signal sent by another thread, one sent
 * by another process, one sent to the sleeping thread itself, and a
 * queued one from another thread.
 */
#include "lib/signal.h"

#include <stdatomic.h>

PT_BUDGET(60);

static int fd;
static atomic_int reader_tid;
static struct pollfs_siginfo got;

static void *reader(void *unused)
{
	(void)unused;
	reader_tid = ps_gettid();
	CHECK_EQ(ps_read_one(fd, &got), 1);
	return NULL;
}

static pthread_t start_reader(void)
{
	pthread_t t;

	memset(&got, 0, sizeof(got));
	reader_tid = 0;
	CHECK_EQ(pthread_create(&t, NULL, reader, NULL), 0);
	while (!reader_tid)
		pt_sleep_ms(1);
	ps_wait_in_read(reader_tid);
	return t;
}

int main(void)
{
	uint64_t mask = ps_bit(SIGUSR1) | ps_bit(SIGUSR2) | ps_bit(SIGRTMIN);
	struct pollfs_siginfo psi;
	pid_t pid = getpid(), child;
	pthread_t t;

	ps_block(mask);
	fd = ps_signal(mask, 0);

	/* kill() to the process, from another thread */
	t = start_reader();
	CHECK_SYS(kill(pid, SIGUSR1));
	ps_join(t);
	ps_check_sig(&got, SIGUSR1, SI_USER);
	CHECK_EQ(got.psi_pid, pid);

	/* tgkill() to the sleeping thread */
	t = start_reader();
	CHECK_SYS(ps_tgkill(pid, reader_tid, SIGUSR2));
	ps_join(t);
	ps_check_sig(&got, SIGUSR2, SI_TKILL);

	/* sigqueue() from another thread */
	t = start_reader();
	ps_queue_int(pid, SIGRTMIN, 99);
	ps_join(t);
	ps_check_sig(&got, SIGRTMIN, SI_QUEUE);
	CHECK_EQ(got.psi_int, 99);

	/* this thread sleeps; another process sends */
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		ps_wait_in_syscall(pid, pid, SYS_read, SYS_read);
		_exit(kill(pid, SIGUSR1) ? 1 : 0);
	}
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	CHECK_EQ(psi.psi_pid, child);
	ps_check_exit0(ps_wait_child(child, PT_WAIT_MS));
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
