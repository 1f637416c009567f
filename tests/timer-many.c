// SPDX-License-Identifier: MIT
/*
 * Many timers at once: 1000 timers armed with staggered absolute expiries
 * all fire, each once and none early, and all are closed.
 */
#include "lib/timer.h"

#include <sys/epoll.h>
#include <sys/resource.h>

PT_BUDGET(55);

#define WANT	1000
#define STEP	US(20)

int main(void)
{
	static int fds[WANT];
	static int64_t target[WANT];
	static bool seen[WANT];
	struct epoll_event evs[64];
	struct pollfs_timer_event ev;
	struct rlimit rl;
	int64_t base, deadline;
	int ep, n = WANT, fired = 0;

	CHECK_SYS(getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur < WANT + 64) {
		rlim_t want = WANT + 64;

		if (rl.rlim_max < want && geteuid() == 0)
			rl.rlim_max = want;
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		CHECK_SYS(setrlimit(RLIMIT_NOFILE, &rl));
		if (rl.rlim_cur < want) {
			n = (int)rl.rlim_cur - 64;
			pt_diag("RLIMIT_NOFILE %llu: %d timers only",
				(unsigned long long)rl.rlim_cur, n);
			CHECK(n >= 500);
		}
	}

	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	for (int i = 0; i < n; i++) {
		struct epoll_event e = { .events = EPOLLIN };

		fds[i] = tmr_new(POLLFS_NONBLOCK);
		e.data.u32 = (uint32_t)i;
		CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &e));
	}
	/* Arm them all, in reverse order of expiry, far enough ahead that
	 * arming takes less than the first wait on a slow guest. */
	base = pt_mono() + MS(500);
	for (int i = n - 1; i >= 0; i--) {
		target[i] = base + (int64_t)i * STEP;
		tmr_arm(fds[i], CLOCK_MONOTONIC, POLLFS_TIMER_ABSTIME, target[i], 0);
	}

	deadline = pt_mono() + 40 * NSEC_PER_SEC;
	while (fired < n) {
		int k = CHECK_SYS(epoll_wait(ep, evs, 64, 1000));
		int64_t now = pt_mono();

		if (now > deadline)
			FAIL("%d of %d timers fired in 40 s", fired, n);
		for (int j = 0; j < k; j++) {
			uint32_t i = evs[j].data.u32;

			CHECK((int)i < n);
			if (seen[i])
				FAIL("timer %u reported again after its read", i);
			if (now < target[i])
				FAIL("timer %u ready %lld ns early", i,
				     (long long)(target[i] - now));
			tmr_read_event(fds[i], &ev);
			tmr_check_oneshot(&ev);
			seen[i] = true;
			fired++;
		}
	}
	/* nothing more from any of them */
	CHECK_EQ(epoll_wait(ep, evs, 64, 100), 0);
	for (int i = 0; i < n; i++)
		CHECK_SYS(close(fds[i]));
	CHECK_SYS(close(ep));
	pt_diag("%d timers fired", n);
	return PT_PASS;
}
