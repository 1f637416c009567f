// SPDX-License-Identifier: MIT
/*
 * A ring holds exactly the records read(2) would return (contract 1.2,
 * "the record ring"): for each kind, an object with a ring and a twin
 * without one are driven alike (armed the same, woken by the same
 * FUTEX_WAKE, expiring at the same time), and each record taken from
 * the ring equals, byte for byte, the one read(2) returns from the
 * twin: a one-shot timer, a periodic timer (its fields, which timing
 * decides), a futex one-shot wait, a wait-any set, a watched word, a
 * watched set.  Besides:
 *  - the layout POLLFS_IOC_RING returns: record sizes 40 and 16, the
 *    words and records inside mmap_size, a multiple of the page size;
 *  - a one-shot futex object or set is unarmed once its record is in
 *    the ring (no FUTEX_WAKE counts it, a read fails with EINVAL), a
 *    watched one stays a waiter with no read or write (every FUTEX_WAKE
 *    counts it, each adds a record);
 *  - read(2) takes the ring's records first, oldest first, advancing
 *    head, then nothing (EAGAIN).
 */
#include "lib/futex.h"
#include "lib/timer.h"
#include "lib/ring.h"

PT_BUDGET(60);

/* Fails unless the ring's record and read(2)'s are the same bytes. */
#define same_record(ring_rec, read_rec, size)				\
	same_record_at(__FILE__, __LINE__, (ring_rec), (read_rec), (size))
static void same_record_at(const char *file, int line, const void *ring_rec,
			   const void *read_rec, size_t size)
{
	char a[2 * RG_TIMER_REC + 1], b[2 * RG_TIMER_REC + 1];

	if (memcmp(ring_rec, read_rec, size))
		pt_fail_at(file, line, "ring record %s, read(2) gave %s",
			   rg_hex(ring_rec, size, a, sizeof(a)),
			   rg_hex(read_rec, size, b, sizeof(b)));
}

/*
 * Fails unless @fd's set is unarmed once the ring's worker lets go: it
 * puts a one-shot set's records in the ring and unarms the set holding
 * the object's lock, which a non-blocking read does not wait for
 * (EAGAIN), so a record can be in the ring a moment before the set is
 * unarmed (seen on an emulated arm64 guest).
 */
#define expect_unarmed_by_worker(fd)					\
	expect_unarmed_by_worker_at(__FILE__, __LINE__, (fd))
static void expect_unarmed_by_worker_at(const char *file, int line, int fd)
{
	struct pollfs_futex_event buf;
	int64_t end = pt_now(CLOCK_MONOTONIC) + PT_WAIT_MS * 1000000LL;

	while (pt_read_nb(fd, &buf, sizeof(buf)) < 0 && errno == EAGAIN &&
	       pt_now(CLOCK_MONOTONIC) < end)
		usleep(1000);
	fx_expect_unarmed_at(file, line, fd);
}

TEST(layout)
{
	static const uint32_t sizes[] = { POLLFS_RING_ENTRIES_MIN, 64,
					  POLLFS_RING_ENTRIES_MAX };
	struct rg_ring ring;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int t = tmr_new(0), f = fx_new(0);

		rg_setup(&ring, t, sizes[i], RG_TIMER_REC);
		rg_expect_empty(&ring);
		pt_diag("timer ring of %u: mmap_size %llu, head %u tail %u "
			"flags %u records %u", sizes[i],
			(unsigned long long)ring.p.mmap_size, ring.p.off_head,
			ring.p.off_tail, ring.p.off_flags, ring.p.off_records);
		rg_unmap(&ring);
		rg_setup(&ring, f, sizes[i], RG_FUTEX_REC);
		rg_expect_empty(&ring);
		rg_unmap(&ring);
		CHECK_SYS(close(t));
		CHECK_SYS(close(f));
	}
}

TEST(timer_oneshot)
{
	struct pollfs_timer_event taken, twin, again;
	int with = tmr_new(POLLFS_NONBLOCK), without = tmr_new(0);
	int64_t at = pt_mono() + MS(20);
	struct rg_ring ring;

	rg_setup(&ring, with, 8, RG_TIMER_REC);
	tmr_arm(with, CLOCK_MONOTONIC, POLLFS_TIMER_ABSTIME, at, 0);
	tmr_arm(without, CLOCK_MONOTONIC, POLLFS_TIMER_ABSTIME, at, 0);
	rg_wait_ready(&ring, 1);
	tmr_read_event(without, &twin);
	tmr_check_oneshot(&twin);
	CHECK_EQ(rg_ready(&ring), 1);
	CHECK(!rg_overflow(&ring));
	same_record(rg_slot(&ring, rg_head(&ring)), &twin, sizeof(twin));

	/* read(2) returns the ring's record, advancing head */
	CHECK_EQ(pt_read_nb(with, &again, sizeof(again)), TMR_EVENT_SIZE);
	same_record(&again, &twin, sizeof(twin));
	CHECK_EQ(rg_head(&ring), rg_tail(&ring));
	pt_expect_empty(with);

	/* the same through the lone consumer's take */
	tmr_arm(with, CLOCK_MONOTONIC, 0, MS(5), 0);
	tmr_arm(without, CLOCK_MONOTONIC, 0, MS(5), 0);
	rg_wait_ready(&ring, 1);
	CHECK_EQ(rg_take(&ring, &taken, 1), 1);
	tmr_read_event(without, &twin);
	same_record(&taken, &twin, sizeof(twin));
	pt_expect_empty(with);
	rg_expect_empty(&ring);
	rg_unmap(&ring);
	CHECK_SYS(close(with));
	CHECK_SYS(close(without));
}

/*
 * Timing decides how many expirations a periodic record counts and how
 * much time remains: the fields must be what a read gives (the period,
 * at least one expiration, at most one period to go), and add up.
 */
TEST(timer_periodic)
{
	const int64_t period = MS(15);
	struct pollfs_timer_event recs[8], twin;
	int with = tmr_new(POLLFS_NONBLOCK), without = tmr_new(0);
	int64_t start = pt_mono() + MS(10), end;
	uint64_t total = 0;
	struct rg_ring ring;
	size_t n;

	rg_setup(&ring, with, 8, RG_TIMER_REC);
	tmr_arm(with, CLOCK_MONOTONIC, POLLFS_TIMER_ABSTIME, start, period);
	tmr_arm(without, CLOCK_MONOTONIC, POLLFS_TIMER_ABSTIME, start, period);
	rg_wait_ready(&ring, 4);
	n = rg_take(&ring, recs, 8);
	end = pt_mono();
	tmr_read_event(without, &twin);
	CHECK_RANGE(n, 4, 8);
	for (size_t i = 0; i < n; i++) {
		CHECK(recs[i].expirations >= 1);
		CHECK_EQ(pt_ts_ns(&recs[i].interval), period);
		CHECK_EQ(pt_ts_ns(&recs[i].interval),
			 pt_ts_ns(&twin.interval));
		CHECK_RANGE(pt_ts_ns(&recs[i].remaining), 0, period);
		total += recs[i].expirations;
	}
	/* never early: no more than the periods begun by the take */
	CHECK_RANGE(total, n, (end - start) / period + 1);
	CHECK(twin.expirations >= 1);
	CHECK_RANGE(pt_ts_ns(&twin.remaining), 0, period);
	rg_unmap(&ring);
	CHECK_SYS(close(with));
	CHECK_SYS(close(without));
}

TEST(futex_oneshot)
{
	static uint32_t word = 5;
	struct pollfs_futex_event taken, twin;
	int with = fx_new(POLLFS_NONBLOCK), without = fx_new(0);
	struct rg_ring ring;

	rg_setup(&ring, with, 4, RG_FUTEX_REC);
	fx_arm(with, &word, 5, FX_PRIVATE);
	fx_arm(without, &word, 5, FX_PRIVATE);
	/* both are waiters */
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 2);
	rg_wait_ready(&ring, 1);
	CHECK_EQ(rg_take(&ring, &taken, 1), 1);
	fx_expect_rec(without, &word, 5, FX_PRIVATE);
	fx_check_rec(&taken, &word, 5, FX_PRIVATE);
	/* then unarmed, as after a read */
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
	expect_unarmed_by_worker(with);
	rg_expect_empty(&ring);

	/* and through read(2), the ring's record */
	fx_arm(with, &word, 5, FX_PRIVATE);
	fx_arm(without, &word, 5, FX_PRIVATE);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 2);
	rg_wait_ready(&ring, 1);
	memcpy(&taken, rg_slot(&ring, rg_head(&ring)), sizeof(taken));
	CHECK_EQ(read(without, &twin, sizeof(twin)), FX_REC);
	same_record(&taken, &twin, sizeof(twin));
	fx_expect_rec(with, &word, 5, FX_PRIVATE);
	CHECK_EQ(rg_head(&ring), rg_tail(&ring));
	expect_unarmed_by_worker(with);
	rg_unmap(&ring);
	CHECK_SYS(close(with));
	CHECK_SYS(close(without));
}

TEST(futex_shared_oneshot)
{
	uint32_t *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct pollfs_futex_event taken;
	int with = fx_new(POLLFS_NONBLOCK), without = fx_new(0);
	struct rg_ring ring;

	CHECK(word != MAP_FAILED);
	word[3] = 9;
	rg_setup(&ring, with, 2, RG_FUTEX_REC);
	fx_arm(with, &word[3], 9, FX_SHARED);
	fx_arm(without, &word[3], 9, FX_SHARED);
	CHECK_EQ(fx_wake(&word[3], INT_MAX, FX_SHARED), 2);
	rg_wait_ready(&ring, 1);
	CHECK_EQ(rg_take(&ring, &taken, 1), 1);
	fx_check_rec(&taken, &word[3], 9, FX_SHARED);
	fx_expect_rec(without, &word[3], 9, FX_SHARED);
	expect_unarmed_by_worker(with);
	rg_unmap(&ring);
	CHECK_SYS(close(with));
	CHECK_SYS(close(without));
}

TEST(futex_waitv)
{
	static uint32_t words[3] = { 1, 2, 3 };
	struct pollfs_futex_event set[3], taken[4], twin[4];
	int with = fx_new(POLLFS_NONBLOCK), without = fx_new(0);
	struct rg_ring ring;
	ssize_t r;
	size_t n;

	for (int i = 0; i < 3; i++)
		set[i] = fx_ev(&words[i], words[i], FX_PRIVATE);
	rg_setup(&ring, with, 8, RG_FUTEX_REC);
	fx_armv(with, set, 3);
	fx_armv(without, set, 3);
	CHECK_EQ(fx_wake(&words[1], INT_MAX, FX_PRIVATE), 2);
	rg_wait_ready(&ring, 1);
	n = rg_take(&ring, taken, 4);
	r = read(without, twin, sizeof(twin));
	CHECK_EQ(r, (ssize_t)(n * sizeof(twin[0])));
	for (size_t i = 0; i < n; i++)
		same_record(&taken[i], &twin[i], sizeof(twin[i]));
	fx_check_rec(&taken[0], &words[1], 2, FX_PRIVATE);
	/* the whole set is unarmed */
	for (int i = 0; i < 3; i++)
		CHECK_EQ(fx_wake(&words[i], INT_MAX, FX_PRIVATE), 0);
	expect_unarmed_by_worker(with);
	rg_expect_empty(&ring);
	rg_unmap(&ring);
	CHECK_SYS(close(with));
	CHECK_SYS(close(without));
}

TEST(futex_watched)
{
	static uint32_t word = 10;
	struct pollfs_futex_event taken[4];
	int with = fx_new(POLLFS_NONBLOCK), without = fx_new(0);
	struct rg_ring ring;

	rg_setup(&ring, with, 8, RG_FUTEX_REC);
	fx_arm(with, &word, 10, FX_PRIVATE | FX_WATCH);
	fx_arm(without, &word, 10, FX_PRIVATE | FX_WATCH);
	for (uint32_t v = 11; v <= 14; v++) {
		__atomic_store_n(&word, v, __ATOMIC_SEQ_CST);
		/* the twin was armed again by its read; the ringed one was
		 * never read: a waiter all the same */
		CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 2);
		rg_wait_ready(&ring, 1);
		CHECK_EQ(rg_take(&ring, taken, 4), 1);
		fx_check_rec(&taken[0], &word, v, FX_PRIVATE | FX_WATCH);
		fx_expect_watch(without, &word, v, FX_PRIVATE | FX_WATCH);
		/* armed, nothing waiting */
		pt_expect_empty(with);
	}
	/* wakes with no read in between: a record each, no coalescing
	 * (the twin gone, one waiter left) */
	CHECK_SYS(close(without));
	for (uint32_t v = 15; v <= 17; v++) {
		__atomic_store_n(&word, v, __ATOMIC_SEQ_CST);
		CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	}
	rg_wait_ready(&ring, 3);
	CHECK_EQ(rg_take(&ring, taken, 4), 3);
	for (uint32_t i = 0; i < 3; i++)
		fx_check_rec(&taken[i], &word, 15 + i, FX_PRIVATE | FX_WATCH);
	rg_unmap(&ring);
	CHECK_SYS(close(with));
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
}

TEST(futex_watched_set)
{
	static uint32_t words[2] = { 100, 200 };
	struct pollfs_futex_event set[2], taken[4], twin[4];
	int with = fx_new(POLLFS_NONBLOCK), without = fx_new(0);
	struct rg_ring ring;

	for (int i = 0; i < 2; i++)
		set[i] = fx_ev(&words[i], words[i], FX_PRIVATE | FX_WATCH);
	rg_setup(&ring, with, 4, RG_FUTEX_REC);
	fx_armv(with, set, 2);
	fx_armv(without, set, 2);
	__atomic_store_n(&words[1], 201, __ATOMIC_SEQ_CST);
	CHECK_EQ(fx_wake(&words[1], INT_MAX, FX_PRIVATE), 2);
	rg_wait_ready(&ring, 1);
	CHECK_EQ(rg_take(&ring, taken, 4), 1);
	CHECK_EQ(read(without, twin, sizeof(twin)), FX_REC);
	same_record(&taken[0], &twin[0], sizeof(twin[0]));
	fx_check_rec(&taken[0], &words[1], 201, FX_PRIVATE | FX_WATCH);
	/* every word of the set still watched */
	CHECK_EQ(fx_wake(&words[0], INT_MAX, FX_PRIVATE), 2);
	rg_wait_ready(&ring, 1);
	CHECK_EQ(rg_take(&ring, taken, 4), 1);
	fx_check_rec(&taken[0], &words[0], 100, FX_PRIVATE | FX_WATCH);
	rg_unmap(&ring);
	CHECK_SYS(close(with));
	CHECK_SYS(close(without));
}

/* read(2) takes the ring's records first, oldest first, a few at a time. */
TEST(read_takes_the_ring)
{
	static uint32_t word;
	struct pollfs_futex_event got[4];
	int fd = fx_new(0);
	struct rg_ring ring;
	uint32_t head0;

	rg_setup(&ring, fd, 8, RG_FUTEX_REC);
	fx_arm(fd, &word, 0, FX_PRIVATE | FX_WATCH);
	for (uint32_t v = 1; v <= 3; v++) {
		__atomic_store_n(&word, v, __ATOMIC_SEQ_CST);
		CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	}
	rg_wait_ready(&ring, 3);
	head0 = rg_head(&ring);
	CHECK_EQ(read(fd, got, 2 * FX_REC), 2 * FX_REC);
	fx_check_rec(&got[0], &word, 1, FX_PRIVATE | FX_WATCH);
	fx_check_rec(&got[1], &word, 2, FX_PRIVATE | FX_WATCH);
	CHECK_EQ(rg_head(&ring), head0 + 2);
	/* a buffer of 4: the one record left */
	CHECK_EQ(read(fd, got, sizeof(got)), FX_REC);
	fx_check_rec(&got[0], &word, 3, FX_PRIVATE | FX_WATCH);
	CHECK_EQ(rg_head(&ring), rg_tail(&ring));
	CHECK_ERR(pt_read_nb(fd, got, sizeof(got)), EAGAIN);
	/* less than a record: EINVAL, the ring untouched */
	__atomic_store_n(&word, 4, __ATOMIC_SEQ_CST);
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	rg_wait_ready(&ring, 1);
	CHECK_ERR(read(fd, got, FX_REC - 1), EINVAL);
	CHECK_EQ(rg_ready(&ring), 1);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

int main(void)
{
	return pt_run_tests();
}
