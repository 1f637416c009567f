// SPDX-License-Identifier: MIT
/*
 * Several objects armed on one word are as many waiters: FUTEX_WAKE(n)
 * returns n and wakes exactly n of them; woken ones no longer count.
 */
#include "lib/futex.h"

#include <sys/mman.h>

PT_BUDGET(50);

#define N 12

static int count_ready(const int *fd, bool *ready)
{
	struct pollfd p[N];
	int n = 0;

	for (int i = 0; i < N; i++)
		p[i] = (struct pollfd){ .fd = fd[i], .events = POLLIN };
	CHECK_SYS(poll(p, N, 0));
	for (int i = 0; i < N; i++) {
		CHECK(p[i].revents == 0 || p[i].revents == POLLIN);
		ready[i] = p[i].revents == POLLIN;
		n += ready[i];
	}
	return n;
}

static void run(uint32_t *w, uint32_t flags)
{
	bool ready[N];
	int fd[N];

	for (int i = 0; i < N; i++) {
		fd[i] = fx_new(POLLFS_NONBLOCK);
		fx_arm(fd[i], w, *w, flags);
	}
	CHECK_EQ(count_ready(fd, ready), 0);
	CHECK_EQ(fx_wake(w, 1, flags), 1);
	CHECK_EQ(count_ready(fd, ready), 1);
	CHECK_EQ(fx_wake(w, 3, flags), 3);
	CHECK_EQ(count_ready(fd, ready), 4);
	CHECK_EQ(fx_wake(w, 2, flags), 2);
	CHECK_EQ(count_ready(fd, ready), 6);

	/* read the woken ones: the others are still armed waiters */
	for (int i = 0; i < N; i++) {
		if (ready[i]) {
			fx_expect_rec(fd[i], w, *w, flags);
			fx_expect_unarmed(fd[i]);
		} else {
			fx_expect_armed(fd[i]);
		}
	}
	CHECK_EQ(count_ready(fd, ready), 0);
	CHECK_EQ(fx_wake(w, 100, flags), N - 6);
	CHECK_EQ(count_ready(fd, ready), N - 6);
	CHECK_EQ(fx_wake(w, INT_MAX, flags), 0);
	for (int i = 0; i < N; i++) {
		if (ready[i])
			fx_expect_rec(fd[i], w, *w, flags);
		fx_expect_unarmed(fd[i]);
	}

	/* re-armed, all at once */
	for (int i = 0; i < N; i++)
		fx_arm(fd[i], w, *w, flags);
	CHECK_EQ(fx_wake(w, INT_MAX, flags), N);
	CHECK_EQ(count_ready(fd, ready), N);
	for (int i = 0; i < N; i++) {
		fx_expect_rec(fd[i], w, *w, flags);
		CHECK_SYS(close(fd[i]));
	}
	CHECK_EQ(fx_wake(w, INT_MAX, flags), 0);
}

int main(void)
{
	static uint32_t word = 1;
	uint32_t *shm;

	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	shm[9] = 0xdead;
	run(&word, FX_PRIVATE);
	run(&word, FX_SHARED);
	run(&shm[9], FX_SHARED);
	run(&shm[9], FX_PRIVATE);
	return PT_PASS;
}
