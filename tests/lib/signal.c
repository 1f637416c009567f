// SPDX-License-Identifier: MIT
/* Helpers of the signal tests; see signal.h. */
#include "signal.h"

int ps_signal_open(uint64_t mask, unsigned int flags, unsigned int reserved)
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

int ps_signal_at(const char *file, int line, uint64_t mask, unsigned int flags)
{
	int fd = ps_signal_open(mask, flags, 0);

	if (fd < 0)
		pt_fail_at(file, line,
			   "creating a signal object (mask %#llx, flags %#x): "
			   "errno %d (%s)", (unsigned long long)mask, flags,
			   errno, strerror(errno));
	return fd;
}

void ps_sigset(sigset_t *set, uint64_t mask)
{
	sigemptyset(set);
	for (int sig = 1; sig <= 64; sig++)
		if (mask & ps_bit(sig))
			sigaddset(set, sig);
}

void ps_block_at(const char *file, int line, uint64_t mask)
{
	sigset_t set;
	int e;

	ps_sigset(&set, mask);
	e = pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (e)
		pt_fail_at(file, line, "pthread_sigmask: %s", strerror(e));
}

void ps_unblock_at(const char *file, int line, uint64_t mask)
{
	sigset_t set;
	int e;

	ps_sigset(&set, mask);
	e = pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	if (e)
		pt_fail_at(file, line, "pthread_sigmask: %s", strerror(e));
}

bool ps_pending(int sig)
{
	sigset_t set;

	if (sigpending(&set))
		FAIL("sigpending: %s", strerror(errno));
	return sigismember(&set, sig) == 1;
}

void ps_queue_at(const char *file, int line, pid_t pid, int sig, int ival,
		 void *pval, bool use_ptr)
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

int ps_read_n_at(const char *file, int line, int fd, struct pollfs_siginfo *buf,
		 int max)
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

void ps_check_sig_at(const char *file, int line,
		     const struct pollfs_siginfo *psi, int signo, int code)
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

void ps_set_mask_at(const char *file, int line, int fd, uint64_t mask)
{
	ssize_t r = write(fd, &mask, sizeof(mask));

	if (r != (ssize_t)sizeof(mask))
		pt_fail_at(file, line,
			   "write(signal fd %d, mask %#llx): returned %zd, "
			   "errno %d (%s)", fd, (unsigned long long)mask, r,
			   errno, strerror(errno));
}

uint64_t ps_fdinfo_mask_at(const char *file, int line, pid_t pid, int fd)
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

void ps_expect_empty_at(const char *file, int line, int fd)
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

void ps_wait_in_syscall_at(const char *file, int line, pid_t pid, pid_t tid,
			   long nr1, long nr2)
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

void ps_post(int fd)
{
	char c = 1;

	if (write(fd, &c, 1) != 1)
		FAIL("write(pipe): %s", strerror(errno));
}

void ps_wait_post_at(const char *file, int line, int fd)
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

void *ps_join_at(const char *file, int line, pthread_t t)
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

int ps_wait_child_at(const char *file, int line, pid_t pid, int timeout_ms)
{
	int status = pt_reap_within_at(file, line, pid, timeout_ms);

	if (status < 0) {
		pt_kill_reap(pid);
		pt_fail_at(file, line,
			   "child %d still running after %d ms: killed",
			   (int)pid, timeout_ms);
	}
	return status;
}

void ps_check_exit0_at(const char *file, int line, int status)
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
