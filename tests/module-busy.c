// SPDX-License-Identifier: MIT
/*
 * The module cannot be unloaded while a pollfs file is open: rmmod fails
 * ("Module pollfs is in use", EBUSY) while /dev/pollfs or an object is
 * open, and the objects keep working; once all are closed it unloads,
 * taking /proc/filesystems' pollfs with it.  The module is loaded again
 * from $POLLFS_KO at the end, and on any failure.
 */
#include "lib/timer.h"

#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>

PT_BUDGET(55);

static long refcnt(void)
{
	FILE *f = fopen("/sys/module/pollfs/refcnt", "r");
	long n = -1;

	if (!f)
		FAIL("/sys/module/pollfs/refcnt: %s", strerror(errno));
	if (fscanf(f, "%ld", &n) != 1)
		FAIL("cannot parse /sys/module/pollfs/refcnt");
	fclose(f);
	return n;
}

static bool fs_listed(void)
{
	char line[256];
	bool found = false;
	FILE *f = fopen("/proc/filesystems", "r");

	if (!f)
		FAIL("/proc/filesystems: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *name = strrchr(line, '\t');

		name = name ? name + 1 : line;
		if (strcmp(name, "pollfs\n") == 0)
			found = true;
	}
	fclose(f);
	return found;
}

/* rmmod must refuse: exit status non-zero, "in use", module still there */
static void check_rmmod_refused(const char *why)
{
	char out[1024];
	char *argv[] = { "rmmod", "pollfs", NULL };
	int st;

	pt_diag("rmmod with %s open", why);
	st = pt_run_cmd(argv, out, sizeof(out));
	if (st == 0)
		FAIL("rmmod pollfs succeeded with %s open", why);
	if (!strstr(out, "in use"))
		FAIL("rmmod pollfs: status %d, output \"%s\", expected \"in use\"",
		     st, out);
	CHECK(pt_module_loaded());
	CHECK(refcnt() > 0);
	/* the kernel's own answer, asked without waiting: the references
	 * held make it refuse with EWOULDBLOCK (= EAGAIN) */
	CHECK_ERR(syscall(SYS_delete_module, "pollfs", O_NONBLOCK), EWOULDBLOCK);
	CHECK(pt_module_loaded());
}

static void use_timer(int t)
{
	struct pollfs_timer_event ev;

	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(1), 0);
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
}

static void wait_for_dev(void)
{
	struct stat st;
	int64_t deadline = pt_mono() + 5 * NSEC_PER_SEC;

	while (stat("/dev/pollfs", &st) && pt_mono() < deadline)
		pt_sleep_ms(10);
	CHECK_SYS(stat("/dev/pollfs", &st));
}

int main(void)
{
	char out[1024];
	char *rmmod[] = { "rmmod", "pollfs", NULL };
	char *insmod[] = { "insmod", NULL, NULL };
	const char *ko;
	int dev, t;
	long base;

	ko = pt_module_ko();
	base = refcnt();
	pt_diag("refcnt %ld with nothing of ours open", base);

	/* the device handle alone */
	dev = pt_dev();
	check_rmmod_refused("/dev/pollfs");

	/* a timer and the handle */
	t = tmr_new(0);
	check_rmmod_refused("/dev/pollfs and a timer");

	/* the timer alone, armed and periodic */
	CHECK_SYS(close(dev));
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(1), MS(1));
	check_rmmod_refused("an armed timer");
	tmr_disarm(t);
	use_timer(t);
	CHECK_SYS(close(t));

	/* all closed: it unloads */
	if (pt_run_cmd(rmmod, out, sizeof(out)) != 0)
		FAIL("rmmod pollfs with nothing open: %s", out);
	CHECK(!pt_module_loaded());
	CHECK(!fs_listed());
	CHECK_ERR(open("/dev/pollfs", O_RDWR), ENOENT);

	insmod[1] = (char *)ko;
	if (pt_run_cmd(insmod, out, sizeof(out)) != 0)
		FAIL("insmod %s: %s", ko, out);
	CHECK(pt_module_loaded());
	CHECK(fs_listed());
	wait_for_dev();
	t = tmr_new(0);
	use_timer(t);
	CHECK_SYS(close(t));
	return PT_PASS;
}
