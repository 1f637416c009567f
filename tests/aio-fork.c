// SPDX-License-Identifier: MIT
/*
 * An AIO object inherited by fork is the same object: the child's copy
 * reports the parent's context and its completions, follows the parent's
 * reaps, and hangs up when the parent destroys the context (waking the
 * child asleep in poll and in read).  The child can neither create an
 * object for nor destroy the parent's context, and its attempts and its
 * exit leave the parent's object working.
 */
#include "lib/aio.h"

#include <sys/wait.h>

PT_BUDGET(60);

static aio_context_t ctx;
static int fd, to_child[2], to_parent[2];

static void *child_read(void *arg)
{
	struct pollfs_aio_event ev;
	ssize_t *ret = arg;

	*ret = ax_read_rec(fd, &ev);
	return NULL;
}

static int child(void)
{
	ssize_t rret = -2;
	pthread_t th;
	short rev;

	/* the parent's context is not ours */
	CHECK_ERR(ax_fd_try(ctx, 0), EINVAL);
	CHECK_ERR(ax_sys_destroy(ctx), EINVAL);
	ax_send(to_parent[1], 'a');

	/* a completion in the parent wakes us */
	rev = ax_revents(fd, POLLIN, PT_WAIT_MS);
	CHECK_EQ(rev, POLLIN);
	ax_expect_avail(fd, ctx, 1);
	ax_send(to_parent[1], 'b');

	/* the parent reaped it */
	ax_expect_msg(to_child[0], 'c');
	ax_expect_empty(fd);

	/* asleep in read and poll when the parent destroys the context */
	CHECK_EQ(pthread_create(&th, NULL, child_read, &rret), 0);
	ax_send(to_parent[1], 'd');
	rev = ax_revents(fd, POLLIN, PT_WAIT_MS);
	CHECK_EQ(rev, POLLHUP);
	pthread_join(th, NULL);
	CHECK_EQ(rret, 0);
	ax_expect_hup(fd);
	CHECK_SYS(close(fd));
	return PT_PASS;
}

int main(void)
{
	static char data[64];
	struct io_event ev[2];
	struct iocb cb;
	int file, status;
	pid_t pid;

	ctx = ax_setup(8);
	fd = ax_fd(ctx, 0);
	file = ax_tmpfile("/tmp", 0);
	CHECK_SYS(pipe2(to_child, O_CLOEXEC));
	CHECK_SYS(pipe2(to_parent, O_CLOEXEC));

	pid = CHECK_SYS(fork());
	if (pid == 0) {
		alarm(0);
		pt_watchdog(50);
		_exit(child());
	}

	ax_expect_msg(to_parent[0], 'a');
	/* the child's attempts changed nothing here */
	ax_expect_empty(fd);
	pt_sleep_ms(100);	/* the child sleeps in poll by now */
	ax_prep_pwrite(&cb, file, data, sizeof(data), 0, 5);
	ax_submit1(ctx, &cb);
	ax_expect_msg(to_parent[0], 'b');
	ax_expect_avail(fd, ctx, 1);
	CHECK_EQ(ax_reap(ctx, 1, 2, ev, 0), 1);
	ax_check_event(&ev[0], 5, sizeof(data));
	ax_send(to_child[1], 'c');

	ax_expect_msg(to_parent[0], 'd');
	pt_sleep_ms(200);	/* asleep in read and poll by now */
	ax_destroy(ctx);
	ax_expect_hup(fd);

	while (waitpid(pid, &status, 0) < 0)
		CHECK(errno == EINTR);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != PT_PASS)
		FAIL("child: status %#x", status);

	/* a child's exit does not touch a live context of ours either */
	ctx = ax_setup(8);
	CHECK_SYS(close(fd));
	fd = ax_fd(ctx, 0);
	pid = CHECK_SYS(fork());
	if (pid == 0)
		_exit(ax_revents(fd, POLLIN, 0) == 0 ? PT_PASS : PT_FAIL);
	while (waitpid(pid, &status, 0) < 0)
		CHECK(errno == EINTR);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == PT_PASS);
	ax_expect_empty(fd);
	ax_submit1(ctx, &cb);
	ax_expect_avail(fd, ctx, 1);
	CHECK_SYS(close(fd));
	CHECK_SYS(close(file));
	ax_destroy(ctx);
	return PT_PASS;
}
