// SPDX-License-Identifier: MIT
/*
 * libpollfs: the library opens /dev/pollfs once, close-on-exec, when it
 * first creates an object, and creates every later object through that
 * descriptor; threads that create their first objects at the same moment
 * still leave exactly one open.  Each object has its kind's name, for
 * every kind of tests/lib/kinds.c.
 */
#include "lib/futex.h"
#include "lib/kinds.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include <pollfs.h>

PT_BUDGET(50);

#define THREADS 8

/* The descriptors of this process open on /dev/pollfs; the last one in
 * *fd. */
static int device_fds(int *fd)
{
	struct stat dev, st;
	struct dirent *d;
	char path[300];
	DIR *dir;
	int n = 0;

	CHECK_SYS(stat("/dev/pollfs", &dev));
	dir = opendir("/proc/self/fd");
	CHECK(dir);
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		if (stat(path, &st))
			continue;	/* the directory's own descriptor */
		if (S_ISCHR(st.st_mode) && st.st_rdev == dev.st_rdev) {
			*fd = atoi(d->d_name);
			n++;
		}
	}
	closedir(dir);
	return n;
}

static atomic_int arrived;
static int made[THREADS];

static void *creator(void *arg)
{
	int i = (int)(intptr_t)arg;

	atomic_fetch_add(&arrived, 1);
	while (atomic_load(&arrived) < THREADS)
		;
	made[i] = pollfs_futex(POLLFS_CLOEXEC);
	return NULL;
}

int main(void)
{
	pthread_t th[THREADS];
	uint32_t word = 1;
	int dev = -1, fds[pt_nkinds];
	char link[64];

	CHECK_EQ(device_fds(&dev), 0);

	/* first objects, created by several threads at once */
	for (int i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, creator,
					(void *)(intptr_t)i), 0);
	for (int i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	CHECK_EQ(device_fds(&dev), 1);
	CHECK_EQ(fcntl(dev, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	for (int i = 0; i < THREADS; i++) {
		CHECK(made[i] >= 0);
		pt_expect_fd_link(made[i], "pollfs:[futex]");
		CHECK_EQ(pollfs_futex_arm(made[i], &word, 1, 0), 0);
	}
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), THREADS);
	for (int i = 0; i < THREADS; i++)
		CHECK_SYS(close(made[i]));

	/* every kind, through the same descriptor */
	pt_kinds_prepare();
	pt_for_each_kind(k) {
		int i = (int)(k - pt_kinds);

		fds[i] = CHECK_SYS(k->lib_new(0));
		snprintf(link, sizeof(link), "pollfs:[%s]", k->name);
		pt_expect_fd_link(fds[i], link);
	}
	CHECK_EQ(device_fds(&dev), 1);
	for (unsigned int i = 0; i < pt_nkinds; i++)
		CHECK_SYS(close(fds[i]));

	/* it stays open with no object left */
	CHECK_EQ(device_fds(&dev), 1);
	return PT_PASS;
}
