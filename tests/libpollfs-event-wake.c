// SPDX-License-Identifier: MIT
/*
 * libpollfs: one pollfs_event_set() wakes every waiter at once, of every
 * kind: threads asleep in pollfs_event_wait() and futex objects armed
 * with pollfs_event_arm() in epoll loops (level- and edge-triggered),
 * in this process and, for an event initialized with
 * POLLFS_FUTEX_SHARED in MAP_SHARED memory, in forked processes too.
 *
 * Each round: the event is clear, every waiter is seen asleep (in
 * futex(2) or epoll_wait(2)), the event is set once, and every waiter
 * must report within PT_WAIT_MS; a second set would do nothing, so a
 * waiter the one wake missed stays asleep and fails the test.  An epoll
 * loop checks each record it reads, and that pollfs_event_arm() returns
 * 1 and arms nothing while the event is still set.  Then the event is
 * reset and the next round begins.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <pollfs.h>

PT_BUDGET(55);

#define ROUNDS		4
#define MAX_WAITERS	16
#define MAX_FDS		4

enum kind { THREAD, LOOP };

struct waiter {
	enum kind kind;
	int nfds;		/* LOOP: futex objects in its epoll set */
	_Atomic pid_t tid;
	atomic_int phase;	/* round it is about to sleep in */
	atomic_int done;	/* round whose wake(s) it has seen */
};

struct shared {
	struct pollfs_event ev;
	atomic_uint round;	/* a futex word too */
	int nwaiters;
	struct waiter w[MAX_WAITERS];
};

static struct shared *sh;

/* Sleeps until the coordinator starts round r. */
static void wait_round(unsigned int r)
{
	unsigned int cur;

	while ((cur = atomic_load(&sh->round)) < r)
		fx_futex(&sh->round, FUTEX_WAIT, cur, 0, NULL, 0);
}

static void *thread_waiter(void *arg)
{
	struct waiter *w = arg;
	struct timespec ts;

	atomic_store(&w->tid, gettid());
	for (int r = 1; r <= ROUNDS; r++) {
		wait_round(r);
		atomic_store(&w->phase, r);
		ts = pt_mono_in(3 * MS(PT_WAIT_MS));
		if (pollfs_event_wait(&sh->ev, &ts))
			FAIL("thread waiter %d, round %d: pollfs_event_wait: "
			     "%s", (int)(w - sh->w), r, strerror(errno));
		CHECK_EQ(pollfs_event_is_set(&sh->ev), 1);
		atomic_store(&w->done, r);
	}
	return NULL;
}

static void *loop_waiter(void *arg)
{
	struct waiter *w = arg;
	struct pollfs_futex_event rec[2];
	struct epoll_event e[MAX_FDS];
	int fds[MAX_FDS], ep, n;
	uint32_t flags = sh->ev.flags;

	atomic_store(&w->tid, gettid());
	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	for (int i = 0; i < w->nfds; i++) {
		struct epoll_event add = {
			.events = EPOLLIN | (i % 2 ? EPOLLET : 0),
			.data.u32 = i,
		};

		fds[i] = CHECK_SYS(pollfs_futex(POLLFS_NONBLOCK |
						POLLFS_CLOEXEC));
		CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &add));
	}

	for (int r = 1; r <= ROUNDS; r++) {
		bool seen[MAX_FDS] = { false };
		int left = w->nfds;

		wait_round(r);
		/* clear until every waiter has reported */
		for (int i = 0; i < w->nfds; i++)
			CHECK_EQ(pollfs_event_arm(&sh->ev, fds[i]), 0);
		atomic_store(&w->phase, r);
		while (left) {
			do
				n = epoll_wait(ep, e, MAX_FDS,
					       3 * PT_WAIT_MS);
			while (n < 0 && errno == EINTR);
			CHECK_SYS(n);
			if (!n)
				FAIL("loop waiter %d, round %d: %d of %d "
				     "objects not woken", (int)(w - sh->w), r,
				     left, w->nfds);
			for (int k = 0; k < n; k++) {
				int i = e[k].data.u32;

				CHECK_EQ(e[k].events, EPOLLIN);
				if (seen[i])
					FAIL("loop waiter %d, round %d: object "
					     "%d reported again", (int)(w - sh->w),
					     r, i);
				seen[i] = true;
				left--;
				memset(rec, 0xa5, sizeof(rec));
				CHECK_EQ(pollfs_futex_read(fds[i], rec, 2), 1);
				fx_check_rec(&rec[0], &sh->ev.state, 0, flags);
				/* still set: 1, and nothing armed */
				CHECK_EQ(pollfs_event_arm(&sh->ev, fds[i]), 1);
				CHECK_ERR(pollfs_futex_read(fds[i], rec, 2),
					  EINVAL);
			}
		}
		atomic_store(&w->done, r);
	}
	for (int i = 0; i < w->nfds; i++)
		CHECK_SYS(close(fds[i]));
	CHECK_SYS(close(ep));
	return NULL;
}

static int add_waiter(enum kind kind, int nfds)
{
	struct waiter *w;

	if (sh->nwaiters == MAX_WAITERS)
		FAIL("too many waiters");
	w = &sh->w[sh->nwaiters];
	memset(w, 0, sizeof(*w));
	w->kind = kind;
	w->nfds = nfds;
	return sh->nwaiters++;
}

/* Starts the threads of waiters [from, to) in this process. */
static void start_threads(int from, int to, pthread_t *th)
{
	for (int i = from; i < to; i++)
		CHECK_EQ(pthread_create(&th[i - from], NULL,
					sh->w[i].kind == THREAD ? thread_waiter :
								  loop_waiter,
					&sh->w[i]), 0);
}

static void join_threads(int n, pthread_t *th)
{
	for (int i = 0; i < n; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
}

/* A child process running waiters [from, to); the last one in the
 * child's main thread. */
static pid_t spawn(int from, int to)
{
	pthread_t th[MAX_WAITERS];
	pid_t pid = fx_fork();
	struct waiter *last;

	if (pid)
		return pid;
	start_threads(from, to - 1, th);
	last = &sh->w[to - 1];
	if (last->kind == THREAD)
		thread_waiter(last);
	else
		loop_waiter(last);
	join_threads(to - 1 - from, th);
	_exit(PT_PASS);
}

static pid_t children[2];
static bool reaped[2];
static int nchildren;

/* Fails if a child failed; one whose waiters all finished may be gone. */
static void reap_children(bool wait)
{
	int status;

	for (int i = 0; i < nchildren; i++) {
		if (reaped[i] || waitpid(children[i], &status,
					 wait ? 0 : WNOHANG) != children[i])
			continue;
		reaped[i] = true;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != PT_PASS)
			FAIL("child %d: status %#x", (int)children[i], status);
	}
}

static void kill_children(void)
{
	for (int i = 0; i < nchildren; i++)
		if (!reaped[i])
			kill(children[i], SIGKILL);
}

static void coordinate(void)
{
	int64_t end;
	int fds = 0, threads = 0;

	for (int i = 0; i < sh->nwaiters; i++) {
		if (sh->w[i].kind == THREAD)
			threads++;
		else
			fds += sh->w[i].nfds;
	}
	for (int r = 1; r <= ROUNDS; r++) {
		CHECK_EQ(pollfs_event_is_set(&sh->ev), 0);
		atomic_store(&sh->round, r);
		fx_futex(&sh->round, FUTEX_WAKE, INT_MAX, 0, NULL, 0);

		/* everyone asleep, past its arming */
		end = pt_mono() + MS(PT_WAIT_MS);
		for (int i = 0; i < sh->nwaiters; i++) {
			struct waiter *w = &sh->w[i];

			while (atomic_load(&w->phase) != r) {
				reap_children(false);
				if (pt_mono() > end)
					FAIL("round %d: waiter %d not ready",
					     r, i);
				pt_sleep_ms(1);
			}
			fx_wait_sleeping(atomic_load(&w->tid),
					 w->kind == THREAD ? SYS_futex :
							     PT_SYS_EPOLL_WAIT);
		}
		CHECK_EQ(atomic_load(&sh->w[0].done), r - 1);

		/* one set */
		pollfs_event_set(&sh->ev);
		end = pt_mono() + MS(PT_WAIT_MS);
		for (int i = 0; i < sh->nwaiters; i++) {
			while (atomic_load(&sh->w[i].done) != r) {
				reap_children(false);
				if (pt_mono() > end)
					FAIL("round %d: waiter %d (%s) not woken "
					     "by the set", r, i,
					     sh->w[i].kind == THREAD ?
					     "thread in pollfs_event_wait" :
					     "epoll loop");
				pt_sleep_ms(1);
			}
		}
		pollfs_event_reset(&sh->ev);
	}
	pt_diag("%d rounds: %d threads and %d futex objects woken by each "
		"set", ROUNDS, threads, fds);
}

/* All in this process, on a private event. */
static void run_private(void)
{
	pthread_t th[MAX_WAITERS];
	int n;

	memset(sh, 0, sizeof(*sh));
	pollfs_event_init(&sh->ev, 0);
	for (int i = 0; i < 4; i++)
		add_waiter(THREAD, 0);
	add_waiter(LOOP, 2);
	add_waiter(LOOP, 3);
	add_waiter(LOOP, 1);
	n = sh->nwaiters;
	start_threads(0, n, th);
	coordinate();
	join_threads(n, th);
}

/* Threads and loops here and in two children, on a shared event. */
static void run_shared(void)
{
	pthread_t th[MAX_WAITERS];
	int first_child;

	memset(sh, 0, sizeof(*sh));
	pollfs_event_init(&sh->ev, POLLFS_FUTEX_SHARED);
	/* here */
	add_waiter(THREAD, 0);
	add_waiter(THREAD, 0);
	add_waiter(LOOP, 2);
	first_child = sh->nwaiters;
	/* child 1: threads and a loop */
	add_waiter(THREAD, 0);
	add_waiter(THREAD, 0);
	add_waiter(LOOP, 3);
	/* child 2: a loop alone */
	add_waiter(LOOP, 2);

	pt_on_fail(kill_children);
	memset(reaped, 0, sizeof(reaped));
	children[nchildren++] = spawn(first_child, first_child + 3);
	children[nchildren++] = spawn(first_child + 3, first_child + 4);
	start_threads(0, first_child, th);
	coordinate();
	join_threads(first_child, th);
	reap_children(true);
	for (int i = 0; i < nchildren; i++)
		CHECK(reaped[i]);
	nchildren = 0;
	pt_on_fail(NULL);
}

int main(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	run_private();
	run_shared();
	return PT_PASS;
}
