/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the signal object tests (tests/signal-*.c).  Include it
 * instead of lib.h: it includes lib.h first.
 *
 * The tests block the signals they read with sigprocmask() or
 * pthread_sigmask(), as signalfd users do, and never put SIGALRM in a
 * mask: pt_watchdog() uses it.
 */
#ifndef POLLFS_TESTS_SIGNAL_H
#define POLLFS_TESTS_SIGNAL_H

#include "lib.h"

#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define SIGINFO_SIZE	((ssize_t)sizeof(struct pollfs_siginfo))

_Static_assert(sizeof(struct pollfs_siginfo) == 128, "pollfs_siginfo size");
_Static_assert(sizeof(struct pollfs_signal_open) == 16, "signal_open size");

/* The mask bit of signal sig. */
static inline uint64_t ps_bit(int sig)
{
	return 1ULL << (sig - 1);
}

static inline pid_t ps_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static inline int ps_tgkill(pid_t tgid, pid_t tid, int sig)
{
	return (int)syscall(SYS_tgkill, tgid, tid, sig);
}

/* POLLFS_IOC_SIGNAL with mask, flags, reserved: the fd, or -1 and errno. */
int ps_signal_open(uint64_t mask, unsigned int flags, unsigned int reserved);

/* Creates a signal object, failing the test if it cannot. */
#define ps_signal(mask, flags)						\
	ps_signal_at(__FILE__, __LINE__, (mask), (flags))
int ps_signal_at(const char *file, int line, uint64_t mask, unsigned int flags);

void ps_sigset(sigset_t *set, uint64_t mask);

/* Blocks the signals of mask in the calling thread (SIG_BLOCK). */
#define ps_block(mask) ps_block_at(__FILE__, __LINE__, (mask))
void ps_block_at(const char *file, int line, uint64_t mask);

/* Unblocks the signals of mask in the calling thread (SIG_UNBLOCK). */
#define ps_unblock(mask) ps_unblock_at(__FILE__, __LINE__, (mask))
void ps_unblock_at(const char *file, int line, uint64_t mask);

/* True if sig is pending for the calling thread or its process. */
bool ps_pending(int sig);

/* sigqueue(pid, sig, an int value), failing the test if it fails. */
#define ps_queue_int(pid, sig, v)					\
	ps_queue_at(__FILE__, __LINE__, (pid), (sig), (v), NULL, false)
#define ps_queue_ptr(pid, sig, p)					\
	ps_queue_at(__FILE__, __LINE__, (pid), (sig), 0, (p), true)
void ps_queue_at(const char *file, int line, pid_t pid, int sig, int ival,
		 void *pval, bool use_ptr);

/*
 * Reads into buf (room for max records) once; fails unless the read
 * returns a whole number of records, at least one.  Returns how many.
 */
#define ps_read_n(fd, buf, max)						\
	ps_read_n_at(__FILE__, __LINE__, (fd), (buf), (max))
int ps_read_n_at(const char *file, int line, int fd, struct pollfs_siginfo *buf,
		 int max);

/* Reads exactly one record with a one-record buffer. */
#define ps_read_one(fd, psi) ps_read_n_at(__FILE__, __LINE__, (fd), (psi), 1)

/*
 * Fails unless the record is signal signo with code code, and the
 * fields that no signal kind fills (errno, padding) are zero.
 */
#define ps_check_sig(psi, signo, code)					\
	ps_check_sig_at(__FILE__, __LINE__, (psi), (signo), (code))
void ps_check_sig_at(const char *file, int line,
		     const struct pollfs_siginfo *psi, int signo, int code);

/* Writes one new mask, failing unless all 8 bytes are taken. */
#define ps_set_mask(fd, mask) ps_set_mask_at(__FILE__, __LINE__, (fd), (mask))
void ps_set_mask_at(const char *file, int line, int fd, uint64_t mask);

/*
 * The "mask:" line of /proc/<pid>/fdinfo/<fd> (pid 0: self), which must
 * be there and read 0x followed by hex digits.
 */
#define ps_fdinfo_mask(pid, fd)						\
	ps_fdinfo_mask_at(__FILE__, __LINE__, (pid), (fd))
uint64_t ps_fdinfo_mask_at(const char *file, int line, pid_t pid, int fd);

/*
 * Fails unless nothing is readable now: no POLLIN, and a non-blocking
 * read of one record gives EAGAIN (O_NONBLOCK is set for that read and
 * restored).
 */
#define ps_expect_empty(fd) ps_expect_empty_at(__FILE__, __LINE__, (fd))
void ps_expect_empty_at(const char *file, int line, int fd);

/*
 * Waits until thread tid of process pid sleeps in one of the system
 * calls nr1 and nr2 (/proc/.../syscall names it, /proc/.../stat shows
 * state S); fails after PT_WAIT_MS.
 */
#define ps_wait_in_syscall(pid, tid, nr1, nr2)				\
	ps_wait_in_syscall_at(__FILE__, __LINE__, (pid), (tid), (nr1), (nr2))
void ps_wait_in_syscall_at(const char *file, int line, pid_t pid, pid_t tid,
			   long nr1, long nr2);

/* Waits until thread tid of this process sleeps in read(). */
#define ps_wait_in_read(tid)						\
	ps_wait_in_syscall_at(__FILE__, __LINE__, getpid(), (tid),	\
			      SYS_read, SYS_read)

/* A pipe used to pass one byte between threads or processes. */
void ps_post(int fd);

/* Waits for one byte up to PT_WAIT_MS; fails if none comes. */
#define ps_wait_post(fd) ps_wait_post_at(__FILE__, __LINE__, (fd))
void ps_wait_post_at(const char *file, int line, int fd);

/*
 * Joins a thread that must end within PT_WAIT_MS; fails if it does not.
 * Returns what it returned.
 */
#define ps_join(t) ps_join_at(__FILE__, __LINE__, (t))
void *ps_join_at(const char *file, int line, pthread_t t);

/*
 * Waits for child pid up to timeout_ms; fails if it is still running then
 * (after killing it).  Returns its wait status.
 */
#define ps_wait_child(pid, timeout_ms)					\
	ps_wait_child_at(__FILE__, __LINE__, (pid), (timeout_ms))
int ps_wait_child_at(const char *file, int line, pid_t pid, int timeout_ms);

/* Fails unless the wait status says the child exited with status 0. */
#define ps_check_exit0(status) ps_check_exit0_at(__FILE__, __LINE__, (status))
void ps_check_exit0_at(const char *file, int line, int status);

#endif /* POLLFS_TESTS_SIGNAL_H */
