// SPDX-License-Identifier: MIT
/*
 * poll and select see POLLIN (readable) exactly when a record is ready:
 * not while disarmed, not before the expiry, from the expiry until the
 * read (however often asked), and not after the read.  A poll or select
 * asleep when the timer expires is woken.
 */
#include "lib/timer.h"

#include <sys/select.h>

PT_BUDGET(50);

static bool select_readable(int fd, int timeout_ms)
{
	struct timeval tv = {
		.tv_sec = timeout_ms / 1000,
		.tv_usec = (timeout_ms % 1000) * 1000,
	};
	fd_set r;
	int n;

	CHECK(fd < FD_SETSIZE);
	FD_ZERO(&r);
	FD_SET(fd, &r);
	n = CHECK_SYS(select(fd + 1, &r, NULL, NULL, &tv));
	return n == 1 && FD_ISSET(fd, &r);
}

static void check_cycle(int t, bool use_select)
{
	struct pollfs_timer_event ev;
	int64_t t0;

	/* disarmed */
	CHECK(!pt_poll_in(t, 0));
	CHECK(!select_readable(t, 0));
	CHECK(!pt_poll_in(t, 50));
	CHECK(!select_readable(t, 50));

	/* armed, not expired */
	t0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(300), 0);
	if ((pt_poll_in(t, 0) || select_readable(t, 0)) && pt_mono() < t0 + MS(300))
		FAIL("readable before the expiry");

	/* woken by the expiry: before the timeout ends (at its end poll and
	 * select look at the fds once more, and would see it ready) */
	if (use_select)
		CHECK(select_readable(t, PT_WAIT_MS));
	else
		CHECK(pt_poll_in(t, PT_WAIT_MS));
	CHECK(pt_mono() >= t0 + MS(300));
	CHECK(pt_mono() - t0 < MS(PT_WAIT_MS) * 9 / 10);

	/* level: still ready until read */
	for (int i = 0; i < 3; i++) {
		CHECK(pt_poll_in(t, 0));
		CHECK(select_readable(t, 0));
	}
	pt_sleep_ms(50);
	CHECK(pt_poll_in(t, 0));
	CHECK(select_readable(t, 0));

	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	CHECK(!pt_poll_in(t, 0));
	CHECK(!select_readable(t, 0));
	CHECK(!pt_poll_in(t, 100));
	CHECK(!select_readable(t, 100));
}

int main(void)
{
	struct pollfd p;
	int t;

	t = tmr_new(POLLFS_NONBLOCK);
	check_cycle(t, false);
	check_cycle(t, true);

	/* what poll reports: POLLIN, and no error or hang-up */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(1), 0);
	pt_wait_readable(t, PT_WAIT_MS);
	p.fd = t;
	p.events = POLLIN | POLLRDNORM;
	p.revents = 0;
	CHECK_EQ(poll(&p, 1, 0), 1);
	CHECK(p.revents & POLLIN);
	CHECK(!(p.revents & (POLLERR | POLLHUP | POLLNVAL)));
	CHECK_SYS(close(t));

	/* a blocking object behaves the same */
	t = tmr_new(0);
	check_cycle(t, false);
	CHECK_SYS(close(t));
	return PT_PASS;
}
