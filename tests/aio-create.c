// SPDX-License-Identifier: MIT
/*
 * POLLFS_IOC_AIO takes a live io_setup(2) context of the calling process
 * and nothing else: 0, arbitrary addresses (mapped or not, even holding
 * the context's ring id), a context id plus a page, a destroyed context
 * and another process's context all give EINVAL, as do unknown flags and
 * a non-zero reserved field; a bad argument pointer gives EFAULT.  The
 * object is named pollfs:[aio], honours its creation flags, and cannot be
 * written.
 */
#include "lib/aio.h"

#include <sys/mman.h>
#include <sys/wait.h>

PT_BUDGET(60);

/* Two live contexts of this process, the second with a ring of several
 * pages: what every behaviour starts from. */
FIXTURE(contexts) {
	aio_context_t ctx, big;
};

FIXTURE_SETUP(contexts)
{
	self->ctx = ax_setup(1);
	self->big = ax_setup(1024);
}

FIXTURE_TEARDOWN(contexts)
{
	ax_destroy(self->big);
	ax_destroy(self->ctx);
}

static void expect_einval(const struct pt_fixture_contexts *self,
			  aio_context_t id, const char *what)
{
	int fd = ax_fd_try(id, 0);

	if (id == self->ctx || id == self->big) {
		pt_diag("%s (%#llx) is a live context: not tried", what,
			(unsigned long long)id);
		if (fd >= 0)
			close(fd);
		return;
	}
	if (fd >= 0 || errno != EINVAL)
		FAIL("POLLFS_IOC_AIO(%s = %#llx): returned %d, errno %d (%s), "
		     "expected EINVAL", what, (unsigned long long)id, fd,
		     fd >= 0 ? 0 : errno, fd >= 0 ? "" : strerror(errno));
}

static aio_context_t parent_ctx;

/* A fresh process has no AIO context: the parent's id is not its own. */
static int child_without_contexts(void *unused)
{
	(void)unused;
	CHECK_ERR(ax_fd_try(parent_ctx, 0), EINVAL);
	return PT_PASS;
}

/* True if a mapping covers the page at p. */
static bool mapped(aio_context_t p)
{
	long page = sysconf(_SC_PAGESIZE);

	return msync((void *)(uintptr_t)(p & ~(aio_context_t)(page - 1)),
		     (size_t)page, MS_ASYNC) == 0;
}

/*
 * A process with a context of its own is not given the parent's.  Where
 * fork copies the ring's mapping, the parent's ring is still mapped here
 * and names slot 0 of the table, as the child's own context does, yet it
 * is not the child's context.  Where the ring is not copied (VM_DONTCOPY,
 * Debian's 7.3), the child's ring may take the parent's address, and
 * that id is then the child's own context.
 */
static int child_with_context(void *unused)
{
	bool inherited = mapped(parent_ctx);
	aio_context_t mine;
	int fd;

	(void)unused;
	mine = ax_setup(4);
	if (inherited) {
		CHECK(mine != parent_ctx);
		CHECK_EQ(ax_ring(mine)->id, ax_ring(parent_ctx)->id);
	}
	if (mine != parent_ctx)
		CHECK_ERR(ax_fd_try(parent_ctx, 0), EINVAL);
	else
		pt_diag("fork did not copy the parent's ring; the child's took its address");
	fd = ax_fd(mine, 0);
	CHECK_SYS(close(fd));
	ax_destroy(mine);
	return PT_PASS;
}

/* A live context of ours: an fd named pollfs:[aio], read-write, blocking,
 * inherited by exec, with nothing to read. */
TEST_F(contexts, live_context)
{
	int fd, fl;

	fd = ax_fd(self->ctx, 0);
	pt_expect_fd_link(fd, "pollfs:[aio]");
	fl = CHECK_SYS(fcntl(fd, F_GETFL));
	CHECK_EQ(fl & O_ACCMODE, O_RDWR);
	CHECK_EQ(fl & O_NONBLOCK, 0);
	CHECK_EQ(CHECK_SYS(fcntl(fd, F_GETFD)) & FD_CLOEXEC, 0);
	ax_expect_empty(fd);
	CHECK_SYS(close(fd));
}

/* No write, whatever its size; no read shorter than a record; no seek. */
TEST_F(contexts, no_write_short_read_seek)
{
	char buf[64];
	int fd;

	fd = ax_fd(self->ctx, 0);
	memset(buf, 0, sizeof(buf));
	CHECK_ERR(write(fd, buf, 16), EINVAL);
	CHECK_ERR(write(fd, buf, 1), EINVAL);
	CHECK_ERR(write(fd, buf, 32), EINVAL);
	CHECK_ERR(write(fd, buf, 64), EINVAL);
	CHECK_ERR(write(fd, buf, 0), EINVAL);
	CHECK_ERR(read(fd, buf, 15), EINVAL);
	CHECK_ERR(read(fd, buf, 1), EINVAL);
	CHECK_ERR(read(fd, buf, 0), EINVAL);
	CHECK_ERR(lseek(fd, 0, SEEK_SET), ESPIPE);
	CHECK_SYS(close(fd));
}

/* POLLFS_NONBLOCK and POLLFS_CLOEXEC, or their O_ spellings, are the
 * file's flags. */
TEST_F(contexts, creation_flags)
{
	char buf[16];
	int fd;

	fd = ax_fd(self->ctx, POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	pt_expect_fd_link(fd, "pollfs:[aio]");
	CHECK(CHECK_SYS(fcntl(fd, F_GETFL)) & O_NONBLOCK);
	CHECK(CHECK_SYS(fcntl(fd, F_GETFD)) & FD_CLOEXEC);
	CHECK_ERR(read(fd, buf, 16), EAGAIN);
	CHECK_SYS(close(fd));

	/* the O_ spelling is the same */
	fd = ax_fd(self->big, O_NONBLOCK);
	pt_expect_fd_link(fd, "pollfs:[aio]");
	CHECK_ERR(read(fd, buf, 16), EAGAIN);
	CHECK_SYS(close(fd));
}

/* Anything but a live context of ours: no file made, and the context
 * still works after all the refusals. */
TEST_F(contexts, not_a_context)
{
	long page = sysconf(_SC_PAGESIZE);
	char buf[64];
	int dev, probe, fd;

	dev = pt_dev();
	probe = CHECK_SYS(dup(dev));
	CHECK_SYS(close(probe));
	expect_einval(self, 0, "0");
	expect_einval(self, 1, "1");
	expect_einval(self, self->ctx + 1, "ctx + 1");
	expect_einval(self, self->ctx + 8, "ctx + 8");
	expect_einval(self, self->ctx + (aio_context_t)page, "ctx + 4096");
	expect_einval(self, self->ctx - (aio_context_t)page, "ctx - 4096");
	expect_einval(self, self->big + (aio_context_t)page,
		      "big ring's ctx + 4096");
	expect_einval(self, self->big + 2 * (aio_context_t)page,
		      "big ring's ctx + 8192");
	expect_einval(self, (aio_context_t)(uintptr_t)buf, "a stack address");
	expect_einval(self, (aio_context_t)(uintptr_t)&expect_einval,
		      "a code address");
	expect_einval(self, 0xffffffff81000000ull, "a kernel address");
	expect_einval(self, 0x8000000000000000ull, "a non-canonical address");
	expect_einval(self, ~0ull, "~0");
	expect_einval(self, self->ctx & 0xffffffffull, "the low half of ctx");
	CHECK_EQ(CHECK_SYS(dup(dev)), probe);
	CHECK_SYS(close(probe));
	CHECK_SYS(close(dev));
	fd = ax_fd(self->ctx, 0);
	ax_expect_empty(fd);
	CHECK_SYS(close(fd));
}

/* Mapped memory holding the ring's id (slot 0 of the table): the id
 * alone does not make a context. */
TEST_F(contexts, copy_of_ring)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned int *fake;
	char *map;

	map = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(map != MAP_FAILED);
	fake = (unsigned int *)map;
	memcpy(fake, (const void *)ax_ring(self->ctx),
	       sizeof(struct ax_ring_head));
	CHECK_EQ(fake[0], ax_ring(self->ctx)->id);
	expect_einval(self, (aio_context_t)(uintptr_t)map,
		      "a copy of ctx's ring");
	memcpy(fake, (const void *)ax_ring(self->big),
	       sizeof(struct ax_ring_head));
	expect_einval(self, (aio_context_t)(uintptr_t)map,
		      "a copy of big's ring");
}

TEST_F(contexts, unmapped_or_inaccessible)
{
	long page = sysconf(_SC_PAGESIZE);
	char *map, *hole;

	map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(map != MAP_FAILED);
	hole = map + page;
	CHECK_SYS(munmap(hole, (size_t)page));
	expect_einval(self, (aio_context_t)(uintptr_t)hole,
		      "an unmapped address");
	CHECK_SYS(mprotect(map, (size_t)page, PROT_NONE));
	expect_einval(self, (aio_context_t)(uintptr_t)map, "a PROT_NONE page");
}

/* Checked before any io_setup can reuse its address. */
TEST_F(contexts, destroyed_context)
{
	aio_context_t dead;
	int fd;

	dead = ax_setup(8);
	fd = ax_fd(dead, 0);
	CHECK_SYS(close(fd));
	ax_destroy(dead);
	expect_einval(self, dead, "a destroyed context");
	CHECK_ERR(ax_sys_destroy(dead), EINVAL);	/* as the kernel sees it */
}

/* Unknown flags, or a reserved field not zero, with a valid context. */
TEST_F(contexts, bad_flags_or_reserved)
{
	struct pollfs_aio_open op;
	int dev, fd;

	dev = pt_dev();
	for (int bit = 0; bit < 32; bit++) {
		unsigned int f = 1u << bit;

		if (f == POLLFS_NONBLOCK || f == POLLFS_CLOEXEC)
			continue;
		memset(&op, 0, sizeof(op));
		op.ctx = self->ctx;
		op.flags = f;
		errno = 0;
		fd = ioctl(dev, POLLFS_IOC_AIO, &op);
		if (fd >= 0 || errno != EINVAL)
			FAIL("flags %#x: returned %d, errno %d (%s), expected "
			     "EINVAL", f, fd, errno, strerror(errno));
	}
	memset(&op, 0, sizeof(op));
	op.ctx = self->ctx;
	op.flags = POLLFS_NONBLOCK;
	op.reserved = 1;
	CHECK_ERR(ioctl(dev, POLLFS_IOC_AIO, &op), EINVAL);
	op.reserved = 0x80000000u;
	CHECK_ERR(ioctl(dev, POLLFS_IOC_AIO, &op), EINVAL);
	CHECK_SYS(close(dev));
}

/* EFAULT for an argument that cannot be read whole, creating nothing;
 * the same argument mapped whole works. */
TEST_F(contexts, bad_argument_pointer)
{
	long page = sysconf(_SC_PAGESIZE);
	void *volatile null = NULL;
	struct pollfs_aio_open op;
	int dev, probe, fd;
	char *map, *hole;

	dev = pt_dev();
	probe = CHECK_SYS(dup(dev));
	CHECK_SYS(close(probe));
	map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(map != MAP_FAILED);
	hole = map + page;
	CHECK_SYS(mprotect(hole, (size_t)page, PROT_NONE));
	CHECK_ERR(ioctl(dev, POLLFS_IOC_AIO, null), EFAULT);
	CHECK_ERR(ioctl(dev, POLLFS_IOC_AIO, (void *)1), EFAULT);
	CHECK_ERR(ioctl(dev, POLLFS_IOC_AIO, hole), EFAULT);
	CHECK_ERR(ioctl(dev, POLLFS_IOC_AIO, (void *)-4096L), EFAULT);
	/* a valid argument straddling into the hole: only ctx is mapped */
	memset(&op, 0, sizeof(op));
	op.ctx = self->ctx;
	memcpy(hole - 8, &op, 8);
	CHECK_ERR(ioctl(dev, POLLFS_IOC_AIO, hole - 8), EFAULT);
	/* none of the failures created a file */
	CHECK_EQ(CHECK_SYS(dup(dev)), probe);
	CHECK_SYS(close(probe));

	memcpy(hole - 16, &op, sizeof(op));
	fd = CHECK_SYS(ioctl(dev, POLLFS_IOC_AIO, hole - 16));
	pt_expect_fd_link(fd, "pollfs:[aio]");
	CHECK_SYS(close(fd));
	CHECK_SYS(close(dev));
}

/* Another process's context, whether that process has none of its own
 * or one. */
TEST_F(contexts, another_process_context)
{
	parent_ctx = self->ctx;
	CHECK_EQ(pt_run_child(child_without_contexts, NULL, 20000), PT_PASS);
	CHECK_EQ(pt_run_child(child_with_context, NULL, 20000), PT_PASS);
}

int main(void)
{
	return pt_run_tests();
}
