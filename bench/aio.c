// SPDX-License-Identifier: MIT
/*
 * AIO completion notification: a pollfs AIO object watching the context's
 * completion ring, against an eventfd attached to every iocb with
 * IOCB_FLAG_RESFD.  The reads are buffered 4 KiB reads of a file in /tmp.
 *
 * Each route is used the way an application would: with pollfs, epoll
 * says the ring holds completions and io_getevents() reaps them (the
 * object itself need not be read); with the eventfd, epoll says the
 * counter moved, read() resets it and io_getevents() reaps.
 *
 * - latency: one read, from just before io_submit() in one thread to the
 *   return of epoll_wait() in another: p50, p99, the waiter's CPU per
 *   completion and the submitter's CPU in io_submit() (which, for a
 *   buffered read of a cached file, completes the read and notifies).
 * - stream: one thread submits 16 reads per io_submit(), waits in
 *   epoll_wait and reaps; time and CPU per read.
 *
 * Each route has its own context; runs alternate A B B A.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

#define FILE_SIZE	(1 << 20)
#define READ_SIZE	4096
#define BATCH		16

struct route {
	bool pollfs;
	aio_context_t ctx;
	int notify;		/* the pollfs AIO object, or the eventfd */
	int file;
	unsigned int next;	/* offset of the next read, in READ_SIZE */
	struct iocb cb[BATCH];
	char *buf;
};

static void prep(struct route *r, int nr)
{
	struct iocb *cb;
	int i;

	for (i = 0; i < nr; i++) {
		cb = &r->cb[i];
		memset(cb, 0, sizeof(*cb));
		cb->aio_fildes = r->file;
		cb->aio_lio_opcode = IOCB_CMD_PREAD;
		cb->aio_buf = (uintptr_t)(r->buf + i * READ_SIZE);
		cb->aio_nbytes = READ_SIZE;
		cb->aio_offset = (uint64_t)r->next * READ_SIZE;
		r->next = (r->next + 1) % (FILE_SIZE / READ_SIZE);
		if (!r->pollfs) {
			cb->aio_flags = IOCB_FLAG_RESFD;
			cb->aio_resfd = r->notify;
		}
	}
}

static void submit(struct route *r, int nr)
{
	struct iocb *cbs[BATCH];
	int i;

	prep(r, nr);
	for (i = 0; i < nr; i++)
		cbs[i] = &r->cb[i];
	if (syscall(SYS_io_submit, r->ctx, nr, cbs) != nr)
		bench_die("io_submit");
}

/* Reset the eventfd, if that is the route, and reap what is there. */
static int reap(struct route *r, int max)
{
	struct io_event ev[BATCH];
	struct timespec zero = { 0, 0 };
	uint64_t count;
	int n, i;

	if (!r->pollfs &&
	    read(r->notify, &count, sizeof(count)) != sizeof(count))
		bench_die("read the eventfd");
	n = syscall(SYS_io_getevents, r->ctx, 1, max, ev, &zero);
	if (n < 1)
		bench_die("io_getevents found nothing after a wake-up");
	for (i = 0; i < n; i++)
		if (ev[i].res != READ_SIZE)
			bench_die("a read returned %lld", (long long)ev[i].res);
	return n;
}

static void fire_one(void *arg)
{
	submit(arg, 1);
}

static void consume_one(void *arg)
{
	if (reap(arg, 1) != 1)
		bench_die("reaped more than one");
}

static void stream(struct route *r, int total, double *wall, double *cpu)
{
	struct epoll_event ev = { .events = EPOLLIN };
	uint64_t t0, c0;
	int ep, done = 0, reaped;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, r->notify, &ev))
		bench_die("epoll set-up");
	t0 = bench_now_ns();
	c0 = bench_thread_cpu_ns();
	while (done < total) {
		submit(r, BATCH);
		for (reaped = 0; reaped < BATCH;) {
			if (epoll_wait(ep, &ev, 1, 5000) != 1)
				bench_die("no completion for 5 s");
			reaped += reap(r, BATCH - reaped);
		}
		done += BATCH;
	}
	*cpu = (bench_thread_cpu_ns() - c0) / 1e3 / done;
	*wall = (bench_now_ns() - t0) / 1e3 / done;
	close(ep);
}

static int make_file(void)
{
	const char *path = "/tmp/pollfs-bench-aio";
	char *data;
	int fd;

	data = malloc(FILE_SIZE);
	if (!data)
		bench_die("out of memory");
	memset(data, 'p', FILE_SIZE);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, FILE_SIZE) != FILE_SIZE)
		bench_die("write %s", path);
	unlink(path);
	free(data);
	return fd;
}

int main(int argc, char **argv)
{
	struct samples p50[2] = {}, p99[2] = {}, wcpu[2] = {}, scpu[2] = {};
	struct samples swall[2] = {}, stcpu[2] = {};
	struct wake_result res = {};
	struct route route[2] = {};
	struct wake_ops ops[2];
	int reps, n, total, file, i, k;
	double wall, cpu;
	bool pollfs;

	bench_init(argc, argv, "aio");
	reps = bench_quick ? 4 : 128;
	n = bench_quick ? 30 : 120;
	total = bench_quick ? 400 : 1600;

	file = make_file();
	for (k = 0; k < 2; k++) {
		route[k].pollfs = k;
		route[k].file = file;
		route[k].buf = aligned_alloc(4096, BATCH * READ_SIZE);
		if (!route[k].buf)
			bench_die("out of memory");
		if (syscall(SYS_io_setup, 4 * BATCH, &route[k].ctx))
			bench_die("io_setup");
		route[k].notify = k ?
			bench_pfs_aio(route[k].ctx,
				      POLLFS_NONBLOCK | POLLFS_CLOEXEC) :
			eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (route[k].notify < 0)
			bench_die("create the %s",
				  k ? "pollfs AIO object" : "eventfd");
		ops[k] = (struct wake_ops){
			.fd = route[k].notify, .fire = fire_one,
			.consume = consume_one, .arg = &route[k],
		};
	}

	for (i = 0; i < reps; i++) {
		for (k = 0; k < 2; k++) {
			pollfs = (i + k) % 2 == 0;
			bench_wake_run(&ops[pollfs], n, &res);
			bench_samples_add(&p50[pollfs],
				bench_samples_quantile(&res.lat, 0.5) / 1e3);
			bench_samples_add(&p99[pollfs],
				bench_samples_quantile(&res.lat, 0.99) / 1e3);
			bench_samples_add(&wcpu[pollfs], res.waiter_cpu / 1e3);
			bench_samples_add(&scpu[pollfs], res.waker_cpu / 1e3);
		}
		for (k = 0; k < 2; k++) {
			pollfs = (i + k) % 2 == 1;
			stream(&route[pollfs], total, &wall, &cpu);
			bench_samples_add(&swall[pollfs], wall);
			bench_samples_add(&stcpu[pollfs], cpu);
		}
		bench_progress("repetition %d/%d", i + 1, reps);
	}
	bench_report("aio", "1 read", "submit-to-wake latency p50", "us",
		     "eventfd RESFD", &p50[1], &p50[0], 1.10);
	bench_report("aio", "1 read", "submit-to-wake latency p99", "us",
		     "eventfd RESFD", &p99[1], &p99[0], 1.10);
	bench_report("aio", "1 read", "waiter CPU per completion", "us",
		     "eventfd RESFD", &wcpu[1], &wcpu[0], 1.10);
	bench_report("aio", "1 read", "submitter CPU per read", "us",
		     "eventfd RESFD", &scpu[1], &scpu[0], 1.10);
	bench_report("aio", "stream 16 per submit", "time per read", "us",
		     "eventfd RESFD", &swall[1], &swall[0], 1.10);
	bench_report("aio", "stream 16 per submit", "CPU per read", "us",
		     "eventfd RESFD", &stcpu[1], &stcpu[0], 1.10);

	for (k = 0; k < 2; k++) {
		close(route[k].notify);
		syscall(SYS_io_destroy, route[k].ctx);
		free(route[k].buf);
	}
	close(file);
	bench_samples_free(&res.lat);
	return 0;
}
