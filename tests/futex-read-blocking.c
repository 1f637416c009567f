// SPDX-License-Identifier: MIT
/*
 * A blocking read of an armed object sleeps until a FUTEX_WAKE from
 * another thread, then returns the armed record.  A caught signal
 * without SA_RESTART interrupts it with EINTR and leaves the object
 * armed; with SA_RESTART the read goes on sleeping and still gets the
 * record.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <stdatomic.h>

PT_BUDGET(50);

static uint32_t word = 77;
static int fd;
static atomic_int tid, handled;

struct result {
	ssize_t r;
	int err;
	struct pollfs_futex_event ev[2];
};

static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

static void *reader(void *arg)
{
	struct result *res = arg;

	memset(res->ev, 0, sizeof(res->ev));
	atomic_store(&tid, gettid());
	res->r = read(fd, res->ev, sizeof(res->ev));
	res->err = errno;
	return NULL;
}

static pthread_t start_reader(struct result *res)
{
	pthread_t th;

	atomic_store(&tid, 0);
	CHECK_EQ(pthread_create(&th, NULL, reader, res), 0);
	while (!atomic_load(&tid))
		pt_sleep_ms(1);
	fx_wait_sleeping(atomic_load(&tid), SYS_read);
	return th;
}

static void set_handler(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = flags;
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
}

int main(void)
{
	struct result res;
	pthread_t th;

	fd = fx_new(0);

	/* woken by another thread's FUTEX_WAKE, private then shared */
	for (int shared = 0; shared < 2; shared++) {
		uint32_t fl = shared ? FX_SHARED : FX_PRIVATE;

		fx_arm(fd, &word, 77, fl);
		th = start_reader(&res);
		pt_sleep_ms(100);
		CHECK(fx_task_sleeps_in(atomic_load(&tid), SYS_read));
		CHECK_EQ(fx_wake(&word, 1, fl), 1);
		CHECK_EQ(pthread_join(th, NULL), 0);
		CHECK_EQ(res.r, FX_REC);
		fx_check_rec(&res.ev[0], &word, 77, fl);
		fx_expect_unarmed(fd);
		CHECK_EQ(fx_wake(&word, INT_MAX, fl), 0);
	}

	/* interrupted without SA_RESTART: EINTR, still armed */
	set_handler(0);
	fx_arm(fd, &word, 77, FX_PRIVATE);
	th = start_reader(&res);
	CHECK_EQ(pthread_kill(th, SIGUSR1), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(res.r, -1);
	CHECK_EQ(res.err, EINTR);
	CHECK_EQ(atomic_load(&handled), 1);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	fx_expect_rec(fd, &word, 77, FX_PRIVATE);

	/* with SA_RESTART: the read sleeps on and gets the record */
	set_handler(SA_RESTART);
	fx_arm(fd, &word, 77, FX_PRIVATE);
	th = start_reader(&res);
	CHECK_EQ(pthread_kill(th, SIGUSR1), 0);
	while (atomic_load(&handled) < 2)
		pt_sleep_ms(1);
	fx_wait_sleeping(atomic_load(&tid), SYS_read);
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(res.r, FX_REC);
	fx_check_rec(&res.ev[0], &word, 77, FX_PRIVATE);
	fx_expect_unarmed(fd);

	CHECK_SYS(close(fd));
	return PT_PASS;
}
