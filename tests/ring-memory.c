// SPDX-License-Identifier: MIT
/*
 * What a ring costs, and who pays (contract 1.2, and the module's
 * choices pollfs(7) writes down):
 *  - memcg: the ring's memory is charged to the memory cgroup of the
 *    process that sets it up.  In a cgroup with memory.max at 8 MB
 *    (lib/memcg.h, as memcg-limit's), a child that gives futex
 *    objects rings of 4096 records (64 KB each) moves memory.current by
 *    at least that much per ring, and at the limit POLLFS_IOC_RING (or
 *    the object's creation) fails with ENOMEM; after the child, the
 *    charges are gone;
 *  - memlock: the pages of the words a watched object with a ring waits
 *    on are pinned while it is armed, and count against RLIMIT_MEMLOCK.
 *    As uid 65534 (no CAP_IPC_LOCK) with the limit at 32 pages, objects
 *    watching a word each on pages of their own: the arming write fails
 *    with ENOMEM after at most 32 of them, and works again once a few
 *    are closed; a watched set of 64 words on 64 pages fails whole.
 */
#include "lib/futex.h"
#include "lib/memcg.h"
#include "lib/ring.h"

#include <sys/resource.h>

PT_BUDGET(60);

#define LIMIT		(8L << 20)
#define ENTRIES		4096
#define MEMLOCK_PAGES	32

static long page;

/* ---- memcg ---- */

struct report {
	long before, after, rings, created;
	int fail_errno;
	bool ring_failed;	/* the ioctl failed, not the object */
};

static struct report *rep;

static long memory_current(void)
{
	return pt_memcg_read("memory.current", NULL);
}

/* In the cgroup: rings until something fails. */
static int memcg_child(void *arg)
{
	volatile char stack[256 << 10];
	struct pollfs_ring_params p;
	int dev = pt_dev();

	(void)arg;
	/* faulted in while still far from the limit */
	for (size_t i = 0; i < sizeof(stack); i += 4096)
		stack[i] = 1;
	rep->before = memory_current();
	for (int i = 0; i < 10; i++) {
		int fd = ioctl(dev, POLLFS_IOC_FUTEX,
			       &(struct pollfs_open){ 0, 0 });

		if (fd < 0 || rg_ioctl(fd, ENTRIES, 0, 0, &p))
			FAIL("ring %d, far from the limit: %s", i,
			     strerror(errno));
		rep->rings++;
	}
	rep->after = memory_current();
	for (;;) {
		int fd = ioctl(dev, POLLFS_IOC_FUTEX,
			       &(struct pollfs_open){ 0, 0 });

		if (fd < 0) {
			rep->fail_errno = errno;
			break;
		}
		rep->created++;
		if (rg_ioctl(fd, ENTRIES, 0, 0, &p)) {
			rep->fail_errno = errno;
			rep->ring_failed = true;
			break;
		}
		rep->rings++;
		if (rep->rings > 100000)
			break;
	}
	return PT_PASS;
}

TEST(memcg)
{
	pt_memcg_create("ring-memcg", LIMIT);
	rep = mmap(NULL, sizeof(*rep), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(rep != MAP_FAILED);
	pt_memcg_run(memcg_child, NULL);
	pt_diag("memory.current %ld before 10 rings of %d records, %ld after "
		"(%ld per ring); %ld rings in all, then %s failed with errno "
		"%d (%s)", rep->before, ENTRIES, rep->after,
		(rep->after - rep->before) / 10, rep->rings,
		rep->ring_failed ? "POLLFS_IOC_RING" : "POLLFS_IOC_FUTEX",
		rep->fail_errno, strerror(rep->fail_errno));
	/*
	 * The memory cgroup charges in batches a CPU keeps in stock (64
	 * pages): two CPUs' stocks may have paid for part of the rings.
	 */
	if (rep->after - rep->before < 10L * ENTRIES * RG_FUTEX_REC -
					2 * 64 * 4096L)
		FAIL("10 rings of %d x %d bytes moved memory.current by %ld "
		     "bytes: the rings are not charged", ENTRIES, RG_FUTEX_REC,
		     rep->after - rep->before);
	CHECK_EQ(rep->fail_errno, ENOMEM);
	CHECK(rep->rings <= LIMIT / (ENTRIES * RG_FUTEX_REC));
	/* the child gone, its charges with it */
	for (int64_t end = pt_mono() + MS(PT_WAIT_MS);
	     memory_current() > rep->before + (1L << 20);) {
		if (pt_mono() > end)
			FAIL("memory.current %ld after the child, %ld before",
			     memory_current(), rep->before);
		pt_sleep_ms(20);
	}
	pt_memcg_remove();
}

/* ---- RLIMIT_MEMLOCK ---- */

/* A watched futex object with a ring, armed on @word: write()'s result. */
static ssize_t watch_with_ring(int *fd, uint32_t *word)
{
	struct pollfs_ring_params p;

	*fd = fx_new(0);
	CHECK_SYS(rg_ioctl(*fd, 2, 0, 0, &p));
	return fx_write1(*fd, word, *word, FX_PRIVATE | FX_WATCH);
}

TEST(memlock)
{
	struct rlimit rl = { MEMLOCK_PAGES * page, MEMLOCK_PAGES * page };
	struct pollfs_futex_event set[64];
	char *pages = mmap(NULL, 256 * page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fds[256], armed = 0, fd, again = 0;
	ssize_t r = 0;

	CHECK(pages != MAP_FAILED);
	pt_become_nobody();
	CHECK_SYS(setrlimit(RLIMIT_MEMLOCK, &rl));
	for (armed = 0; armed < 256; armed++) {
		r = watch_with_ring(&fds[armed],
				    (uint32_t *)(pages + armed * page));
		if (r != FX_REC)
			break;
	}
	pt_diag("%d watched words on pages of their own with RLIMIT_MEMLOCK "
		"of %d pages; then write returned %zd, errno %d (%s)", armed,
		MEMLOCK_PAGES, r, errno, strerror(errno));
	CHECK(armed < 256);
	CHECK_EQ(r, -1);
	CHECK_EQ(errno, ENOMEM);
	CHECK_RANGE(armed, 1, MEMLOCK_PAGES);
	close(fds[armed]);
	/* four closed: room for four again */
	for (int i = 0; i < 4 && i < armed; i++)
		CHECK_SYS(close(fds[--armed]));
	for (int i = 0; i < 4; i++) {
		r = watch_with_ring(&fd, (uint32_t *)(pages + (200 + i) * page));
		if (r == FX_REC)
			again++;
		CHECK(r == FX_REC || errno == ENOMEM);
	}
	CHECK(again >= 1);
	/* a set of 64 words on 64 pages: more than the limit, whole */
	for (int i = 0; i < 64; i++)
		set[i] = fx_ev(pages + (128 + i) * page, 0,
			       FX_PRIVATE | FX_WATCH);
	fd = fx_new(0);
	{
		struct pollfs_ring_params p;

		CHECK_SYS(rg_ioctl(fd, 2, 0, 0, &p));
	}
	CHECK_ERR(write(fd, set, sizeof(set)), ENOMEM);
	fx_expect_unarmed(fd);
}

int main(void)
{
	page = sysconf(_SC_PAGESIZE);
	return pt_run_tests();
}
