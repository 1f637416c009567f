// SPDX-License-Identifier: MIT
/*
 * One IORING_OP_READ_MULTISHOT with a ring of provided buffers streams
 * the records of every kind of tests/lib/kinds.c, one completion per
 * read, the request going on (IORING_CQE_F_MORE) with no new submission:
 * - an object whose read takes its record: each record the kind's way
 *   (kinds.h: the record that readies the object written, then what
 *   makes the record) is one completion, nothing comes between them,
 *   and the request waits on while the object is not readable;
 * - an object whose read takes nothing (kinds.h: read_peeks, AIO): while
 *   the record's making waits unreaped every read gives a record again,
 *   a completion per buffer until the buffers run out, which ends the
 *   request (ENOBUFS); once it is taken, a new request waits.
 * And what only one kind's records do:
 * - a periodic timer: one record per expiration read, the expirations
 *   adding up to what the timer's period gives;
 * - a watched futex object: each FUTEX_WAKE counts the object (the
 *   multishot read re-armed it) and gives one record with the word's
 *   value at the read;
 * - a one-shot futex object: after the wake's record the request waits
 *   (the object is unarmed: io_uring does not read it, though read(2)
 *   would fail with EINVAL); a write that arms the object again makes
 *   the next wake the next completion;
 * - a signal object: every queued signal once, in order, several per
 *   completion when a buffer holds several records.
 * Linux 6.7 and later; skips where io_uring has no such op.
 */
#include "lib/futex.h"
#include "lib/kinds.h"
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

TEST(timer_periodic)
{
	const struct pollfs_timer_event *ev;
	struct ms_bufs b;
	struct ms_cqe c;
	int fd = tmr_new(POLLFS_NONBLOCK), i;
	uint64_t total = 0;
	int64_t start, elapsed;

	setup();
	ms_bufs_init(&b, 1, 4, TMR_EVENT_SIZE, true);
	ms_read(READ_TAG, fd, b.bgid);
	ms_none(100);			/* disarmed: nothing */
	start = pt_mono();
	tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(20), MS(20));
	for (i = 0; i < 12; i++) {
		ev = ms_expect_data(&b, READ_TAG, TMR_EVENT_SIZE, 2000, &c);
		CHECK_EQ(c.res, TMR_EVENT_SIZE);
		CHECK(ev->expirations >= 1);
		CHECK_EQ(pt_ts_ns(&ev->interval), MS(20));
		total += ev->expirations;
		ms_bufs_give(&b, c.bid);
	}
	elapsed = pt_mono() - start;
	/* every expiration up to the last read, none twice */
	CHECK_RANGE(total, 12, elapsed / MS(20));
	ms_cancel_end(&b, READ_TAG, CANCEL_TAG, TMR_EVENT_SIZE);
	tmr_disarm(fd);
	CHECK_SYS(close(fd));
	ms_bufs_free(&b);
}

TEST(futex_watched)
{
	static uint32_t word;
	const struct pollfs_futex_event *ev;
	struct ms_bufs b;
	struct ms_cqe c;
	int fd = fx_new(POLLFS_NONBLOCK), i;

	setup();
	ms_bufs_init(&b, 2, 4, 4 * FX_REC, true);
	fx_arm(fd, &word, 0, FX_WATCH);
	ms_read(READ_TAG, fd, b.bgid);
	ms_none(50);
	for (i = 1; i <= 20; i++) {
		__atomic_store_n(&word, i, __ATOMIC_RELEASE);
		/* the read of the round before armed the object again */
		CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
		ev = ms_expect_data(&b, READ_TAG, FX_REC, 2000, &c);
		CHECK_EQ(c.res, FX_REC);
		fx_check_rec(ev, &word, i, FX_WATCH);
		ms_bufs_give(&b, c.bid);
	}
	ms_none(50);
	CHECK_EQ(ms_cancel_end(&b, READ_TAG, CANCEL_TAG, FX_REC), 0);
	CHECK_SYS(close(fd));
	ms_bufs_free(&b);
}

TEST(futex_oneshot)
{
	static uint32_t word;
	struct pollfs_futex_event fev;
	const struct pollfs_futex_event *ev;
	struct ms_bufs b;
	struct ms_cqe c;
	int fd = fx_new(POLLFS_NONBLOCK);

	setup();
	ms_bufs_init(&b, 5, 4, FX_REC, true);
	fx_arm(fd, &word, 0, 0);
	ms_read(READ_TAG, fd, b.bgid);
	ms_none(50);
	word = 1;
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	ev = ms_expect_data(&b, READ_TAG, FX_REC, 2000, &c);
	CHECK_EQ(c.res, FX_REC);
	fx_check_rec(ev, &word, 0, 0);
	ms_bufs_give(&b, c.bid);
	/* unarmed: the request waits, and read(2) would fail */
	ms_none(100);
	CHECK_ERR(read(fd, &fev, sizeof(fev)), EINVAL);
	/* armed again, by a write: the same request reads the next wake */
	fx_arm(fd, &word, 1, 0);
	ms_none(50);
	word = 2;
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	ev = ms_expect_data(&b, READ_TAG, FX_REC, 2000, &c);
	CHECK_EQ(c.res, FX_REC);
	fx_check_rec(ev, &word, 1, 0);
	ms_bufs_give(&b, c.bid);
	ms_none(50);
	CHECK_EQ(ms_cancel_end(&b, READ_TAG, CANCEL_TAG, FX_REC), 0);
	CHECK_SYS(close(fd));
	ms_bufs_free(&b);
}

TEST(signal_queued)
{
	const struct pollfs_siginfo *psi;
	struct ms_bufs b;
	struct ms_cqe c;
	int sig = SIGRTMIN, fd, i, n, next = 0;

	setup();
	ps_block(ps_bit(sig));
	fd = ps_signal(ps_bit(sig), POLLFS_NONBLOCK);
	/*
	 * Each read takes a buffer of its own, whatever it holds: room for
	 * the burst below, read one signal at a time as they are queued.
	 */
	ms_bufs_init(&b, 3, 16, 4 * SIGINFO_SIZE, true);
	ms_read(READ_TAG, fd, b.bgid);
	ms_none(50);
	/* one at a time, each its own completion */
	for (; next < 5; next++) {
		ps_queue_int(getpid(), sig, next);
		psi = ms_expect_data(&b, READ_TAG, SIGINFO_SIZE, 2000, &c);
		CHECK_EQ(c.res, SIGINFO_SIZE);
		ps_check_sig(psi, sig, SI_QUEUE);
		CHECK_EQ(psi->psi_int, next);
		ms_bufs_give(&b, c.bid);
	}
	/*
	 * Queued together while the read waits: the first completion may
	 * come after the first signal, the rest in one buffer or more.
	 */
	for (i = 5; i < 15; i++)
		ps_queue_int(getpid(), sig, i);
	while (next < 15) {
		psi = ms_expect_data(&b, READ_TAG, SIGINFO_SIZE, 2000, &c);
		for (n = 0; n < c.res / SIGINFO_SIZE; n++, next++) {
			ps_check_sig(&psi[n], sig, SI_QUEUE);
			CHECK_EQ(psi[n].psi_int, next);
		}
		ms_bufs_give(&b, c.bid);
	}
	CHECK_EQ(next, 15);
	ms_none(50);
	CHECK(!ps_pending(sig));
	CHECK_EQ(ms_cancel_end(&b, READ_TAG, CANCEL_TAG, SIGINFO_SIZE), 0);
	CHECK_SYS(close(fd));
	ps_unblock(ps_bit(sig));
	ms_bufs_free(&b);
}

/* Rounds of one record each, for a kind whose read takes it. */
#define ROUNDS	5

static void records_taken(const struct pt_kind *k, int fd)
{
	struct ms_bufs b;
	struct ms_cqe c;
	const void *rec;

	ms_bufs_init(&b, 6, 4, 4 * k->read_size, true);
	/*
	 * Readied first where something else makes the record: the
	 * request's first read is tried at once, and an object not readied
	 * may refuse it (a futex object unarmed: EINVAL), which would end
	 * the request.
	 */
	if (k->fire)
		pt_kind_prime(k, fd);
	ms_read(READ_TAG, fd, b.bgid);
	ms_none(100);			/* nothing ready: nothing */
	for (int i = 0; i < ROUNDS; i++) {
		if (k->fire) {
			/* readied again: still nothing until the record is
			 * made */
			if (i) {
				pt_kind_prime(k, fd);
				ms_none(50);
			}
			k->fire(fd);
		} else {
			pt_kind_prime(k, fd);
		}
		rec = ms_expect_data(&b, READ_TAG, k->read_size, 2000, &c);
		CHECK_EQ(c.res, k->read_size);
		k->expect(rec);
		if (k->take)
			k->take(fd);
		ms_bufs_give(&b, c.bid);
		ms_none(50);
	}
	CHECK_EQ(ms_cancel_end(&b, READ_TAG, CANCEL_TAG, k->read_size), 0);
	ms_bufs_free(&b);
}

static void records_peeked(const struct pt_kind *k, int fd)
{
	struct ms_bufs b;
	struct ms_cqe c;
	const void *rec;
	int i;

	ms_bufs_init(&b, 4, 4, k->read_size, true);
	ms_read(READ_TAG, fd, b.bgid);
	ms_none(100);			/* nothing ready: nothing */
	pt_kind_ready(k, fd);
	/* what the record tells left as it is: each read sees it, one
	 * per buffer */
	for (i = 0; i < 4; i++) {
		rec = ms_expect_data(&b, READ_TAG, k->read_size, 2000, &c);
		CHECK_EQ(c.res, k->read_size);
		k->expect(rec);
	}
	ms_next(&c, 2000);
	ms_expect_end(&c, READ_TAG, -ENOBUFS);
	ms_none(50);
	/* taken: a new multishot read waits */
	if (k->take)
		k->take(fd);
	for (i = 0; i < 4; i++)
		ms_bufs_give(&b, i);
	ms_read(READ_TAG, fd, b.bgid);
	ms_none(100);
	CHECK_EQ(ms_cancel_end(&b, READ_TAG, CANCEL_TAG, k->read_size), 0);
	ms_bufs_free(&b);
}

static void stream(const struct pt_kind *k)
{
	int dev, fd;

	setup();
	pt_kinds_prepare();
	dev = pt_dev();
	fd = pt_kind_new(k, dev, POLLFS_NONBLOCK);
	CHECK_SYS(close(dev));
	if (k->read_peeks)
		records_peeked(k, fd);
	else
		records_taken(k, fd);
	CHECK_SYS(close(fd));
}

int main(void)
{
	pt_for_each_kind(k)
		pt_add_kind_test(k, NULL, stream);
	return pt_run_tests();
}
