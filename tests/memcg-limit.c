// SPDX-License-Identifier: MIT
/*
 * The memory of a process's objects is charged to its memory cgroup: in
 * a cgroup with memory.max at 8 MB, creating objects ends with the ioctl
 * failing with ENOMEM (or EMFILE, were the descriptor limit first: it is
 * raised so that memory is the limit), and nothing crashes or hangs.
 *
 * A child runs in a new cgroup "pollfs-memcg-N" (lib/memcg.h: the
 * cgroup2 hierarchy mounted when none is, as in the guest).  The OOM
 * killer spares the child (oom_score_adj -1000): at the limit, the
 * cgroup's OOM kill finds no victim and the charge fails, so the
 * allocation fails and the ioctl returns ENOMEM.  The child touches
 * no new memory of its own near the limit (its stack is faulted in
 * first; it reports through a page the parent mapped), since a page
 * fault that cannot be charged would only retry.
 *
 * Checked, in the child:
 *  - 100 futex objects armed with 128 records each (pollfs allocates
 *    ~18 KB of wait entries for each, GFP_KERNEL_ACCOUNT) move
 *    memory.current by at least 100 x 128 x 64 bytes (800 KB, well above
 *    the per-CPU charge batches): the object memory is charged at all;
 *    and at most 64 KB per object: plausibly;
 *  - then objects of every kind (tests/lib/kinds.c), round-robin, until
 *    an ioctl fails:
 *    it fails with ENOMEM, memory.current is near memory.max, and
 *    memory.events counts "max" events;
 * and in the parent: after the child exits, memory.current falls back
 * (the charges went with the objects), the cgroup can be removed, and
 * the parent, outside it, still creates and uses objects of every kind.
 */
#include "lib/futex.h"
#include "lib/kinds.h"
#include "lib/memcg.h"

#include <sys/mman.h>

PT_BUDGET(55);

#define LIMIT		(8L << 20)
#define NARMED		100
#define NREC		POLLFS_FUTEX_WAITV_MAX

struct report {
	long before, after_armed, at_fail, created;
	int fail_errno, kind_failed;
	char msg[256];
};

static struct report *rep;
static uint32_t words[NREC];

/* The child, in the cgroup. */
static int child(void *arg)
{
	struct pollfs_futex_event ev[NREC];
	volatile char stack[256 << 10];
	int dev, fd;
	long n = 0;

	(void)arg;
	/* the stack, faulted in while still outside the limit's reach */
	for (size_t i = 0; i < sizeof(stack); i += 4096)
		stack[i] = 1;
	pt_kinds_prepare();
	dev = pt_dev();
	for (int i = 0; i < NREC; i++)
		ev[i] = fx_ev(&words[i], words[i], FX_PRIVATE);

	rep->before = pt_memcg_read("memory.current", NULL);
	for (int i = 0; i < NARMED; i++) {
		fd = ioctl(dev, POLLFS_IOC_FUTEX,
			   &(struct pollfs_open){ 0, 0 });
		if (fd < 0)
			FAIL("futex object %d: %s", i, strerror(errno));
		fx_armv(fd, ev, NREC);
	}
	rep->after_armed = pt_memcg_read("memory.current", NULL);

	for (;;) {
		int k = (int)(n % pt_nkinds);
		int r = pt_kind_try(&pt_kinds[k], dev, 0);

		if (r >= 0)
			fd = r;
		if (r < 0) {
			rep->fail_errno = errno;
			rep->kind_failed = k;
			break;
		}
		n++;
		if (n > 2000000) {
			snprintf(rep->msg, sizeof(rep->msg),
				 "2,000,000 objects and no failure");
			break;
		}
	}
	rep->created = n;
	/* room to open memory.current: the last objects go */
	for (int i = 1; i <= 64 && fd - i > dev; i++)
		close(fd - i);
	rep->at_fail = pt_memcg_read("memory.current", NULL);
	return PT_PASS;
}

int main(void)
{
	long cur_after, events_max;

	pt_memcg_create("memcg", LIMIT);
	rep = mmap(NULL, sizeof(*rep), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(rep != MAP_FAILED);
	memset(rep, 0, sizeof(*rep));
	for (int i = 0; i < NREC; i++)
		words[i] = (uint32_t)i;
	pt_memcg_run(child, NULL);
	if (rep->msg[0])
		FAIL("%s", rep->msg);

	pt_diag("memory.current: %ld before, %ld with %d futex objects armed "
		"with %d records each (%+ld, %ld per object)", rep->before,
		rep->after_armed, NARMED, NREC,
		rep->after_armed - rep->before,
		(rep->after_armed - rep->before) / NARMED);
	pt_diag("%ld more objects, then the ioctl (%s) failed with "
		"errno %d (%s) at memory.current %ld of %ld", rep->created,
		pt_kinds[rep->kind_failed].name, rep->fail_errno, strerror(rep->fail_errno),
		rep->at_fail, LIMIT);
	CHECK(rep->before >= 0 && rep->after_armed >= 0);
	if (rep->after_armed - rep->before < (long)NARMED * NREC * 64)
		FAIL("arming %d x %d records moved memory.current by %ld bytes "
		     "only: the objects' memory is not charged", NARMED, NREC,
		     rep->after_armed - rep->before);
	if (rep->after_armed - rep->before > (long)NARMED * (64 << 10))
		FAIL("arming moved memory.current by %ld bytes: more than "
		     "64 KB per object", rep->after_armed - rep->before);
	CHECK_EQ(rep->fail_errno, ENOMEM);
	CHECK(rep->created > 0);
	CHECK(rep->at_fail > LIMIT - (1L << 20));
	events_max = pt_memcg_read("memory.events", "max ");
	pt_diag("memory.events max %ld", events_max);
	CHECK(events_max > 0);

	/* the charges left with the objects */
	for (int64_t end = pt_mono() + 5 * NSEC_PER_SEC;;) {
		cur_after = pt_memcg_read("memory.current", NULL);
		if (cur_after < (2L << 20))
			break;
		if (pt_mono() > end)
			FAIL("memory.current %ld after the child's exit",
			     cur_after);
		pt_sleep_ms(20);
	}
	pt_diag("memory.current %ld after the child's exit", cur_after);
	pt_memcg_remove();

	/* nothing else broke: the parent makes and uses one of each */
	{
		int dev = pt_dev();

		pt_kinds_prepare();
		pt_for_each_kind(k) {
			int fd = pt_kind_new(k, dev, 0);

			pt_kind_use(k, fd);
			CHECK_SYS(close(fd));
		}
		CHECK_SYS(close(dev));
	}
	return PT_PASS;
}
