// SPDX-License-Identifier: MIT
/*
 * A full ring (contract 1.2): records that do not fit wait in the
 * object, as they would without a ring, POLLFS_RING_OVERFLOW says so,
 * later records join them there (order holds), read(2) returns the
 * ring's then the object's, oldest first, and the flag clears once it
 * has; the ring is used again after.  Each on a ring of 2 entries:
 *  - a watched futex word: the third wake's record waits in the object,
 *    which is then no waiter (a fourth wake counts nothing) until the
 *    read takes it, with the word's value then, and arms it again;
 *  - the same, the ring's records taken first by the consumer: the
 *    object's stays there, POLLIN stays, the read returns it alone;
 *  - a one-shot futex object armed three times: the three records come
 *    back in arming order;
 *  - a periodic timer: its expirations add up in the object, the timer
 *    stopped, and the read's record counts every period since the
 *    ring's last (the sum over the three records: the periods begun by
 *    the read);
 *  - a write to the timer drops the count waiting in the object and
 *    keeps the ring's records;
 *  - (root) a timer armed with POLLFS_TIMER_CANCEL_ON_SET: a step of
 *    the realtime clock puts no record in the ring, sets the flag, and
 *    the next read fails with ECANCELED.
 */
#include "lib/futex.h"
#include "lib/timer.h"
#include "lib/ring.h"

PT_BUDGET(60);

#define WATCHED		(FX_PRIVATE | FX_WATCH)

static void store_and_wake(uint32_t *word, uint32_t val, long counted)
{
	__atomic_store_n(word, val, __ATOMIC_SEQ_CST);
	CHECK_EQ(fx_wake(word, INT_MAX, FX_PRIVATE), counted);
}

/* Two records in the ring, the third waiting in the object. */
static void fill_watched(struct rg_ring *ring, uint32_t *word)
{
	uint32_t tail;

	store_and_wake(word, 1, 1);
	store_and_wake(word, 2, 1);
	rg_wait_ready(ring, 2);
	CHECK(!rg_overflow(ring));
	tail = rg_tail(ring);
	store_and_wake(word, 3, 1);
	rg_wait_overflow(ring);
	CHECK_EQ(rg_tail(ring), tail);
	CHECK_EQ(rg_ready(ring), 2);
	/* the waiting record's object is not a waiter */
	store_and_wake(word, 4, 0);
	CHECK(pt_poll_in(ring->fd, 0));
}

/* The ring used again: the object armed on @val, the flag clear. */
static void used_again(struct rg_ring *ring, uint32_t *word, uint32_t val)
{
	struct pollfs_futex_event ev;

	CHECK(!rg_overflow(ring));
	rg_expect_empty(ring);
	store_and_wake(word, val + 1, 1);
	rg_wait_ready(ring, 1);
	CHECK(!rg_overflow(ring));
	CHECK_EQ(rg_take(ring, &ev, 1), 1);
	fx_check_rec(&ev, word, val + 1, WATCHED);
}

TEST(watched_read_drains_in_order)
{
	static uint32_t word;
	struct pollfs_futex_event got[8];
	int fd = fx_new(0);
	struct rg_ring ring;

	rg_setup(&ring, fd, 2, RG_FUTEX_REC);
	fx_arm(fd, &word, 0, WATCHED);
	fill_watched(&ring, &word);
	CHECK_EQ(read(fd, got, sizeof(got)), 3 * FX_REC);
	fx_check_rec(&got[0], &word, 1, WATCHED);
	fx_check_rec(&got[1], &word, 2, WATCHED);
	/* the word's value at the read, as in 1.1 */
	fx_check_rec(&got[2], &word, 4, WATCHED);
	used_again(&ring, &word, 4);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

TEST(watched_ring_taken_first)
{
	static uint32_t word;
	struct pollfs_futex_event got[8];
	int fd = fx_new(POLLFS_NONBLOCK);
	struct rg_ring ring;

	rg_setup(&ring, fd, 2, RG_FUTEX_REC);
	fx_arm(fd, &word, 0, WATCHED);
	fill_watched(&ring, &word);
	CHECK_EQ(rg_take(&ring, got, 8), 2);
	fx_check_rec(&got[0], &word, 1, WATCHED);
	fx_check_rec(&got[1], &word, 2, WATCHED);
	/* room again, but the record waiting in the object stays there */
	pt_sleep_ms(20);
	CHECK_EQ(rg_ready(&ring), 0);
	CHECK(rg_overflow(&ring));
	CHECK(pt_poll_in(fd, 0));
	store_and_wake(&word, 5, 0);
	CHECK_EQ(read(fd, got, sizeof(got)), FX_REC);
	fx_check_rec(&got[0], &word, 5, WATCHED);
	used_again(&ring, &word, 5);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

TEST(oneshot_in_order)
{
	static uint32_t words[3] = { 1, 2, 3 };
	struct pollfs_futex_event got[8];
	int fd = fx_new(POLLFS_NONBLOCK);
	struct rg_ring ring;

	rg_setup(&ring, fd, 2, RG_FUTEX_REC);
	for (int i = 0; i < 3; i++) {
		fx_arm(fd, &words[i], words[i], FX_PRIVATE);
		CHECK_EQ(fx_wake(&words[i], 1, FX_PRIVATE), 1);
		if (i < 2)
			rg_wait_ready(&ring, (uint32_t)i + 1);
	}
	rg_wait_overflow(&ring);
	CHECK_EQ(rg_ready(&ring), 2);
	CHECK_EQ(read(fd, got, sizeof(got)), 3 * FX_REC);
	for (int i = 0; i < 3; i++)
		fx_check_rec(&got[i], &words[i], words[i], FX_PRIVATE);
	CHECK(!rg_overflow(&ring));
	rg_expect_empty(&ring);
	fx_expect_unarmed(fd);
	/* and the ring again */
	fx_arm(fd, &words[0], words[0], FX_PRIVATE);
	CHECK_EQ(fx_wake(&words[0], 1, FX_PRIVATE), 1);
	rg_wait_ready(&ring, 1);
	CHECK(!rg_overflow(&ring));
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

TEST(timer_adds_up_in_the_object)
{
	const int64_t period = MS(10);
	struct pollfs_timer_event got[8], peek[2];
	int fd = tmr_new(0);
	struct rg_ring ring;
	int64_t start = pt_mono() + MS(5), t0, t1;
	uint64_t total = 0;
	ssize_t r;

	rg_setup(&ring, fd, 2, RG_TIMER_REC);
	tmr_arm(fd, CLOCK_MONOTONIC, POLLFS_TIMER_ABSTIME, start, period);
	rg_wait_overflow(&ring);
	CHECK_EQ(rg_ready(&ring), 2);
	memcpy(&peek[0], rg_slot(&ring, rg_head(&ring)), sizeof(peek[0]));
	memcpy(&peek[1], rg_slot(&ring, rg_head(&ring) + 1), sizeof(peek[1]));
	/* several more periods, counted in the object */
	pt_sleep_ms(50);
	CHECK_EQ(rg_ready(&ring), 2);
	t0 = pt_mono();
	r = read(fd, got, sizeof(got));
	t1 = pt_mono();
	CHECK(r >= 3 * TMR_EVENT_SIZE && r % TMR_EVENT_SIZE == 0);
	/* the ring's two first, unchanged */
	CHECK(!memcmp(&got[0], &peek[0], sizeof(peek[0])));
	CHECK(!memcmp(&got[1], &peek[1], sizeof(peek[1])));
	for (ssize_t i = 0; i < r / TMR_EVENT_SIZE; i++) {
		CHECK(got[i].expirations >= 1);
		CHECK_EQ(pt_ts_ns(&got[i].interval), period);
		total += got[i].expirations;
	}
	/* the object's counts the periods of the 50 ms and more */
	CHECK(got[2].expirations >= 5);
	CHECK_RANGE(total, (t0 - start) / period + 1, (t1 - start) / period + 1);
	CHECK(!rg_overflow(&ring));
	/* re-armed by the read: into the ring again */
	rg_wait_ready(&ring, 1);
	tmr_disarm(fd);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

TEST(timer_write_drops_the_waiting_count)
{
	struct pollfs_timer_event got[8], peek[2];
	int fd = tmr_new(POLLFS_NONBLOCK);
	struct rg_ring ring;

	rg_setup(&ring, fd, 2, RG_TIMER_REC);
	tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(5), MS(5));
	rg_wait_overflow(&ring);
	memcpy(peek, rg_slot(&ring, rg_head(&ring)), sizeof(peek[0]));
	memcpy(&peek[1], rg_slot(&ring, rg_head(&ring) + 1), sizeof(peek[1]));
	/* re-armed an hour away: what waited in the object is gone */
	tmr_arm(fd, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC, 0);
	CHECK_EQ(rg_ready(&ring), 2);
	CHECK_EQ(pt_read_nb(fd, got, sizeof(got)), 2 * TMR_EVENT_SIZE);
	CHECK(!memcmp(&got[0], &peek[0], sizeof(peek[0])));
	CHECK(!memcmp(&got[1], &peek[1], sizeof(peek[1])));
	CHECK(!rg_overflow(&ring));
	pt_expect_empty(fd);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

TEST(cancel_on_set_is_no_record)
{
	struct pollfs_timer_event got[4];
	int fd = tmr_new(POLLFS_NONBLOCK);
	struct rg_ring ring;
	uint32_t tail;

	pt_require_root();
	rg_setup(&ring, fd, 4, RG_TIMER_REC);
	tmr_real_save();
	tmr_arm(fd, CLOCK_REALTIME,
		POLLFS_TIMER_ABSTIME | POLLFS_TIMER_CANCEL_ON_SET,
		pt_now(CLOCK_REALTIME) + 3600 * NSEC_PER_SEC, 0);
	tail = rg_tail(&ring);
	tmr_real_step(NSEC_PER_SEC);
	rg_wait_overflow(&ring);
	CHECK_EQ(rg_tail(&ring), tail);
	CHECK(pt_poll_in(fd, 0));
	CHECK_ERR(read(fd, got, sizeof(got)), ECANCELED);
	CHECK(!rg_overflow(&ring));
	pt_expect_empty(fd);
	tmr_real_restore();
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

int main(void)
{
	return pt_run_tests();
}
