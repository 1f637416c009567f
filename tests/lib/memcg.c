// SPDX-License-Identifier: MIT
/* A memory cgroup for the tests; see memcg.h. */
#include "memcg.h"

#include <stdio.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* The hierarchy's root, the cgroup ("" once removed), and whether the
 * root was mounted here. */
static char root[256], cg[320];
static bool mounted_here;

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		FAIL("open %s: %s", path, strerror(errno));
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		FAIL("write '%s' to %s: %s", s, path, strerror(errno));
	close(fd);
}

static void unmount_root(void)
{
	if (mounted_here) {
		umount2(root, MNT_DETACH);
		rmdir(root);
		mounted_here = false;
	}
}

/* The fail hook: whatever is left, errors ignored. */
static void memcg_cleanup(void)
{
	if (cg[0])
		rmdir(cg);
	unmount_root();
}

void pt_memcg_create(const char *name, long limit)
{
	char path[400], buf[256];

	pt_require_root();
	pt_on_fail(memcg_cleanup);
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
	if (pt_read_file(path, buf, sizeof(buf)) < 0 || !strstr(buf, "memory")) {
		unmount_root();
		pt_skip("no memory controller in %s", root);
	}
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	write_file(path, "+memory");
	snprintf(cg, sizeof(cg), "%s/pollfs-%s-%d", root, name, (int)getpid());
	CHECK_SYS(mkdir(cg, 0755));
	snprintf(path, sizeof(path), "%s/memory.max", cg);
	snprintf(buf, sizeof(buf), "%ld", limit);
	write_file(path, buf);
	snprintf(path, sizeof(path), "%s/memory.swap.max", cg);
	if (access(path, W_OK) == 0)
		write_file(path, "0");
}

void pt_memcg_run(int (*fn)(void *arg), void *arg)
{
	struct rlimit rl = { 1 << 20, 1 << 20 };
	char path[400], buf[32];
	int sync[2], status;
	pid_t pid;

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
		_exit(fn(arg));
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
}

long pt_memcg_read(const char *file, const char *key)
{
	char path[400], buf[4096], *p = buf;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
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

void pt_memcg_remove(void)
{
	CHECK_SYS(rmdir(cg));
	cg[0] = 0;
	unmount_root();
}
