// SPDX-License-Identifier: MIT
/*
 * Two threads reading one object at the same time, while real-time
 * signals are being queued to the process: each signal is read exactly
 * once, by one of them (every value 0..N-1 seen once, nothing else).
 * Then each thread reads the signal sent to it alone.
 */
#include "lib/signal.h"

#include <stdatomic.h>
#include <sys/resource.h>

PT_BUDGET(120);

#define N	400
#define STOP	(-1)

static int fd;
static atomic_int seen[N];
static atomic_int total;
static atomic_int per_thread[2];
static atomic_int tids[2];

static void *reader(void *arg)
{
	int me = (int)(intptr_t)arg;
	struct pollfs_siginfo psi[4];

	tids[me] = ps_gettid();
	for (;;) {
		int n = ps_read_n(fd, psi, 4);

		for (int i = 0; i < n; i++) {
			int v = psi[i].psi_int;

			if (psi[i].psi_signo == (unsigned int)SIGRTMIN + 1) {
				ps_check_sig(&psi[i], SIGRTMIN + 1, SI_QUEUE);
				CHECK_EQ(v, STOP);
				CHECK_EQ(i, n - 1);
				return NULL;
			}
			ps_check_sig(&psi[i], SIGRTMIN, SI_QUEUE);
			CHECK_RANGE(v, 0, N - 1);
			if (seen[v]++)
				FAIL("value %d read twice", v);
			per_thread[me]++;
			total++;
		}
	}
}

int main(void)
{
	uint64_t mask = ps_bit(SIGRTMIN) | ps_bit(SIGRTMIN + 1);
	pthread_t t[2];
	struct rlimit rl;
	union sigval stop;
	int64_t end;

	CHECK_SYS(getrlimit(RLIMIT_SIGPENDING, &rl));
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < N + 2)
		pt_skip("RLIMIT_SIGPENDING %llu < %d",
			(unsigned long long)rl.rlim_cur, N + 2);
	ps_block(mask);
	fd = ps_signal(mask, 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, reader,
					(void *)(intptr_t)i), 0);
	for (int i = 0; i < 2; i++) {
		while (!tids[i])
			pt_sleep_ms(1);
		ps_wait_in_read(tids[i]);
	}

	for (int i = 0; i < N; i++) {
		ps_queue_int(getpid(), SIGRTMIN, i);
		if (i % 16 == 15)
			sched_yield();
	}
	end = pt_mono() + MS(PT_WAIT_MS);
	while (total < N && pt_mono() < end)
		pt_sleep_ms(1);
	CHECK_EQ(total, N);
	for (int v = 0; v < N; v++)
		CHECK_EQ(seen[v], 1);
	pt_diag("thread 0 read %d, thread 1 read %d", (int)per_thread[0],
		(int)per_thread[1]);

	/* one stop signal to each thread: only it can read it */
	memset(&stop, 0, sizeof(stop));
	stop.sival_int = STOP;
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_sigqueue(t[i], SIGRTMIN + 1, stop), 0);
	for (int i = 0; i < 2; i++)
		ps_join(t[i]);
	CHECK_EQ(total, N);
	ps_expect_empty(fd);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
