// SPDX-License-Identifier: MIT
/*
 * Unknown flag bits or a non-zero reserved field give EINVAL and create
 * nothing; the known flags, in either spelling, are accepted.
 */
#include "lib/lib.h"

PT_BUDGET(50);

static int create(int dev, unsigned int flags, unsigned int reserved)
{
	struct pollfs_open op = { .flags = flags, .reserved = reserved };

	return ioctl(dev, POLLFS_IOC_TIMER, &op);
}

int main(void)
{
	const unsigned int known = POLLFS_NONBLOCK | POLLFS_CLOEXEC;
	const unsigned int bad_flags[] = {
		0x1, 0x2, 0x4, 0x100, 0x80000000u, O_APPEND, O_DIRECT,
		~0u, ~known, POLLFS_NONBLOCK | 0x1, POLLFS_CLOEXEC | 0x80000000u,
	};
	const unsigned int bad_reserved[] = { 1, 0x100, 0x80000000u, ~0u };
	const unsigned int good_flags[] = {
		0, POLLFS_NONBLOCK, POLLFS_CLOEXEC, known,
		O_NONBLOCK, O_CLOEXEC, O_NONBLOCK | O_CLOEXEC,
	};
	int dev, probe, fd;

	CHECK_EQ(POLLFS_NONBLOCK, O_NONBLOCK);
	CHECK_EQ(POLLFS_CLOEXEC, O_CLOEXEC);

	dev = pt_dev();
	probe = CHECK_SYS(dup(dev));
	CHECK_SYS(close(probe));

	for (size_t i = 0; i < sizeof(bad_flags) / sizeof(bad_flags[0]); i++) {
		pt_diag("flags %#x", bad_flags[i]);
		CHECK_ERR(create(dev, bad_flags[i], 0), EINVAL);
	}
	for (size_t i = 0; i < sizeof(bad_reserved) / sizeof(bad_reserved[0]); i++) {
		pt_diag("reserved %#x", bad_reserved[i]);
		CHECK_ERR(create(dev, 0, bad_reserved[i]), EINVAL);
		CHECK_ERR(create(dev, known, bad_reserved[i]), EINVAL);
	}
	/* nothing was created by the failed calls */
	CHECK_EQ(CHECK_SYS(dup(dev)), probe);
	CHECK_SYS(close(probe));

	for (size_t i = 0; i < sizeof(good_flags) / sizeof(good_flags[0]); i++) {
		fd = create(dev, good_flags[i], 0);
		if (fd < 0)
			FAIL("flags %#x: errno %d (%s)", good_flags[i], errno,
			     strerror(errno));
		CHECK_SYS(close(fd));
	}
	CHECK_SYS(close(dev));
	return PT_PASS;
}
