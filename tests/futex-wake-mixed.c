// SPDX-License-Identifier: MIT
/*
 * An armed object and a thread blocked in FUTEX_WAIT on the same word
 * are two waiters of one futex: FUTEX_WAKE(addr, 1) returns 1 and wakes
 * exactly one of them (then the same again wakes the other);
 * FUTEX_WAKE(addr, 2) returns 2 and wakes both.  Private and shared.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

PT_BUDGET(50);

static uint32_t *word;
static uint32_t wflags;
static atomic_int tid, done;
static long wait_ret;
static int wait_err;

static void *waiter(void *unused)
{
	struct timespec ts = { 3 * PT_WAIT_MS / 1000, 0 };

	(void)unused;
	atomic_store(&tid, gettid());
	wait_ret = fx_futex(word, fx_op(FUTEX_WAIT, wflags), *word,
			    (unsigned long)&ts, NULL, 0);
	wait_err = errno;
	atomic_store(&done, 1);
	return NULL;
}

static pthread_t start_waiter(void)
{
	pthread_t th;

	atomic_store(&tid, 0);
	atomic_store(&done, 0);
	CHECK_EQ(pthread_create(&th, NULL, waiter, NULL), 0);
	while (!atomic_load(&tid))
		pt_sleep_ms(1);
	fx_wait_sleeping(atomic_load(&tid), SYS_futex);
	return th;
}

static void join_woken(pthread_t th)
{
	CHECK_EQ(pthread_join(th, NULL), 0);
	if (wait_ret != 0)
		FAIL("FUTEX_WAIT returned %ld, errno %d (%s), expected a wake",
		     wait_ret, wait_err, strerror(wait_err));
}

/* After a FUTEX_WAKE(1) that returned 1: exactly one of them is woken. */
static void one_then_other(int fd, pthread_t th, const char *order)
{
	bool fd_woken;

	pt_sleep_ms(50);
	fd_woken = fx_revents(fd, 0) == POLLIN;
	if (fd_woken) {
		/* the thread must still sleep */
		pt_sleep_ms(100);
		CHECK_EQ(atomic_load(&done), 0);
		CHECK(fx_task_sleeps_in(atomic_load(&tid), SYS_futex));
		fx_expect_rec(fd, word, *word, wflags);
		CHECK_EQ(fx_wake(word, 1, wflags), 1);
		join_woken(th);
	} else {
		/* the thread must wake; the fd stays armed */
		join_woken(th);
		fx_expect_armed(fd);
		CHECK_EQ(fx_wake(word, 1, wflags), 1);
		fx_expect_rec(fd, word, *word, wflags);
	}
	pt_diag("%s %s, %s first: the %s was woken first", wflags ?
		"shared" : "private", order, order[0] == 'f' ? "fd" : "thread",
		fd_woken ? "fd" : "thread");
	CHECK_EQ(fx_wake(word, INT_MAX, wflags), 0);
	fx_expect_unarmed(fd);
}

static void run(int fd)
{
	pthread_t th;

	/* the fd armed first, then the thread */
	fx_arm(fd, word, *word, wflags);
	th = start_waiter();
	CHECK_EQ(fx_wake(word, 1, wflags), 1);
	one_then_other(fd, th, "fd-then-thread");

	/* the thread first, then the fd */
	th = start_waiter();
	fx_arm(fd, word, *word, wflags);
	CHECK_EQ(fx_wake(word, 1, wflags), 1);
	one_then_other(fd, th, "thread-then-fd");

	/* both at once */
	for (int n = 2; n <= 3; n++) {
		fx_arm(fd, word, *word, wflags);
		th = start_waiter();
		CHECK_EQ(fx_wake(word, n == 3 ? INT_MAX : 2, wflags), 2);
		join_woken(th);
		fx_expect_ready(fd);
		fx_expect_rec(fd, word, *word, wflags);
		CHECK_EQ(fx_wake(word, INT_MAX, wflags), 0);
	}
	(*word)++;
}

int main(void)
{
	static uint32_t private_word = 3;
	uint32_t *shm;
	int fd;

	fd = fx_new(POLLFS_NONBLOCK);
	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	shm[1] = 11;

	word = &private_word;
	wflags = FX_PRIVATE;
	run(fd);
	word = &shm[1];
	wflags = FX_SHARED;
	run(fd);

	CHECK_SYS(close(fd));
	return PT_PASS;
}
