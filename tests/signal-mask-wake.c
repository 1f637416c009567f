// SPDX-License-Identifier: MIT
/*
 * A mask written while another thread sleeps in read() on the object
 * applies to that sleeping read at once: it returns a pending signal the
 * new mask includes, without any new signal; it goes back to sleep if the
 * new mask selects nothing pending, and then returns a newly included
 * signal; a signal the new mask dropped does not wake it.
 */
#include "lib/signal.h"

#include <stdatomic.h>

PT_BUDGET(60);

static int fd;
static atomic_int reader_tid;
static atomic_int got;		/* the signal the reader read, 0 before */

static void *reader(void *unused)
{
	struct pollfs_siginfo psi;

	(void)unused;
	reader_tid = ps_gettid();
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	got = (int)psi.psi_signo;
	return NULL;
}

static pthread_t start_reader(void)
{
	pthread_t t;

	got = 0;
	reader_tid = 0;
	CHECK_EQ(pthread_create(&t, NULL, reader, NULL), 0);
	while (!reader_tid)
		pt_sleep_ms(1);
	ps_wait_in_read(reader_tid);
	return t;
}

int main(void)
{
	uint64_t u1 = ps_bit(SIGUSR1), u2 = ps_bit(SIGUSR2);
	uint64_t u3 = ps_bit(SIGRTMIN);
	pthread_t t;

	ps_block(u1 | u2 | u3);
	fd = ps_signal(u1, 0);

	/* SIGUSR2 pending before the read; the write makes it readable */
	CHECK_SYS(kill(getpid(), SIGUSR2));
	t = start_reader();
	pt_sleep_ms(50);
	CHECK_EQ(got, 0);
	ps_set_mask(fd, u2);
	ps_join(t);
	CHECK_EQ(got, SIGUSR2);
	CHECK(!ps_pending(SIGUSR2));

	/* nothing pending: the reader wakes, finds nothing, sleeps again;
	 * a signal only the new mask includes wakes it */
	ps_set_mask(fd, u1);
	t = start_reader();
	ps_set_mask(fd, u1 | u2);
	pt_sleep_ms(100);
	CHECK_EQ(got, 0);
	ps_wait_in_read(reader_tid);
	CHECK_SYS(kill(getpid(), SIGUSR2));
	ps_join(t);
	CHECK_EQ(got, SIGUSR2);

	/* a signal the new mask no longer includes leaves it asleep */
	ps_set_mask(fd, u1);
	t = start_reader();
	ps_set_mask(fd, u3);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	pt_sleep_ms(200);
	CHECK_EQ(got, 0);
	ps_wait_in_read(reader_tid);
	CHECK(ps_pending(SIGUSR1));
	CHECK_SYS(kill(getpid(), SIGRTMIN));
	ps_join(t);
	CHECK_EQ(got, SIGRTMIN);
	CHECK(ps_pending(SIGUSR1));
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
