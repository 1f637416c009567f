// SPDX-License-Identifier: MIT
/*
 * module-leak-cycles [-n CYCLES] [-T SECONDS]: the module unloaded and
 * loaded again many times, with one object of each kind created and
 * used in every cycle, leaves nothing behind.
 *
 * Each cycle: delete_module(2) (it must succeed: nothing is open),
 * finit_module(2) of $POLLFS_KO, then a signal object (a signal read
 * through it), a timer (armed, fired, read), a futex object (armed,
 * woken by FUTEX_WAKE, read) and an AIO object (its context completes a
 * write, the object reads it), all closed.  The system calls are made
 * directly: insmod and rmmod cost a process each, far more than the
 * cycle itself under TCG.  Every 100 cycles, unloading while an object
 * of each kind is open must fail (EWOULDBLOCK, "in use"), and the
 * objects must go on working.
 *
 * After a warm-up of 10 cycles, the kernel's unreclaimable slab, vmalloc
 * and per-CPU memory (/proc/meminfo) are taken, every slab cache shrunk
 * first (which also empties KASAN's quarantine); at the end none may have
 * grown by more than noise (1 MB each; a leak of even one page a cycle
 * is 4 MB over 1,000).  MemAvailable is reported.  The module is loaded
 * at the end, and again on any failure.
 *
 * A cycle takes about 0.35 s under TCG (the kprobe's registration and
 * removal wait for RCU), so 1,000 take nearly 6 minutes: by default it
 * makes 120 (-n), which fit the runner's 60 s limit, and prints the
 * count; `module-leak-cycles -n 1000 -T 600` makes the full thousand.
 * When -T seconds (default 50, times POLLFS_TIME_SCALE) run out first it
 * stops there, says how many it made, and passes if they were at least
 * 60.
 */
#include "lib/futex.h"
#include "lib/timer.h"

#include <linux/aio_abi.h>
#include <stdio.h>
#include <sys/stat.h>

static const char *ko;
static int kofd = -1;

static long sys_finit(int fd)
{
	return syscall(SYS_finit_module, fd, "", 0);
}

static long sys_delete(unsigned int flags)
{
	return syscall(SYS_delete_module, "pollfs", flags);
}

static void reload(void)
{
	if (!pt_module_loaded() && (kofd < 0 || sys_finit(kofd)))
		pt_diag("loading %s again failed: %s", ko, strerror(errno));
}

struct meminfo {
	long avail, sunreclaim, vmalloc, percpu;	/* kB */
};

static void read_meminfo(struct meminfo *m)
{
	char line[256];
	FILE *f;

	pt_slab_shrink_all();
	f = fopen("/proc/meminfo", "re");

	if (!f)
		FAIL("/proc/meminfo: %s", strerror(errno));
	memset(m, 0, sizeof(*m));
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "MemAvailable: %ld", &m->avail);
		sscanf(line, "SUnreclaim: %ld", &m->sunreclaim);
		sscanf(line, "VmallocUsed: %ld", &m->vmalloc);
		sscanf(line, "Percpu: %ld", &m->percpu);
	}
	fclose(f);
}

/* One object of each kind, in fds[0..3]. */
static void open_objects(int *fds, aio_context_t ctx)
{
	struct pollfs_signal_open so = { 1ull << (SIGUSR1 - 1), POLLFS_NONBLOCK, 0 };
	struct pollfs_open o = { POLLFS_NONBLOCK, 0 };
	struct pollfs_aio_open ao = { ctx, POLLFS_NONBLOCK, 0 };
	int dev = -1;

	for (int64_t end = pt_mono() + 5 * NSEC_PER_SEC; dev < 0;) {
		dev = open("/dev/pollfs", O_RDWR | O_CLOEXEC);
		if (dev < 0 && (errno != ENOENT || pt_mono() > end))
			FAIL("open /dev/pollfs: %s", strerror(errno));
		if (dev < 0)
			pt_sleep_ms(1);
	}
	fds[0] = CHECK_SYS(ioctl(dev, POLLFS_IOC_SIGNAL, &so));
	fds[1] = CHECK_SYS(ioctl(dev, POLLFS_IOC_TIMER, &o));
	fds[2] = CHECK_SYS(ioctl(dev, POLLFS_IOC_FUTEX, &o));
	fds[3] = CHECK_SYS(ioctl(dev, POLLFS_IOC_AIO, &ao));
	CHECK_SYS(close(dev));
}

static void arm_objects(const int *fds, uint32_t *word)
{
	fx_arm(fds[2], word, *word, FX_PRIVATE);
	tmr_arm(fds[1], CLOCK_MONOTONIC, 0, US(50), 0);
}

/* Each object does its job once. */
static void use_objects(const int *fds, uint32_t *word, aio_context_t ctx,
			int file)
{
	struct pollfs_siginfo si;
	struct pollfs_aio_event ae;
	struct iocb cb, *cbs[1] = { &cb };
	struct io_event ev;
	static char data[64];

	/* signal: a pending, blocked SIGUSR1 is read through it */
	CHECK_SYS(kill(getpid(), SIGUSR1));
	pt_wait_readable(fds[0], PT_WAIT_MS);
	CHECK_EQ(read(fds[0], &si, sizeof(si)), (long)sizeof(si));
	CHECK_EQ(si.psi_signo, SIGUSR1);

	/* timer: fired */
	pt_wait_readable(fds[1], PT_WAIT_MS);
	{
		struct pollfs_timer_event te;

		tmr_read_event(fds[1], &te);
		tmr_check_oneshot(&te);
	}

	/* futex: woken */
	CHECK_EQ(fx_wake(word, 1, FX_PRIVATE), 1);
	fx_expect_rec(fds[2], word, *word, FX_PRIVATE);

	/* aio: a completed write is seen, then reaped */
	memset(&cb, 0, sizeof(cb));
	cb.aio_lio_opcode = IOCB_CMD_PWRITE;
	cb.aio_fildes = (uint32_t)file;
	cb.aio_buf = (uintptr_t)data;
	cb.aio_nbytes = sizeof(data);
	CHECK_EQ(syscall(SYS_io_submit, ctx, 1, cbs), 1);
	pt_wait_readable(fds[3], PT_WAIT_MS);
	CHECK_EQ(read(fds[3], &ae, sizeof(ae)), (long)sizeof(ae));
	CHECK_EQ(ae.ctx, ctx);
	CHECK_EQ(ae.available, 1);
	CHECK_EQ(syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL), 1);
}

static void close_objects(const int *fds)
{
	for (int i = 0; i < 4; i++)
		CHECK_SYS(close(fds[i]));
}

int main(int argc, char **argv)
{
	long target = 120, budget = 50, done = 0, busy_checks = 0;
	struct meminfo m0, m1;
	aio_context_t ctx = 0;
	sigset_t set;
	uint32_t word = 7;
	int64_t t0, t1 = 0, end;
	int opt, file;
	char path[] = "/tmp/pollfs-cycles-XXXXXX";

	while ((opt = getopt(argc, argv, "n:T:")) != -1) {
		switch (opt) {
		case 'n':
			target = strtol(optarg, NULL, 10);
			break;
		case 'T':
			budget = strtol(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: %s [-n CYCLES] [-T SECONDS]\n",
				argv[0]);
			return 2;
		}
	}
	/* pt_watchdog() scales the watchdog; the budget scales here */
	budget *= pt_time_scale();
	pt_watchdog((unsigned int)budget + 8);
	pt_require_root();
	ko = getenv("POLLFS_KO");
	if (!ko || !*ko)
		pt_skip("POLLFS_KO is not set: cannot reload the module");
	kofd = open(ko, O_RDONLY | O_CLOEXEC);
	if (kofd < 0)
		pt_skip("POLLFS_KO=%s: %s", ko, strerror(errno));
	if (!pt_module_loaded())
		FAIL("the pollfs module is not loaded");
	pt_on_fail(reload);

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	CHECK_SYS(sigprocmask(SIG_BLOCK, &set, NULL));
	CHECK_SYS(syscall(SYS_io_setup, 8, &ctx));
	file = CHECK_SYS(mkostemp(path, O_CLOEXEC));
	unlink(path);

	t0 = pt_mono();
	end = t0 + budget * NSEC_PER_SEC;
	while (done < target && pt_mono() < end) {
		int fds[4];

		if (sys_delete(O_NONBLOCK))
			FAIL("cycle %ld: delete_module: %s", done,
			     strerror(errno));
		if (pt_module_loaded())
			FAIL("cycle %ld: still loaded after delete_module",
			     done);
		if (sys_finit(kofd))
			FAIL("cycle %ld: finit_module(%s): %s", done, ko,
			     strerror(errno));
		open_objects(fds, ctx);
		arm_objects(fds, &word);
		use_objects(fds, &word, ctx, file);
		if (done % 100 == 50) {
			/* in use: unloading fails, the objects go on */
			arm_objects(fds, &word);
			CHECK_ERR(sys_delete(O_NONBLOCK), EWOULDBLOCK);
			CHECK(pt_module_loaded());
			use_objects(fds, &word, ctx, file);
			busy_checks++;
		}
		close_objects(fds);
		done++;
		if (done == 10) {
			read_meminfo(&m0);
			t1 = pt_mono();
		}
	}
	read_meminfo(&m1);
	CHECK(pt_module_loaded());
	pt_diag("%ld load/use/unload cycles in %.1f s (%ld of them also "
		"refused while in use)%s", done,
		(double)(pt_mono() - t0) / NSEC_PER_SEC, busy_checks,
		done < target ? ": the time ran out first" : "");
	if (done < (target < 60 ? target : 60))
		FAIL("only %ld cycles in %ld s", done, budget);
	pt_diag("over the last %ld cycles (%.1f s): SUnreclaim %+ld kB, "
		"VmallocUsed %+ld kB, Percpu %+ld kB, MemAvailable %+ld kB",
		done - 10, (double)(pt_mono() - t1) / NSEC_PER_SEC,
		m1.sunreclaim - m0.sunreclaim, m1.vmalloc - m0.vmalloc,
		m1.percpu - m0.percpu, m1.avail - m0.avail);
	if (m1.sunreclaim - m0.sunreclaim > 1024 ||
	    m1.vmalloc - m0.vmalloc > 1024 || m1.percpu - m0.percpu > 1024)
		FAIL("kernel memory grew over %ld cycles: a leak", done - 10);
	CHECK_SYS(syscall(SYS_io_destroy, ctx));
	return PT_PASS;
}
