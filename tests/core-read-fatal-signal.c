// SPDX-License-Identifier: MIT
/*
 * A signal ends a read that records keep feeding (issue 24, part 2).
 *
 * A futex object's read has no record cap: a watched wait-any set
 * (POLLFS_FUTEX_WATCH) is armed again by each record read, so while
 * other processes keep waking its word, one read of a huge buffer finds
 * a record ready at every step, and only the buffer would bound it.  The
 * read loop must stop at a pending signal after the records copied so
 * far, as the write loop does; a read that ends only when the wakes
 * pause leaves SIGKILL waiting on another user's wakes.
 *
 * The object: 128 watched records, all on one MAP_SHARED word, so that
 * one FUTEX_WAKE wakes them all, armed by this process and read by a
 * child: a reader outside the arming address space pins the word's page
 * for each record, which slows the reader and helps the wakers keep
 * ahead.  The child reads with readv() of 1024 iovecs of 1 MiB each,
 * all over the same 1 MiB: 64 Mi records for one call.  Other processes
 * wake the word without pause.  Then:
 *  - SIGKILL: the reader must be reaped within KILL_MS;
 *  - a caught signal (no SA_RESTART), several times: the read it lands
 *    in must return within KILL_MS, with the records read until then (a
 *    count of whole records, the first of them valid) or with EINTR if
 *    it had none yet.
 * A read that outlives KILL_MS is ended by stopping the wakers, so the
 * test ends either way.  The two signals are a TEST each.
 *
 * Under emulation the wakers may not keep ahead of the reader, whose
 * reads then end by themselves each time the woken records run out: the
 * test passes then whatever the read loop does.  It says how long the
 * reads were.
 */
#include "lib/futex.h"

#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>

PT_BUDGET(50);

#define RECORDS		POLLFS_FUTEX_WAITV_MAX
#define IOVECS		1024
#define CHUNK		(1 << 20)
#define WAKERS		3
#define SIGNALS		5
/* How long a signalled reader may take to leave its read. */
#define KILL_MS		2000
/* How long the reader reads before each signal. */
#define READ_MS		300
/* A signal's result when it came between two reads. */
#define BETWEEN_READS	(-2)

/* MAP_SHARED, between the test, the reader and the wakers. */
struct shared {
	uint32_t word;		/* the futex word every record watches */
	atomic_int reading;	/* the reader began its first read */
	atomic_long reads;	/* reads that returned */
	atomic_long records;	/* records those returned */
	atomic_long max_records;	/* the most one of them returned */
	atomic_long wakes;	/* FUTEX_WAKE calls that woke a record */
	/* The read each caught signal landed in: */
	atomic_int caught;	/* signals caught, and results written */
	ssize_t ret[SIGNALS];
	int err[SIGNALS];
	int64_t ret_ns[SIGNALS];	/* when it returned */
	struct pollfs_futex_event first[SIGNALS];	/* its first record */
};

static struct shared *sh;
static pid_t wakers[WAKERS];
static pid_t reader_pid;
static volatile sig_atomic_t handled;

static void stop_wakers(void)
{
	for (int i = 0; i < WAKERS; i++) {
		if (wakers[i] <= 0)
			continue;
		pt_kill_reap(wakers[i]);
		wakers[i] = 0;
	}
}

static void stop_all(void)
{
	stop_wakers();
	if (reader_pid > 0) {
		pt_kill_reap(reader_pid);
		reader_pid = 0;
	}
}

static void start_wakers(void)
{
	for (int i = 0; i < WAKERS; i++) {
		pid_t pid = fx_fork();

		if (pid == 0) {
			pt_on_fail(NULL);
			for (;;)
				if (fx_wake(&sh->word, INT_MAX, FX_SHARED) > 0)
					atomic_fetch_add(&sh->wakes, 1);
		}
		wakers[i] = pid;
	}
}

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

/*
 * The reader, in a child: reads @fd until killed, or, with @caught,
 * until SIGNALS caught signals have each ended a read.
 */
static void reader(int fd, bool caught)
{
	struct iovec iov[IOVECS];
	struct sigaction sa;
	int seen = 0;
	char *buf;

	pt_on_fail(NULL);
	if (caught) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;	/* no SA_RESTART */
		sigemptyset(&sa.sa_mask);
		CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	}
	buf = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	CHECK(buf != MAP_FAILED);
	/* No page fault in the copy: the wakes alone should pace it. */
	memset(buf, 0, CHUNK);
	for (int i = 0; i < IOVECS; i++) {
		iov[i].iov_base = buf;
		iov[i].iov_len = CHUNK;
	}

	atomic_store(&sh->reading, 1);
	for (;;) {
		ssize_t r;
		int e, k = seen;

		if (caught && handled != seen) {
			/* Caught between two reads: no read to judge. */
			seen = handled;
			sh->ret[k] = BETWEEN_READS;
			atomic_store(&sh->caught, k + 1);
			if (k + 1 == SIGNALS)
				_exit(PT_PASS);
			continue;
		}
		r = readv(fd, iov, IOVECS);
		e = errno;

		if (r > 0) {
			long n = r / FX_REC, m = atomic_load(&sh->max_records);

			atomic_fetch_add(&sh->records, n);
			while (n > m && !atomic_compare_exchange_weak(
					&sh->max_records, &m, n))
				;
		}
		atomic_fetch_add(&sh->reads, 1);
		if (!caught) {
			if (r < 0)
				FAIL("readv: %s", strerror(e));
			continue;
		}
		if (handled == seen) {
			if (r < 0)
				FAIL("readv with no signal: %s", strerror(e));
			continue;
		}
		/* The signal landed in this read (or just before it). */
		seen = handled;
		sh->ret[k] = r;
		sh->err[k] = e;
		sh->ret_ns[k] = pt_mono();
		if (r > 0)
			memcpy(&sh->first[k], buf, sizeof(sh->first[k]));
		atomic_store(&sh->caught, k + 1);
		if (k + 1 == SIGNALS)
			_exit(PT_PASS);
	}
}

/* A watched set armed here, read by a child; the wakers started. */
static int start_reader(bool caught)
{
	struct pollfs_futex_event evs[RECORDS];
	int64_t deadline = pt_mono() + MS(PT_WAIT_MS);
	int fd;

	memset(sh, 0, sizeof(*sh));
	sh->word = 7;
	fd = fx_new(POLLFS_CLOEXEC);
	for (int i = 0; i < RECORDS; i++)
		evs[i] = fx_ev(&sh->word, sh->word, FX_SHARED | FX_WATCH);
	fx_armv(fd, evs, RECORDS);
	reader_pid = fx_fork();
	if (reader_pid == 0)
		reader(fd, caught);
	while (!atomic_load(&sh->reading)) {
		if (pt_mono() > deadline)
			FAIL("the reader did not start");
		pt_sleep_ms(5);
	}
	start_wakers();
	return fd;
}

static void report(const char *what)
{
	pt_diag("%s: %ld reads returned, %ld records (at most %ld in one); "
		"%ld wakes woke records", what, atomic_load(&sh->reads),
		atomic_load(&sh->records), atomic_load(&sh->max_records),
		atomic_load(&sh->wakes));
}

/* SIGKILL: the reader is reaped within KILL_MS. */
TEST(sigkill_ends_the_read)
{
	int limit = KILL_MS * (int)pt_time_scale();
	int64_t t_kill, t_stop;
	int status, fd;

	fd = start_reader(false);
	pt_sleep_ms(READ_MS);
	t_kill = pt_mono();
	CHECK_SYS(kill(reader_pid, SIGKILL));
	status = pt_reap_within(reader_pid, limit);
	if (status < 0) {
		report("SIGKILL");
		t_stop = pt_mono();
		stop_wakers();
		if (pt_reap_within(reader_pid, PT_WAIT_MS) >= 0)
			reader_pid = 0;
		FAIL("SIGKILL: the reader still ran %d ms after the signal; it "
		     "died %lld ms after the wakers stopped", limit,
		     (long long)((pt_mono() - t_stop) / NSEC_PER_MSEC));
	}
	reader_pid = 0;
	stop_wakers();
	report("SIGKILL");
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		FAIL("the reader ended with status %#x, not by SIGKILL",
		     status);
	pt_diag("SIGKILL: the reader was reaped %lld ms after the signal",
		(long long)((pt_mono() - t_kill) / NSEC_PER_MSEC));
	CHECK_SYS(close(fd));
}

/* A caught signal: each read it lands in returns within KILL_MS. */
TEST(caught_signal_ends_the_read)
{
	int limit = KILL_MS * (int)pt_time_scale();
	int counts = 0, eintr = 0, status, fd;

	fd = start_reader(true);
	for (int k = 0; k < SIGNALS; k++) {
		int64_t t_sig, deadline;

		pt_sleep_ms(READ_MS);
		t_sig = pt_mono();
		CHECK_SYS(kill(reader_pid, SIGUSR1));
		deadline = t_sig + MS(limit);
		while (atomic_load(&sh->caught) <= k) {
			if (pt_mono() > deadline) {
				report("SIGUSR1");
				stop_all();
				FAIL("SIGUSR1 %d: the read it landed in "
				     "still ran %d ms after it", k, limit);
			}
			pt_sleep_ms(1);
		}
		if (sh->ret[k] == BETWEEN_READS) {
			pt_diag("SIGUSR1 %d: caught between two reads", k);
			continue;
		}
		if (sh->ret[k] > 0) {
			CHECK_EQ(sh->ret[k] % FX_REC, 0);
			CHECK(sh->ret[k] < (ssize_t)IOVECS * CHUNK);
			fx_check_rec(&sh->first[k], &sh->word, sh->first[k].val,
				     FX_SHARED | FX_WATCH);
			counts++;
		} else {
			if (sh->ret[k] != -1 || sh->err[k] != EINTR)
				FAIL("SIGUSR1 %d: the read returned %zd, errno "
				     "%d (%s)", k, sh->ret[k], sh->err[k],
				     strerror(sh->err[k]));
			eintr++;
		}
		pt_diag("SIGUSR1 %d: the read returned %zd, %lld ms after it",
			k, sh->ret[k],
			(long long)((sh->ret_ns[k] - t_sig) / NSEC_PER_MSEC));
	}
	stop_wakers();
	report("SIGUSR1");
	status = pt_reap_within(reader_pid, PT_WAIT_MS);
	if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != PT_PASS)
		FAIL("the reader ended with status %#x", status);
	reader_pid = 0;
	pt_diag("SIGUSR1: %d reads ended with the records read until then, "
		"%d with EINTR (none read yet)", counts, eintr);
	CHECK_SYS(close(fd));
}

int main(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	pt_on_fail(stop_all);
	return pt_run_tests();
}
