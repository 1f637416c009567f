// SPDX-License-Identifier: MIT
/*
 * Arming: a write of one record whose word holds the expected value arms
 * the object (16 bytes written; armed, not readable); a value that
 * differs gives EAGAIN and leaves it unarmed (no FUTEX_WAKE counts it);
 * a misaligned address, unknown flag bits, more than 128 records or a
 * write shorter than one record give EINVAL and arm nothing.
 */
#include "lib/futex.h"

PT_BUDGET(30);

static uint32_t word = 7;
static uint32_t words[2] = { 0xffffffffu, 0x80000000u };

/* Nothing is armed on word (either kind of key), and fd is unarmed. */
static void expect_nothing(int fd, void *addr)
{
	fx_expect_unarmed(fd);
	CHECK_EQ(fx_wake(addr, INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(addr, INT_MAX, FX_SHARED), 0);
}

static void arms(int fd, void *addr, uint32_t val, uint32_t flags)
{
	CHECK_EQ(fx_write1(fd, addr, val, flags), FX_REC);
	fx_expect_armed(fd);
	/* a wake of the other kind of key does not count it */
	CHECK_EQ(fx_wake(addr, INT_MAX, flags ^ FX_SHARED), 0);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(addr, INT_MAX, flags), 1);
	fx_expect_ready(fd);
	fx_expect_rec(fd, addr, val, flags);
	expect_nothing(fd, addr);
}

int main(void)
{
	struct pollfs_futex_event evs[1000];
	void *volatile null = NULL;
	char *base = (char *)&word;
	int fd, bfd;

	fd = fx_new(POLLFS_NONBLOCK);
	bfd = fx_new(0);

	/* equal: armed, on either kind of object */
	arms(fd, &word, 7, FX_PRIVATE);
	arms(fd, &word, 7, FX_SHARED);
	arms(bfd, &word, 7, FX_PRIVATE);
	/* all 32 bits are compared */
	arms(fd, &words[0], 0xffffffffu, FX_PRIVATE);
	arms(fd, &words[1], 0x80000000u, FX_SHARED);

	/* different: EAGAIN, unarmed */
	for (int shared = 0; shared < 2; shared++) {
		uint32_t fl = shared ? FX_SHARED : FX_PRIVATE;

		CHECK_ERR(fx_write1(fd, &word, 8, fl), EAGAIN);
		expect_nothing(fd, &word);
		CHECK_ERR(fx_write1(bfd, &word, 6, fl), EAGAIN);
		expect_nothing(bfd, &word);
		CHECK_ERR(fx_write1(fd, &words[0], 0x7fffffffu, fl), EAGAIN);
		expect_nothing(fd, &words[0]);
		CHECK_ERR(fx_write1(fd, &words[1], 0, fl), EAGAIN);
		expect_nothing(fd, &words[1]);
	}

	/* misaligned: EINVAL */
	for (int off = 1; off < 4; off++) {
		CHECK_ERR(fx_write1(fd, base + off, 7, FX_PRIVATE), EINVAL);
		fx_expect_unarmed(fd);
		CHECK_ERR(fx_write1(fd, base + off, 7, FX_SHARED), EINVAL);
		fx_expect_unarmed(fd);
	}
	expect_nothing(fd, &word);

	/* unknown flag bits (all but SHARED and WATCH): EINVAL */
	{
		static const uint32_t bad[] = { 4, 5, 6, 7, 0x80000000u, ~0u,
						FX_SHARED | 0x100,
						POLLFS_FUTEX_WATCH | 0x8 };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			errno = 0;
			if (fx_write1(fd, &word, 7, bad[i]) != -1 ||
			    errno != EINVAL)
				FAIL("flags %#x: expected EINVAL, errno %d",
				     bad[i], errno);
			expect_nothing(fd, &word);
		}
	}

	/* shorter than one record: EINVAL */
	{
		struct pollfs_futex_event ev = fx_ev(&word, 7, 0);

		CHECK_ERR(write(fd, &ev, 0), EINVAL);
		CHECK_ERR(write(fd, &ev, 1), EINVAL);
		CHECK_ERR(write(fd, &ev, 8), EINVAL);
		CHECK_ERR(write(fd, &ev, 15), EINVAL);
		expect_nothing(fd, &word);
	}

	/* more than POLLFS_FUTEX_WAITV_MAX records: EINVAL, nothing armed */
	CHECK_EQ(POLLFS_FUTEX_WAITV_MAX, 128);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		evs[i] = fx_ev(&word, 7, FX_PRIVATE);
	CHECK_ERR(write(fd, evs, 129 * sizeof(evs[0])), EINVAL);
	expect_nothing(fd, &word);
	CHECK_ERR(write(fd, evs, sizeof(evs)), EINVAL);
	expect_nothing(fd, &word);

	/* a record buffer that is not mapped: EFAULT */
	CHECK_ERR(write(fd, null, 16), EFAULT);
	expect_nothing(fd, &word);

	/* and the object still works */
	arms(fd, &word, 7, FX_PRIVATE);
	CHECK_SYS(close(fd));
	CHECK_SYS(close(bfd));
	return PT_PASS;
}
