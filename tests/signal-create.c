// SPDX-License-Identifier: MIT
/*
 * Creating a signal object: the mask is kept as given but for SIGKILL and
 * SIGSTOP, which are silently dropped; the two flags work; unknown flags,
 * a non-zero reserved field and a bad argument pointer are refused; the
 * file is named pollfs:[signal].
 */
#include "lib/signal.h"

#include <sys/mman.h>

PT_BUDGET(30);

#define KILLSTOP	(ps_bit(SIGKILL) | ps_bit(SIGSTOP))

static void check_mask(uint64_t given, uint64_t expected)
{
	int fd = ps_signal(given, 0);
	uint64_t shown = ps_fdinfo_mask(0, fd);

	if (shown != expected)
		FAIL("created with mask %#llx: fdinfo shows %#llx, "
		     "expected %#llx", (unsigned long long)given,
		     (unsigned long long)shown, (unsigned long long)expected);
	CHECK_SYS(close(fd));
}

static void check_flags(unsigned int flags, bool nonblock, bool cloexec)
{
	int fd = ps_signal(ps_bit(SIGUSR1), flags);
	int fl = CHECK_SYS(fcntl(fd, F_GETFL));
	int fdfl = CHECK_SYS(fcntl(fd, F_GETFD));

	CHECK_EQ(!!(fl & O_NONBLOCK), nonblock);
	CHECK_EQ(fl & O_ACCMODE, O_RDWR);
	CHECK_EQ(!!(fdfl & FD_CLOEXEC), cloexec);
	pt_expect_fd_link(fd, "pollfs:[signal]");
	if (nonblock) {
		struct pollfs_siginfo psi;

		CHECK_ERR(read(fd, &psi, sizeof(psi)), EAGAIN);
	}
	CHECK_SYS(close(fd));
}

int main(void)
{
	struct pollfs_signal_open op;
	long page = sysconf(_SC_PAGESIZE);
	char *map;
	int dev;

	/* the mask, as given, in fdinfo */
	check_mask(ps_bit(SIGUSR1) | ps_bit(SIGUSR2),
		   ps_bit(SIGUSR1) | ps_bit(SIGUSR2));
	check_mask(ps_bit(1), ps_bit(1));
	check_mask(ps_bit(64), ps_bit(64));
	check_mask(0, 0);
	check_mask(0x8000000000000001ULL | ps_bit(SIGRTMIN),
		   0x8000000000000001ULL | ps_bit(SIGRTMIN));

	/* SIGKILL and SIGSTOP silently dropped, nothing else */
	check_mask(~0ULL, ~KILLSTOP);
	CHECK_EQ(~KILLSTOP, 0xfffffffffffbfeffULL);
	check_mask(KILLSTOP, 0);
	check_mask(ps_bit(SIGKILL) | ps_bit(SIGUSR1), ps_bit(SIGUSR1));
	check_mask(ps_bit(SIGSTOP) | ps_bit(SIGTSTP) | ps_bit(SIGCONT),
		   ps_bit(SIGTSTP) | ps_bit(SIGCONT));

	/* flags, in either spelling */
	check_flags(0, false, false);
	check_flags(POLLFS_NONBLOCK, true, false);
	check_flags(POLLFS_CLOEXEC, false, true);
	check_flags(POLLFS_NONBLOCK | POLLFS_CLOEXEC, true, true);
	check_flags(O_NONBLOCK | O_CLOEXEC, true, true);

	/* unknown flags and reserved bits */
	CHECK_ERR(ps_signal_open(ps_bit(SIGUSR1), 1, 0), EINVAL);
	CHECK_ERR(ps_signal_open(ps_bit(SIGUSR1), O_APPEND, 0), EINVAL);
	CHECK_ERR(ps_signal_open(ps_bit(SIGUSR1), O_RDWR, 0), EINVAL);
	CHECK_ERR(ps_signal_open(ps_bit(SIGUSR1), 0x80000000u, 0), EINVAL);
	CHECK_ERR(ps_signal_open(ps_bit(SIGUSR1), POLLFS_CLOEXEC | 0x4, 0),
		  EINVAL);
	CHECK_ERR(ps_signal_open(ps_bit(SIGUSR1), 0, 1), EINVAL);
	CHECK_ERR(ps_signal_open(ps_bit(SIGUSR1), 0, 0x80000000u), EINVAL);
	CHECK_ERR(ps_signal_open(0, POLLFS_NONBLOCK, 2), EINVAL);

	/* bad argument pointers */
	dev = pt_dev();
	CHECK_ERR(ioctl(dev, POLLFS_IOC_SIGNAL, NULL), EFAULT);
	CHECK_ERR(ioctl(dev, POLLFS_IOC_SIGNAL, (void *)8), EFAULT);
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(map != MAP_FAILED);
	CHECK_SYS(munmap(map + page, page));
	memset(&op, 0, sizeof(op));
	op.mask = ps_bit(SIGUSR1);
	/* the last 8 bytes of the argument in the unmapped page */
	memcpy(map + page - 8, &op, 8);
	CHECK_ERR(ioctl(dev, POLLFS_IOC_SIGNAL, map + page - 8), EFAULT);
	CHECK_ERR(ioctl(dev, POLLFS_IOC_SIGNAL, map + page), EFAULT);
	/* the same argument, readable, works */
	memcpy(map + page - sizeof(op), &op, sizeof(op));
	{
		int fd = CHECK_SYS(ioctl(dev, POLLFS_IOC_SIGNAL,
					 map + page - sizeof(op)));

		CHECK_EQ(ps_fdinfo_mask(0, fd), ps_bit(SIGUSR1));
		pt_expect_fd_link(fd, "pollfs:[signal]");
		CHECK_SYS(close(fd));
	}
	CHECK_SYS(munmap(map, page));
	CHECK_SYS(close(dev));
	return PT_PASS;
}
