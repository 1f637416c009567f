// SPDX-License-Identifier: MIT
/*
 * exec drops the ring's mapping and keeps the ring (contract 1.2: the
 * ring lives as long as the object's file or a mapping of it): a timer
 * with a ring and two records in it, its descriptor inherited across
 * execve by a child, which is this program run again with the layout
 * on its command line.  The new image:
 *  - cannot set up another ring on the object (EBUSY);
 *  - read(2)s the ring's first record (read needs no mapping);
 *  - maps the ring from the layout it was given and finds the second
 *    record where the first left it, and takes it;
 *  - arms the timer, and its record lands in the ring.
 * The parent's own mapping saw all of it: head moved past the three.
 */
#include "lib/timer.h"
#include "lib/ring.h"

#include <stdio.h>
#include <sys/wait.h>

PT_BUDGET(40);

/* The new image's part; its exit status is the test's verdict there. */
static int after_exec(char **argv)
{
	struct pollfs_timer_event ev;
	struct pollfs_ring_params p, again;
	struct rg_ring ring;
	int fd = atoi(argv[2]);

	memset(&p, 0, sizeof(p));
	p.entries = (uint32_t)strtoul(argv[3], NULL, 0);
	p.record_size = (uint32_t)strtoul(argv[4], NULL, 0);
	p.off_head = (uint32_t)strtoul(argv[5], NULL, 0);
	p.off_tail = (uint32_t)strtoul(argv[6], NULL, 0);
	p.off_flags = (uint32_t)strtoul(argv[7], NULL, 0);
	p.off_records = (uint32_t)strtoul(argv[8], NULL, 0);
	p.mmap_size = strtoull(argv[9], NULL, 0);

	CHECK_ERR(rg_ioctl(fd, p.entries, 0, 0, &again), EBUSY);

	CHECK_EQ(read(fd, &ev, sizeof(ev)), TMR_EVENT_SIZE);
	tmr_check_oneshot(&ev);
	rg_map(&ring, fd, &p);
	CHECK_EQ(rg_ready(&ring), 1);
	CHECK_EQ(rg_take(&ring, &ev, 1), 1);
	tmr_check_oneshot(&ev);
	tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(1), 0);
	rg_wait_ready(&ring, 1);
	CHECK_EQ(rg_take(&ring, &ev, 1), 1);
	tmr_check_oneshot(&ev);
	rg_unmap(&ring);
	return PT_PASS;
}

TEST(exec_keeps_the_ring)
{
	char args[8][32], *argv[11];
	struct rg_ring ring;
	int fd = tmr_new(0), status;	/* not close-on-exec */
	uint32_t head0;
	pid_t pid;

	rg_setup(&ring, fd, 8, RG_TIMER_REC);
	for (uint32_t n = 1; n <= 2; n++) {
		tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(1), 0);
		rg_wait_ready(&ring, n);
	}
	head0 = rg_head(&ring);
	snprintf(args[0], sizeof(args[0]), "%d", fd);
	snprintf(args[1], sizeof(args[1]), "%u", ring.p.entries);
	snprintf(args[2], sizeof(args[2]), "%u", ring.p.record_size);
	snprintf(args[3], sizeof(args[3]), "%u", ring.p.off_head);
	snprintf(args[4], sizeof(args[4]), "%u", ring.p.off_tail);
	snprintf(args[5], sizeof(args[5]), "%u", ring.p.off_flags);
	snprintf(args[6], sizeof(args[6]), "%u", ring.p.off_records);
	snprintf(args[7], sizeof(args[7]), "%llu",
		 (unsigned long long)ring.p.mmap_size);
	argv[0] = "ring-exec";
	argv[1] = "--after-exec";
	for (int i = 0; i < 8; i++)
		argv[2 + i] = args[i];
	argv[10] = NULL;
	pid = fork();
	CHECK_SYS(pid);
	if (pid == 0) {
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), PT_PASS);
	CHECK_EQ(rg_head(&ring), head0 + 3);
	rg_expect_empty(&ring);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

int main(int argc, char **argv)
{
	if (argc == 10 && !strcmp(argv[1], "--after-exec"))
		return after_exec(argv);
	return pt_run_tests();
}
