// SPDX-License-Identifier: MIT
/*
 * What a ring costs, and who pays (contract 1.2, and the module's
 * choices pollfs(7) writes down):
 *  - memcg: the ring's memory is charged to the memory cgroup of the
 *    process that sets it up.  In a cgroup with memory.max at 8 MB (the
 *    hierarchy mounted as memcg-limit does), a child that gives futex
 *    objects rings of 4096 records (64 KB each) moves memory.current by
 *    at least that much per ring, and at the limit POLLFS_IOC_RING (or
 *    the object's creation) fails with ENOMEM; after the child, the
 *    charges are gone;
 *  - memlock: the pages of the words a watched object with a ring waits
 *    on are pinned while it is armed, and count against RLIMIT_MEMLOCK.
 *    As uid 65534 (no CAP_IPC_LOCK) with the limit at 32 pages, objects
 *    watching a word each on pages of their own: the arming write fails
 *    with ENOMEM after at most 32 of them, and works again once a few
 *    are closed; a watched set of 64 words on 64 pages fails whole.
 */
#include "lib/futex.h"
#include "lib/ring.h"

#include <stdio.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

PT_BUDGET(60);

#define LIMIT		(8L << 20)
#define ENTRIES		4096
#define MEMLOCK_PAGES	32

static long page;

/* ---- memcg ---- */

struct report {
	long before, after, rings, created;
	int fail_errno;
	bool ring_failed;	/* the ioctl failed, not the object */
};

static char root[256], cg[300];
static bool mounted_here;
static struct report *rep;

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		FAIL("open %s: %s", path, strerror(errno));
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		FAIL("write '%s' to %s: %s", s, path, strerror(errno));
	close(fd);
}

static long memory_current(void)
{
	char path[400], buf[64];

	snprintf(path, sizeof(path), "%s/memory.current", cg);
	if (pt_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return strtol(buf, NULL, 10);
}

static void cleanup(void)
{
	if (cg[0])
		rmdir(cg);
	if (mounted_here) {
		umount2(root, MNT_DETACH);
		rmdir(root);
	}
}

/* In the cgroup: rings until something fails. */
static int memcg_child(void)
{
	volatile char stack[256 << 10];
	struct pollfs_ring_params p;
	int dev = pt_dev();

	/* faulted in while still far from the limit */
	for (size_t i = 0; i < sizeof(stack); i += 4096)
		stack[i] = 1;
	rep->before = memory_current();
	for (int i = 0; i < 10; i++) {
		int fd = ioctl(dev, POLLFS_IOC_FUTEX,
			       &(struct pollfs_open){ 0, 0 });

		if (fd < 0 || rg_ioctl(fd, ENTRIES, 0, 0, &p))
			FAIL("ring %d, far from the limit: %s", i,
			     strerror(errno));
		rep->rings++;
	}
	rep->after = memory_current();
	for (;;) {
		int fd = ioctl(dev, POLLFS_IOC_FUTEX,
			       &(struct pollfs_open){ 0, 0 });

		if (fd < 0) {
			rep->fail_errno = errno;
			break;
		}
		rep->created++;
		if (rg_ioctl(fd, ENTRIES, 0, 0, &p)) {
			rep->fail_errno = errno;
			rep->ring_failed = true;
			break;
		}
		rep->rings++;
		if (rep->rings > 100000)
			break;
	}
	return PT_PASS;
}

TEST(memcg)
{
	struct rlimit rl = { 1 << 20, 1 << 20 };
	char path[400], buf[64];
	int sync[2], status;
	pid_t pid;

	pt_require_root();
	pt_on_fail(cleanup);
	if (access("/sys/fs/cgroup/cgroup.controllers", R_OK) == 0) {
		snprintf(root, sizeof(root), "/sys/fs/cgroup");
	} else {
		snprintf(root, sizeof(root), "/tmp/pollfs-cgroup-XXXXXX");
		CHECK(mkdtemp(root));
		if (mount("none", root, "cgroup2", 0, NULL)) {
			int e = errno;

			rmdir(root);
			pt_skip("mount cgroup2: %s", strerror(e));
		}
		mounted_here = true;
	}
	snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
	if (pt_read_file(path, buf, sizeof(buf)) < 0 || !strstr(buf, "memory"))
		pt_skip("no memory controller in %s", root);
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	write_file(path, "+memory");
	snprintf(cg, sizeof(cg), "%s/pollfs-ring-memcg-%d", root, (int)getpid());
	CHECK_SYS(mkdir(cg, 0755));
	snprintf(path, sizeof(path), "%s/memory.max", cg);
	snprintf(buf, sizeof(buf), "%ld", LIMIT);
	write_file(path, buf);
	snprintf(path, sizeof(path), "%s/memory.swap.max", cg);
	if (access(path, W_OK) == 0)
		write_file(path, "0");
	rep = mmap(NULL, sizeof(*rep), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(rep != MAP_FAILED);

	CHECK_SYS(pipe2(sync, O_CLOEXEC));
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		char c;

		pt_on_fail(NULL);
		alarm(0);
		CHECK_SYS(setrlimit(RLIMIT_NOFILE, &rl));
		write_file("/proc/self/oom_score_adj", "-1000");
		close(sync[1]);
		if (read(sync[0], &c, 1) != 1)
			_exit(PT_FAIL);
		_exit(memcg_child());
	}
	close(sync[0]);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	write_file(path, buf);
	CHECK_EQ(write(sync[1], "x", 1), 1);
	close(sync[1]);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != PT_PASS)
		FAIL("the child in the cgroup: status %#x", status);
	pt_diag("memory.current %ld before 10 rings of %d records, %ld after "
		"(%ld per ring); %ld rings in all, then %s failed with errno "
		"%d (%s)", rep->before, ENTRIES, rep->after,
		(rep->after - rep->before) / 10, rep->rings,
		rep->ring_failed ? "POLLFS_IOC_RING" : "POLLFS_IOC_FUTEX",
		rep->fail_errno, strerror(rep->fail_errno));
	/*
	 * The memory cgroup charges in batches a CPU keeps in stock (64
	 * pages): two CPUs' stocks may have paid for part of the rings.
	 */
	if (rep->after - rep->before < 10L * ENTRIES * RG_FUTEX_REC -
					2 * 64 * 4096L)
		FAIL("10 rings of %d x %d bytes moved memory.current by %ld "
		     "bytes: the rings are not charged", ENTRIES, RG_FUTEX_REC,
		     rep->after - rep->before);
	CHECK_EQ(rep->fail_errno, ENOMEM);
	CHECK(rep->rings <= LIMIT / (ENTRIES * RG_FUTEX_REC));
	/* the child gone, its charges with it */
	for (int64_t end = pt_mono() + MS(PT_WAIT_MS);
	     memory_current() > rep->before + (1L << 20);) {
		if (pt_mono() > end)
			FAIL("memory.current %ld after the child, %ld before",
			     memory_current(), rep->before);
		pt_sleep_ms(20);
	}
	cleanup();
}

/* ---- RLIMIT_MEMLOCK ---- */

/* A watched futex object with a ring, armed on @word: write()'s result. */
static ssize_t watch_with_ring(int *fd, uint32_t *word)
{
	struct pollfs_ring_params p;

	*fd = fx_new(0);
	CHECK_SYS(rg_ioctl(*fd, 2, 0, 0, &p));
	return fx_write1(*fd, word, *word, FX_PRIVATE | FX_WATCH);
}

TEST(memlock)
{
	struct rlimit rl = { MEMLOCK_PAGES * page, MEMLOCK_PAGES * page };
	struct pollfs_futex_event set[64];
	char *pages = mmap(NULL, 256 * page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fds[256], armed = 0, fd, again = 0;
	ssize_t r = 0;

	CHECK(pages != MAP_FAILED);
	pt_become_nobody();
	CHECK_SYS(setrlimit(RLIMIT_MEMLOCK, &rl));
	for (armed = 0; armed < 256; armed++) {
		r = watch_with_ring(&fds[armed],
				    (uint32_t *)(pages + armed * page));
		if (r != FX_REC)
			break;
	}
	pt_diag("%d watched words on pages of their own with RLIMIT_MEMLOCK "
		"of %d pages; then write returned %zd, errno %d (%s)", armed,
		MEMLOCK_PAGES, r, errno, strerror(errno));
	CHECK(armed < 256);
	CHECK_EQ(r, -1);
	CHECK_EQ(errno, ENOMEM);
	CHECK_RANGE(armed, 1, MEMLOCK_PAGES);
	close(fds[armed]);
	/* four closed: room for four again */
	for (int i = 0; i < 4 && i < armed; i++)
		CHECK_SYS(close(fds[--armed]));
	for (int i = 0; i < 4; i++) {
		r = watch_with_ring(&fd, (uint32_t *)(pages + (200 + i) * page));
		if (r == FX_REC)
			again++;
		CHECK(r == FX_REC || errno == ENOMEM);
	}
	CHECK(again >= 1);
	/* a set of 64 words on 64 pages: more than the limit, whole */
	for (int i = 0; i < 64; i++)
		set[i] = fx_ev(pages + (128 + i) * page, 0,
			       FX_PRIVATE | FX_WATCH);
	fd = fx_new(0);
	{
		struct pollfs_ring_params p;

		CHECK_SYS(rg_ioctl(fd, 2, 0, 0, &p));
	}
	CHECK_ERR(write(fd, set, sizeof(set)), ENOMEM);
	fx_expect_unarmed(fd);
}

int main(void)
{
	page = sysconf(_SC_PAGESIZE);
	return pt_run_tests();
}
