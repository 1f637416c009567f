// SPDX-License-Identifier: MIT
/*
 * A wait-any set of watched records (POLLFS_FUTEX_WATCH, 1.1):
 *  - k records (2, 3, 16, 128), all WATCH, private, shared or mixed,
 *    arm at once like any set (k * 16 bytes written, every word a
 *    waiter, a mismatch anywhere: EAGAIN and nothing armed);
 *  - a read returns the woken records, each with its word's value now,
 *    and arms every woken record again on that value: the next wake of
 *    each counts it again; records not woken stay armed all along (a
 *    read does not disarm them, as it does a set without WATCH);
 *  - a read with room for fewer records than were woken returns some,
 *    the rest stay readable, and no woken record is lost: read after
 *    read, each comes exactly once;
 *  - all records WATCH or none: a set mixing them gives EINVAL, arms
 *    nothing, and leaves the object unarmed (whatever it was before);
 *  - a write replacing the set (a set, one record, or the disarm record)
 *    leaves no waiter on the old words.
 * Each size of set, and each of the rest, is a TEST.
 */
#include "lib/futex.h"

#include <sys/mman.h>

PT_BUDGET(50);

#define K 128

static uint32_t words[K];
static uint32_t *shm;

static void *addr_of(int i)
{
	return (i % 3 == 1) ? (void *)&shm[i * 29 % (2 * 1024)] :
			      (void *)&words[i];
}

static uint32_t kind_of(int i)
{
	return (i % 3 == 1 || i % 5 == 4) ? FX_SHARED : FX_PRIVATE;
}

static void set_of(struct pollfs_futex_event *evs, int k, bool watch)
{
	for (int i = 0; i < k; i++) {
		uint32_t *w = addr_of(i);

		evs[i] = fx_ev(w, *w, kind_of(i) | (watch ? FX_WATCH : 0));
	}
}

/* Index of rec in the set, or a failure. */
static int which(const struct pollfs_futex_event *rec, int k)
{
	for (int i = 0; i < k; i++)
		if (rec->addr == (uintptr_t)addr_of(i))
			return i;
	FAIL("record {%#llx, %u, %#x} of none of the %d words",
	     (unsigned long long)rec->addr, rec->val, rec->flags, k);
}

/* Every word of the set has our waiter: each one woken alone counts
 * it, and the read returns that record alone and arms it again. */
static void all_armed(int fd, int k)
{
	struct pollfs_futex_event got[4];

	for (int i = 0; i < k; i++) {
		CHECK_EQ(fx_wake(addr_of(i), 1, kind_of(i)), 1);
		CHECK_EQ(read(fd, got, sizeof(got)), FX_REC);
		CHECK_EQ(which(&got[0], k), i);
		fx_check_rec(&got[0], addr_of(i), *(uint32_t *)addr_of(i),
			     kind_of(i) | FX_WATCH);
	}
	fx_expect_armed(fd);
}

static void run(int fd, int k)
{
	struct pollfs_futex_event evs[K], got[K];
	bool seen[K];
	int nw = k < 5 ? k - 1 : 5, n;
	int woken[5];

	set_of(evs, k, true);
	fx_armv(fd, evs, (size_t)k);
	fx_expect_armed(fd);

	/* some woken, with new values; one read with room for all */
	for (int j = 0; j < nw; j++) {
		woken[j] = (j * 7 + 1) % k;
		*(uint32_t *)addr_of(woken[j]) += 100 + (uint32_t)j;
		CHECK_EQ(fx_wake(addr_of(woken[j]), 1, kind_of(woken[j])), 1);
		/* woken, not read: not a waiter until the read */
		CHECK_EQ(fx_wake(addr_of(woken[j]), INT_MAX,
				 kind_of(woken[j])), 0);
	}
	fx_expect_ready(fd);
	memset(got, 0, sizeof(got));
	CHECK_EQ(read(fd, got, sizeof(got)), nw * FX_REC);
	memset(seen, 0, sizeof(seen));
	for (int j = 0; j < nw; j++) {
		int i = which(&got[j], k);

		CHECK(!seen[i]);
		seen[i] = true;
		fx_check_rec(&got[j], addr_of(i), *(uint32_t *)addr_of(i),
			     kind_of(i) | FX_WATCH);
	}
	for (int j = 0; j < nw; j++)
		CHECK(seen[woken[j]]);
	fx_expect_armed(fd);

	/* every record is a waiter again, the woken ones and the others */
	all_armed(fd, k);

	/* several woken, read one record at a time: none lost */
	for (int j = 0; j < nw; j++) {
		*(uint32_t *)addr_of(woken[j]) += 1;
		CHECK_EQ(fx_wake(addr_of(woken[j]), 1, kind_of(woken[j])), 1);
	}
	memset(seen, 0, sizeof(seen));
	for (n = 0; n < nw; n++) {
		fx_expect_ready(fd);
		CHECK_EQ(read(fd, &got[n], FX_REC + 8), FX_REC);
		{
			int i = which(&got[n], k);

			CHECK(!seen[i]);
			seen[i] = true;
			fx_check_rec(&got[n], addr_of(i),
				     *(uint32_t *)addr_of(i),
				     kind_of(i) | FX_WATCH);
		}
	}
	for (int j = 0; j < nw; j++)
		CHECK(seen[woken[j]]);
	fx_expect_armed(fd);
	all_armed(fd, k);

	/* replaced by the disarm record: no waiter left on any word */
	fx_disarm(fd);
	for (int i = 0; i < k; i++)
		CHECK_EQ(fx_wake(addr_of(i), INT_MAX, kind_of(i)), 0);
	fx_expect_unarmed(fd);
}

/* A set mixing WATCH and plain records: EINVAL, nothing armed. */
static void mixed(int fd)
{
	struct pollfs_futex_event evs[K];
	static const int ks[] = { 2, 3, 128 };

	for (size_t n = 0; n < sizeof(ks) / sizeof(ks[0]); n++) {
		int k = ks[n];

		for (int at = 0; at < k; at += (k > 3 ? 37 : 1)) {
			for (int watch = 0; watch < 2; watch++) {
				/* all one way but the record at @at */
				set_of(evs, k, watch);
				evs[at].flags ^= FX_WATCH;

				/* unarmed before */
				CHECK_ERR(write(fd, evs, (size_t)k * FX_REC),
					  EINVAL);
				fx_expect_unarmed(fd);

				/* armed (a watch) before: unarmed after */
				fx_arm(fd, addr_of(0), *(uint32_t *)addr_of(0),
				       kind_of(0) | FX_WATCH);
				CHECK_ERR(write(fd, evs, (size_t)k * FX_REC),
					  EINVAL);
				fx_expect_unarmed(fd);
				for (int i = 0; i < k; i++)
					CHECK_EQ(fx_wake(addr_of(i), INT_MAX,
							 kind_of(i)), 0);
			}
		}
	}
	/* the same set all WATCH, or none, is accepted */
	set_of(evs, 3, true);
	fx_armv(fd, evs, 3);
	set_of(evs, 3, false);
	fx_armv(fd, evs, 3);
	CHECK_EQ(fx_wake(addr_of(1), INT_MAX, kind_of(1)), 1);
	fx_expect_rec(fd, addr_of(1), *(uint32_t *)addr_of(1), kind_of(1));
	fx_expect_unarmed(fd);	/* no WATCH: the read disarmed the set */
	CHECK_EQ(fx_wake(addr_of(0), INT_MAX, kind_of(0)), 0);
}

/* A mismatch anywhere in a watched set: EAGAIN, nothing armed. */
static void mismatch(int fd)
{
	struct pollfs_futex_event evs[K];

	for (int at = 0; at < K; at += 31) {
		set_of(evs, K, true);
		evs[at].val += 1;
		CHECK_ERR(write(fd, evs, sizeof(evs)), EAGAIN);
		fx_expect_unarmed(fd);
		for (int i = 0; i < K; i++)
			CHECK_EQ(fx_wake(addr_of(i), INT_MAX, kind_of(i)), 0);
	}
}

/* A watched set replaced by a set, then by one record: old words free. */
static void replaced(int fd)
{
	struct pollfs_futex_event evs[K];

	set_of(evs, 8, true);
	fx_armv(fd, evs, 8);
	CHECK_EQ(fx_wake(addr_of(2), 1, kind_of(2)), 1);	/* woken */
	fx_armv(fd, evs + 4, 4);	/* records 4..7 */
	for (int i = 0; i < 4; i++)
		CHECK_EQ(fx_wake(addr_of(i), INT_MAX, kind_of(i)), 0);
	fx_expect_armed(fd);	/* the woken record went with the set */
	fx_arm(fd, addr_of(9), *(uint32_t *)addr_of(9), kind_of(9) | FX_WATCH);
	for (int i = 4; i < 8; i++)
		CHECK_EQ(fx_wake(addr_of(i), INT_MAX, kind_of(i)), 0);
	CHECK_EQ(fx_wake(addr_of(9), INT_MAX, kind_of(9)), 1);
	fx_expect_watch(fd, addr_of(9), *(uint32_t *)addr_of(9),
			kind_of(9) | FX_WATCH);
	fx_disarm(fd);
}

/* A set of k on a non-blocking and on a blocking object. */
static void run_both(int k)
{
	int fd = fx_new(POLLFS_NONBLOCK), bfd = fx_new(0);

	run(fd, k);
	run(bfd, k);
	CHECK_SYS(close(fd));
	CHECK_SYS(close(bfd));
}

TEST(set_of_2)
{
	run_both(2);
}

TEST(set_of_3)
{
	run_both(3);
}

TEST(set_of_16)
{
	run_both(16);
}

TEST(set_of_128)
{
	run_both(128);
}

TEST(watch_mixed_with_plain_is_einval)
{
	int fd = fx_new(POLLFS_NONBLOCK);

	mixed(fd);
	CHECK_SYS(close(fd));
}

TEST(mismatch_anywhere_is_eagain)
{
	int fd = fx_new(POLLFS_NONBLOCK);

	mismatch(fd);
	CHECK_SYS(close(fd));
}

TEST(replaced_set_leaves_no_waiter)
{
	int fd = fx_new(POLLFS_NONBLOCK), bfd = fx_new(0);

	replaced(fd);
	replaced(bfd);
	CHECK_SYS(close(fd));
	CHECK_SYS(close(bfd));
}

int main(void)
{
	shm = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	for (int i = 0; i < K; i++)
		*(uint32_t *)addr_of(i) = 0x100u * (uint32_t)i;
	return pt_run_tests();
}
