// SPDX-License-Identifier: MIT
/*
 * What POLLFS_IOC_RING and the mapping refuse (contract 1.2, and the
 * module's choices pollfs(7) writes down):
 *  - the request on a signal or AIO object: EOPNOTSUPP (they have no
 *    ring); on the /dev/pollfs handle: ENOTTY; on timers and futex
 *    objects it works;
 *  - entries not a power of two from 2 to 4096 (0, 1, 3, 6, 100, 4097,
 *    8192, 2^31, all ones), non-zero flags or reserved: EINVAL, and
 *    nothing set up (a good request afterwards works); 2 and 4096 work;
 *  - a second ring on one object, through the same descriptor or a dup,
 *    whatever its size: EBUSY;
 *  - an argument the kernel cannot read (NULL, unmapped, PROT_NONE,
 *    across into a PROT_NONE page): EFAULT, nothing set up; one it
 *    cannot write back to (read-only): EFAULT;
 *  - mmap of an object without a ring, of every kind: ENODEV (and the
 *    handle: a failure); an offset but 0: EINVAL; longer than mmap_size
 *    (by a byte, by a page): EINVAL; MAP_PRIVATE: EINVAL; PROT_EXEC:
 *    EPERM; a shorter length works and shows the same words;
 *  - mremap cannot grow a mapping of the ring.
 */
#include "lib/aio.h"
#include "lib/futex.h"
#include "lib/signal.h"
#include "lib/timer.h"
#include "lib/ring.h"

PT_BUDGET(40);

static long page;

/* A good ring request must work on fd now: nothing was set up before. */
static void ring_works(int fd, size_t record_size)
{
	struct rg_ring ring;

	rg_setup(&ring, fd, 4, record_size);
	rg_unmap(&ring);
}

TEST(kinds)
{
	struct pollfs_ring_params p;
	aio_context_t ctx = ax_setup(4);
	int dev = pt_dev();
	int sig = ps_signal(ps_bit(SIGUSR1), 0);
	int aio = ax_fd(ctx, 0);
	int t = tmr_new(0), f = fx_new(0);

	CHECK_ERR(rg_ioctl(sig, 4, 0, 0, &p), EOPNOTSUPP);
	CHECK_ERR(rg_ioctl(aio, 4, 0, 0, &p), EOPNOTSUPP);
	CHECK_ERR(rg_ioctl(dev, 4, 0, 0, &p), ENOTTY);
	ring_works(t, RG_TIMER_REC);
	ring_works(f, RG_FUTEX_REC);
	/* and again: a refusal sets nothing up */
	CHECK_ERR(rg_ioctl(sig, 4, 0, 0, &p), EOPNOTSUPP);
	CHECK_ERR(rg_ioctl(aio, 4096, 0, 0, &p), EOPNOTSUPP);
	CHECK_SYS(close(sig));
	CHECK_SYS(close(aio));
	CHECK_SYS(close(dev));
	CHECK_SYS(close(t));
	CHECK_SYS(close(f));
}

TEST(entries)
{
	static const uint32_t bad[] = { 0, 1, 3, 6, 100, 1000, 4095, 4097,
					8192, 1u << 31, 0xffffffffu };
	struct pollfs_ring_params p;
	int t = tmr_new(0), f = fx_new(0), edge;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_ERR(rg_ioctl(t, bad[i], 0, 0, &p), EINVAL);
		CHECK_ERR(rg_ioctl(f, bad[i], 0, 0, &p), EINVAL);
	}
	ring_works(t, RG_TIMER_REC);
	ring_works(f, RG_FUTEX_REC);
	for (uint32_t n = POLLFS_RING_ENTRIES_MIN; n <= POLLFS_RING_ENTRIES_MAX;
	     n *= 2) {
		struct rg_ring ring;

		edge = fx_new(0);
		rg_setup(&ring, edge, n, RG_FUTEX_REC);
		rg_unmap(&ring);
		CHECK_SYS(close(edge));
	}
	CHECK_SYS(close(t));
	CHECK_SYS(close(f));
}

TEST(flags_and_reserved)
{
	struct pollfs_ring_params p;
	int t = tmr_new(0);

	for (int bit = 0; bit < 32; bit++) {
		CHECK_ERR(rg_ioctl(t, 4, 1u << bit, 0, &p), EINVAL);
		CHECK_ERR(rg_ioctl(t, 4, 0, 1u << bit, &p), EINVAL);
	}
	/* the out fields are outputs: what the caller left there is not
	 * looked at */
	memset(&p, 0xff, sizeof(p));
	p.entries = 4;
	p.flags = 0;
	p.reserved = 0;
	CHECK_SYS(ioctl(t, POLLFS_IOC_RING, &p));
	rg_check_layout(&p, 4, RG_TIMER_REC);
	CHECK_SYS(close(t));
}

TEST(second_ring)
{
	struct pollfs_ring_params p;
	struct rg_ring ring;
	int f = fx_new(0), copy;

	rg_setup(&ring, f, 8, RG_FUTEX_REC);
	copy = CHECK_SYS(dup(f));
	CHECK_ERR(rg_ioctl(f, 8, 0, 0, &p), EBUSY);
	CHECK_ERR(rg_ioctl(f, 2, 0, 0, &p), EBUSY);
	CHECK_ERR(rg_ioctl(copy, 4096, 0, 0, &p), EBUSY);
	/* gone from this address space, still the object's */
	rg_unmap(&ring);
	CHECK_ERR(rg_ioctl(f, 8, 0, 0, &p), EBUSY);
	CHECK_SYS(close(copy));
	CHECK_SYS(close(f));
}

TEST(bad_pointers)
{
	char *pages = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct pollfs_ring_params *p;
	int t = tmr_new(0);

	CHECK(pages != MAP_FAILED);
	CHECK_ERR(ioctl(t, POLLFS_IOC_RING, NULL), EFAULT);
	CHECK_SYS(munmap(pages + 2 * page, page));
	CHECK_ERR(ioctl(t, POLLFS_IOC_RING, pages + 2 * page), EFAULT);
	CHECK_SYS(mprotect(pages + page, page, PROT_NONE));
	CHECK_ERR(ioctl(t, POLLFS_IOC_RING, pages + page), EFAULT);
	/* the first half readable, the rest in the PROT_NONE page */
	p = (struct pollfs_ring_params *)(pages + page - 8);
	memset(p, 0, 8);
	p->entries = 4;
	CHECK_ERR(ioctl(t, POLLFS_IOC_RING, p), EFAULT);
	CHECK_ERR(ioctl(t, POLLFS_IOC_RING, (void *)-4096L), EFAULT);
	/* nothing was set up */
	ring_works(t, RG_TIMER_REC);
	CHECK_SYS(close(t));

	/* readable, not writable: the layout cannot come back */
	t = tmr_new(0);
	p = (struct pollfs_ring_params *)pages;
	memset(p, 0, sizeof(*p));
	p->entries = 4;
	CHECK_SYS(mprotect(pages, page, PROT_READ));
	CHECK_ERR(ioctl(t, POLLFS_IOC_RING, p), EFAULT);
	CHECK_SYS(close(t));
	CHECK_SYS(munmap(pages, 2 * page));
}

TEST(mmap_without_a_ring)
{
	aio_context_t ctx = ax_setup(4);
	int fds[4] = { tmr_new(0), fx_new(0),
		       ps_signal(ps_bit(SIGUSR1), 0), ax_fd(ctx, 0) };
	int dev = pt_dev();

	for (int i = 0; i < 4; i++) {
		CHECK_ERR(mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED,
			       fds[i], 0), ENODEV);
		CHECK_ERR(mmap(NULL, page, PROT_READ, MAP_SHARED, fds[i], 0),
			  ENODEV);
	}
	CHECK(mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, dev, 0) ==
	      MAP_FAILED);
	for (int i = 0; i < 4; i++)
		CHECK_SYS(close(fds[i]));
	CHECK_SYS(close(dev));
}

TEST(mmap_refusals)
{
	struct pollfs_ring_params p;
	int f = fx_new(0);
	size_t len;

	CHECK_SYS(rg_ioctl(f, 64, 0, 0, &p));
	len = p.mmap_size;
	CHECK_ERR(mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f, page),
		  EINVAL);
	CHECK_ERR(mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, f, len),
		  EINVAL);
	CHECK_ERR(mmap(NULL, len + 1, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0),
		  EINVAL);
	CHECK_ERR(mmap(NULL, len + page, PROT_READ | PROT_WRITE, MAP_SHARED,
		       f, 0), EINVAL);
	CHECK_ERR(mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, f, 0),
		  EINVAL);
	CHECK_ERR(mmap(NULL, len, PROT_READ, MAP_PRIVATE, f, 0), EINVAL);
	CHECK_ERR(mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_SHARED, f, 0), EPERM);
	CHECK_ERR(mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_SHARED, f, 0),
		  EPERM);
	CHECK_SYS(close(f));
}

TEST(mmap_shorter)
{
	struct rg_ring ring, part;
	static uint32_t word;
	struct pollfs_ring_params p;
	int f = fx_new(0);
	unsigned char *map;
	size_t len;

	/* a ring of several pages, mapped by its first page only */
	rg_setup(&ring, f, POLLFS_RING_ENTRIES_MAX, RG_FUTEX_REC);
	p = ring.p;
	len = (size_t)page;
	CHECK(p.mmap_size > len);
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
	CHECK(map != MAP_FAILED);
	fx_arm(f, &word, 0, FX_PRIVATE | FX_WATCH);
	__atomic_store_n(&word, 1, __ATOMIC_SEQ_CST);
	CHECK_EQ(fx_wake(&word, 1, FX_PRIVATE), 1);
	rg_wait_ready(&ring, 1);
	/* the same memory, where it lies in the first page */
	if (p.off_tail + 4 <= len)
		CHECK_EQ(*(volatile uint32_t *)(map + p.off_tail),
			 rg_tail(&ring));
	if (p.off_head + 4 <= len)
		CHECK_EQ(*(volatile uint32_t *)(map + p.off_head),
			 rg_head(&ring));
	CHECK_SYS(munmap(map, len));
	/* and a whole second mapping is the same ring */
	rg_map(&part, f, &p);
	CHECK_EQ(rg_tail(&part), rg_tail(&ring));
	CHECK(!memcmp(rg_slot(&part, rg_head(&part)),
		      rg_slot(&ring, rg_head(&ring)), RG_FUTEX_REC));
	rg_unmap(&part);
	rg_unmap(&ring);
	CHECK_SYS(close(f));
}

TEST(mremap_cannot_grow)
{
	struct rg_ring ring;
	int f = fx_new(0);
	void *moved;

	rg_setup(&ring, f, 8, RG_FUTEX_REC);
	moved = mremap(ring.map, ring.len, ring.len + page, MREMAP_MAYMOVE);
	if (moved != MAP_FAILED)
		FAIL("mremap grew the ring's mapping from %zu to %zu bytes",
		     ring.len, ring.len + (size_t)page);
	moved = mremap(ring.map, ring.len, ring.len + page, 0);
	CHECK(moved == MAP_FAILED);
	/* the mapping is still there and whole */
	CHECK_EQ(rg_head(&ring), rg_tail(&ring));
	rg_unmap(&ring);
	CHECK_SYS(close(f));
}

int main(void)
{
	page = sysconf(_SC_PAGESIZE);
	ps_block(ps_bit(SIGUSR1));
	return pt_run_tests();
}
