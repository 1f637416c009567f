// SPDX-License-Identifier: MIT
/*
 * The memory of a process's objects is charged to its memory cgroup: in
 * a cgroup with memory.max at 8 MB, creating objects ends with the ioctl
 * failing with ENOMEM (or EMFILE, were the descriptor limit first: it is
 * raised so that memory is the limit), and nothing crashes or hangs.
 *
 * The cgroup2 hierarchy is mounted on a temporary directory when none is
 * mounted (the guest has none), the memory controller enabled, and a
 * child moved into a new cgroup "pollfs-memcg-N".  The child makes
 * itself unkillable by the OOM killer (oom_score_adj -1000): at the
 * limit, the cgroup's OOM kill finds no victim and the charge fails, so
 * the allocation fails and the ioctl returns ENOMEM.  The child touches
 * no new memory of its own near the limit (its stack is faulted in
 * first; it reports through a page the parent mapped), since a page
 * fault that cannot be charged would only retry.
 *
 * Checked, in the child:
 *  - 100 futex objects armed with 128 records each (pollfs allocates
 *    ~18 KB of wait entries for each, GFP_KERNEL_ACCOUNT) move
 *    memory.current by at least 100 x 128 x 64 bytes (800 KB, well above
 *    the per-CPU charge batches): the object memory is charged at all;
 *    and at most 64 KB per object: plausibly;
 *  - then objects of every kind (tests/lib/kinds.c), round-robin, until
 *    an ioctl fails:
 *    it fails with ENOMEM, memory.current is near memory.max, and
 *    memory.events counts "max" events;
 * and in the parent: after the child exits, memory.current falls back
 * (the charges went with the objects), the cgroup can be removed, and
 * the parent, outside it, still creates and uses objects of every kind.
 */
#include "lib/futex.h"
#include "lib/kinds.h"

#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

PT_BUDGET(55);

#define LIMIT		(8L << 20)
#define NARMED		100
#define NREC		POLLFS_FUTEX_WAITV_MAX

struct report {
	long before, after_armed, at_fail, created;
	int fail_errno, kind_failed;
	char msg[256];
};

static char root[256], cg[300];
static bool mounted_here;
static struct report *rep;
static uint32_t words[NREC];

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		FAIL("open %s: %s", path, strerror(errno));
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		FAIL("write '%s' to %s: %s", s, path, strerror(errno));
	close(fd);
}

/* A number from a cgroup file (the first one, or after "key "). */
static long read_num(const char *dir, const char *file, const char *key)
{
	char path[400], buf[4096], *p = buf;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (pt_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	if (key) {
		/* the line that starts with key */
		size_t kl = strlen(key);

		while (p && strncmp(p, key, kl)) {
			p = strchr(p, '\n');
			if (p)
				p++;
		}
		if (!p)
			return -1;
		p += kl;
	}
	return strtol(p, NULL, 10);
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

/* The child, in the cgroup. */
static int child(void *arg)
{
	struct pollfs_futex_event ev[NREC];
	volatile char stack[256 << 10];
	int dev, fd;
	long n = 0;

	(void)arg;
	/* the stack, faulted in while still outside the limit's reach */
	for (size_t i = 0; i < sizeof(stack); i += 4096)
		stack[i] = 1;
	pt_kinds_prepare();
	dev = pt_dev();
	for (int i = 0; i < NREC; i++)
		ev[i] = fx_ev(&words[i], words[i], FX_PRIVATE);

	rep->before = read_num(cg, "memory.current", NULL);
	for (int i = 0; i < NARMED; i++) {
		fd = ioctl(dev, POLLFS_IOC_FUTEX,
			   &(struct pollfs_open){ 0, 0 });
		if (fd < 0)
			FAIL("futex object %d: %s", i, strerror(errno));
		fx_armv(fd, ev, NREC);
	}
	rep->after_armed = read_num(cg, "memory.current", NULL);

	for (;;) {
		int k = (int)(n % pt_nkinds);
		int r = pt_kind_try(&pt_kinds[k], dev, 0);

		if (r >= 0)
			fd = r;
		if (r < 0) {
			rep->fail_errno = errno;
			rep->kind_failed = k;
			break;
		}
		n++;
		if (n > 2000000) {
			snprintf(rep->msg, sizeof(rep->msg),
				 "2,000,000 objects and no failure");
			break;
		}
	}
	rep->created = n;
	/* room to open memory.current: the last objects go */
	for (int i = 1; i <= 64 && fd - i > dev; i++)
		close(fd - i);
	rep->at_fail = read_num(cg, "memory.current", NULL);
	return PT_PASS;
}

int main(void)
{
	struct rlimit rl = { 1 << 20, 1 << 20 };
	char path[400], buf[64];
	long cur_after, events_max;
	int status;
	pid_t pid;
	int sync[2];

	pt_require_root();
	pt_on_fail(cleanup);

	/* a cgroup2 hierarchy with the memory controller */
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
	{
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		char c[256] = "";

		if (fd < 0 || read(fd, c, sizeof(c) - 1) < 0)
			FAIL("%s: %s", path, strerror(errno));
		close(fd);
		if (!strstr(c, "memory"))
			pt_skip("no memory controller: %s", c);
	}
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	write_file(path, "+memory");
	snprintf(cg, sizeof(cg), "%s/pollfs-memcg-%d", root, (int)getpid());
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
	memset(rep, 0, sizeof(*rep));
	for (int i = 0; i < NREC; i++)
		words[i] = (uint32_t)i;

	CHECK_SYS(pipe2(sync, O_CLOEXEC));
	pid = CHECK_SYS(fork());
	if (pid == 0) {
		char c;

		pt_on_fail(NULL);
		alarm(0);
		CHECK_SYS(setrlimit(RLIMIT_NOFILE, &rl));
		write_file("/proc/self/oom_score_adj", "-1000");
		close(sync[1]);
		/* moved into the cgroup by the parent */
		if (read(sync[0], &c, 1) != 1)
			_exit(PT_FAIL);
		_exit(child(NULL));
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
	if (rep->msg[0])
		FAIL("%s", rep->msg);

	pt_diag("memory.current: %ld before, %ld with %d futex objects armed "
		"with %d records each (%+ld, %ld per object)", rep->before,
		rep->after_armed, NARMED, NREC,
		rep->after_armed - rep->before,
		(rep->after_armed - rep->before) / NARMED);
	pt_diag("%ld more objects, then the ioctl (%s) failed with "
		"errno %d (%s) at memory.current %ld of %ld", rep->created,
		pt_kinds[rep->kind_failed].name, rep->fail_errno, strerror(rep->fail_errno),
		rep->at_fail, LIMIT);
	CHECK(rep->before >= 0 && rep->after_armed >= 0);
	if (rep->after_armed - rep->before < (long)NARMED * NREC * 64)
		FAIL("arming %d x %d records moved memory.current by %ld bytes "
		     "only: the objects' memory is not charged", NARMED, NREC,
		     rep->after_armed - rep->before);
	if (rep->after_armed - rep->before > (long)NARMED * (64 << 10))
		FAIL("arming moved memory.current by %ld bytes: more than "
		     "64 KB per object", rep->after_armed - rep->before);
	CHECK_EQ(rep->fail_errno, ENOMEM);
	CHECK(rep->created > 0);
	CHECK(rep->at_fail > LIMIT - (1L << 20));
	events_max = read_num(cg, "memory.events", "max ");
	pt_diag("memory.events max %ld", events_max);
	CHECK(events_max > 0);

	/* the charges left with the objects */
	for (int64_t end = pt_mono() + 5 * NSEC_PER_SEC;;) {
		cur_after = read_num(cg, "memory.current", NULL);
		if (cur_after < (2L << 20))
			break;
		if (pt_mono() > end)
			FAIL("memory.current %ld after the child's exit",
			     cur_after);
		pt_sleep_ms(20);
	}
	pt_diag("memory.current %ld after the child's exit", cur_after);
	CHECK_SYS(rmdir(cg));
	cg[0] = 0;

	/* nothing else broke: the parent makes and uses one of each */
	{
		int dev = pt_dev();

		pt_kinds_prepare();
		pt_for_each_kind(k) {
			int fd = pt_kind_new(k, dev, 0);

			pt_kind_use(k, fd);
			CHECK_SYS(close(fd));
		}
		CHECK_SYS(close(dev));
	}
	cleanup();
	return PT_PASS;
}
