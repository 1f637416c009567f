// SPDX-License-Identifier: MIT
/*
 * Private and shared are different futexes, as for FUTEX_WAIT: an object
 * armed private is not counted by a shared FUTEX_WAKE of its word, nor
 * one armed shared by a private wake, on private anonymous memory, on
 * shared anonymous memory and on a shared file mapping.  Two objects on
 * one word, one of each kind, are each woken by their own kind only.
 */
#include "lib/futex.h"

#include <sys/mman.h>

PT_BUDGET(50);

static void run(uint32_t *w, const char *what)
{
	int fp = fx_new(POLLFS_NONBLOCK), fs = fx_new(POLLFS_NONBLOCK);

	pt_diag("%s", what);
	/* private object, shared wake */
	fx_arm(fp, w, *w, FX_PRIVATE);
	CHECK_EQ(fx_wake(w, INT_MAX, FX_SHARED), 0);
	fx_expect_armed(fp);
	CHECK_EQ(fx_wake(w, INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(fp, w, *w, FX_PRIVATE);

	/* shared object, private wake */
	fx_arm(fs, w, *w, FX_SHARED);
	CHECK_EQ(fx_wake(w, INT_MAX, FX_PRIVATE), 0);
	fx_expect_armed(fs);
	CHECK_EQ(fx_wake(w, INT_MAX, FX_SHARED), 1);
	fx_expect_rec(fs, w, *w, FX_SHARED);

	/* one of each on the word */
	fx_arm(fp, w, *w, FX_PRIVATE);
	fx_arm(fs, w, *w, FX_SHARED);
	CHECK_EQ(fx_wake(w, INT_MAX, FX_PRIVATE), 1);
	fx_expect_ready(fp);
	fx_expect_armed(fs);
	CHECK_EQ(fx_wake(w, INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(w, INT_MAX, FX_SHARED), 1);
	fx_expect_rec(fp, w, *w, FX_PRIVATE);
	fx_expect_rec(fs, w, *w, FX_SHARED);
	CHECK_EQ(fx_wake(w, INT_MAX, FX_SHARED), 0);

	/* and a wait-any with both kinds on one word */
	{
		struct pollfs_futex_event evs[2] = {
			fx_ev(w, *w, FX_PRIVATE), fx_ev(w, *w, FX_SHARED)
		};

		fx_armv(fp, evs, 2);
		CHECK_EQ(fx_wake(w, INT_MAX, FX_SHARED), 1);
		fx_expect_rec(fp, w, *w, FX_SHARED);
		CHECK_EQ(fx_wake(w, INT_MAX, FX_PRIVATE), 0);
	}
	CHECK_SYS(close(fp));
	CHECK_SYS(close(fs));
}

int main(void)
{
	static uint32_t bss_word;
	static uint32_t data_word = 17;	/* in .data */
	char path[] = "/tmp/pollfs-futex-XXXXXX";
	uint32_t *priv, *shm, *fmap;
	int file;

	priv = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(priv != MAP_FAILED && shm != MAP_FAILED);
	file = CHECK_SYS(mkstemp(path));
	CHECK_SYS(unlink(path));
	CHECK_SYS(ftruncate(file, 4096));
	fmap = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
	CHECK(fmap != MAP_FAILED);

	priv[2] = 2;
	shm[3] = 3;
	fmap[4] = 4;
	bss_word = 5;
	run(&bss_word, "private anonymous (bss)");
	run(&data_word, "private, initialised data");
	run(&priv[2], "private anonymous mapping");
	run(&shm[3], "shared anonymous mapping");
	run(&fmap[4], "shared file mapping");
	CHECK_SYS(close(file));
	return PT_PASS;
}
