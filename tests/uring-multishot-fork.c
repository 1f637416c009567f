// SPDX-License-Identifier: MIT
/*
 * fork(2) and execve(2) with a multishot read (IORING_OP_READ_MULTISHOT)
 * of a pollfs object pending:
 * - fork: the request stays the parent's and goes on through the
 *   child's life and after its exit; the child's FUTEX_WAKEs on a
 *   shared word count the parent's watched object, and each wake, the
 *   child's or the parent's, comes back once, in order, with its value;
 * - execve: io_uring cancels the requests of a task that execs, and the
 *   ring (close-on-exec) goes with the old image; the new image holds
 *   the object (its descriptor inherited) and read(2) gets the signals
 *   queued after the exec, exactly those: the cancelled request took
 *   nothing more.
 * Linux 6.7 and later; skips where io_uring has no such op.
 */
#include "lib/futex.h"
#include "lib/signal.h"
#include "lib/mshot.h"

#include <sys/wait.h>

PT_BUDGET(60);

enum { READ_TAG = 1, CANCEL_TAG };

TEST(fork)
{
	const struct pollfs_futex_event *ev;
	uint32_t *word;
	struct ms_bufs b;
	struct ms_cqe c;
	int fd = fx_new(POLLFS_NONBLOCK), status, i;
	int go[2], done[2];
	pid_t pid;
	char byte;

	ut_init();
	ms_require();
	word = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(word != MAP_FAILED);
	*word = 0;
	ms_bufs_init(&b, 1, 4, FX_REC, true);
	fx_arm(fd, word, 0, FX_WATCH | FX_SHARED);
	ms_read(READ_TAG, fd, b.bgid);
	ms_none(50);
	CHECK_SYS(pipe(go));
	CHECK_SYS(pipe(done));
	pid = fx_fork();
	if (!pid) {
		/* three wakes, each once the parent has its record */
		for (i = 1; i <= 3; i++) {
			if (read(go[0], &byte, 1) != 1)
				_exit(1);
			__atomic_store_n(word, i, __ATOMIC_RELEASE);
			if (fx_wake(word, 1, FX_SHARED) != 1)
				_exit(2);
			if (write(done[1], &byte, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	for (i = 1; i <= 3; i++) {
		CHECK_EQ(write(go[1], "x", 1), 1);
		CHECK_EQ(read(done[0], &byte, 1), 1);
		ev = ms_expect_data(&b, READ_TAG, FX_REC, 2000, &c);
		CHECK_EQ(c.res, FX_REC);
		fx_check_rec(ev, word, i, FX_WATCH | FX_SHARED);
		ms_bufs_give(&b, c.bid);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	/* the child gone, the request goes on */
	for (i = 4; i <= 6; i++) {
		__atomic_store_n(word, i, __ATOMIC_RELEASE);
		CHECK_EQ(fx_wake(word, 1, FX_SHARED), 1);
		ev = ms_expect_data(&b, READ_TAG, FX_REC, 2000, &c);
		fx_check_rec(ev, word, i, FX_WATCH | FX_SHARED);
		ms_bufs_give(&b, c.bid);
	}
	ms_none(50);
	CHECK_EQ(ms_cancel_end(&b, READ_TAG, CANCEL_TAG, FX_REC), 0);
	CHECK_SYS(close(fd));
	ms_bufs_free(&b);
	munmap(word, 4096);
}

/* The new image: argv[2] is the signal object's descriptor. */
static int after_exec(const char *fd_arg)
{
	struct pollfs_siginfo psi[4];
	int fd = atoi(fd_arg), sig = SIGRTMIN + 2;

	/* the blocked mask, the object and the request's end came along */
	ps_queue_int(getpid(), sig, 2);
	ps_queue_int(getpid(), sig, 3);
	CHECK_EQ(ps_read_n(fd, psi, 4), 2);
	CHECK_EQ(psi[0].psi_int, 2);
	CHECK_EQ(psi[1].psi_int, 3);
	CHECK_ERR(read(fd, psi, sizeof(psi)), EAGAIN);
	return PT_PASS;
}

static int exec_child(void *self)
{
	const struct pollfs_siginfo *psi;
	int sig = SIGRTMIN + 2, fd;
	struct ms_bufs b;
	struct ms_cqe c;
	char fd_arg[16];

	ut_init();
	ps_block(ps_bit(sig));
	fd = ps_signal(ps_bit(sig), POLLFS_NONBLOCK);
	ms_bufs_init(&b, 1, 4, SIGINFO_SIZE, true);
	ms_read(READ_TAG, fd, b.bgid);
	ps_queue_int(getpid(), sig, 1);
	psi = ms_expect_data(&b, READ_TAG, SIGINFO_SIZE, 2000, &c);
	CHECK_EQ(psi->psi_int, 1);
	snprintf(fd_arg, sizeof(fd_arg), "%d", fd);
	execl((const char *)self, (const char *)self, "--after-exec", fd_arg,
	      (char *)NULL);
	FAIL("execl %s: %s", (const char *)self, strerror(errno));
}

/* In a child of its own, which the exec replaces. */
TEST(exec)
{
	static char self[4096];

	ut_init();
	ms_require();
	io_uring_queue_exit(&ut_ring);
	if (readlink("/proc/self/exe", self, sizeof(self) - 1) <= 0)
		FAIL("readlink /proc/self/exe: %s", strerror(errno));
	CHECK_EQ(pt_run_child(exec_child, self, 20000 * pt_time_scale()),
		 PT_PASS);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--after-exec"))
		return after_exec(argv[2]);
	return pt_run_tests();
}
