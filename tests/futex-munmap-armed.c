// SPDX-License-Identifier: MIT
/*
 * Unmapping a futex word while an object waits on it is safe, as it is
 * for a thread in FUTEX_WAIT.  The wait stays keyed as it was armed:
 *  - private (address space, address): after munmap, and after a new
 *    mapping at the same address, a private wake there may count it (as
 *    it would a thread); only "no crash, clean close" is asserted;
 *  - shared anonymous (its shmem inode): a new shared anonymous mapping
 *    at the same address is another futex, its wake counts nothing;
 *  - shared file (the file's inode and offset): a new mapping of the
 *    same file, anywhere, wakes it.
 * MADV_DONTNEED on an armed private word leaves the wait armed.
 * A child exiting with a wait on an unmapped word is clean too.  Each
 * case is a TEST.
 */
#include "lib/futex.h"

#include <sys/mman.h>
#include <sys/wait.h>

PT_BUDGET(50);

#define PG 4096

static void *map_at(void *hint, int flags, int fd)
{
	void *p = mmap(hint, PG, PROT_READ | PROT_WRITE,
		       flags | (hint ? MAP_FIXED : 0), fd, 0);

	CHECK(p != MAP_FAILED);
	return p;
}

TEST(private_unmapped_then_woken_and_closed)
{
	int fd = fx_new(POLLFS_NONBLOCK);
	uint32_t *p;
	long r;

	p = map_at(NULL, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	p[2] = 5;
	fx_arm(fd, &p[2], 5, FX_PRIVATE);
	CHECK_SYS(munmap(p, PG));
	fx_expect_armed(fd);
	r = fx_wake(&p[2], INT_MAX, FX_PRIVATE);
	CHECK_RANGE(r, 0, 1);
	pt_diag("private, unmapped: the wake counted %ld", r);
	CHECK_SYS(close(fd));
	CHECK_EQ(fx_wake(&p[2], INT_MAX, FX_PRIVATE), 0);
}

TEST(private_remapped_at_the_same_address)
{
	int fd = fx_new(POLLFS_NONBLOCK);
	uint32_t *p, *q;
	long r;

	p = map_at(NULL, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	p[2] = 5;
	fx_arm(fd, &p[2], 5, FX_PRIVATE);
	CHECK_SYS(munmap(p, PG));
	q = map_at(p, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	CHECK(q == p);
	CHECK_EQ(q[2], 0);
	r = fx_wake(&q[2], INT_MAX, FX_PRIVATE);
	CHECK_RANGE(r, 0, 1);
	pt_diag("private, remapped: the wake counted %ld", r);
	if (r == 1)
		fx_expect_rec(fd, &p[2], 5, FX_PRIVATE);
	CHECK_SYS(close(fd));
	CHECK_SYS(munmap(q, PG));
}

/* MADV_DONTNEED zaps the page, the wait stays. */
TEST(private_page_zapped_wait_stays)
{
	int fd = fx_new(POLLFS_NONBLOCK);
	uint32_t *p;

	p = map_at(NULL, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	p[3] = 8;
	fx_arm(fd, &p[3], 8, FX_PRIVATE);
	CHECK_SYS(madvise(p, PG, MADV_DONTNEED));
	CHECK_EQ(p[3], 0);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&p[3], INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(fd, &p[3], 8, FX_PRIVATE);
	CHECK_SYS(munmap(p, PG));
	CHECK_SYS(close(fd));
}

/* The memory is gone: a new shared mapping there is another futex. */
TEST(shared_anonymous_remapped_is_another_futex)
{
	int fd = fx_new(POLLFS_NONBLOCK);
	uint32_t *p, *q;

	p = map_at(NULL, MAP_SHARED | MAP_ANONYMOUS, -1);
	p[4] = 9;
	fx_arm(fd, &p[4], 9, FX_SHARED);
	CHECK_SYS(munmap(p, PG));
	fx_expect_armed(fd);
	q = map_at(p, MAP_SHARED | MAP_ANONYMOUS, -1);
	CHECK(q == p);
	CHECK_EQ(fx_wake(&q[4], INT_MAX, FX_SHARED), 0);
	CHECK_EQ(fx_wake(&q[4], INT_MAX, FX_PRIVATE), 0);
	fx_expect_armed(fd);
	CHECK_SYS(close(fd));
	CHECK_SYS(munmap(q, PG));
}

/* Mapped again elsewhere, a file is the same futex. */
TEST(shared_file_remapped_elsewhere_is_the_same_futex)
{
	char path[] = "/tmp/pollfs-futex-XXXXXX";
	int fd = fx_new(POLLFS_NONBLOCK), file;
	uint32_t *p, *q;

	file = CHECK_SYS(mkstemp(path));
	CHECK_SYS(ftruncate(file, PG));
	p = map_at(NULL, MAP_SHARED, file);
	p[5] = 10;
	fx_arm(fd, &p[5], 10, FX_SHARED);
	/* room for the new mapping, taken while p is mapped: not at p */
	q = mmap(NULL, PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(q != MAP_FAILED);
	CHECK_SYS(munmap(p, PG));
	q = mmap(q, PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 file, 0);
	CHECK(q != MAP_FAILED);
	CHECK(q != p);
	CHECK_EQ(q[5], 10);
	CHECK_EQ(fx_wake(&q[5], INT_MAX, FX_SHARED), 1);
	fx_expect_rec(fd, &p[5], 10, FX_SHARED);
	/* and armed, unmapped, the file unlinked and closed, then closed */
	fx_arm(fd, &q[5], 10, FX_SHARED);
	CHECK_SYS(munmap(q, PG));
	CHECK_SYS(unlink(path));
	CHECK_SYS(close(file));
	fx_expect_armed(fd);
	CHECK_SYS(close(fd));
}

TEST(waitany_over_three_unmapped_pages)
{
	int fd = fx_new(POLLFS_NONBLOCK);
	uint32_t *p;

	p = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	{
		struct pollfs_futex_event evs[3] = {
			fx_ev(&p[0], 0, FX_PRIVATE),
			fx_ev(&p[1024], 0, FX_SHARED),
			fx_ev(&p[2048 + 7], 0, FX_PRIVATE),
		};

		fx_armv(fd, evs, 3);
	}
	CHECK_SYS(munmap(p, 3 * PG));
	fx_expect_armed(fd);
	CHECK_SYS(close(fd));
}

TEST(child_exits_waiting_on_words_it_unmapped)
{
	uint32_t *p, *q;
	int status;
	pid_t pid;

	pid = fx_fork();
	if (pid == 0) {
		int cfd = fx_new(0), cfd2 = fx_new(0);

		p = map_at(NULL, MAP_SHARED | MAP_ANONYMOUS, -1);
		fx_arm(cfd, &p[1], 0, FX_SHARED);
		q = map_at(NULL, MAP_PRIVATE | MAP_ANONYMOUS, -1);
		fx_arm(cfd2, &q[1], 0, FX_PRIVATE);
		munmap(p, PG);
		munmap(q, PG);
		_exit(PT_PASS);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == PT_PASS);
}

int main(void)
{
	return pt_run_tests();
}
