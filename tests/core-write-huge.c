// SPDX-License-Identifier: MIT
/*
 * No write holds a CPU (contract 1.1, "What no user can do to another, or
 * to the machine").  As uid 65534, one write() of 2 GiB of valid records
 * (a read-only mapping of zero pages: signal masks of 0, timer specs that
 * disarm) to an object of a kind that applies records of zeros one by
 * one (tests/lib/kinds.c: signal and timer):
 *  - dies at once of SIGKILL, however far it got;
 *  - ends at a caught signal with a short count of whole records, the
 *    object left as the last record applied says;
 *  - never holds its CPU without a scheduling point: as root the test
 *    lowers the soft-lockup threshold to 4 s (kernel.watchdog_thresh=2)
 *    while a write runs for 6 s, and the guest panics on a soft lockup.
 * Objects of the other kinds (futex, AIO) refuse such a write at once
 * (EINVAL).  Every kind of the table, each kind and outcome a TEST; the
 * threshold is lowered for all.
 */
#include "lib/kinds.h"

#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>

PT_BUDGET(120);

#define HUGE_LEN	(1UL << 31)
#define THRESH		"/proc/sys/kernel/watchdog_thresh"

static const char *huge;
static char thresh_saved[16];
static pid_t main_pid;

/* main's to undo, after every TEST (a failing TEST's child leaves it) */
static void thresh_restore(void)
{
	int fd;

	if (!thresh_saved[0] || getpid() != main_pid)
		return;
	fd = open(THRESH, O_WRONLY);
	if (fd >= 0) {
		if (write(fd, thresh_saved, strlen(thresh_saved)) < 0)
			pt_diag("cannot restore %s: %s", THRESH,
				strerror(errno));
		close(fd);
	}
}

static void thresh_lower(void)
{
	int fd;

	if (geteuid() != 0 ||
	    pt_read_file(THRESH, thresh_saved, sizeof(thresh_saved)) < 0) {
		thresh_saved[0] = 0;
		pt_diag("soft-lockup threshold left as it is (not root, or "
			"no %s)", THRESH);
		return;
	}
	pt_on_fail(thresh_restore);
	fd = CHECK_SYS(open(THRESH, O_WRONLY));
	CHECK_EQ(write(fd, "2", 1), 1);
	CHECK_SYS(close(fd));
}

/*
 * An object of kind k, made by uid 65534, in a state the zeros change
 * (a timer armed, a signal mask not empty) where they are valid.
 */
static int create(const struct pt_kind *k)
{
	int dev, fd;

	pt_kinds_prepare();
	dev = pt_dev();
	fd = pt_kind_new(k, dev, 0);
	CHECK_SYS(close(dev));
	if (k->zero_fdinfo && k->arm)
		k->arm(fd, PT_KIND_WAITING);
	return fd;
}

/* The child: become nobody, write 2 GiB, report how far it got. */
static int write_huge(void *arg)
{
	const struct pt_kind *k = arg;
	int fd;

	pt_become_nobody();
	fd = create(k);
	/* Not reached before the parent's SIGKILL (or the watchdog). */
	pt_diag("%s: the write returned %zd", k->name,
		write(fd, huge, HUGE_LEN));
	return 3;
}

static void dies_of_sigkill(const struct pt_kind *k)
{
	int64_t run_ns = MS(6000), t0;
	int status;
	pid_t pid, r;

	pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(write_huge((void *)k));
	pt_sleep_ns(run_ns);
	r = CHECK_SYS(waitpid(pid, &status, WNOHANG));
	if (r)
		FAIL("%s: the 2 GiB write ended within %lld ms (status %#x): "
		     "nothing was tested", k->name,
		     (long long)(run_ns / NSEC_PER_MSEC), status);

	t0 = pt_mono();
	CHECK_SYS(kill(pid, SIGKILL));
	while (!CHECK_SYS(waitpid(pid, &status, WNOHANG))) {
		if (pt_mono() - t0 > MS(1000) * pt_time_scale())
			FAIL("%s: the writer still runs %lld ms after SIGKILL",
			     k->name,
			     (long long)((pt_mono() - t0) / NSEC_PER_MSEC));
		pt_sleep_ms(2);
	}
	pt_diag("%s: SIGKILL ended the write after %lld ms", k->name,
		(long long)((pt_mono() - t0) / NSEC_PER_MSEC));
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static int write_interrupted(void *arg)
{
	const struct pt_kind *k = arg;
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct itimerval it = { .it_value = { .tv_usec = 300000 } };
	char info[512];
	ssize_t r;
	int fd;

	pt_become_nobody();
	fd = create(k);
	CHECK_SYS(sigaction(SIGALRM, &sa, NULL));
	CHECK_SYS(setitimer(ITIMER_REAL, &it, NULL));
	r = write(fd, huge, HUGE_LEN);
	pt_diag("%s: a write of 2 GiB interrupted after 300 ms returned %zd",
		k->name, r);
	CHECK_RANGE(r, (ssize_t)k->write_size, 0x7ffff000 - 1);
	CHECK_EQ(r % k->write_size, 0);

	pt_fdinfo(fd, info, sizeof(info));
	if (!strstr(info, k->zero_fdinfo))
		FAIL("%s object not as the zeros written leave it (%s):\n%s",
		     k->name, k->zero_fdinfo, info);
	return PT_PASS;
}

static int write_refused(void *arg)
{
	const struct pt_kind *k = arg;
	int64_t t0;
	int fd;

	pt_become_nobody();
	fd = create(k);
	t0 = pt_mono();
	CHECK_ERR(write(fd, huge, HUGE_LEN), EINVAL);
	CHECK_RANGE(pt_mono() - t0, 0, MS(1000) * pt_time_scale());
	return PT_PASS;
}

static void ends_at_a_caught_signal(const struct pt_kind *k)
{
	CHECK_EQ(pt_run_child(write_interrupted, (void *)k, 30000), PT_PASS);
}

static void refuses_at_once(const struct pt_kind *k)
{
	CHECK_EQ(pt_run_child(write_refused, (void *)k, 30000), PT_PASS);
}

int main(void)
{
	int ret;

	main_pid = getpid();
	huge = mmap(NULL, HUGE_LEN, PROT_READ,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(huge != MAP_FAILED);

	pt_for_each_kind(k) {
		if (k->zero_fdinfo) {
			pt_add_kind_test(k, "write_dies_of_sigkill",
					 dies_of_sigkill);
			pt_add_kind_test(k, "write_ends_at_a_caught_signal",
					 ends_at_a_caught_signal);
		} else {
			pt_add_kind_test(k, "refuses_at_once",
					 refuses_at_once);
		}
	}
	thresh_lower();
	ret = pt_run_tests();
	thresh_restore();
	return ret;
}
