// SPDX-License-Identifier: MIT
/*
 * Ending a multishot read (IORING_OP_READ_MULTISHOT) of a pollfs object:
 * - IORING_OP_ASYNC_CANCEL ends it with ECANCELED (no F_MORE), and the
 *   records that come after are left to read(2): a periodic timer's
 *   expirations, a watched futex object's wake;
 * - close(2) of the object's only descriptor with a multishot read
 *   pending does not end it: the request holds the file, so the timer
 *   goes on firing into it and FUTEX_WAKE still counts the futex object;
 *   once the request is cancelled the object is gone (FUTEX_WAKE counts
 *   nobody);
 * - the ring's teardown with a request pending frees the object too.
 * Linux 6.7 and later; skips where io_uring has no such op.
 */
#include "lib/futex.h"
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

TEST(cancel)
{
	static uint32_t word;
	struct pollfs_timer_event ev;
	struct pollfs_futex_event fev;
	int tfd = tmr_new(POLLFS_NONBLOCK), ffd = fx_new(POLLFS_NONBLOCK);
	struct ms_bufs b;
	struct ms_cqe c;
	int i;

	setup();
	ms_bufs_init(&b, 1, 8, TMR_EVENT_SIZE, true);
	tmr_arm(tfd, CLOCK_MONOTONIC, 0, MS(20), MS(20));
	ms_read(READ_TAG, tfd, b.bgid);
	for (i = 0; i < 2; i++) {
		ms_expect_data(&b, READ_TAG, TMR_EVENT_SIZE, 2000, &c);
		ms_bufs_give(&b, c.bid);
	}
	ms_cancel_end(&b, READ_TAG, CANCEL_TAG, TMR_EVENT_SIZE);
	ms_none(100);			/* five periods: nothing */
	tmr_read_event(tfd, &ev);	/* they are the timer's to read */
	CHECK(ev.expirations >= 1);
	CHECK_SYS(close(tfd));
	ms_bufs_free(&b);

	ms_bufs_init(&b, 2, 8, FX_REC, true);
	fx_arm(ffd, &word, 0, FX_WATCH);
	ms_read(READ_TAG, ffd, b.bgid);
	ms_none(50);
	CHECK_EQ(ms_cancel_end(&b, READ_TAG, CANCEL_TAG, FX_REC), 0);
	word = 1;
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);	/* still watched */
	ms_none(50);
	CHECK_EQ(read(ffd, &fev, sizeof(fev)), FX_REC);
	fx_check_rec(&fev, &word, 1, FX_WATCH);
	CHECK_SYS(close(ffd));
	ms_bufs_free(&b);
}

TEST(close_pending)
{
	static uint32_t word;
	const struct pollfs_futex_event *fev;
	struct ms_bufs b, tb;
	struct ms_cqe c;
	int ffd = fx_new(POLLFS_NONBLOCK), tfd = tmr_new(POLLFS_NONBLOCK);
	int i;

	setup();
	/* futex: closed, still a waiter while the request holds it */
	ms_bufs_init(&b, 2, 4, FX_REC, true);
	fx_arm(ffd, &word, 0, FX_WATCH);
	ms_read(READ_TAG, ffd, b.bgid);
	ms_none(50);
	CHECK_SYS(close(ffd));
	for (i = 1; i <= 3; i++) {
		word = i;
		CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
		fev = ms_expect_data(&b, READ_TAG, FX_REC, 2000, &c);
		fx_check_rec(fev, &word, i, FX_WATCH);
		ms_bufs_give(&b, c.bid);
	}
	CHECK_EQ(ms_cancel_end(&b, READ_TAG, CANCEL_TAG, FX_REC), 0);
	/* the last reference went with the request */
	word = 9;
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 0);
	ms_bufs_free(&b);

	/* a periodic timer, closed: it fires on into the request */
	ms_bufs_init(&tb, 3, 4, TMR_EVENT_SIZE, true);
	tmr_arm(tfd, CLOCK_MONOTONIC, 0, MS(20), MS(20));
	ms_read(READ_TAG, tfd, tb.bgid);
	CHECK_SYS(close(tfd));
	for (i = 0; i < 3; i++) {
		ms_expect_data(&tb, READ_TAG, TMR_EVENT_SIZE, 2000, &c);
		ms_bufs_give(&tb, c.bid);
	}
	ms_cancel_end(&tb, READ_TAG, CANCEL_TAG, TMR_EVENT_SIZE);
	ms_none(100);
	ms_bufs_free(&tb);
}

/* The ring torn down with a multishot read pending on a futex object. */
TEST(ring_teardown)
{
	static uint32_t word;
	struct ms_bufs b;
	struct ms_cqe c;
	int fd = fx_new(POLLFS_NONBLOCK), i;

	setup();
	ms_bufs_init(&b, 1, 4, FX_REC, true);
	fx_arm(fd, &word, 0, FX_WATCH);
	ms_read(READ_TAG, fd, b.bgid);
	word = 1;
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	ms_expect_data(&b, READ_TAG, FX_REC, 2000, &c);
	CHECK_SYS(close(fd));
	io_uring_queue_exit(&ut_ring);
	/* the ring goes in a worker: its requests, then the object */
	for (i = 0; i < 200; i++) {
		word++;
		if (fx_wake(&word, 1, FX_PRIVATE) == 0)
			return;
		pt_sleep_ms(10);
	}
	FAIL("FUTEX_WAKE still counts the object 2 s after the ring's end");
}

int main(void)
{
	return pt_run_tests();
}
