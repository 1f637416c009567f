// SPDX-License-Identifier: MIT
/*
 * Reading a timer's /proc/PID/fdinfo changes nothing of the timer
 * (issue "Hardening 3", finding 4).
 *
 * As timerfd's, a periodic timer is not re-armed from its callback: once
 * it has expired it stops, its count waiting for a read, which re-arms
 * it (or POLLFS_IOC_TIMER_GET, like timerfd_gettime()).  timerfd's
 * fdinfo only looks.  If the object's fdinfo re-arms the timer and adds
 * the missed periods to its count, whoever reads the file (the owner's
 * monitoring tools, anything with ptrace read access to it) starts a
 * timer its owner left stopped, and the owner gets expirations, and
 * wake-ups, it would not have had.
 *
 * Each TEST arms a periodic timer as uid/gid 65534, lets it expire once
 * and leaves it unread, so that it is stopped; checks that it stays
 * stopped for several periods (the timerfd behaviour this rests on);
 * reads its fdinfo; and checks that it is still stopped:
 *  - epoll_edge: the timer is in an epoll set with EPOLLET, which
 *    reports each new expiry (each wake-up) once: after the first
 *    report, epoll_wait must report nothing for 3 periods, before and
 *    after the fdinfo read.  A timer the fdinfo read started fires
 *    within a period and is reported.  After a read(2) the timer runs
 *    again and is reported again: the edge is seen when it comes;
 *  - timer_list: root watches the hrtimers queued in /proc/timer_list,
 *    where a running pollfs timer shows as pollfs_hrtimer_fired (checked
 *    while it runs, before its expiry): after the expiry none is
 *    queued, and after the owner read its fdinfo still none.  The timer
 *    is the only pollfs timer (tests run one at a time); the period, 1 s,
 *    leaves the re-armed timer queued for most of a second.
 * The fdinfo lines read are printed as diagnostics.
 */
#include "lib/timer.h"

#include <sys/epoll.h>
#include <sys/wait.h>

PT_BUDGET(60);

static void show_fdinfo(int fd, const char *when)
{
	char buf[1024];

	pt_fdinfo(fd, buf, sizeof(buf));
	for (char *p = buf; *p; p++)
		if (*p == '\n')
			*p = ' ';
	pt_diag("fdinfo %s: %s", when, buf);
}

static int ep_wait(int ep, int timeout_ms)
{
	struct epoll_event e[2];
	int n;

	do
		n = epoll_wait(ep, e, 2, timeout_ms);
	while (n < 0 && errno == EINTR);
	CHECK_SYS(n);
	if (n)
		CHECK_EQ(n, 1);
	return n;
}

#define PERIOD_MS	100

TEST(epoll_edge)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLET };
	struct pollfs_timer_event ev;
	int ep, t;

	pt_become_nobody();
	t = tmr_new(POLLFS_NONBLOCK);
	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, t, &e));
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(20), MS(PERIOD_MS));
	CHECK_EQ(ep_wait(ep, PT_WAIT_MS), 1);

	/* expired, unread: stopped, as a timerfd */
	if (ep_wait(ep, 3 * PERIOD_MS))
		FAIL("an expired periodic timer, not read, fired again");
	show_fdinfo(t, "of the expired timer");
	show_fdinfo(t, "again");
	if (ep_wait(ep, 3 * PERIOD_MS))
		FAIL("reading fdinfo started a stopped periodic timer: "
		     "it expired again within %d ms, before any read",
		     3 * PERIOD_MS);

	/* a read re-arms it: running, and reported again */
	tmr_read_event(t, &ev);
	CHECK(ev.expirations >= 1);
	CHECK_EQ(ep_wait(ep, PT_WAIT_MS), 1);
	CHECK_SYS(close(ep));
	CHECK_SYS(close(t));
}

/* How many pollfs timers /proc/timer_list shows queued. */
static int queued_pollfs_timers(void)
{
	static char buf[1 << 20];
	int fd = CHECK_SYS(open("/proc/timer_list", O_RDONLY | O_CLOEXEC));
	size_t len = 0;
	ssize_t r;
	int n = 0;

	while (len < sizeof(buf) - 1 &&
	       (r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)r;
	CHECK_SYS(close(fd));
	buf[len] = 0;
	for (char *p = buf; (p = strstr(p, "pollfs_hrtimer_fired")); p++)
		n++;
	return n;
}

static char recv_c(int fd)
{
	char c = 0;

	if (!pt_poll_in(fd, PT_WAIT_MS) || read(fd, &c, 1) != 1)
		FAIL("no message within %d ms", PT_WAIT_MS);
	return c;
}

/* The timer's owner, uid 65534: 'a' armed, 'e' expired, 'f' fdinfo read. */
static void owner(int to_root, int from_root)
{
	int t;

	pt_become_nobody();
	t = tmr_new(POLLFS_NONBLOCK);
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(1000), MS(1000));
	pt_send_byte(to_root, 'a');
	CHECK_EQ(recv_c(from_root), 'w');
	pt_wait_readable(t, PT_WAIT_MS);
	pt_send_byte(to_root, 'e');
	CHECK_EQ(recv_c(from_root), 'f');
	show_fdinfo(t, "of the expired timer");
	pt_send_byte(to_root, 'f');
	CHECK_EQ(recv_c(from_root), 'x');
	CHECK_SYS(close(t));
	_exit(PT_PASS);
}

TEST(timer_list)
{
	int up[2], down[2], status, n;
	pid_t pid;

	pt_require_root();
	if (access("/proc/timer_list", R_OK))
		pt_skip("no /proc/timer_list");
	if (queued_pollfs_timers())
		FAIL("a pollfs timer is queued before the test made one");
	CHECK_SYS(pipe2(up, O_CLOEXEC));
	CHECK_SYS(pipe2(down, O_CLOEXEC));
	pid = fork();
	CHECK_SYS(pid);
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		owner(up[1], down[0]);
	}
	close(up[1]);
	close(down[0]);

	CHECK_EQ(recv_c(up[0]), 'a');
	n = queued_pollfs_timers();
	if (n != 1) {
		pt_kill_reap(pid);
		pt_skip("/proc/timer_list shows %d pollfs_hrtimer_fired for "
			"one running timer: cannot tell it from there", n);
	}
	pt_send_byte(down[1], 'w');
	CHECK_EQ(recv_c(up[0]), 'e');
	/* expired, unread: stopped, as a timerfd */
	CHECK_EQ(queued_pollfs_timers(), 0);
	pt_send_byte(down[1], 'f');
	CHECK_EQ(recv_c(up[0]), 'f');
	n = queued_pollfs_timers();
	pt_send_byte(down[1], 'x');
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (n)
		FAIL("after its owner read its fdinfo, the expired periodic "
		     "timer, stopped until read, is queued again in "
		     "/proc/timer_list: reading fdinfo re-armed it");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == PT_PASS);
}

int main(void)
{
	return pt_run_tests();
}
