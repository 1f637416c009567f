/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the futex object's tests (tests/futex-*.c): creating and
 * arming objects, raw futex(2) calls, checking records and states, and
 * waiting until another task sleeps in a given system call.
 * Include it instead of lib.h.
 */
#ifndef POLLFS_TESTS_FUTEX_H
#define POLLFS_TESTS_FUTEX_H

#include "lib.h"

#include <limits.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <linux/futex.h>

#define FX_REC		((ssize_t)sizeof(struct pollfs_futex_event))
#define FX_PRIVATE	0u
#define FX_SHARED	POLLFS_FUTEX_SHARED

_Static_assert(sizeof(struct pollfs_futex_event) == 16, "futex record size");

/* ---- objects ---- */

/* POLLFS_IOC_FUTEX with these flags; the fd, or -1 with errno. */
static inline int fx_try(unsigned int flags, unsigned int reserved)
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

static inline int fx_new_at(const char *file, int line, unsigned int flags)
{
	int fd = fx_try(flags, 0);

	if (fd < 0)
		pt_fail_at(file, line, "creating a futex object (flags %#x): "
			   "errno %d (%s)", flags, errno, strerror(errno));
	return fd;
}
#define fx_new(flags) fx_new_at(__FILE__, __LINE__, (flags))

static inline struct pollfs_futex_event fx_ev(const void *addr, uint32_t val,
					      uint32_t flags)
{
	struct pollfs_futex_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.addr = (uint64_t)(uintptr_t)addr;
	ev.val = val;
	ev.flags = flags;
	return ev;
}

/* Writes one record; returns what write() returned (errno kept). */
static inline ssize_t fx_write1(int fd, const void *addr, uint32_t val,
				uint32_t flags)
{
	struct pollfs_futex_event ev = fx_ev(addr, val, flags);

	return write(fd, &ev, sizeof(ev));
}

/* Arms one record, failing unless write() returns 16. */
static inline void fx_arm_at(const char *file, int line, int fd,
			     const void *addr, uint32_t val, uint32_t flags)
{
	ssize_t r = fx_write1(fd, addr, val, flags);

	if (r != FX_REC)
		pt_fail_at(file, line, "arming fd %d on %p val %u flags %#x: "
			   "write returned %zd, errno %d (%s)", fd, addr, val,
			   flags, r, errno, strerror(errno));
}
#define fx_arm(fd, addr, val, flags)					\
	fx_arm_at(__FILE__, __LINE__, (fd), (addr), (val), (flags))

/* Arms n records at once, failing unless write() returns n * 16. */
static inline void fx_armv_at(const char *file, int line, int fd,
			      const struct pollfs_futex_event *evs, size_t n)
{
	ssize_t r = write(fd, evs, n * sizeof(*evs));

	if (r != (ssize_t)(n * sizeof(*evs)))
		pt_fail_at(file, line, "arming fd %d with %zu records: write "
			   "returned %zd, errno %d (%s)", fd, n, r, errno,
			   strerror(errno));
}
#define fx_armv(fd, evs, n) fx_armv_at(__FILE__, __LINE__, (fd), (evs), (n))

/* ---- futex(2) ---- */

static inline long fx_futex(void *uaddr, int op, uint32_t val,
			    unsigned long val2, void *uaddr2, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, val2, uaddr2, val3);
}

/* FX_PRIVATE adds FUTEX_PRIVATE_FLAG to op, FX_SHARED does not. */
static inline int fx_op(int op, uint32_t flags)
{
	return (flags & FX_SHARED) ? op : (op | FUTEX_PRIVATE_FLAG);
}

/* FUTEX_WAKE(addr, n), private or shared; fails on an error. */
static inline long fx_wake_at(const char *file, int line, void *addr, int n,
			      uint32_t flags)
{
	long r = fx_futex(addr, fx_op(FUTEX_WAKE, flags), (uint32_t)n, 0,
			  NULL, 0);

	if (r < 0)
		pt_fail_at(file, line, "FUTEX_WAKE(%p, %d, %s): errno %d (%s)",
			   addr, n, (flags & FX_SHARED) ? "shared" : "private",
			   errno, strerror(errno));
	return r;
}
#define fx_wake(addr, n, flags)						\
	fx_wake_at(__FILE__, __LINE__, (void *)(addr), (n), (flags))

/* ---- records and states ---- */

static inline void fx_check_rec_at(const char *file, int line,
				   const struct pollfs_futex_event *got,
				   const void *addr, uint32_t val,
				   uint32_t flags)
{
	if (got->addr != (uint64_t)(uintptr_t)addr || got->val != val ||
	    got->flags != flags)
		pt_fail_at(file, line, "record {addr %#llx, val %u, flags %#x},"
			   " expected {%p, %u, %#x}",
			   (unsigned long long)got->addr, got->val, got->flags,
			   addr, val, flags);
}
#define fx_check_rec(got, addr, val, flags)				\
	fx_check_rec_at(__FILE__, __LINE__, (got), (addr), (val), (flags))

/*
 * Reads with a buffer of four records and fails unless exactly one
 * record, this one, comes back.  Blocks if the fd is blocking.
 */
static inline void fx_expect_rec_at(const char *file, int line, int fd,
				    const void *addr, uint32_t val,
				    uint32_t flags)
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
#define fx_expect_rec(fd, addr, val, flags)				\
	fx_expect_rec_at(__FILE__, __LINE__, (fd), (addr), (val), (flags))

/* The revents of one poll() for POLLIN on fd. */
static inline short fx_revents_at(const char *file, int line, int fd,
				  int timeout_ms)
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
#define fx_revents(fd, timeout_ms)					\
	fx_revents_at(__FILE__, __LINE__, (fd), (timeout_ms))

/* A read with O_NONBLOCK set for it; returns read()'s result, errno kept. */
static inline ssize_t fx_read_nb(int fd, void *buf, size_t n)
{
	int fl = fcntl(fd, F_GETFL), e;
	ssize_t r;

	if (fl < 0)
		return -1;
	if (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		return -1;
	r = read(fd, buf, n);
	e = errno;
	if (!(fl & O_NONBLOCK))
		fcntl(fd, F_SETFL, fl);
	errno = e;
	return r;
}

/* Unarmed: poll shows nothing and a read gives EINVAL. */
static inline void fx_expect_unarmed_at(const char *file, int line, int fd)
{
	struct pollfs_futex_event buf[4];
	short rev = fx_revents_at(file, line, fd, 0);
	ssize_t r;

	if (rev)
		pt_fail_at(file, line, "fd %d: poll revents %#x, expected none "
			   "(unarmed)", fd, rev);
	errno = 0;
	r = fx_read_nb(fd, buf, sizeof(buf));
	if (r != -1 || errno != EINVAL)
		pt_fail_at(file, line, "fd %d: read returned %zd, errno %d "
			   "(%s), expected EINVAL (unarmed)", fd, r, errno,
			   strerror(errno));
}
#define fx_expect_unarmed(fd) fx_expect_unarmed_at(__FILE__, __LINE__, (fd))

/* Armed and not woken: poll shows nothing and a non-blocking read gives
 * EAGAIN. */
static inline void fx_expect_armed_at(const char *file, int line, int fd)
{
	struct pollfs_futex_event buf[4];
	short rev = fx_revents_at(file, line, fd, 0);
	ssize_t r;

	if (rev)
		pt_fail_at(file, line, "fd %d: poll revents %#x, expected none "
			   "(armed, not woken)", fd, rev);
	errno = 0;
	r = fx_read_nb(fd, buf, sizeof(buf));
	if (r != -1 || errno != EAGAIN)
		pt_fail_at(file, line, "fd %d: non-blocking read returned %zd, "
			   "errno %d (%s), expected EAGAIN (armed, not woken)",
			   fd, r, errno, strerror(errno));
}
#define fx_expect_armed(fd) fx_expect_armed_at(__FILE__, __LINE__, (fd))

/* Fails unless fd shows exactly POLLIN now. */
static inline void fx_expect_ready_at(const char *file, int line, int fd)
{
	short rev = fx_revents_at(file, line, fd, 0);

	if (rev != POLLIN)
		pt_fail_at(file, line, "fd %d: poll revents %#x, expected "
			   "POLLIN (woken)", fd, rev);
}
#define fx_expect_ready(fd) fx_expect_ready_at(__FILE__, __LINE__, (fd))

/* ---- other tasks ---- */

/*
 * fork() for a test's helper process: the child is killed if the test
 * process dies (its watchdog, a failed check), so that no helper is left
 * asleep holding an object, and it has no watchdog alarm of its own.
 */
static inline pid_t fx_fork_at(const char *file, int line)
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
#define fx_fork() fx_fork_at(__FILE__, __LINE__)

/*
 * True if task tid (of any process) sleeps interruptibly inside system
 * call sysno, as /proc/TID/syscall and /proc/TID/stat show it.
 */
static inline bool fx_task_sleeps_in(pid_t tid, long sysno)
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

/*
 * Waits until task tid sleeps in system call sysno, then a little more:
 * a task seen asleep there has queued itself (it sets its state under
 * the lock it queues under, with preemption off).  Fails after
 * PT_WAIT_MS.
 */
static inline void fx_wait_sleeping_at(const char *file, int line, pid_t tid,
				       long sysno)
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
#define fx_wait_sleeping(tid, sysno)					\
	fx_wait_sleeping_at(__FILE__, __LINE__, (tid), (sysno))

#endif /* POLLFS_TESTS_FUTEX_H */
