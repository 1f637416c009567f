// SPDX-License-Identifier: MIT
/*
 * Readiness for writing (contract 1.1): an object of a kind that takes
 * writes (signal, timer, futex) reports POLLOUT always, since a write
 * never waits: through poll, select and epoll (level and edge), new and
 * in each of its live states (armed, fired and unread, ...).  A kind
 * that takes no writes (AIO) never reports it.  Every kind of the
 * tests' table.
 */
#include "lib/kinds.h"

#include <stdio.h>

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

/* The live states arm() leaves an object in that this walks. */
#define STATES	4

int main(void)
{
	char what[64];
	int dev, fd;

	pt_kinds_prepare();
	dev = pt_dev();
	pt_for_each_kind(k) {
		bool writable = k->write_size != 0;

		fd = pt_kind_new(k, dev, 0);
		snprintf(what, sizeof(what), "%s, new", k->name);
		check(what, fd, writable);
		for (unsigned int n = 0; k->arm && n < STATES; n++) {
			k->arm(fd, n);
			snprintf(what, sizeof(what), "%s, state %u", k->name,
				 n);
			check(what, fd, writable);
		}
		CHECK_SYS(close(fd));
	}
	CHECK_SYS(close(dev));
	return PT_PASS;
}
