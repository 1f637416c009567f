// SPDX-License-Identifier: MIT
/*
 * A mapped ring holds the module (contract 1.2: the ring lives as long
 * as the object's file or any mapping of it): rmmod fails ("in use",
 * EBUSY) while a ring is mapped, even once every descriptor is closed,
 * and while only a forked child still maps it; once the last mapping is
 * gone, the module unloads.  It is loaded again from $POLLFS_KO at the
 * end, and on any failure.  Root only; module-* tests run last.
 */
#include "lib/timer.h"
#include "lib/ring.h"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

PT_BUDGET(60);

static const char *ko;

static void check_rmmod_refused(const char *why)
{
	char out[1024];
	char *argv[] = { "rmmod", "pollfs", NULL };
	int st;

	pt_diag("rmmod with %s", why);
	st = pt_run_cmd(argv, out, sizeof(out));
	if (st == 0)
		FAIL("rmmod pollfs succeeded with %s", why);
	if (!strstr(out, "in use"))
		FAIL("rmmod pollfs: status %d, output \"%s\", expected \"in use\"",
		     st, out);
	CHECK(pt_module_loaded());
	CHECK_ERR(syscall(SYS_delete_module, "pollfs", O_NONBLOCK), EWOULDBLOCK);
	CHECK(pt_module_loaded());
}

static void rmmod_succeeds(void)
{
	char out[1024];
	char *argv[] = { "rmmod", "pollfs", NULL };
	int64_t end = pt_mono() + MS(PT_WAIT_MS);

	/* the last fput may finish a moment after munmap returns */
	while (pt_run_cmd(argv, out, sizeof(out)) != 0) {
		if (pt_mono() > end)
			FAIL("rmmod pollfs with no ring mapped: %s", out);
		pt_sleep_ms(50);
	}
	CHECK(!pt_module_loaded());
}

static void insmod(void)
{
	char out[1024];
	char *argv[] = { "insmod", (char *)ko, NULL };
	struct stat st;
	int64_t end = pt_mono() + 5 * NSEC_PER_SEC;

	if (pt_run_cmd(argv, out, sizeof(out)) != 0)
		FAIL("insmod %s: %s", ko, out);
	while (stat("/dev/pollfs", &st) && pt_mono() < end)
		pt_sleep_ms(10);
	CHECK_SYS(stat("/dev/pollfs", &st));
}

int main(void)
{
	struct pollfs_timer_event ev;
	struct rg_ring ring;
	int fd, status, pipefd[2];
	pid_t pid;

	ko = pt_module_ko();

	/* a timer's ring, mapped, its descriptor closed */
	fd = tmr_new(0);
	rg_setup(&ring, fd, 8, RG_TIMER_REC);
	tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(1), MS(1));
	CHECK_SYS(close(fd));
	check_rmmod_refused("a ring mapped, its descriptor closed");
	/* the object works on */
	rg_wait_ready(&ring, 2);
	CHECK_EQ(rg_take(&ring, &ev, 1), 1);
	CHECK(ev.expirations >= 1);

	/* only a child's copy of the mapping left */
	CHECK_SYS(pipe2(pipefd, O_CLOEXEC));
	pid = fork();
	CHECK_SYS(pid);
	if (pid == 0) {
		char d;

		close(pipefd[1]);
		/* until the parent closes its end */
		while (read(pipefd[0], &d, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(pipefd[0]);
	rg_unmap(&ring);
	check_rmmod_refused("a ring mapped by a child only");
	CHECK_SYS(close(pipefd[1]));
	CHECK_EQ(waitpid(pid, &status, 0), pid);

	/* nothing maps it: it unloads, and comes back */
	rmmod_succeeds();
	insmod();
	fd = tmr_new(0);
	rg_setup(&ring, fd, 8, RG_TIMER_REC);
	tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(1), 0);
	rg_wait_ready(&ring, 1);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
