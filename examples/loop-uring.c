// SPDX-License-Identifier: MIT
/*
 * pollfs through io_uring (liburing): IORING_OP_READ requests on a pollfs
 * timer and on a pollfs futex object that another thread wakes with a
 * plain FUTEX_WAKE, and IORING_OP_WRITE to re-arm the futex object,
 * linked to the next read.  No read(2) or write(2) in the loop.
 *
 * What no stock descriptor does: the armed futex object is a real waiter
 * on the word, so FUTEX_WAKE counts it in its return value, and the ring
 * needs no thread parked in FUTEX_WAIT to turn the wake into a completion.
 * (IORING_OP_POLL_ADD on the same descriptors, then read(2), works too.)
 *
 * Build: cc loop-uring.c $(pkg-config --cflags --libs liburing libpollfs)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>

#include <liburing.h>
#include <pollfs.h>

#define TICKS	4	/* timer expirations to wait for */
#define RINGS	3	/* FUTEX_WAKEs from the other thread */

enum { TIMER_READ = 1, FUTEX_READ, FUTEX_ARM };

static uint32_t bell;	/* the futex word the pollfs object waits on */
static uint32_t ack = ~0u;	/* the value the object was last armed on */
static long counted;	/* waiters the thread's FUTEX_WAKEs woke */

static struct io_uring ring;
/* The kernel fills and reads these after submission: they must stay put. */
static struct pollfs_timer_event tev;
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

static struct io_uring_sqe *sqe(uint64_t tag, unsigned int flags)
{
	struct io_uring_sqe *s = io_uring_get_sqe(&ring);

	if (!s)
		die("io_uring_get_sqe", EBUSY);
	io_uring_sqe_set_data64(s, tag);
	io_uring_sqe_set_flags(s, flags);
	return s;
}

/*
 * Arm on the value now in the word, and read the record once woken: the
 * write is linked to the read, which io_uring starts only after the write
 * succeeded (and cancels if it failed).
 */
static void futex_arm_and_read(int fd)
{
	arm = (struct pollfs_futex_event){
		.addr = (uintptr_t)&bell,
		.val = __atomic_load_n(&bell, __ATOMIC_ACQUIRE),
	};
	io_uring_prep_write(sqe(FUTEX_ARM, IOSQE_IO_LINK), fd, &arm,
			    sizeof(arm), -1);
	io_uring_prep_read(sqe(FUTEX_READ, 0), fd, &fev, sizeof(fev), -1);
}

int main(void)
{
	struct itimerspec period = {
		.it_value = { .tv_nsec = 25 * 1000 * 1000 },
		.it_interval = { .tv_nsec = 25 * 1000 * 1000 },
	};
	static const struct itimerspec off;
	unsigned long ticks = 0, timer_reads = 0, rings = 0;
	int timerfd, futexfd, r;
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

	io_uring_prep_read(sqe(TIMER_READ, 0), timerfd, &tev, sizeof(tev), -1);
	futex_arm_and_read(futexfd);
	io_uring_submit(&ring);
	/* It rings once the first arm's completion has set ack to 0. */
	if (pthread_create(&thread, NULL, ringer, NULL))
		die("pthread_create", EAGAIN);

	while (ticks < TICKS || rings < RINGS) {
		struct io_uring_cqe *cqe;
		uint64_t tag;
		int res;

		r = io_uring_wait_cqe(&ring, &cqe);
		if (r)
			die("io_uring_wait_cqe", -r);
		tag = io_uring_cqe_get_data64(cqe);
		res = cqe->res;
		io_uring_cqe_seen(&ring, cqe);

		if (tag == TIMER_READ) {
			if (res != sizeof(tev))
				die("timer read", -res);
			/* One record holds every expiration since the last read. */
			ticks += tev.expirations;
			timer_reads++;
			printf("timer: %llu expiration(s), next in %.1f ms\n",
			       (unsigned long long)tev.expirations,
			       tev.remaining.tv_nsec / 1e6);
			if (ticks < TICKS)
				io_uring_prep_read(sqe(TIMER_READ, 0), timerfd,
						   &tev, sizeof(tev), -1);
			else
				pollfs_timer_arm(timerfd, CLOCK_MONOTONIC, 0,
						 &off);
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
