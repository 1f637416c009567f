/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the io_uring tests (liburing, linked statically): one ring,
 * submit and wait with a limit, and a count of io_uring's worker threads
 * (iou-wrk-*), which tells a request that completed inline from one that
 * was handed to a worker.  Include it after the other helper headers.
 */
#ifndef POLLFS_TESTS_URING_H
#define POLLFS_TESTS_URING_H

#include "lib.h"

#include <dirent.h>
#include <liburing.h>
#include <stdio.h>

static struct io_uring ut_ring;

static inline void ut_init(void)
{
	int r = io_uring_queue_init(16, &ut_ring, 0);

	if (r == -ENOSYS || r == -EPERM)
		pt_skip("io_uring not available (%s)", strerror(-r));
	if (r)
		FAIL("io_uring_queue_init: %s", strerror(-r));
}

static inline struct io_uring_sqe *ut_sqe(uint64_t data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ut_ring);

	if (!sqe)
		FAIL("io_uring_get_sqe: the submission queue is full");
	io_uring_sqe_set_data64(sqe, data);
	return sqe;
}

static inline void ut_submit(void)
{
	int r = io_uring_submit(&ut_ring);

	if (r < 0)
		FAIL("io_uring_submit: %s", strerror(-r));
}

/*
 * Waits up to timeout_ms for a completion: true with its result, user
 * data and flags, false if none came.
 */
static inline bool ut_wait(int timeout_ms, int *res, uint64_t *data,
			   unsigned int *flags)
{
	struct __kernel_timespec ts = {
		.tv_sec = timeout_ms / 1000,
		.tv_nsec = (timeout_ms % 1000) * NSEC_PER_MSEC,
	};
	struct io_uring_cqe *cqe;
	int r;

	r = io_uring_wait_cqe_timeout(&ut_ring, &cqe, &ts);
	if (r == -ETIME)
		return false;
	if (r)
		FAIL("io_uring_wait_cqe_timeout: %s", strerror(-r));
	*res = cqe->res;
	if (data)
		*data = io_uring_cqe_get_data64(cqe);
	if (flags)
		*flags = cqe->flags;
	io_uring_cqe_seen(&ut_ring, cqe);
	return true;
}

/* The result of the one request in flight, which must complete. */
#define ut_result(timeout_ms) ut_result_at(__FILE__, __LINE__, (timeout_ms))
static inline int ut_result_at(const char *file, int line, int timeout_ms)
{
	int res;

	if (!ut_wait(timeout_ms * (int)pt_time_scale(), &res, NULL, NULL))
		pt_fail_at(file, line, "no completion within %d ms",
			   timeout_ms * (int)pt_time_scale());
	return res;
}

/* io_uring's worker threads in this process. */
static inline int ut_workers(void)
{
	char path[300], comm[32];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	dir = opendir("/proc/self/task");
	if (!dir)
		FAIL("/proc/self/task: %s", strerror(errno));
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 d->d_name);
		if (pt_read_file(path, comm, sizeof(comm)) > 0 &&
		    !strncmp(comm, "iou-wrk", 7))
			n++;
	}
	closedir(dir);
	return n;
}

#endif /* POLLFS_TESTS_URING_H */
