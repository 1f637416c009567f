// SPDX-License-Identifier: MIT
/*
 * A process exits holding a futex object armed on a private word, whose
 * last reference is then an AIO poll request of that process's own
 * (IOCB_CMD_POLL on the object, still pending): the end of the address
 * space, which cancels the request, must end the object too, and with
 * it the module's reference.  Where private futexes hash into a table
 * of the process's own (7.3), an object that kept the address space
 * alive for that table's sake would keep itself alive through the
 * request, for ever: this is how the fuzzer found that leak.
 */
#include "lib/aio.h"
#include "lib/futex.h"

PT_BUDGET(60);

static uint32_t word = 5;

static long module_refcnt(void)
{
	char buf[32];

	if (pt_read_file("/sys/module/pollfs/refcnt", buf, sizeof(buf)) < 0)
		FAIL("/sys/module/pollfs/refcnt: %s", strerror(errno));
	return strtol(buf, NULL, 10);
}

/* Arms, polls the object through its own AIO context, closes, exits. */
static int child_exits(void *how)
{
	struct iocb cb;
	aio_context_t ctx = ax_setup(4);
	int fd = fx_new(0);

	if (how)
		fx_arm(fd, &word, word, FX_PRIVATE | POLLFS_FUTEX_WATCH);
	else
		fx_arm(fd, &word, word, FX_PRIVATE);
	ax_prep_poll(&cb, fd, POLLIN, 1);
	ax_submit1(ctx, &cb);
	CHECK_SYS(close(fd));
	return PT_PASS;
}

int main(void)
{
	static const char *const how[] = { "one-shot", "watched" };
	int64_t limit = (int64_t)pt_time_scale() * 5 * NSEC_PER_SEC;

	if (access("/sys/module/pollfs/refcnt", R_OK))
		pt_skip("/sys/module/pollfs/refcnt: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		long before = module_refcnt(), now;
		int64_t end = pt_mono() + limit;

		CHECK_EQ(pt_run_child(child_exits, i ? "w" : NULL, PT_WAIT_MS),
			 PT_PASS);
		while ((now = module_refcnt()) != before && pt_mono() < end)
			pt_sleep_ms(20);
		if (now != before)
			FAIL("%s: module refcnt %ld, %ld before the child: its "
			     "object outlived its address space", how[i], now,
			     before);
		pt_diag("%s: the object ended with its address space", how[i]);
	}
	return PT_PASS;
}
