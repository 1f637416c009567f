// SPDX-License-Identifier: MIT
/*
 * pollfs hooks aio_complete()'s return on every kernel with an ftrace
 * callback of its own at the entry, which hooks the return with rethook
 * (the trampoline of kretprobes) on x86-64 and with a trampoline of its
 * own on arm64, never with the function-graph tracer's
 * return_to_handler, whose unwind data in 7.3 make a stack trace taken
 * by an interrupt at its last instructions print "stack going in the
 * wrong direction?".  With an AIO object open and a completion seen
 * through it, tracefs's enabled_functions must show aio_complete() on
 * that callback (or, where it names none, on one callback) and no
 * function-graph one.  On PREEMPT_RT nothing may
 * hook it (its locks sleep there, and the hook keeps preemption off):
 * the object is woken from the context's wait queue instead.
 */
#include "lib/aio.h"

#include <sys/mount.h>
#include <sys/stat.h>

PT_BUDGET(60);

#define ENABLED "/sys/kernel/tracing/enabled_functions"

int main(void)
{
	static char data[64];
	char line[512], hooked[512] = "";
	struct iocb cb, *cbp = &cb;
	aio_context_t ctx;
	int fd, file;
	FILE *f;

	pt_require_root();
	ctx = ax_setup(4);
	fd = ax_fd(ctx, 0);
	file = ax_tmpfile("/tmp", 0);
	ax_prep_pwrite(&cb, file, data, sizeof(data), 0, 1);
	ax_submit(ctx, 1, &cbp);
	ax_expect_avail(fd, ctx, 1);

	if (access(ENABLED, R_OK) &&
	    mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL))
		pt_skip("cannot mount tracefs: %s", strerror(errno));
	f = fopen(ENABLED, "re");
	if (!f)
		pt_skip("no %s: %s", ENABLED, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "aio_complete ", 13))
			snprintf(hooked, sizeof(hooked), "%s", line);
	fclose(f);
	if (pt_kernel_rt()) {
		if (hooked[0])
			FAIL("aio_complete is hooked on PREEMPT_RT: %s", hooked);
		goto out;
	}
	if (!hooked[0])
		FAIL("nothing probes aio_complete");
	pt_diag("%s", hooked);
	CHECK(!strstr(hooked, "graph"));
	if (!strstr(hooked, "pollfs_aio_complete_entry")) {
		/*
		 * Without a trampoline of the callback's own (arm64 before
		 * 6.2) the line says how many callbacks, not which: one, and
		 * the module's AIO object has just seen a completion.
		 */
		if (strstr(hooked, "tramp:") || strstr(hooked, "ops:") ||
		    strncmp(hooked, "aio_complete (1) ", 17))
			FAIL("aio_complete is not hooked by pollfs_aio_complete_entry: %s",
			     hooked);
		pt_diag("this kernel names no callback: one, pollfs's");
	}
out:
	close(fd);
	close(file);
	ax_destroy(ctx);
	return 0;
}
