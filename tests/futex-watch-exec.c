// SPDX-License-Identifier: MIT
/*
 * exec with watched objects (POLLFS_FUTEX_WATCH, 1.1) open (fds without
 * close-on-exec): the new image holds them safely.
 *  - One armed on a private word of the old image stays armed and never
 *    fires: no wake of the new address space counts it.
 *  - One armed shared on MAP_SHARED memory that a helper process still
 *    maps is woken by the helper (its FUTEX_WAKE counts it) and the new
 *    image reads a record of the old address.
 *  - One woken before exec (private) still has its record to read.
 * The page does not say what the re-arm of a read does once the
 * writer's address space is gone; whatever it does must be consistent:
 * the read returns the record (addr and flags as written) or fails with
 * EFAULT, and afterwards the object is armed (a non-blocking read gives
 * EAGAIN, and the helper's next wake counts it) or unarmed (EINVAL, and
 * no wake counts it), never both, never readable twice for one wake.
 * Then the new image arms them all again, watched, on its own words,
 * and they work: wake, read, wake again, disarm, close.
 * Each of the three objects is a TEST of its own: each TEST's child sets
 * up all three and the helper and execs; the new image checks that
 * object, from its state after exec to its re-arm, and closes the others.
 */
#include "lib/futex.h"

#include <sys/mman.h>
#include <sys/wait.h>

PT_BUDGET(50);

static uint32_t word_a = 0xa, word_b = 0xb;

struct handoff {
	int fa, fb, fs, cmd_w, ans_r;
	pid_t helper;
	unsigned long long a, b, s;
};

/* The helper: on 'w', stores v + 1 at the shared word and wakes it,
 * answering the count FUTEX_WAKE returned. */
static void helper_loop(uint32_t *w, int cmd_r, int ans_w)
{
	char c;

	while (read(cmd_r, &c, 1) == 1) {
		long r;

		if (c != 'w')
			_exit(PT_FAIL);
		__atomic_fetch_add(w, 1, __ATOMIC_SEQ_CST);
		r = fx_futex(w, FUTEX_WAKE, INT_MAX, 0, NULL, 0);
		c = (char)(r < 0 ? 'E' : '0' + r);
		if (write(ans_w, &c, 1) != 1)
			_exit(PT_FAIL);
	}
	_exit(PT_PASS);
}

static long helper_wake(const struct handoff *h)
{
	char c = 'w';

	if (write(h->cmd_w, &c, 1) != 1 || read(h->ans_r, &c, 1) != 1)
		FAIL("helper pipe: %s", strerror(errno));
	if (c == 'E')
		FAIL("the helper's FUTEX_WAKE failed");
	return c - '0';
}

/*
 * The state after a read that returned a record or failed: armed and
 * counted by a wake, or unarmed and counted by none.  @wake wakes the
 * word and returns what FUTEX_WAKE returned (NULL: nothing can).
 */
static void consistent(int fd, const char *what, long (*wake)(const void *),
		       const void *arg, uint64_t addr, uint32_t flags)
{
	struct pollfs_futex_event ev[2];
	ssize_t r;

	CHECK_EQ(fx_revents(fd, 0), 0);
	errno = 0;
	r = pt_read_nb(fd, ev, sizeof(ev));
	if (r == -1 && errno == EINVAL) {
		pt_diag("%s: unarmed after the read", what);
		if (wake)
			CHECK_EQ(wake(arg), 0);
		fx_expect_unarmed(fd);
		return;
	}
	if (r != -1 || errno != EAGAIN)
		FAIL("%s: read returned %zd, errno %d (%s): expected EAGAIN "
		     "(armed) or EINVAL (unarmed)", what, r, errno,
		     strerror(errno));
	pt_diag("%s: armed again after the read", what);
	if (!wake)
		return;		/* nothing in this address space wakes it */
	CHECK_EQ(wake(arg), 1);
	pt_wait_readable(fd, PT_WAIT_MS);
	memset(ev, 0, sizeof(ev));
	r = pt_read_nb(fd, ev, sizeof(ev));
	if (r == FX_REC) {
		CHECK_EQ(ev[0].addr, addr);
		CHECK_EQ(ev[0].flags, flags);
	} else if (r != -1 || errno != EFAULT) {
		FAIL("%s: read after the second wake returned %zd, errno %d "
		     "(%s)", what, r, errno, strerror(errno));
	}
}

static long wake_helper(const void *h)
{
	return helper_wake(h);
}

/* One read of a woken object of the old image: a record or EFAULT. */
static void read_old(int fd, const char *what, uint64_t addr, uint32_t flags)
{
	struct pollfs_futex_event ev[2];
	ssize_t r;

	fx_expect_ready(fd);
	memset(ev, 0, sizeof(ev));
	errno = 0;
	r = pt_read_nb(fd, ev, sizeof(ev));
	if (r == FX_REC) {
		pt_diag("%s: record {%#llx, %u, %#x}", what,
			(unsigned long long)ev[0].addr, ev[0].val, ev[0].flags);
		CHECK_EQ(ev[0].addr, addr);
		CHECK_EQ(ev[0].flags, flags);
	} else if (r == -1 && errno == EFAULT) {
		pt_diag("%s: the read failed with EFAULT", what);
	} else {
		FAIL("%s: read returned %zd, errno %d (%s)", what, r, errno,
		     strerror(errno));
	}
}

/*
 * Armed again in the new image, watched, on its own word: it works (wake,
 * read, wake again, disarm).  Leaves *own one past the word it used.
 */
static void rearmed_works(int fd, uint32_t *own, uint32_t fl)
{
	fx_arm(fd, own, *own, fl | FX_WATCH);
	CHECK_EQ(fx_wake(own, 1, fl), 1);
	(*own)++;
	fx_expect_watch(fd, own, *own, fl | FX_WATCH);
	CHECK_EQ(fx_wake(own, 1, fl), 1);
	fx_expect_watch(fd, own, *own, fl | FX_WATCH);
	fx_disarm(fd);
	fx_expect_unarmed(fd);
	CHECK_EQ(fx_wake(own, INT_MAX, fl), 0);
}

/* The old image's private word: armed, never fires. */
static void check_private(const struct handoff *h)
{
	uint32_t own = 0x77;

	fx_expect_armed(h->fa);
	CHECK_EQ(fx_futex((void *)(uintptr_t)h->a, FUTEX_WAKE_PRIVATE,
			  INT_MAX, 0, NULL, 0), 0);
	CHECK_EQ(fx_revents(h->fa, 100), 0);
	fx_expect_armed(h->fa);

	rearmed_works(h->fa, &own, FX_PRIVATE);
	/* armed when closed: no waiter left */
	fx_arm(h->fa, &own, own, FX_PRIVATE | FX_WATCH);
	CHECK_SYS(close(h->fa));
	CHECK_EQ(fx_wake(&own, INT_MAX, FX_PRIVATE), 0);
}

/* Woken before exec: its record is there. */
static void check_woken_before(const struct handoff *h)
{
	uint32_t own = 0x77;

	read_old(h->fb, "woken before exec", h->b, FX_PRIVATE | FX_WATCH);
	consistent(h->fb, "woken before exec", NULL, NULL, h->b,
		   FX_PRIVATE | FX_WATCH);
	rearmed_works(h->fb, &own, FX_PRIVATE);
	CHECK_SYS(close(h->fb));
}

/* Shared: the helper, which still maps the word, wakes it. */
static void check_shared(const struct handoff *h)
{
	uint32_t own = 0x77;

	fx_expect_armed(h->fs);
	CHECK_EQ(helper_wake(h), 1);
	pt_wait_readable(h->fs, PT_WAIT_MS);
	read_old(h->fs, "shared, woken after exec", h->s,
		 FX_SHARED | FX_WATCH);
	consistent(h->fs, "shared, woken after exec", wake_helper, h, h->s,
		   FX_SHARED | FX_WATCH);
	rearmed_works(h->fs, &own, FX_SHARED);
	CHECK_SYS(close(h->fs));
}

/* What the new image checks: one of the three objects. */
enum which { PRIVATE_ARMED, WOKEN_BEFORE, SHARED_HELPER };

static int new_image(const struct handoff *h, int which)
{
	const int fds[3] = { h->fa, h->fb, h->fs };
	int status;

	for (int i = 0; i < 3; i++)
		pt_expect_fd_link(fds[i], "pollfs:[futex]");

	/* the objects this image does not check: fds[] is in enum order */
	for (int i = 0; i < 3; i++)
		if (i != which)
			CHECK_SYS(close(fds[i]));
	switch (which) {
	case PRIVATE_ARMED:
		check_private(h);
		break;
	case WOKEN_BEFORE:
		check_woken_before(h);
		break;
	case SHARED_HELPER:
		check_shared(h);
		break;
	default:
		FAIL("no case %d", which);
	}

	CHECK_SYS(close(h->cmd_w));
	CHECK_EQ(waitpid(h->helper, &status, 0), h->helper);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), PT_PASS);
	return PT_PASS;
}

/* Sets up the three objects and the helper, then execs to check @which. */
static int old_image(void *which)
{
	char arg[256];
	struct handoff h;
	uint32_t *shm;
	int cmd[2], ans[2];

	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	shm[6] = 0x5;
	CHECK_SYS(pipe(cmd));		/* inherited across exec */
	CHECK_SYS(pipe(ans));

	memset(&h, 0, sizeof(h));
	h.fa = fx_new(0);
	h.fb = fx_new(POLLFS_NONBLOCK);
	h.fs = fx_new(POLLFS_NONBLOCK);
	h.a = (uintptr_t)&word_a;
	h.b = (uintptr_t)&word_b;
	h.s = (uintptr_t)&shm[6];
	fx_arm(h.fa, &word_a, 0xa, FX_PRIVATE | FX_WATCH);
	fx_arm(h.fb, &word_b, 0xb, FX_PRIVATE | FX_WATCH);
	CHECK_EQ(fx_wake(&word_b, 1, FX_PRIVATE), 1);
	fx_arm(h.fs, &shm[6], 0x5, FX_SHARED | FX_WATCH);

	h.helper = fx_fork();
	if (h.helper == 0) {
		close(cmd[1]);
		close(ans[0]);
		close(h.fa);
		close(h.fb);
		close(h.fs);
		helper_loop(&shm[6], cmd[0], ans[1]);
	}
	close(cmd[0]);
	close(ans[1]);
	h.cmd_w = cmd[1];
	h.ans_r = ans[0];
	snprintf(arg, sizeof(arg), "%d %d %d %d %d %d %d %llx %llx %llx",
		 (int)(intptr_t)which, h.fa, h.fb, h.fs, h.cmd_w, h.ans_r,
		 (int)h.helper, h.a, h.b, h.s);
	execl("/proc/self/exe", "futex-watch-exec", "--new-image", arg,
	      (char *)NULL);
	FAIL("exec /proc/self/exe: %s", strerror(errno));
}

static void exec_and_check(enum which which)
{
	CHECK_EQ(pt_run_child(old_image, (void *)(intptr_t)which, 30000),
		 PT_PASS);
}

TEST(private_watch_of_the_old_image_never_fires)
{
	exec_and_check(PRIVATE_ARMED);
}

TEST(watch_woken_before_exec_keeps_its_record)
{
	exec_and_check(WOKEN_BEFORE);
}

TEST(shared_watch_woken_by_a_helper_after_exec)
{
	exec_and_check(SHARED_HELPER);
}

int main(int argc, char **argv)
{
	/* the new image of a TEST's exec: checks, before any TEST runs */
	if (argc == 3 && !strcmp(argv[1], "--new-image")) {
		struct handoff h;
		int helper, which;

		if (sscanf(argv[2], "%d %d %d %d %d %d %d %llx %llx %llx",
			   &which, &h.fa, &h.fb, &h.fs, &h.cmd_w, &h.ans_r,
			   &helper, &h.a, &h.b, &h.s) != 10)
			FAIL("bad argument \"%s\"", argv[2]);
		h.helper = helper;
		return new_image(&h, which);
	}
	return pt_run_tests();
}
