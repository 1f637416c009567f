// SPDX-License-Identifier: MIT
/* Helpers of the futex tests; see futex.h. */
#include "futex.h"

int fx_try(unsigned int flags, unsigned int reserved)
{
	struct pollfs_open op = { .flags = flags, .reserved = reserved };
	int dev, fd, e;

	dev = open("/dev/pollfs", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -1;
	fd = ioctl(dev, POLLFS_IOC_FUTEX, &op);
	e = errno;
	close(dev);
	errno = e;
	return fd;
}

int fx_new_at(const char *file, int line, unsigned int flags)
{
	int fd = fx_try(flags, 0);

	if (fd < 0)
		pt_fail_at(file, line, "creating a futex object (flags %#x): "
			   "errno %d (%s)", flags, errno, strerror(errno));
	return fd;
}

ssize_t fx_write1(int fd, const void *addr, uint32_t val, uint32_t flags)
{
	struct pollfs_futex_event ev = fx_ev(addr, val, flags);

	return write(fd, &ev, sizeof(ev));
}

void fx_arm_at(const char *file, int line, int fd, const void *addr,
	       uint32_t val, uint32_t flags)
{
	ssize_t r = fx_write1(fd, addr, val, flags);

	if (r != FX_REC)
		pt_fail_at(file, line, "arming fd %d on %p val %u flags %#x: "
			   "write returned %zd, errno %d (%s)", fd, addr, val,
			   flags, r, errno, strerror(errno));
}

void fx_armv_at(const char *file, int line, int fd,
		const struct pollfs_futex_event *evs, size_t n)
{
	ssize_t r = write(fd, evs, n * sizeof(*evs));

	if (r != (ssize_t)(n * sizeof(*evs)))
		pt_fail_at(file, line, "arming fd %d with %zu records: write "
			   "returned %zd, errno %d (%s)", fd, n, r, errno,
			   strerror(errno));
}

void fx_disarm_at(const char *file, int line, int fd)
{
	struct pollfs_futex_event ev;
	ssize_t r;

	memset(&ev, 0, sizeof(ev));
	r = write(fd, &ev, sizeof(ev));
	if (r != FX_REC)
		pt_fail_at(file, line, "disarming fd %d (one all-zero record): "
			   "write returned %zd, errno %d (%s), expected 16",
			   fd, r, errno, strerror(errno));
}

long fx_wake_at(const char *file, int line, void *addr, int n, uint32_t flags)
{
	long r = fx_futex(addr, fx_op(FUTEX_WAKE, flags), (uint32_t)n, 0,
			  NULL, 0);

	if (r < 0)
		pt_fail_at(file, line, "FUTEX_WAKE(%p, %d, %s): errno %d (%s)",
			   addr, n, (flags & FX_SHARED) ? "shared" : "private",
			   errno, strerror(errno));
	return r;
}

void fx_check_rec_at(const char *file, int line,
		     const struct pollfs_futex_event *got, const void *addr,
		     uint32_t val, uint32_t flags)
{
	if (got->addr != (uint64_t)(uintptr_t)addr || got->val != val ||
	    got->flags != flags)
		pt_fail_at(file, line, "record {addr %#llx, val %u, flags %#x},"
			   " expected {%p, %u, %#x}",
			   (unsigned long long)got->addr, got->val, got->flags,
			   addr, val, flags);
}

void fx_expect_rec_at(const char *file, int line, int fd, const void *addr,
		      uint32_t val, uint32_t flags)
{
	struct pollfs_futex_event buf[4];
	ssize_t r;

	memset(buf, 0xa5, sizeof(buf));
	do
		r = read(fd, buf, sizeof(buf));
	while (r < 0 && errno == EINTR);
	if (r != FX_REC)
		pt_fail_at(file, line, "read(futex fd %d, 64): returned %zd, "
			   "errno %d (%s), expected one record", fd, r, errno,
			   strerror(errno));
	fx_check_rec_at(file, line, &buf[0], addr, val, flags);
}

void fx_expect_watch_at(const char *file, int line, int fd, const void *addr,
			uint32_t val, uint32_t flags)
{
	fx_expect_rec_at(file, line, fd, addr, val, flags);
	fx_expect_armed_at(file, line, fd);
}

short fx_revents_at(const char *file, int line, int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		pt_fail_at(file, line, "poll(fd %d): errno %d (%s)", fd, errno,
			   strerror(errno));
	return r ? p.revents : 0;
}

void fx_expect_unarmed_at(const char *file, int line, int fd)
{
	struct pollfs_futex_event buf[4];
	short rev = fx_revents_at(file, line, fd, 0);
	ssize_t r;

	if (rev)
		pt_fail_at(file, line, "fd %d: poll revents %#x, expected none "
			   "(unarmed)", fd, rev);
	errno = 0;
	r = pt_read_nb(fd, buf, sizeof(buf));
	if (r != -1 || errno != EINVAL)
		pt_fail_at(file, line, "fd %d: read returned %zd, errno %d "
			   "(%s), expected EINVAL (unarmed)", fd, r, errno,
			   strerror(errno));
}

void fx_expect_armed_at(const char *file, int line, int fd)
{
	struct pollfs_futex_event buf[4];
	short rev = fx_revents_at(file, line, fd, 0);
	ssize_t r;

	if (rev)
		pt_fail_at(file, line, "fd %d: poll revents %#x, expected none "
			   "(armed, not woken)", fd, rev);
	errno = 0;
	r = pt_read_nb(fd, buf, sizeof(buf));
	if (r != -1 || errno != EAGAIN)
		pt_fail_at(file, line, "fd %d: non-blocking read returned %zd, "
			   "errno %d (%s), expected EAGAIN (armed, not woken)",
			   fd, r, errno, strerror(errno));
}

void fx_expect_ready_at(const char *file, int line, int fd)
{
	short rev = fx_revents_at(file, line, fd, 0);

	if (rev != POLLIN)
		pt_fail_at(file, line, "fd %d: poll revents %#x, expected "
			   "POLLIN (woken)", fd, rev);
}

pid_t fx_fork_at(const char *file, int line)
{
	pid_t parent = getpid(), pid = fork();

	if (pid < 0)
		pt_fail_at(file, line, "fork: %s", strerror(errno));
	if (pid == 0) {
		alarm(0);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(PT_FAIL);
	}
	return pid;
}

bool fx_task_sleeps_in(pid_t tid, long sysno)
{
	char path[64], buf[512];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	if (buf[0] < '0' || buf[0] > '9' || strtol(buf, NULL, 10) != sysno)
		return false;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

void fx_wait_sleeping_at(const char *file, int line, pid_t tid, long sysno)
{
	int64_t end = pt_mono() + MS(PT_WAIT_MS);

	while (!fx_task_sleeps_in(tid, sysno)) {
		if (pt_mono() > end)
			pt_fail_at(file, line, "task %d not asleep in system "
				   "call %ld within %d ms", (int)tid, sysno,
				   PT_WAIT_MS);
		pt_sleep_ms(2);
	}
	pt_sleep_ms(20);
}
