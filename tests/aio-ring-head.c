// SPDX-License-Identifier: MIT
/*
 * Completions reaped in user space, by moving the ring's head as some
 * libraries do instead of calling io_getevents, are reaped for pollfs too:
 * the count follows the head, whatever value (taken modulo the ring size,
 * as the kernel takes it) user space stores there, and always agrees with
 * what io_getevents then returns.  The count stays exact while head and
 * tail wrap round the ring.
 */
#include "lib/aio.h"

PT_BUDGET(60);

int main(void)
{
	static char data[64];
	struct iocb cbs[8], *ptrs[8];
	struct io_event ev[16];
	volatile struct ax_ring_head *ring;
	aio_context_t ctx;
	unsigned int nr, tail;
	int fd, file;

	ctx = ax_setup(16);
	ring = ax_ring(ctx);
	nr = ring->nr;
	pt_diag("ring of %u events", nr);
	CHECK(nr > 8);
	fd = ax_fd(ctx, POLLFS_NONBLOCK);
	file = ax_tmpfile("/tmp", 0);

	for (int i = 0; i < 8; i++) {
		ax_prep_pwrite(&cbs[i], file, data, sizeof(data), 0, i);
		ptrs[i] = &cbs[i];
	}
	ax_submit(ctx, 5, ptrs);
	ax_expect_avail(fd, ctx, 5);
	tail = ring->tail;
	CHECK_EQ((tail - ring->head + nr) % nr, 5);

	/* user space reaps two by moving the head */
	ring->head = (ring->head + 2) % nr;
	ax_expect_avail(fd, ctx, 3);
	/* and all of them */
	ring->head = tail;
	ax_expect_empty(fd);
	CHECK_EQ(ax_reap(ctx, 0, 16, ev, 0), 0);

	/* a head beyond the ring size counts modulo it, as for the kernel */
	ax_submit(ctx, 4, ptrs);
	tail = ring->tail;
	ring->head = tail + nr;		/* == tail modulo nr: nothing left */
	ax_expect_empty(fd);
	CHECK_EQ(ax_reap(ctx, 0, 16, ev, 0), 0);

	ring->head = (tail + nr - 3) % nr + 2 * nr;	/* three left */
	ax_expect_avail(fd, ctx, 3);
	CHECK_EQ(ax_reap(ctx, 0, 16, ev, 0), 3);
	ax_expect_empty(fd);

	/* a head past the tail: the kernel sees nr - 1 - ... unreaped; pollfs
	 * must report exactly what io_getevents then hands out */
	ax_submit(ctx, 1, ptrs);
	tail = ring->tail;
	ring->head = (tail + 1) % nr;
	{
		struct pollfs_aio_event pev;
		long got;

		CHECK_EQ(ax_read_rec(fd, &pev), AX_EVENT_SIZE);
		CHECK_EQ(pev.ctx, ctx);
		CHECK_EQ(pev.available, nr - 1);
		got = 0;
		while (got < (long)nr - 1)
			got += ax_reap(ctx, 1, 16, ev, 0);
		CHECK_EQ(got, nr - 1);
	}
	ax_expect_empty(fd);

	/* and ordinary use goes on */
	ax_submit(ctx, 2, ptrs);
	ax_expect_avail(fd, ctx, 2);
	CHECK_EQ(ax_reap(ctx, 2, 16, ev, 0), 2);
	ax_expect_empty(fd);

	/* exact counts while head and tail wrap round the ring many times */
	for (unsigned int round = 0, done = 0; done < 4 * nr; round++) {
		unsigned int k = 1 + round % 8, left = k;

		ax_submit(ctx, k, ptrs);
		ax_expect_avail(fd, ctx, k);
		while (left) {
			unsigned int r = 1 + (round + left) % left;

			CHECK_EQ(ax_reap(ctx, r, r, ev, 0), r);
			left -= r;
			if (left)
				ax_expect_avail(fd, ctx, left);
		}
		ax_expect_empty(fd);
		done += k;
	}

	CHECK_SYS(close(fd));
	CHECK_SYS(close(file));
	ax_destroy(ctx);
	return PT_PASS;
}
