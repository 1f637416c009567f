// SPDX-License-Identifier: MIT
/* Shared helpers of the pollfs tests; see lib.h. */
#include "lib.h"

#include <dirent.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

static void (*fail_hook)(void);

/* The running TEST_F's teardown, its fixture's state, and the process
 * that set it up, which alone tears it down. */
static void (*teardown_fn)(void *self);
static void *teardown_self;
static pid_t teardown_pid;

/* One write() per line, so that forked children and threads never mix or
 * duplicate buffered output. */
static void pt_write_diag(const char *prefix, const char *fmt, va_list ap)
{
	char buf[2048];
	size_t n, off = 0;
	ssize_t w;

	n = (size_t)snprintf(buf, sizeof(buf), "# %s", prefix);
	if (n < sizeof(buf))
		vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	n = strlen(buf);
	/* Keep it one line: the runner reads diagnostics line by line. */
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\n')
			buf[i] = ' ';
	if (n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	while (off < n) {
		w = write(STDOUT_FILENO, buf + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
}

void pt_diag(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	pt_write_diag("", fmt, ap);
	va_end(ap);
	errno = e;
}

void pt_fail_at(const char *file, int line, const char *fmt, ...)
{
	char prefix[256];
	void (*hook)(void) = fail_hook;
	va_list ap;

	snprintf(prefix, sizeof(prefix), "FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	pt_write_diag(prefix, fmt, ap);
	va_end(ap);
	fail_hook = NULL;
	if (hook)
		hook();
	pt_fixture_teardown();
	_exit(PT_FAIL);
}

/* Where a behaviour of pt_run_tests() leaves why it skipped, for the
 * parent's TAP line: memory shared with it. */
#define SKIP_REASON_MAX	256
static char *skip_reason;

void pt_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (skip_reason) {
		va_list copy;

		va_copy(copy, ap);
		vsnprintf(skip_reason, SKIP_REASON_MAX, fmt, copy);
		va_end(copy);
	}
	pt_write_diag("", fmt, ap);
	va_end(ap);
	pt_fixture_teardown();
	_exit(PT_SKIP);
}

void pt_on_fail(void (*fn)(void))
{
	fail_hook = fn;
}

static unsigned int watchdog_seconds;

static void watchdog_fired(int sig)
{
	char msg[96];
	int n;

	(void)sig;
	n = snprintf(msg, sizeof(msg),
		     "# FAIL watchdog: still running after %u s\n",
		     watchdog_seconds);
	if (write(STDOUT_FILENO, msg, (size_t)n) < 0)
		_exit(PT_FAIL);
	_exit(PT_FAIL);
}

/*
 * POLLFS_TIME_SCALE=N stretches every watchdog N times, for kernels much
 * slower than Debian's under TCG (the KASAN and lockdep kernel of make
 * check-debug).  It only ever makes a limit longer.
 */
unsigned int pt_time_scale(void)
{
	const char *env = getenv("POLLFS_TIME_SCALE");
	int scale = env ? atoi(env) : 1;

	return scale > 1 ? scale : 1;
}

bool pt_kernel_rt(void)
{
	FILE *f = fopen("/sys/kernel/realtime", "re");
	int rt = 0;

	if (f) {
		if (fscanf(f, "%d", &rt) != 1)
			rt = 0;
		fclose(f);
	}
	return rt == 1;
}

void pt_watchdog(unsigned int seconds)
{
	struct sigaction sa;

	seconds *= pt_time_scale();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watchdog_fired;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL))
		FAIL("sigaction(SIGALRM): %s", strerror(errno));
	watchdog_seconds = seconds;
	alarm(seconds);
}

/* ---- several behaviours in one program ---- */

#define MAX_TESTS	128

static struct {
	char name[64];
	void (*fn)(void);
	void (*fn_arg)(const void *arg);
	const void *arg;
} tests[MAX_TESTS];
static unsigned int ntests;

/* One line, in one write(), as pt_write_diag() does. */
static void pt_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void pt_line(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDOUT_FILENO, buf, (size_t)n) < 0)
		_exit(PT_FAIL);
}

/* A new entry named name, its '_' made '-': its index. */
static unsigned int new_test(const char *name)
{
	if (ntests == MAX_TESTS)
		FAIL("more than %d TEST()s", MAX_TESTS);
	snprintf(tests[ntests].name, sizeof(tests[ntests].name), "%s", name);
	for (char *p = tests[ntests].name; *p; p++)
		if (*p == '_')
			*p = '-';
	return ntests++;
}

void pt_add_test(const char *name, void (*fn)(void))
{
	tests[new_test(name)].fn = fn;
}

void pt_add_test_arg(const char *name, void (*fn)(const void *arg),
		     const void *arg)
{
	unsigned int i = new_test(name);

	tests[i].fn_arg = fn;
	tests[i].arg = arg;
}

void pt_fixture_set(void (*teardown)(void *self), void *self)
{
	teardown_fn = teardown;
	teardown_self = self;
	teardown_pid = getpid();
}

/* Forgotten before it runs, so that a check failing in it ends the
 * process rather than running it again. */
void pt_fixture_teardown(void)
{
	void (*fn)(void *self) = teardown_fn;

	teardown_fn = NULL;
	if (fn && getpid() == teardown_pid)
		fn(teardown_self);
}

/* Runs test i in a child; its exit status, PT_FAIL if it did not exit. */
static int run_test(unsigned int i)
{
	int status;
	pid_t pid;

	skip_reason[0] = 0;
	pid = fork();
	if (pid < 0)
		FAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		/* gone with the program, should its watchdog end it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (tests[i].fn)
			tests[i].fn();
		else
			tests[i].fn_arg(tests[i].arg);
		_exit(PT_PASS);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			FAIL("waitpid: %s", strerror(errno));
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	pt_line("# %s: killed by signal %d", tests[i].name, WTERMSIG(status));
	return PT_FAIL;
}

int pt_run_tests(void)
{
	unsigned int pass = 0, fail = 0, skip = 0;

	skip_reason = mmap(NULL, SKIP_REASON_MAX, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (skip_reason == MAP_FAILED)
		FAIL("mmap: %s", strerror(errno));
	pt_line("TAP version 13");
	pt_line("1..%u", ntests);
	for (unsigned int i = 0; i < ntests; i++) {
		switch (run_test(i)) {
		case PT_PASS:
			pt_line("ok %u %s", i + 1, tests[i].name);
			pass++;
			break;
		case PT_SKIP:
			for (char *p = skip_reason; *p; p++)
				if (*p == '\n')
					*p = ' ';
			pt_line("ok %u %s # SKIP %s", i + 1, tests[i].name,
			    skip_reason[0] ? skip_reason : "no reason given");
			skip++;
			break;
		default:
			pt_line("not ok %u %s", i + 1, tests[i].name);
			fail++;
			break;
		}
	}
	pt_line("# Totals: pass:%u fail:%u xfail:0 xpass:0 skip:%u error:0",
	    pass, fail, skip);
	if (fail)
		return PT_FAIL;
	return skip == ntests ? PT_SKIP : PT_PASS;
}

/* ---- time ---- */

int64_t pt_now(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		FAIL("clock_gettime(%d): %s", (int)clk, strerror(errno));
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

int64_t pt_mono(void)
{
	return pt_now(CLOCK_MONOTONIC);
}

int64_t pt_ts_ns(const struct __kernel_timespec *ts)
{
	return (int64_t)ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

struct __kernel_timespec pt_ns_ts(int64_t ns)
{
	struct __kernel_timespec ts;

	ts.tv_sec = ns / NSEC_PER_SEC;
	ts.tv_nsec = ns % NSEC_PER_SEC;
	return ts;
}

struct timespec pt_mono_in(int64_t ns)
{
	int64_t t = pt_mono() + ns;
	struct timespec ts = { t / NSEC_PER_SEC, t % NSEC_PER_SEC };

	return ts;
}

void pt_sleep_ns(int64_t ns)
{
	int64_t end = pt_mono() + ns;
	struct timespec ts;

	ts.tv_sec = end / NSEC_PER_SEC;
	ts.tv_nsec = end % NSEC_PER_SEC;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

clockid_t pt_base_clock(clockid_t clk)
{
	switch (clk) {
	case CLOCK_REALTIME_ALARM:
		return CLOCK_REALTIME;
	case CLOCK_BOOTTIME_ALARM:
		return CLOCK_BOOTTIME;
	default:
		return clk;
	}
}

const char *pt_clock_name(clockid_t clk)
{
	switch (clk) {
	case CLOCK_REALTIME:
		return "CLOCK_REALTIME";
	case CLOCK_MONOTONIC:
		return "CLOCK_MONOTONIC";
	case CLOCK_BOOTTIME:
		return "CLOCK_BOOTTIME";
	case CLOCK_REALTIME_ALARM:
		return "CLOCK_REALTIME_ALARM";
	case CLOCK_BOOTTIME_ALARM:
		return "CLOCK_BOOTTIME_ALARM";
	default:
		return "clock?";
	}
}

/* ---- objects ---- */

int pt_dev_at(const char *file, int line)
{
	int fd = open("/dev/pollfs", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		pt_fail_at(file, line, "open(/dev/pollfs): errno %d (%s)",
			   errno, strerror(errno));
	return fd;
}

bool pt_poll_in_at(const char *file, int line, int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int64_t end = pt_mono() + MS(timeout_ms);
	int r;

	for (;;) {
		r = poll(&p, 1, timeout_ms);
		if (r >= 0)
			break;
		if (errno != EINTR)
			pt_fail_at(file, line, "poll(fd %d): errno %d (%s)",
				   fd, errno, strerror(errno));
		if (timeout_ms > 0) {
			int64_t left = end - pt_mono();

			timeout_ms = left > 0 ? (int)(left / NSEC_PER_MSEC) : 0;
		}
	}
	if (r == 1 && (p.revents & POLLNVAL))
		pt_fail_at(file, line, "poll(fd %d): POLLNVAL", fd);
	return r == 1 && (p.revents & POLLIN);
}

void pt_wait_readable_at(const char *file, int line, int fd, int timeout_ms)
{
	int64_t t0 = pt_mono();

	if (!pt_poll_in_at(file, line, fd, timeout_ms))
		pt_fail_at(file, line, "fd %d not readable within %d ms",
			   fd, timeout_ms);
	/* poll looks at the fds once more when its timeout ends: readiness
	 * seen only then means no wake-up came */
	if (timeout_ms > 0 && pt_mono() - t0 >= MS(timeout_ms) * 9 / 10)
		pt_fail_at(file, line,
			   "fd %d readable only as poll timed out (%d ms): "
			   "no wake-up", fd, timeout_ms);
}

void pt_expect_empty_at(const char *file, int line, int fd)
{
	char buf[64];
	int fl;
	ssize_t r;
	int e;

	if (pt_poll_in_at(file, line, fd, 0))
		pt_fail_at(file, line, "fd %d: POLLIN while no record is expected",
			   fd);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		pt_fail_at(file, line, "fcntl(F_GETFL): %s", strerror(errno));
	if (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		pt_fail_at(file, line, "fcntl(F_SETFL): %s", strerror(errno));
	r = read(fd, buf, sizeof(buf));
	e = errno;
	if (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl))
		pt_fail_at(file, line, "fcntl(F_SETFL): %s", strerror(errno));
	if (r != -1 || e != EAGAIN)
		pt_fail_at(file, line,
			   "fd %d: non-blocking read with no record expected: "
			   "returned %zd, errno %d (%s), expected EAGAIN",
			   fd, r, e, strerror(e));
}

/* ---- processes and privileges ---- */

int pt_run_child(int (*fn)(void *), void *arg, int timeout_ms)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		FAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		fail_hook = NULL;
		alarm(0);
		_exit(fn(arg));
	}
	status = pt_reap_within(pid, timeout_ms);
	if (status < 0) {
		pt_kill_reap(pid);
		pt_diag("child %d still running after %d ms: killed",
			(int)pid, timeout_ms);
		return PT_FAIL;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	pt_diag("child %d killed by signal %d", (int)pid, WTERMSIG(status));
	return PT_FAIL;
}

int pt_wait_status_at(const char *file, int line, pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) != pid)
		if (errno != EINTR)
			pt_fail_at(file, line, "waitpid(%d): %s", (int)pid,
				   strerror(errno));
	return status;
}

int pt_reap_at(const char *file, int line, pid_t pid)
{
	int status = pt_wait_status_at(file, line, pid);

	if (!WIFEXITED(status))
		pt_fail_at(file, line, "child %d killed by signal %d",
			   (int)pid, WTERMSIG(status));
	return WEXITSTATUS(status);
}

int pt_reap_within_at(const char *file, int line, pid_t pid, int ms)
{
	int64_t deadline = pt_mono() + MS(ms);
	int status;
	pid_t r;

	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			pt_fail_at(file, line, "waitpid(%d): %s", (int)pid,
				   strerror(errno));
		if (pt_mono() > deadline)
			return -1;
		pt_sleep_ms(2);
	}
}

void pt_kill_reap(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

void pt_send_byte_at(const char *file, int line, int fd, char c)
{
	ssize_t r;

	do
		r = write(fd, &c, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		pt_fail_at(file, line, "write(fd %d): returned %zd, %s", fd, r,
			   strerror(errno));
}

char pt_recv_byte_at(const char *file, int line, int fd)
{
	char c;
	ssize_t r;

	do
		r = read(fd, &c, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		pt_fail_at(file, line, "read(fd %d): returned %zd, %s", fd, r,
			   r ? strerror(errno) : "end of file");
	return c;
}

#define PT_MAX_FDS	16

void pt_send_fds_at(const char *file, int line, int sock, const int *fds,
		    int nfds, const void *data, size_t len)
{
	char cbuf[CMSG_SPACE(PT_MAX_FDS * sizeof(int))];
	char byte = 'F';
	struct iovec iov = { data ? (void *)data : &byte, data ? len : 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf };
	struct cmsghdr *c;
	ssize_t r;

	if (nfds < 1 || nfds > PT_MAX_FDS)
		pt_fail_at(file, line, "pt_send_fds: %d descriptors", nfds);
	memset(cbuf, 0, sizeof(cbuf));
	mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	do
		r = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)iov.iov_len)
		pt_fail_at(file, line, "sendmsg(fd %d, %d descriptors): "
			   "returned %zd of %zu bytes, errno %d (%s)", sock,
			   nfds, r, iov.iov_len, errno, strerror(errno));
}

int pt_recv_fds_at(const char *file, int line, int sock, int *fds, int max,
		   void *data, size_t len)
{
	char cbuf[CMSG_SPACE(PT_MAX_FDS * sizeof(int))];
	char byte;
	struct iovec iov = { data ? data : &byte, data ? len : 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf };
	struct cmsghdr *c;
	ssize_t r;
	int n;

	if (max < 1 || max > PT_MAX_FDS)
		pt_fail_at(file, line, "pt_recv_fds: room for %d", max);
	mh.msg_controllen = CMSG_SPACE(max * sizeof(int));
	if (!pt_poll_in_at(file, line, sock, PT_WAIT_MS))
		pt_fail_at(file, line, "no descriptor on fd %d within %d ms",
			   sock, PT_WAIT_MS);
	do
		r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)iov.iov_len)
		pt_fail_at(file, line, "recvmsg(fd %d): returned %zd of %zu "
			   "bytes, errno %d (%s)", sock, r, iov.iov_len, errno,
			   strerror(errno));
	c = CMSG_FIRSTHDR(&mh);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    (mh.msg_flags & MSG_CTRUNC))
		pt_fail_at(file, line, "recvmsg(fd %d): no SCM_RIGHTS "
			   "message of at most %d descriptors", sock, max);
	n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
	if (n < 1 || n > max || c->cmsg_len != CMSG_LEN(n * sizeof(int)))
		pt_fail_at(file, line, "recvmsg(fd %d): SCM_RIGHTS of %zu "
			   "bytes, for 1 to %d descriptors", sock,
			   (size_t)c->cmsg_len, max);
	memcpy(fds, CMSG_DATA(c), n * sizeof(int));
	return n;
}

int pt_recv_fd_at(const char *file, int line, int sock, void *data,
		  size_t len)
{
	int fd;

	pt_recv_fds_at(file, line, sock, &fd, 1, data, len);
	return fd;
}

void pt_require_root(void)
{
	if (geteuid() != 0)
		pt_skip("needs root");
}

void pt_become_nobody_at(const char *file, int line)
{
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;

	/* already nobody (tests/run -u 65534): nothing left to drop */
	if (!getresuid(&ruid, &euid, &suid) && !getresgid(&rgid, &egid, &sgid) &&
	    ruid == 65534 && euid == 65534 && suid == 65534 &&
	    rgid == 65534 && egid == 65534 && sgid == 65534 &&
	    getgroups(0, NULL) == 0)
		return;
	if (setgroups(0, NULL))
		pt_fail_at(file, line, "setgroups: %s", strerror(errno));
	if (setresgid(65534, 65534, 65534))
		pt_fail_at(file, line, "setresgid: %s", strerror(errno));
	if (setresuid(65534, 65534, 65534))
		pt_fail_at(file, line, "setresuid: %s", strerror(errno));
	if (geteuid() != 65534 || getegid() != 65534)
		pt_fail_at(file, line, "still euid %d egid %d", (int)geteuid(),
			   (int)getegid());
}

void pt_fdinfo_at(const char *file, int line, int fd, char *buf, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (pt_read_file(path, buf, size) < 0)
		pt_fail_at(file, line, "read %s: %s", path, strerror(errno));
}

void pt_expect_fd_link_at(const char *file, int line, int fd,
			  const char *want)
{
	char path[64], link[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		pt_fail_at(file, line, "readlink(%s): %s", path,
			   strerror(errno));
	link[n] = 0;
	if (strcmp(link, want))
		pt_fail_at(file, line, "readlink(%s) = \"%s\", expected \"%s\"",
			   path, link, want);
}

void pt_slab_shrink(const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "1", 1) < 0)
		pt_diag("%s: %s", path, strerror(errno));
	close(fd);
}

void pt_slab_shrink_all(void)
{
	DIR *d = opendir("/sys/kernel/slab");
	struct dirent *de;

	/* the aliases of merged caches are symbolic links: once is enough */
	while (d && (de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.')
			pt_slab_shrink(de->d_name);
	if (d)
		closedir(d);
}

ssize_t pt_read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return n;
}

int pt_run_cmd(char *const argv[], char *out, size_t outsz)
{
	static const char *const dirs[] = { "/sbin", "/usr/sbin", "/bin",
					    "/usr/bin" };
	size_t len = 0;
	int pfd[2], status;
	pid_t pid;
	ssize_t r;

	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char path[256];

		dup2(pfd[1], STDOUT_FILENO);
		dup2(pfd[1], STDERR_FILENO);
		if (!strchr(argv[0], '/')) {
			for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
				snprintf(path, sizeof(path), "%s/%s", dirs[i],
					 argv[0]);
				if (access(path, X_OK) == 0)
					execv(path, argv);
			}
		}
		execvp(argv[0], argv);
		dprintf(STDERR_FILENO, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		char sink[256];

		if (out && len + 1 < outsz)
			r = read(pfd[0], out + len, outsz - 1 - len);
		else
			r = read(pfd[0], sink, sizeof(sink));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (out && len + 1 < outsz)
			len += (size_t)r;
	}
	if (out && outsz)
		out[len] = 0;
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

bool pt_module_loaded(void)
{
	struct stat st;

	return stat("/sys/module/pollfs", &st) == 0;
}

static const char *module_ko;

/* pt_module_ko()'s fail hook. */
static void module_reload(void)
{
	char out[1024];
	char *argv[] = { "insmod", (char *)module_ko, NULL };

	if (pt_module_loaded())
		return;
	if (pt_run_cmd(argv, out, sizeof(out)) != 0)
		pt_diag("insmod %s failed: %s", module_ko, out);
}

const char *pt_module_ko(void)
{
	const char *ko;

	pt_require_root();
	ko = getenv("POLLFS_KO");
	if (!ko || !*ko)
		pt_skip("POLLFS_KO is not set: cannot reload the module");
	if (access(ko, R_OK))
		pt_skip("POLLFS_KO=%s: %s", ko, strerror(errno));
	if (!pt_module_loaded())
		FAIL("the pollfs module is not loaded");
	module_ko = ko;
	pt_on_fail(module_reload);
	return ko;
}

ssize_t pt_read_nb(int fd, void *buf, size_t n)
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

int pt_epoll_wait_one(int ep, int timeout_ms, uint64_t tag)
{
	struct epoll_event e[2];
	int n;

	do
		n = epoll_wait(ep, e, 2, timeout_ms);
	while (n < 0 && errno == EINTR);
	CHECK_SYS(n);
	if (n) {
		CHECK_EQ(n, 1);
		CHECK_EQ(e[0].events, EPOLLIN);
		CHECK_EQ(e[0].data.u64, tag);
	}
	return n;
}
