// SPDX-License-Identifier: MIT
/*
 * POLLFS_TIMER_CANCEL_ON_SET (1.1) needs no privilege to arm: a user
 * with no capabilities (uid and gid 65534) arms an absolute realtime
 * timer with it and looks at it (POLLFS_IOC_TIMER_GET).  That user
 * cannot set the clock (clock_settime, settimeofday: EPERM), and the
 * refused attempts cancel nothing: no POLLIN, a read gives EAGAIN.
 * When the test runs as root, root's step of the clock cancels the
 * unprivileged user's timer: it becomes readable and its read fails
 * with ECANCELED, once, and it stays armed.  (tests/run -u: the
 * unprivileged part alone.)
 */
#include "lib/timer.h"

#include <sys/time.h>
#include <sys/wait.h>

PT_BUDGET(50);

#define FLAGS	(POLLFS_TIMER_ABSTIME | POLLFS_TIMER_CANCEL_ON_SET)
#define FAR	(3600 * NSEC_PER_SEC)

static int to_parent[2], to_child[2];

/* As nobody: arms, looks, fails to set the clock; nothing cancelled. */
static int unprivileged(bool with_root)
{
	struct pollfs_timer_event ev;
	struct timespec ts;
	struct timeval tv;
	int t;

	if (geteuid() == 0)
		pt_become_nobody();
	t = tmr_new(POLLFS_NONBLOCK);
	tmr_arm(t, CLOCK_REALTIME, FLAGS, pt_now(CLOCK_REALTIME) + FAR, 0);
	tmr_get(t, &ev);
	CHECK_EQ(ev.expirations, 0);
	CHECK_RANGE(pt_ts_ns(&ev.remaining), FAR - 10 * NSEC_PER_SEC, FAR);

	CHECK_SYS(clock_gettime(CLOCK_REALTIME, &ts));
	ts.tv_sec += 10;
	CHECK_ERR(clock_settime(CLOCK_REALTIME, &ts), EPERM);
	CHECK_SYS(gettimeofday(&tv, NULL));
	tv.tv_sec -= 10;
	CHECK_ERR(settimeofday(&tv, NULL), EPERM);
	CHECK(!pt_poll_in(t, 100));
	pt_expect_empty(t);
	tmr_get(t, &ev);
	CHECK_RANGE(pt_ts_ns(&ev.remaining), FAR - 10 * NSEC_PER_SEC, FAR);

	if (with_root) {
		/* root steps the clock */
		pt_send_byte(to_parent[1], 's');
		CHECK_EQ(pt_recv_byte(to_child[0]), 'd');
		pt_wait_readable(t, PT_WAIT_MS);
		CHECK_ERR(read(t, &ev, sizeof(ev)), ECANCELED);
		pt_expect_empty(t);
		tmr_get(t, &ev);
		CHECK(pt_ts_ns(&ev.remaining) > 0);
		pt_send_byte(to_parent[1], 'r');	/* root restores it */
		CHECK_EQ(pt_recv_byte(to_child[0]), 'd');
		pt_wait_readable(t, PT_WAIT_MS);
		CHECK_ERR(read(t, &ev, sizeof(ev)), ECANCELED);
		pt_expect_empty(t);
	}
	CHECK_SYS(close(t));
	return PT_PASS;
}

int main(void)
{
	int status;
	pid_t pid;

	if (geteuid() != 0) {
		pt_diag("not root: as uid %d, no clock step", (int)geteuid());
		return unprivileged(false);
	}
	tmr_real_save();
	CHECK_SYS(pipe2(to_parent, O_CLOEXEC));
	CHECK_SYS(pipe2(to_child, O_CLOEXEC));
	pid = fork();
	CHECK_SYS(pid);
	if (pid == 0) {
		alarm(0);
		pt_on_fail(NULL);
		_exit(unprivileged(true));
	}
	close(to_parent[1]);
	for (;;) {
		char c;
		ssize_t r = read(to_parent[0], &c, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r != 1)
			break;		/* the child is done */
		if (c == 's')
			tmr_real_step(10 * NSEC_PER_SEC);
		else
			tmr_real_restore();
		pt_send_byte(to_child[1], 'd');
	}
	tmr_real_restore();
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), PT_PASS);
	return PT_PASS;
}
