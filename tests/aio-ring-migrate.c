// SPDX-License-Identifier: MIT
/*
 * An AIO object never reads a completion ring page that page migration
 * has freed (issue "Hardening 3", finding 1).
 *
 * The object counts a context's unreaped completions from the head that
 * user space writes in ring page 0.  The kernel may move that page to
 * another NUMA node at any time (aio_migrate_folio(): the copy and the
 * swap of ctx->ring_pages[0] under ctx->completion_lock, then the old
 * page's reference dropped, after which migration frees it), and any
 * user may ask it to with move_pages(2) on its own pages.  A reader that
 * loads the page pointer before it takes completion_lock can be
 * preempted between the load and the lock, the page migrated and freed
 * meanwhile, and then read the freed page: a use after free, under
 * which the object reports completions no one submitted.
 *
 * The attack, all of it by uid/gid 65534 on its own context, with
 * nothing ever submitted, for each CPU (each pinned there):
 *  - a reader, SCHED_IDLE, looping non-blocking read(2) of an AIO object
 *    of a context of its own: every read must fail with EAGAIN (poll(2)
 *    takes the same path, pollfs_aio_available());
 *  - a migrator of normal priority, moving that context's ring page 0
 *    (the page at the address io_setup returned) to the other node with
 *    one move_pages(2), then sleeping a few microseconds.  Its timer
 *    wakes it in an interrupt that lands anywhere in the reader, and a
 *    woken normal task preempts an idle one at once on a fully
 *    preemptible kernel (preempt=full): the reader sits preempted where
 *    the interrupt found it while a whole migration, the free of the old
 *    page included, runs; one move per wake-up, so that the freed page
 *    is not yet the next move's new page when the reader resumes.
 * On 6.1 under TCG, preempt=full, a module with that bug failed 10 runs
 * of 10, each within 7 s: the attack runs RUN_S.  With voluntary
 * preemption (6.1's default boot) the reader is not preempted inside the
 * kernel and the race is left to chance: the same module passed two runs
 * of 60 s (17 million reads and 11,000 moves each).  Where the kernel
 * says it is booted without preemption or voluntary
 * (/sys/kernel/debug/sched/preempt, read as root), the attack runs
 * RUN_VOLUNTARY_S only.
 *
 * A stale read shows only where the freed page's bytes have changed:
 * boot with page_poison=1 (the free fills the page with 0xaa: a read of
 * {available 117} with a 127-entry ring).  It needs two NUMA nodes with
 * memory: numa=fake=2 on a one-node machine (skipped otherwise).  So:
 * POLLFS_VM_APPEND="preempt=full numa=fake=2 page_poison=1" make check
 * TESTS=aio-ring-migrate (or make check-aio-numa).  An argument, in
 * seconds, runs the attack that long instead (the test stops at the
 * first stale read in any case).
 */
#include "lib/aio.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE	(1 << 1)
#endif

PT_BUDGET(90);

/* How long the attack runs at most: fully preemptible, or not. */
#define RUN_S		30
#define RUN_VOLUNTARY_S	10
/* The migrator's sleep between two moves. */
#define NAP_NS		2000
#define MAX_CPUS	8

struct pair {
	aio_context_t ctx;
	int fd;
	int cpu;
	int node;		/* where its ring page 0 is now */
	pthread_t reader, migrator;
	atomic_ulong reads;
	atomic_ulong moves;	/* moves that changed the page's node */
	atomic_ulong move_errs;
	atomic_int last_err;
	atomic_ulong stale;	/* reads that returned a record */
	atomic_ullong first_avail;
	atomic_ulong bad;	/* reads that failed otherwise */
	atomic_int bad_errno;
};

static struct pair pairs[MAX_CPUS];
static atomic_int stop;
static int64_t t_start;
static atomic_llong first_stale_ns;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		FAIL("sched_setaffinity(CPU %d): %s", cpu, strerror(errno));
}

static void *reader(void *arg)
{
	struct pair *p = arg;
	struct sched_param sp = { 0 };
	struct pollfs_aio_event ev;
	unsigned long n = 0;
	ssize_t r;

	pin(p->cpu);
	if (sched_setscheduler(0, SCHED_IDLE, &sp))
		FAIL("sched_setscheduler(SCHED_IDLE): %s", strerror(errno));
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		r = read(p->fd, &ev, sizeof(ev));
		n++;
		if (r == -1 && errno == EAGAIN)
			continue;
		if (r == AX_EVENT_SIZE) {
			unsigned long long zero = 0;

			atomic_compare_exchange_strong(&p->first_avail, &zero,
						       ev.available);
			if (!atomic_fetch_add(&p->stale, 1)) {
				long long none = 0;

				atomic_compare_exchange_strong(&first_stale_ns,
					&none, pt_mono() - t_start);
			}
			continue;
		}
		atomic_store(&p->bad_errno, r < 0 ? errno : 0);
		atomic_fetch_add(&p->bad, 1);
	}
	atomic_store(&p->reads, n);
	return NULL;
}

static void *migrator(void *arg)
{
	struct pair *p = arg;
	struct timespec nap = { 0, NAP_NS };
	void *page = (void *)(uintptr_t)p->ctx;
	int node, status;

	pin(p->cpu);
	/* a nap of NAP_NS, not of the default 50 us slack */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		/*
		 * A touch from user space first: NUMA balancing makes the
		 * page's entry PROT_NONE now and then, and move_pages() then
		 * finds no page there (ENOENT) until a fault puts it back.
		 */
		(void)*(volatile unsigned int *)page;
		node = !p->node;
		status = -1;
		if (syscall(SYS_move_pages, 0, 1UL, &page, &node, &status,
			    MPOL_MF_MOVE) == 0 && status == node) {
			p->node = node;
			atomic_fetch_add(&p->moves, 1);
		} else {
			atomic_store(&p->last_err, status < 0 ? -status : errno);
			atomic_fetch_add(&p->move_errs, 1);
			/* the page's node as the kernel sees it */
			if (syscall(SYS_move_pages, 0, 1UL, &page, NULL,
				    &status, 0) == 0 && status >= 0)
				p->node = status;
		}
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/* True if node list file @path (e.g. "0-1") names nodes 0 and 1. */
static bool nodes_0_and_1(const char *path)
{
	char buf[256], *s, *tok, *save = NULL;
	bool have0 = false, have1 = false;
	long a, b;

	if (pt_read_file(path, buf, sizeof(buf)) < 0)
		return false;
	for (s = buf; (tok = strtok_r(s, ",\n", &save)); s = NULL) {
		if (sscanf(tok, "%ld-%ld", &a, &b) != 2) {
			if (sscanf(tok, "%ld", &a) != 1)
				continue;
			b = a;
		}
		have0 |= a <= 0 && 0 <= b;
		have1 |= a <= 1 && 1 <= b;
	}
	return have0 && have1;
}

int main(int argc, char **argv)
{
	char cmdline[1024] = "";
	int run_s = argc > 1 ? atoi(argv[1]) : 0;
	char preempt[128];
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long reads = 0, moves = 0, errs = 0, stale = 0, bad = 0;
	int e;

	if (!nodes_0_and_1("/sys/devices/system/node/has_memory"))
		pt_skip("needs NUMA nodes 0 and 1 with memory (boot with "
			"numa=fake=2): the ring page has nowhere to move");
	if (run_s <= 0) {
		run_s = RUN_S;
		/* "none (voluntary) full": the mode in brackets */
		if (pt_read_file("/sys/kernel/debug/sched/preempt", preempt,
				 sizeof(preempt)) > 0 &&
		    (strstr(preempt, "(none)") ||
		     strstr(preempt, "(voluntary)")))
			run_s = RUN_VOLUNTARY_S;
	}
	if (argc > 1)
		pt_watchdog((unsigned int)run_s + 60);
	pt_read_file("/proc/cmdline", cmdline, sizeof(cmdline));
	if (!strstr(cmdline, "page_poison=1"))
		pt_diag("no page_poison=1 on the kernel command line: a read "
			"of a freed ring page shows only if it was reused");
	if (run_s == RUN_VOLUNTARY_S && argc < 2)
		pt_diag("not fully preemptible: a reader is not preempted "
			"inside the kernel, and the race is left to chance "
			"(%d s of it)", run_s);
	if (ncpu < 1)
		ncpu = 1;
	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;

	pt_become_nobody();
	for (int i = 0; i < ncpu; i++) {
		struct pair *p = &pairs[i];
		void *page;
		int status = -1;

		p->cpu = i;
		p->ctx = ax_setup(1);
		p->fd = ax_fd(p->ctx, POLLFS_NONBLOCK);
		ax_expect_empty(p->fd);
		page = (void *)(uintptr_t)p->ctx;
		CHECK_SYS(syscall(SYS_move_pages, 0, 1UL, &page, NULL,
				  &status, 0));
		if (status < 0)
			FAIL("ring page of context %#llx: status %d",
			     (unsigned long long)p->ctx, status);
		p->node = status;
	}

	t_start = pt_mono();
	for (int i = 0; i < ncpu; i++) {
		e = pthread_create(&pairs[i].reader, NULL, reader, &pairs[i]);
		if (!e)
			e = pthread_create(&pairs[i].migrator, NULL, migrator,
					   &pairs[i]);
		if (e)
			FAIL("pthread_create: %s", strerror(e));
	}
	while (pt_mono() - t_start < (int64_t)run_s * NSEC_PER_SEC &&
	       !atomic_load(&first_stale_ns))
		pt_sleep_ms(50);
	atomic_store(&stop, 1);
	for (int i = 0; i < ncpu; i++) {
		pthread_join(pairs[i].reader, NULL);
		pthread_join(pairs[i].migrator, NULL);
	}

	for (int i = 0; i < ncpu; i++) {
		struct pair *p = &pairs[i];

		pt_diag("CPU %d: context %#llx: %lu reads, %lu moves (%lu "
			"failed, last errno %d), %lu stale reads (first "
			"{available %llu}), %lu failed reads (errno %d)",
			p->cpu, (unsigned long long)p->ctx,
			atomic_load(&p->reads), atomic_load(&p->moves),
			atomic_load(&p->move_errs), atomic_load(&p->last_err),
			atomic_load(&p->stale), atomic_load(&p->first_avail),
			atomic_load(&p->bad), atomic_load(&p->bad_errno));
		reads += atomic_load(&p->reads);
		moves += atomic_load(&p->moves);
		errs += atomic_load(&p->move_errs);
		stale += atomic_load(&p->stale);
		bad += atomic_load(&p->bad);
	}
	pt_diag("%.1f s: %lu reads, %lu moves, %lu stale reads",
		(double)(pt_mono() - t_start) / NSEC_PER_SEC, reads, moves,
		stale);
	if (stale)
		FAIL("%lu reads of a context with nothing submitted returned "
		     "a record (the first after %.3f s): the object read a "
		     "ring page that migration had freed", stale,
		     (double)atomic_load(&first_stale_ns) / NSEC_PER_SEC);
	if (bad)
		FAIL("%lu reads failed with another error than EAGAIN", bad);
	if (moves < 100)
		FAIL("only %lu moves of a ring page succeeded (%lu failed): "
		     "the attack did not run", moves, errs);
	for (int i = 0; i < ncpu; i++) {
		ax_expect_empty(pairs[i].fd);
		CHECK_SYS(close(pairs[i].fd));
		ax_destroy(pairs[i].ctx);
	}
	return PT_PASS;
}
