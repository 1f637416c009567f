// SPDX-License-Identifier: MIT
/*
 * Readiness for writing (contract 1.1): an object that takes writes
 * (signal, timer, futex) reports POLLOUT always, since a write never
 * waits: through poll, select and epoll (level and edge), armed or not,
 * readable or not.  An AIO object takes no writes and never reports it.
 */
#include "lib/aio.h"
#include "lib/futex.h"
#include "lib/signal.h"
#include "lib/timer.h"

#include <sys/epoll.h>
#include <sys/select.h>

PT_BUDGET(60);

static short revents(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	CHECK_SYS(poll(&p, 1, 0));
	return p.revents;
}

static bool select_writable(int fd)
{
	struct timeval tv = { 0, 0 };
	fd_set w;

	FD_ZERO(&w);
	FD_SET(fd, &w);
	CHECK_SYS(select(fd + 1, NULL, &w, NULL, &tv));
	return FD_ISSET(fd, &w);
}

/* Level-triggered EPOLLOUT at every wait; edge-triggered once. */
static void check_epoll(const char *what, int fd, bool writable)
{
	struct epoll_event ev = { .events = EPOLLOUT };
	int ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	int i, n;

	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	for (i = 0; i < 2; i++) {
		n = CHECK_SYS(epoll_wait(ep, &ev, 1, 0));
		if (n != writable || (n && ev.events != EPOLLOUT))
			FAIL("%s: level epoll_wait %d gave %d events %#x",
			     what, i, n, n ? ev.events : 0);
	}
	ev.events = EPOLLOUT | EPOLLET;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev));
	CHECK_EQ(epoll_wait(ep, &ev, 1, 0), writable);
	CHECK_EQ(epoll_wait(ep, &ev, 1, 0), 0);
	CHECK_SYS(close(ep));
}

static void check(const char *what, int fd, bool writable)
{
	short out = writable ? POLLOUT | POLLWRNORM : 0;

	pt_diag("%s: POLLOUT %s", what, writable ? "always" : "never");
	CHECK_EQ(revents(fd, POLLOUT | POLLWRNORM), out);
	CHECK_EQ(revents(fd, POLLOUT), out & POLLOUT);
	CHECK_EQ(select_writable(fd), writable);
	check_epoll(what, fd, writable);
}

int main(void)
{
	static uint32_t word;
	aio_context_t ctx;
	int fd;

	fd = ps_signal(ps_bit(SIGUSR1), 0);
	check("signal", fd, true);
	CHECK_SYS(close(fd));

	fd = tmr_new(0);
	check("timer, disarmed", fd, true);
	tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(1), 0);
	pt_sleep_ms(20);
	CHECK_EQ(revents(fd, POLLIN | POLLOUT), POLLIN | POLLOUT);
	check("timer, expired", fd, true);
	CHECK_SYS(close(fd));

	fd = fx_new(0);
	check("futex, unarmed", fd, true);
	fx_arm(fd, &word, 0, FX_PRIVATE);
	check("futex, armed", fd, true);
	CHECK_SYS(close(fd));

	ctx = ax_setup(4);
	fd = ax_fd(ctx, 0);
	check("aio", fd, false);
	CHECK_SYS(close(fd));
	ax_destroy(ctx);
	return PT_PASS;
}
