// SPDX-License-Identifier: MIT
/*
 * libpollfs: the semaphore under load, with every kind of waiter at once.
 *
 * Consumers of three kinds take a fixed quota of units each: threads in
 * pollfs_sem_wait() (now and then pollfs_sem_trywait() first, or a wait
 * with a short timeout, retried after ETIMEDOUT), and epoll loops,
 * level- or edge-triggered, that wait with a futex object through
 * pollfs_sem_trywait_fd() (the loop of pollfs_sem(3)) or
 * pollfs_sem_arm() then pollfs_sem_trywait() / _trywait_fd().  Now and
 * then a loop abandons its descriptor: armed, left alone a moment (a
 * post may wake it), then pollfs_sem_cancel() and closed, and a new one
 * takes its place; a loop that meets its quota cancels too.  Posters
 * post exactly the sum of the quotas, in bursts; after about half of the
 * bursts a poster waits until every unit posted so far has been taken.
 *
 * Each post wakes one waiter.  A wake lost, or swallowed by an abandoned
 * descriptor and not passed on, can leave units that nobody takes while
 * consumers sleep (here another consumer coming back for its next unit
 * often takes them; libpollfs-sem-rounds leaves no such way out): the
 * next poster that waits for the units to be taken fails the test after
 * DRAIN_MS, and a consumer that gets no unit for STRAND_MS fails it too.
 * At the end every quota is met, units taken == units posted, and the
 * count is 0: no unit lost, none taken twice.
 *
 * Run twice: a private semaphore with every role a thread of this
 * process; then a POLLFS_FUTEX_SHARED one in MAP_SHARED memory with the
 * roles spread over three forked processes and this one.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <pollfs.h>

PT_BUDGET(55);

/* How long a consumer may wait for its next unit, and a poster for the
 * units posted to be taken, before they count as stranded: far beyond
 * any scheduling delay of the guest. */
#define STRAND_MS	15000
#define DRAIN_MS	8000

/* A loop abandons its descriptor after about this many units. */
#define ABANDON_EVERY	25

enum role {
	WAITER,		/* pollfs_sem_wait() */
	LOOP_TRY,	/* epoll loop on pollfs_sem_trywait_fd() */
	LOOP_ARM,	/* epoll loop on pollfs_sem_arm() */
	POSTER,
};

#define MAX_ROLES	16

struct actor {
	enum role role;
	bool edge;		/* loops: EPOLLET */
	int quota;		/* consumers: units to take; posters: posts */
	atomic_int got;		/* units taken, or posted */
	atomic_int sleeps;	/* times it waited (futex or epoll) */
	atomic_int timeouts;	/* waiters: short waits that timed out */
	atomic_int abandoned;	/* loops: descriptors cancelled and closed */
	atomic_int drains;	/* posters: waits for all units taken */
	atomic_int finished;
};

struct shared {
	struct pollfs_sem sem;
	atomic_int go;
	atomic_long taken;
	atomic_long posted;
	int nactors;
	struct actor a[MAX_ROLES];
};

static struct shared *sh;

static void wait_go(void)
{
	while (!atomic_load(&sh->go))
		pt_sleep_ms(1);
}

__attribute__((noreturn))
static void stranded(struct actor *a, const char *how)
{
	FAIL("consumer %d (%s) stranded: no unit for %d ms after %d of %d "
	     "(count %u, posted %ld, taken %ld)", (int)(a - sh->a), how,
	     STRAND_MS, atomic_load(&a->got), a->quota,
	     __atomic_load_n(&sh->sem.count, __ATOMIC_SEQ_CST),
	     atomic_load(&sh->posted), atomic_load(&sh->taken));
}

static void took(struct actor *a)
{
	atomic_fetch_add(&a->got, 1);
	atomic_fetch_add(&sh->taken, 1);
}

static unsigned int next_rand(unsigned int *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 16;
}

static void waiter(struct actor *a)
{
	unsigned int seed = (unsigned int)(a - sh->a) * 31u + 7u;
	struct timespec ts;
	int64_t end;

	wait_go();
	for (int i = 0; i < a->quota; i++) {
		unsigned int how = next_rand(&seed) % 8;

		if (how == 0 && !pollfs_sem_trywait(&sh->sem)) {
			took(a);
			continue;
		}
		atomic_fetch_add(&a->sleeps, 1);
		if (how == 1) {
			/* short waits, timing out, until a unit comes */
			end = pt_mono() + MS(STRAND_MS);
			for (;;) {
				ts = pt_mono_in(US(next_rand(&seed) % 2000));
				if (!pollfs_sem_wait(&sh->sem, &ts))
					break;
				if (errno != ETIMEDOUT)
					FAIL("pollfs_sem_wait: %s",
					     strerror(errno));
				atomic_fetch_add(&a->timeouts, 1);
				if (pt_mono() > end)
					stranded(a, "short pollfs_sem_wait");
			}
			took(a);
			continue;
		}
		ts = pt_mono_in(MS(STRAND_MS));
		if (pollfs_sem_wait(&sh->sem, &ts)) {
			if (errno == ETIMEDOUT)
				stranded(a, "pollfs_sem_wait");
			FAIL("pollfs_sem_wait: %s", strerror(errno));
		}
		took(a);
	}
}

/* epoll_wait for the one descriptor; fails the test on a timeout. */
static void loop_sleep(struct actor *a, int ep, const char *how)
{
	struct epoll_event e;
	int n;

	atomic_fetch_add(&a->sleeps, 1);
	do
		n = epoll_wait(ep, &e, 1, STRAND_MS);
	while (n < 0 && errno == EINTR);
	CHECK_SYS(n);
	if (!n)
		stranded(a, how);
	CHECK_EQ(e.events, EPOLLIN);
}

static int new_fd(int ep, bool edge)
{
	struct epoll_event add = { .events = EPOLLIN | (edge ? EPOLLET : 0) };
	int fd = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK | POLLFS_CLOEXEC));

	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &add));
	return fd;
}

/*
 * Leaves the descriptor armed and unwatched for a moment, then cancels
 * and closes it: a post in between may wake it and nobody else, and the
 * cancel must pass that wake on.
 */
static int abandon(struct actor *a, int ep, int fd, unsigned int *seed)
{
	if (pollfs_sem_arm(&sh->sem, fd) == 0)
		pt_sleep_ns(US(next_rand(seed) % 1500));
	CHECK_EQ(pollfs_sem_cancel(&sh->sem, fd), 0);
	CHECK_SYS(close(fd));
	atomic_fetch_add(&a->abandoned, 1);
	return new_fd(ep, a->edge);
}

static void loop(struct actor *a)
{
	unsigned int seed = (unsigned int)(a - sh->a) * 131u + 3u;
	int fd, ep, r, next_abandon;

	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	fd = new_fd(ep, a->edge);
	next_abandon = 1 + next_rand(&seed) % (2 * ABANDON_EVERY);
	wait_go();

	while (atomic_load(&a->got) < a->quota) {
		if (atomic_load(&a->got) >= next_abandon) {
			fd = abandon(a, ep, fd, &seed);
			next_abandon += 1 + next_rand(&seed) %
					    (2 * ABANDON_EVERY);
		}
		if (a->role == LOOP_TRY) {
			/* the loop of pollfs_sem(3) */
			if (!pollfs_sem_trywait_fd(&sh->sem, fd)) {
				took(a);
				continue;
			}
			CHECK_EQ(errno, EAGAIN);
			loop_sleep(a, ep, "epoll on pollfs_sem_trywait_fd");
			continue;
		}
		/* arm; a unit at hand is taken without the descriptor */
		r = pollfs_sem_arm(&sh->sem, fd);
		CHECK_SYS(r);
		if (r == 1) {
			if (!pollfs_sem_trywait(&sh->sem))
				took(a);
			continue;
		}
		loop_sleep(a, ep, "epoll on pollfs_sem_arm");
		if (!pollfs_sem_trywait_fd(&sh->sem, fd))
			took(a);
		else
			CHECK_EQ(errno, EAGAIN);
	}
	/* the descriptor may hold a wake meant for someone else */
	CHECK_EQ(pollfs_sem_cancel(&sh->sem, fd), 0);
	CHECK_SYS(close(ep));
	CHECK_SYS(close(fd));
}

/* Waits until every unit posted so far has been taken. */
static void drain(struct actor *a)
{
	long posted = atomic_load(&sh->posted);
	int64_t end = pt_mono() + MS(DRAIN_MS);

	atomic_fetch_add(&a->drains, 1);
	while (atomic_load(&sh->taken) < posted) {
		if (pt_mono() > end)
			FAIL("poster %d: units posted are not taken: %ld "
			     "posted before, %ld taken, count %u, for %d ms",
			     (int)(a - sh->a), posted,
			     atomic_load(&sh->taken),
			     __atomic_load_n(&sh->sem.count, __ATOMIC_SEQ_CST),
			     DRAIN_MS);
		sched_yield();
	}
}

static void poster(struct actor *a)
{
	unsigned int seed = (unsigned int)(a - sh->a) * 7919u + 1;
	int burst;

	wait_go();
	for (int i = 0; i < a->quota; ) {
		burst = 1 + next_rand(&seed) % 8;
		for (int k = 0; k < burst && i < a->quota; k++, i++) {
			CHECK_EQ(pollfs_sem_post(&sh->sem), 0);
			atomic_fetch_add(&sh->posted, 1);
			atomic_fetch_add(&a->got, 1);
			if (next_rand(&seed) % 4 == 0)
				sched_yield();
		}
		switch (next_rand(&seed) % 4) {
		case 0:
		case 1:
			drain(a);
			break;
		case 2:
			pt_sleep_ns(US(next_rand(&seed) % 1000));
			break;
		}
	}
}

static void *actor_main(void *arg)
{
	struct actor *a = arg;

	switch (a->role) {
	case WAITER:
		waiter(a);
		break;
	case LOOP_TRY:
	case LOOP_ARM:
		loop(a);
		break;
	case POSTER:
		poster(a);
		break;
	}
	atomic_store(&a->finished, 1);
	return NULL;
}

static int add(enum role role, bool edge, int quota)
{
	struct actor *a = &sh->a[sh->nactors];

	if (sh->nactors == MAX_ROLES)
		FAIL("too many actors");
	memset(a, 0, sizeof(*a));
	a->role = role;
	a->edge = edge;
	a->quota = quota;
	return sh->nactors++;
}

/* Posters share out exactly what the consumers will take. */
static void add_posters(int n)
{
	long total = 0;
	int k = n;

	for (int i = 0; i < sh->nactors; i++)
		if (sh->a[i].role != POSTER)
			total += sh->a[i].quota;
	for (int i = 0; i < n; i++, k--) {
		int q = total / k;

		add(POSTER, false, q);
		total -= q;
	}
}

static void start(int from, int to, pthread_t *th)
{
	for (int i = from; i < to; i++)
		CHECK_EQ(pthread_create(&th[i - from], NULL, actor_main,
					&sh->a[i]), 0);
}

static void join(int from, int to, pthread_t *th)
{
	for (int i = from; i < to; i++)
		CHECK_EQ(pthread_join(th[i - from], NULL), 0);
}

static pid_t kids[4];
static int nkids;

static void kill_kids(void)
{
	for (int i = 0; i < nkids; i++)
		kill(kids[i], SIGKILL);
}

/* A process running actors [from, to) as threads. */
static void spawn(int from, int to)
{
	pthread_t th[MAX_ROLES];
	pid_t pid = fx_fork();

	if (pid) {
		kids[nkids++] = pid;
		return;
	}
	start(from, to, th);
	join(from, to, th);
	_exit(PT_PASS);
}

static void check_totals(const char *name, int64_t t0)
{
	long want = 0, sleeps = 0, timeouts = 0, abandoned = 0, drains = 0;

	for (int i = 0; i < sh->nactors; i++) {
		struct actor *a = &sh->a[i];

		CHECK_EQ(atomic_load(&a->finished), 1);
		if (atomic_load(&a->got) != a->quota)
			FAIL("%s: actor %d (role %d) did %d of %d", name, i,
			     a->role, atomic_load(&a->got), a->quota);
		if (a->role != POSTER) {
			want += a->quota;
			sleeps += atomic_load(&a->sleeps);
		}
		timeouts += atomic_load(&a->timeouts);
		abandoned += atomic_load(&a->abandoned);
		drains += atomic_load(&a->drains);
	}
	CHECK_EQ(atomic_load(&sh->posted), want);
	CHECK_EQ(atomic_load(&sh->taken), want);
	CHECK_EQ(sh->sem.count, 0);
	CHECK_ERR(pollfs_sem_trywait(&sh->sem), EAGAIN);
	pt_diag("%s: %ld units posted and taken by %d actors in %lld ms; "
		"%ld waits, %ld timed out, %ld descriptors abandoned, %ld "
		"drains", name, want, sh->nactors,
		(long long)((pt_mono() - t0) / NSEC_PER_MSEC), sleeps,
		timeouts, abandoned, drains);
	/* the consumers must have slept, or nothing was tested */
	CHECK(sleeps > 0 && abandoned > 0 && drains > 0);
}

static void run_private(int quota)
{
	pthread_t th[MAX_ROLES];
	int64_t t0;

	memset(sh, 0, sizeof(*sh));
	CHECK_EQ(pollfs_sem_init(&sh->sem, 0, 0), 0);
	add(WAITER, false, quota);
	add(WAITER, false, quota);
	add(WAITER, false, quota);
	add(LOOP_TRY, false, quota);
	add(LOOP_TRY, true, quota);
	add(LOOP_ARM, false, quota);
	add(LOOP_ARM, true, quota);
	add_posters(3);
	start(0, sh->nactors, th);
	t0 = pt_mono();
	atomic_store(&sh->go, 1);
	join(0, sh->nactors, th);
	check_totals("private, threads", t0);
}

static void run_shared(int quota)
{
	pthread_t th[MAX_ROLES];
	int64_t t0, end;
	int a, b, c, status;

	memset(sh, 0, sizeof(*sh));
	CHECK_EQ(pollfs_sem_init(&sh->sem, 0, POLLFS_FUTEX_SHARED), 0);
	/* this process: a waiter and a loop */
	add(WAITER, false, quota);
	add(LOOP_TRY, true, quota);
	a = sh->nactors;
	/* child 1: waiters and a loop */
	add(WAITER, false, quota);
	add(WAITER, false, quota);
	add(LOOP_ARM, false, quota);
	b = sh->nactors;
	/* child 2: loops */
	add(LOOP_TRY, false, quota);
	add(LOOP_ARM, true, quota);
	c = sh->nactors;
	/* child 3 and this process: posters */
	add_posters(3);

	pt_on_fail(kill_kids);
	spawn(a, b);
	spawn(b, c);
	spawn(c, c + 2);
	start(0, a, th);
	start(c + 2, c + 3, th + a);
	t0 = pt_mono();
	atomic_store(&sh->go, 1);
	join(0, a, th);
	join(c + 2, c + 3, th + a);
	end = pt_mono() + 3 * MS(STRAND_MS);
	for (int i = 0; i < nkids; i++) {
		pid_t r;

		while ((r = waitpid(kids[i], &status, WNOHANG)) == 0) {
			if (pt_mono() > end)
				FAIL("child %d still running", (int)kids[i]);
			pt_sleep_ms(5);
		}
		CHECK_EQ(r, kids[i]);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != PT_PASS)
			FAIL("child %d: status %#x", (int)kids[i], status);
	}
	nkids = 0;
	pt_on_fail(NULL);
	check_totals("shared, 4 processes", t0);
}

int main(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	run_private(1200);
	run_shared(800);
	return PT_PASS;
}
