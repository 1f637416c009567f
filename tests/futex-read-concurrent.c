// SPDX-License-Identifier: MIT
/*
 * Many threads reading one object: each woken record is delivered to
 * exactly one reader.  Four threads sleep in read() on one blocking fd;
 * each round arms it (one record, or a wait-any of two), then wakes.
 * The records read, over all readers, equal the FUTEX_WAKE counts, each
 * the record armed in that round.  A reader that finds the object
 * unarmed (another took the record) gets EINVAL, nothing else.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <stdatomic.h>

PT_BUDGET(50);

#define READERS	4
#define ROUNDS	40

static uint32_t word[2];
static int fd;
static atomic_int round_no, records, stop, tids[READERS];
static atomic_int einval;

static void on_signal(int sig)
{
	(void)sig;
}

static void *reader(void *arg)
{
	int me = (int)(intptr_t)arg;
	struct pollfs_futex_event ev[2];

	atomic_store(&tids[me], gettid());
	while (!atomic_load(&stop)) {
		int seen = atomic_load(&round_no);
		ssize_t r = read(fd, ev, sizeof(ev));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EINVAL) {
			atomic_fetch_add(&einval, 1);
			while (atomic_load(&round_no) == seen &&
			       !atomic_load(&stop))
				pt_sleep_ms(1);
			continue;
		}
		if (r != FX_REC && r != 2 * FX_REC)
			FAIL("reader %d: read returned %zd, errno %d (%s)", me,
			     r, errno, strerror(errno));
		for (int i = 0; i < r / FX_REC; i++) {
			int k = ev[i].addr == (uintptr_t)&word[1];

			fx_check_rec(&ev[i], &word[k],
				     (uint32_t)atomic_load(&round_no), 0);
			if (i == 1 && ev[0].addr == ev[1].addr)
				FAIL("the same record twice");
		}
		atomic_fetch_add(&records, (int)(r / FX_REC));
	}
	return NULL;
}

static bool all_asleep(void)
{
	for (int i = 0; i < READERS; i++)
		if (!fx_task_sleeps_in(atomic_load(&tids[i]), SYS_read))
			return false;
	return true;
}

int main(void)
{
	pthread_t th[READERS];
	struct sigaction sa;
	int woken = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	fd = fx_new(0);

	for (int i = 0; i < READERS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, reader,
					(void *)(intptr_t)i), 0);
	for (int i = 0; i < READERS; i++)
		while (!atomic_load(&tids[i]))
			pt_sleep_ms(1);

	for (int r = 1; r <= ROUNDS; r++) {
		int64_t end = pt_mono() + MS(PT_WAIT_MS);
		long n;

		word[0] = word[1] = (uint32_t)r;
		if (r % 2) {
			fx_arm(fd, &word[0], (uint32_t)r, FX_PRIVATE);
		} else {
			struct pollfs_futex_event evs[2] = {
				fx_ev(&word[0], (uint32_t)r, 0),
				fx_ev(&word[1], (uint32_t)r, 0),
			};

			fx_armv(fd, evs, 2);
		}
		atomic_store(&round_no, r);
		/* every reader asleep in read() on the armed object */
		while (!all_asleep()) {
			if (pt_mono() > end)
				FAIL("round %d: readers not all asleep", r);
			pt_sleep_ms(2);
		}
		pt_sleep_ms(10);
		n = fx_wake(&word[0], 1, FX_PRIVATE);
		CHECK_EQ(n, 1);
		if (r % 2 == 0) {
			/* the second record: woken only if no reader has
			 * read the first yet */
			long m = fx_wake(&word[1], 1, FX_PRIVATE);

			CHECK_RANGE(m, 0, 1);
			n += m;
		}
		woken += (int)n;
		while (atomic_load(&records) < woken) {
			if (pt_mono() > end)
				FAIL("round %d: %d records read, %d woken", r,
				     atomic_load(&records), woken);
			pt_sleep_ms(1);
		}
		/* no more than woken, even a little later */
		pt_sleep_ms(5);
		CHECK_EQ(atomic_load(&records), woken);
		CHECK_EQ(fx_wake(&word[0], INT_MAX, FX_PRIVATE), 0);
		CHECK_EQ(fx_wake(&word[1], INT_MAX, FX_PRIVATE), 0);
	}

	atomic_store(&stop, 1);
	for (int i = 0; i < READERS; i++) {
		struct timespec ts;

		for (;;) {
			CHECK_EQ(pthread_kill(th[i], SIGUSR1), 0);
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 20 * NSEC_PER_MSEC;
			if (ts.tv_nsec >= NSEC_PER_SEC) {
				ts.tv_sec++;
				ts.tv_nsec -= NSEC_PER_SEC;
			}
			if (pthread_timedjoin_np(th[i], NULL, &ts) == 0)
				break;
		}
	}
	pt_diag("%d rounds, %d records woken and read, %d EINVAL reads",
		ROUNDS, woken, atomic_load(&einval));
	CHECK_EQ(atomic_load(&records), woken);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
