// SPDX-License-Identifier: MIT
/*
 * The module unloads and loads again 20 times, and each time a timer can
 * be created and used (armed periodic and closed armed, too).  It ends
 * loaded; on a failure it is loaded again from $POLLFS_KO.
 */
#include "lib/timer.h"

#include <sys/stat.h>

PT_BUDGET(55);

#define ROUNDS 20

int main(void)
{
	char out[1024];
	char *rmmod[] = { "rmmod", "pollfs", NULL };
	char *insmod[] = { "insmod", NULL, NULL };
	const char *ko;

	ko = pt_module_ko();
	insmod[1] = (char *)ko;

	for (int i = 0; i < ROUNDS; i++) {
		struct pollfs_timer_event ev;
		int64_t deadline;
		struct stat st;
		int t, t2;

		if (pt_run_cmd(rmmod, out, sizeof(out)) != 0)
			FAIL("round %d: rmmod pollfs: %s", i, out);
		CHECK(!pt_module_loaded());
		if (pt_run_cmd(insmod, out, sizeof(out)) != 0)
			FAIL("round %d: insmod %s: %s", i, ko, out);
		CHECK(pt_module_loaded());
		deadline = pt_mono() + 5 * NSEC_PER_SEC;
		while (stat("/dev/pollfs", &st) && pt_mono() < deadline)
			pt_sleep_ms(10);

		t = tmr_new(0);
		tmr_arm(t, CLOCK_MONOTONIC, 0, MS(1), 0);
		tmr_read_event(t, &ev);
		tmr_check_oneshot(&ev);
		t2 = tmr_new(POLLFS_NONBLOCK);
		tmr_arm(t2, CLOCK_MONOTONIC, 0, US(100), US(100));
		pt_wait_readable(t2, PT_WAIT_MS);
		CHECK_SYS(close(t2));	/* closed armed */
		CHECK_SYS(close(t));
	}
	CHECK(pt_module_loaded());
	return PT_PASS;
}
