/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the pollfs tests.
 *
 * Every test is a standalone program: exit 0 = pass, 1 = fail, 4 = skip.
 * Diagnostics are lines starting with "# ".  A failed check prints where it
 * failed, what it checked and what it saw, then ends the process with 1.
 * Every test declares its time budget (PT_BUDGET); a program that checks
 * several behaviours makes each one a TEST, reported on a TAP line of its
 * own.  Include this header first: it defines _GNU_SOURCE.
 *
 * What works on any pollfs fd is here; the helpers of one kind of object
 * are in its own header (timer.h, futex.h, signal.h, aio.h), which
 * includes this one, and kinds.h is the table of all the kinds.  All of
 * them are compiled once, into libpt.a.
 */
#ifndef POLLFS_TESTS_LIB_H
#define POLLFS_TESTS_LIB_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <linux/pollfs.h>

enum { PT_PASS = 0, PT_FAIL = 1, PT_SKIP = 4 };

#define NSEC_PER_SEC	1000000000LL
#define NSEC_PER_MSEC	1000000LL
#define MS(x)		((int64_t)(x) * NSEC_PER_MSEC)
#define US(x)		((int64_t)(x) * 1000LL)

/*
 * How late the guest (QEMU TCG, busy vCPUs) may run a timer callback or
 * wake a sleeper.  Only lower bounds of counts derived from elapsed time
 * use it; "never early" checks and upper bounds of counts are exact.
 */
#define PT_LAG		MS(60)

/* How long a test waits for something that must happen (then it fails). */
#define PT_WAIT_MS	10000

_Static_assert(sizeof(struct pollfs_open) == 8, "pollfs_open size");

/* ---- reporting ---- */
void pt_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
__attribute__((noreturn, format(printf, 3, 4)))
void pt_fail_at(const char *file, int line, const char *fmt, ...);
__attribute__((noreturn, format(printf, 1, 2)))
void pt_skip(const char *fmt, ...);
/* Called once by a failing check before the process exits. */
void pt_on_fail(void (*fn)(void));
/*
 * PT_BUDGET(seconds), once at file scope: how long the test may run, a
 * whole number of seconds, stretched POLLFS_TIME_SCALE times.  Every
 * test declares one; it is the only time limit of the test:
 *  - the test's watchdog (below) fails it when the budget runs out,
 *    saying so, armed before main() runs;
 *  - tests/run reads the budget from the program (the string the macro
 *    leaves in it, "pollfs-test-budget=N") and kills the test a margin
 *    after it, should the watchdog not end it.
 * A script under test declares it in a comment line of the same form.
 */
#define PT_BUDGET(seconds)						\
	__attribute__((constructor)) static void pt_budget_arm(void)	\
	{								\
		pt_watchdog(seconds);					\
	}								\
	PT_BUDGET_TAG(#seconds)
/*
 * The budget of a program that keeps its own time (the fuzzer, whose
 * supervisor ends it and puts the clock back): no watchdog, tests/run's
 * limit only.  expr is "N", or "N+${VAR:-DEFAULT}": N seconds more
 * than the environment variable VAR says (DEFAULT when it is unset).
 */
#define PT_BUDGET_TAG(expr)						\
	__attribute__((used, retain))	/* nothing refers to it */	\
	static const char pt_budget_tag[] = "pollfs-test-budget=" expr
/*
 * Fails the test (exit 1) if it is still running after this many seconds
 * (times POLLFS_TIME_SCALE), replacing the limit armed before: PT_BUDGET
 * arms it, a forked child (which has none) or a test that takes a longer
 * run as an argument may arm its own.
 */
void pt_watchdog(unsigned int seconds);
/* POLLFS_TIME_SCALE, at least 1: how many times slower this kernel is
 * than Debian's (the debug kernel of make check-debug). */
unsigned int pt_time_scale(void);
/* A PREEMPT_RT kernel (/sys/kernel/realtime), where some wake-ups of the
 * module take another path (pollfs(7), Requirements). */
bool pt_kernel_rt(void);

#define FAIL(...) pt_fail_at(__FILE__, __LINE__, __VA_ARGS__)

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		int e_ = errno;						\
		pt_fail_at(__FILE__, __LINE__,				\
			   "CHECK(%s) failed (errno %d: %s)",		\
			   #cond, e_, strerror(e_));			\
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long a_ = (long long)(a), b_ = (long long)(b);		\
	if (a_ != b_)							\
		pt_fail_at(__FILE__, __LINE__,				\
			   "%s == %s: got %lld, expected %lld",		\
			   #a, #b, a_, b_);				\
} while (0)

/* lo <= v <= hi */
#define CHECK_RANGE(v, lo, hi) do {					\
	long long v_ = (long long)(v);					\
	long long lo_ = (long long)(lo), hi_ = (long long)(hi);		\
	if (v_ < lo_ || v_ > hi_)					\
		pt_fail_at(__FILE__, __LINE__,				\
			   "%s = %lld, expected within [%lld, %lld]",	\
			   #v, v_, lo_, hi_);				\
} while (0)

/* A call that must succeed (return >= 0); evaluates to its result. */
#define CHECK_SYS(expr) ({						\
	long r_ = (long)(expr);						\
	if (r_ < 0) {							\
		int e_ = errno;						\
		pt_fail_at(__FILE__, __LINE__,				\
			   "%s: returned %ld, errno %d (%s)",		\
			   #expr, r_, e_, strerror(e_));		\
	}								\
	r_;								\
})

/* A call that must fail with exactly -1 and errno == err. */
#define CHECK_ERR(expr, err) do {					\
	errno = 0;							\
	long r_ = (long)(expr);						\
	int e_ = errno;							\
	if (r_ != -1 || e_ != (err))					\
		pt_fail_at(__FILE__, __LINE__,				\
			   "%s: expected -1 with errno %s, got %ld "	\
			   "with errno %d (%s)", #expr, #err, r_, e_,	\
			   strerror(e_));				\
} while (0)

/*
 * ---- several behaviours in one program ----
 * TEST(name) { ... }, at file scope, is one behaviour of a program that
 * checks several; main() calls pt_run_tests() (after whatever setup all
 * of them share) and returns what it returns.  Each behaviour runs in a
 * forked child of its own, in the order of the source, and is reported
 * as a TAP line of its own: "ok 3 name", "not ok 3 name", or "ok 3 name
 * # SKIP reason" (pt_skip); a failing check ends its behaviour only, not
 * the ones after it.  The program's output is a TAP document of its
 * own, ended by kselftest's "# Totals:" line, which tests/run nests
 * under the program's result line.  The name is the identifier, with
 * '-' for '_'.  pt_run_tests() returns PT_FAIL when a behaviour failed,
 * PT_SKIP when all of them skipped, PT_PASS otherwise.
 */
#define TEST(name)							\
	static void pt_test_##name(void);				\
	__attribute__((constructor)) static void pt_add_##name(void)	\
	{								\
		pt_add_test(#name, pt_test_##name);			\
	}								\
	static void pt_test_##name(void)
void pt_add_test(const char *name, void (*fn)(void));
/* A TEST made at run time, before pt_run_tests(): fn(arg), reported as
 * name (copied). */
void pt_add_test_arg(const char *name, void (*fn)(const void *arg),
		     const void *arg);
int pt_run_tests(void);

/*
 * ---- what several behaviours set up and tear down alike ----
 * A fixture, as kselftest_harness.h has them, at file scope:
 *   FIXTURE(name) { members };	the state each of its TESTs gets
 *   FIXTURE_SETUP(name) { ... }	makes it, in self (zeroed before)
 *   FIXTURE_TEARDOWN(name) { ... }	undoes it
 *   TEST_F(name, test) { ... }	a TEST (above) of the fixture, with
 *				self, its state, made for it alone
 * In the TEST's own child: the setup, then the test, then the teardown.
 * Once the setup has returned, the teardown runs however the test ends:
 * returning, skipping, or failing a check (after pt_on_fail()'s hook);
 * a check failing in the teardown fails the TEST.  A failing check or a
 * skip in the setup ends the TEST there, with no teardown.  Only the
 * process that ran the setup tears down: a child the test forks ends
 * with none.  A fixture several programs share stands in a header of
 * tests/lib (futex.h's fx_epoll): its setup and teardown may go unused
 * in a program that includes it.
 */
#define FIXTURE(name) struct pt_fixture_##name

/* A test, a setup or a teardown may leave self unused. */
#define PT_SELF(fixture)						\
	struct pt_fixture_##fixture *self __attribute__((unused))

#define FIXTURE_SETUP(name)						\
	__attribute__((unused)) static void pt_setup_##name(PT_SELF(name))

#define FIXTURE_TEARDOWN(name)						\
	static void pt_teardown_##name(PT_SELF(name));			\
	__attribute__((unused))						\
	static void pt_teardown_any_##name(void *self)			\
	{								\
		pt_teardown_##name(self);				\
	}								\
	static void pt_teardown_##name(PT_SELF(name))

#define TEST_F(fixture, name)						\
	static void pt_test_##fixture##_##name(PT_SELF(fixture));	\
	static void pt_run_##fixture##_##name(void)			\
	{								\
		struct pt_fixture_##fixture self;			\
									\
		memset(&self, 0, sizeof(self));				\
		pt_setup_##fixture(&self);				\
		pt_fixture_set(pt_teardown_any_##fixture, &self);	\
		pt_test_##fixture##_##name(&self);			\
		pt_fixture_teardown();					\
	}								\
	__attribute__((constructor))					\
	static void pt_add_##fixture##_##name(void)			\
	{								\
		pt_add_test(#name, pt_run_##fixture##_##name);		\
	}								\
	static void pt_test_##fixture##_##name(PT_SELF(fixture))
/* TEST_F's: the teardown to run on self when the TEST ends, and
 * running it now (once). */
void pt_fixture_set(void (*teardown)(void *self), void *self);
void pt_fixture_teardown(void);

/* ---- time ---- */
int64_t pt_now(clockid_t clk);
int64_t pt_mono(void);
int64_t pt_ts_ns(const struct __kernel_timespec *ts);
struct __kernel_timespec pt_ns_ts(int64_t ns);
/* CLOCK_MONOTONIC @ns from now, for absolute timeouts. */
struct timespec pt_mono_in(int64_t ns);
/* Sleeps the whole duration, resuming after signal handlers. */
void pt_sleep_ns(int64_t ns);
#define pt_sleep_ms(ms) pt_sleep_ns(MS(ms))
/* The clock to read for an absolute time of clk (the alarm clocks). */
clockid_t pt_base_clock(clockid_t clk);
const char *pt_clock_name(clockid_t clk);

/* ---- objects ---- */
/* open("/dev/pollfs", O_RDWR | O_CLOEXEC), failing the test if it fails. */
#define pt_dev() pt_dev_at(__FILE__, __LINE__)
int pt_dev_at(const char *file, int line);
/* poll() for POLLIN up to timeout_ms (-1: forever); true if it is set. */
/* A read with O_NONBLOCK set for it, whatever the fd's own flags:
 * read()'s result, its errno kept. */
ssize_t pt_read_nb(int fd, void *buf, size_t n);
/* One epoll_wait of ep for up to timeout_ms (again after EINTR): 0, or 1
 * for the one object tagged tag, with EPOLLIN alone (anything else fails
 * the test). */
int pt_epoll_wait_one(int ep, int timeout_ms, uint64_t tag);
#define pt_poll_in(fd, timeout_ms)					\
	pt_poll_in_at(__FILE__, __LINE__, (fd), (timeout_ms))
bool pt_poll_in_at(const char *file, int line, int fd, int timeout_ms);
/* Fails unless fd shows POLLIN within timeout_ms, woken before poll's
 * timeout ends. */
#define pt_wait_readable(fd, timeout_ms)				\
	pt_wait_readable_at(__FILE__, __LINE__, (fd), (timeout_ms))
void pt_wait_readable_at(const char *file, int line, int fd, int timeout_ms);
/*
 * Fails unless no record is ready now: no POLLIN, and a non-blocking read
 * gives EAGAIN (O_NONBLOCK is set for that read and restored).
 */
#define pt_expect_empty(fd) pt_expect_empty_at(__FILE__, __LINE__, (fd))
void pt_expect_empty_at(const char *file, int line, int fd);

/* ---- processes and privileges ---- */
/*
 * The system call a thread asleep in libc's poll() or epoll_wait() is
 * in, for the tests that read /proc/TID/syscall to know it sleeps there:
 * glibc makes poll and epoll_wait where the architecture has them
 * (x86-64), ppoll and epoll_pwait where it has only those (arm64, as
 * every architecture of the generic system call table).
 */
#ifdef SYS_poll
#define PT_SYS_POLL		SYS_poll
#else
#define PT_SYS_POLL		SYS_ppoll
#endif
#ifdef SYS_epoll_wait
#define PT_SYS_EPOLL_WAIT	SYS_epoll_wait
#else
#define PT_SYS_EPOLL_WAIT	SYS_epoll_pwait
#endif
/*
 * Runs fn(arg) in a forked child and returns its exit status (fn's return
 * value, or 1 if a check failed in it); a child still running after
 * timeout_ms is killed and counts as a failure.
 */
int pt_run_child(int (*fn)(void *), void *arg, int timeout_ms);
/*
 * Waits for child pid to end (through EINTR) and returns its exit status
 * (WEXITSTATUS); fails the test if waitpid() fails or the child was
 * killed by a signal.
 */
#define pt_reap(pid) pt_reap_at(__FILE__, __LINE__, (pid))
int pt_reap_at(const char *file, int line, pid_t pid);
/* Waits for child pid to end (through EINTR) and returns its wait status
 * (for WIFSIGNALED and the like); fails the test if waitpid() fails. */
#define pt_wait_status(pid) pt_wait_status_at(__FILE__, __LINE__, (pid))
int pt_wait_status_at(const char *file, int line, pid_t pid);
/* Waits up to ms for child pid to end: its wait status, or -1 if it is
 * still running then; fails the test if waitpid() fails. */
#define pt_reap_within(pid, ms)						\
	pt_reap_within_at(__FILE__, __LINE__, (pid), (ms))
int pt_reap_within_at(const char *file, int line, pid_t pid, int ms);
/* Kills child pid (SIGKILL) and waits for it to end, through EINTR;
 * errors are ignored: a fail hook may call it for a child already gone. */
void pt_kill_reap(pid_t pid);
/* Writes the byte c to fd (a pipe or socket); fails the test unless one
 * byte is written. */
#define pt_send_byte(fd, c) pt_send_byte_at(__FILE__, __LINE__, (fd), (c))
void pt_send_byte_at(const char *file, int line, int fd, char c);
/* Reads one byte from fd, blocking (through EINTR), and returns it; fails
 * the test on an error or end of file. */
#define pt_recv_byte(fd) pt_recv_byte_at(__FILE__, __LINE__, (fd))
char pt_recv_byte_at(const char *file, int line, int fd);
/*
 * Passes descriptors over a UNIX socket (SCM_RIGHTS): pt_send_fds sends
 * fds[0..nfds) with the len bytes at data, in one sendmsg() (data NULL:
 * a byte of its own, as a stream socket carries no descriptor without
 * one); it fails the test unless all len bytes go.
 * pt_recv_fds waits up to PT_WAIT_MS for the message, then takes its len
 * bytes into data (NULL: the one byte of its own) and its descriptors
 * into fds, close-on-exec, and returns how many came; it fails the test
 * if nothing comes in time, if the data is not exactly len bytes, or if
 * the message has no descriptor, more than max or a truncated control
 * part.  pt_send_fd and pt_recv_fd pass exactly one.
 */
#define pt_send_fds(sock, fds, nfds, data, len)				\
	pt_send_fds_at(__FILE__, __LINE__, (sock), (fds), (nfds),	\
		       (data), (len))
void pt_send_fds_at(const char *file, int line, int sock, const int *fds,
		    int nfds, const void *data, size_t len);
#define pt_recv_fds(sock, fds, max, data, len)				\
	pt_recv_fds_at(__FILE__, __LINE__, (sock), (fds), (max),	\
		       (data), (len))
int pt_recv_fds_at(const char *file, int line, int sock, int *fds, int max,
		   void *data, size_t len);
#define pt_send_fd(sock, fd, data, len)					\
	pt_send_fds_at(__FILE__, __LINE__, (sock), &(int){ (fd) }, 1,	\
		       (data), (len))
#define pt_recv_fd(sock, data, len)					\
	pt_recv_fd_at(__FILE__, __LINE__, (sock), (data), (len))
int pt_recv_fd_at(const char *file, int line, int sock, void *data,
		  size_t len);
/* Skips the test unless it runs as root. */
void pt_require_root(void);
/* setgroups(0), setresgid/setresuid to 65534: no capabilities left
 * (nothing to do when already so). */
#define pt_become_nobody() pt_become_nobody_at(__FILE__, __LINE__)
void pt_become_nobody_at(const char *file, int line);
/* fd's /proc/self/fdinfo into buf, NUL-terminated; fails the test when
 * it cannot be read. */
#define pt_fdinfo(fd, buf, size) \
	pt_fdinfo_at(__FILE__, __LINE__, fd, buf, size)
void pt_fdinfo_at(const char *file, int line, int fd, char *buf, size_t size);
/* Fails the test unless fd's /proc/self/fd link reads want (a pollfs
 * object's is "pollfs:[KIND]"). */
#define pt_expect_fd_link(fd, want)					\
	pt_expect_fd_link_at(__FILE__, __LINE__, (fd), (want))
void pt_expect_fd_link_at(const char *file, int line, int fd,
			  const char *want);
/* Shrinks slab cache @name (as root; errors are ignored).  Under KASAN
 * this also empties its quarantine, whose freed objects /proc/slabinfo
 * still counts as active. */
void pt_slab_shrink(const char *name);
/* pt_slab_shrink() of every cache: what /proc/meminfo then counts as
 * slab is what is allocated, not what waits in KASAN's quarantine. */
void pt_slab_shrink_all(void);
/* Reads a small file (of /proc or /sys) whole into buf, NUL-terminated;
 * returns its length, or -1 (also when it is empty). */
ssize_t pt_read_file(const char *path, char *buf, size_t size);
/* Runs argv (argv[0] looked up in PATH, /sbin, /usr/sbin), collecting its
 * stdout and stderr into out; returns its exit status, or -1. */
int pt_run_cmd(char *const argv[], char *out, size_t outsz);
/* True if /sys/module/pollfs exists. */
bool pt_module_loaded(void);
/*
 * For a test that unloads the module: skips it unless it runs as root
 * and $POLLFS_KO names a readable file, fails it unless pollfs is
 * loaded, and makes its fail hook load $POLLFS_KO again (insmod; a
 * failure to is only reported) if pollfs is then not loaded.  Returns
 * $POLLFS_KO.
 */
const char *pt_module_ko(void);

#endif /* POLLFS_TESTS_LIB_H */
