// SPDX-License-Identifier: MIT
/*
 * A watched object (POLLFS_FUTEX_WATCH, 1.1) after fork: the child's
 * copy of the fd is the same object, and the wait stays in the address
 * space of the process that wrote it.  Armed privately by the parent:
 *  - the child's private wakes of the same address (its own word, a
 *    copy since the fork) count nothing;
 *  - the parent's wake counts it, and a read by the child returns the
 *    value of the parent's word (not of the child's copy) and arms the
 *    wait again in the parent's address space: the parent's next wake
 *    counts it again, cycle after cycle, and the child's never do;
 *  - once the child has gone, the parent reads on.
 * Armed by the child on its word, it is the other way round: the
 * child's wakes count it, the parent reads the child's value, and the
 * parent's wakes of that address count nothing.  The child then
 * disarms it (one all-zero record) and nothing counts it any more.
 * The two are TESTs of their own, each with its own object.
 */
#include "lib/futex.h"

#include <sys/wait.h>

PT_BUDGET(50);

#define ROUNDS 20

static uint32_t word = 5;
static int fd, to_parent[2], to_child[2];

/* The parent's wait, read by the child. */
TEST(parent_armed_read_by_the_child)
{
	pid_t pid;

	fd = fx_new(0);
	word = 5;
	fx_arm(fd, &word, 5, FX_PRIVATE | FX_WATCH);
	pid = fx_fork();
	if (pid == 0) {
		word = 99;	/* the child's copy */
		CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
		CHECK_EQ(fx_wake(&word, INT_MAX, FX_SHARED), 0);
		fx_expect_armed(fd);
		pt_send_byte(to_parent[1], 'g');
		for (uint32_t i = 1; i <= ROUNDS; i++) {
			/* blocks until the parent's wake */
			fx_expect_rec(fd, &word, 5 + i, FX_PRIVATE | FX_WATCH);
			CHECK_EQ(word, 99);
			/* re-armed, but not in this address space */
			CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
			fx_expect_armed(fd);
			pt_send_byte(to_parent[1], 'r');
		}
		_exit(PT_PASS);
	}
	CHECK_EQ(pt_recv_byte(to_parent[0]), 'g');
	for (uint32_t i = 1; i <= ROUNDS; i++) {
		word = 5 + i;
		CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
		CHECK_EQ(pt_recv_byte(to_parent[0]), 'r');
	}
	CHECK_EQ(pt_reap(pid), PT_PASS);
	/* the child is gone: the parent's wait goes on */
	fx_expect_armed(fd);
	word = 77;
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
	fx_expect_watch(fd, &word, 77, FX_PRIVATE | FX_WATCH);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
	fx_expect_watch(fd, &word, 77, FX_PRIVATE | FX_WATCH);
	fx_disarm(fd);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
	CHECK_SYS(close(fd));
}

/* The child's wait, read by the parent. */
TEST(child_armed_read_by_the_parent)
{
	pid_t pid;

	fd = fx_new(0);
	word = 5;
	pid = fx_fork();
	if (pid == 0) {
		word = 1000;
		fx_arm(fd, &word, 1000, FX_PRIVATE | FX_WATCH);
		pt_send_byte(to_parent[1], 'a');
		for (uint32_t i = 1; i <= ROUNDS; i++) {
			CHECK_EQ(pt_recv_byte(to_child[0]), 'n');
			word = 1000 + i;
			CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
			pt_send_byte(to_parent[1], 'w');
		}
		CHECK_EQ(pt_recv_byte(to_child[0]), 'd');
		fx_disarm(fd);
		CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
		pt_send_byte(to_parent[1], 'd');
		_exit(PT_PASS);
	}
	CHECK_EQ(pt_recv_byte(to_parent[0]), 'a');
	for (uint32_t i = 1; i <= ROUNDS; i++) {
		/* the parent's own word is another futex */
		CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
		fx_expect_armed(fd);
		pt_send_byte(to_child[1], 'n');
		CHECK_EQ(pt_recv_byte(to_parent[0]), 'w');
		fx_expect_ready(fd);
		/* the child's value, at the child's address */
		fx_expect_watch(fd, &word, 1000 + i, FX_PRIVATE | FX_WATCH);
		CHECK_EQ(word, 5);
	}
	pt_send_byte(to_child[1], 'd');
	CHECK_EQ(pt_recv_byte(to_parent[0]), 'd');
	fx_expect_unarmed(fd);
	CHECK_EQ(pt_reap(pid), PT_PASS);
	fx_expect_unarmed(fd);
	CHECK_SYS(close(fd));
}

int main(void)
{
	CHECK_SYS(pipe2(to_parent, O_CLOEXEC));
	CHECK_SYS(pipe2(to_child, O_CLOEXEC));
	return pt_run_tests();
}
