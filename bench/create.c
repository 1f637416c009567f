// SPDX-License-Identifier: MIT
/*
 * Create/close cost and memory per object: N = 100,000 objects of each
 * pollfs kind against N of its stock anchor (timer: timerfd, signal:
 * signalfd, futex: eventfd, aio: eventfd), all 2N open at once at the
 * peak.
 *
 * The objects are created unarmed in chunks of 1,000, alternating A B
 * B A ..., so that a slow spell of the emulator's host falls on both
 * sides alike; then closed in the same chunks.  Per chunk: the wall time
 * per create + close, and the growth of Slab: in /proc/meminfo over its
 * creation divided by its size, i.e. the slab memory per live object.
 * Reported: the median over the chunks and its spread.  The guest boots
 * with slub_debug=FZPU, whose red zones, padding and owner tracking make
 * every slab object much bigger than in production: compare the two
 * columns, not either with a production kernel.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "bench.h"

#define FLAGS	(POLLFS_NONBLOCK | POLLFS_CLOEXEC)

/* Objects per chunk: 1,000 (250 under --quick). */
static int chunk = 1000;
static aio_context_t aio_ctx;
static const char *slab_metric = "Slab per live object";
static sigset_t sigmask;

static int make(const char *kind, bool pollfs)
{
	switch (kind[0]) {
	case 't':
		return pollfs ? bench_pfs_timer(FLAGS) :
			timerfd_create(CLOCK_MONOTONIC,
				       TFD_NONBLOCK | TFD_CLOEXEC);
	case 's':
		return pollfs ?
			bench_pfs_signal(1ull << (SIGRTMIN - 1), FLAGS) :
			signalfd(-1, &sigmask, SFD_NONBLOCK | SFD_CLOEXEC);
	case 'f':
		return pollfs ? bench_pfs_futex(FLAGS) :
			eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	default:
		return pollfs ? bench_pfs_aio(aio_ctx, FLAGS) :
			eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	}
}

/*
 * One kind: N objects of pollfs and N of the anchor, created in
 * interleaved chunks (A B B A ...) until all 2N are open, then closed in
 * the same chunks.  Each chunk gives a time per create + close and, from
 * the Slab: growth over its creation, bytes per object.
 */
static void run_kind(const char *kind, const char *anchor, int *fds, int n)
{
	struct samples us[2] = {}, bytes[2] = {};
	int chunks = n / chunk, c, k, i, *f;
	double *create_us;
	char variant[32];
	long before;
	uint64_t t0;
	bool pollfs;

	create_us = calloc(2 * chunks, sizeof(*create_us));
	if (!create_us)
		bench_die("out of memory");
	for (c = 0; c < 2 * chunks; c++) {
		pollfs = (c / 2 + c % 2) % 2 == 0;	/* A B, B A, ... */
		f = fds + c * chunk;
		before = bench_slab_kb();
		t0 = bench_now_ns();
		for (i = 0; i < chunk; i++) {
			f[i] = make(kind, pollfs);
			if (f[i] < 0)
				bench_die("create %s object %d", kind,
					  c * chunk + i);
		}
		create_us[c] = (bench_now_ns() - t0) / 1e3;
		bench_samples_add(&bytes[pollfs],
				  (bench_slab_kb() - before) * 1024.0 / chunk);
		if (c % 20 == 19)
			bench_progress("%s: %d of %d open", kind,
				       (c + 1) * chunk, 2 * n);
	}
	for (c = 2 * chunks - 1; c >= 0; c--) {
		pollfs = (c / 2 + c % 2) % 2 == 0;
		f = fds + c * chunk;
		t0 = bench_now_ns();
		for (i = 0; i < chunk; i++)
			close(f[i]);
		bench_samples_add(&us[pollfs], (create_us[c] +
			(bench_now_ns() - t0) / 1e3) / chunk);
	}
	free(create_us);

	snprintf(variant, sizeof(variant), "%s x%d", kind, n);
	bench_report("create", variant, "create+close time", "us", anchor,
		     &us[1], &us[0], 1.10);
	bench_report("create", variant, slab_metric, "bytes", anchor,
		     &bytes[1], &bytes[0], 1.00);
	for (k = 0; k < 2; k++) {
		bench_samples_free(&us[k]);
		bench_samples_free(&bytes[k]);
	}
	bench_quiesce();
}

int main(int argc, char **argv)
{
	static const struct {
		const char *kind, *anchor;
	} kinds[] = {
		{ "timer", "timerfd" },
		{ "signal", "signalfd" },
		{ "futex", "eventfd" },
		{ "aio", "eventfd" },
	};
	int n, j, *fds;

	bench_init(argc, argv, "create");
	if (bench_kernel_cmdline_has("slub_debug"))
		slab_metric = "Slab per live object (slub_debug on)";
	if (bench_quick)
		chunk = 250;
	n = bench_quick ? 2 * chunk : 100000;
	bench_raise_nofile(2 * n + 1000);
	fds = calloc(2 * n, sizeof(*fds));
	if (!fds)
		bench_die("out of memory");
	sigemptyset(&sigmask);
	sigaddset(&sigmask, SIGRTMIN);
	if (syscall(SYS_io_setup, 8, &aio_ctx))
		bench_die("io_setup");
	/* Grow the descriptor table once, before anything is measured. */
	if (dup2(0, 2 * n + 100) < 0)
		bench_die("dup2");
	close(2 * n + 100);
	bench_quiesce();

	for (j = 0; j < (int)(sizeof(kinds) / sizeof(kinds[0])); j++)
		run_kind(kinds[j].kind, kinds[j].anchor, fds, n);
	syscall(SYS_io_destroy, aio_ctx);
	free(fds);
	return 0;
}
