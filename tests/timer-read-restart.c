// SPDX-License-Identifier: MIT
/*
 * A blocking read interrupted by signals whose handler has SA_RESTART is
 * restarted: it returns the record at the expiry, never EINTR.
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

static void *signaller(void *unused)
{
	(void)unused;
	while (!atomic_load(&stop)) {
		pthread_kill(main_thread, SIGUSR1);
		pt_sleep_ms(10);
	}
	return NULL;
}

int main(void)
{
	struct pollfs_timer_event ev;
	struct sigaction sa;
	int64_t t0;
	pthread_t th;
	ssize_t r;
	int t, before, during;

	main_thread = pthread_self();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));

	t = tmr_new(0);
	t0 = pt_mono();
	tmr_arm(t, CLOCK_MONOTONIC, 0, MS(500), 0);
	before = atomic_load(&handled);
	CHECK_EQ(pthread_create(&th, NULL, signaller, NULL), 0);
	r = read(t, &ev, sizeof(ev));	/* no retry here: EINTR is a failure */
	if (r != TMR_EVENT_SIZE)
		FAIL("read returned %zd, errno %d (%s); expected 40 after a restart",
		     r, errno, strerror(errno));
	during = atomic_load(&handled) - before;
	atomic_store(&stop, 1);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK(pt_mono() - t0 >= MS(500));
	tmr_check_oneshot(&ev);
	pt_diag("%d signals handled during the read", during);
	/* over 500 ms at one per 10 ms: several came while it slept */
	CHECK(during >= 2);
	CHECK_SYS(close(t));
	return PT_PASS;
}
