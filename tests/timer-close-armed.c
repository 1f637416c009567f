// SPDX-License-Identifier: MIT
/*
 * Closing an armed timer is clean: a 1 ms periodic timer is armed and
 * closed over and over (closed before, while and after it fires, with a
 * count pending, while in an epoll set, through a dup, after a fork), and
 * the process goes on without a crash or a kernel complaint (the runner
 * checks the kernel log).
 */
#include "lib/timer.h"

#include <sys/epoll.h>
#include <sys/wait.h>

PT_BUDGET(55);

#define ROUNDS 600

int main(void)
{
	int ep, t, d, status;
	pid_t pid;

	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	for (int i = 0; i < ROUNDS; i++) {
		t = tmr_new(POLLFS_NONBLOCK);
		tmr_arm(t, CLOCK_MONOTONIC, 0, US(1 + (i % 7) * 300), MS(1));
		switch (i % 5) {
		case 0:		/* at once */
			break;
		case 1:		/* around the first expiry */
			pt_sleep_ns(US(i % 2000));
			break;
		case 2: {	/* in an epoll set, with records reported */
			struct epoll_event e = { .events = EPOLLIN };

			CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, t, &e));
			if (i % 50 == 2)
				CHECK(epoll_wait(ep, &e, 1, PT_WAIT_MS) == 1);
			break;
		}
		case 3:		/* through a dup: the last close ends it */
			d = CHECK_SYS(dup(t));
			CHECK_SYS(close(t));
			pt_sleep_ns(US(500));
			t = d;
			break;
		case 4:		/* a pending count */
			if (i % 50 == 4)
				pt_sleep_ms(5);
			break;
		}
		CHECK_SYS(close(t));
	}

	/* a copy shared with a child that exits first, and one that outlives
	 * the parent's close */
	for (int i = 0; i < 20; i++) {
		t = tmr_new(0);
		tmr_arm(t, CLOCK_MONOTONIC, 0, MS(1), MS(1));
		pid = CHECK_SYS(fork());
		if (pid == 0) {
			struct pollfs_timer_event ev;

			if (i % 2)
				tmr_read_event(t, &ev);
			_exit(0);
		}
		if (i % 2)
			CHECK_SYS(close(t));
		CHECK_SYS(waitpid(pid, &status, 0));
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		if (!(i % 2))
			CHECK_SYS(close(t));
	}
	CHECK_SYS(close(ep));

	/* still working afterwards */
	t = tmr_new(0);
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(1), 0);
	{
		struct pollfs_timer_event ev;

		tmr_read_event(t, &ev);
		tmr_check_oneshot(&ev);
	}
	CHECK_SYS(close(t));
	return PT_PASS;
}
