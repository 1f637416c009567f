// SPDX-License-Identifier: MIT
/*
 * A process ends cleanly and at once while threads of it sleep on the
 * object: exit_group() from another thread while one sleeps in read()
 * (and while the main thread sleeps in read()), SIGKILL while two sleep
 * in read(), exit while threads sleep in poll() and epoll_wait().  The
 * object, shared with the parent by fork, still works in the parent.
 * Each way of ending is a TEST.
 */
#include "lib/signal.h"

#include <stdatomic.h>
#include <sys/epoll.h>

PT_BUDGET(90);

#define BOUND_MS 5000

static int fd, ep;
static atomic_int tids[2];

static void *read_forever(void *arg)
{
	struct pollfs_siginfo psi;

	tids[(intptr_t)arg] = ps_gettid();
	read(fd, &psi, sizeof(psi));
	_exit(3);	/* the read must not return */
}

static void *poll_forever(void *arg)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	tids[(intptr_t)arg] = ps_gettid();
	poll(&p, 1, -1);
	_exit(3);
}

static void *epoll_forever(void *arg)
{
	struct epoll_event e;

	tids[(intptr_t)arg] = ps_gettid();
	epoll_wait(ep, &e, 1, -1);
	_exit(3);
}

static void start(void *(*fn)(void *), int i)
{
	pthread_t t;

	tids[i] = 0;
	CHECK_EQ(pthread_create(&t, NULL, fn, (void *)(intptr_t)i), 0);
	while (!tids[i])
		pt_sleep_ms(1);
}

/* the thread sleeps in read, the main thread exits the process */
static int child_exit(void)
{
	start(read_forever, 0);
	ps_wait_in_read(tids[0]);
	exit(0);
}

/* the main thread sleeps in read, another thread exits the process */
static void *exit_when_main_reads(void *arg)
{
	ps_wait_in_syscall(getpid(), (pid_t)(intptr_t)arg, SYS_read, SYS_read);
	_exit(0);
}

static int child_main_reads(void)
{
	struct pollfs_siginfo psi;
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, exit_when_main_reads,
				(void *)(intptr_t)ps_gettid()), 0);
	read(fd, &psi, sizeof(psi));
	return 3;
}

/* two threads sleep in read, the main thread waits to be killed */
__attribute__((noreturn)) static void child_killed(int *pipe_w)
{
	start(read_forever, 0);
	start(read_forever, 1);
	ps_wait_in_read(tids[0]);
	ps_wait_in_read(tids[1]);
	ps_post(*pipe_w);
	for (;;)
		pause();
}

/* threads sleep in poll and epoll_wait, the main thread exits */
static int child_pollers(void)
{
	struct epoll_event e;

	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	memset(&e, 0, sizeof(e));
	e.events = EPOLLIN;
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	start(poll_forever, 0);
	start(epoll_forever, 1);
	ps_wait_in_syscall(getpid(), tids[0], PT_SYS_POLL, SYS_ppoll);
	ps_wait_in_syscall(getpid(), tids[1], PT_SYS_EPOLL_WAIT,
			   SYS_epoll_pwait);
	exit(0);
}

/* The parent's object still works. */
static void expect_object_works(void)
{
	struct pollfs_siginfo psi;

	CHECK_SYS(fcntl(fd, F_SETFL, O_NONBLOCK));
	ps_expect_empty(fd);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	CHECK_SYS(close(fd));
}

static pid_t spawn(int which, int *pipe_w)
{
	pid_t child = fork();

	CHECK(child >= 0);
	if (child == 0) {
		alarm(0);
		switch (which) {
		case 0:
			_exit(child_exit());
		case 1:
			_exit(child_main_reads());
		case 2:
			child_killed(pipe_w);
		default:
			_exit(child_pollers());
		}
	}
	return child;
}

/* The child of case which ends by itself, promptly; the object lives on. */
static void check_exits(int which, const char *how)
{
	int64_t t0;
	pid_t child;

	fd = ps_signal(ps_bit(SIGUSR1), 0);
	t0 = pt_mono();
	child = spawn(which, NULL);

	ps_check_exit0(ps_wait_child(child, PT_WAIT_MS + BOUND_MS));
	pt_diag("%s: exited after %lld ms", how,
		(long long)((pt_mono() - t0) / NSEC_PER_MSEC));
	expect_object_works();
}

TEST(exit_while_a_thread_sleeps_in_read)
{
	check_exits(0, "exit");
}

TEST(exit_group_while_the_main_thread_sleeps_in_read)
{
	check_exits(1, "exit_group from a thread");
}

TEST(sigkill_while_two_threads_sleep_in_read)
{
	int pfd[2], status;
	int64_t t0;
	pid_t child;

	CHECK_SYS(pipe2(pfd, O_CLOEXEC));
	fd = ps_signal(ps_bit(SIGUSR1), 0);
	child = spawn(2, &pfd[1]);
	ps_wait_post(pfd[0]);
	t0 = pt_mono();
	CHECK_SYS(kill(child, SIGKILL));
	status = ps_wait_child(child, BOUND_MS);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	pt_diag("killed: gone after %lld ms",
		(long long)((pt_mono() - t0) / NSEC_PER_MSEC));
	expect_object_works();
}

TEST(exit_while_threads_sleep_in_poll_and_epoll_wait)
{
	check_exits(3, "exit with pollers");
}

int main(void)
{
	ps_block(ps_bit(SIGUSR1));
	return pt_run_tests();
}
