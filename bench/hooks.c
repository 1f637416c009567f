// SPDX-License-Identifier: MIT
/*
 * What loading pollfs costs traffic that does not use it.
 *
 * The futex object watches wakes through a kprobe on futex_wake_mark(),
 * which every non-PI futex wake that finds a waiter passes through, so
 * a loaded pollfs touches every such wake in the system; its armed
 * objects also sit in the kernel's futex hash table.  The first AIO
 * object puts an ftrace callback on aio_complete(), which hooks the
 * return of every AIO completion in the system until the module is
 * unloaded.
 *
 * Four states, visited LA U L0 L10k L10k L0 U LA, cycle after cycle
 * (the hook stays until unload, so LA is always next to U or LA):
 *   U     the module unloaded (this program rmmods and insmods
 *         $POLLFS_KO itself; it must run as root and leaves the module
 *         loaded when it ends, also on error);
 *   L0    loaded, no pollfs object;
 *   L10k  loaded, 10,000 futex objects armed on other words;
 *   LA    loaded, one AIO object, on a context of its own.
 * (--quick: one visit of each, and 1,000 armed objects.)
 * Measured in each, once deferred frees have settled and after a warm-up:
 * a futex ping-pong between two threads on one CPU (every wake passes
 * the probe), and a stream of buffered AIO reads on a context of its
 * own, reaped with io_getevents (no notification fd); each the median
 * of 9 to 11 short batches.  Twelve cycles (96 visits) of a few
 * seconds each: the emulator's speed drifts with its host's load, and
 * only many short interleaved visits can average that out.
 * Reported against U; goal: under 2% (ratio at most 1.02).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

#define READ_SIZE	4096
#define FILE_SIZE	(1 << 20)

static char module[64] = "pollfs";
static const char *module_path;

static bool module_loaded(void)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/module/%s", module);
	return !stat(path, &st);
}

static void module_load(void)
{
	int fd;

	if (module_loaded())
		return;
	fd = open(module_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		bench_die("open %s", module_path);
	if (syscall(SYS_finit_module, fd, "", 0) && errno != EEXIST)
		bench_die("insmod %s", module_path);
	close(fd);
}

/* Its last file may still be on its way out: retry a while. */
static void module_unload(void)
{
	int i;

	bench_pfs_dev_close();
	for (i = 0; i < 100; i++) {
		if (!syscall(SYS_delete_module, module, O_NONBLOCK) ||
		    errno == ENOENT)
			return;
		if (errno != EBUSY && errno != EAGAIN)
			break;
		usleep(50000);
	}
	bench_die("rmmod %s", module);
}

/* On any exit, leave the module as the harness expects it: loaded. */
static void reload_at_exit(void)
{
	int fd;

	if (module_loaded())
		return;
	fd = open(module_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || syscall(SYS_finit_module, fd, "", 0))
		fprintf(stderr, "hooks: error: cannot reload %s: %s\n",
			module_path, strerror(errno));
}

static uint32_t *words;
/* 10,000 armed objects in L10k (1,000 under --quick). */
static int armed_n = 10000;
static int *armed;
static int narmed;

static void armed_set(int n)
{
	while (narmed > n)
		close(armed[--narmed]);
	while (narmed < n) {
		armed[narmed] = bench_pfs_futex(POLLFS_NONBLOCK |
						POLLFS_CLOEXEC);
		if (armed[narmed] < 0 ||
		    bench_pfs_futex_arm(armed[narmed], &words[narmed], 0))
			bench_die("arm futex object %d", narmed);
		narmed++;
	}
}

enum state { U, L0, L10K, LA, NSTATES };

/* The AIO object of LA, on a context nothing completes on. */
static aio_context_t watched_ctx;
static int watched = -1;

static void state_set(enum state s)
{
	if (watched >= 0 && s != LA) {
		close(watched);
		watched = -1;
	}
	if (s == U) {
		armed_set(0);
		module_unload();
		return;
	}
	module_load();
	armed_set(s == L10K ? armed_n : 0);
	if (s == LA && watched < 0) {
		watched = bench_pfs_aio(watched_ctx, POLLFS_CLOEXEC);
		if (watched < 0)
			bench_die("AIO object");
	}
}

static aio_context_t ctx;
static int file;
static char *buf;

/*
 * Buffered reads, 16 per io_submit, reaped with io_getevents: the median
 * over @batches of the mean us per read in @submits submissions.
 */
static double aio_stream(int batches, int submits)
{
	struct iocb cb[16], *cbs[16];
	struct io_event ev[16];
	static unsigned int next;
	struct samples us = {};
	int b, s, i, got, n;
	uint64_t t0;
	double med;

	for (b = 0; b < batches; b++) {
		t0 = bench_now_ns();
		for (s = 0; s < submits; s++) {
			for (i = 0; i < 16; i++) {
				memset(&cb[i], 0, sizeof(cb[i]));
				cb[i].aio_fildes = file;
				cb[i].aio_lio_opcode = IOCB_CMD_PREAD;
				cb[i].aio_buf = (uintptr_t)(buf + i * READ_SIZE);
				cb[i].aio_nbytes = READ_SIZE;
				cb[i].aio_offset = (uint64_t)next * READ_SIZE;
				next = (next + 1) % (FILE_SIZE / READ_SIZE);
				cbs[i] = &cb[i];
			}
			if (syscall(SYS_io_submit, ctx, 16, cbs) != 16)
				bench_die("io_submit");
			for (got = 0; got < 16; got += n) {
				n = syscall(SYS_io_getevents, ctx, 1, 16 - got,
					    ev, NULL);
				if (n < 1)
					bench_die("io_getevents");
			}
		}
		bench_samples_add(&us,
				  (bench_now_ns() - t0) / 1e3 / (16 * submits));
	}
	med = bench_samples_quantile(&us, 0.5);
	bench_samples_free(&us);
	return med;
}

static void prepare_aio(void)
{
	const char *path = "/tmp/pollfs-bench-hooks";
	char *data = malloc(FILE_SIZE);

	buf = aligned_alloc(4096, 16 * READ_SIZE);
	if (!data || !buf)
		bench_die("out of memory");
	memset(data, 'h', FILE_SIZE);
	file = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (file < 0 || write(file, data, FILE_SIZE) != FILE_SIZE)
		bench_die("write %s", path);
	unlink(path);
	free(data);
	if (syscall(SYS_io_setup, 64, &ctx) ||
	    syscall(SYS_io_setup, 1, &watched_ctx))
		bench_die("io_setup");
}

int main(int argc, char **argv)
{
	static const enum state full[] = { LA, U, L0, L10K, L10K, L0, U, LA };
	static const enum state quick[] = { U, L0, L10K, LA };
	const enum state *order = full;
	int visits = 8;
	char names[NSTATES][48];
	struct samples pp[NSTATES] = {}, aio[NSTATES] = {};
	int cycles, batches, c, l;
	FILE *f;

	bench_init(argc, argv, "hooks");
	cycles = bench_quick ? 1 : 12;
	batches = bench_quick ? 5 : 11;
	if (bench_quick) {
		order = quick;
		visits = 4;
	}

	module_path = getenv("POLLFS_KO");
	if (!module_path)
		module_path = "/pollfs/pollfs.ko";
	f = fopen("/pollfs/module", "re");
	if (f) {
		if (fscanf(f, "%63s", module) != 1)
			strcpy(module, "pollfs");
		fclose(f);
	}
	if (!module_loaded())
		bench_die("%s is not loaded", module);
	if (atexit(reload_at_exit))
		bench_die("atexit");
	if (bench_quick)
		armed_n = 1000;
	bench_raise_nofile(armed_n + 1000);
	words = calloc(armed_n, sizeof(*words));
	armed = calloc(armed_n, sizeof(*armed));
	if (!words || !armed)
		bench_die("out of memory");
	prepare_aio();
	bench_pin_cpu(0);
	snprintf(names[U], sizeof(names[U]), "module unloaded");
	snprintf(names[L0], sizeof(names[L0]), "loaded 0 objects");
	snprintf(names[L10K], sizeof(names[L10K]),
		 "loaded %d armed futex objects", armed_n);
	snprintf(names[LA], sizeof(names[LA]), "loaded 1 AIO object");

	for (c = 0; c < cycles; c++) {
		for (l = 0; l < visits; l++) {
			state_set(order[l]);
			/* Settle, and warm the emulator's code cache up. */
			bench_quiesce();
			bench_futex_pingpong(2, 100);
			aio_stream(2, 4);
			bench_samples_add(&pp[order[l]],
				bench_futex_pingpong(batches, 100) / 1e3);
			bench_samples_add(&aio[order[l]],
					  aio_stream(batches, 4));
			bench_progress("cycle %d/%d: %s: ping-pong %.2f us, AIO read %.2f us",
				       c + 1, cycles, names[order[l]],
				       pp[order[l]].v[pp[order[l]].n - 1],
				       aio[order[l]].v[aio[order[l]].n - 1]);
		}
	}
	state_set(L0);
	bench_pfs_dev_close();

	bench_report("hooks", names[L0], "unrelated futex ping-pong", "us",
		     names[U], &pp[L0], &pp[U], 1.02);
	bench_report("hooks", names[L10K], "unrelated futex ping-pong", "us",
		     names[U], &pp[L10K], &pp[U], 1.02);
	bench_report("hooks", names[L0], "unrelated AIO read", "us",
		     names[U], &aio[L0], &aio[U], 1.02);
	bench_report("hooks", names[L10K], "unrelated AIO read", "us",
		     names[U], &aio[L10K], &aio[U], 1.02);
	bench_report("hooks", names[LA], "unrelated AIO read", "us",
		     names[U], &aio[LA], &aio[U], 1.02);
	syscall(SYS_io_destroy, ctx);
	syscall(SYS_io_destroy, watched_ctx);
	return 0;
}
