// SPDX-License-Identifier: MIT
/*
 * POLLFS_FUTEX_SHARED | POLLFS_FUTEX_WATCH (1.1) across processes: a
 * watched object on a MAP_SHARED word is woken by other processes'
 * shared FUTEX_WAKEs, again and again with no write in between: each
 * wake that comes after the read counts it (returns 1), a second wake
 * before the read counts nothing, a private wake of the same address in
 * the other process counts nothing, and each read returns the value the
 * other process stored.  Through anonymous shared memory (the child's
 * wakes, the parent's object) and through a memfd mapped at different
 * addresses in the two processes (the parent's wakes, the child's
 * object, read by the child, blocking).
 */
#include "lib/futex.h"

#include <sys/mman.h>
#include <sys/wait.h>

PT_BUDGET(50);

#define ROUNDS 50

static uint32_t *shm;
static int to_parent[2], to_child[2];

/* The child stores and wakes; the parent's object watches. */
static void parent_watches(void)
{
	int fd = fx_new(POLLFS_NONBLOCK);
	pid_t pid;

	shm[1] = 1000;
	fx_arm(fd, &shm[1], 1000, FX_SHARED | FX_WATCH);
	pid = fx_fork();
	if (pid == 0) {
		for (uint32_t i = 1; i <= ROUNDS; i++) {
			__atomic_store_n(&shm[1], 1000 + i, __ATOMIC_SEQ_CST);
			/* the same address, private: another futex */
			CHECK_EQ(fx_wake(&shm[1], INT_MAX, FX_PRIVATE), 0);
			CHECK_EQ(fx_wake(&shm[1], 1, FX_SHARED), 1);
			if (i % 5 == 0)	/* woken, not yet read */
				CHECK_EQ(fx_wake(&shm[1], INT_MAX, FX_SHARED),
					 0);
			pt_send_byte(to_parent[1], 'w');
			CHECK_EQ(pt_recv_byte(to_child[0]), 'r');
		}
		_exit(PT_PASS);
	}
	for (uint32_t i = 1; i <= ROUNDS; i++) {
		CHECK_EQ(pt_recv_byte(to_parent[0]), 'w');
		fx_expect_ready(fd);
		fx_expect_watch(fd, &shm[1], 1000 + i, FX_SHARED | FX_WATCH);
		pt_send_byte(to_child[1], 'r');
	}
	CHECK_EQ(pt_reap(pid), PT_PASS);
	/* still armed, on the last value */
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&shm[1], INT_MAX, FX_SHARED), 1);
	fx_expect_watch(fd, &shm[1], 1000 + ROUNDS, FX_SHARED | FX_WATCH);
	CHECK_SYS(close(fd));
	CHECK_EQ(fx_wake(&shm[1], INT_MAX, FX_SHARED), 0);
}

/* The parent stores and wakes; the child's object watches, blocking. */
static void child_watches(int memfd, uint32_t *mine)
{
	pid_t pid;

	mine[3] = 7;
	pid = fx_fork();
	if (pid == 0) {
		uint32_t *theirs;
		int fd = fx_new(0);

		/* another mapping of the same page, elsewhere */
		theirs = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			      memfd, 0);
		CHECK(theirs != MAP_FAILED);
		CHECK(theirs != mine);
		CHECK_SYS(munmap(mine, 4096));
		fx_arm(fd, &theirs[3], 7, FX_SHARED | FX_WATCH);
		pt_send_byte(to_parent[1], 'a');
		for (uint32_t i = 1; i <= ROUNDS; i++) {
			/* blocks until the parent's wake */
			fx_expect_rec(fd, &theirs[3], 7 + 3 * i,
				      FX_SHARED | FX_WATCH);
			pt_send_byte(to_parent[1], 'r');
		}
		fx_expect_armed(fd);
		CHECK_SYS(close(fd));
		pt_send_byte(to_parent[1], 'c');
		_exit(PT_PASS);
	}
	CHECK_EQ(pt_recv_byte(to_parent[0]), 'a');
	for (uint32_t i = 1; i <= ROUNDS; i++) {
		__atomic_store_n(&mine[3], 7 + 3 * i, __ATOMIC_SEQ_CST);
		CHECK_EQ(fx_wake(&mine[3], INT_MAX, FX_PRIVATE), 0);
		CHECK_EQ(fx_wake(&mine[3], INT_MAX, FX_SHARED), 1);
		CHECK_EQ(pt_recv_byte(to_parent[0]), 'r');
	}
	CHECK_EQ(pt_recv_byte(to_parent[0]), 'c');
	/* closed there: no waiter left */
	CHECK_EQ(fx_wake(&mine[3], INT_MAX, FX_SHARED), 0);
	CHECK_EQ(pt_reap(pid), PT_PASS);
}

int main(void)
{
	uint32_t *mine;
	int memfd;

	CHECK_SYS(pipe2(to_parent, O_CLOEXEC));
	CHECK_SYS(pipe2(to_child, O_CLOEXEC));
	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	memfd = CHECK_SYS(memfd_create("futex-watch-shared", MFD_CLOEXEC));
	CHECK_SYS(ftruncate(memfd, 4096));
	mine = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	CHECK(mine != MAP_FAILED);

	parent_watches();
	child_watches(memfd, mine);
	return PT_PASS;
}
