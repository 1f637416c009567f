// SPDX-License-Identifier: MIT
/*
 * Closing an armed object leaves no waiter: a later FUTEX_WAKE counts
 * nothing, for one record, 128 records, or a woken record not read.  The
 * object lives while any fd refers to it: closing one dup, or closing
 * the fd while another thread sleeps in read on it, leaves it armed.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

PT_BUDGET(50);

static uint32_t word = 9;
static uint32_t many[128];
static atomic_int tid;

struct rd {
	int fd;
	ssize_t r;
	struct pollfs_futex_event ev;
};

static void *reader(void *arg)
{
	struct rd *rd = arg;

	atomic_store(&tid, gettid());
	rd->r = read(rd->fd, &rd->ev, sizeof(rd->ev));
	return NULL;
}

int main(void)
{
	struct pollfs_futex_event evs[128];
	struct rd rd;
	uint32_t *shm;
	pthread_t th;
	int fd, fd2;

	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);

	/* one record, private and shared */
	for (int shared = 0; shared < 2; shared++) {
		uint32_t fl = shared ? FX_SHARED : FX_PRIVATE;

		fd = fx_new(0);
		fx_arm(fd, &word, 9, fl);
		CHECK_SYS(close(fd));
		CHECK_EQ(fx_wake(&word, INT_MAX, fl), 0);
		fd = fx_new(0);
		fx_arm(fd, &shm[2], 0, fl);
		CHECK_SYS(close(fd));
		CHECK_EQ(fx_wake(&shm[2], INT_MAX, fl), 0);
	}

	/* 128 records */
	for (int i = 0; i < 128; i++)
		evs[i] = fx_ev(&many[i], 0, (i % 3) ? FX_PRIVATE : FX_SHARED);
	fd = fx_new(0);
	fx_armv(fd, evs, 128);
	CHECK_SYS(close(fd));
	for (int i = 0; i < 128; i++)
		CHECK_EQ(fx_wake(&many[i], INT_MAX, evs[i].flags), 0);

	/* woken and not read; a wait-any with one woken, one still queued */
	fd = fx_new(0);
	fx_arm(fd, &word, 9, FX_PRIVATE);
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	CHECK_SYS(close(fd));
	fd = fx_new(0);
	fx_armv(fd, evs, 2);
	CHECK_EQ(fx_wake(&many[0], 1, FX_SHARED), 1);
	CHECK_SYS(close(fd));
	CHECK_EQ(fx_wake(&many[1], INT_MAX, FX_PRIVATE), 0);

	/* one of two dups closed: still armed */
	fd = fx_new(POLLFS_NONBLOCK);
	fd2 = CHECK_SYS(dup(fd));
	fx_arm(fd, &word, 9, FX_PRIVATE);
	CHECK_SYS(close(fd));
	fx_expect_armed(fd2);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(fd2, &word, 9, FX_PRIVATE);
	fx_arm(fd2, &word, 9, FX_PRIVATE);
	CHECK_SYS(close(fd2));
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);

	/* closed while a thread sleeps in read: the read holds the file, the
	 * wake counts it and the reader gets the record; then it is gone */
	rd.fd = fx_new(0);
	fx_arm(rd.fd, &word, 9, FX_PRIVATE);
	atomic_store(&tid, 0);
	CHECK_EQ(pthread_create(&th, NULL, reader, &rd), 0);
	while (!atomic_load(&tid))
		pt_sleep_ms(1);
	fx_wait_sleeping(atomic_load(&tid), SYS_read);
	CHECK_SYS(close(rd.fd));
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(rd.r, FX_REC);
	fx_check_rec(&rd.ev, &word, 9, FX_PRIVATE);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
	return PT_PASS;
}
