// SPDX-License-Identifier: MIT
/*
 * A burst of 256 completions on a context set up for 256: the AIO object
 * reports them all (the count completed so far while they arrive, never
 * more than were submitted, and 256 in the end), and each reap of k
 * lowers the count by exactly k.  Three bursts: buffered writes that
 * complete inside io_submit, 256 IOCB_CMD_POLLs on one pipe completed by
 * one write, and 256 fsyncs completed from a workqueue.
 */
#include "lib/aio.h"

PT_BUDGET(120);

enum { N = 256, LEN = 512 };

static struct iocb cbs[N], *ptrs[N];
static struct io_event ev[N];
static char wbuf[N][LEN], rbuf[LEN];

/* Waits until all N completions are there, checking the count on the way:
 * never more than N, never going down. */
static void wait_all(int fd, aio_context_t ctx, const char *what)
{
	int64_t end = pt_mono() + MS(PT_WAIT_MS);
	struct pollfs_aio_event pev;
	uint64_t last = 0;
	int reads = 0;

	for (;;) {
		short rev = ax_revents(fd, POLLIN, PT_WAIT_MS);

		if (rev != POLLIN)
			FAIL("%s: poll revents %#x after %llu completions",
			     what, (unsigned)rev, (unsigned long long)last);
		CHECK_EQ(ax_read_rec(fd, &pev), AX_EVENT_SIZE);
		CHECK_EQ(pev.ctx, ctx);
		reads++;
		if (pev.available < last || pev.available > N)
			FAIL("%s: available went from %llu to %llu (%d "
			     "submitted)", what, (unsigned long long)last,
			     (unsigned long long)pev.available, N);
		last = pev.available;
		if (last == N)
			break;
		if (pt_mono() > end)
			FAIL("%s: only %llu of %d completions after %d ms",
			     what, (unsigned long long)last, N, PT_WAIT_MS);
		pt_sleep_ms(1);
	}
	pt_diag("%s: %d completions seen in %d reads", what, N, reads);
}

/* Reaps everything in growing steps, checking the count after each. */
static void reap_down(int fd, aio_context_t ctx, const char *what,
		      int64_t res, uint64_t data0)
{
	static const int steps[] = { 1, 2, 3, 5, 8, 13, 21, 34, 55, 89 };
	static bool seen[N];
	int left = N, got = 0;

	memset(seen, 0, sizeof(seen));
	for (unsigned int i = 0; left > 0; i++) {
		int k = i < sizeof(steps) / sizeof(steps[0]) ? steps[i] : left;

		if (k > left)
			k = left;
		CHECK_EQ(ax_reap(ctx, k, k, ev + got, 0), k);
		left -= k;
		got += k;
		if (left)
			ax_expect_avail(fd, ctx, (uint64_t)left);
	}
	ax_expect_empty(fd);
	for (int i = 0; i < N; i++) {
		uint64_t d = ev[i].data - data0;

		bool ok = res == POLLIN ? ax_pipe_poll_res(ev[i].res) :
			  ev[i].res == res;

		if (d >= N || seen[d] || !ok)
			FAIL("%s: event %d {data %#llx, res %lld}: expected "
			     "a new data in [%#llx, +%d) and res %lld", what,
			     i, (unsigned long long)ev[i].data,
			     (long long)ev[i].res, (unsigned long long)data0,
			     N, (long long)res);
		seen[d] = true;
	}
}

int main(void)
{
	aio_context_t ctx;
	int fd, file, pfd[2];

	ctx = ax_setup(N);
	fd = ax_fd(ctx, 0);
	file = ax_tmpfile("/tmp", 0);
	for (int i = 0; i < N; i++)
		ptrs[i] = &cbs[i];

	/* buffered writes: all complete inside io_submit */
	for (int i = 0; i < N; i++) {
		memset(wbuf[i], i, LEN);
		ax_prep_pwrite(&cbs[i], file, wbuf[i], LEN, (off_t)i * LEN,
			       1000 + i);
	}
	ax_expect_empty(fd);
	ax_submit(ctx, N, ptrs);
	ax_expect_avail(fd, ctx, N);
	ax_expect_avail(fd, ctx, N);
	reap_down(fd, ctx, "writes", LEN, 1000);
	for (int i = 0; i < N; i++) {
		CHECK_EQ(pread(file, rbuf, LEN, (off_t)i * LEN), LEN);
		if (memcmp(rbuf, wbuf[i], LEN))
			FAIL("block %d of the file is not what was written", i);
	}

	/* poll iocbs on one pipe: nothing until the write completes them
	 * all, asynchronously */
	CHECK_SYS(pipe2(pfd, O_CLOEXEC));
	for (int i = 0; i < N; i++)
		ax_prep_poll(&cbs[i], pfd[0], POLLIN, 2000 + i);
	ax_submit(ctx, N, ptrs);
	ax_expect_empty(fd);
	CHECK_EQ(ax_revents(fd, POLLIN, 100), 0);
	CHECK_EQ(write(pfd[1], "x", 1), 1);
	wait_all(fd, ctx, "polls");
	reap_down(fd, ctx, "polls", POLLIN, 2000);

	/* fsyncs, completed by workqueue items */
	for (int i = 0; i < N; i++) {
		memset(&cbs[i], 0, sizeof(cbs[i]));
		cbs[i].aio_lio_opcode = IOCB_CMD_FSYNC;
		cbs[i].aio_fildes = (__u32)file;
		cbs[i].aio_data = 3000 + i;
	}
	ax_submit(ctx, N, ptrs);
	wait_all(fd, ctx, "fsyncs");
	reap_down(fd, ctx, "fsyncs", 0, 3000);

	CHECK_SYS(close(pfd[0]));
	CHECK_SYS(close(pfd[1]));
	CHECK_SYS(close(fd));
	CHECK_SYS(close(file));
	ax_destroy(ctx);
	return PT_PASS;
}
