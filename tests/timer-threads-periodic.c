// SPDX-License-Identifier: MIT
/*
 * Several threads reading one periodic timer in blocking mode: every
 * expiration is delivered once.  The sum of the counts read by all of
 * them plus a final read equals the number of periods elapsed since
 * arming: never more (no count read twice; exact), and no fewer than the
 * guest's timer lateness (PT_LAG) can explain (none lost).
 */
#include "lib/timer.h"

#include <pthread.h>
#include <stdatomic.h>

PT_BUDGET(55);

#define READERS	4
#define PERIOD	MS(20)
#define TARGET	40		/* expirations to read, about 800 ms */

static int timer_fd;
static atomic_llong total, records;
static atomic_int readers_with_records;

static void *reader(void *unused)
{
	struct pollfs_timer_event ev;
	long long mine = 0;

	(void)unused;
	while (atomic_load(&total) < TARGET) {
		tmr_read_event(timer_fd, &ev);
		if (ev.expirations < 1)
			FAIL("a record with %llu expirations",
			     (unsigned long long)ev.expirations);
		CHECK_EQ(pt_ts_ns(&ev.interval), PERIOD);
		/* 0: the next expiry came while the reader was delayed */
		CHECK_RANGE(pt_ts_ns(&ev.remaining), 0, PERIOD);
		atomic_fetch_add(&total, (long long)ev.expirations);
		atomic_fetch_add(&records, 1);
		mine++;
	}
	if (mine)
		atomic_fetch_add(&readers_with_records, 1);
	return NULL;
}

static int64_t periods(int64_t ns)
{
	return ns > 0 ? ns / PERIOD : 0;
}

int main(void)
{
	struct pollfs_timer_event ev;
	pthread_t th[READERS];
	int64_t a0, a1, f0, f1, sum;

	timer_fd = tmr_new(0);
	a0 = pt_mono();
	tmr_arm(timer_fd, CLOCK_MONOTONIC, 0, PERIOD, PERIOD);
	a1 = pt_mono();
	for (int i = 0; i < READERS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, reader, NULL), 0);
	/* Each reader stops once the total reaches TARGET; the timer keeps
	 * running, so the ones still asleep are woken by later expiries. */
	for (int i = 0; i < READERS; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);

	/* everything since the readers' last reads, at least one period */
	f0 = pt_mono();
	tmr_read_event(timer_fd, &ev);
	f1 = pt_mono();
	CHECK(ev.expirations >= 1);
	sum = atomic_load(&total) + (int64_t)ev.expirations;
	pt_diag("%lld records, %lld + %llu expirations read in %lld ms by %d readers",
		(long long)atomic_load(&records), (long long)atomic_load(&total),
		(unsigned long long)ev.expirations,
		(long long)((f1 - a0) / NSEC_PER_MSEC),
		atomic_load(&readers_with_records));
	CHECK(atomic_load(&records) <= atomic_load(&total));
	CHECK_RANGE(sum, periods(f0 - a1 - PT_LAG), periods(f1 - a0));
	tmr_disarm(timer_fd);
	pt_expect_empty(timer_fd);
	CHECK_SYS(close(timer_fd));
	return PT_PASS;
}
