// SPDX-License-Identifier: MIT
/*
 * POLLFS_FUTEX_SHARED across processes through MAP_SHARED|MAP_ANONYMOUS
 * memory: a child's shared FUTEX_WAKE returns 1 and the parent's object
 * fires, also when the child has moved the mapping to another address;
 * a child's object is woken by the parent.  A private wake in the child
 * counts nothing.
 */
#include "lib/futex.h"

#include <sys/mman.h>
#include <sys/wait.h>

PT_BUDGET(50);

static uint32_t *shm;

static int child_wakes(void *arg)
{
	/* a private wake of the same address: another futex */
	CHECK_EQ(fx_wake(&shm[1], INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&shm[1], INT_MAX, FX_SHARED), (intptr_t)arg);
	CHECK_EQ(fx_wake(&shm[1], INT_MAX, FX_SHARED), 0);
	return PT_PASS;
}

static int child_moves_and_wakes(void *unused)
{
	char *moved;

	(void)unused;
	/* a hole elsewhere to move the mapping into */
	moved = mmap(NULL, 3 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	CHECK(moved != MAP_FAILED);
	moved = mremap(shm, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED,
		       moved + 4096);
	CHECK(moved != MAP_FAILED);
	CHECK((void *)moved != (void *)shm);
	CHECK_EQ(((uint32_t *)moved)[1], 1000);
	CHECK_EQ(fx_wake(&((uint32_t *)moved)[1], 1, FX_SHARED), 1);
	return PT_PASS;
}

int main(void)
{
	int fd, pfd[2], status;
	char c;
	pid_t pid;

	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	shm[1] = 1000;
	fd = fx_new(POLLFS_NONBLOCK);

	/* the parent's object, the child's wake */
	fx_arm(fd, &shm[1], 1000, FX_SHARED);
	CHECK_EQ(pt_run_child(child_wakes, (void *)1, PT_WAIT_MS), PT_PASS);
	fx_expect_ready(fd);
	fx_expect_rec(fd, &shm[1], 1000, FX_SHARED);

	/* nothing armed: the child's wake counts 0 */
	CHECK_EQ(pt_run_child(child_wakes, (void *)0, PT_WAIT_MS), PT_PASS);
	fx_expect_unarmed(fd);

	/* the parent armed private: the child's shared wake counts 0 */
	fx_arm(fd, &shm[1], 1000, FX_PRIVATE);
	CHECK_EQ(pt_run_child(child_wakes, (void *)0, PT_WAIT_MS), PT_PASS);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&shm[1], 1, FX_PRIVATE), 1);
	fx_expect_rec(fd, &shm[1], 1000, FX_PRIVATE);

	/* the child wakes through the mapping moved elsewhere */
	fx_arm(fd, &shm[1], 1000, FX_SHARED);
	CHECK_EQ(pt_run_child(child_moves_and_wakes, NULL, PT_WAIT_MS),
		 PT_PASS);
	fx_expect_rec(fd, &shm[1], 1000, FX_SHARED);

	/* the child's own object, the parent's wake */
	CHECK_SYS(pipe2(pfd, O_CLOEXEC));
	pid = fx_fork();
	if (pid == 0) {
		int cfd = fx_new(0);

		fx_arm(cfd, &shm[1], 1000, FX_SHARED);
		if (write(pfd[1], "a", 1) != 1)
			FAIL("write(pipe): %s", strerror(errno));
		/* blocks until the parent's wake */
		fx_expect_rec(cfd, &shm[1], 1000, FX_SHARED);
		fx_expect_unarmed(cfd);
		_exit(PT_PASS);
	}
	CHECK_EQ(read(pfd[0], &c, 1), 1);
	CHECK_EQ(fx_wake(&shm[1], INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&shm[1], INT_MAX, FX_SHARED), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), PT_PASS);
	CHECK_EQ(fx_wake(&shm[1], INT_MAX, FX_SHARED), 0);

	CHECK_SYS(close(fd));
	return PT_PASS;
}
