// SPDX-License-Identifier: MIT
/*
 * module-leak-cycles [-n CYCLES] [-T SECONDS]: the module unloaded and
 * loaded again many times, with one object of each kind created and
 * used in every cycle, leaves nothing behind.
 *
 * Each cycle: delete_module(2) (it must succeed: nothing is open),
 * finit_module(2) of $POLLFS_KO, then one object of each kind of
 * tests/lib/kinds.c, each made readable and read once (a signal object
 * reads a signal, a timer fires, a futex object is woken by FUTEX_WAKE,
 * an AIO object's context completes a write), all closed.  The system calls are made
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
 * makes 120 (-n), which fit its budget of 58 s, and prints the count;
 * `module-leak-cycles -n 1000 -T 600` makes the full thousand.
 * When -T seconds (default 50, times POLLFS_TIME_SCALE) run out first it
 * stops there, says how many it made, and passes if they were at least
 * 60.
 */
#include "lib/kinds.h"

#include <stdio.h>
#include <sys/syscall.h>
#include <sys/stat.h>

PT_BUDGET(58);

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

/* One object of each kind, in fds[]. */
static void open_objects(int *fds)
{
	int dev = -1;

	for (int64_t end = pt_mono() + 5 * NSEC_PER_SEC; dev < 0;) {
		dev = open("/dev/pollfs", O_RDWR | O_CLOEXEC);
		if (dev < 0 && (errno != ENOENT || pt_mono() > end))
			FAIL("open /dev/pollfs: %s", strerror(errno));
		if (dev < 0)
			pt_sleep_ms(1);
	}
	for (unsigned int k = 0; k < pt_nkinds; k++)
		fds[k] = pt_kind_new(&pt_kinds[k], dev, POLLFS_NONBLOCK);
	CHECK_SYS(close(dev));
}

/* Each object does its job once. */
static void use_objects(const int *fds)
{
	for (unsigned int k = 0; k < pt_nkinds; k++)
		pt_kind_use(&pt_kinds[k], fds[k]);
}

static void close_objects(const int *fds)
{
	for (unsigned int k = 0; k < pt_nkinds; k++)
		CHECK_SYS(close(fds[k]));
}

int main(int argc, char **argv)
{
	long target = 120, budget = 50, done = 0, busy_checks = 0;
	struct meminfo m0, m1;
	int64_t t0, t1 = 0, end;
	int opt;

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
	/* -T longer than the default 50: a watchdog beyond PT_BUDGET's */
	if (budget > 50)
		pt_watchdog((unsigned int)budget + 8);
	budget *= pt_time_scale();
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

	pt_kinds_prepare();

	t0 = pt_mono();
	end = t0 + budget * NSEC_PER_SEC;
	while (done < target && pt_mono() < end) {
		int fds[pt_nkinds];

		if (sys_delete(O_NONBLOCK))
			FAIL("cycle %ld: delete_module: %s", done,
			     strerror(errno));
		if (pt_module_loaded())
			FAIL("cycle %ld: still loaded after delete_module",
			     done);
		if (sys_finit(kofd))
			FAIL("cycle %ld: finit_module(%s): %s", done, ko,
			     strerror(errno));
		open_objects(fds);
		use_objects(fds);
		if (done % 100 == 50) {
			/* in use, armed: unloading fails, the objects go on */
			for (unsigned int k = 0; k < pt_nkinds; k++)
				if (pt_kinds[k].arm)
					pt_kinds[k].arm(fds[k], (unsigned int)done);
			CHECK_ERR(sys_delete(O_NONBLOCK), EWOULDBLOCK);
			CHECK(pt_module_loaded());
			use_objects(fds);
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
	return PT_PASS;
}
