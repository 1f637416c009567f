// SPDX-License-Identifier: MIT
/*
 * libpollfs: pollfs_signal(), pollfs_signal_setmask(), pollfs_signal_read().
 *
 * The sigset_t is converted bit for bit for signals 1 to 64 (the real-time
 * signals up to SIGRTMAX = 64 included), SIGKILL and SIGSTOP dropped, as
 * the fdinfo mask shows; the creation flags reach the file; reads return
 * whole records, at most n, lowest signal first and real-time signals in
 * queue order, with their siginfo; a new mask applies at once, also to a
 * thread asleep in a read; and the documented errors.
 */
#include "lib/signal.h"
#include "lib/futex.h"

#include <stdatomic.h>
#include <sys/mman.h>

#include <pollfs.h>

PT_BUDGET(50);

/* The "mask:" value of fd's fdinfo. */
static uint64_t fdinfo_mask(int fd)
{
	char buf[1024];
	unsigned long long mask;
	const char *p;

	pt_fdinfo(fd, buf, sizeof(buf));
	p = strstr(buf, "\nmask: ");
	if (!p || sscanf(p, "\nmask: %llx", &mask) != 1)
		FAIL("no mask line in the fdinfo of fd %d: %s", fd, buf);
	return mask;
}

static void set_of(sigset_t *set, const int *sigs, int n)
{
	CHECK_SYS(sigemptyset(set));
	for (int i = 0; i < n; i++)
		CHECK_SYS(sigaddset(set, sigs[i]));
}

static void fill_pattern(struct pollfs_siginfo *info, size_t n)
{
	memset(info, 0xa5, n * sizeof(*info));
}

static bool untouched(const struct pollfs_siginfo *info)
{
	const unsigned char *p = (const unsigned char *)info;

	for (size_t i = 0; i < sizeof(*info); i++)
		if (p[i] != 0xa5)
			return false;
	return true;
}

static void queue_rt(int sig, int value)
{
	union sigval v = { .sival_int = value };

	CHECK_SYS(sigqueue(getpid(), sig, v));
}

static void check_queued(const struct pollfs_siginfo *si, int sig, int value)
{
	CHECK_EQ(si->psi_signo, sig);
	CHECK_EQ(si->psi_code, SI_QUEUE);
	CHECK_EQ(si->psi_pid, getpid());
	CHECK_EQ(si->psi_uid, getuid());
	CHECK_EQ(si->psi_int, value);
}

/* From kill() (SI_USER) or tgkill() (SI_TKILL) by this process. */
static void check_sent(const struct pollfs_siginfo *si, int sig, int code)
{
	CHECK_EQ(si->psi_signo, sig);
	CHECK_EQ(si->psi_code, code);
	CHECK_EQ(si->psi_pid, getpid());
	CHECK_EQ(si->psi_uid, getuid());
}

/* ---- the sigset_t conversion ---- */

TEST(conversion)
{
	const int some[] = { SIGUSR1, SIGRTMIN, SIGRTMIN + 3, SIGRTMAX,
			     SIGKILL, SIGSTOP };
	uint64_t want;
	sigset_t set;
	int fd;

	CHECK_EQ(SIGRTMAX, 64);
	set_of(&set, some, 6);
	fd = CHECK_SYS(pollfs_signal(&set, 0));
	want = ps_bit(SIGUSR1) | ps_bit(SIGRTMIN) | ps_bit(SIGRTMIN + 3) |
	       ps_bit(64);
	CHECK_EQ(fdinfo_mask(fd), want);

	/* the empty set */
	CHECK_SYS(sigemptyset(&set));
	CHECK_EQ(pollfs_signal_setmask(fd, &set), 0);
	CHECK_EQ(fdinfo_mask(fd), 0);

	/* every bit of the first 64, glibc's reserved 32 and 33 included:
	 * all but SIGKILL and SIGSTOP; bits beyond 64 mean nothing */
	memset(&set, 0xff, sizeof(set));
	CHECK_EQ(pollfs_signal_setmask(fd, &set), 0);
	CHECK_EQ(fdinfo_mask(fd), ~(ps_bit(SIGKILL) | ps_bit(SIGSTOP)));

	/* sigfillset() leaves out what glibc reserves */
	CHECK_SYS(sigfillset(&set));
	want = ~(ps_bit(SIGKILL) | ps_bit(SIGSTOP));
	for (int sig = 32; sig <= 33; sig++)
		if (sigismember(&set, sig) != 1)
			want &= ~ps_bit(sig);
	CHECK_EQ(pollfs_signal_setmask(fd, &set), 0);
	CHECK_EQ(fdinfo_mask(fd), want);

	/* one signal at a time: each lands on bit signo - 1 */
	for (int sig = 1; sig <= 64; sig++) {
		CHECK_SYS(sigemptyset(&set));
		/* glibc refuses to add its reserved signals; set the bit */
		if (sigaddset(&set, sig))
			set.__val[(sig - 1) / (8 * sizeof(set.__val[0]))] |=
				1UL << ((sig - 1) % (8 * sizeof(set.__val[0])));
		CHECK_EQ(sigismember(&set, sig), 1);
		CHECK_EQ(pollfs_signal_setmask(fd, &set), 0);
		want = sig == SIGKILL || sig == SIGSTOP ? 0 : ps_bit(sig);
		if (fdinfo_mask(fd) != want)
			FAIL("signal %d alone: fdinfo mask %#llx, expected "
			     "%#llx", sig, (unsigned long long)fdinfo_mask(fd),
			     (unsigned long long)want);
	}

	/* the mask given at creation is converted alike */
	CHECK_SYS(close(fd));
	memset(&set, 0xff, sizeof(set));
	fd = CHECK_SYS(pollfs_signal(&set, 0));
	CHECK_EQ(fdinfo_mask(fd), ~(ps_bit(SIGKILL) | ps_bit(SIGSTOP)));
	CHECK_SYS(close(fd));
}

/* ---- flags ---- */

TEST(flags)
{
	sigset_t set;
	int fd;

	set_of(&set, (const int[]){ SIGUSR1 }, 1);
	CHECK_ERR(pollfs_signal(&set, O_WRONLY), EINVAL);
	CHECK_ERR(pollfs_signal(&set, O_APPEND), EINVAL);
	CHECK_ERR(pollfs_signal(&set, -1), EINVAL);
	CHECK_ERR(pollfs_signal(&set, POLLFS_NONBLOCK | 0x10000000), EINVAL);

	fd = CHECK_SYS(pollfs_signal(&set, 0));
	CHECK_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	CHECK_SYS(close(fd));

	fd = CHECK_SYS(pollfs_signal(&set, POLLFS_CLOEXEC));
	CHECK_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	CHECK_SYS(close(fd));

	fd = CHECK_SYS(pollfs_signal(&set, POLLFS_NONBLOCK));
	CHECK_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_SYS(close(fd));

	fd = CHECK_SYS(pollfs_signal(&set, O_NONBLOCK | O_CLOEXEC));
	CHECK_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_SYS(close(fd));
}

/* ---- reading ---- */

TEST(read)
{
	const int sigs[] = { SIGUSR1, SIGRTMIN, SIGRTMIN + 3, SIGRTMAX };
	struct pollfs_siginfo info[8];
	sigset_t set;
	int fd;

	set_of(&set, sigs, 4);
	fd = CHECK_SYS(pollfs_signal(&set, POLLFS_NONBLOCK));
	CHECK_ERR(pollfs_signal_read(fd, info, 1), EAGAIN);
	CHECK(!pt_poll_in(fd, 0));

	/* the highest real-time signal, with its value */
	queue_rt(SIGRTMAX, 0x1234);
	CHECK(pt_poll_in(fd, 0));
	fill_pattern(info, 8);
	CHECK_EQ(pollfs_signal_read(fd, info, 8), 1);
	check_queued(&info[0], 64, 0x1234);
	CHECK(untouched(&info[1]));
	CHECK_ERR(pollfs_signal_read(fd, info, 8), EAGAIN);

	/* at most n, lowest first, real-time signals in queue order */
	queue_rt(SIGRTMIN + 3, 1);
	queue_rt(SIGRTMIN + 3, 2);
	queue_rt(SIGRTMIN, 3);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_SYS(kill(getpid(), SIGUSR1));	/* standard: pending once */
	fill_pattern(info, 8);
	CHECK_EQ(pollfs_signal_read(fd, info, 2), 2);
	check_sent(&info[0], SIGUSR1, SI_USER);
	check_queued(&info[1], SIGRTMIN, 3);
	CHECK(untouched(&info[2]));
	fill_pattern(info, 8);
	CHECK_EQ(pollfs_signal_read(fd, info, 8), 2);
	check_queued(&info[0], SIGRTMIN + 3, 1);
	check_queued(&info[1], SIGRTMIN + 3, 2);
	CHECK(untouched(&info[2]));
	CHECK_ERR(pollfs_signal_read(fd, info, 8), EAGAIN);

	/* a signal outside the mask is left pending; a new mask takes it */
	CHECK_SYS(kill(getpid(), SIGUSR2));
	CHECK_ERR(pollfs_signal_read(fd, info, 8), EAGAIN);
	CHECK(!pt_poll_in(fd, 0));
	CHECK(ps_pending(SIGUSR2));
	set_of(&set, (const int[]){ SIGUSR2, SIGKILL }, 2);
	CHECK_EQ(pollfs_signal_setmask(fd, &set), 0);
	CHECK_EQ(fdinfo_mask(fd), ps_bit(SIGUSR2));
	CHECK(pt_poll_in(fd, 0));
	fill_pattern(info, 8);
	CHECK_EQ(pollfs_signal_read(fd, info, 8), 1);
	check_sent(&info[0], SIGUSR2, SI_USER);
	CHECK(!ps_pending(SIGUSR2));

	/* and the old mask's signals are no longer read */
	queue_rt(SIGRTMAX, 7);
	CHECK_ERR(pollfs_signal_read(fd, info, 8), EAGAIN);
	set_of(&set, sigs, 4);
	CHECK_EQ(pollfs_signal_setmask(fd, &set), 0);
	CHECK_EQ(pollfs_signal_read(fd, info, 8), 1);
	check_queued(&info[0], SIGRTMAX, 7);
	CHECK_SYS(close(fd));
}

/* ---- a blocking read, and a mask changed under it ---- */

static int reader_fd;
static atomic_int reader_tid;
static struct pollfs_siginfo reader_info[2];

static void *reader(void *unused)
{
	(void)unused;
	atomic_store(&reader_tid, ps_gettid());
	return (void *)(intptr_t)pollfs_signal_read(reader_fd, reader_info, 2);
}

static void start_reader(pthread_t *th)
{
	atomic_store(&reader_tid, 0);
	fill_pattern(reader_info, 2);
	CHECK_EQ(pthread_create(th, NULL, reader, NULL), 0);
	while (!atomic_load(&reader_tid))
		pt_sleep_ms(1);
	fx_wait_sleeping(atomic_load(&reader_tid), SYS_read);
}

TEST(blocking)
{
	pthread_t th;
	sigset_t set;
	void *ret;

	set_of(&set, (const int[]){ SIGUSR2 }, 1);
	reader_fd = CHECK_SYS(pollfs_signal(&set, 0));

	/* woken by a signal of its mask, sent to it */
	start_reader(&th);
	CHECK_SYS(ps_tgkill(getpid(), atomic_load(&reader_tid), SIGUSR2));
	CHECK_EQ(pthread_join(th, &ret), 0);
	CHECK_EQ((intptr_t)ret, 1);
	check_sent(&reader_info[0], SIGUSR2, SI_TKILL);
	CHECK(untouched(&reader_info[1]));

	/* a signal outside the mask leaves it asleep; the new mask that
	 * takes it in wakes it */
	start_reader(&th);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	pt_sleep_ms(100);
	CHECK(fx_task_sleeps_in(atomic_load(&reader_tid), SYS_read));
	set_of(&set, (const int[]){ SIGUSR1 }, 1);
	CHECK_EQ(pollfs_signal_setmask(reader_fd, &set), 0);
	CHECK_EQ(pthread_join(th, &ret), 0);
	CHECK_EQ((intptr_t)ret, 1);
	check_sent(&reader_info[0], SIGUSR1, SI_USER);
	CHECK_SYS(close(reader_fd));
}

/* ---- errors ---- */

TEST(errors)
{
	struct pollfs_siginfo info[2];
	struct itimerspec its = { .it_value = { .tv_nsec = 1000000 } };
	struct pollfs_timer_event tev;
	void *none;
	sigset_t set;
	int fd, tfd, p[2];

	set_of(&set, (const int[]){ SIGUSR1 }, 1);
	fd = CHECK_SYS(pollfs_signal(&set, POLLFS_NONBLOCK));

	/* n == 0: a buffer smaller than a record */
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_ERR(pollfs_signal_read(fd, info, 0), EINVAL);
	CHECK(ps_pending(SIGUSR1));	/* nothing was taken */

	/* a buffer that cannot be written */
	none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(none != MAP_FAILED);
	CHECK_ERR(pollfs_signal_read(fd, none, 1), EFAULT);
	CHECK_SYS(munmap(none, 4096));

	CHECK_ERR(pollfs_signal_read(-1, info, 1), EBADF);
	CHECK_ERR(pollfs_signal_setmask(-1, &set), EBADF);
	CHECK_ERR(pollfs_signal_read(1000, info, 1), EBADF);

	/* another kind of object refuses the mask: a timer's write record
	 * is 40 bytes */
	tfd = CHECK_SYS(pollfs_timer(POLLFS_NONBLOCK));
	CHECK_ERR(pollfs_signal_setmask(tfd, &set), EINVAL);

	/* a read that returns part of a record: not a signal object */
	CHECK_EQ(pollfs_timer_arm(tfd, CLOCK_MONOTONIC, 0, &its), 0);
	pt_wait_readable(tfd, PT_WAIT_MS);
	CHECK_ERR(pollfs_signal_read(tfd, info, 1), EIO);
	CHECK_ERR(pollfs_timer_read(tfd, &tev), EAGAIN);	/* it took it */
	CHECK_SYS(pipe2(p, O_CLOEXEC | O_NONBLOCK));
	CHECK_EQ(write(p[1], "not a siginfo", 13), 13);
	CHECK_ERR(pollfs_signal_read(p[0], info, 1), EIO);
	CHECK_ERR(pollfs_signal_read(p[0], info, 1), EAGAIN);

	CHECK_SYS(close(p[0]));
	CHECK_SYS(close(p[1]));
	CHECK_SYS(close(tfd));
	CHECK_SYS(close(fd));
}

int main(void)
{
	sigset_t set;

	/* every signal the tests read stays pending, in every thread */
	set_of(&set, (const int[]){ SIGUSR1, SIGUSR2, SIGRTMIN, SIGRTMIN + 3,
				    SIGRTMAX }, 5);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);

	return pt_run_tests();
}
