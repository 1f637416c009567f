// SPDX-License-Identifier: MIT
/*
 * pollfs through io_uring (liburing): a pollfs periodic timer streamed by
 * one IORING_OP_READ_MULTISHOT into a ring of provided buffers where the
 * kernel has the op (Linux 6.7 and later), one IORING_OP_READ per record
 * elsewhere; and a pollfs futex object that another thread wakes with a
 * plain FUTEX_WAKE, read with IORING_OP_READ and re-armed with
 * IORING_OP_WRITE linked to the next read.  No read(2) or write(2) in
 * the loop.
 *
 * What no stock descriptor does: the armed futex object is a real waiter
 * on the word, so FUTEX_WAKE counts it in its return value, and the ring
 * needs no thread parked in FUTEX_WAIT to turn the wake into a completion.
 * (IORING_OP_POLL_ADD on the same descriptors, then read(2), works too.)
 *
 * The multishot read goes on (IORING_CQE_F_MORE) record after record with
 * no new submission; each completion names the provided buffer that holds
 * its record, to be given back once used.  A record that finds no buffer
 * left ends it (ENOBUFS) and stays in the object: submit it again.
 * liburing 2.3 (Debian 12) has neither the opcode nor its helper, so the
 * request is prepared by hand, and the kernel is asked whether it has it
 * (IORING_REGISTER_PROBE).
 *
 * Build: cc loop-uring.c $(pkg-config --cflags --libs liburing libpollfs)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>

#include <liburing.h>
#include <pollfs.h>

#define TICKS	4	/* timer expirations to wait for */
#define RINGS	3	/* FUTEX_WAKEs from the other thread */
#define BUFS	8	/* provided buffers of the timer's stream */
#define BGID	1	/* their group */

/* <linux/io_uring.h> of Linux 6.7 and later: the opcode. */
#define OP_READ_MULTISHOT	49

enum { TIMER_READ = 1, FUTEX_READ, FUTEX_ARM };

static uint32_t bell;	/* the futex word the pollfs object waits on */
static uint32_t ack = ~0u;	/* the value the object was last armed on */
static long counted;	/* waiters the thread's FUTEX_WAKEs woke */

static struct io_uring ring;
/* The kernel fills and reads these after submission: they must stay put. */
static struct pollfs_timer_event tev;
/* The timer's stream: the ring of provided buffers and the buffers. */
static struct io_uring_buf_ring *bufs;
static struct pollfs_timer_event tevs[BUFS];
static struct pollfs_futex_event fev, arm;

static void die(const char *what, int err)
{
	fprintf(stderr, "%s: %s\n", what, strerror(err));
	exit(1);
}

static long futex(uint32_t *word, int op, uint32_t val)
{
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

/*
 * The other side, which knows nothing of pollfs: it rings the bell only
 * once the loop has re-armed on the previous value (ack), so that every
 * FUTEX_WAKE finds the object waiting, and adds up what FUTEX_WAKE says
 * it woke.
 */
static void *ringer(void *arg)
{
	uint32_t i, seen;

	(void)arg;
	for (i = 1; i <= RINGS; i++) {
		while ((seen = __atomic_load_n(&ack, __ATOMIC_ACQUIRE)) != i - 1)
			futex(&ack, FUTEX_WAIT_PRIVATE, seen);
		usleep(20 * 1000);
		__atomic_store_n(&bell, i, __ATOMIC_RELEASE);
		counted += futex(&bell, FUTEX_WAKE_PRIVATE, 1);
	}
	return NULL;
}

/* The prep helpers clear the flags: set them after (sqe->flags |= ...). */
static struct io_uring_sqe *sqe(uint64_t tag)
{
	struct io_uring_sqe *s = io_uring_get_sqe(&ring);

	if (!s)
		die("io_uring_get_sqe", EBUSY);
	io_uring_sqe_set_data64(s, tag);
	return s;
}

/*
 * Arm on the value now in the word, and read the record once woken: the
 * write is linked to the read, which io_uring starts only after the write
 * succeeded (and cancels if it failed).
 */
static void futex_arm_and_read(int fd)
{
	struct io_uring_sqe *w = sqe(FUTEX_ARM);

	arm = (struct pollfs_futex_event){
		.addr = (uintptr_t)&bell,
		.val = __atomic_load_n(&bell, __ATOMIC_ACQUIRE),
	};
	io_uring_prep_write(w, fd, &arm, sizeof(arm), -1);
	w->flags |= IOSQE_IO_LINK;
	io_uring_prep_read(sqe(FUTEX_READ), fd, &fev, sizeof(fev), -1);
}

/* Does this kernel's io_uring have IORING_OP_READ_MULTISHOT? */
static int have_multishot(void)
{
	struct io_uring_probe *probe = io_uring_get_probe_ring(&ring);
	int have;

	if (!probe)
		return 0;
	have = io_uring_opcode_supported(probe, OP_READ_MULTISHOT);
	io_uring_free_probe(probe);
	return have;
}

/* Hands buffer bid back to the kernel. */
static void give_buf(unsigned int bid)
{
	io_uring_buf_ring_add(bufs, &tevs[bid], sizeof(tevs[bid]), bid,
			      io_uring_buf_ring_mask(BUFS), 0);
	io_uring_buf_ring_advance(bufs, 1);
}

/* The ring of provided buffers, page-aligned, all handed to the kernel. */
static void setup_bufs(void)
{
	struct io_uring_buf_reg reg = { .ring_entries = BUFS, .bgid = BGID };
	unsigned int i;
	int r;

	bufs = mmap(NULL, BUFS * sizeof(struct io_uring_buf),
		    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (bufs == MAP_FAILED)
		die("mmap", errno);
	io_uring_buf_ring_init(bufs);
	reg.ring_addr = (uintptr_t)bufs;
	r = io_uring_register_buf_ring(&ring, &reg, 0);
	if (r)
		die("io_uring_register_buf_ring", -r);
	for (i = 0; i < BUFS; i++)
		give_buf(i);
}

/* One request that reads record after record, each into a buffer of BGID. */
static void timer_stream(int fd)
{
	struct io_uring_sqe *s = sqe(TIMER_READ);

	io_uring_prep_rw(OP_READ_MULTISHOT, s, fd, NULL, 0, -1);
	s->flags |= IOSQE_BUFFER_SELECT;
	s->buf_group = BGID;
}

int main(void)
{
	struct itimerspec period = {
		.it_value = { .tv_nsec = 25 * 1000 * 1000 },
		.it_interval = { .tv_nsec = 25 * 1000 * 1000 },
	};
	static const struct itimerspec off;
	unsigned long ticks = 0, timer_reads = 0, rings = 0;
	int timerfd, futexfd, r, multishot;
	pthread_t thread;

	setvbuf(stdout, NULL, _IOLBF, 0);
	r = io_uring_queue_init(8, &ring, 0);
	if (r) {
		printf("loop-uring: no io_uring: %s\n", strerror(-r));
		return 1;
	}
	/* Blocking or not, an io_uring read waits for a record. */
	timerfd = pollfs_timer(POLLFS_CLOEXEC);
	futexfd = pollfs_futex(POLLFS_CLOEXEC);
	if (timerfd < 0 || futexfd < 0)
		die("pollfs object (is the module loaded?)", errno);
	if (pollfs_timer_arm(timerfd, CLOCK_MONOTONIC, 0, &period))
		die("pollfs_timer_arm", errno);

	multishot = have_multishot();
	if (multishot) {
		setup_bufs();
		timer_stream(timerfd);
	} else {
		io_uring_prep_read(sqe(TIMER_READ), timerfd, &tev,
				   sizeof(tev), -1);
	}
	futex_arm_and_read(futexfd);
	io_uring_submit(&ring);
	printf("loop-uring: the timer read by %s\n",
	       multishot ? "one IORING_OP_READ_MULTISHOT" :
			   "an IORING_OP_READ per record (no multishot read)");
	/* It rings once the first arm's completion has set ack to 0. */
	if (pthread_create(&thread, NULL, ringer, NULL))
		die("pthread_create", EAGAIN);

	while (ticks < TICKS || rings < RINGS) {
		struct io_uring_cqe *cqe;
		unsigned int cqe_flags;
		uint64_t tag;
		int res;

		r = io_uring_wait_cqe(&ring, &cqe);
		if (r)
			die("io_uring_wait_cqe", -r);
		tag = io_uring_cqe_get_data64(cqe);
		res = cqe->res;
		cqe_flags = cqe->flags;
		io_uring_cqe_seen(&ring, cqe);

		if (tag == TIMER_READ) {
			const struct pollfs_timer_event *ev = &tev;
			unsigned int bid = cqe_flags >> IORING_CQE_BUFFER_SHIFT;

			if (multishot && !(cqe_flags & IORING_CQE_F_MORE)) {
				/*
				 * The stream ended: its buffers ran out
				 * (ENOBUFS: the record stays in the object)
				 * or the completion queue overflowed.  Start
				 * it again.
				 */
				if (res < 0 && res != -ENOBUFS)
					die("timer stream", -res);
				if (ticks < TICKS)
					timer_stream(timerfd);
				if (res < 0)
					goto next;
			}
			if (res != sizeof(tev))
				die("timer read", res < 0 ? -res : EIO);
			if (multishot)
				ev = &tevs[bid];
			/* One record holds every expiration since the last read. */
			ticks += ev->expirations;
			timer_reads++;
			printf("timer: %llu expiration(s), next in %.1f ms%s\n",
			       (unsigned long long)ev->expirations,
			       ev->remaining.tv_nsec / 1e6,
			       multishot ? " (multishot)" : "");
			if (multishot)
				give_buf(bid);	/* used: the kernel's again */
			if (ticks >= TICKS)
				pollfs_timer_arm(timerfd, CLOCK_MONOTONIC, 0,
						 &off);
			else if (!multishot)
				io_uring_prep_read(sqe(TIMER_READ), timerfd,
						   &tev, sizeof(tev), -1);
		} else if (tag == FUTEX_ARM) {
			/*
			 * EAGAIN would mean the word moved on before the write
			 * armed the object (and the linked read comes back
			 * ECANCELED): handle that change, then arm again on
			 * the new value.  The ringer's handshake rules it out
			 * here.  Armed: tell the ringer.
			 */
			if (res != sizeof(arm))
				die("futex arm", -res);
			__atomic_store_n(&ack, arm.val, __ATOMIC_RELEASE);
			futex(&ack, FUTEX_WAKE_PRIVATE, 1);
		} else {
			/*
			 * The record the object was armed with comes back and
			 * the object is left unarmed: arm it again.
			 */
			if (res != sizeof(fev))
				die("futex read", -res);
			rings++;
			printf("futex: woken, record {bell, %u}%s, bell now %u\n",
			       fev.val,
			       fev.addr == (uintptr_t)&bell ? "" : " (wrong address!)",
			       __atomic_load_n(&bell, __ATOMIC_ACQUIRE));
			if (rings < RINGS)
				futex_arm_and_read(futexfd);
		}
next:
		io_uring_submit(&ring);
	}
	pthread_join(thread, NULL);
	io_uring_queue_exit(&ring);
	close(timerfd);
	close(futexfd);
	printf("loop-uring: %lu timer expirations in %lu reads, %lu futex wakes, FUTEX_WAKE woke %ld waiter(s)\n",
	       ticks, timer_reads, rings, counted);
	return 0;
}
