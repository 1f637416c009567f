// SPDX-License-Identifier: MIT
/*
 * io_uring's IORING_OP_READ on a ringed object gives what read(2) gives
 * (contracts 1.1 and 1.2): the ring's records first, advancing head,
 * then those waiting in the object.
 *  - records in the ring: one read takes as many as fit, oldest first,
 *    and head moves past them; a second read the rest;
 *  - the ring empty: the read waits (io_uring polls the file) and
 *    completes with the next record, which the kernel put in the ring
 *    and the read took from there;
 *  - the ring full and a record waiting in the object: the read returns
 *    the ring's, then the object's, and the flag clears;
 *  - a periodic timer's records, the same way.
 */
#include "lib/futex.h"
#include "lib/timer.h"
#include "lib/ring.h"
#include "lib/uring.h"

PT_BUDGET(40);

#define WATCHED		(FX_PRIVATE | FX_WATCH)

static void store_and_wake(uint32_t *word, uint32_t val)
{
	__atomic_store_n(word, val, __ATOMIC_SEQ_CST);
	CHECK_EQ(fx_wake(word, INT_MAX, FX_PRIVATE), 1);
}

static int uring_read(int fd, void *buf, size_t len)
{
	io_uring_prep_read(ut_sqe(0), fd, buf, len, -1);
	ut_submit();
	return ut_result(PT_WAIT_MS);
}

TEST(takes_the_ring)
{
	static uint32_t word;
	struct pollfs_futex_event got[4];
	struct rg_ring ring;
	int fd = fx_new(0);
	uint32_t head0;

	ut_init();
	rg_setup(&ring, fd, 8, RG_FUTEX_REC);
	fx_arm(fd, &word, 0, WATCHED);
	for (uint32_t v = 1; v <= 3; v++)
		store_and_wake(&word, v);
	rg_wait_ready(&ring, 3);
	head0 = rg_head(&ring);
	CHECK_EQ(uring_read(fd, got, 2 * FX_REC), 2 * FX_REC);
	fx_check_rec(&got[0], &word, 1, WATCHED);
	fx_check_rec(&got[1], &word, 2, WATCHED);
	CHECK_EQ(rg_head(&ring), head0 + 2);
	CHECK_EQ(uring_read(fd, got, sizeof(got)), FX_REC);
	fx_check_rec(&got[0], &word, 3, WATCHED);
	rg_expect_empty(&ring);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

TEST(waits_for_the_next_record)
{
	static uint32_t word;
	struct pollfs_futex_event got[4];
	struct rg_ring ring;
	int fd = fx_new(POLLFS_NONBLOCK), res;

	ut_init();
	rg_setup(&ring, fd, 8, RG_FUTEX_REC);
	fx_arm(fd, &word, 0, WATCHED);
	io_uring_prep_read(ut_sqe(0), fd, got, sizeof(got), -1);
	ut_submit();
	if (ut_wait(100, &res, NULL, NULL))
		FAIL("a read completed with %d before any record", res);
	store_and_wake(&word, 7);
	CHECK_EQ(ut_result(PT_WAIT_MS), FX_REC);
	fx_check_rec(&got[0], &word, 7, WATCHED);
	/* taken from the ring: nothing left there */
	rg_expect_empty(&ring);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

TEST(ring_then_object)
{
	static uint32_t word;
	struct pollfs_futex_event got[8];
	struct rg_ring ring;
	int fd = fx_new(0);

	ut_init();
	rg_setup(&ring, fd, 2, RG_FUTEX_REC);
	fx_arm(fd, &word, 0, WATCHED);
	for (uint32_t v = 1; v <= 3; v++)
		store_and_wake(&word, v);
	rg_wait_overflow(&ring);
	CHECK_EQ(uring_read(fd, got, sizeof(got)), 3 * FX_REC);
	for (uint32_t i = 0; i < 3; i++)
		fx_check_rec(&got[i], &word, i + 1, WATCHED);
	CHECK(!rg_overflow(&ring));
	rg_expect_empty(&ring);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

TEST(periodic_timer)
{
	struct pollfs_timer_event got[4];
	struct rg_ring ring;
	int fd = tmr_new(POLLFS_NONBLOCK), res;
	uint64_t total = 0;

	ut_init();
	rg_setup(&ring, fd, 8, RG_TIMER_REC);
	tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(2), MS(2));
	while (total < 10) {
		res = uring_read(fd, got, sizeof(got));
		CHECK(res > 0 && res % TMR_EVENT_SIZE == 0);
		for (int i = 0; i < res / TMR_EVENT_SIZE; i++) {
			CHECK(got[i].expirations >= 1);
			CHECK_EQ(pt_ts_ns(&got[i].interval), MS(2));
			total += got[i].expirations;
		}
	}
	tmr_disarm(fd);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

int main(void)
{
	return pt_run_tests();
}
