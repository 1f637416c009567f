// SPDX-License-Identifier: MIT
/*
 * Real-time signal throughput: a pollfs signal object against a signalfd.
 *
 * A child process sigqueue()s N SIGRTMIN signals, each with its index as
 * value, to the parent (when RLIMIT_SIGPENDING's queue is full it naps
 * 20 us and retries); the parent
 * waits in epoll_wait and reads them in batches of up to 32 records,
 * reading again while a batch comes back full.  Per run: wall time per
 * signal from the go to the last record read (sender included), the
 * reader's CPU time per signal, and its read and epoll_wait calls per
 * signal.  Every record is checked: signal number and value in order.
 * Runs alternate A B B A.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define BATCH	32

struct run {
	double wall, cpu;	/* us per signal */
	double reads, calls;	/* read(), and read() + epoll_wait(), per signal */
};

static void sender(int go, pid_t to, int n)
{
	union sigval value;
	char c;
	int i;

	bench_pin_cpu(0);
	if (read(go, &c, 1) != 1)
		_exit(1);
	for (i = 0; i < n; i++) {
		value.sival_int = i;
		while (sigqueue(to, SIGRTMIN, value)) {
			if (errno != EAGAIN)
				_exit(1);
			usleep(20);	/* the queue is full: let it drain */
		}
	}
	_exit(0);
}

static struct run run_one(bool pollfs, int n)
{
	struct epoll_event ev = { .events = EPOLLIN };
	/* struct pollfs_siginfo and struct signalfd_siginfo: 128 bytes. */
	static struct pollfs_siginfo buf[BATCH];
	uint64_t t0, cpu;
	long reads = 0, waits = 0;
	int fd, ep, go[2], got = 0, k, i, status;
	ssize_t len;
	sigset_t set;
	pid_t child;
	struct run r;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	if (pollfs)
		fd = bench_pfs_signal(1ull << (SIGRTMIN - 1),
				      POLLFS_NONBLOCK | POLLFS_CLOEXEC);
	else
		fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0)
		bench_die("create a %s",
			  pollfs ? "pollfs signal object" : "signalfd");
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		bench_die("epoll set-up");
	if (pipe(go))
		bench_die("pipe");
	child = fork();
	if (child < 0)
		bench_die("fork");
	if (!child)
		sender(go[0], getppid(), n);
	close(go[0]);

	t0 = bench_now_ns();
	cpu = bench_thread_cpu_ns();
	if (write(go[1], "g", 1) != 1)
		bench_die("start the sender");
	while (got < n) {
		waits++;
		if (epoll_wait(ep, &ev, 1, 10000) != 1)
			bench_die("no signal for 10 s after %d", got);
		do {
			reads++;
			len = read(fd, buf, sizeof(buf));
			if (len < 0 && errno == EAGAIN)
				break;
			if (len <= 0 || len % sizeof(buf[0]))
				bench_die("read returned %zd", len);
			k = len / sizeof(buf[0]);
			for (i = 0; i < k; i++, got++)
				if (buf[i].psi_signo != (uint32_t)SIGRTMIN ||
				    buf[i].psi_int != got)
					bench_die("record %d: signal %u value %d",
						  got, buf[i].psi_signo,
						  buf[i].psi_int);
		} while (k == BATCH);
	}
	cpu = bench_thread_cpu_ns() - cpu;
	r.wall = (bench_now_ns() - t0) / 1e3 / n;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		bench_die("the sender failed");
	close(go[1]);
	close(ep);
	close(fd);

	r.cpu = cpu / 1e3 / n;
	r.reads = (double)reads / n;
	r.calls = (double)(reads + waits) / n;
	return r;
}

int main(int argc, char **argv)
{
	struct samples wall[2] = {}, cpu[2] = {}, reads[2] = {}, calls[2] = {};
	int n, reps, i, k;
	char variant[32];
	sigset_t set;
	bool pollfs;
	struct run r;

	bench_init(argc, argv, "signal");
	n = bench_quick ? 3000 : 25000;
	reps = bench_quick ? 2 : 32;
	bench_pin_cpu(1);
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		bench_die("sigprocmask");

	for (i = 0; i < reps; i++) {
		for (k = 0; k < 2; k++) {
			pollfs = (i + k) % 2 == 0;
			r = run_one(pollfs, n);
			bench_samples_add(&wall[pollfs], r.wall);
			bench_samples_add(&cpu[pollfs], r.cpu);
			bench_samples_add(&reads[pollfs], r.reads);
			bench_samples_add(&calls[pollfs], r.calls);
		}
		bench_progress("%d signals: repetition %d/%d", n, i + 1, reps);
	}
	snprintf(variant, sizeof(variant), "%d RT signals", n);
	bench_report("signal", variant, "time per signal", "us", "signalfd",
		     &wall[1], &wall[0], 1.10);
	bench_report("signal", variant, "reader CPU per signal", "us",
		     "signalfd", &cpu[1], &cpu[0], 1.10);
	bench_report("signal", variant, "read calls per signal", "calls",
		     "signalfd", &reads[1], &reads[0], 0);
	bench_report("signal", variant, "syscalls per signal (read+epoll_wait)",
		     "calls", "signalfd", &calls[1], &calls[0], 0);
	return 0;
}
