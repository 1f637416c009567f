// SPDX-License-Identifier: MIT
/*
 * Real buffered I/O through AIO on a file in /tmp, driven by the AIO
 * object: pwrite, pwritev, pread, preadv, fsync and fdatasync complete,
 * the object counts each completion (failed ones too), and the data read
 * back, through AIO and through pread(2), is what was written.
 */
#include "lib/aio.h"

#include <sys/uio.h>

PT_BUDGET(60);

enum { BLK = 4096 };

static char wbuf[4][BLK], rbuf[4][BLK];

/* Sleeps in poll on the object until it reports n, then reaps them. */
static void await_completions(int fd, aio_context_t ctx, int n,
			      struct io_event *ev)
{
	int64_t end = pt_mono() + MS(PT_WAIT_MS);
	struct pollfs_aio_event pev;

	for (;;) {
		if (ax_revents(fd, POLLIN, PT_WAIT_MS) != POLLIN)
			FAIL("no POLLIN while waiting for %d completions", n);
		CHECK_EQ(ax_read_rec(fd, &pev), AX_EVENT_SIZE);
		CHECK_RANGE(pev.available, 1, n);
		if ((int)pev.available == n)
			break;
		if (pt_mono() > end)
			FAIL("%llu of %d completions",
			     (unsigned long long)pev.available, n);
		pt_sleep_ms(1);
	}
	CHECK_EQ(ax_reap(ctx, n, n, ev, 0), n);
	ax_expect_empty(fd);
}

/* The event of data d among n. */
static const struct io_event *find(const struct io_event *ev, int n, uint64_t d)
{
	for (int i = 0; i < n; i++)
		if (ev[i].data == d)
			return &ev[i];
	FAIL("no completion with data %llu", (unsigned long long)d);
}

int main(void)
{
	struct iocb cbs[8], *ptrs[8];
	struct io_event ev[8];
	struct iovec wv[3], rv[3];
	aio_context_t ctx;
	int fd, file;
	char check[BLK];

	ctx = ax_setup(32);
	fd = ax_fd(ctx, POLLFS_NONBLOCK);
	file = ax_tmpfile("/tmp", 0);
	for (int i = 0; i < 8; i++)
		ptrs[i] = &cbs[i];
	for (int b = 0; b < 4; b++)
		for (int i = 0; i < BLK; i++)
			wbuf[b][i] = (char)(b * 31 + i * 7 + (i >> 8));

	/* writes: plain, vectored, sparse far out, and one from a bad
	 * buffer, which completes with -EFAULT */
	ax_prep_pwrite(&cbs[0], file, wbuf[0], BLK, 0, 10);
	wv[0] = (struct iovec){ wbuf[1], 100 };
	wv[1] = (struct iovec){ wbuf[1] + 100, BLK - 200 };
	wv[2] = (struct iovec){ wbuf[1] + BLK - 100, 100 };
	ax_prep_rw(&cbs[1], IOCB_CMD_PWRITEV, file, wv, 3, BLK, 11);
	ax_prep_pwrite(&cbs[2], file, wbuf[2], BLK, 16 * BLK, 12);
	ax_prep_pwrite(&cbs[3], file, (void *)(uintptr_t)4096, BLK, 2 * BLK,
		       13);
	ax_submit(ctx, 4, ptrs);
	await_completions(fd, ctx, 4, ev);
	CHECK_EQ(find(ev, 4, 10)->res, BLK);
	CHECK_EQ(find(ev, 4, 11)->res, BLK);
	CHECK_EQ(find(ev, 4, 12)->res, BLK);
	CHECK_EQ(find(ev, 4, 13)->res, -EFAULT);
	CHECK_EQ(find(ev, 4, 11)->obj, (uint64_t)(uintptr_t)&cbs[1]);

	/* the file holds it */
	CHECK_EQ(pread(file, check, BLK, 0), BLK);
	CHECK(!memcmp(check, wbuf[0], BLK));
	CHECK_EQ(pread(file, check, BLK, BLK), BLK);
	CHECK(!memcmp(check, wbuf[1], BLK));
	CHECK_EQ(pread(file, check, BLK, 16 * BLK), BLK);
	CHECK(!memcmp(check, wbuf[2], BLK));

	/* fsync and fdatasync */
	memset(&cbs[0], 0, sizeof(cbs[0]));
	cbs[0].aio_lio_opcode = IOCB_CMD_FSYNC;
	cbs[0].aio_fildes = (__u32)file;
	cbs[0].aio_data = 20;
	cbs[1] = cbs[0];
	cbs[1].aio_lio_opcode = IOCB_CMD_FDSYNC;
	cbs[1].aio_data = 21;
	ax_submit(ctx, 2, ptrs);
	await_completions(fd, ctx, 2, ev);
	CHECK_EQ(find(ev, 2, 20)->res, 0);
	CHECK_EQ(find(ev, 2, 21)->res, 0);

	/* reads: plain, vectored, a hole, short at the end of the file */
	memset(rbuf, 0x5a, sizeof(rbuf));
	ax_prep_pread(&cbs[0], file, rbuf[0], BLK, 0, 30);
	rv[0] = (struct iovec){ rbuf[1], 1 };
	rv[1] = (struct iovec){ rbuf[1] + 1, BLK - 2 };
	rv[2] = (struct iovec){ rbuf[1] + BLK - 1, 1 };
	ax_prep_rw(&cbs[1], IOCB_CMD_PREADV, file, rv, 3, BLK, 31);
	ax_prep_pread(&cbs[2], file, rbuf[2], BLK, 8 * BLK, 32);
	ax_prep_pread(&cbs[3], file, rbuf[3], BLK, 16 * BLK + BLK / 2, 33);
	ax_submit(ctx, 4, ptrs);
	await_completions(fd, ctx, 4, ev);
	CHECK_EQ(find(ev, 4, 30)->res, BLK);
	CHECK_EQ(find(ev, 4, 31)->res, BLK);
	CHECK_EQ(find(ev, 4, 32)->res, BLK);
	CHECK_EQ(find(ev, 4, 33)->res, BLK / 2);
	CHECK(!memcmp(rbuf[0], wbuf[0], BLK));
	CHECK(!memcmp(rbuf[1], wbuf[1], BLK));
	for (int i = 0; i < BLK; i++)
		if (rbuf[2][i])
			FAIL("byte %d of a hole reads %#x", i,
			     (unsigned char)rbuf[2][i]);
	CHECK(!memcmp(rbuf[3], wbuf[2] + BLK / 2, BLK / 2));
	CHECK_EQ((unsigned char)rbuf[3][BLK / 2], 0x5a);	/* untouched */

	/* at the end of the file: a read of 0 bytes completes too */
	ax_prep_pread(&cbs[0], file, rbuf[0], BLK, 100 * BLK, 40);
	ax_submit(ctx, 1, ptrs);
	await_completions(fd, ctx, 1, ev);
	ax_check_event(&ev[0], 40, 0);

	CHECK_SYS(close(fd));
	CHECK_SYS(close(file));
	ax_destroy(ctx);
	return PT_PASS;
}
