// SPDX-License-Identifier: MIT
/*
 * A process that exits (or is killed) with AIO objects open, completions
 * unreaped, a request still in flight and threads asleep in read and poll
 * of the objects exits promptly and cleanly (the runner fails the test on
 * any kernel complaint), whether it exits, is killed, or its main thread
 * leaves first and the rest are killed later.
 */
#include "lib/aio.h"

#include <sys/wait.h>

PT_BUDGET(120);

static int sleeper_fd;

static void *sleep_read(void *unused)
{
	struct pollfs_aio_event ev;

	(void)unused;
	ax_read_rec(sleeper_fd, &ev);
	FAIL("read of an idle context returned");
}

static void *sleep_poll(void *unused)
{
	(void)unused;
	ax_revents(sleeper_fd, POLLIN, -1);
	FAIL("poll of an idle context returned");
}

/* Sets everything up; returns once the sleepers sleep. */
static void busy_process(void)
{
	static char data[64];
	static struct iocb cbs[2];
	struct iocb *ptrs[2] = { &cbs[0], &cbs[1] };
	aio_context_t a, b;
	pthread_t th;
	int fa, fa2, file, pfd[2];

	a = ax_setup(8);
	b = ax_setup(8);
	fa = ax_fd(a, 0);
	fa2 = ax_fd(a, POLLFS_NONBLOCK);
	sleeper_fd = ax_fd(b, 0);
	file = ax_tmpfile("/tmp", 0);
	CHECK_SYS(pipe2(pfd, O_CLOEXEC));
	ax_prep_pwrite(&cbs[0], file, data, sizeof(data), 0, 1);
	ax_prep_poll(&cbs[1], pfd[0], POLLIN, 2);	/* never completes */
	ax_submit(a, 2, ptrs);
	ax_expect_avail(fa, a, 1);
	ax_expect_avail(fa2, a, 1);
	CHECK_EQ(pthread_create(&th, NULL, sleep_read, NULL), 0);
	CHECK_EQ(pthread_create(&th, NULL, sleep_poll, NULL), 0);
	pt_sleep_ms(200);
}

static int exit_normally(void *unused)
{
	(void)unused;
	busy_process();
	exit(PT_PASS);		/* with the other threads still asleep */
}

static int exit_by_signal(void *unused)
{
	(void)unused;
	busy_process();
	raise(SIGKILL);
	return PT_FAIL;
}

static int exit_from_thread(void *unused)
{
	(void)unused;
	busy_process();
	syscall(SYS_exit, PT_PASS);	/* this thread only: the others hold
					   the mm until the group exits */
	return PT_FAIL;
}

int main(void)
{
	int64_t t0;
	int r;

	for (int i = 0; i < 3; i++) {
		t0 = pt_mono();
		CHECK_EQ(pt_run_child(exit_normally, NULL, 20000), PT_PASS);
		pt_diag("exit: %lld ms", (long long)((pt_mono() - t0) /
						     NSEC_PER_MSEC));
	}

	/* killed: pt_run_child reports death by a signal as a failure, so
	 * check the status itself */
	for (int i = 0; i < 3; i++) {
		pid_t pid = fork();
		int status;

		CHECK_SYS(pid);
		if (pid == 0) {
			alarm(0);
			exit_by_signal(NULL);
			_exit(PT_FAIL);
		}
		t0 = pt_mono();
		while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
			;
		CHECK_EQ(r, pid);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		CHECK(pt_mono() - t0 < MS(20000));
	}

	/* the main thread leaves first; the sleepers then block the exit of
	 * nothing, since killing them is up to us */
	{
		pid_t pid = fork();
		int status;

		CHECK_SYS(pid);
		if (pid == 0) {
			alarm(0);
			exit_from_thread(NULL);
			_exit(PT_FAIL);
		}
		pt_sleep_ms(500);
		/* the process lives on in its sleeping threads */
		CHECK_EQ(waitpid(pid, &status, WNOHANG), 0);
		CHECK_SYS(kill(pid, SIGKILL));
		while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
			;
		CHECK_EQ(r, pid);
		CHECK(WIFSIGNALED(status));
	}
	return PT_PASS;
}
