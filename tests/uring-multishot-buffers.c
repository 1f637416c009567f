// SPDX-License-Identifier: MIT
/*
 * The provided buffers of a multishot read (IORING_OP_READ_MULTISHOT) of
 * a pollfs object:
 * - a buffer smaller than one record: the read fails with EINVAL, as
 *   read(2) does with such a buffer, whether a record is ready or not,
 *   and that ends the request at once; nothing is consumed, and read(2)
 *   then gets the record;
 * - the buffer ring running dry: io_uring takes a buffer before it reads
 *   the object, and reads again at once while records are ready, so
 *   ready records fill every buffer left, one completion each; the read
 *   that then finds no buffer ends the request with ENOBUFS (no F_MORE)
 *   without reading, and the record stays in the object.  With no record
 *   ready a dry request waits: a buffer given back before the next
 *   record lets it go on; the next record with none given back ends it
 *   with ENOBUFS.  A new request, once buffers are back, goes on from the
 *   record left: every record once, in order, none lost or repeated (a
 *   signal object's sequence numbers, a watched futex object's values).
 * Linux 6.7 and later; skips where io_uring has no such op.
 */
#include "lib/futex.h"
#include "lib/signal.h"
#include "lib/timer.h"
#include "lib/mshot.h"

PT_BUDGET(60);

enum { READ_TAG = 1, CANCEL_TAG };

/* Every behaviour runs in a process of its own, with a ring of its own. */
static void setup(void)
{
	ut_init();
	ms_require();
}

/* A timer's record in buffers one byte short, the record ready. */
TEST(small_buffer_ready)
{
	struct pollfs_timer_event ev;
	struct ms_bufs b;
	struct ms_cqe c;
	int fd = tmr_new(POLLFS_NONBLOCK);

	setup();
	ms_bufs_init(&b, 1, 2, TMR_EVENT_SIZE - 1, true);
	tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(5), 0);
	pt_wait_readable(fd, 2000);
	ms_read(READ_TAG, fd, b.bgid);
	ms_next(&c, 1000);
	ms_expect_end(&c, READ_TAG, -EINVAL);
	CHECK_EQ(c.bid, -1);		/* no buffer consumed */
	tmr_read_event(fd, &ev);	/* the expiration is still there */
	tmr_check_oneshot(&ev);
	CHECK_SYS(close(fd));
	ms_bufs_free(&b);
}

/* A watched futex object's record in buffers one byte short, armed and
 * not woken: the request ends at once all the same. */
TEST(small_buffer_waiting)
{
	static uint32_t word;
	struct pollfs_futex_event fev;
	struct ms_bufs b;
	struct ms_cqe c;
	int fd = fx_new(POLLFS_NONBLOCK);

	setup();
	ms_bufs_init(&b, 2, 2, FX_REC - 1, true);
	fx_arm(fd, &word, 0, FX_WATCH);
	ms_read(READ_TAG, fd, b.bgid);
	ms_next(&c, 1000);
	ms_expect_end(&c, READ_TAG, -EINVAL);
	CHECK_EQ(c.bid, -1);
	word = 1;
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);	/* still armed */
	CHECK_EQ(read(fd, &fev, sizeof(fev)), FX_REC);
	fx_check_rec(&fev, &word, 1, FX_WATCH);
	CHECK_SYS(close(fd));
	ms_bufs_free(&b);
}

/*
 * Signals, one record per buffer, a ring of four: the records of
 * sequence numbers next.. must come now, exactly @n completions, then
 * (if @dry) the end with ENOBUFS.  Returns the next sequence number.
 */
static int expect_run(const struct ms_bufs *b, int sig, int next, int n,
		      bool dry)
{
	const struct pollfs_siginfo *psi;
	struct ms_cqe c;
	int i;

	for (i = 0; i < n; i++) {
		psi = ms_expect_data(b, READ_TAG, SIGINFO_SIZE, 2000, &c);
		CHECK_EQ(c.res, SIGINFO_SIZE);
		ps_check_sig(psi, sig, SI_QUEUE);
		CHECK_EQ(psi->psi_int, next++);
	}
	if (dry) {
		ms_next(&c, 2000);
		ms_expect_end(&c, READ_TAG, -ENOBUFS);
	}
	return next;
}

TEST(dry_signal)
{
	int sig = SIGRTMIN + 1, fd, next = 0, queued = 0, i;
	struct ms_bufs b;

	setup();
	ps_block(ps_bit(sig));
	fd = ps_signal(ps_bit(sig), POLLFS_NONBLOCK);
	ms_bufs_init(&b, 3, 4, SIGINFO_SIZE, true);
	ms_read(READ_TAG, fd, b.bgid);
	ms_none(50);
	/* one signal at a time: the four buffers take four, none back */
	for (i = 0; i < 4; i++) {
		ps_queue_int(getpid(), sig, queued++);
		next = expect_run(&b, sig, next, 1, false);
	}
	/* dry, nothing ready: the request waits */
	ms_none(100);
	/* the fifth finds no buffer: the request ends, the signal stays */
	ps_queue_int(getpid(), sig, queued++);
	next = expect_run(&b, sig, next, 0, true);
	CHECK(ps_pending(sig));
	/* more while no request reads: six waiting in all */
	for (i = 0; i < 5; i++)
		ps_queue_int(getpid(), sig, queued++);
	/* two buffers back, a new request: two records at once, dry again */
	ms_bufs_give(&b, 0);
	ms_bufs_give(&b, 1);
	ms_read(READ_TAG, fd, b.bgid);
	next = expect_run(&b, sig, next, 2, true);
	/* four back: four at once (none given back meanwhile), dry again */
	for (i = 0; i < 4; i++)
		ms_bufs_give(&b, i);
	ms_read(READ_TAG, fd, b.bgid);
	next = expect_run(&b, sig, next, 4, false);
	ms_none(100);			/* dry and nothing ready: waiting */
	/* a buffer back while it waits: the next record goes in it */
	ms_bufs_give(&b, 2);
	ps_queue_int(getpid(), sig, queued++);
	next = expect_run(&b, sig, next, 1, false);
	CHECK_EQ(next, queued);
	CHECK(!ps_pending(sig));
	/* and the one after, with none back, ends it, kept */
	ps_queue_int(getpid(), sig, queued++);
	next = expect_run(&b, sig, next, 0, true);
	/* read(2) gets it: every signal once, in order */
	{
		struct pollfs_siginfo psi[4];

		CHECK_EQ(ps_read_n(fd, psi, 4), 1);
		CHECK_EQ(psi[0].psi_int, next);
	}
	CHECK(!ps_pending(sig));
	ms_none(50);
	CHECK_SYS(close(fd));
	ps_unblock(ps_bit(sig));
	ms_bufs_free(&b);
}

/*
 * A watched futex object: two buffers, none given back until the ring
 * runs dry; the word's value at each read comes back, and the wake that
 * finds no buffer is kept: the next request reads the value it left.
 */
TEST(dry_futex)
{
	const struct pollfs_futex_event *ev;
	static uint32_t word;
	struct pollfs_futex_event fev;
	struct ms_bufs b;
	struct ms_cqe c;
	int fd = fx_new(POLLFS_NONBLOCK), i, round;

	setup();
	ms_bufs_init(&b, 4, 2, FX_REC, true);
	fx_arm(fd, &word, 0, FX_WATCH);
	for (round = 0; round < 3; round++) {
		ms_read(READ_TAG, fd, b.bgid);
		for (i = 0; i < 2; i++) {
			__atomic_add_fetch(&word, 1, __ATOMIC_RELEASE);
			CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
			ev = ms_expect_data(&b, READ_TAG, FX_REC, 2000, &c);
			CHECK_EQ(c.res, FX_REC);
			fx_check_rec(ev, &word, word, FX_WATCH);
		}
		/* dry: the object is armed again, the request waits */
		ms_none(50);
		__atomic_add_fetch(&word, 1, __ATOMIC_RELEASE);
		CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
		ms_next(&c, 2000);
		ms_expect_end(&c, READ_TAG, -ENOBUFS);
		/* that wake's record waits in the object */
		fx_expect_ready(fd);
		ms_bufs_give(&b, 0);
		ms_bufs_give(&b, 1);
		ms_read(READ_TAG, fd, b.bgid);
		ev = ms_expect_data(&b, READ_TAG, FX_REC, 2000, &c);
		fx_check_rec(ev, &word, word, FX_WATCH);
		ms_bufs_give(&b, c.bid);
		CHECK_EQ(ms_cancel_end(&b, READ_TAG, CANCEL_TAG, FX_REC), 0);
		/* nothing left over: each wake came back once */
		CHECK_ERR(read(fd, &fev, sizeof(fev)), EAGAIN);
	}
	CHECK_SYS(close(fd));
	ms_bufs_free(&b);
}

int main(void)
{
	return pt_run_tests();
}
