// SPDX-License-Identifier: MIT
/*
 * IORING_OP_POLL_ADD, one-shot and multishot, reports what poll(2)
 * would (contract 1.1): POLLOUT at once on an object that takes writes,
 * POLLIN when a timer fires or a futex object is woken, one completion
 * per wake-up for a multishot poll; and a pending poll, or a pending
 * read, can be cancelled.
 */
#include "lib/futex.h"
#include "lib/timer.h"
#include "lib/uring.h"

PT_BUDGET(60);

enum { POLL_TAG = 1, READ_TAG, CANCEL_TAG };

static void check_oneshot(void)
{
	int fd = tmr_new(0), res;
	uint64_t tag;

	io_uring_prep_poll_add(ut_sqe(POLL_TAG), fd, POLLOUT);
	ut_submit();
	CHECK_EQ(ut_result(1000), POLLOUT);

	io_uring_prep_poll_add(ut_sqe(POLL_TAG), fd, POLLIN);
	ut_submit();
	if (ut_wait(100, &res, NULL, NULL))
		FAIL("POLLIN on a disarmed timer completed with %#x", res);
	tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(10), 0);
	CHECK_EQ(ut_result(1000), POLLIN);

	/* a pending poll, cancelled */
	tmr_disarm(fd);
	io_uring_prep_poll_add(ut_sqe(POLL_TAG), fd, POLLIN);
	ut_submit();
	io_uring_prep_poll_remove(ut_sqe(CANCEL_TAG), POLL_TAG);
	ut_submit();
	for (int i = 0; i < 2; i++) {
		if (!ut_wait(1000 * pt_time_scale(), &res, &tag, NULL))
			FAIL("poll remove: completion %d missing", i);
		CHECK_EQ(res, tag == POLL_TAG ? -ECANCELED : 0);
	}
	CHECK_SYS(close(fd));
}

static void check_multishot(void)
{
	static uint32_t word;
	struct pollfs_futex_event got;
	unsigned int flags;
	int fd = fx_new(0), res, i;
	uint64_t tag;

	io_uring_prep_poll_multishot(ut_sqe(POLL_TAG), fd, POLLIN);
	ut_submit();
	for (i = 0; i < 3; i++) {
		word = i;
		fx_arm(fd, &word, i, FX_PRIVATE);
		if (ut_wait(50, &res, NULL, NULL))
			FAIL("round %d: POLLIN before the wake (%#x)", i, res);
		CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
		if (!ut_wait(1000 * pt_time_scale(), &res, &tag, &flags))
			FAIL("round %d: no completion for the wake", i);
		CHECK_EQ(tag, POLL_TAG);
		CHECK_EQ(res, POLLIN);
		CHECK(flags & IORING_CQE_F_MORE);
		CHECK_EQ(read(fd, &got, sizeof(got)), FX_REC);
		fx_check_rec(&got, &word, i, FX_PRIVATE);
	}
	io_uring_prep_poll_remove(ut_sqe(CANCEL_TAG), POLL_TAG);
	ut_submit();
	for (i = 0; i < 2; i++) {
		if (!ut_wait(1000 * pt_time_scale(), &res, &tag, &flags))
			FAIL("poll remove: completion %d missing", i);
		CHECK_EQ(res, tag == POLL_TAG ? -ECANCELED : 0);
	}
	CHECK_SYS(close(fd));
}

static void check_cancel_read(void)
{
	struct pollfs_timer_event ev;
	int fd = tmr_new(0), res, i;
	uint64_t tag;

	io_uring_prep_read(ut_sqe(READ_TAG), fd, &ev, sizeof(ev), -1);
	ut_submit();
	if (ut_wait(100, &res, NULL, NULL))
		FAIL("read of a disarmed timer completed with %d", res);
	io_uring_prep_cancel64(ut_sqe(CANCEL_TAG), READ_TAG, 0);
	ut_submit();
	for (i = 0; i < 2; i++) {
		if (!ut_wait(1000 * pt_time_scale(), &res, &tag, NULL))
			FAIL("cancel: completion %d missing", i);
		CHECK_EQ(res, tag == READ_TAG ? -ECANCELED : 0);
	}
	CHECK_SYS(close(fd));
}

int main(void)
{
	ut_init();
	check_oneshot();
	check_multishot();
	check_cancel_read();
	CHECK_EQ(ut_workers(), 0);
	return PT_PASS;
}
