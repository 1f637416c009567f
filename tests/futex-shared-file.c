// SPDX-License-Identifier: MIT
/*
 * POLLFS_FUTEX_SHARED through a MAP_SHARED file mapping: the futex is the
 * file's word, whatever maps it.  Armed through one mapping, it is woken
 * through a second mapping of the same file in the same process, and by
 * another process that opened and mapped the file on its own (at another
 * offset of its mapping); a private wake through either counts nothing.
 */
#include "lib/futex.h"

#include <sys/mman.h>
#include <sys/wait.h>

PT_BUDGET(50);

#define OFF	(4096 + 12)	/* the word: second page of the file */

static char path[] = "/tmp/pollfs-futex-XXXXXX";

/* The file's word, through a fresh open and a mapping of page 2 only. */
static uint32_t *map_own(int *filep)
{
	char *p;
	int file = CHECK_SYS(open(path, O_RDWR | O_CLOEXEC));

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, file, 4096);
	CHECK(p != MAP_FAILED);
	*filep = file;
	return (uint32_t *)(p + (OFF - 4096));
}

static int child_wakes(void *arg)
{
	int file;
	uint32_t *w = map_own(&file);

	CHECK_EQ(*w, 5150);
	CHECK_EQ(fx_wake(w, INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(w, INT_MAX, FX_SHARED), (intptr_t)arg);
	CHECK_SYS(close(file));
	return PT_PASS;
}

int main(void)
{
	char *m1, *m2;
	uint32_t *w1, *w2;
	int file, fd, pfd[2], status;
	pid_t pid;
	char c;

	file = CHECK_SYS(mkstemp(path));
	CHECK_SYS(ftruncate(file, 3 * 4096));
	m1 = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
	m2 = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
	CHECK(m1 != MAP_FAILED && m2 != MAP_FAILED && m1 != m2);
	w1 = (uint32_t *)(m1 + OFF);
	w2 = (uint32_t *)(m2 + OFF);
	*w1 = 5150;
	CHECK_EQ(*w2, 5150);
	fd = fx_new(POLLFS_NONBLOCK);

	/* two mappings in one process */
	fx_arm(fd, w1, 5150, FX_SHARED);
	CHECK_EQ(fx_wake(w2, INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(w1, INT_MAX, FX_PRIVATE), 0);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(w2, INT_MAX, FX_SHARED), 1);
	fx_expect_rec(fd, w1, 5150, FX_SHARED);
	/* the other way round */
	fx_arm(fd, w2, 5150, FX_SHARED);
	CHECK_EQ(fx_wake(w1, 1, FX_SHARED), 1);
	fx_expect_rec(fd, w2, 5150, FX_SHARED);
	/* another word of the same file is another futex */
	fx_arm(fd, w1, 5150, FX_SHARED);
	CHECK_EQ(fx_wake(w2 + 1, INT_MAX, FX_SHARED), 0);
	CHECK_EQ(fx_wake(m2 + 12, INT_MAX, FX_SHARED), 0);
	CHECK_EQ(fx_wake(w2, INT_MAX, FX_SHARED), 1);
	fx_expect_rec(fd, w1, 5150, FX_SHARED);

	/* another process with its own open and mapping wakes it */
	fx_arm(fd, w2, 5150, FX_SHARED);
	CHECK_EQ(pt_run_child(child_wakes, (void *)1, PT_WAIT_MS), PT_PASS);
	fx_expect_rec(fd, w2, 5150, FX_SHARED);
	CHECK_EQ(pt_run_child(child_wakes, (void *)0, PT_WAIT_MS), PT_PASS);
	fx_expect_unarmed(fd);

	/* and an object of that process, armed through its own mapping, is
	 * woken by this one through either of these mappings */
	CHECK_SYS(pipe2(pfd, O_CLOEXEC));
	pid = fx_fork();
	if (pid == 0) {
		int cfile, cfd = fx_new(0);
		uint32_t *w;

		CHECK_SYS(munmap(m1, 3 * 4096));
		CHECK_SYS(munmap(m2, 3 * 4096));
		w = map_own(&cfile);
		fx_arm(cfd, w, 5150, FX_SHARED);
		if (write(pfd[1], "a", 1) != 1)
			FAIL("write(pipe): %s", strerror(errno));
		fx_expect_rec(cfd, w, 5150, FX_SHARED);	/* blocks */
		_exit(PT_PASS);
	}
	CHECK_EQ(read(pfd[0], &c, 1), 1);
	CHECK_EQ(fx_wake(w1, INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(w1, 1, FX_SHARED), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), PT_PASS);
	CHECK_EQ(fx_wake(w2, INT_MAX, FX_SHARED), 0);

	CHECK_SYS(close(fd));
	CHECK_SYS(munmap(m1, 3 * 4096));
	CHECK_SYS(munmap(m2, 3 * 4096));
	CHECK_SYS(close(file));
	CHECK_SYS(unlink(path));
	return PT_PASS;
}
