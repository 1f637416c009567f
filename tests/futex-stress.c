// SPDX-License-Identifier: MIT
/*
 * Stress: several processes, each with waiter and waker threads, thousands
 * of objects, at least 100,000 arm/wake/read cycles mixing private and
 * shared futexes and wait-any, every wake counted.
 *
 * Each worker process has two waiter threads (one watching its objects
 * with epoll, one with poll), each owning S objects, and two waker
 * threads.  An object waits on one word (private or shared) or on two or
 * three at once (wait-any, mixed).  A waiter arms its idle objects with
 * the words' current values; a waker picks a word, increments it and
 * FUTEX_WAKEs it (wake, wake-all or wake-bitset), as a futex user does;
 * shared words are woken from any process, private ones from their own;
 * now and then a waker wakes another process's private word at the same
 * address, which must count nothing.  Checked:
 *  - every FUTEX_WAKE returns 0 or 1 (one object per word);
 *  - every record read is one its object was armed with, at most once
 *    per read;
 *  - no record without a wake: when a record of a word is read, the
 *    records of that word read so far are at most the FUTEX_WAKEs of it
 *    that counted 1 or are still under way;
 *  - an fd reported readable always has a record;
 *  - once all wakers stopped, every object still armed has its words at
 *    the armed values (no wake lost); for every word, the FUTEX_WAKE
 *    counts equal the records read, and so do their sums: none lost,
 *    none counted twice;
 *  - after every object is closed no wake counts anything.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

PT_BUDGET(58);

#define NPROC		4
#define WAITERS		2
#define WAKERS		2
#define SMAX		512
#define TARGET		200000L	/* cycles: stop there */
/* Fail with fewer in BUDGET_S; a kernel pt_time_scale() times slower (a
 * KASAN and lockdep one) is held to that fraction of them. */
#define MIN_CYCLES	100000L
#define BUDGET_S	40
#define WPS		3	/* words per object */
#define NWORDS		(NPROC * WAITERS * SMAX * WPS)

struct shared {
	atomic_int stop, abort, wakers_done, started;
	atomic_long cycles, records, wakes, calls, foreign, arms, eagain;
	int64_t deadline;
	int s;		/* objects per waiter */
	uint32_t words[NWORDS];
	/* per word (index g * WPS + j, private words too): wakes under way,
	 * wakes that counted 1, records read */
	atomic_uint inflight[NWORDS], woken[NWORDS], taken[NWORDS];
};

static struct shared *sh;
/* private words: at the same address in every process */
static uint32_t *priv;
static int me;			/* worker number */

static int nobj(void)
{
	return NPROC * WAITERS * sh->s;
}

/* Object g's kind: how many records and whether record j is shared. */
static int nrec_of(int g)
{
	return (g % 4 < 2) ? 1 : g % 4;
}

static bool shared_of(int g, int j)
{
	switch (g % 4) {
	case 0:
		return false;
	case 1:
		return true;
	case 2:
		return j == 1;
	default:
		return j != 1;
	}
}

static uint32_t *word_of(int g, int j)
{
	return shared_of(g, j) ? &sh->words[g * WPS + j] : &priv[g * WPS + j];
}

static int owner_of(int g)
{
	return g / (WAITERS * sh->s);
}

static void on_fail(void)
{
	atomic_store(&sh->abort, 1);
	atomic_store(&sh->stop, 1);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* ---- waker ---- */

static void *waker(void *arg)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(me * 64 + 1 +
							(intptr_t)arg);
	long wakes = 0, calls = 0, foreign = 0;
	int window = 0, window_hits = 0;
	int per = WAITERS * sh->s;

	while (!atomic_load(&sh->stop)) {
		uint64_t r = rnd(&x);
		int g, j, n;
		uint32_t *w;
		long ret;

		if (r % 32 == 0) {
			/* another process's private word, at the same
			 * address here: another futex, nothing to wake */
			int other = (me + 1 + (int)((r >> 8) % (NPROC - 1))) %
				    NPROC;

			g = other * per + (int)((r >> 16) % (uint64_t)per);
			g -= g % 4;	/* kind 0: one private word */
			ret = fx_wake(word_of(g, 0), INT_MAX, FX_PRIVATE);
			if (ret != 0)
				FAIL("private wake of process %d's word from "
				     "process %d counted %ld", other, me, ret);
			foreign++;
			continue;
		}
		g = (int)((r >> 8) % (uint64_t)nobj());
		j = (int)((r >> 40) % (uint64_t)nrec_of(g));
		if (!shared_of(g, j) && owner_of(g) != me)
			g = me * per + g % per;	/* same kind, our own */
		w = word_of(g, j);
		__atomic_fetch_add(w, 1, __ATOMIC_SEQ_CST);
		atomic_fetch_add(&sh->inflight[g * WPS + j], 1);
		n = (r >> 50) % 4 == 0 ? INT_MAX : 1;
		if ((r >> 52) % 8 == 0)
			ret = fx_futex(w, fx_op(FUTEX_WAKE_BITSET,
					       shared_of(g, j) ? FX_SHARED : 0),
				       (uint32_t)n, 0, NULL,
				       (uint32_t)(r >> 20) | 1u);
		else
			ret = fx_futex(w, fx_op(FUTEX_WAKE,
					       shared_of(g, j) ? FX_SHARED : 0),
				       (uint32_t)n, 0, NULL, 0);
		if (ret < 0 || ret > 1)
			FAIL("FUTEX_WAKE of object %d word %d returned %ld "
			     "(errno %d)", g, j, ret, errno);
		/* counted before it is no longer under way: see consume() */
		atomic_fetch_add(&sh->woken[g * WPS + j], (unsigned int)ret);
		atomic_fetch_sub(&sh->inflight[g * WPS + j], 1);
		wakes += ret;
		calls++;
		window_hits += (int)ret;
		/* when most wakes find nothing armed, the waiters are behind:
		 * leave them the CPU for a moment */
		if (++window == 32) {
			if (window_hits < 8)
				pt_sleep_ms(1);
			window = window_hits = 0;
		}
	}
	atomic_fetch_add(&sh->wakes, wakes);
	atomic_fetch_add(&sh->calls, calls);
	atomic_fetch_add(&sh->foreign, foreign);
	atomic_fetch_add(&sh->wakers_done, 1);
	return NULL;
}

/* ---- waiter ---- */

struct obj {
	int fd;
	bool armed;
	struct pollfs_futex_event ev[WPS];
};

struct waiter {
	int t, g0, s;
	bool use_epoll;
	struct obj *o;
	long cycles, records, arms, eagain;
};

static void arm(struct waiter *w, int i)
{
	struct obj *o = &w->o[i];
	int g = w->g0 + i, n = nrec_of(g);
	ssize_t r;

	for (int j = 0; j < n; j++) {
		uint32_t *word = word_of(g, j);

		o->ev[j] = fx_ev(word, __atomic_load_n(word, __ATOMIC_SEQ_CST),
				 shared_of(g, j) ? FX_SHARED : FX_PRIVATE);
	}
	r = write(o->fd, o->ev, (size_t)n * sizeof(o->ev[0]));
	if (r == n * FX_REC) {
		o->armed = true;
		w->arms++;
	} else if (r == -1 && errno == EAGAIN) {
		w->eagain++;	/* a word moved on meanwhile: again later */
	} else {
		FAIL("arming object %d (%d records): write returned %zd, "
		     "errno %d (%s)", g, n, r, errno, strerror(errno));
	}
}

/* Reads object i, reported readable (or, with must == false, maybe). */
static void consume(struct waiter *w, int i, bool must)
{
	struct pollfs_futex_event buf[WPS + 1];
	struct obj *o = &w->o[i];
	int g = w->g0 + i, n = nrec_of(g);
	bool seen[WPS] = { false };
	ssize_t r;

	r = read(o->fd, buf, sizeof(buf));
	if (r == -1 && errno == EAGAIN && !must)
		return;
	if (r <= 0 || r % FX_REC || r > n * FX_REC)
		FAIL("object %d (%s, %d records, %s): read returned %zd, "
		     "errno %d (%s)", g, o->armed ? "armed" : "unarmed", n,
		     must ? "reported readable" : "drain", r, errno,
		     strerror(errno));
	if (!o->armed)
		FAIL("object %d: a record while unarmed", g);
	for (int k = 0; k < r / FX_REC; k++) {
		int j;

		for (j = 0; j < n; j++)
			if (!memcmp(&buf[k], &o->ev[j], sizeof(buf[k])))
				break;
		if (j == n || seen[j])
			FAIL("object %d: record {%#llx, %u, %#x} %s", g,
			     (unsigned long long)buf[k].addr, buf[k].val,
			     buf[k].flags, j == n ? "never armed" : "twice");
		seen[j] = true;
		/* each record comes from its own FUTEX_WAKE that counted 1,
		 * done or under way: inflight read first, so that a wake
		 * moving from under way to done is seen in one or the other */
		{
			unsigned int wi = (unsigned int)(g * WPS + j);
			unsigned int t = atomic_fetch_add(&sh->taken[wi], 1);
			unsigned int f, d;

			t++;
			f = atomic_load(&sh->inflight[wi]);
			d = atomic_load(&sh->woken[wi]);
			if (t > d + f)
				FAIL("object %d word %d: record %u read, with "
				     "%u wakes counted and %u under way: a "
				     "record without a wake", g, j, t, d, f);
		}
	}
	w->records += r / FX_REC;
	w->cycles++;
	o->armed = false;
	/* now and then: the object is unarmed after its read */
	if ((w->cycles & 15) == 0) {
		errno = 0;
		if (read(o->fd, buf, sizeof(buf)) != -1 || errno != EINVAL)
			FAIL("object %d: read after the read: errno %d, "
			     "expected EINVAL", g, errno);
	}
}

static void *waiter(void *arg)
{
	struct waiter *w = arg;
	struct epoll_event ev[64];
	struct pollfd *pfd;
	long flushed = 0;
	int ep = -1;

	pfd = calloc((size_t)w->s, sizeof(*pfd));
	CHECK(pfd);
	if (w->use_epoll)
		ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	for (int i = 0; i < w->s; i++) {
		struct epoll_event e = { .events = EPOLLIN,
					 .data.u32 = (uint32_t)i };

		pfd[i] = (struct pollfd){ .fd = w->o[i].fd, .events = POLLIN };
		if (ep >= 0)
			CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, w->o[i].fd, &e));
	}

	while (!atomic_load(&sh->stop)) {
		int n;

		for (int i = 0; i < w->s; i++)
			if (!w->o[i].armed)
				arm(w, i);
		if (ep >= 0) {
			n = epoll_wait(ep, ev, 64, 50);
			if (n < 0 && errno == EINTR)
				continue;
			CHECK_SYS(n);
			for (int k = 0; k < n; k++) {
				if (ev[k].events != EPOLLIN)
					FAIL("epoll events %#x", ev[k].events);
				consume(w, (int)ev[k].data.u32, true);
			}
		} else {
			n = poll(pfd, (nfds_t)w->s, 50);
			if (n < 0 && errno == EINTR)
				continue;
			CHECK_SYS(n);
			for (int i = 0; i < w->s && n; i++) {
				if (!pfd[i].revents)
					continue;
				if (pfd[i].revents != POLLIN)
					FAIL("poll revents %#x",
					     pfd[i].revents);
				consume(w, i, true);
				n--;
			}
		}
		if (w->cycles - flushed >= 256) {
			long total = atomic_fetch_add(&sh->cycles,
						      w->cycles - flushed) +
				     (w->cycles - flushed);

			flushed = w->cycles;
			if (total >= TARGET)
				atomic_store(&sh->stop, 1);
		}
		if (pt_mono() > sh->deadline)
			atomic_store(&sh->stop, 1);
	}

	/* every waker everywhere done: what is woken is readable now */
	while (atomic_load(&sh->wakers_done) < NPROC * WAKERS) {
		if (atomic_load(&sh->abort))
			_exit(PT_FAIL);
		pt_sleep_ms(1);
	}
	for (int i = 0; i < w->s; i++) {
		struct obj *o = &w->o[i];
		int g = w->g0 + i;

		if (!o->armed) {
			fx_expect_unarmed(o->fd);
			continue;
		}
		consume(w, i, false);
		if (!o->armed)
			continue;
		/* still armed: no waker touched its words */
		for (int j = 0; j < nrec_of(g); j++)
			if (*word_of(g, j) != o->ev[j].val)
				FAIL("object %d word %d: %u, armed at %u, and "
				     "no record: a wake was lost", g, j,
				     *word_of(g, j), o->ev[j].val);
		fx_expect_armed(o->fd);
	}
	atomic_fetch_add(&sh->cycles, w->cycles - flushed);
	atomic_fetch_add(&sh->records, w->records);
	atomic_fetch_add(&sh->arms, w->arms);
	atomic_fetch_add(&sh->eagain, w->eagain);
	for (int i = 0; i < w->s; i++)
		CHECK_SYS(close(w->o[i].fd));
	if (ep >= 0)
		CHECK_SYS(close(ep));
	free(pfd);
	return NULL;
}

static int worker(void)
{
	struct waiter w[WAITERS];
	pthread_t wt[WAITERS], kt[WAKERS];
	int per = WAITERS * sh->s;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	pt_on_fail(on_fail);
	for (int t = 0; t < WAITERS; t++) {
		w[t] = (struct waiter){ .t = t, .s = sh->s,
					.g0 = me * per + t * sh->s,
					.use_epoll = t == 0 };
		w[t].o = calloc((size_t)sh->s, sizeof(struct obj));
		CHECK(w[t].o);
		for (int i = 0; i < sh->s; i++)
			w[t].o[i].fd = fx_new(POLLFS_NONBLOCK);
	}
	atomic_fetch_add(&sh->started, 1);
	while (atomic_load(&sh->started) < NPROC)
		pt_sleep_ms(1);
	for (int t = 0; t < WAITERS; t++)
		CHECK_EQ(pthread_create(&wt[t], NULL, waiter, &w[t]), 0);
	for (int k = 0; k < WAKERS; k++)
		CHECK_EQ(pthread_create(&kt[k], NULL, waker,
					(void *)(intptr_t)k), 0);
	for (int k = 0; k < WAKERS; k++)
		CHECK_EQ(pthread_join(kt[k], NULL), 0);
	for (int t = 0; t < WAITERS; t++)
		CHECK_EQ(pthread_join(wt[t], NULL), 0);

	/* all closed: no waiter left on this process's private words */
	for (int g = me * per; g < (me + 1) * per; g++)
		for (int j = 0; j < nrec_of(g); j++)
			if (!shared_of(g, j))
				CHECK_EQ(fx_wake(word_of(g, j), INT_MAX,
						 FX_PRIVATE), 0);
	return PT_PASS;
}

int main(void)
{
	struct rlimit rl;
	pid_t pid[NPROC];
	int64_t t0;
	long fds_max;
	int failed = 0;

	/* 4096 descriptors per process if allowed (root may raise the hard
	 * limit), else as many as the hard limit allows */
	CHECK_SYS(getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur < 4096) {
		struct rlimit want = { 4096, 4096 };

		if (rl.rlim_max >= 4096)
			want.rlim_max = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &want)) {
			rl.rlim_cur = rl.rlim_max;
			CHECK_SYS(setrlimit(RLIMIT_NOFILE, &rl));
		}
	}
	CHECK_SYS(getrlimit(RLIMIT_NOFILE, &rl));
	fds_max = (long)rl.rlim_cur;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	priv = mmap(NULL, sizeof(sh->words), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED && priv != MAP_FAILED);
	sh->s = (int)((fds_max - 64) / WAITERS);
	if (sh->s > SMAX)
		sh->s = SMAX;
	sh->s -= sh->s % 4;
	if (sh->s < 64)
		pt_skip("RLIMIT_NOFILE %ld is too low", fds_max);
	t0 = pt_mono();
	sh->deadline = t0 + (int64_t)BUDGET_S * NSEC_PER_SEC;

	pt_on_fail(on_fail);
	for (int p = 0; p < NPROC; p++) {
		pid[p] = fx_fork();
		if (pid[p] == 0) {
			me = p;
			_exit(worker());
		}
	}
	for (int p = 0; p < NPROC; p++) {
		int status;

		CHECK_EQ(waitpid(pid[p], &status, 0), pid[p]);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != PT_PASS) {
			pt_diag("worker %d: status %#x", p, status);
			failed = 1;
			atomic_store(&sh->abort, 1);
			atomic_store(&sh->stop, 1);
		}
	}
	if (failed)
		FAIL("a worker failed");

	pt_diag("%ld arm/wake/read cycles in %.1f s: %d processes x (%d "
		"waiters + %d wakers), %d objects; %ld records read; %ld "
		"FUTEX_WAKE calls counted %ld waiters; %ld arms, %ld EAGAIN; "
		"%ld foreign private wakes counted 0",
		atomic_load(&sh->cycles),
		(double)(pt_mono() - t0) / NSEC_PER_SEC, NPROC, WAITERS,
		WAKERS, nobj(), atomic_load(&sh->records),
		atomic_load(&sh->calls),
		atomic_load(&sh->wakes), atomic_load(&sh->arms),
		atomic_load(&sh->eagain), atomic_load(&sh->foreign));
	for (int g = 0; g < nobj(); g++)
		for (int j = 0; j < nrec_of(g); j++) {
			unsigned int wi = (unsigned int)(g * WPS + j);

			if (atomic_load(&sh->woken[wi]) !=
			    atomic_load(&sh->taken[wi]))
				FAIL("object %d word %d: %u wakes counted, %u "
				     "records read", g, j,
				     atomic_load(&sh->woken[wi]),
				     atomic_load(&sh->taken[wi]));
		}
	CHECK_EQ(atomic_load(&sh->records), atomic_load(&sh->wakes));
	CHECK(atomic_load(&sh->cycles) >= MIN_CYCLES / pt_time_scale());

	/* every object closed: no waiter left on any shared word */
	for (int g = 0; g < nobj(); g++)
		for (int j = 0; j < nrec_of(g); j++)
			if (shared_of(g, j))
				CHECK_EQ(fx_wake(word_of(g, j), INT_MAX,
						 FX_SHARED), 0);
	return PT_PASS;
}
