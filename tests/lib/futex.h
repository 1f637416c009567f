/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the futex object's tests (tests/futex-*.c): creating and
 * arming objects, raw futex(2) calls, checking records and states, and
 * waiting until another task sleeps in a given system call.
 * Include it instead of lib.h.
 */
#ifndef POLLFS_TESTS_FUTEX_H
#define POLLFS_TESTS_FUTEX_H

#include "lib.h"

#include <limits.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <linux/futex.h>

#define FX_REC		((ssize_t)sizeof(struct pollfs_futex_event))
#define FX_PRIVATE	0u
#define FX_SHARED	POLLFS_FUTEX_SHARED
#define FX_WATCH	POLLFS_FUTEX_WATCH	/* (1.1) */

_Static_assert(sizeof(struct pollfs_futex_event) == 16, "futex record size");

/* ---- objects ---- */

/* POLLFS_IOC_FUTEX with these flags; the fd, or -1 with errno. */
int fx_try(unsigned int flags, unsigned int reserved);

int fx_new_at(const char *file, int line, unsigned int flags);
#define fx_new(flags) fx_new_at(__FILE__, __LINE__, (flags))

static inline struct pollfs_futex_event fx_ev(const void *addr, uint32_t val,
					      uint32_t flags)
{
	struct pollfs_futex_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.addr = (uint64_t)(uintptr_t)addr;
	ev.val = val;
	ev.flags = flags;
	return ev;
}

/* Writes one record; returns what write() returned (errno kept). */
ssize_t fx_write1(int fd, const void *addr, uint32_t val, uint32_t flags);

/* Arms one record, failing unless write() returns 16. */
void fx_arm_at(const char *file, int line, int fd, const void *addr,
	       uint32_t val, uint32_t flags);
#define fx_arm(fd, addr, val, flags)					\
	fx_arm_at(__FILE__, __LINE__, (fd), (addr), (val), (flags))

/* Arms n records at once, failing unless write() returns n * 16. */
void fx_armv_at(const char *file, int line, int fd,
		const struct pollfs_futex_event *evs, size_t n);
#define fx_armv(fd, evs, n) fx_armv_at(__FILE__, __LINE__, (fd), (evs), (n))

/*
 * Writes the disarm record (one record of all zeros, 1.1), failing
 * unless write() returns 16.
 */
void fx_disarm_at(const char *file, int line, int fd);
#define fx_disarm(fd) fx_disarm_at(__FILE__, __LINE__, (fd))

/* ---- an object in epoll: a fixture ---- */

/*
 * TEST_F(fx_epoll, name): self->fd, a non-blocking object, and self->ep,
 * an epoll instance, empty (the test adds the object with the events it
 * is about, fx_epoll_add()); both closed at the end.  fx_epoll_wait()
 * waits for its events.
 */
#define FX_EPOLL_TAG	0x5eedu

FIXTURE(fx_epoll) {
	int fd, ep;
};

FIXTURE_SETUP(fx_epoll)
{
	self->fd = fx_new(POLLFS_NONBLOCK);
	self->ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
}

FIXTURE_TEARDOWN(fx_epoll)
{
	CHECK_SYS(close(self->ep));
	CHECK_SYS(close(self->fd));
}

/* EPOLL_CTL_ADD of fd to ep for events, tagged FX_EPOLL_TAG. */
static inline void fx_epoll_add(int ep, int fd, uint32_t events)
{
	struct epoll_event e = { .events = events, .data.u64 = FX_EPOLL_TAG };

	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
}

/* pt_epoll_wait_one() for an object fx_epoll_add() added: 0, or 1 for
 * its EPOLLIN. */
static inline int fx_epoll_wait(int ep, int timeout_ms)
{
	return pt_epoll_wait_one(ep, timeout_ms, FX_EPOLL_TAG);
}

/* ---- futex(2) ---- */

static inline long fx_futex(void *uaddr, int op, uint32_t val,
			    unsigned long val2, void *uaddr2, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, val2, uaddr2, val3);
}

/* FX_PRIVATE adds FUTEX_PRIVATE_FLAG to op, FX_SHARED does not. */
static inline int fx_op(int op, uint32_t flags)
{
	return (flags & FX_SHARED) ? op : (op | FUTEX_PRIVATE_FLAG);
}

/* FUTEX_WAKE(addr, n), private or shared; fails on an error. */
long fx_wake_at(const char *file, int line, void *addr, int n, uint32_t flags);
#define fx_wake(addr, n, flags)						\
	fx_wake_at(__FILE__, __LINE__, (void *)(addr), (n), (flags))

/* ---- records and states ---- */

void fx_check_rec_at(const char *file, int line,
		     const struct pollfs_futex_event *got, const void *addr,
		     uint32_t val, uint32_t flags);
#define fx_check_rec(got, addr, val, flags)				\
	fx_check_rec_at(__FILE__, __LINE__, (got), (addr), (val), (flags))

/*
 * Reads with a buffer of four records and fails unless exactly one
 * record, this one, comes back.  Blocks if the fd is blocking.
 */
void fx_expect_rec_at(const char *file, int line, int fd, const void *addr,
		      uint32_t val, uint32_t flags);
#define fx_expect_rec(fd, addr, val, flags)				\
	fx_expect_rec_at(__FILE__, __LINE__, (fd), (addr), (val), (flags))

/*
 * A watched object (POLLFS_FUTEX_WATCH, 1.1) woken: one read, blocking
 * if the fd blocks, must return exactly the record {addr, val, flags}
 * (val being the word's value at the read); the object is then armed
 * again and not woken (no POLLIN, a non-blocking read gives EAGAIN).
 */
void fx_expect_watch_at(const char *file, int line, int fd, const void *addr,
			uint32_t val, uint32_t flags);
#define fx_expect_watch(fd, addr, val, flags)				\
	fx_expect_watch_at(__FILE__, __LINE__, (fd), (addr), (val), (flags))

/* The revents of one poll() for POLLIN on fd. */
short fx_revents_at(const char *file, int line, int fd, int timeout_ms);
#define fx_revents(fd, timeout_ms)					\
	fx_revents_at(__FILE__, __LINE__, (fd), (timeout_ms))

/* Unarmed: poll shows nothing and a read gives EINVAL. */
void fx_expect_unarmed_at(const char *file, int line, int fd);
#define fx_expect_unarmed(fd) fx_expect_unarmed_at(__FILE__, __LINE__, (fd))

/* Armed and not woken: poll shows nothing and a non-blocking read gives
 * EAGAIN. */
void fx_expect_armed_at(const char *file, int line, int fd);
#define fx_expect_armed(fd) fx_expect_armed_at(__FILE__, __LINE__, (fd))

/* Fails unless fd shows exactly POLLIN now. */
void fx_expect_ready_at(const char *file, int line, int fd);
#define fx_expect_ready(fd) fx_expect_ready_at(__FILE__, __LINE__, (fd))

/* ---- other tasks ---- */

/*
 * fork() for a test's helper process: the child is killed if the test
 * process dies (its watchdog, a failed check), so that no helper is left
 * asleep holding an object, and it has no watchdog alarm of its own.
 */
pid_t fx_fork_at(const char *file, int line);
#define fx_fork() fx_fork_at(__FILE__, __LINE__)

/*
 * True if task tid (of any process) sleeps interruptibly inside system
 * call sysno, as /proc/TID/syscall and /proc/TID/stat show it.
 */
bool fx_task_sleeps_in(pid_t tid, long sysno);

/*
 * Waits until task tid sleeps in system call sysno, then a little more:
 * a task seen asleep there has queued itself (it sets its state under
 * the lock it queues under, with preemption off).  Fails after
 * PT_WAIT_MS.
 */
void fx_wait_sleeping_at(const char *file, int line, pid_t tid, long sysno);
#define fx_wait_sleeping(tid, sysno)					\
	fx_wait_sleeping_at(__FILE__, __LINE__, (tid), (sysno))

#endif /* POLLFS_TESTS_FUTEX_H */
