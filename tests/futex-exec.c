// SPDX-License-Identifier: MIT
/*
 * exec with armed objects (fds without close-on-exec): the new image
 * holds them safely.  One armed on a private word of the old image stays
 * armed and never fires (no wake of the new address space counts it);
 * one woken before exec still reads its record; one armed on a shared
 * anonymous word is woken by another process that still maps it.  The
 * new image re-arms and closes them.
 */
#include "lib/futex.h"

#include <sys/mman.h>
#include <sys/wait.h>

PT_BUDGET(50);

static uint32_t word_a = 0xa, word_b = 0xb;

struct handoff {
	int fa, fb, fs, pipe_w;
	pid_t helper;
	unsigned long long a, b, s;
};

static int new_image(const struct handoff *h)
{
	struct pollfs_futex_event ev;
	uint32_t own = 0x77;
	int status;

	/* the fds are there, of the right kind */
	const int fds[3] = { h->fa, h->fb, h->fs };

	for (int i = 0; i < 3; i++)
		pt_expect_fd_link(fds[i], "pollfs:[futex]");

	/* armed on the old address space's word: armed, never fires */
	fx_expect_armed(h->fa);
	CHECK_EQ(fx_futex((void *)(uintptr_t)h->a, FUTEX_WAKE_PRIVATE,
			  INT_MAX, 0, NULL, 0), 0);
	CHECK_EQ(fx_revents(h->fa, 100), 0);
	fx_expect_armed(h->fa);

	/* woken before exec: the record is there */
	fx_expect_ready(h->fb);
	memset(&ev, 0, sizeof(ev));
	CHECK_EQ(read(h->fb, &ev, sizeof(ev)), FX_REC);
	fx_check_rec(&ev, (void *)(uintptr_t)h->b, 0xb, FX_PRIVATE);
	fx_expect_unarmed(h->fb);

	/* shared: the helper, which still maps the word, wakes it */
	fx_expect_armed(h->fs);
	if (write(h->pipe_w, "w", 1) != 1)
		FAIL("write(pipe): %s", strerror(errno));
	pt_wait_readable(h->fs, PT_WAIT_MS);
	fx_expect_rec(h->fs, (void *)(uintptr_t)h->s, 0x5, FX_SHARED);
	CHECK_EQ(waitpid(h->helper, &status, 0), h->helper);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 1);	/* its FUTEX_WAKE's count */

	/* re-armed in the new image, they work */
	fx_arm(h->fa, &own, 0x77, FX_PRIVATE);
	CHECK_EQ(fx_wake(&own, INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(h->fa, &own, 0x77, FX_PRIVATE);
	fx_arm(h->fb, &own, 0x77, FX_SHARED);
	CHECK_SYS(close(h->fa));
	CHECK_SYS(close(h->fb));
	CHECK_SYS(close(h->fs));
	CHECK_EQ(fx_wake(&own, INT_MAX, FX_SHARED), 0);
	return PT_PASS;
}

static int old_image(void *unused)
{
	char arg[256];
	struct handoff h;
	uint32_t *shm;
	int p[2];

	(void)unused;
	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	shm[6] = 0x5;
	CHECK_SYS(pipe(p));		/* inherited across exec */

	memset(&h, 0, sizeof(h));
	h.fa = fx_new(0);
	h.fb = fx_new(POLLFS_NONBLOCK);
	h.fs = fx_new(POLLFS_NONBLOCK);
	h.a = (uintptr_t)&word_a;
	h.b = (uintptr_t)&word_b;
	h.s = (uintptr_t)&shm[6];
	fx_arm(h.fa, &word_a, 0xa, FX_PRIVATE);
	fx_arm(h.fb, &word_b, 0xb, FX_PRIVATE);
	CHECK_EQ(fx_wake(&word_b, 1, FX_PRIVATE), 1);
	fx_arm(h.fs, &shm[6], 0x5, FX_SHARED);

	h.helper = fx_fork();
	if (h.helper == 0) {
		char c;

		close(p[1]);
		close(h.fa);
		close(h.fb);
		close(h.fs);
		if (read(p[0], &c, 1) != 1)
			_exit(100);
		_exit((int)fx_futex(&shm[6], FUTEX_WAKE, INT_MAX, 0, NULL,
				    0));
	}
	close(p[0]);
	h.pipe_w = p[1];
	snprintf(arg, sizeof(arg), "%d %d %d %d %d %llx %llx %llx", h.fa, h.fb,
		 h.fs, h.pipe_w, (int)h.helper, h.a, h.b, h.s);
	execl("/proc/self/exe", "futex-exec", "--new-image", arg,
	      (char *)NULL);
	FAIL("exec /proc/self/exe: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--new-image")) {
		struct handoff h;
		int helper;

		if (sscanf(argv[2], "%d %d %d %d %d %llx %llx %llx", &h.fa,
			   &h.fb, &h.fs, &h.pipe_w, &helper, &h.a, &h.b,
			   &h.s) != 8)
			FAIL("bad argument \"%s\"", argv[2]);
		h.helper = helper;
		return new_image(&h);
	}
	CHECK_EQ(pt_run_child(old_image, NULL, 30000), PT_PASS);
	return PT_PASS;
}
