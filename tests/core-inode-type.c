// SPDX-License-Identifier: MIT
/*
 * fstat() of every kind of object shows the file type that the kernel's
 * own anonymous inodes show, mode 0600 and owner root (issue 24, part 6).
 *
 * The objects share one inode, made by alloc_anon_inode() on pollfs's
 * internal mount, whose mode the module then sets.  What its type
 * should look like from user space is what eventfd, timerfd and
 * signalfd show on the same kernel, the stock anonymous inodes: lsof,
 * for one, tells anonymous inodes by their having no type.
 *
 * Debian's 6.1, 6.12 and 7.3 give no type, to either.  The kernels that
 * carried "anon_inode: use a proper mode internally" (2025, until
 * reverted) gave S_IFREG, and hid it from stat() on their own anonymous
 * inodes only: there a module that keeps alloc_anon_inode()'s type and
 * does not hide it shows S_IFREG where eventfd shows none, and fails.
 */
#include "lib/kinds.h"

#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>

PT_BUDGET(30);

static const char *type_name(mode_t type)
{
	switch (type) {
	case 0:
		return "none";
	case S_IFREG:
		return "S_IFREG";
	case S_IFCHR:
		return "S_IFCHR";
	case S_IFIFO:
		return "S_IFIFO";
	case S_IFSOCK:
		return "S_IFSOCK";
	case S_IFDIR:
		return "S_IFDIR";
	default:
		return "other";
	}
}

static mode_t stat_mode(const char *what, int fd, bool pollfs)
{
	struct stat st;

	CHECK_SYS(fstat(fd, &st));
	pt_diag("%-8s mode %06o (type %s), uid %u gid %u", what,
		(unsigned)st.st_mode, type_name(st.st_mode & S_IFMT),
		(unsigned)st.st_uid, (unsigned)st.st_gid);
	if (pollfs) {
		CHECK_EQ(st.st_mode & 07777, 0600);
		CHECK_EQ(st.st_uid, 0);
		CHECK_EQ(st.st_gid, 0);
	}
	return st.st_mode & S_IFMT;
}

int main(void)
{
	mode_t stock, type;
	sigset_t mask;
	int dev, fd, efd, tfd, sfd;

	efd = CHECK_SYS(eventfd(0, EFD_CLOEXEC));
	tfd = CHECK_SYS(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	sfd = CHECK_SYS(signalfd(-1, &mask, SFD_CLOEXEC));
	stock = stat_mode("eventfd", efd, false);
	/* Three of the kernel's: they agree, or there is no reference. */
	CHECK_EQ(stat_mode("timerfd", tfd, false), stock);
	CHECK_EQ(stat_mode("signalfd", sfd, false), stock);

	pt_kinds_prepare();
	dev = pt_dev();
	pt_for_each_kind(k) {
		fd = pt_kind_new(k, dev, 0);
		type = stat_mode(k->name, fd, true);
		if (type != stock)
			FAIL("%s object: file type %s (%06o), the kernel's "
			     "anonymous inodes %s (%06o)", k->name,
			     type_name(type), (unsigned)type,
			     type_name(stock), (unsigned)stock);
		CHECK_SYS(close(fd));
	}
	CHECK_SYS(close(dev));
	CHECK_SYS(close(sfd));
	CHECK_SYS(close(tfd));
	CHECK_SYS(close(efd));
	return PT_PASS;
}
