// SPDX-License-Identifier: MIT
/*
 * A program as a libpollfs user writes it: <pollfs.h> and nothing from
 * the source tree, built by tests/packaging/install/check with the
 * flags of `pkg-config --cflags --libs libpollfs` against an installed
 * copy, and run in the guest as the test "libpollfs-install".  Silent
 * on success.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pollfs.h>

/* Its time limit, which tests/run reads from the program (a test of the
 * tree declares it with PT_BUDGET, which this one cannot include). */
__attribute__((used)) static const char budget_tag[] =
	"pollfs-test-budget=60";

static int failures;

/*
 * What a program linked against libpollfs 1.0 calls: the 1.0 results of
 * the functions whose results 1.1 changed.
 */
int timer_read_1_0(int fd, struct pollfs_timer_event *event);
int futex_arm_1_0(int fd, const uint32_t *addr, uint32_t val, int flags);
__asm__(".symver timer_read_1_0, pollfs_timer_read@LIBPOLLFS_1.0");
__asm__(".symver futex_arm_1_0, pollfs_futex_arm@LIBPOLLFS_1.0");

#define EXPECT(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "# FAIL consumer.c:%d: %s (errno %d: %s)\n", \
			__LINE__, #cond, errno, strerror(errno));	\
		failures++;						\
	}								\
} while (0)

static int readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

int main(void)
{
	struct itimerspec its = { .it_value = { .tv_nsec = 1000000 } };
	struct pollfs_futex_event rec;
	struct pollfs_timer_event tev;
	struct pollfs_event ev;
	struct pollfs_sem sem;
	int tfd, ffd;

	/* the synchronization objects, with no kernel object involved */
	pollfs_event_init(&ev, 0);
	EXPECT(!pollfs_event_is_set(&ev));
	EXPECT(pollfs_sem_init(&sem, 1, 0) == 0);
	EXPECT(pollfs_sem_trywait(&sem) == 0);
	EXPECT(pollfs_sem_trywait(&sem) == -1 && errno == EAGAIN);

	/* a timer, through the shared library and /dev/pollfs */
	tfd = pollfs_timer(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	EXPECT(tfd >= 0);
	EXPECT(pollfs_timer_arm(tfd, CLOCK_MONOTONIC, 0, &its) == 0);
	EXPECT(readable(tfd, 10000));
	EXPECT(pollfs_timer_read(tfd, &tev) == 1 && tev.expirations == 1);
	EXPECT(pollfs_timer_get(tfd, &tev) == 0 && tev.expirations == 0);
	EXPECT(pollfs_timer_arm(tfd, CLOCK_MONOTONIC, 0, &its) == 0);
	EXPECT(readable(tfd, 10000));
	EXPECT(timer_read_1_0(tfd, &tev) == 0 && tev.expirations == 1);

	/* the event wakes a futex object armed on it */
	ffd = pollfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	EXPECT(ffd >= 0);
	EXPECT(pollfs_event_arm(&ev, ffd) == 0);
	EXPECT(!readable(ffd, 0));
	pollfs_event_set(&ev);
	EXPECT(readable(ffd, 10000));
	EXPECT(pollfs_futex_read(ffd, &rec, 1) == 1);
	EXPECT(rec.addr == (uintptr_t)&ev.state && rec.val == 0);
	EXPECT(pollfs_event_arm(&ev, ffd) == 1);
	EXPECT(pollfs_futex_arm(ffd, &ev.state, 0, 0) == 1);
	EXPECT(futex_arm_1_0(ffd, &ev.state, 0, 0) == -1 && errno == EAGAIN);
	EXPECT(pollfs_futex_watch(ffd, &ev.state, 1, 0) == 0);
	EXPECT(pollfs_futex_disarm(ffd) == 0);

	close(tfd);
	close(ffd);
	return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
