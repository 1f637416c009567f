// SPDX-License-Identifier: MIT
/*
 * Every object file's inode is root's (uid 0, gid 0, mode 0600), like the
 * inode behind eventfd, timerfd and signalfd, whoever created it and
 * whoever mounted pollfs's internal filesystem first: an unprivileged
 * creator cannot chmod or chown it, nor watch it with inotify (which
 * would show it every read, write and close of every other user's
 * objects, since all objects share the inode).
 *
 * The first child, uid 65534, is the first user of the module here (the
 * test opens nothing before it), so it is also the one that mounts.
 */
#include "lib/kinds.h"

#include <stdio.h>
#include <sys/inotify.h>
#include <sys/stat.h>

PT_BUDGET(60);

static void check_root_owned(const char *what, int fd)
{
	char path[64];
	struct stat st;
	int in;

	CHECK_SYS(fstat(fd, &st));
	pt_diag("%s: uid %u gid %u mode %#o", what, (unsigned)st.st_uid,
		(unsigned)st.st_gid, (unsigned)st.st_mode);
	CHECK_EQ(st.st_uid, 0);
	CHECK_EQ(st.st_gid, 0);
	CHECK_EQ(st.st_mode & 07777, 0600);
	if (geteuid() == 0)
		return;

	CHECK_ERR(fchmod(fd, 0666), EPERM);
	CHECK_ERR(fchown(fd, geteuid(), getegid()), EPERM);
	CHECK_SYS(fstat(fd, &st));
	CHECK_EQ(st.st_mode & 07777, 0600);

	in = CHECK_SYS(inotify_init1(IN_CLOEXEC));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	CHECK_ERR(inotify_add_watch(in, path, IN_ALL_EVENTS), EACCES);
	CHECK_SYS(close(in));
}

static int check_all_kinds(void *nobody)
{
	int dev, fd;

	if (nobody)
		pt_become_nobody();
	pt_kinds_prepare();
	dev = pt_dev();
	pt_for_each_kind(k) {
		fd = pt_kind_new(k, dev, 0);
		check_root_owned(k->name, fd);
		CHECK_SYS(close(fd));
	}
	CHECK_SYS(close(dev));
	return PT_PASS;
}

int main(void)
{
	CHECK_EQ(pt_run_child(check_all_kinds, (void *)1, 30000), PT_PASS);
	if (geteuid() == 0)
		CHECK_EQ(pt_run_child(check_all_kinds, NULL, 30000), PT_PASS);
	return PT_PASS;
}
