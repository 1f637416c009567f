// SPDX-License-Identifier: MIT
/*
 * Creating a futex object: POLLFS_NONBLOCK and POLLFS_CLOEXEC (or
 * O_NONBLOCK and O_CLOEXEC) set the file's flags; any other flag bit or a
 * non-zero reserved field gives EINVAL and creates nothing; the file is
 * named pollfs:[futex].  A new object is unarmed: a read gives EINVAL,
 * blocking or not, and poll, select and epoll show nothing.
 */
#include "lib/futex.h"

#include <sys/epoll.h>
#include <sys/select.h>

PT_BUDGET(30);

static void check_new(int fd, bool nonblock, bool cloexec)
{
	struct pollfs_futex_event buf[2];
	struct epoll_event e;
	struct timeval tv = { 0, 100000 };
	fd_set rd;
	int fl, ep;

	fl = CHECK_SYS(fcntl(fd, F_GETFL));
	CHECK_EQ(fl & O_ACCMODE, O_RDWR);
	CHECK_EQ(!!(fl & O_NONBLOCK), nonblock);
	CHECK_EQ(!!(CHECK_SYS(fcntl(fd, F_GETFD)) & FD_CLOEXEC), cloexec);

	pt_expect_fd_link(fd, "pollfs:[futex]");

	/* unarmed: EINVAL from a read in the file's own mode (a blocking
	 * one too, which must not sleep) and in the other mode */
	CHECK_ERR(read(fd, buf, sizeof(buf)), EINVAL);
	CHECK_ERR(read(fd, buf, sizeof(buf[0])), EINVAL);
	CHECK_ERR(read(fd, buf, sizeof(buf[0]) - 1), EINVAL);
	CHECK_ERR(read(fd, buf, 0), EINVAL);
	CHECK_ERR(pt_read_nb(fd, buf, sizeof(buf)), EINVAL);

	CHECK_EQ(fx_revents(fd, 0), 0);
	CHECK_EQ(fx_revents(fd, 100), 0);

	FD_ZERO(&rd);
	FD_SET(fd, &rd);
	CHECK_EQ(CHECK_SYS(select(fd + 1, &rd, NULL, NULL, &tv)), 0);

	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	e.events = EPOLLIN;
	e.data.u64 = 7;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	CHECK_EQ(CHECK_SYS(epoll_wait(ep, &e, 1, 100)), 0);
	CHECK_SYS(close(ep));

	/* still unarmed after all that */
	fx_expect_unarmed(fd);
}

int main(void)
{
	static const struct {
		unsigned int flags;
		bool nonblock, cloexec;
	} good[] = {
		{ 0, false, false },
		{ POLLFS_NONBLOCK, true, false },
		{ POLLFS_CLOEXEC, false, true },
		{ POLLFS_NONBLOCK | POLLFS_CLOEXEC, true, true },
		{ O_NONBLOCK | O_CLOEXEC, true, true },
	};
	static const unsigned int bad_flags[] = {
		1, 2, O_APPEND, O_RDWR, O_DIRECT, 0x80000000u,
		POLLFS_NONBLOCK | 0x40000000u, POLLFS_CLOEXEC | 1, ~0u,
	};
	static const unsigned int bad_reserved[] = { 1, 0x80000000u, ~0u };
	int dev, fd, probe;

	CHECK_EQ(POLLFS_NONBLOCK, O_NONBLOCK);
	CHECK_EQ(POLLFS_CLOEXEC, O_CLOEXEC);

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		fd = fx_new(good[i].flags);
		check_new(fd, good[i].nonblock, good[i].cloexec);
		CHECK_SYS(close(fd));
	}

	/* a failed creation installs no file: the next fd is the same */
	dev = pt_dev();
	probe = CHECK_SYS(dup(dev));
	CHECK_SYS(close(probe));
	for (size_t i = 0; i < sizeof(bad_flags) / sizeof(bad_flags[0]); i++) {
		struct pollfs_open op = { .flags = bad_flags[i] };

		errno = 0;
		if (ioctl(dev, POLLFS_IOC_FUTEX, &op) != -1 || errno != EINVAL)
			FAIL("flags %#x: expected EINVAL, errno %d (%s)",
			     bad_flags[i], errno, strerror(errno));
	}
	for (size_t i = 0; i < sizeof(bad_reserved) / sizeof(bad_reserved[0]);
	     i++) {
		struct pollfs_open op = { .flags = 0,
					  .reserved = bad_reserved[i] };

		errno = 0;
		if (ioctl(dev, POLLFS_IOC_FUTEX, &op) != -1 || errno != EINVAL)
			FAIL("reserved %#x: expected EINVAL, errno %d (%s)",
			     bad_reserved[i], errno, strerror(errno));
	}
	CHECK_ERR(ioctl(dev, POLLFS_IOC_FUTEX, NULL), EFAULT);
	CHECK_EQ(CHECK_SYS(dup(dev)), probe);
	CHECK_SYS(close(probe));
	CHECK_SYS(close(dev));
	return PT_PASS;
}
