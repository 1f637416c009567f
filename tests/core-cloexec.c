// SPDX-License-Identifier: MIT
/*
 * POLLFS_CLOEXEC sets FD_CLOEXEC and its absence does not; across execve
 * the first is closed and the second stays open.
 */
#include "lib/timer.h"

#include <stdio.h>
#include <sys/wait.h>

PT_BUDGET(50);

static bool fd_is_timer(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = 0;
	return strcmp(link, "pollfs:[timer]") == 0;
}

/* After execve: argv[2] must be closed, argv[3] must be the timer. */
static int after_exec(int closed_fd, int open_fd)
{
	CHECK_ERR(fcntl(closed_fd, F_GETFD), EBADF);
	CHECK(fcntl(open_fd, F_GETFD) >= 0);
	CHECK(fd_is_timer(open_fd));
	return PT_PASS;
}

int main(int argc, char **argv)
{
	int with, without, nb, status;
	char a[16], b[16];
	pid_t pid;

	if (argc == 4 && strcmp(argv[1], "--after-exec") == 0)
		return after_exec(atoi(argv[2]), atoi(argv[3]));

	with = tmr_new(POLLFS_CLOEXEC);
	CHECK(CHECK_SYS(fcntl(with, F_GETFD)) & FD_CLOEXEC);
	without = tmr_new(0);
	CHECK(!(CHECK_SYS(fcntl(without, F_GETFD)) & FD_CLOEXEC));
	nb = tmr_new(POLLFS_NONBLOCK);
	CHECK(!(CHECK_SYS(fcntl(nb, F_GETFD)) & FD_CLOEXEC));
	CHECK_SYS(close(nb));
	nb = tmr_new(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	CHECK(CHECK_SYS(fcntl(nb, F_GETFD)) & FD_CLOEXEC);
	CHECK_SYS(close(nb));

	CHECK(fd_is_timer(with));
	CHECK(fd_is_timer(without));
	snprintf(a, sizeof(a), "%d", with);
	snprintf(b, sizeof(b), "%d", without);
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "--after-exec", a, b, (char *)NULL);
		pt_diag("execl(/proc/self/exe): %s", strerror(errno));
		_exit(PT_FAIL);
	}
	CHECK_SYS(waitpid(pid, &status, 0));
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), PT_PASS);
	return PT_PASS;
}
