// SPDX-License-Identifier: MIT
/*
 * Several threads asleep in read() on one timer: each expiry of a
 * one-shot timer wakes exactly one of them with the record; the others
 * sleep on.
 */
#include "lib/timer.h"

#include <pthread.h>
#include <stdatomic.h>

PT_BUDGET(55);

#define READERS 4

static int timer_fd;
static atomic_int asleep, done;
static struct pollfs_timer_event got[READERS];

static void *reader(void *arg)
{
	int i = (int)(intptr_t)arg;

	atomic_fetch_add(&asleep, 1);
	tmr_read_event(timer_fd, &got[i]);
	atomic_fetch_add(&done, 1);
	return NULL;
}

int main(void)
{
	pthread_t th[READERS];
	int64_t deadline;

	timer_fd = tmr_new(0);
	for (int i = 0; i < READERS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, reader, (void *)(intptr_t)i), 0);
	while (atomic_load(&asleep) < READERS)
		pt_sleep_ms(1);
	pt_sleep_ms(100);	/* let them all reach the sleep in read() */
	CHECK_EQ(atomic_load(&done), 0);

	for (int round = 1; round <= READERS; round++) {
		tmr_arm(timer_fd, CLOCK_MONOTONIC, 0, MS(10), 0);
		deadline = pt_mono() + MS(PT_WAIT_MS);
		while (atomic_load(&done) < round && pt_mono() < deadline)
			pt_sleep_ms(1);
		CHECK_EQ(atomic_load(&done), round);
		/* and no second reader follows for the same record */
		pt_sleep_ms(200);
		CHECK_EQ(atomic_load(&done), round);
	}
	for (int i = 0; i < READERS; i++) {
		CHECK_EQ(pthread_join(th[i], NULL), 0);
		tmr_check_oneshot(&got[i]);
	}
	pt_expect_empty(timer_fd);
	CHECK_SYS(close(timer_fd));
	return PT_PASS;
}
