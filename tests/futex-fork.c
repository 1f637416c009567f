// SPDX-License-Identifier: MIT
/*
 * After fork the child's copy of the fd is the same object: the child
 * reads the record that the parent's wake woke (and the parent then
 * sees the object unarmed); an object armed by the parent is not woken
 * by the child's private wake of the same address (the child's own
 * word); armed by the child on its own word, the child's wake counts it,
 * the parent's does not, and the parent sees it fire.
 */
#include "lib/futex.h"

#include <sys/wait.h>

PT_BUDGET(50);

static uint32_t word = 21;
static int fd, pfd[2], cfd[2];

static void sync_write(int p)
{
	if (write(p, "s", 1) != 1)
		FAIL("write(pipe): %s", strerror(errno));
}

static void sync_read(int p)
{
	char c;

	if (read(p, &c, 1) != 1)
		FAIL("read(pipe): %s", strerror(errno));
}

int main(void)
{
	pid_t pid;

	CHECK_SYS(pipe2(pfd, O_CLOEXEC));	/* child -> parent */
	CHECK_SYS(pipe2(cfd, O_CLOEXEC));	/* parent -> child */
	fd = fx_new(0);

	/* the parent's wake, the child's read */
	fx_arm(fd, &word, 21, FX_PRIVATE);
	pid = fx_fork();
	if (pid == 0) {
		/* the same address in the child: its own word */
		CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
		fx_expect_armed(fd);
		fx_expect_rec(fd, &word, 21, FX_PRIVATE);	/* blocks */
		fx_expect_unarmed(fd);
		_exit(PT_PASS);
	}
	fx_wait_sleeping(pid, SYS_read);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
	CHECK_EQ(pt_reap(pid), PT_PASS);
	fx_expect_unarmed(fd);

	/* armed by the child on its word */
	pid = fx_fork();
	if (pid == 0) {
		word = 22;
		fx_arm(fd, &word, 22, FX_PRIVATE);
		sync_write(pfd[1]);
		sync_read(cfd[0]);
		CHECK_EQ(fx_wake(&word, INT_MAX, FX_SHARED), 0);
		CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
		sync_read(cfd[0]);
		fx_expect_unarmed(fd);
		_exit(PT_PASS);
	}
	sync_read(pfd[0]);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
	fx_expect_armed(fd);
	sync_write(cfd[1]);
	pt_wait_readable(fd, PT_WAIT_MS);
	/* the child's record */
	fx_expect_rec(fd, &word, 22, FX_PRIVATE);
	sync_write(cfd[1]);
	CHECK_EQ(pt_reap(pid), PT_PASS);

	/* armed by the parent, the child closes its copy and exits: the
	 * object is the parent's still */
	fx_arm(fd, &word, 21, FX_PRIVATE);
	pid = fx_fork();
	if (pid == 0) {
		close(fd);
		_exit(PT_PASS);
	}
	CHECK_EQ(pt_reap(pid), PT_PASS);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(fd, &word, 21, FX_PRIVATE);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
