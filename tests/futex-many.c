// SPDX-License-Identifier: MIT
/*
 * Thousands of objects: 5000 armed on distinct words (private and
 * shared, one wait-any of 128 among them), every third one woken (each
 * wake counts exactly 1), exactly those readable; then all closed, armed
 * or not, and no wake counts anything.  Then 1000 armed on one word: one
 * FUTEX_WAKE counts all 1000.
 */
#include "lib/futex.h"

#include <sys/mman.h>
#include <sys/resource.h>

PT_BUDGET(50);

#define N	5000
#define ONE	1000

static int fds[N];
static struct pollfd pfds[N];

static uint32_t flags_of(int i)
{
	return (i % 5 == 2) ? FX_SHARED : FX_PRIVATE;
}

int main(void)
{
	struct pollfs_futex_event evs[128];
	struct rlimit rl;
	uint32_t *priv, *shm, *extra, *w;
	int ready, n;

	CHECK_SYS(getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur < N + 64) {
		rl.rlim_cur = N + 64;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			pt_skip("cannot raise RLIMIT_NOFILE to %d: %s", N + 64,
				strerror(errno));
	}
	priv = mmap(NULL, N * 4, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	shm = mmap(NULL, N * 4, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	extra = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(priv != MAP_FAILED && shm != MAP_FAILED && extra != MAP_FAILED);
	/* object 1 is a wait-any over 128 words of their own */
	for (int i = 0; i < 128; i++)
		evs[i] = fx_ev(&extra[i * 8], 0, FX_SHARED);

	for (int i = 0; i < N; i++) {
		w = (flags_of(i) & FX_SHARED) ? &shm[i] : &priv[i];
		*w = (uint32_t)i * 3;
		fds[i] = fx_new(POLLFS_NONBLOCK);
		if (i == 1)
			fx_armv(fds[i], evs, 128);
		else
			fx_arm(fds[i], w, *w, flags_of(i));
		pfds[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
	}
	CHECK_EQ(poll(pfds, N, 0), 0);

	for (int i = 0; i < N; i += 3) {
		w = (flags_of(i) & FX_SHARED) ? &shm[i] : &priv[i];
		CHECK_EQ(fx_wake(w, INT_MAX, flags_of(i)), 1);
	}
	n = CHECK_SYS(poll(pfds, N, 0));
	CHECK_EQ(n, (N + 2) / 3);
	ready = 0;
	for (int i = 0; i < N; i++) {
		bool want = i % 3 == 0;

		if (pfds[i].revents != (want ? POLLIN : 0))
			FAIL("fd %d (object %d): revents %#x", fds[i], i,
			     pfds[i].revents);
		if (want) {
			w = (flags_of(i) & FX_SHARED) ? &shm[i] : &priv[i];
			fx_expect_rec(fds[i], w, *w, flags_of(i));
			ready++;
		}
	}
	CHECK_EQ(ready, n);
	CHECK_EQ(fx_wake(&extra[127 * 8], INT_MAX, FX_SHARED), 1);
	CHECK_EQ(poll(pfds, N, 0), 1);
	CHECK_EQ(pfds[1].revents, POLLIN);
	fx_expect_rec(fds[1], &extra[127 * 8], 0, FX_SHARED);
	for (int i = 0; i < 128; i++)
		CHECK_EQ(fx_wake(&extra[i * 8], INT_MAX, FX_SHARED), 0);
	pt_diag("%d objects armed, %d woken and read", N, ready);

	/* close all: the woken ones read (unarmed), the others armed */
	for (int i = 0; i < N; i++)
		CHECK_SYS(close(fds[i]));
	for (int i = 0; i < N; i++) {
		CHECK_EQ(fx_wake(&shm[i], INT_MAX, FX_SHARED), 0);
		CHECK_EQ(fx_wake(&priv[i], INT_MAX, FX_PRIVATE), 0);
	}

	/* 1000 on one word */
	for (int i = 0; i < ONE; i++) {
		fds[i] = fx_new(POLLFS_NONBLOCK);
		if (i == ONE - 1) {
			evs[0] = fx_ev(&priv[1], 3, FX_PRIVATE);
			evs[1] = fx_ev(&priv[3], 9, FX_PRIVATE);
			fx_armv(fds[i], evs, 2);
		} else {
			fx_arm(fds[i], &priv[1], 3, FX_PRIVATE);
		}
		pfds[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
	}
	CHECK_EQ(poll(pfds, ONE, 0), 0);
	CHECK_EQ(fx_wake(&priv[1], 10, FX_PRIVATE), 10);
	CHECK_EQ(poll(pfds, ONE, 0), 10);
	CHECK_EQ(fx_wake(&priv[1], INT_MAX, FX_PRIVATE), ONE - 10);
	CHECK_EQ(poll(pfds, ONE, 0), ONE);
	CHECK_EQ(fx_wake(&priv[1], INT_MAX, FX_PRIVATE), 0);
	for (int i = 0; i < ONE; i++) {
		fx_expect_rec(fds[i], &priv[1], 3, FX_PRIVATE);
		CHECK_SYS(close(fds[i]));
	}
	CHECK_EQ(fx_wake(&priv[3], INT_MAX, FX_PRIVATE), 0);
	return PT_PASS;
}
