// SPDX-License-Identifier: MIT
/*
 * No wake is lost by a watched object (POLLFS_FUTEX_WATCH, 1.1), with
 * threads racing: writers increment a word and FUTEX_WAKE it, readers
 * read the one watched object (blocking reads, and poll then
 * non-blocking reads), with no write to the object after the first.
 * The read re-arms on the value it reads under the bucket lock, so
 * (a read may return several records, one per wake, when the record it
 * re-armed was woken again before it ended):
 *  - each FUTEX_WAKE that returned 1 woke the object once, and each
 *    such wake is one record read: in the end the records read equal
 *    the wakes that counted the object (a wake that came while it was
 *    woken and not yet read counts nothing, and needs no record: the
 *    pending one reports the value);
 *  - each record's val is a value the word held, at most the final
 *    one, and a reader's values never go down;
 *  - after the writers stop and everything is read, the last record
 *    has the final value, the object is armed (not woken) and the next
 *    FUTEX_WAKE counts it.
 * Private, and shared (on MAP_SHARED memory): a TEST each.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

PT_BUDGET(120);

#define WRITERS	2
#define READERS	2
#define PER_WRITER 4000

static uint32_t *word;
static uint32_t wflags;
static int fd;
static atomic_long counted, records;
static atomic_uint max_val;	/* reads are serialized: the last one's */
static atomic_int stop;
static pid_t reader_tids[READERS];

static void on_usr1(int sig)
{
	(void)sig;
}

static void *writer(void *arg)
{
	long mine = 0;

	(void)arg;
	for (int i = 0; i < PER_WRITER; i++) {
		__atomic_fetch_add(word, 1, __ATOMIC_SEQ_CST);
		long r = fx_wake(word, (i & 1) ? 1 : INT_MAX, wflags);

		if (r != 0 && r != 1)
			FAIL("FUTEX_WAKE returned %ld with one waiter at most",
			     r);
		mine += r;
		if ((i & 255) == 0)
			sched_yield();
	}
	atomic_fetch_add(&counted, mine);
	return NULL;
}

static void got_record(const struct pollfs_futex_event *ev, uint32_t *prev)
{
	uint32_t now = __atomic_load_n(word, __ATOMIC_SEQ_CST);

	fx_check_rec(ev, word, ev->val, wflags | FX_WATCH);
	/* a value the word held: it only grows, from 0 */
	if (ev->val < 1 || ev->val > now || ev->val < *prev)
		FAIL("record val %u: previous %u, word now %u", ev->val,
		     *prev, now);
	*prev = ev->val;
	for (unsigned int m = atomic_load(&max_val); m < ev->val &&
	     !atomic_compare_exchange_weak(&max_val, &m, ev->val);)
		;
	atomic_fetch_add(&records, 1);
}

static void *reader(void *arg)
{
	int id = (int)(intptr_t)arg;
	struct pollfs_futex_event ev[4];
	uint32_t prev = 0;

	reader_tids[id] = (pid_t)syscall(SYS_gettid);
	while (!atomic_load(&stop)) {
		ssize_t r;

		if (id == 0) {
			/* blocking: signals end it at the end */
			r = read(fd, ev, sizeof(ev));
		} else {
			if (!pt_poll_in(fd, 20))
				continue;
			r = pt_read_nb(fd, ev, sizeof(ev));
		}
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		/*
		 * Whole records; more than one when the record, armed again
		 * by this read, was woken again before the read ended:
		 * one record per wake all the same.
		 */
		if (r <= 0 || r % FX_REC)
			FAIL("reader %d: read returned %zd, errno %d (%s)", id,
			     r, errno, strerror(errno));
		for (ssize_t k = 0; k < r / FX_REC; k++)
			got_record(&ev[k], &prev);
	}
	return NULL;
}

static void run(uint32_t *w, uint32_t flags)
{
	pthread_t wt[WRITERS], rt[READERS];
	const uint32_t final = WRITERS * PER_WRITER;
	int64_t end;

	word = w;
	wflags = flags;
	*word = 0;
	atomic_store(&counted, 0);
	atomic_store(&records, 0);
	atomic_store(&max_val, 0);
	atomic_store(&stop, 0);
	memset(reader_tids, 0, sizeof(reader_tids));

	fd = fx_new(0);
	fx_arm(fd, word, 0, flags | FX_WATCH);
	for (int i = 0; i < READERS; i++)
		CHECK_EQ(pthread_create(&rt[i], NULL, reader,
					(void *)(intptr_t)i), 0);
	for (int i = 0; i < WRITERS; i++)
		CHECK_EQ(pthread_create(&wt[i], NULL, writer, NULL), 0);
	for (int i = 0; i < WRITERS; i++)
		CHECK_EQ(pthread_join(wt[i], NULL), 0);
	CHECK_EQ(*word, final);

	/* every counted wake becomes one record */
	end = pt_mono() + MS(PT_WAIT_MS);
	while (atomic_load(&records) < atomic_load(&counted)) {
		if (pt_mono() > end)
			FAIL("%ld wakes counted the object, %ld records read "
			     "after %d ms", atomic_load(&counted),
			     atomic_load(&records), PT_WAIT_MS);
		pt_sleep_ms(2);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < READERS; i++) {
		/* interrupt the blocking read (no SA_RESTART) */
		while (pthread_tryjoin_np(rt[i], NULL) == EBUSY) {
			pthread_kill(rt[i], SIGUSR1);
			pt_sleep_ms(5);
		}
	}
	pt_diag("%s: %d wakes, %ld counted the object, %ld records",
		(flags & FX_SHARED) ? "shared" : "private", WRITERS * PER_WRITER,
		atomic_load(&counted), atomic_load(&records));
	CHECK_EQ(atomic_load(&records), atomic_load(&counted));
	CHECK(atomic_load(&counted) >= 1);

	/* the last record has the final value; armed on it, not woken */
	CHECK_EQ(atomic_load(&max_val), final);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(word, INT_MAX, flags), 1);
	fx_expect_watch(fd, word, final, flags | FX_WATCH);
	CHECK_SYS(close(fd));
	CHECK_EQ(fx_wake(word, INT_MAX, flags), 0);
}

TEST(private_word)
{
	static uint32_t private_word;

	run(&private_word, FX_PRIVATE);
}

TEST(shared_word)
{
	uint32_t *shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	CHECK(shm != MAP_FAILED);
	run(&shm[17], FX_SHARED);
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	CHECK_SYS(sigaction(SIGUSR1, &sa, NULL));
	return pt_run_tests();
}
