// SPDX-License-Identifier: MIT
/*
 * The AIO object's return hook and the function-graph tracer on
 * aio_complete() at once.  Both put a return address of their own where
 * the function will return (pollfs: rethook's trampoline on x86-64, its
 * own on arm64; the tracer: return_to_handler), each keeping the one it
 * found there, so each must still run and the completion must come back
 * to its caller.  With the tracer limited to aio_complete()
 * (set_ftrace_filter, so that only that function is patched: enabling
 * it on every function made 6.1's text patching wait 26 s for an
 * emulated CPU, a soft lockup), each write's completion wakes the
 * object inside io_submit() (epoll_wait with no timeout sees it), each
 * IOCB_CMD_POLL's
 * through the irq_work, and the trace holds aio_complete().  The tracer
 * is put back to nop at the end, failure or not.
 */
#include "lib/aio.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/mount.h>

PT_BUDGET(120);

#define TRACING "/sys/kernel/tracing/"
#define ROUNDS 50

static void tracing_write(const char *file, const char *text)
{
	int fd = open(file, O_WRONLY | O_TRUNC | O_CLOEXEC);

	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		FAIL("%s: %s", file, strerror(errno));
	close(fd);
}

static void tracer_off(void)
{
	int fd;

	fd = open(TRACING "current_tracer", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "nop", 3) < 0)
			pt_diag("current_tracer: %s", strerror(errno));
		close(fd);
	}
	fd = open(TRACING "set_ftrace_filter", O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
}

/* Whether @file holds a line containing @what. */
static bool file_has(const char *file, const char *what)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen(file, "re");

	if (!f)
		FAIL("%s: %s", file, strerror(errno));
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what);
	fclose(f);
	return found;
}

int main(void)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLET };
	static char data[64];
	struct iocb cb, *cbp = &cb;
	aio_context_t ctx;
	int fd, ep, file, pipefd[2];
	char c;

	pt_require_root();
	if (pt_kernel_rt())
		pt_skip("PREEMPT_RT: nothing hooks aio_complete()'s return");
	if (access(TRACING "current_tracer", W_OK) &&
	    mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL))
		pt_skip("cannot mount tracefs: %s", strerror(errno));
	if (!file_has(TRACING "available_tracers", "function_graph"))
		pt_skip("this kernel has no function_graph tracer");

	ctx = ax_setup(8);
	fd = ax_fd(ctx, POLLFS_NONBLOCK);
	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	file = ax_tmpfile("/tmp", 0);
	CHECK_SYS(pipe2(pipefd, O_CLOEXEC | O_NONBLOCK));

	atexit(tracer_off);
	tracing_write(TRACING "set_ftrace_filter", "aio_complete");
	tracing_write(TRACING "trace", "");
	tracing_write(TRACING "current_tracer", "function_graph");
	tracing_write(TRACING "tracing_on", "1");
	/* Two callbacks on it now: pollfs's and the tracer's. */
	if (!file_has(TRACING "enabled_functions", "aio_complete (2)"))
		FAIL("aio_complete() is not hooked twice");

	for (int i = 0; i < ROUNDS; i++) {
		ax_prep_pwrite(&cb, file, data, sizeof(data), 0, i);
		ax_submit(ctx, 1, &cbp);
		ax_expect_woken(ep, fd, ctx, 0, "write", i);
	}
	for (int i = 0; i < ROUNDS; i++) {
		ax_prep_poll(&cb, pipefd[0], POLLIN, i);
		ax_submit(ctx, 1, &cbp);
		CHECK_SYS(write(pipefd[1], "x", 1));
		ax_expect_woken(ep, fd, ctx, PT_WAIT_MS, "poll", i);
		CHECK_EQ(CHECK_SYS(read(pipefd[0], &c, 1)), 1);
	}

	/* Switching the tracer empties its buffer: read it first. */
	tracing_write(TRACING "tracing_on", "0");
	if (!file_has(TRACING "trace", "aio_complete"))
		FAIL("the function-graph tracer traced no aio_complete()");
	tracer_off();

	close(pipefd[0]);
	close(pipefd[1]);
	close(file);
	close(ep);
	close(fd);
	ax_destroy(ctx);
	return 0;
}
