// SPDX-License-Identifier: MIT
/*
 * A mapping keeps the object's file alive (contract 1.2: the ring lives
 * as long as the object's file or any mapping of it): with the ring
 * mapped, closing the last descriptor ends nothing, and the munmap
 * then does what close would have done.
 *  - a periodic timer goes on expiring into the ring after the close;
 *  - a watched futex object stays a waiter after the close (FUTEX_WAKE
 *    counts it, its records reach the ring); after the munmap no
 *    FUTEX_WAKE counts it;
 *  - (root) /sys/module/pollfs/refcnt stays up through the close and
 *    comes back down after the munmap.
 */
#include "lib/futex.h"
#include "lib/timer.h"
#include "lib/ring.h"

#include <stdio.h>

PT_BUDGET(40);

#define WATCHED		(FX_PRIVATE | FX_WATCH)

static long refcnt(void)
{
	char buf[32];

	if (pt_read_file("/sys/module/pollfs/refcnt", buf, sizeof(buf)) < 0)
		return -1;
	return strtol(buf, NULL, 10);
}

/* Waits until FUTEX_WAKE of @word counts @want waiters. */
static void wakes_count(uint32_t *word, long want)
{
	int64_t end = pt_mono() + MS(PT_WAIT_MS);
	long r;

	while ((r = fx_wake(word, INT_MAX, FX_PRIVATE)) != want) {
		if (pt_mono() > end)
			FAIL("FUTEX_WAKE counts %ld waiters, expected %ld",
			     r, want);
		pt_sleep_ms(5);
	}
}

TEST(timer_goes_on)
{
	struct pollfs_timer_event got[4];
	struct rg_ring ring;
	int fd = tmr_new(0);
	uint32_t tail;

	rg_setup(&ring, fd, 64, RG_TIMER_REC);
	tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(2), MS(2));
	rg_wait_ready(&ring, 1);
	CHECK_SYS(close(fd));
	tail = rg_tail(&ring);
	rg_wait_ready(&ring, tail - rg_head(&ring) + 3);
	CHECK_EQ(rg_take(&ring, got, 4), 4);
	for (int i = 0; i < 4; i++) {
		CHECK(got[i].expirations >= 1);
		CHECK_EQ(pt_ts_ns(&got[i].interval), MS(2));
	}
	rg_unmap(&ring);
}

TEST(futex_stays_a_waiter)
{
	static uint32_t word;
	struct pollfs_futex_event ev;
	struct rg_ring ring;
	int fd = fx_new(0);

	rg_setup(&ring, fd, 8, RG_FUTEX_REC);
	fx_arm(fd, &word, 0, WATCHED);
	CHECK_SYS(close(fd));
	for (uint32_t v = 1; v <= 3; v++) {
		__atomic_store_n(&word, v, __ATOMIC_SEQ_CST);
		CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
		rg_wait_ready(&ring, 1);
		CHECK_EQ(rg_take(&ring, &ev, 1), 1);
		fx_check_rec(&ev, &word, v, WATCHED);
	}
	/* the last reference gone: no waiter left behind */
	rg_unmap(&ring);
	wakes_count(&word, 0);
}

TEST(module_reference)
{
	struct rg_ring ring;
	long base, open_ref;
	int fd;

	pt_require_root();
	if (refcnt() < 0)
		pt_skip("no /sys/module/pollfs/refcnt");
	base = refcnt();
	fd = tmr_new(0);
	rg_setup(&ring, fd, 8, RG_TIMER_REC);
	tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(1), MS(1));
	open_ref = refcnt();
	CHECK(open_ref > base);
	CHECK_SYS(close(fd));
	pt_sleep_ms(50);
	CHECK(refcnt() > base);
	rg_wait_ready(&ring, 1);
	rg_unmap(&ring);
	for (int64_t end = pt_mono() + MS(PT_WAIT_MS); refcnt() != base;) {
		if (pt_mono() > end)
			FAIL("module refcnt %ld after the munmap, %ld before "
			     "the object", refcnt(), base);
		pt_sleep_ms(10);
	}
}

int main(void)
{
	return pt_run_tests();
}
