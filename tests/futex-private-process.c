// SPDX-License-Identifier: MIT
/*
 * A private futex belongs to one address space: an object armed private
 * by this process is woken by a private FUTEX_WAKE from any of its
 * threads, and not by another process's wake of the same virtual address
 * (a forked child, whose word there is its own copy), private or shared,
 * although that child holds the same object through the inherited fd.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <sys/mman.h>

PT_BUDGET(50);

static uint32_t word = 31;
static uint32_t *anon;
static int fd;

static int child_wakes(void *unused)
{
	(void)unused;
	CHECK_EQ(word, 31);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_SHARED), 0);
	CHECK_EQ(fx_wake(&anon[7], INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&anon[7], INT_MAX, FX_SHARED), 0);
	/* the child's copy of the fd is the parent's object: not woken */
	CHECK_EQ(fx_revents(fd, 0), 0);
	return PT_PASS;
}

static void *thread_wakes(void *addr)
{
	return (void *)fx_wake(addr, INT_MAX, FX_PRIVATE);
}

int main(void)
{
	pthread_t th;
	void *ret;

	anon = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(anon != MAP_FAILED);
	anon[7] = 7;
	fd = fx_new(POLLFS_NONBLOCK);

	for (int i = 0; i < 2; i++) {
		uint32_t *w = i ? &anon[7] : &word;

		fx_arm(fd, w, *w, FX_PRIVATE);
		CHECK_EQ(pt_run_child(child_wakes, NULL, PT_WAIT_MS), PT_PASS);
		fx_expect_armed(fd);
		/* another thread of this process: counted */
		CHECK_EQ(pthread_create(&th, NULL, thread_wakes, w), 0);
		CHECK_EQ(pthread_join(th, &ret), 0);
		CHECK_EQ((long)ret, 1);
		fx_expect_rec(fd, w, *w, FX_PRIVATE);
	}
	CHECK_SYS(close(fd));
	return PT_PASS;
}
