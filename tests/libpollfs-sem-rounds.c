// SPDX-License-Identifier: MIT
/*
 * libpollfs: no wake of the semaphore is lost, round after round.
 *
 * In each round every consumer takes exactly one unit and then stops
 * until the next round, and the posters post exactly one unit per
 * consumer, in random bursts from several threads (or processes) at
 * random moments.  So no consumer comes back for a unit left over: if a
 * post's wake is lost, or swallowed by a descriptor whose owner does not
 * pass it on, the unit stays and some consumer sleeps on, and the round
 * does not end within DRAIN_MS: the test fails.
 *
 * Consumers: threads in pollfs_sem_wait(); epoll loops on
 * pollfs_sem_trywait_fd() or pollfs_sem_arm(), which call
 * pollfs_sem_cancel() once they have their unit, since their descriptor
 * is left unwatched until the next round.  Quitters take no unit: each
 * round they arm a descriptor early, so that it queues before the
 * sleepers and takes the posts' wakes, keep it a moment, and cancel: the
 * wakes they swallowed must reach the consumers.  At the end of each
 * round the count is 0 and units taken == units posted.
 *
 * Run with a private semaphore and threads, then with a
 * POLLFS_FUTEX_SHARED one in MAP_SHARED memory and the roles spread over
 * three forked processes and this one.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <pollfs.h>

PT_BUDGET(55);

#define DRAIN_MS	8000
#define MAX_ACTORS	16

enum role {
	WAITER,		/* pollfs_sem_wait() */
	LOOP_TRY,	/* epoll loop on pollfs_sem_trywait_fd() */
	LOOP_ARM,	/* epoll loop on pollfs_sem_arm() */
	QUITTER,	/* arms, waits a moment, cancels; takes nothing */
	POSTER,
};

static const char *const role_names[] = {
	[WAITER] = "thread in pollfs_sem_wait",
	[LOOP_TRY] = "epoll loop on pollfs_sem_trywait_fd",
	[LOOP_ARM] = "epoll loop on pollfs_sem_arm",
	[QUITTER] = "quitter",
	[POSTER] = "poster",
};

struct actor {
	enum role role;
	bool edge;		/* loops: EPOLLET */
	atomic_int share;	/* posters: units to post this round */
	atomic_int done;	/* the last round it finished */
	atomic_int waits;	/* consumers: sleeps in futex or epoll */
	atomic_int swallowed;	/* quitters: wakes their cancel passed on */
};

struct shared {
	struct pollfs_sem sem;
	atomic_uint round;	/* a futex word too */
	int rounds;
	atomic_long posted;
	atomic_long taken;
	int nactors;
	struct actor a[MAX_ACTORS];
};

static struct shared *sh;

static unsigned int next_rand(unsigned int *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 16;
}

/* Sleeps until the coordinator starts round r. */
static void wait_round(unsigned int r)
{
	unsigned int cur;

	while ((cur = atomic_load(&sh->round)) < r)
		fx_futex(&sh->round, FUTEX_WAIT, cur, 0, NULL, 0);
}

static void took(void)
{
	atomic_fetch_add(&sh->taken, 1);
}

/* One epoll_wait() for the descriptor; its own timeout is only a
 * backstop to the coordinator's. */
static void loop_sleep(struct actor *a, int ep)
{
	struct epoll_event e;
	int n;

	atomic_fetch_add(&a->waits, 1);
	do
		n = epoll_wait(ep, &e, 1, 3 * DRAIN_MS);
	while (n < 0 && errno == EINTR);
	CHECK_SYS(n);
	if (!n)
		FAIL("%s %d: no wake", role_names[a->role], (int)(a - sh->a));
	CHECK_EQ(e.events, EPOLLIN);
}

static void take_one(struct actor *a, int ep, int fd)
{
	struct timespec ts;
	int r;

	switch (a->role) {
	case WAITER:
		if (!pollfs_sem_trywait(&sh->sem))
			break;
		atomic_fetch_add(&a->waits, 1);
		ts = pt_mono_in(3 * MS(DRAIN_MS));
		if (pollfs_sem_wait(&sh->sem, &ts))
			FAIL("waiter %d: pollfs_sem_wait: %s",
			     (int)(a - sh->a), strerror(errno));
		break;
	case LOOP_TRY:
		while (pollfs_sem_trywait_fd(&sh->sem, fd)) {
			CHECK_EQ(errno, EAGAIN);
			loop_sleep(a, ep);
		}
		CHECK_EQ(pollfs_sem_cancel(&sh->sem, fd), 0);
		break;
	case LOOP_ARM:
		for (;;) {
			r = CHECK_SYS(pollfs_sem_arm(&sh->sem, fd));
			if (r == 1) {
				if (!pollfs_sem_trywait(&sh->sem))
					break;
				continue;
			}
			loop_sleep(a, ep);
			if (!pollfs_sem_trywait_fd(&sh->sem, fd))
				break;
			CHECK_EQ(errno, EAGAIN);
		}
		CHECK_EQ(pollfs_sem_cancel(&sh->sem, fd), 0);
		break;
	default:
		FAIL("role %d takes no unit", a->role);
	}
	took();
}

static void quit(struct actor *a, int fd, unsigned int *seed)
{
	if (pollfs_sem_arm(&sh->sem, fd) == 0) {
		pt_sleep_ns(US(200 + next_rand(seed) % 2000));
		if (pt_poll_in(fd, 0))
			atomic_fetch_add(&a->swallowed, 1);
	}
	CHECK_EQ(pollfs_sem_cancel(&sh->sem, fd), 0);
}

static void post_share(struct actor *a, unsigned int *seed)
{
	int n = atomic_load(&a->share);

	pt_sleep_ns(US(next_rand(seed) % 1500));
	while (n > 0) {
		int burst = 1 + next_rand(seed) % 3;

		for (; burst && n; burst--, n--) {
			CHECK_EQ(pollfs_sem_post(&sh->sem), 0);
			atomic_fetch_add(&sh->posted, 1);
		}
		if (n)
			pt_sleep_ns(US(next_rand(seed) % 500));
	}
}

static void *actor_main(void *arg)
{
	struct actor *a = arg;
	unsigned int seed = (unsigned int)(a - sh->a) * 2654435761u + 17u;
	int fd = -1, ep = -1;

	if (a->role == LOOP_TRY || a->role == LOOP_ARM || a->role == QUITTER) {
		struct epoll_event add = {
			.events = EPOLLIN | (a->edge ? EPOLLET : 0),
		};

		fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK |
					    POLLFS_CLOEXEC));
		ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
		CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &add));
	}
	for (int r = 1; r <= sh->rounds; r++) {
		wait_round(r);
		switch (a->role) {
		case QUITTER:
			quit(a, fd, &seed);
			break;
		case POSTER:
			post_share(a, &seed);
			break;
		default:
			if (next_rand(&seed) % 2)
				pt_sleep_ns(US(next_rand(&seed) % 1000));
			take_one(a, ep, fd);
			break;
		}
		atomic_store(&a->done, r);
	}
	if (fd >= 0) {
		CHECK_SYS(close(fd));
		CHECK_SYS(close(ep));
	}
	return NULL;
}

static void add(enum role role, bool edge)
{
	struct actor *a = &sh->a[sh->nactors];

	if (sh->nactors == MAX_ACTORS)
		FAIL("too many actors");
	memset(a, 0, sizeof(*a));
	a->role = role;
	a->edge = edge;
	sh->nactors++;
}

static pid_t kids[4];
static bool reaped[4];
static int nkids;

static void kill_kids(void)
{
	for (int i = 0; i < nkids; i++)
		if (!reaped[i])
			kill(kids[i], SIGKILL);
}

/* Fails if a child failed; one whose actors all finished may be gone. */
static void reap_kids(bool wait)
{
	int status;

	for (int i = 0; i < nkids; i++) {
		if (reaped[i] ||
		    waitpid(kids[i], &status, wait ? 0 : WNOHANG) != kids[i])
			continue;
		reaped[i] = true;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != PT_PASS)
			FAIL("child %d: status %#x", (int)kids[i], status);
	}
}

/* Rounds until done; the actors run elsewhere. */
static void coordinate(const char *name)
{
	unsigned int seed = 12345;
	int consumers = 0, posters = 0, waits = 0, swallowed = 0;
	int64_t t0 = pt_mono(), end;

	for (int i = 0; i < sh->nactors; i++) {
		if (sh->a[i].role == POSTER)
			posters++;
		else if (sh->a[i].role != QUITTER)
			consumers++;
	}
	for (int r = 1; r <= sh->rounds; r++) {
		int left = consumers, k = posters;

		/* one unit per consumer, shared out at random */
		for (int i = 0; i < sh->nactors; i++) {
			int q;

			if (sh->a[i].role != POSTER)
				continue;
			q = --k ? (int)(next_rand(&seed) % (left + 1)) : left;
			atomic_store(&sh->a[i].share, q);
			left -= q;
		}
		atomic_store(&sh->round, r);
		fx_futex(&sh->round, FUTEX_WAKE, INT_MAX, 0, NULL, 0);

		end = pt_mono() + MS(DRAIN_MS);
		for (int i = 0; i < sh->nactors; i++) {
			struct actor *a = &sh->a[i];

			while (atomic_load(&a->done) < r) {
				reap_kids(false);
				if (pt_mono() < end) {
					pt_sleep_ns(US(200));
					continue;
				}
				FAIL("%s, round %d: %s %d has not finished "
				     "after %d ms: count %u, posted %ld, taken "
				     "%ld", name, r, role_names[a->role], i,
				     DRAIN_MS, __atomic_load_n(&sh->sem.count,
							       __ATOMIC_SEQ_CST),
				     atomic_load(&sh->posted),
				     atomic_load(&sh->taken));
			}
		}
		CHECK_EQ(atomic_load(&sh->posted), (long)r * consumers);
		CHECK_EQ(atomic_load(&sh->taken), (long)r * consumers);
		CHECK_EQ(__atomic_load_n(&sh->sem.count, __ATOMIC_SEQ_CST), 0);
	}
	for (int i = 0; i < sh->nactors; i++) {
		waits += atomic_load(&sh->a[i].waits);
		swallowed += atomic_load(&sh->a[i].swallowed);
	}
	pt_diag("%s: %d rounds of %d units in %lld ms; consumers slept %d "
		"times, quitters cancelled %d woken descriptors", name,
		sh->rounds, consumers,
		(long long)((pt_mono() - t0) / NSEC_PER_MSEC), waits,
		swallowed);
	/* or the test tested little */
	CHECK(waits > sh->rounds);
	CHECK(swallowed > 0);
}

static void start(int from, int to, pthread_t *th)
{
	for (int i = from; i < to; i++)
		CHECK_EQ(pthread_create(&th[i - from], NULL, actor_main,
					&sh->a[i]), 0);
}

static void join(int n, pthread_t *th)
{
	for (int i = 0; i < n; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
}

static void setup(int rounds, uint32_t flags)
{
	memset(sh, 0, sizeof(*sh));
	sh->rounds = rounds;
	CHECK_EQ(pollfs_sem_init(&sh->sem, 0, flags), 0);
}

static void run_private(int rounds)
{
	pthread_t th[MAX_ACTORS];

	setup(rounds, 0);
	add(QUITTER, false);
	add(QUITTER, true);
	add(WAITER, false);
	add(WAITER, false);
	add(WAITER, false);
	add(LOOP_TRY, false);
	add(LOOP_TRY, true);
	add(LOOP_ARM, false);
	add(LOOP_ARM, true);
	add(POSTER, false);
	add(POSTER, false);
	add(POSTER, false);
	start(0, sh->nactors, th);
	coordinate("private, threads");
	join(sh->nactors, th);
}

/* A process running actors [from, to) as threads. */
static void spawn(int from, int to)
{
	pthread_t th[MAX_ACTORS];
	pid_t pid = fx_fork();

	if (pid) {
		reaped[nkids] = false;
		kids[nkids++] = pid;
		return;
	}
	start(from, to, th);
	join(to - from, th);
	_exit(PT_PASS);
}

static void run_shared(int rounds)
{
	pthread_t th[MAX_ACTORS];
	int here;

	setup(rounds, POLLFS_FUTEX_SHARED);
	/* this process */
	add(QUITTER, false);
	add(WAITER, false);
	add(LOOP_TRY, true);
	add(POSTER, false);
	here = sh->nactors;
	/* child 1 */
	add(QUITTER, true);
	add(WAITER, false);
	add(LOOP_ARM, false);
	/* child 2 */
	add(WAITER, false);
	add(LOOP_TRY, false);
	add(LOOP_ARM, true);
	/* child 3 */
	add(POSTER, false);
	add(POSTER, false);

	pt_on_fail(kill_kids);
	spawn(here, here + 3);
	spawn(here + 3, here + 6);
	spawn(here + 6, here + 8);
	start(0, here, th);
	coordinate("shared, 4 processes");
	join(here, th);
	reap_kids(true);
	for (int i = 0; i < nkids; i++)
		CHECK(reaped[i]);
	nkids = 0;
	pt_on_fail(NULL);
}

int main(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	run_private(300);
	run_shared(200);
	return PT_PASS;
}
