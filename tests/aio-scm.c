// SPDX-License-Identifier: MIT
/*
 * An AIO object passed over a UNIX socket (SCM_RIGHTS) to another process
 * reports the owner's context there: its completions wake the receiver,
 * and when the owning process exits (with or without its own copy of the
 * fd open, with a request in flight) or destroys the context, the
 * receiver, asleep in poll, sees POLLHUP and reads 0.  Each way the
 * owner ends is a TEST.
 */
#include "lib/aio.h"

#include <sys/socket.h>
#include <sys/wait.h>

PT_BUDGET(90);

static int sock[2];

/* What the owner does and what the object says, for a failure report. */
static void show_state(pid_t pid, int fd)
{
	char path[64], buf[512];
	const char *files[] = { "stat", "wchan", "stack" };

	for (unsigned int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, files[i]);
		pt_diag("owner %s: %s", path,
			pt_read_file(path, buf, sizeof(buf)) > 0 ? buf :
			strerror(errno));
	}
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (pt_read_file(path, buf, sizeof(buf)) < 0)
		buf[0] = 0;
	pt_diag("%s: %s", path, buf);
}

enum { KEEP_AND_EXIT, CLOSE_AND_EXIT, DESTROY, KILLED };
static const char *const cname[] = {
	"owner exits with its copy open", "owner closes its copy and exits",
	"owner destroys the context", "owner killed",
};

static int owner(void *arg)
{
	static char data[64];
	int how = (int)(intptr_t)arg, s = sock[1], fd, file, pfd[2];
	struct iocb cbs[2], *ptrs[2] = { &cbs[0], &cbs[1] };
	aio_context_t ctx;
	char c;

	ctx = ax_setup(8);
	fd = ax_fd(ctx, 0);
	file = ax_tmpfile("/tmp", 0);
	CHECK_SYS(pipe2(pfd, O_CLOEXEC));
	pt_send_fd(s, fd, &ctx, sizeof(ctx));
	if (how != KEEP_AND_EXIT)
		CHECK_SYS(close(fd));
	ax_expect_msg(s, 'g');
	ax_prep_pwrite(&cbs[0], file, data, sizeof(data), 0, 1);
	ax_prep_poll(&cbs[1], pfd[0], POLLIN, 2);	/* stays in flight */
	ax_submit(ctx, 2, ptrs);
	ax_expect_msg(s, 'x');
	switch (how) {
	case DESTROY:
		ax_destroy(ctx);
		/* and stay alive until the receiver saw it */
		CHECK(ax_revents(s, POLLIN, PT_WAIT_MS) & POLLIN);
		CHECK_EQ(read(s, &c, 1), 0);
		break;
	case KILLED:
		raise(SIGKILL);
		break;
	}
	return PT_PASS;
}

static void check_hangup(int how)
{
	aio_context_t ctx;
	int64_t t0;
	pid_t pid;
	int fd, status;

	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock));
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		alarm(0);
		close(sock[0]);
		_exit(owner((void *)(intptr_t)how));
	}
	CHECK_SYS(close(sock[1]));
	fd = pt_recv_fd(sock[0], &ctx, sizeof(ctx));
	pt_diag("%s: received fd %d for context %#llx", cname[how], fd,
		(unsigned long long)ctx);
	ax_expect_empty(fd);
	/* not our context: no object of ours can name it */
	CHECK_ERR(ax_fd_try(ctx, 0), EINVAL);

	ax_send(sock[0], 'g');
	if (ax_revents(fd, POLLIN, PT_WAIT_MS) != POLLIN)
		FAIL("%s: the owner's completion did not wake the receiver",
		     cname[how]);
	ax_expect_avail(fd, ctx, 1);

	ax_send(sock[0], 'x');
	t0 = pt_mono();
	/* events 0: sleep for POLLHUP alone, not the POLLIN of the
	 * completion the owner leaves unreaped */
	if (ax_revents(fd, 0, PT_WAIT_MS) != POLLHUP) {
		show_state(pid, fd);
		FAIL("%s: no POLLHUP within %d ms", cname[how], PT_WAIT_MS);
	}
	pt_diag("%s: POLLHUP after %lld ms", cname[how],
		(long long)((pt_mono() - t0) / NSEC_PER_MSEC));
	ax_expect_hup(fd);
	CHECK_SYS(close(sock[0]));
	while (waitpid(pid, &status, 0) < 0)
		CHECK(errno == EINTR);
	if (how == KILLED)
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != PT_PASS)
		FAIL("%s: owner status %#x", cname[how], status);
	ax_expect_hup(fd);
	CHECK_SYS(close(fd));
}

TEST(owner_exits_with_its_copy_open)
{
	check_hangup(KEEP_AND_EXIT);
}

TEST(owner_closes_its_copy_and_exits)
{
	check_hangup(CLOSE_AND_EXIT);
}

TEST(owner_destroys_the_context)
{
	check_hangup(DESTROY);
}

TEST(owner_killed)
{
	check_hangup(KILLED);
}

int main(void)
{
	return pt_run_tests();
}
