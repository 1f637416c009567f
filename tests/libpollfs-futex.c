// SPDX-License-Identifier: MIT
/*
 * libpollfs: pollfs_futex(), pollfs_futex_arm(), pollfs_futex_armv(),
 * pollfs_futex_read().
 *
 * An armed object is a waiter that FUTEX_WAKE counts, private or shared
 * (across fork, through MAP_SHARED memory); a read returns the woken
 * records as armed, at most n, then the object is unarmed; a mismatch
 * arms nothing; arming replaces the previous wait; a vector arms all or
 * nothing; and the documented errors.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <pollfs.h>

PT_BUDGET(50);

static uint32_t words[4] __attribute__((aligned(16)));

static void fill(struct pollfs_futex_event *r, size_t n)
{
	memset(r, 0xa5, n * sizeof(*r));
}

static bool untouched(const struct pollfs_futex_event *r)
{
	const unsigned char *p = (const unsigned char *)r;

	for (size_t i = 0; i < sizeof(*r); i++)
		if (p[i] != 0xa5)
			return false;
	return true;
}

/* ---- creation ---- */

TEST(create)
{
	struct pollfs_futex_event r[2];
	int fd;

	CHECK_ERR(pollfs_futex(O_WRONLY), EINVAL);
	CHECK_ERR(pollfs_futex(O_APPEND), EINVAL);
	CHECK_ERR(pollfs_futex(-1), EINVAL);
	CHECK_ERR(pollfs_futex(POLLFS_FUTEX_SHARED), EINVAL);

	fd = CHECK_SYS(pollfs_futex(0));
	CHECK_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	/* unarmed: a read fails, blocking or not */
	CHECK_ERR(pollfs_futex_read(fd, r, 2), EINVAL);
	CHECK_SYS(close(fd));

	fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC));
	CHECK_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_ERR(pollfs_futex_read(fd, r, 2), EINVAL);
	CHECK_SYS(close(fd));
}

/* ---- one record ---- */

TEST(arm)
{
	struct pollfs_futex_event r[3];
	int fd;

	fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK));
	words[0] = 41;

	/* a mismatch arms nothing */
	CHECK_EQ(pollfs_futex_arm(fd, &words[0], 40, 0), 1);
	CHECK_ERR(pollfs_futex_read(fd, r, 1), EINVAL);
	CHECK_EQ(fx_wake(&words[0], 1, FX_PRIVATE), 0);

	/* armed: one waiter, woken by a private wake */
	CHECK_EQ(pollfs_futex_arm(fd, &words[0], 41, 0), 0);
	fx_expect_armed(fd);
	CHECK_ERR(pollfs_futex_read(fd, r, 1), EAGAIN);
	CHECK_EQ(fx_wake(&words[0], 1, FX_SHARED), 0);	/* not that futex */
	CHECK_EQ(fx_wake(&words[0], INT_MAX, FX_PRIVATE), 1);
	fx_expect_ready(fd);
	fill(r, 3);
	CHECK_EQ(pollfs_futex_read(fd, r, 3), 1);
	fx_check_rec(&r[0], &words[0], 41, 0);
	CHECK(untouched(&r[1]));
	/* read once, then unarmed */
	CHECK_ERR(pollfs_futex_read(fd, r, 3), EINVAL);
	CHECK_EQ(fx_wake(&words[0], 1, FX_PRIVATE), 0);

	/* shared, on process-private memory: shared wakes only */
	CHECK_EQ(pollfs_futex_arm(fd, &words[0], 41, POLLFS_FUTEX_SHARED), 0);
	CHECK_EQ(fx_wake(&words[0], 1, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&words[0], 1, FX_SHARED), 1);
	fill(r, 3);
	CHECK_EQ(pollfs_futex_read(fd, r, 1), 1);
	fx_check_rec(&r[0], &words[0], 41, POLLFS_FUTEX_SHARED);
	CHECK(untouched(&r[1]));

	/* a new arming replaces the old wait */
	words[1] = 7;
	CHECK_EQ(pollfs_futex_arm(fd, &words[0], 41, 0), 0);
	CHECK_EQ(pollfs_futex_arm(fd, &words[1], 7, 0), 0);
	CHECK_EQ(fx_wake(&words[0], 1, FX_PRIVATE), 0);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&words[1], 1, FX_PRIVATE), 1);
	CHECK_EQ(pollfs_futex_read(fd, r, 1), 1);
	fx_check_rec(&r[0], &words[1], 7, 0);

	/* even a woken, unread one; and a failed arming leaves it unarmed */
	CHECK_EQ(pollfs_futex_arm(fd, &words[1], 7, 0), 0);
	CHECK_EQ(fx_wake(&words[1], 1, FX_PRIVATE), 1);
	fx_expect_ready(fd);
	CHECK_EQ(pollfs_futex_arm(fd, &words[1], 8, 0), 1);
	CHECK_ERR(pollfs_futex_read(fd, r, 1), EINVAL);
	CHECK_EQ(pollfs_futex_arm(fd, &words[1], 7, 0), 0);
	CHECK_EQ(pollfs_futex_arm(fd, &words[1], 9, 0), 1);
	CHECK_EQ(fx_wake(&words[1], 1, FX_PRIVATE), 0);
	CHECK_ERR(pollfs_futex_read(fd, r, 1), EINVAL);

	/* the value is unsigned 32-bit */
	words[2] = UINT32_MAX;
	CHECK_EQ(pollfs_futex_arm(fd, &words[2], UINT32_MAX, 0), 0);
	CHECK_EQ(fx_wake(&words[2], 1, FX_PRIVATE), 1);
	CHECK_EQ(pollfs_futex_read(fd, r, 1), 1);
	fx_check_rec(&r[0], &words[2], UINT32_MAX, 0);

	/* a wake of one counts the object as the one waiter it wakes */
	CHECK_EQ(pollfs_futex_arm(fd, &words[0], 41, 0), 0);
	CHECK_EQ(fx_wake(&words[0], 1, FX_PRIVATE), 1);
	CHECK_EQ(fx_wake(&words[0], 1, FX_PRIVATE), 0);
	CHECK_EQ(pollfs_futex_read(fd, r, 1), 1);
	CHECK_SYS(close(fd));
}

/* ---- a blocking read ---- */

static int reader_fd;
static atomic_int reader_tid;
static struct pollfs_futex_event reader_rec[2];

static void *reader(void *unused)
{
	(void)unused;
	atomic_store(&reader_tid, gettid());
	return (void *)(intptr_t)pollfs_futex_read(reader_fd, reader_rec, 2);
}

TEST(blocking_read)
{
	pthread_t th;
	void *ret;

	reader_fd = CHECK_SYS(pollfs_futex(0));
	words[3] = 3;
	CHECK_EQ(pollfs_futex_arm(reader_fd, &words[3], 3, 0), 0);
	fill(reader_rec, 2);
	CHECK_EQ(pthread_create(&th, NULL, reader, NULL), 0);
	while (!atomic_load(&reader_tid))
		pt_sleep_ms(1);
	fx_wait_sleeping(atomic_load(&reader_tid), SYS_read);
	CHECK_EQ(fx_wake(&words[3], 1, FX_PRIVATE), 1);
	CHECK_EQ(pthread_join(th, &ret), 0);
	CHECK_EQ((intptr_t)ret, 1);
	fx_check_rec(&reader_rec[0], &words[3], 3, 0);
	CHECK(untouched(&reader_rec[1]));
	CHECK_SYS(close(reader_fd));
}

/* ---- a vector ---- */

TEST(armv)
{
	struct pollfs_futex_event ev[POLLFS_FUTEX_WAITV_MAX + 1], r[4];
	static uint32_t many[POLLFS_FUTEX_WAITV_MAX + 1];
	int fd;

	fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK));
	words[0] = 10;
	words[1] = 11;
	words[2] = 12;
	ev[0] = fx_ev(&words[0], 10, 0);
	ev[1] = fx_ev(&words[1], 11, POLLFS_FUTEX_SHARED);
	ev[2] = fx_ev(&words[2], 12, 0);

	/* any mismatch: nothing armed */
	ev[2].val = 13;
	CHECK_EQ(pollfs_futex_armv(fd, ev, 3), 1);
	CHECK_EQ(fx_wake(&words[0], 1, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&words[1], 1, FX_SHARED), 0);
	CHECK_ERR(pollfs_futex_read(fd, r, 4), EINVAL);
	ev[2].val = 12;

	/* all armed; two woken; read one at a time, in record order */
	CHECK_EQ(pollfs_futex_armv(fd, ev, 3), 0);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&words[2], 1, FX_PRIVATE), 1);
	CHECK_EQ(fx_wake(&words[1], 1, FX_SHARED), 1);
	fx_expect_ready(fd);
	fill(r, 4);
	CHECK_EQ(pollfs_futex_read(fd, r, 1), 1);
	fx_check_rec(&r[0], &words[1], 11, POLLFS_FUTEX_SHARED);
	CHECK(untouched(&r[1]));
	/* the first read disarmed the record not woken */
	CHECK_EQ(fx_wake(&words[0], 1, FX_PRIVATE), 0);
	fill(r, 4);
	CHECK_EQ(pollfs_futex_read(fd, r, 4), 1);
	fx_check_rec(&r[0], &words[2], 12, 0);
	CHECK(untouched(&r[1]));
	CHECK_ERR(pollfs_futex_read(fd, r, 4), EINVAL);

	/* several in one read */
	CHECK_EQ(pollfs_futex_armv(fd, ev, 3), 0);
	CHECK_EQ(fx_wake(&words[0], 1, FX_PRIVATE), 1);
	CHECK_EQ(fx_wake(&words[2], 1, FX_PRIVATE), 1);
	fill(r, 4);
	CHECK_EQ(pollfs_futex_read(fd, r, 4), 2);
	fx_check_rec(&r[0], &words[0], 10, 0);
	fx_check_rec(&r[1], &words[2], 12, 0);
	CHECK(untouched(&r[2]));
	CHECK_ERR(pollfs_futex_read(fd, r, 4), EINVAL);

	/* one record is pollfs_futex_arm() */
	CHECK_EQ(pollfs_futex_armv(fd, ev, 1), 0);
	CHECK_EQ(fx_wake(&words[0], 1, FX_PRIVATE), 1);
	CHECK_EQ(pollfs_futex_read(fd, r, 4), 1);
	fx_check_rec(&r[0], &words[0], 10, 0);

	/* 1 to 128 records */
	for (unsigned int i = 0; i <= POLLFS_FUTEX_WAITV_MAX; i++) {
		many[i] = i;
		ev[i] = fx_ev(&many[i], i, 0);
	}
	CHECK_ERR(pollfs_futex_armv(fd, ev, 0), EINVAL);
	CHECK_ERR(pollfs_futex_armv(fd, ev, POLLFS_FUTEX_WAITV_MAX + 1),
		  EINVAL);
	CHECK_ERR(pollfs_futex_read(fd, r, 1), EINVAL);
	CHECK_EQ(pollfs_futex_armv(fd, ev, POLLFS_FUTEX_WAITV_MAX), 0);
	CHECK_EQ(fx_wake(&many[POLLFS_FUTEX_WAITV_MAX - 1], 1, FX_PRIVATE), 1);
	CHECK_EQ(pollfs_futex_read(fd, r, 4), 1);
	fx_check_rec(&r[0], &many[POLLFS_FUTEX_WAITV_MAX - 1],
		     POLLFS_FUTEX_WAITV_MAX - 1, 0);
	CHECK_EQ(fx_wake(&many[0], 1, FX_PRIVATE), 0);
	CHECK_SYS(close(fd));
}

/* ---- shared across fork ---- */

static int wake_shared(void *arg)
{
	uint32_t *word = arg;

	/* the parent's object waits on this memory; wake it from here */
	pt_sleep_ms(50);
	__atomic_store_n(word, 2, __ATOMIC_SEQ_CST);
	return fx_wake(word, INT_MAX, FX_SHARED) == 1 ? PT_PASS : PT_FAIL;
}

TEST(shared)
{
	struct pollfs_futex_event r[2];
	uint32_t *shm;
	int fd;

	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	shm[5] = 1;
	fd = CHECK_SYS(pollfs_futex(0));
	CHECK_EQ(pollfs_futex_arm(fd, &shm[5], 1, POLLFS_FUTEX_SHARED), 0);
	CHECK_EQ(pt_run_child(wake_shared, &shm[5], PT_WAIT_MS), 0);
	fx_expect_ready(fd);
	CHECK_EQ(pollfs_futex_read(fd, r, 2), 1);
	fx_check_rec(&r[0], &shm[5], 1, POLLFS_FUTEX_SHARED);
	CHECK_SYS(close(fd));
	CHECK_SYS(munmap(shm, 4096));
}

/* ---- errors ---- */

TEST(errors)
{
	struct pollfs_futex_event ev[2], r[2];
	char *page;
	int fd, tfd, p[2];

	fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK));
	words[0] = 0;

	/* misaligned, unknown flags */
	CHECK_ERR(pollfs_futex_arm(fd, (uint32_t *)((char *)&words[0] + 1), 0,
				   0), EINVAL);
	CHECK_ERR(pollfs_futex_arm(fd, (uint32_t *)((char *)&words[0] + 2), 0,
				   0), EINVAL);
	CHECK_ERR(pollfs_futex_arm(fd, &words[0], 0, 4), EINVAL);
	CHECK_ERR(pollfs_futex_arm(fd, &words[0], 0, -1), EINVAL);
	ev[0] = fx_ev(&words[0], 0, 0);
	ev[1] = fx_ev(&words[1], words[1], 4);
	CHECK_ERR(pollfs_futex_armv(fd, ev, 2), EINVAL);
	CHECK_EQ(fx_wake(&words[0], 1, FX_PRIVATE), 0);

	/* an unmapped word; an unreadable vector */
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(page != MAP_FAILED);
	CHECK_SYS(munmap(page, 4096));
	CHECK_ERR(pollfs_futex_arm(fd, (uint32_t *)page, 0, 0), EFAULT);
	CHECK_ERR(pollfs_futex_arm(fd, (uint32_t *)page, 0,
				   POLLFS_FUTEX_SHARED), EFAULT);
	CHECK_ERR(pollfs_futex_armv(fd, (struct pollfs_futex_event *)page, 2),
		  EFAULT);
	CHECK_ERR(pollfs_futex_read(fd, r, 1), EINVAL);

	/* a read of n == 0; into memory that cannot be written */
	CHECK_EQ(pollfs_futex_arm(fd, &words[0], 0, 0), 0);
	CHECK_ERR(pollfs_futex_read(fd, r, 0), EINVAL);
	CHECK_EQ(fx_wake(&words[0], 1, FX_PRIVATE), 1);
	CHECK_ERR(pollfs_futex_read(fd, r, 0), EINVAL);
	CHECK_ERR(pollfs_futex_read(fd, (struct pollfs_futex_event *)page, 1),
		  EFAULT);

	CHECK_ERR(pollfs_futex_arm(-1, &words[0], 0, 0), EBADF);
	CHECK_ERR(pollfs_futex_armv(-1, ev, 1), EBADF);
	CHECK_ERR(pollfs_futex_read(-1, r, 1), EBADF);

	/* other kinds of objects: a timer refuses the record (40 bytes) */
	tfd = CHECK_SYS(pollfs_timer(POLLFS_NONBLOCK));
	CHECK_ERR(pollfs_futex_arm(tfd, &words[0], 0, 0), EINVAL);
	CHECK_SYS(close(tfd));

	/* part of a record */
	CHECK_SYS(pipe2(p, O_CLOEXEC | O_NONBLOCK));
	CHECK_EQ(write(p[1], "twelve bytes", 12), 12);
	CHECK_ERR(pollfs_futex_read(p[0], r, 1), EIO);
	CHECK_EQ(write(p[1], "twenty-four bytes here!!", 24), 24);
	CHECK_ERR(pollfs_futex_read(p[0], r, 2), EIO);
	CHECK_SYS(close(p[0]));
	CHECK_SYS(close(p[1]));
	CHECK_SYS(close(fd));
}

int main(void)
{
	return pt_run_tests();
}
