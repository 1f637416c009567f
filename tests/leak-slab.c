// SPDX-License-Identifier: MIT
/*
 * No object leaks, however it ends: thousands of objects of every kind
 * (signal, timer, futex, AIO), used (armed, woken, read) and then ended
 * every way a file ends - closed, left to exit, inherited by a fork that
 * exits, carried through exec (with and without close-on-exec), and AIO
 * objects whose context is destroyed under them, before or after they
 * are closed, or by the exit.  After each way, pollfs's own slab caches
 * (the active objects of pollfs_signal, pollfs_timer, pollfs_futex and
 * pollfs_aio in /proc/slabinfo) come back exactly to where they started
 * (closing finishes through task work and delayed fput, and a timer is
 * freed a grace period later, as timerfd's context is: allowed a few
 * seconds), and the filp cache close to it (RCU frees it later; others
 * use it too).  While the objects live, each cache holds exactly as many
 * more objects as were made of its kind: the counts are the right ones.
 */
#include "lib/futex.h"
#include "lib/timer.h"

#include <linux/aio_abi.h>
#include <sys/resource.h>
#include <sys/wait.h>


enum { C_SIGNAL, C_TIMER, C_FUTEX, C_AIO, C_FILP, NCACHE };
static const char *const cache_name[NCACHE] = {
	"pollfs_signal", "pollfs_timer", "pollfs_futex", "pollfs_aio", "filp"
};
#define NKIND	4
#define FILP_SLACK	256	/* others open and close files too */

#define N	600	/* objects of each kind in a round */

static long base[NCACHE];
static uint32_t fwords[64];
static unsigned int turn;

static void read_caches(long *v)
{
	char line[512];
	FILE *f;

	for (int i = 0; i < NCACHE; i++)
		pt_slab_shrink(cache_name[i]);
	f = fopen("/proc/slabinfo", "re");
	if (!f)
		FAIL("/proc/slabinfo: %s", strerror(errno));
	for (int i = 0; i < NCACHE; i++)
		v[i] = -1;
	while (fgets(line, sizeof(line), f)) {
		char name[64];
		long active;

		if (sscanf(line, "%63s %ld", name, &active) != 2)
			continue;
		for (int i = 0; i < NCACHE; i++)
			if (!strcmp(name, cache_name[i]))
				v[i] = active;
	}
	fclose(f);
	for (int i = 0; i < NCACHE; i++)
		if (v[i] < 0)
			FAIL("no %s cache in /proc/slabinfo", cache_name[i]);
}

/* Waits until the pollfs caches are back at base, and filp near it. */
static void expect_base(const char *after)
{
	int64_t end = pt_mono() + 8 * NSEC_PER_SEC;
	long v[NCACHE];

	for (;;) {
		bool ok = true;

		read_caches(v);
		for (int i = 0; i < NKIND; i++)
			ok &= v[i] == base[i];
		ok &= v[C_FILP] <= base[C_FILP] + FILP_SLACK;
		if (ok)
			break;
		if (pt_mono() > end)
			FAIL("after %s: signal %ld timer %ld futex %ld aio %ld "
			     "filp %ld; at the start %ld %ld %ld %ld %ld", after,
			     v[0], v[1], v[2], v[3], v[4], base[0], base[1],
			     base[2], base[3], base[4]);
		pt_sleep_ms(20);
	}
	pt_diag("after %s: back to signal %ld timer %ld futex %ld aio %ld, "
		"filp %ld (was %ld)", after, v[0], v[1], v[2], v[3], v[4],
		base[C_FILP]);
}

static long sys_io_setup(unsigned int nr, aio_context_t *ctx)
{
	return syscall(SYS_io_setup, nr, ctx);
}

static long sys_io_destroy(aio_context_t ctx)
{
	return syscall(SYS_io_destroy, ctx);
}

/* Creates an object of kind k, used a little; its fd. */
static int make(int dev, int k, aio_context_t ctx, unsigned int flags)
{
	int fd;

	switch (k) {
	case C_SIGNAL: {
		struct pollfs_signal_open o = { 1ull << (SIGUSR1 - 1), flags, 0 };
		uint64_t mask = 1ull << (SIGUSR2 - 1);

		fd = CHECK_SYS(ioctl(dev, POLLFS_IOC_SIGNAL, &o));
		CHECK_EQ(write(fd, &mask, 8), 8);
		break;
	}
	case C_TIMER: {
		struct pollfs_open o = { flags, 0 };
		/* armed far away, or a periodic one that fired and is
		 * still running */
		fd = CHECK_SYS(ioctl(dev, POLLFS_IOC_TIMER, &o));
		switch (turn++ % 50) {
		case 0:		/* periodic, running */
			tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(1), MS(2));
			break;
		case 1: case 2: case 3:	/* fired, unread */
			tmr_arm(fd, CLOCK_MONOTONIC, 0, US(1), 0);
			break;
		default:	/* armed, far away */
			tmr_arm(fd, CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC, 0);
			break;
		}
		break;
	}
	case C_FUTEX: {
		struct pollfs_open o = { flags, 0 };
		struct pollfs_futex_event ev[3];
		int n = 1 + (int)(fwords[0] % 3);

		fd = CHECK_SYS(ioctl(dev, POLLFS_IOC_FUTEX, &o));
		for (int i = 0; i < n; i++)
			ev[i] = fx_ev(&fwords[1 + (fd + i) % 60],
				      fwords[1 + (fd + i) % 60], FX_PRIVATE);
		fx_armv(fd, ev, (size_t)n);
		fwords[0]++;
		break;
	}
	default: {
		struct pollfs_aio_open o = { ctx, flags, 0 };

		fd = CHECK_SYS(ioctl(dev, POLLFS_IOC_AIO, &o));
		break;
	}
	}
	return fd;
}

/* n objects of each kind; fds[k * n + i]. */
static void make_all(int n, aio_context_t ctx, unsigned int flags, int *fds)
{
	int dev = pt_dev();

	for (int k = 0; k < NKIND; k++)
		for (int i = 0; i < n; i++)
			fds[k * n + i] = make(dev, k, ctx, (i % 3 == 0) ?
					      flags : 0);
	CHECK_SYS(close(dev));
}

/*
 * Each pollfs cache holds exactly n more objects than at the start, once
 * the frees of what was closed are done.
 */
static void expect_more(int n, const char *what)
{
	int64_t end = pt_mono() + 8 * NSEC_PER_SEC;
	long v[NCACHE];
	int k;

	for (;;) {
		read_caches(v);
		for (k = 0; k < NKIND; k++)
			if (v[k] - base[k] != n)
				break;
		if (k == NKIND)
			return;
		if (pt_mono() > end)
			FAIL("%s: %s holds %ld objects, %ld at the start: "
			     "expected %d more", what, cache_name[k], v[k],
			     base[k], n);
		pt_sleep_ms(20);
	}
}

/* Wakes every futex word, reads a few records, fires some signals. */
static void use_all(int n, const int *fds)
{
	struct pollfs_futex_event ev[4];

	for (int i = 1; i < 64; i++) {
		fwords[i]++;
		fx_wake(&fwords[i], INT_MAX, FX_PRIVATE);
	}
	for (int i = 0; i < n; i += 7)
		if (fx_read_nb(fds[C_FUTEX * n + i], ev, sizeof(ev)) < 0 &&
		    errno != EAGAIN && errno != EINVAL)
			FAIL("read futex: %s", strerror(errno));
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

static int fds[NKIND * N];

static void round_close(void)
{
	aio_context_t ctx = setup_ctx();

	make_all(N, ctx, POLLFS_NONBLOCK, fds);
	expect_more(N, "with every object open");
	use_all(N, fds);
	close_all(NKIND * N, fds);
	CHECK_SYS(sys_io_destroy(ctx));
	expect_base("close");
}

static int exit_child(void *arg)
{
	aio_context_t ctx = setup_ctx();

	(void)arg;
	make_all(N, ctx, POLLFS_CLOEXEC, fds);
	expect_more(N, "in the child");
	use_all(N, fds);
	return PT_PASS;		/* exits with everything open */
}

static int fork_child(void *arg)
{
	int *mine = calloc(NKIND * N / 2, sizeof(int));
	aio_context_t ctx = setup_ctx();

	(void)arg;
	CHECK(mine);
	make_all(N / 2, ctx, 0, mine);
	expect_more(N, "inherited and made in the child");
	/* close half of what was inherited, keep the rest to the exit */
	for (int i = 0; i < NKIND * N / 2; i += 2)
		CHECK_SYS(close(fds[i]));
	return PT_PASS;
}

static void round_fork(void)
{
	aio_context_t ctx = setup_ctx();

	make_all(N / 2, ctx, 0, fds);
	CHECK_EQ(pt_run_child(fork_child, NULL, 60000), PT_PASS);
	expect_more(N / 2, "after the child's exit");
	close_all(NKIND * N / 2, fds);
	CHECK_SYS(sys_io_destroy(ctx));
	expect_base("fork and exit");
}

static int exec_child(void *arg)
{
	aio_context_t ctx = setup_ctx();

	(void)arg;
	/* a third close-on-exec, the rest live on in the new program */
	make_all(N / 2, ctx, POLLFS_CLOEXEC, fds);
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
	struct rlimit rl = { NKIND * N + 256, NKIND * N + 256 };

	pt_watchdog(55);
	pt_require_root();	/* /proc/slabinfo is root's */
	CHECK_SYS(setrlimit(RLIMIT_NOFILE, &rl));
	for (int i = 0; i < 64; i++)
		fwords[i] = (uint32_t)i;
	read_caches(base);
	pt_diag("at the start: signal %ld timer %ld futex %ld aio %ld filp %ld",
		base[0], base[1], base[2], base[3], base[4]);
	if (base[0] || base[1] || base[2] || base[3])
		pt_diag("objects already live: another user of pollfs?");

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
