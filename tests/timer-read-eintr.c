// SPDX-License-Identifier: MIT
/*
 * A blocking read is interrupted by a caught signal whose handler was
 * installed without SA_RESTART: -1 with EINTR.  The timer is left as it
 * was and works afterwards.
 */
#include "lib/timer.h"

#include <pthread.h>
#include <stdatomic.h>

PT_BUDGET(50);

static atomic_int handled, stop;
static pthread_t main_thread;

static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

/* Signals the main thread every 20 ms, so that one arrives while it
 * sleeps in read() even if the first comes before it gets there. */
static void *signaller(void *unused)
{
	(void)unused;
	while (!atomic_load(&stop)) {
		pthread_kill(main_thread, SIGUSR1);
		pt_sleep_ms(20);
	}
	return NULL;
}

static void interrupted_read(int t)
{
	struct pollfs_timer_event ev;
	pthread_t th;
	int before = atomic_load(&handled);

	atomic_store(&stop, 0);
	CHECK_EQ(pthread_create(&th, NULL, signaller, NULL), 0);
	CHECK_ERR(read(t, &ev, sizeof(ev)), EINTR);
	atomic_store(&stop, 1);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK(atomic_load(&handled) > before);
}

int main(void)
{
	struct pollfs_timer_event ev;
	struct sigaction sa;
	int t;

	main_thread = pthread_self();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;		/* no SA_RESTART */
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));

	t = tmr_new(0);
	/* disarmed */
	interrupted_read(t);
	/* armed far away; it stays armed */
	tmr_arm(t, CLOCK_MONOTONIC, 0, 100 * NSEC_PER_SEC, 0);
	interrupted_read(t);
	pt_expect_empty(t);

	/* the timer works afterwards */
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(5), 0);
	tmr_read_event(t, &ev);
	tmr_check_oneshot(&ev);
	CHECK_SYS(close(t));
	return PT_PASS;
}
