// SPDX-License-Identifier: MIT
/*
 * POLLFS_FUTEX_WATCH (1.1), one record: it arms like any record (one
 * waiter: FUTEX_WAKE returns 1 and the fd becomes readable); a read
 * returns the record with val set to the word's value at the read, and
 * in the same step arms the wait again on that value, so that with no
 * write in between the next FUTEX_WAKE counts the object again and the
 * next read gives the new value, cycle after cycle.  Between the wake
 * and the read the object is woken, not queued: a second FUTEX_WAKE
 * counts nothing, as for a task woken and not yet waiting again.
 * A read buffer smaller than a record gives EINVAL and consumes
 * nothing; a wake of the other kind (private or shared) counts nothing;
 * the object stays armed until a write replaces the wait (then a read
 * disarms it as usual) or the fd is closed (no waiter left behind).
 * Private and shared, on private and MAP_SHARED memory, on blocking and
 * O_NONBLOCK files.
 */
#include "lib/futex.h"

#include <sys/mman.h>

PT_BUDGET(50);

static void cycles(int fd, uint32_t *w, uint32_t flags)
{
	const uint32_t fl = flags | FX_WATCH;
	struct pollfs_futex_event small;

	pt_diag("%s word, %s file", (flags & FX_SHARED) ? "shared" : "private",
		(fcntl(fd, F_GETFL) & O_NONBLOCK) ? "O_NONBLOCK" : "blocking");
	fx_arm(fd, w, *w, fl);
	/* armed, not woken: nothing to read, however long one waits */
	CHECK_EQ(fx_revents(fd, 30), 0);
	fx_expect_armed(fd);
	/* a wake of the other kind is another futex */
	CHECK_EQ(fx_wake(w, INT_MAX, flags ^ FX_SHARED), 0);
	fx_expect_armed(fd);

	for (int i = 0; i < 8; i++) {
		uint32_t before = *w;

		CHECK_EQ(fx_wake(w, 1, flags), 1);
		fx_expect_ready(fd);
		/* woken, not read: not a waiter until the read */
		CHECK_EQ(fx_wake(w, INT_MAX, flags), 0);
		fx_expect_ready(fd);

		/* a buffer too small for a record consumes nothing */
		CHECK_ERR(read(fd, &small, sizeof(small) - 1), EINVAL);
		fx_expect_ready(fd);

		/* the value now, whatever changed it since the arm */
		switch (i % 4) {
		case 0:
			break;		/* unchanged: the same value again */
		case 1:
			*w = before + 1;
			break;
		case 2:
			*w = before + 1000;
			break;
		default:
			*w = before - 3;	/* backwards, or wrapping */
			break;
		}
		fx_expect_watch(fd, w, *w, fl);

		/* armed again on that value: the next wake counts it */
		CHECK_EQ(fx_wake(w, INT_MAX, flags ^ FX_SHARED), 0);
		fx_expect_armed(fd);
	}

	/* a wake of INT_MAX counts it once */
	CHECK_EQ(fx_wake(w, INT_MAX, flags), 1);
	fx_expect_watch(fd, w, *w, fl);

	/* a write replaces the watch: a plain wait, read once, unarmed */
	fx_arm(fd, w, *w, flags);
	CHECK_EQ(fx_wake(w, INT_MAX, flags), 1);
	fx_expect_rec(fd, w, *w, flags);
	fx_expect_unarmed(fd);
	CHECK_EQ(fx_wake(w, INT_MAX, flags), 0);

	/* a watch replaced by a watch on the same word: one waiter */
	fx_arm(fd, w, *w, fl);
	fx_arm(fd, w, *w, fl);
	CHECK_EQ(fx_wake(w, INT_MAX, flags), 1);
	fx_expect_watch(fd, w, *w, fl);
	CHECK_EQ(fx_wake(w, INT_MAX, flags), 1);
	*w += 7;
	fx_expect_watch(fd, w, *w, fl);

	/* still armed; the next cycle's object must be the only waiter */
	fx_disarm(fd);
	CHECK_EQ(fx_wake(w, INT_MAX, flags), 0);
	fx_expect_unarmed(fd);
}

/* Closed while armed, woken or not: no waiter is left on the word. */
static void close_armed(uint32_t *w, uint32_t flags)
{
	int fd = fx_new(POLLFS_NONBLOCK);

	fx_arm(fd, w, *w, flags | FX_WATCH);
	CHECK_EQ(fx_wake(w, 1, flags), 1);
	fx_expect_watch(fd, w, *w, flags | FX_WATCH);
	CHECK_SYS(close(fd));
	CHECK_EQ(fx_wake(w, INT_MAX, flags), 0);

	fd = fx_new(0);
	fx_arm(fd, w, *w, flags | FX_WATCH);
	CHECK_EQ(fx_wake(w, 1, flags), 1);
	CHECK_SYS(close(fd));		/* woken, not read */
	CHECK_EQ(fx_wake(w, INT_MAX, flags), 0);
}

int main(void)
{
	static uint32_t word = 0x4242;
	uint32_t *shm;
	int fd, nb;

	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	shm[9] = 0xfffffffeu;

	fd = fx_new(0);		/* blocking: a woken read must not sleep */
	nb = fx_new(POLLFS_NONBLOCK);
	cycles(fd, &word, FX_PRIVATE);
	cycles(nb, &word, FX_PRIVATE);
	cycles(fd, &word, FX_SHARED);
	cycles(nb, &shm[9], FX_SHARED);
	cycles(fd, &shm[9], FX_PRIVATE);
	close_armed(&word, FX_PRIVATE);
	close_armed(&shm[9], FX_SHARED);

	/* a watch re-armed elsewhere: the old word has no waiter */
	fx_arm(nb, &word, word, FX_PRIVATE | FX_WATCH);
	fx_arm(nb, &shm[9], shm[9], FX_SHARED | FX_WATCH);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
	fx_expect_armed(nb);
	CHECK_EQ(fx_wake(&shm[9], INT_MAX, FX_SHARED), 1);
	fx_expect_watch(nb, &shm[9], shm[9], FX_SHARED | FX_WATCH);

	CHECK_SYS(close(fd));
	CHECK_SYS(close(nb));
	CHECK_SYS(munmap(shm, 4096));
	return PT_PASS;
}
