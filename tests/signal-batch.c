// SPDX-License-Identifier: MIT
/*
 * One read returns as many records as are pending and fit: 32 queued
 * real-time signals are 32 * 128 bytes from one read with room for 40;
 * room for 4 returns 4 and leaves the other 28 pending, in order; a
 * buffer that is not a multiple of 128 takes whole records only; a
 * blocking read returns what there is without waiting to fill the buffer.
 */
#include "lib/signal.h"

#include <sys/resource.h>

PT_BUDGET(30);

#define N 32

static struct pollfs_siginfo buf[64];

static void queue_n(int sig, int n, int base)
{
	for (int i = 0; i < n; i++)
		ps_queue_int(getpid(), sig, base + i);
}

static void check_run(const struct pollfs_siginfo *psi, int n, int sig,
		      int base)
{
	for (int i = 0; i < n; i++) {
		ps_check_sig(&psi[i], sig, SI_QUEUE);
		CHECK_EQ(psi[i].psi_pid, getpid());
		CHECK_EQ(psi[i].psi_uid, getuid());
		CHECK_EQ(psi[i].psi_int, base + i);
	}
}

int main(void)
{
	int sig = SIGRTMIN + 1;
	struct rlimit rl;
	ssize_t r;
	int fd, n;

	CHECK_SYS(getrlimit(RLIMIT_SIGPENDING, &rl));
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 2 * N)
		pt_skip("RLIMIT_SIGPENDING %llu < %d",
			(unsigned long long)rl.rlim_cur, 2 * N);
	ps_block(ps_bit(sig));
	fd = ps_signal(ps_bit(sig), POLLFS_NONBLOCK);

	/* 32 in one read */
	queue_n(sig, N, 0);
	memset(buf, 0xa5, sizeof(buf));
	r = read(fd, buf, 40 * sizeof(buf[0]));
	CHECK_EQ(r, N * 128);
	check_run(buf, N, sig, 0);
	CHECK(!ps_pending(sig));
	ps_expect_empty(fd);

	/* room for 64: still 32 */
	queue_n(sig, N, 1000);
	r = read(fd, buf, sizeof(buf));
	CHECK_EQ(r, N * 128);
	check_run(buf, N, sig, 1000);
	ps_expect_empty(fd);

	/* room for 4: 4, the rest stays pending in order */
	queue_n(sig, N, 0);
	r = read(fd, buf, 4 * sizeof(buf[0]));
	CHECK_EQ(r, 4 * 128);
	check_run(buf, 4, sig, 0);
	CHECK(ps_pending(sig));
	CHECK(pt_poll_in(fd, 0));
	n = ps_read_n(fd, buf, 64);
	CHECK_EQ(n, N - 4);
	check_run(buf, N - 4, sig, 4);
	ps_expect_empty(fd);

	/* 3 records and 127 bytes: 3 records */
	queue_n(sig, 5, 0);
	memset(buf, 0xa5, sizeof(buf));
	r = read(fd, buf, 3 * 128 + 127);
	CHECK_EQ(r, 3 * 128);
	check_run(buf, 3, sig, 0);
	/* the bytes after the records are untouched */
	for (int i = 3 * 128; i < 4 * 128; i++)
		CHECK_EQ(((unsigned char *)buf)[i], 0xa5);
	n = ps_read_n(fd, buf, 64);
	CHECK_EQ(n, 2);
	check_run(buf, 2, sig, 3);
	ps_expect_empty(fd);

	/* blocking: returns the 3 there are at once */
	CHECK_SYS(fcntl(fd, F_SETFL, 0));
	queue_n(sig, 3, 7);
	r = read(fd, buf, sizeof(buf));
	CHECK_EQ(r, 3 * 128);
	check_run(buf, 3, sig, 7);
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
