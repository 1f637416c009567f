// SPDX-License-Identifier: MIT
/* Helpers of the record ring's tests; see ring.h. */
#include "ring.h"

#include <stdio.h>

int rg_ioctl(int fd, uint32_t entries, uint32_t flags, uint32_t reserved,
	     struct pollfs_ring_params *p)
{
	memset(p, 0, sizeof(*p));
	p->entries = entries;
	p->flags = flags;
	p->reserved = reserved;
	return ioctl(fd, POLLFS_IOC_RING, p);
}

/* [off, off + len) and [off2, off2 + len2) do not meet. */
static bool apart(uint64_t off, uint64_t len, uint64_t off2, uint64_t len2)
{
	return off + len <= off2 || off2 + len2 <= off;
}

void rg_check_layout_at(const char *file, int line,
			const struct pollfs_ring_params *p, uint32_t entries,
			size_t record_size)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t size = p->mmap_size;
	uint64_t recs = (uint64_t)entries * record_size;
	const uint32_t words[3] = { p->off_head, p->off_tail, p->off_flags };
	const char *const names[3] = { "off_head", "off_tail", "off_flags" };

	if (p->entries != entries || p->record_size != record_size)
		pt_fail_at(file, line, "ring params: entries %u record_size %u,"
			   " expected %u and %zu", p->entries, p->record_size,
			   entries, record_size);
	if (p->flags || p->reserved)
		pt_fail_at(file, line, "ring params: flags %#x reserved %#x "
			   "came back non-zero", p->flags, p->reserved);
	if (!size || size % page)
		pt_fail_at(file, line, "ring params: mmap_size %llu is not a "
			   "multiple of the page size %llu",
			   (unsigned long long)size, (unsigned long long)page);
	if (p->off_records + recs > size)
		pt_fail_at(file, line, "ring params: records at %u, %llu bytes,"
			   " end past mmap_size %llu", p->off_records,
			   (unsigned long long)recs, (unsigned long long)size);
	for (int i = 0; i < 3; i++) {
		if (words[i] % 4 || words[i] + 4ull > size)
			pt_fail_at(file, line, "ring params: %s %u misaligned "
				   "or outside mmap_size %llu", names[i],
				   words[i], (unsigned long long)size);
		if (!apart(words[i], 4, p->off_records, recs))
			pt_fail_at(file, line, "ring params: %s %u inside the "
				   "records [%u, +%llu)", names[i], words[i],
				   p->off_records, (unsigned long long)recs);
		for (int j = 0; j < i; j++)
			if (!apart(words[i], 4, words[j], 4))
				pt_fail_at(file, line, "ring params: %s %u and "
					   "%s %u overlap", names[i], words[i],
					   names[j], words[j]);
	}
}

static void rg_fill(struct rg_ring *ring, int fd,
		    const struct pollfs_ring_params *p, unsigned char *map,
		    size_t len)
{
	ring->fd = fd;
	ring->p = *p;
	ring->map = map;
	ring->len = len;
	ring->head = (uint32_t *)(map + p->off_head);
	ring->tail = (uint32_t *)(map + p->off_tail);
	ring->flags = (uint32_t *)(map + p->off_flags);
	ring->records = map + p->off_records;
}

void rg_map_at(const char *file, int line, struct rg_ring *ring, int fd,
	       const struct pollfs_ring_params *p)
{
	void *map = mmap(NULL, p->mmap_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, 0);

	if (map == MAP_FAILED)
		pt_fail_at(file, line, "mmap(%llu bytes, MAP_SHARED, fd %d): "
			   "errno %d (%s)", (unsigned long long)p->mmap_size,
			   fd, errno, strerror(errno));
	rg_fill(ring, fd, p, map, p->mmap_size);
}

void rg_setup_at(const char *file, int line, struct rg_ring *ring, int fd,
		 uint32_t entries, size_t record_size)
{
	struct pollfs_ring_params p;

	if (rg_ioctl(fd, entries, 0, 0, &p))
		pt_fail_at(file, line, "ioctl(fd %d, POLLFS_IOC_RING, %u "
			   "entries): errno %d (%s)%s", fd, entries, errno,
			   strerror(errno), errno == ENOTTY ?
			   ": the module has no record ring (interface 1.2)" :
			   "");
	rg_check_layout_at(file, line, &p, entries, record_size);
	rg_map_at(file, line, ring, fd, &p);
	if (rg_head(ring) != rg_tail(ring))
		pt_fail_at(file, line, "a new ring: head %u, tail %u",
			   rg_head(ring), rg_tail(ring));
}

void rg_unmap_at(const char *file, int line, struct rg_ring *ring)
{
	if (munmap(ring->map, ring->len))
		pt_fail_at(file, line, "munmap of the ring: %s",
			   strerror(errno));
	ring->map = NULL;
	ring->head = ring->tail = ring->flags = NULL;
	ring->records = NULL;
}

/* Copies @count records from index @from on into @buf. */
static void rg_copy(const struct rg_ring *ring, uint32_t from, uint32_t count,
		    void *buf)
{
	size_t size = ring->p.record_size;

	for (uint32_t k = 0; k < count; k++)
		memcpy((char *)buf + k * size, rg_slot(ring, from + k), size);
}

size_t rg_take_at(const char *file, int line, struct rg_ring *ring, void *buf,
		  size_t n)
{
	uint32_t head = __atomic_load_n(ring->head, __ATOMIC_RELAXED);
	uint32_t ready = rg_tail(ring) - head;

	if (ready > ring->p.entries)
		pt_fail_at(file, line, "ring of fd %d: head %u, tail %u: more "
			   "than %u apart", ring->fd, head, rg_tail(ring),
			   ring->p.entries);
	if (ready > n)
		ready = (uint32_t)n;
	if (!ready)
		return 0;
	rg_copy(ring, head, ready, buf);
	__atomic_store_n(ring->head, head + ready, __ATOMIC_RELEASE);
	return ready;
}

int rg_take_cas(struct rg_ring *ring, void *rec)
{
	uint32_t head = rg_head(ring);

	for (;;) {
		uint32_t ready = rg_tail(ring) - head;

		if (ready > ring->p.entries) {
			uint32_t again = rg_head(ring);

			/* another consumer moved on meanwhile: look again */
			if (again != head) {
				head = again;
				continue;
			}
			return -1;
		}
		if (!ready)
			return 0;
		rg_copy(ring, head, 1, rec);
		if (__atomic_compare_exchange_n(ring->head, &head, head + 1,
						false, __ATOMIC_RELEASE,
						__ATOMIC_ACQUIRE))
			return 1;
	}
}

size_t rg_drain_at(const char *file, int line, struct rg_ring *ring, void *buf,
		   size_t max)
{
	size_t size = ring->p.record_size, got = 0;

	while (got < max) {
		size_t n = rg_take_at(file, line, ring, (char *)buf + got * size,
				      max - got);
		ssize_t r;

		got += n;
		if (n)
			continue;
		if (!rg_overflow(ring))
			break;
		r = pt_read_nb(ring->fd, (char *)buf + got * size,
			       (max - got) * size);
		if (r < 0 && errno == EAGAIN)
			break;
		if (r <= 0 || r % (ssize_t)size)
			pt_fail_at(file, line, "read(fd %d) with the overflow "
				   "flag set: returned %zd, errno %d (%s)",
				   ring->fd, r, errno, strerror(errno));
		got += (size_t)r / size;
	}
	return got;
}

static void rg_wait_until(const char *file, int line,
			  const struct rg_ring *ring,
			  bool (*done)(const struct rg_ring *, uint32_t),
			  uint32_t arg, const char *what)
{
	int64_t end = pt_mono() + MS(PT_WAIT_MS) * pt_time_scale();

	while (!done(ring, arg)) {
		if (pt_mono() > end)
			pt_fail_at(file, line, "ring of fd %d: no %s within %d "
				   "ms (head %u, tail %u, flags %#x)", ring->fd,
				   what, PT_WAIT_MS, rg_head(ring),
				   rg_tail(ring), *ring->flags);
		pt_sleep_ms(1);
	}
}

static bool has_ready(const struct rg_ring *ring, uint32_t n)
{
	uint32_t ready = rg_ready(ring);

	return ready >= n && ready <= ring->p.entries;
}

static bool has_overflow(const struct rg_ring *ring, uint32_t unused)
{
	(void)unused;
	return rg_overflow(ring);
}

void rg_wait_ready_at(const char *file, int line, const struct rg_ring *ring,
		      uint32_t n)
{
	char what[64];

	snprintf(what, sizeof(what), "%u records", n);
	rg_wait_until(file, line, ring, has_ready, n, what);
}

void rg_wait_overflow_at(const char *file, int line,
			 const struct rg_ring *ring)
{
	rg_wait_until(file, line, ring, has_overflow, 0, "overflow flag");
}

void rg_expect_empty_at(const char *file, int line, const struct rg_ring *ring)
{
	if (rg_ready(ring) || rg_overflow(ring))
		pt_fail_at(file, line, "ring of fd %d: head %u, tail %u, flags "
			   "%#x: expected empty, no overflow", ring->fd,
			   rg_head(ring), rg_tail(ring), *ring->flags);
}

const char *rg_hex(const void *rec, size_t size, char *buf, size_t bufsize)
{
	const unsigned char *p = rec;
	size_t i;

	for (i = 0; i < size && 2 * i + 3 <= bufsize; i++)
		snprintf(buf + 2 * i, 3, "%02x", p[i]);
	buf[2 * i] = 0;
	return buf;
}
