// SPDX-License-Identifier: MIT
/*
 * fork shares the ring (contract 1.2): the child's copy of the mapping
 * is the same memory, so parent and child are two consumers of one ring
 * (each takes by the compare-and-swap of the contract).  Checked, on a
 * watched word in MAP_SHARED memory (so that the child's shared wakes
 * reach the parent's object):
 *  - the child sees the records made before the fork, at the same
 *    indexes, and takes some; the parent then sees head moved past
 *    them and takes the rest, none twice;
 *  - a record made by the child's wake lands where the parent sees it;
 *  - the child cannot set up another ring on the object (EBUSY);
 *  - the parent's munmap leaves the child's mapping working: records
 *    the parent's wakes make reach the child;
 *  - the child's exit leaves the parent's mapping working.
 */
#include "lib/futex.h"
#include "lib/ring.h"

#include <sys/wait.h>

PT_BUDGET(40);

#define FLAGS	(FX_SHARED | FX_WATCH)

struct shared {
	uint32_t word;
	uint32_t taken[4];	/* what the child took */
	uint32_t ntaken;
};

static struct shared *sh;
static struct rg_ring ring;
static int fd;

static void setup(void)
{
	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	fd = fx_new(POLLFS_NONBLOCK);
	rg_setup(&ring, fd, 16, RG_FUTEX_REC);
	fx_arm(fd, &sh->word, 0, FLAGS);
}

static void store_and_wake(uint32_t val)
{
	__atomic_store_n(&sh->word, val, __ATOMIC_SEQ_CST);
	CHECK_EQ(fx_wake(&sh->word, INT_MAX, FX_SHARED), 1);
}

TEST(child_takes_from_the_same_ring)
{
	struct pollfs_futex_event ev;
	struct pollfs_ring_params p;
	uint32_t head0;
	pid_t pid;

	setup();
	for (uint32_t v = 1; v <= 3; v++)
		store_and_wake(v);
	rg_wait_ready(&ring, 3);
	head0 = rg_head(&ring);
	pid = fx_fork();
	if (pid == 0) {
		CHECK_EQ(rg_ready(&ring), 3);
		CHECK_EQ(rg_head(&ring), head0);
		CHECK_ERR(rg_ioctl(fd, 16, 0, 0, &p), EBUSY);
		for (int i = 0; i < 2; i++) {
			CHECK_EQ(rg_take_cas(&ring, &ev), 1);
			fx_check_rec(&ev, &sh->word, ev.val, FLAGS);
			sh->taken[sh->ntaken++] = ev.val;
		}
		/* a record of the child's wake, for the parent */
		store_and_wake(4);
		_exit(PT_PASS);
	}
	CHECK_EQ(pt_reap(pid), PT_PASS);
	CHECK_EQ(sh->ntaken, 2);
	CHECK_EQ(sh->taken[0], 1);
	CHECK_EQ(sh->taken[1], 2);
	CHECK_EQ(rg_head(&ring), head0 + 2);
	rg_wait_ready(&ring, 2);
	CHECK_EQ(rg_take_cas(&ring, &ev), 1);
	fx_check_rec(&ev, &sh->word, 3, FLAGS);
	CHECK_EQ(rg_take_cas(&ring, &ev), 1);
	fx_check_rec(&ev, &sh->word, 4, FLAGS);
	CHECK_EQ(rg_take_cas(&ring, &ev), 0);
	rg_expect_empty(&ring);
}

TEST(parent_unmaps_child_takes)
{
	int to_child[2], to_parent[2];
	char c = 0;
	pid_t pid;

	setup();
	CHECK_SYS(pipe2(to_child, O_CLOEXEC));
	CHECK_SYS(pipe2(to_parent, O_CLOEXEC));
	pid = fx_fork();
	if (pid == 0) {
		struct pollfs_futex_event ev;

		CHECK_EQ(read(to_child[0], &c, 1), 1);
		for (uint32_t v = 1; v <= 3; v++) {
			rg_wait_ready(&ring, 1);
			CHECK_EQ(rg_take_cas(&ring, &ev), 1);
			fx_check_rec(&ev, &sh->word, v, FLAGS);
		}
		CHECK_EQ(write(to_parent[1], &c, 1), 1);
		_exit(PT_PASS);
	}
	rg_unmap(&ring);
	CHECK_EQ(write(to_child[1], &c, 1), 1);
	for (uint32_t v = 1; v <= 3; v++)
		store_and_wake(v);
	CHECK_EQ(read(to_parent[0], &c, 1), 1);
	CHECK_EQ(pt_reap(pid), PT_PASS);
	/* the parent has read(2) still: nothing left */
	pt_expect_empty(fd);
}

TEST(child_exit_leaves_the_ring)
{
	struct pollfs_futex_event ev;
	pid_t pid;

	setup();
	pid = fx_fork();
	if (pid == 0) {
		store_and_wake(1);
		_exit(PT_PASS);
	}
	CHECK_EQ(pt_reap(pid), PT_PASS);
	store_and_wake(2);
	rg_wait_ready(&ring, 2);
	CHECK_EQ(rg_take(&ring, &ev, 1), 1);
	fx_check_rec(&ev, &sh->word, 1, FLAGS);
	CHECK_EQ(rg_take(&ring, &ev, 1), 1);
	fx_check_rec(&ev, &sh->word, 2, FLAGS);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
	CHECK_EQ(fx_wake(&sh->word, INT_MAX, FX_SHARED), 0);
}

int main(void)
{
	return pt_run_tests();
}
