// SPDX-License-Identifier: MIT
/*
 * The disarm record (1.1): a write of exactly one record of all zeros
 * (addr 0, val 0, flags 0) returns 16 and disarms the object, whatever
 * it was: armed (plain, watched, a wait-any set, private or shared) or
 * woken with records not yet read (they are dropped).  Afterwards no
 * FUTEX_WAKE counts it, poll shows no POLLIN, a read gives EINVAL
 * (unarmed), and a write arms it again as new.  Disarming an unarmed
 * object (new, or after a read) returns 16 too.  The write is one
 * record also with a few bytes more than 16 (the record I/O rule).
 * Not a disarm: a record with addr 0 but another field set (EFAULT, as
 * any record on an unmapped word), or an all-zero record among two or
 * more (addr 0: EFAULT, nothing armed).  Each way of being armed, and
 * each of the rest, is a TEST with objects of its own.
 */
#include "lib/futex.h"

#include <sys/mman.h>

PT_BUDGET(50);

static uint32_t w[4] = { 1, 2, 3, 4 };
static uint32_t *shm;
static const struct pollfs_futex_event zero;

static void disarmed(int fd)
{
	fx_expect_unarmed(fd);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(fx_wake(&w[i], INT_MAX, FX_PRIVATE), 0);
		CHECK_EQ(fx_wake(&w[i], INT_MAX, FX_SHARED), 0);
	}
	CHECK_EQ(fx_wake(&shm[3], INT_MAX, FX_SHARED), 0);
	CHECK_EQ(fx_revents(fd, 20), 0);
	fx_expect_unarmed(fd);
}

/* Arms fd one way (how), leaving it woken or not. */
static void arm_some_way(int fd, int how)
{
	struct pollfs_futex_event evs[3];

	switch (how) {
	case 0:
		fx_arm(fd, &w[0], 1, FX_PRIVATE);
		break;
	case 1:
		fx_arm(fd, &w[0], 1, FX_PRIVATE | FX_WATCH);
		break;
	case 2:
		fx_arm(fd, &shm[3], shm[3], FX_SHARED | FX_WATCH);
		break;
	case 3:
		fx_arm(fd, &w[1], 2, FX_SHARED);
		CHECK_EQ(fx_wake(&w[1], 1, FX_SHARED), 1);	/* woken */
		fx_expect_ready(fd);
		break;
	case 4:
		fx_arm(fd, &w[1], 2, FX_PRIVATE | FX_WATCH);
		CHECK_EQ(fx_wake(&w[1], 1, FX_PRIVATE), 1);	/* woken */
		fx_expect_ready(fd);
		break;
	case 5:
		for (int i = 0; i < 3; i++)
			evs[i] = fx_ev(&w[i], w[i], FX_PRIVATE);
		fx_armv(fd, evs, 3);
		CHECK_EQ(fx_wake(&w[2], 1, FX_PRIVATE), 1);
		CHECK_EQ(fx_wake(&w[0], 1, FX_PRIVATE), 1);
		break;
	case 6:
		for (int i = 0; i < 3; i++)
			evs[i] = fx_ev(&w[i], w[i], FX_PRIVATE | FX_WATCH);
		fx_armv(fd, evs, 3);
		CHECK_EQ(fx_wake(&w[1], 1, FX_PRIVATE), 1);	/* one woken */
		break;
	case 7:
		for (int i = 0; i < 3; i++)
			evs[i] = fx_ev(&w[i], w[i], FX_SHARED | FX_WATCH);
		fx_armv(fd, evs, 3);	/* none woken */
		break;
	default:
		fx_arm(fd, &w[3], 4, FX_PRIVATE | FX_WATCH);	/* read once */
		CHECK_EQ(fx_wake(&w[3], 1, FX_PRIVATE), 1);
		fx_expect_watch(fd, &w[3], 4, FX_PRIVATE | FX_WATCH);
		break;
	}
}

/* The object of each TEST, and a blocking one: no read may sleep there. */
static int fd, bfd;

static void objects(void)
{
	fd = fx_new(POLLFS_NONBLOCK);
	bfd = fx_new(0);
}

/* Disarming after fd and bfd were armed the given way. */
static void disarm_after(int how)
{
	char more[FX_REC + 9];

	objects();
	arm_some_way(fd, how);
	CHECK_EQ(write(fd, &zero, sizeof(zero)), FX_REC);
	disarmed(fd);
	/* twice is fine */
	fx_disarm(fd);
	disarmed(fd);

	arm_some_way(bfd, how);
	fx_disarm(bfd);
	disarmed(bfd);

	/* one record and a few bytes more: still one record */
	arm_some_way(fd, how);
	memset(more, 0, sizeof(more));
	more[FX_REC] = 0x5a;
	CHECK_EQ(write(fd, more, sizeof(more)), FX_REC);
	disarmed(fd);
}

/* A new object: 16, still unarmed. */
TEST(new_object)
{
	objects();
	CHECK_EQ(write(fd, &zero, sizeof(zero)), FX_REC);
	disarmed(fd);
	CHECK_EQ(write(bfd, &zero, sizeof(zero)), FX_REC);
	disarmed(bfd);
}

TEST(armed_private)
{
	disarm_after(0);
}

TEST(watched_private)
{
	disarm_after(1);
}

TEST(watched_shared)
{
	disarm_after(2);
}

TEST(woken_shared_record_unread)
{
	disarm_after(3);
}

TEST(woken_watched_record_unread)
{
	disarm_after(4);
}

TEST(waitany_two_woken)
{
	disarm_after(5);
}

TEST(watched_waitany_one_woken)
{
	disarm_after(6);
}

TEST(watched_shared_waitany_none_woken)
{
	disarm_after(7);
}

TEST(watched_after_a_read)
{
	disarm_after(8);
}

/* Armed again after a disarm: as new. */
TEST(armed_again_after_a_disarm)
{
	objects();
	fx_arm(fd, &w[2], 3, FX_PRIVATE);
	fx_disarm(fd);
	disarmed(fd);
	fx_arm(fd, &w[2], 3, FX_PRIVATE | FX_WATCH);
	CHECK_EQ(fx_wake(&w[2], INT_MAX, FX_PRIVATE), 1);
	fx_expect_watch(fd, &w[2], 3, FX_PRIVATE | FX_WATCH);
	fx_disarm(fd);
	disarmed(fd);
}

/* addr 0 with another field set: an arm on an unmapped word. */
TEST(addr_zero_with_a_field_set_is_not_a_disarm)
{
	const struct pollfs_futex_event near[] = {
		fx_ev(NULL, 1, 0),
		fx_ev(NULL, 0, FX_SHARED),
		fx_ev(NULL, 0, FX_WATCH),
		fx_ev(NULL, 0, FX_SHARED | FX_WATCH),
	};
	struct pollfs_futex_event ev;

	objects();
	for (size_t i = 0; i < sizeof(near) / sizeof(near[0]); i++) {
		fx_arm(fd, &w[0], 1, FX_PRIVATE);
		CHECK_ERR(write(fd, &near[i], sizeof(near[i])), EFAULT);
		disarmed(fd);
	}
	/* an unknown flag with addr 0: EINVAL, not a disarm */
	fx_arm(fd, &w[0], 1, FX_PRIVATE);
	ev = fx_ev(NULL, 0, 0x4);
	CHECK_ERR(write(fd, &ev, sizeof(ev)), EINVAL);
	disarmed(fd);
}

/* An all-zero record among two or three: EFAULT, nothing armed. */
TEST(zero_record_among_several_is_not_a_disarm)
{
	struct pollfs_futex_event evs[3];

	objects();
	for (int at = 0; at < 3; at++) {
		for (int k = 2; k <= 3; k++) {
			if (at >= k)
				continue;
			for (int i = 0; i < k; i++)
				evs[i] = fx_ev(&w[i], w[i], FX_PRIVATE);
			evs[at] = zero;
			fx_arm(fd, &w[3], 4, FX_PRIVATE);
			CHECK_ERR(write(fd, evs, (size_t)k * FX_REC), EFAULT);
			disarmed(fd);
		}
	}
	/* two all-zero records: not a disarm either */
	evs[0] = zero;
	evs[1] = zero;
	fx_arm(fd, &w[3], 4, FX_PRIVATE | FX_WATCH);
	CHECK_ERR(write(fd, evs, 2 * FX_REC), EFAULT);
	disarmed(fd);
}

int main(void)
{
	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	shm[3] = 33;
	return pt_run_tests();
}
