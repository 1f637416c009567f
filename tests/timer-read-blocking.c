// SPDX-License-Identifier: MIT
/*
 * A blocking read sleeps until the expiry and then returns the record:
 * with the timer armed before the read, and with the reader asleep on a
 * disarmed timer that another thread arms.
 */
#include "lib/timer.h"

#include <pthread.h>
#include <stdatomic.h>

PT_BUDGET(50);

static int timer_fd;
static atomic_int entered, returned;
static struct pollfs_timer_event got;
static int64_t returned_at;

static void *reader(void *unused)
{
	(void)unused;
	atomic_store(&entered, 1);
	tmr_read_event(timer_fd, &got);
	returned_at = pt_mono();
	atomic_store(&returned, 1);
	return NULL;
}

int main(void)
{
	struct pollfs_timer_event ev;
	pthread_t th;
	int64_t t0;

	timer_fd = tmr_new(0);

	/* armed, then read */
	t0 = pt_mono();
	tmr_arm(timer_fd, CLOCK_MONOTONIC, 0, MS(50), 0);
	tmr_read_event(timer_fd, &ev);
	CHECK(pt_mono() - t0 >= MS(50));
	tmr_check_oneshot(&ev);

	/* asleep on a disarmed timer: stays asleep until armed and expired */
	CHECK_EQ(pthread_create(&th, NULL, reader, NULL), 0);
	while (!atomic_load(&entered))
		pt_sleep_ms(1);
	pt_sleep_ms(200);
	CHECK(!atomic_load(&returned));
	t0 = pt_mono();
	tmr_arm(timer_fd, CLOCK_MONOTONIC, 0, MS(20), 0);
	pt_sleep_ms(5);
	if (atomic_load(&returned))
		CHECK(returned_at - t0 >= MS(20));
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK(returned_at - t0 >= MS(20));
	tmr_check_oneshot(&got);
	pt_expect_empty(timer_fd);
	CHECK_SYS(close(timer_fd));
	return PT_PASS;
}
