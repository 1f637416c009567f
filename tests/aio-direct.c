// SPDX-License-Identifier: MIT
/*
 * Real O_DIRECT I/O through AIO, driven by the AIO object: direct writes
 * and reads complete asynchronously (from the block layer), the object
 * counts them and wakes a sleeping reader and epoll_wait, and the data
 * read back is what was written; io_destroy and process exit with direct
 * I/O in flight are prompt and clean.
 *
 * tmpfs refuses O_DIRECT, so the test needs a filesystem that takes it:
 * $POLLFS_DIRECT_DIR if set, else /tmp if it takes O_DIRECT, else (as
 * root) an ext2 image in /tmp on a loop device, mounted with the ext4
 * driver (modprobe loop, ext4 and crc32c are tried; mke2fs is needed).
 * It skips, saying what is missing, if none is available.  The
 * filesystem and the file are set up once; each behaviour is a TEST.
 */
#include "lib/aio.h"

#include <linux/loop.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

PT_BUDGET(120);

enum { BLK = 4096, NBLK = 64 };

static char dir[128], img[160];
static int loopfd = -1;
static bool mounted;
static pid_t main_pid;

static void cleanup(void)
{
	if (mounted && syscall(SYS_umount2, dir, 0))
		pt_diag("umount %s: %s", dir, strerror(errno));
	mounted = false;
	if (loopfd >= 0) {
		ioctl(loopfd, LOOP_CLR_FD, 0);
		close(loopfd);
		loopfd = -1;
	}
	if (img[0]) {
		unlink(img);
		rmdir(dir);
		img[0] = 0;
	}
}

/* The TESTs' children fail alone: the mount is main's to undo. */
static void fail_hook(void)
{
	if (getpid() == main_pid)
		cleanup();
}

static bool takes_direct(const char *d)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/pollfs-direct-probe-XXXXXX", d);
	fd = mkostemp(path, O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		pt_diag("O_DIRECT in %s: %s", d, strerror(errno));
		return false;
	}
	unlink(path);
	close(fd);
	return true;
}

static bool has_fs(const char *name)
{
	char line[128];
	FILE *f = fopen("/proc/filesystems", "r");
	bool found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *t = strrchr(line, '\t');

		line[strcspn(line, "\n")] = 0;
		if (t && !strcmp(t + 1, name))
			found = true;
	}
	fclose(f);
	return found;
}

/* A loop-mounted ext2 image; returns a reason if it cannot be had. */
static const char *setup_loop_fs(void)
{
	static char reason[512];
	char out[1024], dev[64];
	int imgfd, ctl, n;
	const char *type;

	if (geteuid() != 0)
		return "not root: cannot set up a loop device";
	{
		char *mp_loop[] = { "modprobe", "-q", "loop", NULL };
		char *mp_ext4[] = { "modprobe", "-q", "ext4", NULL };
		char *mp_crc[] = { "modprobe", "-q", "crc32c", NULL };

		pt_run_cmd(mp_loop, NULL, 0);
		pt_run_cmd(mp_ext4, NULL, 0);
		pt_run_cmd(mp_crc, NULL, 0);
	}
	if (access("/dev/loop-control", F_OK))
		return "no /dev/loop-control (loop.ko not loaded nor loadable)";
	type = has_fs("ext4") ? "ext4" : has_fs("ext2") ? "ext2" : NULL;
	if (!type)
		return "no ext4 or ext2 filesystem (ext4.ko not loaded nor "
		       "loadable)";

	snprintf(dir, sizeof(dir), "/tmp/pollfs-direct-XXXXXX");
	if (!mkdtemp(dir))
		FAIL("mkdtemp: %s", strerror(errno));
	snprintf(img, sizeof(img), "%s.img", dir);
	imgfd = CHECK_SYS(open(img, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			       0600));
	CHECK_SYS(ftruncate(imgfd, 32 << 20));
	{
		char *mkfs[] = { "mke2fs", "-q", "-F", "-t", "ext2", "-b",
				 "4096", img, NULL };

		n = pt_run_cmd(mkfs, out, sizeof(out));
		if (n != 0) {
			close(imgfd);
			snprintf(reason, sizeof(reason),
				 "mke2fs failed (status %d): %.300s", n, out);
			return reason;
		}
	}
	ctl = CHECK_SYS(open("/dev/loop-control", O_RDWR | O_CLOEXEC));
	n = CHECK_SYS(ioctl(ctl, LOOP_CTL_GET_FREE));
	close(ctl);
	snprintf(dev, sizeof(dev), "/dev/loop%d", n);
	loopfd = open(dev, O_RDWR | O_CLOEXEC);
	if (loopfd < 0)
		FAIL("open(%s): %s", dev, strerror(errno));
	CHECK_SYS(ioctl(loopfd, LOOP_SET_FD, imgfd));
	close(imgfd);
	if (syscall(SYS_mount, dev, dir, type, 0, NULL)) {
		snprintf(reason, sizeof(reason), "mount(%s, %s) of an ext2 "
			 "image failed: %s (for ext4.ko, is crc32c_generic.ko "
			 "loadable? see dmesg)", dev, type, strerror(errno));
		return reason;
	}
	mounted = true;
	pt_diag("O_DIRECT on %s (%s on %s, backed by %s)", dir, type, dev, img);
	return NULL;
}

static const char *find_dir(void)
{
	const char *env = getenv("POLLFS_DIRECT_DIR"), *why;
	static char reason[768];

	if (env && *env) {
		if (!takes_direct(env))
			FAIL("POLLFS_DIRECT_DIR=%s does not take O_DIRECT", env);
		snprintf(dir, sizeof(dir), "%s", env);
		return dir;
	}
	if (takes_direct("/tmp")) {
		snprintf(dir, sizeof(dir), "/tmp");
		return dir;
	}
	why = setup_loop_fs();
	if (!why) {
		if (!takes_direct(dir))
			FAIL("the loop-mounted %s does not take O_DIRECT", dir);
		return dir;
	}
	cleanup();
	snprintf(reason, sizeof(reason), "no filesystem taking O_DIRECT: /tmp "
		 "is tmpfs (EINVAL) and %s; set POLLFS_DIRECT_DIR or provide "
		 "loop.ko, ext4.ko (with jbd2, mbcache, crc16, crc32c) and "
		 "mke2fs",
		 why);
	pt_skip("%s", reason);
}

static char *bufs;	/* NBLK aligned blocks to write, NBLK to read into */

static char *wblk(int i)
{
	return bufs + (size_t)i * BLK;
}

static char *rblk(int i)
{
	return bufs + (size_t)(NBLK + i) * BLK;
}

/* Sleeps in epoll_wait until the object reports n, then reaps them all. */
static void await_completions(int ep, int fd, aio_context_t ctx, int n,
			      struct io_event *ev)
{
	int64_t end = pt_mono() + MS(PT_WAIT_MS);
	struct pollfs_aio_event pev;
	struct epoll_event e;
	int got = 0;

	for (;;) {
		int r = CHECK_SYS(epoll_wait(ep, &e, 1, PT_WAIT_MS));

		if (r != 1)
			FAIL("epoll_wait: nothing within %d ms (%d of %d "
			     "reaped)", PT_WAIT_MS, got, n);
		CHECK_EQ(e.events, EPOLLIN);
		CHECK_EQ(ax_read_rec(fd, &pev), AX_EVENT_SIZE);
		CHECK_RANGE(pev.available, 1, n - got);
		got += (int)ax_reap(ctx, 1, n - got, ev + got, 0);
		if (got == n)
			break;
		if (pt_mono() > end)
			FAIL("%d of %d completions", got, n);
	}
	ax_expect_empty(fd);
}

static int file_fd;
static aio_context_t child_ctx;

static int exit_in_flight(void *unused)
{
	struct iocb cbs[NBLK], *ptrs[NBLK];
	int fd;

	(void)unused;
	child_ctx = ax_setup(NBLK);
	fd = ax_fd(child_ctx, 0);
	for (int i = 0; i < NBLK; i++) {
		ax_prep_pwrite(&cbs[i], file_fd, wblk(i), BLK, (off_t)i * BLK,
			       i);
		ptrs[i] = &cbs[i];
	}
	ax_submit(child_ctx, NBLK, ptrs);
	(void)fd;
	return PT_PASS;		/* exits with them in flight */
}

static struct pollfs_aio_event blocked_ev;
static ssize_t blocked_ret;
static int blocked_fd;

static void *blocked_read(void *unused)
{
	(void)unused;
	blocked_ret = ax_read_rec(blocked_fd, &blocked_ev);
	return NULL;
}

/* A context with NBLK slots, its non-blocking object, an epoll on it. */
struct setup {
	aio_context_t ctx;
	int fd, ep;
};

static struct setup setup(void)
{
	struct epoll_event e = { .events = EPOLLIN };
	struct setup st;

	st.ctx = ax_setup(NBLK);
	st.fd = ax_fd(st.ctx, POLLFS_NONBLOCK);
	st.ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	CHECK_SYS(epoll_ctl(st.ep, EPOLL_CTL_ADD, st.fd, &e));
	return st;
}

static void teardown(struct setup *st)
{
	CHECK_SYS(close(st->ep));
	CHECK_SYS(close(st->fd));
	ax_destroy(st->ctx);
}

static void prep_writes(struct iocb *cbs)
{
	for (int i = 0; i < NBLK; i++)
		ax_prep_pwrite(&cbs[i], file_fd, wblk(i), BLK, (off_t)i * BLK,
			       i);
}

static struct iocb cbs[NBLK], *ptrs[NBLK];
static struct io_event ev[NBLK];

TEST(direct_writes_and_reads_counted_with_data_intact)
{
	struct setup st = setup();
	char path[64], check[BLK];
	int bfd;

	/* NBLK direct writes in one submit */
	prep_writes(cbs);
	ax_submit(st.ctx, NBLK, ptrs);
	await_completions(st.ep, st.fd, st.ctx, NBLK, ev);
	for (int i = 0; i < NBLK; i++)
		if (ev[i].res != BLK || ev[i].data >= NBLK)
			FAIL("direct write %d: {data %llu, res %lld}", i,
			     (unsigned long long)ev[i].data,
			     (long long)ev[i].res);

	/* direct reads, in reverse order */
	memset(rblk(0), 0, (size_t)NBLK * BLK);
	for (int i = 0; i < NBLK; i++)
		ax_prep_pread(&cbs[i], file_fd, rblk(NBLK - 1 - i), BLK,
			      (off_t)(NBLK - 1 - i) * BLK, 100 + i);
	ax_submit(st.ctx, NBLK, ptrs);
	await_completions(st.ep, st.fd, st.ctx, NBLK, ev);
	for (int i = 0; i < NBLK; i++) {
		CHECK_EQ(ev[i].res, BLK);
		if (memcmp(rblk(i), wblk(i), BLK))
			FAIL("direct read of block %d differs", i);
	}
	/* and through the page cache */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", file_fd);
	bfd = CHECK_SYS(open(path, O_RDONLY | O_CLOEXEC));
	CHECK_EQ(pread(bfd, check, BLK, 7 * BLK), BLK);
	CHECK(!memcmp(check, wblk(7), BLK));
	CHECK_SYS(close(bfd));
	teardown(&st);
}

TEST(blocking_read_woken_by_a_direct_read)
{
	struct setup st = setup();
	struct epoll_event e;
	pthread_t th;

	/* block 5 on disk first, by a synchronous direct write */
	CHECK_EQ(pwrite(file_fd, wblk(5), BLK, 5 * BLK), BLK);
	blocked_fd = ax_fd(st.ctx, 0);
	CHECK_EQ(pthread_create(&th, NULL, blocked_read, NULL), 0);
	pt_sleep_ms(100);
	memset(rblk(0), 0, BLK);
	ax_prep_pread(&cbs[0], file_fd, rblk(0), BLK, 5 * BLK, 200);
	ax_submit(st.ctx, 1, ptrs);
	pthread_join(th, NULL);
	CHECK_EQ(blocked_ret, AX_EVENT_SIZE);
	CHECK_EQ(blocked_ev.ctx, st.ctx);
	CHECK_EQ(blocked_ev.available, 1);
	CHECK_EQ(ax_reap(st.ctx, 1, 1, ev, PT_WAIT_MS), 1);
	ax_check_event(&ev[0], 200, BLK);
	CHECK(!memcmp(rblk(0), wblk(5), BLK));
	CHECK_EQ(epoll_wait(st.ep, &e, 1, 0), 0);
	CHECK_SYS(close(blocked_fd));
	teardown(&st);
}

/* io_destroy waits for the I/O, not for pollfs. */
TEST(io_destroy_with_direct_writes_in_flight)
{
	struct setup st = setup();
	struct epoll_event e;
	int64_t t0;

	blocked_fd = ax_fd(st.ctx, 0);
	prep_writes(cbs);
	ax_submit(st.ctx, NBLK, ptrs);
	t0 = pt_mono();
	ax_destroy(st.ctx);
	pt_diag("io_destroy with %d direct writes in flight: %lld us", NBLK,
		(long long)((pt_mono() - t0) / 1000));
	CHECK(pt_mono() - t0 < MS(5000));
	ax_expect_hup(st.fd);
	ax_expect_hup(blocked_fd);
	CHECK_EQ(epoll_wait(st.ep, &e, 1, 0), 1);
	CHECK_EQ(e.events, EPOLLHUP);
	CHECK_SYS(close(st.ep));
	CHECK_SYS(close(st.fd));
	CHECK_SYS(close(blocked_fd));
}

TEST(process_exit_with_direct_writes_in_flight)
{
	for (int i = 0; i < 3; i++)
		CHECK_EQ(pt_run_child(exit_in_flight, NULL, 20000), PT_PASS);
}

int main(void)
{
	char path[256];
	int ret;

	main_pid = getpid();
	pt_on_fail(fail_hook);
	find_dir();

	bufs = mmap(NULL, (size_t)2 * NBLK * BLK, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(bufs != MAP_FAILED);
	for (int b = 0; b < NBLK; b++)
		for (int i = 0; i < BLK; i++)
			wblk(b)[i] = (char)(b * 13 + i * 3 + (i >> 9));
	snprintf(path, sizeof(path), "%s/pollfs-direct-XXXXXX", dir);
	file_fd = mkostemp(path, O_DIRECT | O_CLOEXEC);
	CHECK_SYS(file_fd);
	CHECK_SYS(unlink(path));
	CHECK(CHECK_SYS(fcntl(file_fd, F_GETFL)) & O_DIRECT);
	for (int i = 0; i < NBLK; i++)
		ptrs[i] = &cbs[i];

	ret = pt_run_tests();
	CHECK_SYS(close(file_fd));
	cleanup();
	return ret;
}
