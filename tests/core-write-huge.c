// SPDX-License-Identifier: MIT
/*
 * No write holds a CPU (contract 1.1, "What no user can do to another, or
 * to the machine").  As uid 65534, one write() of 2 GiB of valid records
 * (a read-only mapping of zero pages: signal masks of 0, timer specs that
 * disarm) to a signal or a timer object:
 *  - dies at once of SIGKILL, however far it got;
 *  - ends at a caught signal with a short count of whole records, the
 *    object left as the last record applied says;
 *  - never holds its CPU without a scheduling point: as root the test
 *    lowers the soft-lockup threshold to 4 s (kernel.watchdog_thresh=2)
 *    while a write runs for 6 s, and the guest panics on a soft lockup.
 * Futex and AIO objects refuse such a write at once (EINVAL).
 * Each kind and outcome is a TEST; the threshold is lowered for all.
 */
#include "lib/aio.h"
#include "lib/futex.h"
#include "lib/signal.h"
#include "lib/timer.h"

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

enum kind { K_SIGNAL, K_TIMER, K_FUTEX, K_AIO };
static const char *const kind_name[] = { "signal", "timer", "futex", "aio" };
static const size_t rec_size[] = {
	sizeof(uint64_t), sizeof(struct pollfs_timer_spec),
	sizeof(struct pollfs_futex_event), 0,
};

static int create(enum kind k)
{
	aio_context_t ctx;

	switch (k) {
	case K_SIGNAL:
		return ps_signal(ps_bit(SIGUSR1), 0);
	case K_TIMER: {
		int fd = tmr_new(0);

		/* armed, so that the zeros of the write change something */
		tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(60000), MS(60000));
		return fd;
	}
	case K_FUTEX:
		return fx_new(0);
	case K_AIO:
		ctx = ax_setup(8);
		return ax_fd(ctx, 0);
	}
	return -1;
}

/* The child: become nobody, write 2 GiB, report how far it got. */
static int write_huge(void *arg)
{
	enum kind k = (enum kind)(long)arg;
	int fd;

	pt_become_nobody();
	fd = create(k);
	/* Not reached before the parent's SIGKILL (or the watchdog). */
	pt_diag("%s: the write returned %zd", kind_name[k],
		write(fd, huge, HUGE_LEN));
	return 3;
}

static void check_killable(enum kind k)
{
	int64_t run_ns = MS(6000), t0;
	int status;
	pid_t pid, r;

	pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(write_huge((void *)(long)k));
	pt_sleep_ns(run_ns);
	r = CHECK_SYS(waitpid(pid, &status, WNOHANG));
	if (r)
		FAIL("%s: the 2 GiB write ended within %lld ms (status %#x): "
		     "nothing was tested", kind_name[k],
		     (long long)(run_ns / NSEC_PER_MSEC), status);

	t0 = pt_mono();
	CHECK_SYS(kill(pid, SIGKILL));
	while (!CHECK_SYS(waitpid(pid, &status, WNOHANG))) {
		if (pt_mono() - t0 > MS(1000) * pt_time_scale())
			FAIL("%s: the writer still runs %lld ms after SIGKILL",
			     kind_name[k],
			     (long long)((pt_mono() - t0) / NSEC_PER_MSEC));
		pt_sleep_ms(2);
	}
	pt_diag("%s: SIGKILL ended the write after %lld ms", kind_name[k],
		(long long)((pt_mono() - t0) / NSEC_PER_MSEC));
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static int write_interrupted(void *arg)
{
	enum kind k = (enum kind)(long)arg;
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
		kind_name[k], r);
	CHECK_RANGE(r, (ssize_t)rec_size[k], 0x7ffff000 - 1);
	CHECK_EQ(r % rec_size[k], 0);

	pt_fdinfo(fd, info, sizeof(info));
	if (k == K_SIGNAL && !strstr(info, "mask: 0x0000000000000000\n"))
		FAIL("signal mask not the zeros written:\n%s", info);
	if (k == K_TIMER && !strstr(info, "it_value: (0, 0)\n"))
		FAIL("timer not disarmed by the zeros written:\n%s", info);
	return PT_PASS;
}

static int write_refused(void *arg)
{
	enum kind k = (enum kind)(long)arg;
	int64_t t0;
	int fd;

	pt_become_nobody();
	fd = create(k);
	t0 = pt_mono();
	CHECK_ERR(write(fd, huge, HUGE_LEN), EINVAL);
	CHECK_RANGE(pt_mono() - t0, 0, MS(1000) * pt_time_scale());
	return PT_PASS;
}

TEST(signal_write_dies_of_sigkill)
{
	check_killable(K_SIGNAL);
}

TEST(signal_write_ends_at_a_caught_signal)
{
	CHECK_EQ(pt_run_child(write_interrupted, (void *)(long)K_SIGNAL,
			      30000), PT_PASS);
}

TEST(timer_write_dies_of_sigkill)
{
	check_killable(K_TIMER);
}

TEST(timer_write_ends_at_a_caught_signal)
{
	CHECK_EQ(pt_run_child(write_interrupted, (void *)(long)K_TIMER,
			      30000), PT_PASS);
}

TEST(futex_refuses_at_once)
{
	CHECK_EQ(pt_run_child(write_refused, (void *)(long)K_FUTEX, 30000),
		 PT_PASS);
}

TEST(aio_refuses_at_once)
{
	CHECK_EQ(pt_run_child(write_refused, (void *)(long)K_AIO, 30000),
		 PT_PASS);
}

int main(void)
{
	int ret;

	main_pid = getpid();
	huge = mmap(NULL, HUGE_LEN, PROT_READ,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(huge != MAP_FAILED);

	thresh_lower();
	ret = pt_run_tests();
	thresh_restore();
	return ret;
}
