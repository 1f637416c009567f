// SPDX-License-Identifier: MIT
/*
 * An AIO object kept open across execve: the exec tears down the old
 * address space and its contexts (in-flight request and unreaped
 * completion included), so the new image finds the object hung up, and
 * cannot name the old context any more.
 */
#include "lib/aio.h"

PT_BUDGET(60);

static int after_exec(int fd, aio_context_t old)
{
	aio_context_t ctx;
	int fd2;

	/* pollfs:[aio], hung up */
	pt_expect_fd_link(fd, "pollfs:[aio]");
	ax_wait_hup(fd, PT_WAIT_MS);
	CHECK_ERR(ax_fd_try(old, 0), EINVAL);

	/* a context of the new image works, even at the old address */
	ctx = ax_setup(8);
	pt_diag("new context %s the old one's address",
		ctx == old ? "at" : "not at");
	fd2 = ax_fd(ctx, 0);
	ax_expect_empty(fd2);
	ax_expect_hup(fd);
	CHECK_SYS(close(fd2));
	CHECK_SYS(close(fd));
	ax_destroy(ctx);
	return PT_PASS;
}

int main(int argc, char **argv)
{
	static char data[64];
	struct iocb cbs[2], *ptrs[2] = { &cbs[0], &cbs[1] };
	char sfd[16], sctx[32];
	aio_context_t ctx;
	int fd, file, pfd[2];

	if (argc == 4 && !strcmp(argv[1], "after-exec"))
		return after_exec(atoi(argv[2]),
				  (aio_context_t)strtoull(argv[3], NULL, 0));

	ctx = ax_setup(8);
	fd = ax_fd(ctx, 0);		/* no close-on-exec */
	file = ax_tmpfile("/tmp", 0);
	CHECK_SYS(pipe2(pfd, O_CLOEXEC));
	ax_prep_pwrite(&cbs[0], file, data, sizeof(data), 0, 1);
	ax_prep_poll(&cbs[1], pfd[0], POLLIN, 2);
	ax_submit(ctx, 2, ptrs);
	ax_expect_avail(fd, ctx, 1);

	snprintf(sfd, sizeof(sfd), "%d", fd);
	snprintf(sctx, sizeof(sctx), "%#llx", (unsigned long long)ctx);
	execl("/proc/self/exe", argv[0], "after-exec", sfd, sctx, (char *)NULL);
	FAIL("execl(/proc/self/exe): %s", strerror(errno));
}
