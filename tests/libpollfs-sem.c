// SPDX-License-Identifier: MIT
/*
 * libpollfs: the pollable semaphore, waiter by waiter.
 *
 * pollfs_sem_init() (the value, EINVAL above INT_MAX, flags other than
 * POLLFS_FUTEX_SHARED ignored), _post() (EOVERFLOW at INT_MAX, the count
 * unchanged), _trywait() (EAGAIN at 0), _wait() (at once with units; a
 * timeout of CLOCK_MONOTONIC gives ETIMEDOUT, not early; EINVAL; EINTR),
 * each post waking exactly one sleeper; _arm() (1 with units, nothing
 * armed; 0 and armed at 0, readable at the next post), _trywait_fd()
 * (takes a unit, or re-arms and fails with EAGAIN), one post waking
 * either the thread or the descriptor, not both; _cancel() passing on a
 * wake that an abandoned descriptor swallowed to a thread asleep in
 * pollfs_sem_wait(), which without it sleeps on with the count at 1;
 * a semaphore shared between processes; and the documented errors.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <pollfs.h>

PT_BUDGET(55);

/* ---- threads asleep in pollfs_sem_wait() ---- */

#define MAX_SLEEPERS 4

struct sleeper {
	struct pollfs_sem *sem;
	pthread_t th;
	bool timed;
	atomic_int tid;
	atomic_int finished;
	int ret, err;
};

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	struct timespec ts = pt_mono_in(3 * MS(PT_WAIT_MS));

	atomic_store(&s->tid, gettid());
	s->ret = pollfs_sem_wait(s->sem, s->timed ? &ts : NULL);
	s->err = s->ret ? errno : 0;
	atomic_store(&s->finished, 1);
	return NULL;
}

/* Starts a thread in pollfs_sem_wait(sem) and waits until it sleeps. */
static void start_sleeper(struct sleeper *s, struct pollfs_sem *sem,
			  bool timed)
{
	memset(s, 0, sizeof(*s));
	s->sem = sem;
	s->timed = timed;
	CHECK_EQ(pthread_create(&s->th, NULL, sleeper_main, s), 0);
	while (!atomic_load(&s->tid))
		pt_sleep_ms(1);
	fx_wait_sleeping(atomic_load(&s->tid), SYS_futex);
}

static int finished(struct sleeper *s, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += atomic_load(&s[i].finished);
	return k;
}

/* Waits up to PT_WAIT_MS for `want` sleepers to have finished. */
static void wait_finished(struct sleeper *s, int n, int want)
{
	int64_t end = pt_mono() + MS(PT_WAIT_MS);

	while (finished(s, n) < want) {
		if (pt_mono() > end)
			FAIL("%d of %d sleepers finished within %d ms, "
			     "expected %d", finished(s, n), n, PT_WAIT_MS,
			     want);
		pt_sleep_ms(1);
	}
}

static void join_sleeper(struct sleeper *s, int ret)
{
	CHECK_EQ(pthread_join(s->th, NULL), 0);
	CHECK_EQ(s->ret, ret);
}

/* ---- init, post, trywait ---- */

TEST(counting)
{
	struct pollfs_sem sem;

	memset(&sem, 0xff, sizeof(sem));
	CHECK_EQ(pollfs_sem_init(&sem, 0, 0), 0);
	CHECK_EQ(sem.count, 0);
	CHECK_EQ(sem.flags, 0);
	CHECK_EQ(pollfs_sem_init(&sem, 5, POLLFS_FUTEX_SHARED | 0x100), 0);
	CHECK_EQ(sem.count, 5);
	CHECK_EQ(sem.flags, POLLFS_FUTEX_SHARED);
	CHECK_EQ(pollfs_sem_init(&sem, 3, 0x6), 0);
	CHECK_EQ(sem.flags, 0);
	CHECK_ERR(pollfs_sem_init(&sem, (unsigned int)INT_MAX + 1, 0), EINVAL);
	CHECK_ERR(pollfs_sem_init(&sem, UINT_MAX, 0), EINVAL);

	/* the initial value is what can be taken */
	CHECK_EQ(pollfs_sem_init(&sem, 3, 0), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(pollfs_sem_trywait(&sem), 0);
	CHECK_ERR(pollfs_sem_trywait(&sem), EAGAIN);
	CHECK_EQ(sem.count, 0);
	CHECK_EQ(pollfs_sem_post(&sem), 0);
	CHECK_EQ(pollfs_sem_post(&sem), 0);
	CHECK_EQ(sem.count, 2);
	CHECK_EQ(pollfs_sem_wait(&sem, NULL), 0);
	CHECK_EQ(pollfs_sem_trywait(&sem), 0);
	CHECK_ERR(pollfs_sem_trywait(&sem), EAGAIN);

	/* INT_MAX: the last post that fits, then EOVERFLOW */
	CHECK_EQ(pollfs_sem_init(&sem, INT_MAX, 0), 0);
	CHECK_EQ(sem.count, INT_MAX);
	CHECK_ERR(pollfs_sem_post(&sem), EOVERFLOW);
	CHECK_EQ(sem.count, INT_MAX);
	CHECK_EQ(pollfs_sem_init(&sem, INT_MAX - 1, 0), 0);
	CHECK_EQ(pollfs_sem_post(&sem), 0);
	CHECK_EQ(sem.count, INT_MAX);
	CHECK_ERR(pollfs_sem_post(&sem), EOVERFLOW);
	CHECK_ERR(pollfs_sem_post(&sem), EOVERFLOW);
	CHECK_EQ(sem.count, INT_MAX);
	CHECK_EQ(pollfs_sem_trywait(&sem), 0);
	CHECK_EQ(sem.count, INT_MAX - 1);
	CHECK_EQ(pollfs_sem_post(&sem), 0);
	CHECK_EQ(sem.count, INT_MAX);
}

/* ---- wait ---- */

static void on_usr1(int sig)
{
	(void)sig;
}

TEST(wait)
{
	struct sleeper s[MAX_SLEEPERS];
	struct pollfs_sem sem;
	struct sigaction sa;
	struct timespec ts;
	int64_t t0, deadline;

	CHECK_EQ(pollfs_sem_init(&sem, 1, 0), 0);
	/* a unit: at once, whatever the timeout */
	ts.tv_sec = 0;
	ts.tv_nsec = 0;
	CHECK_EQ(pollfs_sem_wait(&sem, &ts), 0);

	/* none: ETIMEDOUT at the time given on CLOCK_MONOTONIC (as
	 * CLOCK_REALTIME it would be decades past), not before */
	t0 = pt_mono();
	ts = pt_mono_in(MS(250));
	deadline = ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
	CHECK_ERR(pollfs_sem_wait(&sem, &ts), ETIMEDOUT);
	if (pt_mono() < deadline)
		FAIL("ETIMEDOUT %lld ns early",
		     (long long)(deadline - pt_mono()));
	CHECK_RANGE(pt_mono() - t0, MS(250), MS(PT_WAIT_MS));
	CHECK_EQ(sem.count, 0);
	ts.tv_sec = 0;
	CHECK_ERR(pollfs_sem_wait(&sem, &ts), ETIMEDOUT);
	ts = pt_mono_in(-MS(5));
	CHECK_ERR(pollfs_sem_wait(&sem, &ts), ETIMEDOUT);

	/* a bad timeout */
	ts = pt_mono_in(MS(100));
	ts.tv_nsec = NSEC_PER_SEC;
	CHECK_ERR(pollfs_sem_wait(&sem, &ts), EINVAL);
	ts.tv_nsec = -1;
	CHECK_ERR(pollfs_sem_wait(&sem, &ts), EINVAL);
	ts.tv_sec = -1;
	ts.tv_nsec = 0;
	CHECK_ERR(pollfs_sem_wait(&sem, &ts), EINVAL);
	CHECK_EQ(sem.count, 0);

	/* a sleeper woken by a post takes the unit */
	for (int timed = 0; timed <= 1; timed++) {
		start_sleeper(&s[0], &sem, timed);
		CHECK_EQ(pollfs_sem_post(&sem), 0);
		wait_finished(s, 1, 1);
		join_sleeper(&s[0], 0);
		CHECK_EQ(sem.count, 0);
	}

	/* each post wakes exactly one of three sleepers */
	for (int i = 0; i < 3; i++)
		start_sleeper(&s[i], &sem, i == 1);
	for (int k = 1; k <= 3; k++) {
		CHECK_EQ(pollfs_sem_post(&sem), 0);
		wait_finished(s, 3, k);
		pt_sleep_ms(150);
		CHECK_EQ(finished(s, 3), k);
		CHECK_EQ(sem.count, 0);
		for (int i = 0; i < 3; i++)
			if (!atomic_load(&s[i].finished) &&
			    !fx_task_sleeps_in(atomic_load(&s[i].tid),
					       SYS_futex))
				FAIL("after %d posts, sleeper %d is awake "
				     "without a unit", k, i);
	}
	for (int i = 0; i < 3; i++)
		join_sleeper(&s[i], 0);

	/* a signal handler interrupts the wait: EINTR, nothing taken */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	for (int timed = 0; timed <= 1; timed++) {
		start_sleeper(&s[0], &sem, timed);
		CHECK_SYS(syscall(SYS_tgkill, getpid(),
				  atomic_load(&s[0].tid), SIGUSR1));
		wait_finished(s, 1, 1);
		join_sleeper(&s[0], -1);
		CHECK_EQ(s[0].err, EINTR);
	}
	CHECK_EQ(sem.count, 0);
}

/* ---- descriptors ---- */

TEST(fd)
{
	struct sleeper s[1];
	struct pollfs_sem sem;
	int fd, tfd;
	bool fd_won;

	fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK));

	/* units: arm returns 1 and arms nothing */
	CHECK_EQ(pollfs_sem_init(&sem, 2, 0), 0);
	CHECK_EQ(pollfs_sem_arm(&sem, fd), 1);
	fx_expect_unarmed(fd);
	CHECK_EQ(pollfs_sem_trywait_fd(&sem, fd), 0);
	CHECK_EQ(pollfs_sem_trywait_fd(&sem, fd), 0);
	fx_expect_unarmed(fd);
	CHECK_EQ(sem.count, 0);

	/* none: trywait_fd arms and fails with EAGAIN */
	CHECK_ERR(pollfs_sem_trywait_fd(&sem, fd), EAGAIN);
	fx_expect_armed(fd);
	CHECK_EQ(pollfs_sem_post(&sem), 0);
	fx_expect_ready(fd);
	CHECK_EQ(sem.count, 1);	/* the wake takes no unit */
	CHECK_EQ(pollfs_sem_trywait_fd(&sem, fd), 0);
	CHECK_EQ(sem.count, 0);
	/* the unread wake is replaced by the next arming */
	CHECK_ERR(pollfs_sem_trywait_fd(&sem, fd), EAGAIN);
	fx_expect_armed(fd);

	/* arm at 0: armed on the count word */
	CHECK_EQ(pollfs_sem_arm(&sem, fd), 0);
	fx_expect_armed(fd);
	CHECK_EQ(pollfs_sem_post(&sem), 0);
	fx_expect_rec(fd, &sem.count, 0, 0);
	CHECK_EQ(pollfs_sem_trywait_fd(&sem, fd), 0);
	CHECK_ERR(pollfs_sem_trywait(&sem), EAGAIN);

	/* one post, an armed descriptor and a sleeping thread: exactly
	 * one of them wakes; the second post wakes the other */
	CHECK_EQ(pollfs_sem_arm(&sem, fd), 0);
	start_sleeper(&s[0], &sem, true);
	CHECK_EQ(pollfs_sem_post(&sem), 0);
	fd_won = pt_poll_in(fd, 300);
	pt_sleep_ms(100);
	if (fd_won == (bool)atomic_load(&s[0].finished))
		FAIL("one post: descriptor readable %d, thread finished %d",
		     fd_won, atomic_load(&s[0].finished));
	if (fd_won) {
		CHECK(fx_task_sleeps_in(atomic_load(&s[0].tid), SYS_futex));
		CHECK_EQ(pollfs_sem_trywait_fd(&sem, fd), 0);
		CHECK_EQ(pollfs_sem_post(&sem), 0);
		wait_finished(s, 1, 1);
	} else {
		fx_expect_armed(fd);
		CHECK_EQ(pollfs_sem_post(&sem), 0);
		pt_wait_readable(fd, PT_WAIT_MS);
		CHECK_EQ(pollfs_sem_trywait_fd(&sem, fd), 0);
	}
	join_sleeper(&s[0], 0);
	CHECK_EQ(sem.count, 0);
	pt_diag("one post, one armed descriptor, one thread: the %s woke",
		fd_won ? "descriptor" : "thread");

	/* errors, at 0 */
	CHECK_ERR(pollfs_sem_arm(&sem, -1), EBADF);
	CHECK_ERR(pollfs_sem_trywait_fd(&sem, -1), EBADF);
	CHECK_ERR(pollfs_sem_cancel(&sem, -1), EBADF);
	tfd = CHECK_SYS(pollfs_timer(POLLFS_NONBLOCK));
	CHECK_ERR(pollfs_sem_arm(&sem, tfd), EINVAL);
	CHECK_ERR(pollfs_sem_trywait_fd(&sem, tfd), EINVAL);
	CHECK_ERR(pollfs_sem_cancel(&sem, tfd), EINVAL);
	CHECK_SYS(close(tfd));
	CHECK_EQ(sem.count, 0);
	CHECK_SYS(close(fd));
}

/* ---- cancel ---- */

/*
 * A descriptor armed, then a thread asleep in pollfs_sem_wait(), then one
 * post: futex waiters of one priority are woken in the order they
 * queued, so the post wakes the descriptor and the thread sleeps on with
 * the count at 1.  Checked here, as the ground for what follows.
 */
static void swallow(struct pollfs_sem *sem, int fd, struct sleeper *s)
{
	CHECK_EQ(pollfs_sem_init(sem, 0, sem->flags), 0);
	CHECK_EQ(pollfs_sem_arm(sem, fd), 0);
	start_sleeper(s, sem, true);
	CHECK_EQ(pollfs_sem_post(sem), 0);
	pt_wait_readable(fd, PT_WAIT_MS);
	pt_sleep_ms(100);
	if (atomic_load(&s->finished))
		FAIL("the post woke the thread, not the descriptor armed "
		     "before it slept: the construction failed");
	CHECK(fx_task_sleeps_in(atomic_load(&s->tid), SYS_futex));
	CHECK_EQ(sem->count, 1);
}

TEST(cancel)
{
	struct sleeper s[1];
	struct pollfs_sem sem;
	int fd;

	CHECK_EQ(pollfs_sem_init(&sem, 0, 0), 0);

	/* without cancel: closing the descriptor strands the thread */
	fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK));
	swallow(&sem, fd, s);
	CHECK_SYS(close(fd));
	pt_sleep_ms(300);
	CHECK(!atomic_load(&s[0].finished));
	CHECK_EQ(sem.count, 1);
	/* (another post frees it, and a unit stays over) */
	CHECK_EQ(pollfs_sem_post(&sem), 0);
	wait_finished(s, 1, 1);
	join_sleeper(&s[0], 0);
	CHECK_EQ(sem.count, 1);

	/* with cancel: the wake is passed on and the thread gets the unit */
	fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK));
	swallow(&sem, fd, s);
	CHECK_EQ(pollfs_sem_cancel(&sem, fd), 0);
	wait_finished(s, 1, 1);
	join_sleeper(&s[0], 0);
	CHECK_EQ(sem.count, 0);
	fx_expect_unarmed(fd);

	/* an armed descriptor not woken, at 0: withdrawn, nobody woken */
	CHECK_EQ(pollfs_sem_arm(&sem, fd), 0);
	start_sleeper(&s[0], &sem, true);
	CHECK_EQ(pollfs_sem_cancel(&sem, fd), 0);
	fx_expect_unarmed(fd);
	pt_sleep_ms(100);
	CHECK(!atomic_load(&s[0].finished));
	CHECK(fx_task_sleeps_in(atomic_load(&s[0].tid), SYS_futex));
	/* the next post goes to the thread, the descriptor no longer
	 * waiting */
	CHECK_EQ(pollfs_sem_post(&sem), 0);
	wait_finished(s, 1, 1);
	join_sleeper(&s[0], 0);
	fx_expect_unarmed(fd);
	CHECK_EQ(sem.count, 0);

	/* a wake already consumed by trywait_fd: nothing to pass on */
	CHECK_EQ(pollfs_sem_arm(&sem, fd), 0);
	CHECK_EQ(pollfs_sem_post(&sem), 0);
	fx_expect_ready(fd);
	CHECK_EQ(pollfs_sem_trywait_fd(&sem, fd), 0);
	CHECK_EQ(pollfs_sem_cancel(&sem, fd), 0);
	fx_expect_unarmed(fd);
	CHECK_EQ(sem.count, 0);

	/* never armed, with units: harmless */
	CHECK_EQ(pollfs_sem_post(&sem), 0);
	CHECK_EQ(pollfs_sem_cancel(&sem, fd), 0);
	CHECK_EQ(sem.count, 1);
	CHECK_EQ(pollfs_sem_trywait(&sem), 0);
	CHECK_SYS(close(fd));
}

/* ---- shared between processes ---- */

struct xshared {
	struct pollfs_sem sem;
	atomic_int child_tid;
};

static int child_waits(void *arg)
{
	struct xshared *x = arg;
	struct timespec ts = pt_mono_in(3 * MS(PT_WAIT_MS));

	atomic_store(&x->child_tid, gettid());
	CHECK_EQ(pollfs_sem_wait(&x->sem, &ts), 0);
	return PT_PASS;
}

static int child_posts(void *arg)
{
	struct xshared *x = arg;

	pt_sleep_ms(50);
	CHECK_EQ(pollfs_sem_post(&x->sem), 0);
	return PT_PASS;
}

static int child_cancels(void *arg)
{
	struct xshared *x = arg;
	int fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK));

	/* this process's descriptor takes the post; its cancel passes the
	 * wake on to the parent's sleeper */
	CHECK_EQ(pollfs_sem_arm(&x->sem, fd), 0);
	atomic_store(&x->child_tid, gettid());
	pt_wait_readable(fd, PT_WAIT_MS);
	CHECK_EQ(pollfs_sem_cancel(&x->sem, fd), 0);
	return PT_PASS;
}

static struct xshared *xsh;

static void *run_child_cancels(void *unused)
{
	(void)unused;
	return (void *)(intptr_t)pt_run_child(child_cancels, xsh,
					      3 * PT_WAIT_MS);
}

TEST(shared)
{
	struct sleeper s[1];
	pthread_t th;
	void *ret;
	pid_t pid;
	int fd, status;

	xsh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(xsh != MAP_FAILED);
	CHECK_EQ(pollfs_sem_init(&xsh->sem, 0, POLLFS_FUTEX_SHARED), 0);

	/* a child asleep in pollfs_sem_wait(), a post from here */
	pid = fx_fork();
	if (!pid)
		_exit(child_waits(xsh));
	while (!atomic_load(&xsh->child_tid))
		pt_sleep_ms(1);
	fx_wait_sleeping(atomic_load(&xsh->child_tid), SYS_futex);
	CHECK_EQ(pollfs_sem_post(&xsh->sem), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == PT_PASS);
	CHECK_EQ(xsh->sem.count, 0);

	/* a descriptor armed here, a post from a child */
	fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK));
	CHECK_EQ(pollfs_sem_arm(&xsh->sem, fd), 0);
	CHECK_EQ(pt_run_child(child_posts, xsh, PT_WAIT_MS), 0);
	pt_wait_readable(fd, PT_WAIT_MS);
	fx_expect_rec(fd, &xsh->sem.count, 0, POLLFS_FUTEX_SHARED);
	CHECK_EQ(pollfs_sem_trywait_fd(&xsh->sem, fd), 0);
	CHECK_EQ(xsh->sem.count, 0);
	CHECK_SYS(close(fd));

	/* a child's descriptor swallows the post; its cancel hands it to
	 * a thread asleep here */
	atomic_store(&xsh->child_tid, 0);
	CHECK_EQ(pthread_create(&th, NULL, run_child_cancels, NULL), 0);
	while (!atomic_load(&xsh->child_tid))
		pt_sleep_ms(1);
	fx_wait_sleeping(atomic_load(&xsh->child_tid), PT_SYS_POLL);
	start_sleeper(&s[0], &xsh->sem, true);
	CHECK_EQ(pollfs_sem_post(&xsh->sem), 0);
	CHECK_EQ(pthread_join(th, &ret), 0);
	CHECK_EQ((intptr_t)ret, 0);
	wait_finished(s, 1, 1);
	join_sleeper(&s[0], 0);
	CHECK_EQ(xsh->sem.count, 0);
	CHECK_SYS(munmap(xsh, 4096));
}

int main(void)
{
	return pt_run_tests();
}
