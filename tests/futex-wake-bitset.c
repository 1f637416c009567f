// SPDX-License-Identifier: MIT
/*
 * FUTEX_WAKE_BITSET counts an armed object with any non-zero bitset (it
 * waits with a full bitset), while a thread in FUTEX_WAIT_BITSET is woken
 * only by a matching bitset.  A zero bitset is EINVAL and wakes nothing.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

PT_BUDGET(50);

static uint32_t *word;
static uint32_t wflags;
static atomic_int tid, done;
static long wait_ret;

static long wake_bitset(int n, uint32_t bitset)
{
	return fx_futex(word, fx_op(FUTEX_WAKE_BITSET, wflags), (uint32_t)n,
			0, NULL, bitset);
}

static void *waiter(void *unused)
{
	struct timespec ts = { 3 * PT_WAIT_MS / 1000, 0 };

	(void)unused;
	atomic_store(&tid, gettid());
	/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC timeout */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += 3 * PT_WAIT_MS / 1000;
	wait_ret = fx_futex(word, fx_op(FUTEX_WAIT_BITSET, wflags), *word,
			    (unsigned long)&ts, NULL, 0x1);
	atomic_store(&done, 1);
	return NULL;
}

static void run(int fd)
{
	static const uint32_t sets[] = { 0x1, 0x2, 0x80000000u, 0x00f0f000u,
					 FUTEX_BITSET_MATCH_ANY };
	pthread_t th;

	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		fx_arm(fd, word, *word, wflags);
		errno = 0;
		CHECK_ERR(wake_bitset(1, 0), EINVAL);
		fx_expect_armed(fd);
		CHECK_EQ(wake_bitset(1, sets[i]), 1);
		fx_expect_ready(fd);
		CHECK_EQ(wake_bitset(INT_MAX, sets[i]), 0);
		fx_expect_rec(fd, word, *word, wflags);
		CHECK_EQ(fx_wake(word, INT_MAX, wflags), 0);
	}

	/* the fd and a thread waiting with bitset 0x1 */
	fx_arm(fd, word, *word, wflags);
	atomic_store(&tid, 0);
	atomic_store(&done, 0);
	CHECK_EQ(pthread_create(&th, NULL, waiter, NULL), 0);
	while (!atomic_load(&tid))
		pt_sleep_ms(1);
	fx_wait_sleeping(atomic_load(&tid), SYS_futex);
	/* bitset 0x6: only the fd */
	CHECK_EQ(wake_bitset(INT_MAX, 0x6), 1);
	fx_expect_ready(fd);
	pt_sleep_ms(100);
	CHECK_EQ(atomic_load(&done), 0);
	fx_expect_rec(fd, word, *word, wflags);
	/* bitset 0x3, with the fd re-armed: both */
	fx_arm(fd, word, *word, wflags);
	CHECK_EQ(wake_bitset(INT_MAX, 0x3), 2);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(wait_ret, 0);
	fx_expect_rec(fd, word, *word, wflags);
	CHECK_EQ(wake_bitset(INT_MAX, FUTEX_BITSET_MATCH_ANY), 0);
}

int main(void)
{
	static uint32_t private_word = 41;
	uint32_t *shm;
	int fd;

	fd = fx_new(POLLFS_NONBLOCK);
	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	shm[0] = 42;

	word = &private_word;
	wflags = FX_PRIVATE;
	run(fd);
	word = shm;
	wflags = FX_SHARED;
	run(fd);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
