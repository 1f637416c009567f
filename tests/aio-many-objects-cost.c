// SPDX-License-Identifier: MIT
/*
 * What one AIO completion costs does not grow with the number of AIO
 * objects on its context (issue "Hardening 3", finding 2).
 *
 * Any user may create as many AIO objects on one of its contexts as it
 * may open files.  If every completion walks all of them, with
 * interrupts off under the context's wait queue lock, and queues an
 * irq_work for each (what the module did: one entry per object on the
 * kioctx's wait queue), then one io_submit() of a 1-byte write costs
 * time in proportion to the objects, interrupts off on that CPU all the
 * while: an unprivileged user turns its own AIO into a stall of the
 * machine.  A context should carry one entry of the module's whatever
 * the number of objects, its objects' pollers woken through one shared
 * wait queue, like an eventfd's.
 *
 * As uid/gid 65534 (root only raises RLIMIT_NOFILE for it), on one
 * context, with N = 1, 1,000 and 100,000 AIO objects on it: the time of
 * an io_submit() of one IOCB_CMD_PWRITE of 1 byte to /dev/null (which
 * completes inside io_submit) and the io_getevents() that reaps it, its
 * mean and worst over up to SUBMITS submits (fewer where MEASURE_MS runs
 * out first), with the median, printed as diagnostics.
 *  - no_epoll: nothing polls the objects.  Fails if the median at
 *    100,000 objects is more than FACTOR times the median at one object
 *    (or more than SLACK_US over it, whichever bound is higher: a few
 *    microseconds of noise on a 30 us submit are not growth).  The
 *    median, not the mean: under TCG a submit now and then takes
 *    milliseconds (the emulator's host took the vCPU away), and a few of
 *    those would move a mean of 300.  A module whose every object is an
 *    entry on the kioctx's wait queue took 117 ms (mean) at 100,000
 *    under TCG, against 35 us at one: the module's walk of that queue,
 *    and aio_complete()'s own, which visits every entry too (a
 *    wake_up() before 6.7, a look for the waiters whose min_nr the ring
 *    has reached since).
 *  - in_epoll: every object in one epoll set (EPOLLIN), nobody in
 *    epoll_wait.  Only printed, and checked to complete: each object
 *    now has a poller to wake, and that costs what it costs for as many
 *    epoll registrations of one eventfd (each completion wakes them
 *    all), so it grows with N by design.
 */
#include "lib/aio.h"

#include <sys/epoll.h>
#include <sys/resource.h>

PT_BUDGET(240);

#define MAX_OBJECTS	100000
/* Descriptors beyond the objects: stdio, the device, the file, epoll. */
#define SPARE_FDS	64
#define SUBMITS		300
/* At most this long measuring one N (at least MIN_SUBMITS submits). */
#define MEASURE_MS	20000
#define MIN_SUBMITS	20
#define FACTOR		3
#define SLACK_US	50

static const int counts[] = { 1, 1000, MAX_OBJECTS };
#define NCOUNTS	((int)(sizeof(counts) / sizeof(counts[0])))

struct cost {
	int submits;
	double mean_us, median_us, worst_us;
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Adds AIO objects on @ctx until there are @target, each in @ep if >= 0. */
static void grow(int dev, aio_context_t ctx, int ep, int *have, int target)
{
	struct pollfs_aio_open op;
	struct epoll_event e = { .events = EPOLLIN };
	int64_t t0 = pt_mono();
	int fd, start = *have;

	memset(&op, 0, sizeof(op));
	op.ctx = ctx;
	op.flags = POLLFS_CLOEXEC;
	while (*have < target) {
		fd = ioctl(dev, POLLFS_IOC_AIO, &op);
		if (fd < 0)
			FAIL("AIO object %d of %d on one context: errno %d (%s)",
			     *have + 1, target, errno, strerror(errno));
		if (ep >= 0) {
			e.data.fd = fd;
			if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e))
				FAIL("epoll_ctl(ADD) of object %d: errno %d "
				     "(%s)", *have + 1, errno, strerror(errno));
		}
		(*have)++;
	}
	if (target - start > 1000)
		pt_diag("%d objects made in %.1f s", target - start,
			(double)(pt_mono() - t0) / NSEC_PER_SEC);
}

/* Submit-and-reap of a 1-byte write to @null, SUBMITS times. */
static struct cost measure(aio_context_t ctx, int null)
{
	static const char byte = 'x';
	static int64_t samples[SUBMITS];
	struct cost c = { 0, 0, 0, 0 };
	struct io_event ev;
	struct iocb cb, *cbs[1] = { &cb };
	int64_t start = pt_mono(), t0, dt, sum = 0, worst = 0;
	long r;

	/* one unmeasured, to warm up */
	for (int i = -1; i < SUBMITS; i++) {
		ax_prep_pwrite(&cb, null, &byte, 1, 0, (uint64_t)i);
		t0 = pt_mono();
		r = ax_sys_submit(ctx, 1, cbs);
		if (r != 1)
			FAIL("io_submit: returned %ld, errno %d (%s)", r, errno,
			     strerror(errno));
		ax_reap(ctx, 1, 1, &ev, PT_WAIT_MS);
		dt = pt_mono() - t0;
		ax_check_event(&ev, (uint64_t)i, 1);
		if (i < 0)
			continue;
		sum += dt;
		if (dt > worst)
			worst = dt;
		samples[c.submits++] = dt;
		if (c.submits >= MIN_SUBMITS &&
		    pt_mono() - start > MS(MEASURE_MS))
			break;
	}
	c.mean_us = (double)sum / c.submits / 1000.0;
	c.worst_us = (double)worst / 1000.0;
	qsort(samples, (size_t)c.submits, sizeof(samples[0]), cmp_i64);
	c.median_us = (double)samples[c.submits / 2] / 1000.0;
	return c;
}

/* The costs at each N of counts[], objects in an epoll set or not. */
static void run(bool with_epoll, struct cost *costs)
{
	aio_context_t ctx;
	int dev, null, ep = -1, have = 0;

	pt_become_nobody();
	dev = pt_dev();
	null = CHECK_SYS(open("/dev/null", O_WRONLY | O_CLOEXEC));
	if (with_epoll)
		ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	ctx = ax_setup(8);
	for (int i = 0; i < NCOUNTS; i++) {
		grow(dev, ctx, ep, &have, counts[i]);
		costs[i] = measure(ctx, null);
		pt_diag("%s: %6d AIO objects on the context: io_submit + "
			"io_getevents of a 1-byte write: mean %.1f us, median "
			"%.1f us, worst %.1f us (%d submits)", with_epoll ?
			"in epoll" : "no epoll", counts[i], costs[i].mean_us,
			costs[i].median_us, costs[i].worst_us,
			costs[i].submits);
	}
	/* the objects go with the process: exit closes them */
}

TEST(no_epoll)
{
	struct cost costs[NCOUNTS];
	double bound;

	run(false, costs);
	bound = costs[0].median_us * FACTOR;
	if (bound < costs[0].median_us + SLACK_US)
		bound = costs[0].median_us + SLACK_US;
	if (costs[NCOUNTS - 1].median_us > bound)
		FAIL("a completion on a context with %d AIO objects costs "
		     "%.1f us (median; mean %.1f us), against %.1f us with "
		     "one object: more than %.1f us (%dx, or +%d us): every "
		     "completion walks every object", counts[NCOUNTS - 1],
		     costs[NCOUNTS - 1].median_us, costs[NCOUNTS - 1].mean_us,
		     costs[0].median_us, bound, FACTOR, SLACK_US);
}

/*
 * Each object's epoll entry is a poller that a completion wakes, as
 * an eventfd with as many epoll registrations would: this cost grows
 * with N whatever the module does, so it is only printed.
 */
TEST(in_epoll)
{
	struct cost costs[NCOUNTS];

	run(true, costs);
}

int main(void)
{
	rlim_t want = MAX_OBJECTS + SPARE_FDS;
	struct rlimit rl;

	CHECK_SYS(getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur < want) {
		if (rl.rlim_max < want && geteuid() != 0)
			pt_skip("needs RLIMIT_NOFILE >= %llu (or root to raise "
				"it): %llu", (unsigned long long)want,
				(unsigned long long)rl.rlim_max);
		rl.rlim_cur = want;
		if (rl.rlim_max < want)
			rl.rlim_max = want;
		CHECK_SYS(setrlimit(RLIMIT_NOFILE, &rl));
	}
	return pt_run_tests();
}
