// SPDX-License-Identifier: MIT
/*
 * A record with POLLFS_FUTEX_WATCH (1.1) arms exactly like any record,
 * failures included: a value other than the word's gives EAGAIN and
 * leaves the object unarmed (no wake counts it, a read gives EINVAL),
 * whether it was unarmed, armed (watched or not) or woken and not read
 * (the record is gone); a misaligned address or an unknown flag bit
 * beside WATCH gives EINVAL, an unmapped word EFAULT, with the same
 * result.  Then a matching watched arm works.  Private and shared.
 */
#include "lib/futex.h"

#include <sys/mman.h>

PT_BUDGET(50);

static uint32_t word = 40, other = 41;

static void before(int fd, int how, uint32_t fl)
{
	switch (how) {
	case 0:
		break;				/* unarmed */
	case 1:
		fx_arm(fd, &other, 41, fl | FX_WATCH);	/* watched */
		break;
	case 2:
		fx_arm(fd, &other, 41, fl);		/* plain */
		break;
	case 3:
		fx_arm(fd, &other, 41, fl | FX_WATCH);	/* woken */
		CHECK_EQ(fx_wake(&other, 1, fl), 1);
		fx_expect_ready(fd);
		break;
	default:
		fx_arm(fd, &other, 41, fl | FX_WATCH);	/* read once */
		CHECK_EQ(fx_wake(&other, 1, fl), 1);
		fx_expect_watch(fd, &other, 41, fl | FX_WATCH);
		break;
	}
}

static void nothing_left(int fd, uint32_t fl)
{
	fx_expect_unarmed(fd);
	CHECK_EQ(fx_wake(&word, INT_MAX, fl), 0);
	CHECK_EQ(fx_wake(&other, INT_MAX, fl), 0);
	fx_expect_unarmed(fd);
}

int main(void)
{
	char *page;
	int fd;

	page = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(page != MAP_FAILED);
	CHECK_SYS(munmap(page + 4096, 4096));

	fd = fx_new(POLLFS_NONBLOCK);
	for (int shared = 0; shared < 2; shared++) {
		uint32_t fl = shared ? FX_SHARED : FX_PRIVATE;

		for (int how = 0; how < 5; how++) {
			pt_diag("%s, state %d before", shared ? "shared" :
				"private", how);
			before(fd, how, fl);
			CHECK_ERR(fx_write1(fd, &word, 39, fl | FX_WATCH),
				  EAGAIN);
			nothing_left(fd, fl);

			before(fd, how, fl);
			CHECK_ERR(fx_write1(fd, &word, 0, fl | FX_WATCH),
				  EAGAIN);
			nothing_left(fd, fl);

			before(fd, how, fl);
			CHECK_ERR(fx_write1(fd, (char *)&word + 2, 40,
					    fl | FX_WATCH), EINVAL);
			nothing_left(fd, fl);

			before(fd, how, fl);
			CHECK_ERR(fx_write1(fd, &word, 40,
					    fl | FX_WATCH | 0x4), EINVAL);
			nothing_left(fd, fl);

			before(fd, how, fl);
			CHECK_ERR(fx_write1(fd, &word, 40,
					    fl | FX_WATCH | 0x80000000u),
				  EINVAL);
			nothing_left(fd, fl);

			before(fd, how, fl);
			CHECK_ERR(fx_write1(fd, page + 4096 + 8, 0,
					    fl | FX_WATCH), EFAULT);
			nothing_left(fd, fl);
		}
		/* and a matching one arms */
		fx_arm(fd, &word, 40, fl | FX_WATCH);
		fx_expect_armed(fd);
		CHECK_EQ(fx_wake(&word, INT_MAX, fl), 1);
		fx_expect_watch(fd, &word, 40, fl | FX_WATCH);
		fx_disarm(fd);
	}
	CHECK_SYS(close(fd));
	return PT_PASS;
}
