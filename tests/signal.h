/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the signal object tests (tests/signal-*.c).  Include it
 * instead of lib.h: it includes lib.h first.
 *
 * The tests block the signals they read with sigprocmask() or
 * pthread_sigmask(), as signalfd users do, and never put SIGALRM in a
 * mask: pt_watchdog() uses it.
 */
#ifndef POLLFS_TESTS_SIGNAL_H
#define POLLFS_TESTS_SIGNAL_H

#include "lib.h"

#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define SIGINFO_SIZE	((ssize_t)sizeof(struct pollfs_siginfo))

_Static_assert(sizeof(struct pollfs_siginfo) == 128, "pollfs_siginfo size");
_Static_assert(sizeof(struct pollfs_signal_open) == 16, "signal_open size");

/* The mask bit of signal sig. */
static inline uint64_t ps_bit(int sig)
{
	return 1ULL << (sig - 1);
}

static inline pid_t ps_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static inline int ps_tgkill(pid_t tgid, pid_t tid, int sig)
{
	return (int)syscall(SYS_tgkill, tgid, tid, sig);
}

/* POLLFS_IOC_SIGNAL with mask, flags, reserved: the fd, or -1 and errno. */
static inline int ps_signal_open(uint64_t mask, unsigned int flags,
				 unsigned int reserved)
{
	struct pollfs_signal_open op;
	int dev, fd, e;

	memset(&op, 0, sizeof(op));
	op.mask = mask;
	op.flags = flags;
	op.reserved = reserved;
	dev = open("/dev/pollfs", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -1;
	fd = ioctl(dev, POLLFS_IOC_SIGNAL, &op);
	e = errno;
	close(dev);
	errno = e;
	return fd;
}

/* Creates a signal object, failing the test if it cannot. */
#define ps_signal(mask, flags)						\
	ps_signal_at(__FILE__, __LINE__, (mask), (flags))
static inline int ps_signal_at(const char *file, int line, uint64_t mask,
			       unsigned int flags)
{
	int fd = ps_signal_open(mask, flags, 0);

	if (fd < 0)
		pt_fail_at(file, line,
			   "creating a signal object (mask %#llx, flags %#x): "
			   "errno %d (%s)", (unsigned long long)mask, flags,
			   errno, strerror(errno));
	return fd;
}

static inline void ps_sigset(sigset_t *set, uint64_t mask)
{
	sigemptyset(set);
	for (int sig = 1; sig <= 64; sig++)
		if (mask & ps_bit(sig))
			sigaddset(set, sig);
}

/* Blocks the signals of mask in the calling thread (SIG_BLOCK). */
#define ps_block(mask) ps_block_at(__FILE__, __LINE__, (mask))
static inline void ps_block_at(const char *file, int line, uint64_t mask)
{
	sigset_t set;
	int e;

	ps_sigset(&set, mask);
	e = pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (e)
		pt_fail_at(file, line, "pthread_sigmask: %s", strerror(e));
}

/* Unblocks the signals of mask in the calling thread (SIG_UNBLOCK). */
#define ps_unblock(mask) ps_unblock_at(__FILE__, __LINE__, (mask))
static inline void ps_unblock_at(const char *file, int line, uint64_t mask)
{
	sigset_t set;
	int e;

	ps_sigset(&set, mask);
	e = pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	if (e)
		pt_fail_at(file, line, "pthread_sigmask: %s", strerror(e));
}

/* True if sig is pending for the calling thread or its process. */
static inline bool ps_pending(int sig)
{
	sigset_t set;

	if (sigpending(&set))
		FAIL("sigpending: %s", strerror(errno));
	return sigismember(&set, sig) == 1;
}

/* sigqueue(pid, sig, an int value), failing the test if it fails. */
#define ps_queue_int(pid, sig, v)					\
	ps_queue_at(__FILE__, __LINE__, (pid), (sig), (v), NULL, false)
#define ps_queue_ptr(pid, sig, p)					\
	ps_queue_at(__FILE__, __LINE__, (pid), (sig), 0, (p), true)
static inline void ps_queue_at(const char *file, int line, pid_t pid, int sig,
			       int ival, void *pval, bool use_ptr)
{
	union sigval v;

	memset(&v, 0, sizeof(v));
	if (use_ptr)
		v.sival_ptr = pval;
	else
		v.sival_int = ival;
	if (sigqueue(pid, sig, v))
		pt_fail_at(file, line, "sigqueue(%d, %d): errno %d (%s)",
			   (int)pid, sig, errno, strerror(errno));
}

/*
 * Reads into buf (room for max records) once; fails unless the read
 * returns a whole number of records, at least one.  Returns how many.
 */
#define ps_read_n(fd, buf, max)						\
	ps_read_n_at(__FILE__, __LINE__, (fd), (buf), (max))
static inline int ps_read_n_at(const char *file, int line, int fd,
			       struct pollfs_siginfo *buf, int max)
{
	ssize_t r;

	memset(buf, 0xa5, (size_t)max * sizeof(*buf));
	r = read(fd, buf, (size_t)max * sizeof(*buf));
	if (r < SIGINFO_SIZE || r % SIGINFO_SIZE ||
	    r > (ssize_t)max * SIGINFO_SIZE)
		pt_fail_at(file, line,
			   "read(signal fd %d, %d records): returned %zd, "
			   "errno %d (%s)", fd, max, r, errno, strerror(errno));
	return (int)(r / SIGINFO_SIZE);
}

/* Reads exactly one record with a one-record buffer. */
#define ps_read_one(fd, psi) ps_read_n_at(__FILE__, __LINE__, (fd), (psi), 1)

/*
 * Fails unless the record is signal signo with code code, and the
 * fields that no signal kind fills (errno, padding) are zero.
 */
#define ps_check_sig(psi, signo, code)					\
	ps_check_sig_at(__FILE__, __LINE__, (psi), (signo), (code))
static inline void ps_check_sig_at(const char *file, int line,
				   const struct pollfs_siginfo *psi,
				   int signo, int code)
{
	static const uint8_t zero[sizeof(psi->__pad)];

	if ((int)psi->psi_signo != signo || psi->psi_code != code)
		pt_fail_at(file, line,
			   "record: signo %u code %d (pid %u uid %u int %d), "
			   "expected signo %d code %d", psi->psi_signo,
			   psi->psi_code, psi->psi_pid, psi->psi_uid,
			   psi->psi_int, signo, code);
	if (psi->psi_errno != 0 || psi->__pad2 != 0 ||
	    memcmp(psi->__pad, zero, sizeof(zero)))
		pt_fail_at(file, line,
			   "record of signal %d: errno %d or padding not zero",
			   signo, psi->psi_errno);
}

/* Writes one new mask, failing unless all 8 bytes are taken. */
#define ps_set_mask(fd, mask) ps_set_mask_at(__FILE__, __LINE__, (fd), (mask))
static inline void ps_set_mask_at(const char *file, int line, int fd,
				  uint64_t mask)
{
	ssize_t r = write(fd, &mask, sizeof(mask));

	if (r != (ssize_t)sizeof(mask))
		pt_fail_at(file, line,
			   "write(signal fd %d, mask %#llx): returned %zd, "
			   "errno %d (%s)", fd, (unsigned long long)mask, r,
			   errno, strerror(errno));
}

/*
 * The "mask:" line of /proc/<pid>/fdinfo/<fd> (pid 0: self), which must
 * be there and read 0x followed by hex digits.
 */
#define ps_fdinfo_mask(pid, fd)						\
	ps_fdinfo_mask_at(__FILE__, __LINE__, (pid), (fd))
static inline uint64_t ps_fdinfo_mask_at(const char *file, int line,
					 pid_t pid, int fd)
{
	char path[64], text[1024], *p, *end;
	unsigned long long v;
	ssize_t n;
	int f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid,
			 fd);
	else
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		pt_fail_at(file, line, "open(%s): %s", path, strerror(errno));
	n = read(f, text, sizeof(text) - 1);
	close(f);
	if (n < 0)
		pt_fail_at(file, line, "read(%s): %s", path, strerror(errno));
	text[n] = 0;
	p = strstr(text, "\nmask:");
	if (!p)
		pt_fail_at(file, line, "%s has no mask: line: %s", path, text);
	p += strlen("\nmask:");
	while (*p == ' ' || *p == '\t')
		p++;
	if (strncmp(p, "0x", 2))
		pt_fail_at(file, line, "%s: mask not in 0x form: %s", path, p);
	errno = 0;
	v = strtoull(p + 2, &end, 16);
	if (errno || end == p + 2 || (*end != '\n' && *end != 0))
		pt_fail_at(file, line, "%s: bad mask line: %s", path, p);
	return v;
}

/*
 * Fails unless nothing is readable now: no POLLIN, and a non-blocking
 * read of one record gives EAGAIN (O_NONBLOCK is set for that read and
 * restored).
 */
#define ps_expect_empty(fd) ps_expect_empty_at(__FILE__, __LINE__, (fd))
static inline void ps_expect_empty_at(const char *file, int line, int fd)
{
	struct pollfs_siginfo psi;
	ssize_t r;
	int fl, e;

	if (pt_poll_in_at(file, line, fd, 0))
		pt_fail_at(file, line,
			   "signal fd %d: POLLIN while nothing is expected",
			   fd);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		pt_fail_at(file, line, "fcntl(F_GETFL): %s", strerror(errno));
	if (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		pt_fail_at(file, line, "fcntl(F_SETFL): %s", strerror(errno));
	r = read(fd, &psi, sizeof(psi));
	e = errno;
	if (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl))
		pt_fail_at(file, line, "fcntl(F_SETFL): %s", strerror(errno));
	if (r != -1 || e != EAGAIN)
		pt_fail_at(file, line,
			   "signal fd %d: non-blocking read with nothing "
			   "expected: returned %zd (signo %u), errno %d (%s), "
			   "expected EAGAIN", fd, r, r > 0 ? psi.psi_signo : 0,
			   e, strerror(e));
}

/*
 * Waits until thread tid of process pid sleeps in one of the system
 * calls nr1 and nr2 (/proc/.../syscall names it, /proc/.../stat shows
 * state S); fails after PT_WAIT_MS.
 */
#define ps_wait_in_syscall(pid, tid, nr1, nr2)				\
	ps_wait_in_syscall_at(__FILE__, __LINE__, (pid), (tid), (nr1), (nr2))
static inline void ps_wait_in_syscall_at(const char *file, int line,
					 pid_t pid, pid_t tid, long nr1,
					 long nr2)
{
	int64_t end = pt_mono() + MS(PT_WAIT_MS);
	char path[96], text[512], last[512] = "", *p;
	ssize_t n;
	int f;

	for (;;) {
		long nr = -2;
		char state = '?';

		snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall",
			 (int)pid, (int)tid);
		f = open(path, O_RDONLY | O_CLOEXEC);
		if (f < 0)
			pt_fail_at(file, line, "open(%s): %s", path,
				   strerror(errno));
		n = read(f, text, sizeof(text) - 1);
		close(f);
		if (n > 0) {
			text[n] = 0;
			if (sscanf(text, "%ld", &nr) != 1)
				nr = -2;
			snprintf(last, sizeof(last), "%s", text);
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat",
			 (int)pid, (int)tid);
		f = open(path, O_RDONLY | O_CLOEXEC);
		if (f < 0)
			pt_fail_at(file, line, "open(%s): %s", path,
				   strerror(errno));
		n = read(f, text, sizeof(text) - 1);
		close(f);
		if (n > 0) {
			text[n] = 0;
			p = strrchr(text, ')');
			if (p && p[1] == ' ')
				state = p[2];
		}
		if ((nr == nr1 || nr == nr2) && state == 'S')
			return;
		if (pt_mono() > end)
			pt_fail_at(file, line,
				   "thread %d of %d not asleep in syscall %ld "
				   "within %d ms (state %c, syscall %s)",
				   (int)tid, (int)pid, nr1, PT_WAIT_MS, state,
				   last);
		pt_sleep_ms(1);
	}
}

/* Waits until thread tid of this process sleeps in read(). */
#define ps_wait_in_read(tid)						\
	ps_wait_in_syscall_at(__FILE__, __LINE__, getpid(), (tid),	\
			      SYS_read, SYS_read)

/* A pipe used to pass one byte between threads or processes. */
static inline void ps_post(int fd)
{
	char c = 1;

	if (write(fd, &c, 1) != 1)
		FAIL("write(pipe): %s", strerror(errno));
}

/* Waits for one byte up to PT_WAIT_MS; fails if none comes. */
#define ps_wait_post(fd) ps_wait_post_at(__FILE__, __LINE__, (fd))
static inline void ps_wait_post_at(const char *file, int line, int fd)
{
	char c;
	ssize_t r;

	if (!pt_poll_in_at(file, line, fd, PT_WAIT_MS))
		pt_fail_at(file, line, "no word on pipe %d within %d ms", fd,
			   PT_WAIT_MS);
	r = read(fd, &c, 1);
	if (r != 1)
		pt_fail_at(file, line, "read(pipe %d): returned %zd, %s", fd,
			   r, strerror(errno));
}

/*
 * Joins a thread that must end within PT_WAIT_MS; fails if it does not.
 * Returns what it returned.
 */
#define ps_join(t) ps_join_at(__FILE__, __LINE__, (t))
static inline void *ps_join_at(const char *file, int line, pthread_t t)
{
	struct timespec ts;
	void *ret = NULL;
	int e;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += PT_WAIT_MS / 1000;
	e = pthread_timedjoin_np(t, &ret, &ts);
	if (e)
		pt_fail_at(file, line, "thread did not end within %d ms: %s",
			   PT_WAIT_MS, strerror(e));
	return ret;
}

/*
 * Waits for child pid up to timeout_ms; fails if it is still running then
 * (after killing it).  Returns its wait status.
 */
#define ps_wait_child(pid, timeout_ms)					\
	ps_wait_child_at(__FILE__, __LINE__, (pid), (timeout_ms))
static inline int ps_wait_child_at(const char *file, int line, pid_t pid,
				   int timeout_ms)
{
	int64_t end = pt_mono() + MS(timeout_ms);
	int status;
	pid_t r;

	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			pt_fail_at(file, line, "waitpid(%d): %s", (int)pid,
				   strerror(errno));
		if (pt_mono() > end) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			pt_fail_at(file, line,
				   "child %d still running after %d ms: killed",
				   (int)pid, timeout_ms);
		}
		pt_sleep_ms(1);
	}
}

/* Fails unless the wait status says the child exited with status 0. */
#define ps_check_exit0(status) ps_check_exit0_at(__FILE__, __LINE__, (status))
static inline void ps_check_exit0_at(const char *file, int line, int status)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	if (WIFEXITED(status))
		pt_fail_at(file, line, "child exited with status %d",
			   WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		pt_fail_at(file, line, "child killed by signal %d",
			   WTERMSIG(status));
	pt_fail_at(file, line, "child wait status %#x", status);
}

#endif /* POLLFS_TESTS_SIGNAL_H */
