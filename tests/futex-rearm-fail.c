// SPDX-License-Identifier: MIT
/*
 * A write that fails replaces the old wait all the same: the object is
 * left unarmed, whether it was armed (a FUTEX_WAKE of the old word then
 * counts nothing) or woken and not read (the record is gone).  Each way
 * a write of records can fail: a value that differs (EAGAIN), in a
 * single record or in a wait-any; a misaligned address or unknown flags
 * (EINVAL); an unmapped word or record buffer (EFAULT).  (More than 128
 * records: futex-rearm-toomany.)
 */
#include "lib/futex.h"

#include <sys/mman.h>

PT_BUDGET(50);

static uint32_t a = 1, b = 2;
static void *gone;

static void fail_write(int fd, int how)
{
	struct pollfs_futex_event evs[3];
	void *volatile null = NULL;
	const char *what = "";
	int err = 0;
	ssize_t r;

	errno = 0;
	switch (how) {
	case 0:
		what = "mismatch";
		err = EAGAIN;
		r = fx_write1(fd, &b, 3, FX_PRIVATE);
		break;
	case 1:
		what = "wait-any, last record mismatched";
		err = EAGAIN;
		evs[0] = fx_ev(&b, 2, FX_PRIVATE);
		evs[1] = fx_ev(&b, 2, FX_SHARED);
		evs[2] = fx_ev(&a, 0, FX_PRIVATE);
		r = write(fd, evs, sizeof(evs));
		break;
	case 2:
		what = "misaligned";
		err = EINVAL;
		r = fx_write1(fd, (char *)&b + 2, 2, FX_PRIVATE);
		break;
	case 3:
		what = "unknown flags";
		err = EINVAL;
		r = fx_write1(fd, &b, 2, 0x10);
		break;
	case 4:
		what = "unmapped word";
		err = EFAULT;
		r = fx_write1(fd, gone, 0, FX_PRIVATE);
		break;
	default:
		what = "unmapped record buffer";
		err = EFAULT;
		r = write(fd, null, 16);
		break;
	}
	if (r != -1 || errno != err)
		FAIL("%s: write returned %zd, errno %d (%s), expected %s", what,
		     r, errno, strerror(errno), strerrorname_np(err));
	pt_diag("%s: %s; expecting the object unarmed", what,
		strerrorname_np(err));
}

int main(void)
{
	int fd = fx_new(POLLFS_NONBLOCK);

	gone = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(gone != MAP_FAILED);
	CHECK_SYS(munmap(gone, 4096));

	for (int how = 0; how < 6; how++) {
		/* armed, then the failing write */
		fx_arm(fd, &a, 1, FX_PRIVATE);
		fail_write(fd, how);
		fx_expect_unarmed(fd);
		CHECK_EQ(fx_wake(&a, INT_MAX, FX_PRIVATE), 0);
		CHECK_EQ(fx_wake(&b, INT_MAX, FX_PRIVATE), 0);
		CHECK_EQ(fx_wake(&b, INT_MAX, FX_SHARED), 0);

		/* woken, not read, then the failing write */
		fx_arm(fd, &a, 1, FX_SHARED);
		CHECK_EQ(fx_wake(&a, 1, FX_SHARED), 1);
		fx_expect_ready(fd);
		fail_write(fd, how);
		fx_expect_unarmed(fd);

		/* and it works afterwards */
		fx_arm(fd, &a, 1, FX_PRIVATE);
		CHECK_EQ(fx_wake(&a, 1, FX_PRIVATE), 1);
		fx_expect_rec(fd, &a, 1, FX_PRIVATE);
	}
	CHECK_SYS(close(fd));
	return PT_PASS;
}
