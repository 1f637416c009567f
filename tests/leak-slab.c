// SPDX-License-Identifier: MIT
/*
 * No object leaks, however it ends: thousands of objects of every kind
 * of tests/lib/kinds.c, left in their live states (armed, fired and
 * unread, ...), some of them used (made readable and read), and then
 * ended every way a file ends - closed, left to exit, inherited by a fork
 * that exits, carried through exec (with and without close-on-exec), and
 * AIO objects whose context is destroyed under them, before or after
 * they are closed, or by the exit.  After each way, pollfs's own slab
 * caches (the active objects of each kind's cache in /proc/slabinfo)
 * come back exactly to where they started
 * (closing finishes through task work and delayed fput, and a timer is
 * freed a grace period later, as timerfd's context is: allowed a few
 * seconds), and the filp cache close to it (RCU frees it later; others
 * use it too).  While the objects live, each cache holds exactly as many
 * more objects as were made of its kind: the counts are the right ones.
 */
#include "lib/kinds.h"

#include <linux/aio_abi.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

PT_BUDGET(55);

#define FILP_SLACK	256	/* others open and close files too */
#define MAX_KINDS	16
#define N	600	/* objects of each kind in a round */

/* The active objects of each kind's cache, then of filp. */
#define FILP	pt_nkinds
static long base[MAX_KINDS + 1];

static const char *cache_name(unsigned int i)
{
	return i < pt_nkinds ? pt_kinds[i].cache : "filp";
}

static void read_caches(long *v)
{
	char line[512];
	FILE *f;

	for (unsigned int i = 0; i <= FILP; i++)
		pt_slab_shrink(cache_name(i));
	f = fopen("/proc/slabinfo", "re");
	if (!f)
		FAIL("/proc/slabinfo: %s", strerror(errno));
	for (unsigned int i = 0; i <= FILP; i++)
		v[i] = -1;
	while (fgets(line, sizeof(line), f)) {
		char name[64];
		long active;

		if (sscanf(line, "%63s %ld", name, &active) != 2)
			continue;
		for (unsigned int i = 0; i <= FILP; i++)
			if (!strcmp(name, cache_name(i)))
				v[i] = active;
	}
	fclose(f);
	for (unsigned int i = 0; i <= FILP; i++)
		if (v[i] < 0)
			FAIL("no %s cache in /proc/slabinfo", cache_name(i));
}

/* "pollfs_signal 3 pollfs_timer 0 ... filp 812" */
static const char *caches_str(const long *v, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = 0;
	for (unsigned int i = 0; i <= FILP && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%s %ld",
					i ? " " : "", cache_name(i), v[i]);
	return buf;
}

/* Waits until the pollfs caches are back at base, and filp near it. */
static void expect_base(const char *after)
{
	int64_t end = pt_mono() + 8 * NSEC_PER_SEC;
	char now[512], was[512];
	long v[MAX_KINDS + 1];

	for (;;) {
		bool ok = true;

		read_caches(v);
		for (unsigned int i = 0; i < pt_nkinds; i++)
			ok &= v[i] == base[i];
		ok &= v[FILP] <= base[FILP] + FILP_SLACK;
		if (ok)
			break;
		if (pt_mono() > end)
			FAIL("after %s: %s; at the start %s", after,
			     caches_str(v, now, sizeof(now)),
			     caches_str(base, was, sizeof(was)));
		pt_sleep_ms(20);
	}
	pt_diag("after %s: back to %s (filp was %ld)", after,
		caches_str(v, now, sizeof(now)), base[FILP]);
}

static long sys_io_setup(unsigned int nr, aio_context_t *ctx)
{
	return syscall(SYS_io_setup, nr, ctx);
}

static long sys_io_destroy(aio_context_t ctx)
{
	return syscall(SYS_io_destroy, ctx);
}

static unsigned int turn;

/* n objects of each kind, left in their live states; fds[k * n + i]. */
static void make_all(int n, unsigned int flags, int *fds)
{
	int dev = pt_dev();

	pt_kinds_prepare();
	for (unsigned int k = 0; k < pt_nkinds; k++) {
		const struct pt_kind *kind = &pt_kinds[k];

		for (int i = 0; i < n; i++) {
			int fd = pt_kind_new(kind, dev,
					     (i % 3 == 0) ? flags : 0);

			if (kind->arm)
				kind->arm(fd, turn++);
			fds[k * n + i] = fd;
		}
	}
	CHECK_SYS(close(dev));
}

/*
 * Each pollfs cache holds exactly n more objects than at the start, once
 * the frees of what was closed are done.
 */
static void expect_more(int n, const char *what)
{
	int64_t end = pt_mono() + 8 * NSEC_PER_SEC;
	long v[MAX_KINDS + 1];
	unsigned int k;

	for (;;) {
		read_caches(v);
		for (k = 0; k < pt_nkinds; k++)
			if (v[k] - base[k] != n)
				break;
		if (k == pt_nkinds)
			return;
		if (pt_mono() > end)
			FAIL("%s: %s holds %ld objects, %ld at the start: "
			     "expected %d more", what, cache_name(k), v[k],
			     base[k], n);
		pt_sleep_ms(20);
	}
}

/* Every seventh object of each kind does its job once. */
static void use_all(int n, const int *fds)
{
	for (unsigned int k = 0; k < pt_nkinds; k++)
		for (int i = 0; i < n; i += 7)
			pt_kind_use(&pt_kinds[k], fds[(int)k * n + i]);
}

static void close_all(int count, const int *fds)
{
	for (int i = 0; i < count; i++)
		CHECK_SYS(close(fds[i]));
}

static aio_context_t setup_ctx(void)
{
	aio_context_t ctx = 0;

	CHECK_SYS(sys_io_setup(16, &ctx));
	return ctx;
}

static int fds[MAX_KINDS * N];

static void round_close(void)
{
	make_all(N, POLLFS_NONBLOCK, fds);
	expect_more(N, "with every object open");
	use_all(N, fds);
	close_all((int)pt_nkinds * N, fds);
	expect_base("close");
}

static int exit_child(void *arg)
{
	(void)arg;
	make_all(N, POLLFS_CLOEXEC, fds);
	expect_more(N, "in the child");
	use_all(N, fds);
	return PT_PASS;		/* exits with everything open */
}

static int fork_child(void *arg)
{
	int *mine = calloc(pt_nkinds * N / 2, sizeof(int));

	(void)arg;
	CHECK(mine);
	make_all(N / 2, 0, mine);
	expect_more(N, "inherited and made in the child");
	/* close half of what was inherited, keep the rest to the exit */
	for (int i = 0; i < (int)pt_nkinds * N / 2; i += 2)
		CHECK_SYS(close(fds[i]));
	return PT_PASS;
}

static void round_fork(void)
{
	make_all(N / 2, 0, fds);
	CHECK_EQ(pt_run_child(fork_child, NULL, 60000), PT_PASS);
	expect_more(N / 2, "after the child's exit");
	close_all((int)pt_nkinds * N / 2, fds);
	expect_base("fork and exit");
}

static int exec_child(void *arg)
{
	(void)arg;
	/* a third close-on-exec, the rest live on in the new program */
	make_all(N / 2, POLLFS_CLOEXEC, fds);
	use_all(N / 2, fds);
	execl("/bin/true", "true", (char *)NULL);
	FAIL("exec /bin/true: %s", strerror(errno));
}

static int aio_open(aio_context_t ctx, int i)
{
	struct pollfs_aio_open o = { ctx, (i % 2) ? POLLFS_NONBLOCK : 0, 0 };
	int dev = pt_dev(), fd;

	fd = CHECK_SYS(ioctl(dev, POLLFS_IOC_AIO, &o));
	CHECK_SYS(close(dev));
	return fd;
}

static void round_aio(void)
{
	aio_context_t ctx;
	int n = 200;

	/* destroyed under the objects, then closed */
	ctx = setup_ctx();
	for (int i = 0; i < n; i++)
		fds[i] = aio_open(ctx, i);
	CHECK_SYS(sys_io_destroy(ctx));
	close_all(n, fds);
	/* closed, then destroyed */
	ctx = setup_ctx();
	for (int i = 0; i < n; i++)
		fds[i] = aio_open(ctx, i);
	close_all(n, fds);
	CHECK_SYS(sys_io_destroy(ctx));
	/* half closed, half destroyed under them, in turns */
	for (int r = 0; r < 20; r++) {
		ctx = setup_ctx();
		for (int i = 0; i < 10; i++)
			fds[i] = aio_open(ctx, i);
		close_all(5, fds);
		CHECK_SYS(sys_io_destroy(ctx));
		close_all(5, fds + 5);
	}
	expect_base("io_destroy under AIO objects");
}

int main(void)
{
	struct rlimit rl = { pt_nkinds * N + 256, pt_nkinds * N + 256 };
	char start[512];

	pt_require_root();	/* /proc/slabinfo is root's */
	CHECK_SYS(setrlimit(RLIMIT_NOFILE, &rl));
	CHECK(pt_nkinds <= MAX_KINDS);
	read_caches(base);
	pt_diag("at the start: %s", caches_str(base, start, sizeof(start)));
	for (unsigned int k = 0; k < pt_nkinds; k++)
		if (base[k])
			pt_diag("%s objects already live: another user of "
				"pollfs?", pt_kinds[k].name);

	round_close();
	CHECK_EQ(pt_run_child(exit_child, NULL, 60000), PT_PASS);
	expect_base("exit");
	round_fork();
	CHECK_EQ(pt_run_child(exec_child, NULL, 60000), PT_PASS);
	expect_base("exec");
	round_aio();
	{
		/* the context ends with the process, under its objects */
		int status;
		pid_t pid = fork();

		CHECK_SYS(pid);
		if (pid == 0) {
			aio_context_t ctx = setup_ctx();

			for (int i = 0; i < 100; i++)
				aio_open(ctx, i);
			_exit(0);
		}
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		CHECK_EQ(status, 0);
	}
	expect_base("exit with a live context");
	return PT_PASS;
}
