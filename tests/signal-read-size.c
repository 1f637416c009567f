// SPDX-License-Identifier: MIT
/*
 * A read needs room for one 128-byte record: 0, 1 and 127 bytes are
 * EINVAL and leave the pending signal pending, 128 to 255 bytes read one
 * record.  As with signalfd, a signal dequeued into a buffer that faults
 * is lost (EFAULT), and records already copied are returned.  lseek and
 * pread are ESPIPE.
 */
#include "lib/signal.h"

#include <sys/mman.h>

PT_BUDGET(30);

int main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct pollfs_siginfo psi[2];
	void *volatile null = NULL;	/* hidden from the compiler's checks */
	char buf[256];
	char *map;
	int fd;

	ps_block(ps_bit(SIGUSR1) | ps_bit(SIGUSR2));
	fd = ps_signal(ps_bit(SIGUSR1) | ps_bit(SIGUSR2), POLLFS_NONBLOCK);

	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_ERR(read(fd, buf, 0), EINVAL);
	CHECK_ERR(read(fd, buf, 1), EINVAL);
	CHECK_ERR(read(fd, buf, 127), EINVAL);
	CHECK(ps_pending(SIGUSR1));
	CHECK(pt_poll_in(fd, 0));
	CHECK_EQ(read(fd, buf, 255), 128);
	ps_check_sig((struct pollfs_siginfo *)buf, SIGUSR1, SI_USER);
	ps_expect_empty(fd);
	CHECK_ERR(read(fd, buf, 127), EINVAL);

	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(read(fd, buf, 128), 128);
	ps_check_sig((struct pollfs_siginfo *)buf, SIGUSR1, SI_USER);

	/* a bad buffer: EFAULT, the signal gone */
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_ERR(read(fd, null, 128), EFAULT);
	CHECK(!ps_pending(SIGUSR1));
	ps_expect_empty(fd);

	/* the second record faults: the first is returned, the second lost */
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(map != MAP_FAILED);
	CHECK_SYS(munmap(map + page, page));
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_SYS(kill(getpid(), SIGUSR2));
	CHECK_EQ(read(fd, map + page - 128, 256), 128);
	ps_check_sig((struct pollfs_siginfo *)(map + page - 128), SIGUSR1,
		     SI_USER);
	CHECK(!ps_pending(SIGUSR2));
	ps_expect_empty(fd);
	CHECK_SYS(munmap(map, page));

	CHECK_ERR(lseek(fd, 0, SEEK_SET), ESPIPE);
	CHECK_ERR(lseek(fd, 0, SEEK_CUR), ESPIPE);
	CHECK_ERR(pread(fd, psi, sizeof(psi), 0), ESPIPE);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
