// SPDX-License-Identifier: MIT
/*
 * mremap(2) of a context's ring moves the context's id (as CRIU does on
 * restore): an object made before the move keeps following the context
 * (completions, reaps through the new id, the hang-up at io_destroy), the
 * new id makes objects, and the old id no longer does.
 */
#include "lib/aio.h"

#include <sys/mman.h>

PT_BUDGET(60);

int main(void)
{
	static char data[64];
	struct pollfs_aio_event pev;
	struct io_event ev[4];
	struct iocb cb;
	aio_context_t ctx, moved;
	size_t len;
	int fd, fd2, file;
	void *to, *p;

	ctx = ax_setup(8);
	fd = ax_fd(ctx, POLLFS_NONBLOCK);
	file = ax_tmpfile("/tmp", 0);
	ax_prep_pwrite(&cb, file, data, sizeof(data), 0, 1);

	/* the ring's length: io_setup maps whole pages */
	len = (size_t)sysconf(_SC_PAGESIZE);
	while (len < sizeof(struct ax_ring_head) +
		     (size_t)ax_ring(ctx)->nr * sizeof(struct io_event))
		len += (size_t)sysconf(_SC_PAGESIZE);
	to = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(to != MAP_FAILED);
	p = mremap((void *)(uintptr_t)ctx, len, len,
		   MREMAP_MAYMOVE | MREMAP_FIXED, to);
	if (p == MAP_FAILED)
		FAIL("mremap of the ring (%zu bytes): %s", len, strerror(errno));
	moved = (aio_context_t)(uintptr_t)p;
	CHECK(moved != ctx);

	/* the kernel follows the move */
	CHECK_ERR(ax_sys_getevents(ctx, 0, 4, ev, NULL), EINVAL);
	CHECK_EQ(ax_sys_getevents(moved, 0, 4, ev, NULL), 0);
	CHECK_ERR(ax_fd_try(ctx, 0), EINVAL);
	fd2 = ax_fd(moved, POLLFS_NONBLOCK);

	/* the old object follows the context */
	ax_expect_empty(fd);
	ax_expect_empty(fd2);
	ax_submit1(moved, &cb);
	CHECK_EQ(ax_revents(fd, POLLIN, 0), POLLIN);
	CHECK_EQ(ax_read_rec(fd, &pev), AX_EVENT_SIZE);
	CHECK_EQ(pev.available, 1);
	if (pev.ctx != ctx && pev.ctx != moved)
		FAIL("read ctx %#llx: neither the old id %#llx nor the new "
		     "%#llx", (unsigned long long)pev.ctx,
		     (unsigned long long)ctx, (unsigned long long)moved);
	pt_diag("an object made before the move reports the %s id",
		pev.ctx == ctx ? "old" : "new");
	ax_expect_avail(fd2, moved, 1);
	CHECK_EQ(ax_reap(moved, 1, 4, ev, 0), 1);
	ax_check_event(&ev[0], 1, sizeof(data));
	ax_expect_empty(fd);
	ax_expect_empty(fd2);

	ax_destroy(moved);
	ax_expect_hup(fd);
	ax_expect_hup(fd2);
	CHECK_SYS(close(fd));
	CHECK_SYS(close(fd2));
	CHECK_SYS(close(file));
	return PT_PASS;
}
