// SPDX-License-Identifier: MIT
/*
 * An AIO object kept open across execve: the exec tears down the old
 * address space and its contexts (in-flight request and unreaped
 * completion included), so the new image finds the object hung up, and
 * cannot name the old context any more.
 */
#include "aio.h"

static int after_exec(int fd, aio_context_t old)
{
	aio_context_t ctx;
	int fd2;

	/* pollfs:[aio], hung up */
	{
		char path[64], link[64];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = CHECK_SYS(readlink(path, link, sizeof(link) - 1));
		link[n] = 0;
		if (strcmp(link, "pollfs:[aio]"))
			FAIL("fd %d is \"%s\" after exec", fd, link);
	}
	aio_wait_hup(fd, PT_WAIT_MS);
	CHECK_ERR(aio_fd_try(old, 0), EINVAL);

	/* a context of the new image works, even at the old address */
	ctx = aio_setup(8);
	pt_diag("new context %s the old one's address",
		ctx == old ? "at" : "not at");
	fd2 = aio_fd(ctx, 0);
	aio_expect_empty(fd2);
	aio_expect_hup(fd);
	CHECK_SYS(close(fd2));
	CHECK_SYS(close(fd));
	aio_destroy(ctx);
	return PT_PASS;
}

int main(int argc, char **argv)
{
	static char data[64];
	struct iocb cbs[2], *ptrs[2] = { &cbs[0], &cbs[1] };
	char sfd[16], sctx[32];
	aio_context_t ctx;
	int fd, file, pfd[2];

	pt_watchdog(60);
	if (argc == 4 && !strcmp(argv[1], "after-exec"))
		return after_exec(atoi(argv[2]),
				  (aio_context_t)strtoull(argv[3], NULL, 0));

	ctx = aio_setup(8);
	fd = aio_fd(ctx, 0);		/* no close-on-exec */
	file = aio_tmpfile("/tmp", 0);
	CHECK_SYS(pipe2(pfd, O_CLOEXEC));
	aio_prep_pwrite(&cbs[0], file, data, sizeof(data), 0, 1);
	aio_prep_poll(&cbs[1], pfd[0], POLLIN, 2);
	aio_submit(ctx, 2, ptrs);
	aio_expect_avail(fd, ctx, 1);

	snprintf(sfd, sizeof(sfd), "%d", fd);
	snprintf(sctx, sizeof(sctx), "%#llx", (unsigned long long)ctx);
	execl("/proc/self/exe", argv[0], "after-exec", sfd, sctx, (char *)NULL);
	FAIL("execl(/proc/self/exe): %s", strerror(errno));
}
