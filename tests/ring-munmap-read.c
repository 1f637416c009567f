// SPDX-License-Identifier: MIT
/*
 * Unmapped, the ring goes on (contract 1.2: it lives as long as the
 * object's file): the object keeps writing records into it, read(2)
 * returns them, oldest first, taking them as it does from a mapped
 * ring, and a new mapping of the same layout shows the ring as read(2)
 * left it, and the records that follow.  A watched futex word, and a
 * periodic timer.
 */
#include "lib/futex.h"
#include "lib/timer.h"
#include "lib/ring.h"

PT_BUDGET(40);

#define WATCHED		(FX_PRIVATE | FX_WATCH)

TEST(watched_futex)
{
	static uint32_t word;
	struct pollfs_futex_event got[8];
	struct pollfs_ring_params p;
	struct rg_ring ring;
	int fd = fx_new(0);
	uint32_t tail;

	rg_setup(&ring, fd, 8, RG_FUTEX_REC);
	p = ring.p;
	fx_arm(fd, &word, 0, WATCHED);
	__atomic_store_n(&word, 1, __ATOMIC_SEQ_CST);
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	rg_wait_ready(&ring, 1);
	tail = rg_tail(&ring);
	rg_unmap(&ring);
	/* still a waiter, still a record per wake, into the ring */
	for (uint32_t v = 2; v <= 3; v++) {
		__atomic_store_n(&word, v, __ATOMIC_SEQ_CST);
		CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	}
	CHECK(pt_poll_in(fd, PT_WAIT_MS));
	CHECK_EQ(read(fd, got, sizeof(got)), 3 * FX_REC);
	for (uint32_t i = 0; i < 3; i++)
		fx_check_rec(&got[i], &word, i + 1, WATCHED);
	pt_expect_empty(fd);

	/* mapped again: as read(2) left it, three records on */
	rg_map(&ring, fd, &p);
	CHECK_EQ(rg_tail(&ring), tail + 2);
	CHECK_EQ(rg_head(&ring), tail + 2);
	CHECK(!rg_overflow(&ring));
	__atomic_store_n(&word, 4, __ATOMIC_SEQ_CST);
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	rg_wait_ready(&ring, 1);
	CHECK_EQ(rg_take(&ring, got, 8), 1);
	fx_check_rec(&got[0], &word, 4, WATCHED);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

TEST(periodic_timer)
{
	const int64_t period = MS(5);
	struct pollfs_timer_event got[16];
	struct pollfs_ring_params p;
	struct rg_ring ring;
	int fd = tmr_new(POLLFS_NONBLOCK);
	int64_t start = pt_mono() + MS(5), t1;
	uint64_t total = 0;
	ssize_t r;

	rg_setup(&ring, fd, 16, RG_TIMER_REC);
	p = ring.p;
	rg_unmap(&ring);
	tmr_arm(fd, CLOCK_MONOTONIC, POLLFS_TIMER_ABSTIME, start, period);
	pt_sleep_ms(30);
	r = read(fd, got, sizeof(got));
	t1 = pt_mono();
	CHECK(r > 0 && r % TMR_EVENT_SIZE == 0);
	for (ssize_t i = 0; i < r / TMR_EVENT_SIZE; i++) {
		CHECK(got[i].expirations >= 1);
		CHECK_EQ(pt_ts_ns(&got[i].interval), period);
		total += got[i].expirations;
	}
	CHECK_RANGE(total, 1, (t1 - start) / period + 1);
	/* the ring, mapped again, fills on */
	rg_map(&ring, fd, &p);
	rg_wait_ready(&ring, 2);
	CHECK_EQ(rg_take(&ring, got, 2), 2);
	CHECK(got[0].expirations >= 1 && got[1].expirations >= 1);
	tmr_disarm(fd);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

int main(void)
{
	return pt_run_tests();
}
