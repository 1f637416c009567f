// SPDX-License-Identifier: MIT
/*
 * libpollfs: the pollable event, one waiter at a time.
 *
 * pollfs_event_init() (flags other than POLLFS_FUTEX_SHARED ignored; an
 * all-zero structure is a clear private event), _set() (wakes only on
 * the change from clear: setting a set event wakes nobody), _reset()
 * (wakes nobody), _is_set(), _wait() (at once when set; a thread asleep
 * is woken by a set; an absolute timeout of CLOCK_MONOTONIC gives
 * ETIMEDOUT, not early; a bad timeout EINVAL; a signal handler EINTR),
 * _arm() (0 and armed on the state word while clear, the record read
 * back as armed; 1 and nothing armed, the previous wait left alone,
 * while set; the documented errors).
 * libpollfs-event-wake checks many waiters of all kinds at once.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include <pollfs.h>

PT_BUDGET(50);

static struct pollfs_event zeroed;	/* never initialized */

/* ---- init, set, reset, is_set ---- */

TEST(state)
{
	struct pollfs_event ev;
	uint32_t other = 0;
	int fd;

	memset(&ev, 0xff, sizeof(ev));
	pollfs_event_init(&ev, 0);
	CHECK_EQ(ev.state, 0);
	CHECK_EQ(ev.flags, 0);
	CHECK_EQ(pollfs_event_is_set(&ev), 0);
	memset(&ev, 0xff, sizeof(ev));
	pollfs_event_init(&ev, POLLFS_FUTEX_SHARED | 0x100 | POLLFS_NONBLOCK);
	CHECK_EQ(ev.state, 0);
	CHECK_EQ(ev.flags, POLLFS_FUTEX_SHARED);
	pollfs_event_init(&ev, 0x6);
	CHECK_EQ(ev.flags, 0);

	pollfs_event_set(&ev);
	CHECK_EQ(ev.state, 1);
	CHECK_EQ(pollfs_event_is_set(&ev), 1);
	pollfs_event_set(&ev);
	CHECK_EQ(pollfs_event_is_set(&ev), 1);
	pollfs_event_reset(&ev);
	CHECK_EQ(ev.state, 0);
	CHECK_EQ(pollfs_event_is_set(&ev), 0);
	pollfs_event_reset(&ev);
	CHECK_EQ(pollfs_event_is_set(&ev), 0);

	/* neither a set of a set event nor a reset wakes anybody: an
	 * object waiting on the state word while it is 1 stays armed */
	fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK));
	pollfs_event_set(&ev);
	CHECK_EQ(pollfs_futex_arm(fd, &ev.state, 1, 0), 0);
	pollfs_event_set(&ev);
	fx_expect_armed(fd);
	pollfs_event_reset(&ev);
	fx_expect_armed(fd);
	/* while the set of a clear event does wake */
	CHECK_EQ(pollfs_futex_arm(fd, &ev.state, 0, 0), 0);
	pollfs_event_set(&ev);
	fx_expect_ready(fd);
	fx_expect_rec(fd, &ev.state, 0, 0);

	/* and wakes nothing else */
	CHECK_EQ(pollfs_futex_arm(fd, &other, 0, 0), 0);
	pollfs_event_reset(&ev);
	pollfs_event_set(&ev);
	fx_expect_armed(fd);
	CHECK_SYS(close(fd));

	/* zeros are a clear private event */
	CHECK_EQ(pollfs_event_is_set(&zeroed), 0);
	fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK));
	CHECK_EQ(pollfs_event_arm(&zeroed, fd), 0);
	pollfs_event_set(&zeroed);
	fx_expect_rec(fd, &zeroed.state, 0, 0);
	CHECK_EQ(pollfs_event_wait(&zeroed, NULL), 0);
	CHECK_SYS(close(fd));
}

/* ---- wait ---- */

static struct pollfs_event wev;
static atomic_int waiter_tid;
static struct timespec waiter_abstime;
static bool waiter_timed;
static int waiter_errno;

static void *waiter(void *unused)
{
	int ret;

	(void)unused;
	atomic_store(&waiter_tid, gettid());
	ret = pollfs_event_wait(&wev, waiter_timed ? &waiter_abstime : NULL);
	waiter_errno = ret ? errno : 0;
	return (void *)(intptr_t)ret;
}

static void start_waiter(pthread_t *th, bool timed)
{
	waiter_timed = timed;
	waiter_abstime = pt_mono_in(3 * MS(PT_WAIT_MS));
	atomic_store(&waiter_tid, 0);
	CHECK_EQ(pthread_create(th, NULL, waiter, NULL), 0);
	while (!atomic_load(&waiter_tid))
		pt_sleep_ms(1);
	fx_wait_sleeping(atomic_load(&waiter_tid), SYS_futex);
}

static void on_usr1(int sig)
{
	(void)sig;
}

TEST(wait)
{
	struct timespec ts;
	struct sigaction sa;
	pthread_t th;
	int64_t t0, el;
	void *ret;

	pollfs_event_init(&wev, 0);

	/* a timeout on CLOCK_MONOTONIC: were it CLOCK_REALTIME, this time
	 * would be decades past and the call would return at once */
	t0 = pt_mono();
	ts = pt_mono_in(MS(250));
	CHECK_ERR(pollfs_event_wait(&wev, &ts), ETIMEDOUT);
	el = pt_mono() - t0;
	if (pt_mono() < ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec)
		FAIL("ETIMEDOUT %lld ns before the time given",
		     (long long)(ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec -
				 pt_mono()));
	CHECK_RANGE(el, MS(250), MS(PT_WAIT_MS));

	/* a time already past; time zero */
	ts = pt_mono_in(-MS(1));
	CHECK_ERR(pollfs_event_wait(&wev, &ts), ETIMEDOUT);
	ts.tv_sec = 0;
	ts.tv_nsec = 0;
	CHECK_ERR(pollfs_event_wait(&wev, &ts), ETIMEDOUT);

	/* a bad timeout */
	ts = pt_mono_in(MS(100));
	ts.tv_nsec = NSEC_PER_SEC;
	CHECK_ERR(pollfs_event_wait(&wev, &ts), EINVAL);
	ts.tv_nsec = -1;
	CHECK_ERR(pollfs_event_wait(&wev, &ts), EINVAL);
	ts.tv_sec = -1;
	ts.tv_nsec = 0;
	CHECK_ERR(pollfs_event_wait(&wev, &ts), EINVAL);

	/* set: at once, whatever the timeout */
	pollfs_event_set(&wev);
	CHECK_EQ(pollfs_event_wait(&wev, NULL), 0);
	ts.tv_sec = 0;
	CHECK_EQ(pollfs_event_wait(&wev, &ts), 0);
	pollfs_event_reset(&wev);

	/* a thread asleep is woken by the set, with and without timeout */
	for (int timed = 0; timed <= 1; timed++) {
		start_waiter(&th, timed);
		t0 = pt_mono();
		pollfs_event_set(&wev);
		CHECK_EQ(pthread_join(th, &ret), 0);
		CHECK_EQ((intptr_t)ret, 0);
		CHECK(pt_mono() - t0 < MS(PT_WAIT_MS));
		pollfs_event_reset(&wev);
	}

	/* a set undone at once may or may not leave the sleeper asleep
	 * (the state is the whole event); a later set wakes it */
	start_waiter(&th, true);
	pollfs_event_set(&wev);
	pollfs_event_reset(&wev);
	pt_sleep_ms(100);
	pollfs_event_set(&wev);
	CHECK_EQ(pthread_join(th, &ret), 0);
	CHECK_EQ((intptr_t)ret, 0);
	pollfs_event_reset(&wev);

	/* a signal handler interrupts the wait: EINTR */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	for (int timed = 0; timed <= 1; timed++) {
		start_waiter(&th, timed);
		CHECK_SYS(syscall(SYS_tgkill, getpid(),
				  atomic_load(&waiter_tid), SIGUSR1));
		CHECK_EQ(pthread_join(th, &ret), 0);
		CHECK_EQ((intptr_t)ret, -1);
		CHECK_EQ(waiter_errno, EINTR);
	}
	CHECK_EQ(pollfs_event_is_set(&wev), 0);
}

/* ---- arm ---- */

TEST(arm)
{
	struct pollfs_event ev, *sev;
	uint32_t other = 5;
	int fd, tfd;

	pollfs_event_init(&ev, 0);
	fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK));

	/* clear: armed on the state word */
	CHECK_EQ(pollfs_event_arm(&ev, fd), 0);
	fx_expect_armed(fd);
	pollfs_event_set(&ev);
	fx_expect_ready(fd);
	fx_expect_rec(fd, &ev.state, 0, 0);
	fx_expect_unarmed(fd);

	/* set: 1, nothing armed */
	CHECK_EQ(pollfs_event_arm(&ev, fd), 1);
	fx_expect_unarmed(fd);

	/* set: what fd waited for is left alone */
	CHECK_EQ(pollfs_futex_arm(fd, &other, 5, 0), 0);
	CHECK_EQ(pollfs_event_arm(&ev, fd), 1);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&other, 1, FX_PRIVATE), 1);
	fx_expect_rec(fd, &other, 5, 0);

	/* clear: the arming replaces what fd waited for */
	pollfs_event_reset(&ev);
	CHECK_EQ(pollfs_futex_arm(fd, &other, 5, 0), 0);
	CHECK_EQ(pollfs_event_arm(&ev, fd), 0);
	CHECK_EQ(fx_wake(&other, 1, FX_PRIVATE), 0);
	fx_expect_armed(fd);

	/* armed again on POLLIN instead of a read: clear again, the woken
	 * wait is replaced and fd no longer readable; still set, 1 */
	pollfs_event_set(&ev);
	fx_expect_ready(fd);
	CHECK_EQ(pollfs_event_arm(&ev, fd), 1);
	fx_expect_ready(fd);
	pollfs_event_reset(&ev);
	CHECK_EQ(pollfs_event_arm(&ev, fd), 0);
	fx_expect_armed(fd);
	pollfs_event_set(&ev);
	fx_expect_rec(fd, &ev.state, 0, 0);

	/* shared, in shared memory: a record with POLLFS_FUTEX_SHARED */
	sev = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sev != MAP_FAILED);
	pollfs_event_init(sev, POLLFS_FUTEX_SHARED);
	CHECK_EQ(pollfs_event_arm(sev, fd), 0);
	CHECK_EQ(fx_wake(&sev->state, 1, FX_PRIVATE), 0);
	fx_expect_armed(fd);
	pollfs_event_set(sev);
	fx_expect_rec(fd, &sev->state, 0, POLLFS_FUTEX_SHARED);
	CHECK_SYS(munmap(sev, 4096));

	/* errors, while clear */
	pollfs_event_reset(&ev);
	CHECK_ERR(pollfs_event_arm(&ev, -1), EBADF);
	tfd = CHECK_SYS(pollfs_timer(0));
	CHECK_ERR(pollfs_event_arm(&ev, tfd), EINVAL);
	CHECK_SYS(close(tfd));
	CHECK_SYS(close(fd));
}

int main(void)
{
	return pt_run_tests();
}
