// SPDX-License-Identifier: MIT
/*
 * Whoever writes to a futex object cannot hold its other users in an
 * unkillable sleep (issue "Hardening 3", finding 3).
 *
 * A write of records copies them from the writer's buffer, and a copy
 * from user memory may fault, for as long as the writer likes: on a
 * page that a userfaultfd registered, the fault waits until the
 * userfaultfd's handler resolves it.  If the write holds the object's
 * mutex across that copy, and a read or a /proc fdinfo read takes the
 * mutex with mutex_lock(), another user who received the descriptor
 * (SCM_RIGHTS, fork) sleeps in state D for as long as the writer wants:
 * its O_NONBLOCK read blocks, its fdinfo blocks, and its blocking read
 * ignores SIGKILL.
 *
 * The set-up of each TEST: the attacker (uid 65534) is given a
 * userfaultfd by root (made as root, before it drops to 65534, so that
 * it handles kernel-mode faults: no UFFD_USER_MODE_ONLY), with one page
 * registered in missing mode, and hands it to a root handler that never
 * resolves the fault until the TEST ends.  It makes a futex object,
 * passes it over SCM_RIGHTS to the victim (uid 65533, another user), and
 * write(2)s a record to it from the registered page: the write stalls in
 * the fault, which the handler reads from the userfaultfd.  Then the
 * victim, watched by root through /proc/PID/stat:
 *  - nonblock_read: sets O_NONBLOCK (fcntl; the flag is the open file's,
 *    so the writer's too) and reads the unarmed object: must return
 *    within LIMIT_MS, with EINVAL (unarmed) or EAGAIN, never sleeping
 *    in state D (D for D_MS or more counts);
 *  - fdinfo_read: reads /proc/self/fdinfo/N of it: the same;
 *  - blocking_read_killable: reads the object, armed on a word of the
 *    attacker's and blocking: the read sleeps, and must not sleep in D;
 *    SIGKILL must end the victim within KILL_MS;
 *  - watched_nonblock_read: the object is watched (POLLFS_FUTEX_WATCH),
 *    armed and woken, so a record is pending, when the second write
 *    stalls: a non-blocking read must return within LIMIT_MS (the record,
 *    or EAGAIN, or EINVAL), never in D;
 *  - word_fault_nonblock_read: as nonblock_read, but the write's record
 *    is in ordinary memory and its futex word in the registered page:
 *    the write stalls reading the word to arm it.
 * A sleep that only SIGKILL ends (mutex_lock_killable()) shows as D too,
 * and counts: the victim's reads must not wait for the writer at all, or
 * wait as any read waits, interruptibly.
 *
 * Each TEST ends by resolving the fault (UFFDIO_ZEROPAGE: the record read
 * is all zeros, the disarm record; or the word read is 0, the value the
 * record expects, and the object is armed), after which the write must
 * complete, the victim finish, and every process and descriptor go; the
 * module must then unload (tests/run checks it).  A victim held in D is
 * let go within seconds, well before the guest's hung-task panic (30 s).
 */
#include "lib/futex.h"

#include <grp.h>
#include <linux/userfaultfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

PT_BUDGET(90);

#define VICTIM_UID	65533
/* How long a non-blocking read or an fdinfo read may take. */
#define LIMIT_MS	1000
/* State D for this long is a failure. */
#define D_MS		100
/* How long SIGKILL may take to end the victim. */
#define KILL_MS		2000

enum action { NONBLOCK_READ, FDINFO_READ, BLOCKING_READ };
enum setup { UNARMED, ARMED, WATCHED_WOKEN, WORD_FAULT };

/* What the victim sends root when its read ended. */
struct result {
	int64_t ret;
	int err;
	int64_t ns;
	struct pollfs_futex_event rec;
	char text[256];
};

/* What the attacker sends root. */
struct amsg {
	char what;		/* 'u' the uffd, 'r' ready, 'w' write ended */
	uint64_t page;
	int64_t ret;
	int err;
};

struct stall {
	pid_t attacker, victim;
	int uffd;		/* root's, the only copy once passed */
	uint64_t page;		/* the registered page, in the attacker */
	int sa, sv;		/* root's ends: to the attacker, the victim */
	bool resolved, reported, victim_reaped;
};

static struct stall st = { .uffd = -1, .sa = -1, .sv = -1 };
static uint32_t word;		/* the attacker's futex word */

/* Reads one message of exactly @len bytes from a SOCK_SEQPACKET. */
static void recv_msg(int sock, void *data, size_t len)
{
	ssize_t r;

	do
		r = recv(sock, data, len, 0);
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)len)
		FAIL("recv: %zd of %zu bytes, errno %d (%s)", r, len, errno,
		     strerror(errno));
}

static void send_msg(int sock, const void *data, size_t len)
{
	CHECK_EQ(send(sock, data, len, MSG_NOSIGNAL), (long)len);
}

/* The task's state letter in /proc/PID/stat, or 0 if it is gone. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (pt_read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* The system call number the task is in, or -1. */
static long proc_syscall(pid_t pid)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	if (pt_read_file(path, buf, sizeof(buf)) < 0 ||
	    buf[0] < '0' || buf[0] > '9')
		return -1;
	return strtol(buf, NULL, 10);
}

/* ---- the attacker, uid 65534 ---- */

static void attacker(int sa, int av, enum setup setup)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct amsg m = { 0 };
	void *page;
	int uffd, fd;
	char go;

	/*
	 * As root: a userfaultfd that handles kernel-mode faults too.
	 * Non-blocking, or poll() on it gives POLLERR.
	 */
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		FAIL("userfaultfd: errno %d (%s)", errno, strerror(errno));
	CHECK_SYS(ioctl(uffd, UFFDIO_API, &api));
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(page != MAP_FAILED);
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)page;
	reg.range.len = 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	CHECK_SYS(ioctl(uffd, UFFDIO_REGISTER, &reg));
	pt_become_nobody();
	m.what = 'u';
	m.page = (uintptr_t)page;
	pt_send_fd(sa, uffd, &m, sizeof(m));
	CHECK_SYS(close(uffd));

	fd = fx_new(0);
	switch (setup) {
	case UNARMED:
	case WORD_FAULT:
		break;
	case ARMED:
		fx_arm(fd, &word, word, FX_PRIVATE);
		break;
	case WATCHED_WOKEN:
		word = 7;
		fx_arm(fd, &word, 7, FX_PRIVATE | FX_WATCH);
		CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
		fx_expect_ready(fd);
		break;
	}
	m.what = 'f';
	m.page = (uintptr_t)&word;
	pt_send_fd(av, fd, &m, sizeof(m));
	m.what = 'r';
	send_msg(sa, &m, sizeof(m));
	recv_msg(sa, &go, 1);
	/*
	 * Stalls in the fault on the registered page, the mutex held: the
	 * record's copy from it, or the read of the futex word in it.
	 */
	if (setup == WORD_FAULT)
		m.ret = fx_write1(fd, page, 0, FX_PRIVATE);
	else
		m.ret = write(fd, page, FX_REC);
	m.err = errno;
	m.what = 'w';
	send_msg(sa, &m, sizeof(m));
	CHECK_SYS(close(fd));
	_exit(PT_PASS);
}

/* ---- the victim, uid 65533 ---- */

static void victim(int sv, int av, enum action action)
{
	struct result res;
	struct amsg m;
	char path[64], go;
	int64_t t0;
	int fd, fl;

	CHECK_SYS(setgroups(0, NULL));
	CHECK_SYS(setresgid(VICTIM_UID, VICTIM_UID, VICTIM_UID));
	CHECK_SYS(setresuid(VICTIM_UID, VICTIM_UID, VICTIM_UID));
	fd = pt_recv_fd(av, &m, sizeof(m));
	send_msg(sv, "r", 1);
	recv_msg(sv, &go, 1);

	memset(&res, 0, sizeof(res));
	fl = CHECK_SYS(fcntl(fd, F_GETFL));
	if (action == NONBLOCK_READ)
		CHECK_SYS(fcntl(fd, F_SETFL, fl | O_NONBLOCK));
	else if (action == BLOCKING_READ)
		CHECK_SYS(fcntl(fd, F_SETFL, fl & ~O_NONBLOCK));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	t0 = pt_mono();
	errno = 0;
	if (action == FDINFO_READ)
		res.ret = pt_read_file(path, res.text, sizeof(res.text));
	else
		res.ret = read(fd, &res.rec, sizeof(res.rec));
	res.err = errno;
	res.ns = pt_mono() - t0;
	send_msg(sv, &res, sizeof(res));
	CHECK_SYS(close(fd));
	_exit(PT_PASS);
}

/* ---- root ---- */

/* Lets the write go on: a page of zeros, the disarm record. */
static void resolve(void)
{
	struct uffdio_zeropage zp;

	if (st.resolved || st.uffd < 0)
		return;
	memset(&zp, 0, sizeof(zp));
	zp.range.start = st.page;
	zp.range.len = 4096;
	if (ioctl(st.uffd, UFFDIO_ZEROPAGE, &zp))
		pt_diag("UFFDIO_ZEROPAGE: errno %d (%s)", errno,
			strerror(errno));
	st.resolved = true;
}

/* On a failed check: let everything go, and leave nothing behind. */
static void cleanup(void)
{
	resolve();
	if (st.victim > 0 && !st.victim_reaped) {
		kill(st.victim, SIGKILL);
		if (pt_reap_within(st.victim, 10000) < 0)
			pt_diag("victim %d still there (state %c)",
				(int)st.victim, proc_state(st.victim));
	}
	if (st.attacker > 0) {
		kill(st.attacker, SIGKILL);
		pt_reap_within(st.attacker, 10000);
	}
}

/*
 * Forks the attacker and the victim, has the attacker's write stall in
 * its fault, and returns once root has read that fault from the
 * userfaultfd and the victim holds the object.
 */
static void stall_start(enum setup setup, enum action action)
{
	struct uffd_msg um;
	struct amsg m;
	int sa[2], sv[2], av[2];
	char c;

	pt_require_root();
	CHECK_SYS(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sa));
	CHECK_SYS(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	CHECK_SYS(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, av));
	pt_on_fail(cleanup);
	st.attacker = fx_fork();
	if (st.attacker == 0) {
		close(sa[0]);
		close(sv[0]);
		close(sv[1]);
		close(av[1]);
		attacker(sa[1], av[0], setup);
	}
	st.victim = fx_fork();
	if (st.victim == 0) {
		close(sa[0]);
		close(sa[1]);
		close(sv[0]);
		close(av[0]);
		victim(sv[1], av[1], action);
	}
	close(sa[1]);
	close(sv[1]);
	close(av[0]);
	close(av[1]);
	st.sa = sa[0];
	st.sv = sv[0];

	st.uffd = pt_recv_fd(st.sa, &m, sizeof(m));
	CHECK_EQ(m.what, 'u');
	st.page = m.page;
	recv_msg(st.sa, &m, sizeof(m));
	CHECK_EQ(m.what, 'r');
	recv_msg(st.sv, &c, 1);		/* the victim has the object */
	send_msg(st.sa, "g", 1);

	/* the write's fault, as the handler sees it */
	if (!(pt_poll_in(st.uffd, PT_WAIT_MS)))
		FAIL("no fault on the userfaultfd within %d ms", PT_WAIT_MS);
	CHECK_EQ(read(st.uffd, &um, sizeof(um)), (long)sizeof(um));
	CHECK_EQ(um.event, UFFD_EVENT_PAGEFAULT);
	CHECK_EQ(um.arg.pagefault.address & ~4095ull, st.page);
	/* and the writer asleep in write(2) */
	for (int64_t end = pt_mono() + MS(PT_WAIT_MS);
	     proc_syscall(st.attacker) != SYS_write ||
	     proc_state(st.attacker) != 'S';)
		if (pt_mono() > end)
			FAIL("attacker not asleep in write(2): state %c, "
			     "system call %ld", proc_state(st.attacker),
			     proc_syscall(st.attacker));
		else
			pt_sleep_ms(2);
	pt_sleep_ms(20);
}

/*
 * Lets the victim read and waits up to @limit_ms for its result,
 * watching its state meanwhile; returns whether it came, and in
 * @d_ms the longest stretch of state D seen.
 */
static bool victim_read(struct result *res, int limit_ms, int64_t *d_ms)
{
	int64_t end, now, d_since = 0;
	struct pollfd p = { .fd = st.sv, .events = POLLIN };
	char s;

	*d_ms = 0;
	send_msg(st.sv, "g", 1);
	end = pt_mono() + MS(limit_ms);
	for (;;) {
		if (poll(&p, 1, 5) == 1) {
			recv_msg(st.sv, res, sizeof(*res));
			st.reported = true;
			return true;
		}
		now = pt_mono();
		s = proc_state(st.victim);
		if (s == 'D') {
			if (!d_since)
				d_since = now;
			if ((now - d_since) / NSEC_PER_MSEC > *d_ms)
				*d_ms = (now - d_since) / NSEC_PER_MSEC;
		} else {
			d_since = 0;
		}
		if (now > end)
			return false;
	}
}

/*
 * Resolves the fault and checks that all ends well: the write
 * completes, the victim (unless killed) and the attacker exit 0.
 */
static void stall_end(void)
{
	struct result res;
	struct amsg m;
	int status;

	resolve();
	recv_msg(st.sa, &m, sizeof(m));
	CHECK_EQ(m.what, 'w');
	if (m.ret != FX_REC)
		FAIL("the stalled write, its fault resolved: returned %lld, "
		     "errno %d (%s)", (long long)m.ret, m.err,
		     strerror(m.err));
	status = pt_reap_within(st.attacker, PT_WAIT_MS);
	if (status < 0)
		FAIL("attacker still there %d ms after its write", PT_WAIT_MS);
	st.attacker = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != PT_PASS)
		FAIL("attacker: status %#x", status);
	if (!st.victim_reaped) {
		/* a victim held until now reports now */
		if (!st.reported) {
			if (!pt_poll_in(st.sv, PT_WAIT_MS))
				FAIL("no report from the victim within %d ms "
				     "of the write", PT_WAIT_MS);
			recv_msg(st.sv, &res, sizeof(res));
			st.reported = true;
		}
		status = pt_reap_within(st.victim, PT_WAIT_MS);
		if (status < 0)
			FAIL("victim still there %d ms after the write",
			     PT_WAIT_MS);
		st.victim_reaped = true;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != PT_PASS)
			FAIL("victim: status %#x", status);
	}
	pt_on_fail(NULL);
	CHECK_SYS(close(st.uffd));
	CHECK_SYS(close(st.sa));
	CHECK_SYS(close(st.sv));
}

/* The checks of a read that must not wait on the stalled writer. */
static void expect_prompt(const char *what, bool came,
			  const struct result *res, int64_t d_ms)
{
	if (!came)
		FAIL("%s while another user's write is stalled in a fault: "
		     "still not returned after %d ms, in state %c (D for "
		     "%lld ms): held by the writer", what, LIMIT_MS,
		     proc_state(st.victim), (long long)d_ms);
	if (d_ms >= D_MS)
		FAIL("%s returned after %.1f ms, but sat in state D for "
		     "%lld ms", what, (double)res->ns / NSEC_PER_MSEC,
		     (long long)d_ms);
	pt_diag("%s: returned %lld (errno %d) in %.3f ms", what,
		(long long)res->ret, res->err,
		(double)res->ns / NSEC_PER_MSEC);
}

TEST(nonblock_read)
{
	struct result res;
	int64_t d_ms;
	bool came;

	stall_start(UNARMED, NONBLOCK_READ);
	came = victim_read(&res, LIMIT_MS, &d_ms);
	expect_prompt("an O_NONBLOCK read", came, &res, d_ms);
	if (res.ret != -1 || (res.err != EINVAL && res.err != EAGAIN))
		FAIL("O_NONBLOCK read of an unarmed object: returned %lld, "
		     "errno %d (%s), expected EINVAL or EAGAIN",
		     (long long)res.ret, res.err, strerror(res.err));
	stall_end();
}

TEST(fdinfo_read)
{
	struct result res;
	int64_t d_ms;
	bool came;

	stall_start(UNARMED, FDINFO_READ);
	came = victim_read(&res, LIMIT_MS, &d_ms);
	expect_prompt("a read of /proc/self/fdinfo", came, &res, d_ms);
	if (res.ret <= 0)
		FAIL("read of /proc/self/fdinfo: returned %lld, errno %d (%s)",
		     (long long)res.ret, res.err, strerror(res.err));
	stall_end();
}

TEST(blocking_read_killable)
{
	int64_t end, d_since = 0, d_ms = 0, now, t_kill;
	struct pollfd p;
	struct result res;
	int status;
	char s;

	stall_start(ARMED, BLOCKING_READ);
	send_msg(st.sv, "g", 1);
	/* until it sleeps in read(2), or returned */
	end = pt_mono() + MS(PT_WAIT_MS);
	p.fd = st.sv;
	p.events = POLLIN;
	while (proc_syscall(st.victim) != SYS_read ||
	       ((s = proc_state(st.victim)) != 'S' && s != 'D')) {
		if (poll(&p, 1, 0) == 1) {
			recv_msg(st.sv, &res, sizeof(res));
			st.reported = true;
			pt_diag("the blocking read returned at once: %lld, "
				"errno %d (%s)", (long long)res.ret, res.err,
				strerror(res.err));
			break;
		}
		if (pt_mono() > end)
			FAIL("victim not asleep in read(2) within %d ms",
			     PT_WAIT_MS);
		pt_sleep_ms(2);
	}
	/* how it sleeps, for 300 ms */
	for (end = pt_mono() + MS(300); (now = pt_mono()) < end;
	     pt_sleep_ms(5)) {
		if (proc_state(st.victim) == 'D') {
			if (!d_since)
				d_since = now;
			if ((now - d_since) / NSEC_PER_MSEC > d_ms)
				d_ms = (now - d_since) / NSEC_PER_MSEC;
		} else {
			d_since = 0;
		}
	}
	s = proc_state(st.victim);
	t_kill = pt_mono();
	CHECK_SYS(kill(st.victim, SIGKILL));
	status = pt_reap_within(st.victim, KILL_MS);
	if (status < 0)
		FAIL("a blocking read while another user's write is stalled "
		     "in a fault: the reader still there %d ms after "
		     "SIGKILL, in state %c (before: %c, D for %lld ms): held "
		     "by the writer, unkillable", KILL_MS,
		     proc_state(st.victim), s, (long long)d_ms);
	st.victim_reaped = true;
	pt_diag("the reader, in state %c, ended %.1f ms after SIGKILL", s,
		(double)(pt_mono() - t_kill) / NSEC_PER_MSEC);
	if (d_ms >= D_MS)
		FAIL("a blocking read while another user's write is stalled "
		     "in a fault: the reader sat in state D for %lld ms "
		     "(killed all the same)", (long long)d_ms);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		pt_diag("victim: status %#x", status);
	stall_end();
}

TEST(watched_nonblock_read)
{
	struct result res;
	int64_t d_ms;
	bool came;

	stall_start(WATCHED_WOKEN, NONBLOCK_READ);
	came = victim_read(&res, LIMIT_MS, &d_ms);
	expect_prompt("an O_NONBLOCK read of a watched object with a record "
		      "pending", came, &res, d_ms);
	if (res.ret == FX_REC)
		pt_diag("the pending record: addr %#llx val %u flags %#x",
			(unsigned long long)res.rec.addr, res.rec.val,
			res.rec.flags);
	else if (res.ret != -1 || (res.err != EINVAL && res.err != EAGAIN))
		FAIL("O_NONBLOCK read of a watched object: returned %lld, "
		     "errno %d (%s), expected the record, EAGAIN or EINVAL",
		     (long long)res.ret, res.err, strerror(res.err));
	stall_end();
}

/*
 * The same with the record in ordinary memory and its futex word in the
 * registered page: arming reads the word (with page faults off under the
 * hash bucket's lock, then, the page missing, faulting it in with
 * get_user() before it tries again), and that fault stalls the write as
 * well, wherever the records were copied.
 */
TEST(word_fault_nonblock_read)
{
	struct result res;
	int64_t d_ms;
	bool came;

	stall_start(WORD_FAULT, NONBLOCK_READ);
	came = victim_read(&res, LIMIT_MS, &d_ms);
	expect_prompt("an O_NONBLOCK read while the arming write faults on "
		      "its futex word", came, &res, d_ms);
	if (res.ret != -1 || (res.err != EINVAL && res.err != EAGAIN))
		FAIL("O_NONBLOCK read of an object being armed: returned "
		     "%lld, errno %d (%s), expected EINVAL or EAGAIN",
		     (long long)res.ret, res.err, strerror(res.err));
	stall_end();
}

int main(void)
{
	int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);

	/* The stall is a userfaultfd's: a kernel without one cannot run it. */
	if (uffd < 0 && errno == ENOSYS)
		pt_skip("the kernel has no userfaultfd(2) (CONFIG_USERFAULTFD)");
	if (uffd >= 0)
		CHECK_SYS(close(uffd));
	return pt_run_tests();
}
