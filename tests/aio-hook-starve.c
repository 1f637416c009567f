// SPDX-License-Identifier: MIT
/*
 * No user can make another user's AIO object miss a completion by
 * draining the return hooks of aio_complete() (issue 24, part 1).
 *
 * An AIO object learns of a completion at the return of aio_complete(),
 * hooked from its entry with a rethook node taken from a pool that every
 * user of the machine shares (64 nodes per possible CPU).  A completion
 * that finds the pool empty has no return hooked, and nothing wakes the
 * objects of its context: epoll never reports them, though the ring
 * holds the completion.  A node must therefore never stay held while its
 * task is off the CPU, or a user parks as many as it has threads.
 *
 * The attack, by uid/gid 65534, one process pinned to each CPU:
 *  - submitters, SCHED_IDLE threads that each write to /dev/null through
 *    an AIO context of their own, with IOCB_FLAG_RESFD: the write
 *    completes inline, and aio_complete() signals the eventfd;
 *  - a thread of normal priority asleep on that eventfd: the signal
 *    wakes it, and a woken normal task preempts an idle one at once, on
 *    a fully preemptible kernel at the unlock in eventfd_signal(), so
 *    the submitter sits preempted inside aio_complete() with its node;
 *  - spinners of normal priority (HOGS_PER_CPU), started once every
 *    submitter has been parked so: they keep the idle threads off the
 *    CPU, and a parked thread keeps its node until its next turn;
 *  - submitters held in reserve and let go one by one during the
 *    attack, whose first write takes any node left free (RESERVE).
 * With voluntary preemption the switch waits for the return to user
 * space, and nothing is held: boot the guest with preempt=full to see
 * the attack succeed on a module that holds a node across a preemption.
 * It is made for 6.1's scheduler (CFS): on 6.12's and 7.3's (EEVDF) it
 * has made no victim miss under emulation yet, and the test passes there
 * either way.
 *
 * Beside it the victim, this process (root), has an AIO context and an
 * AIO object in an epoll set for each of its writes, one write at a
 * time.  The write completes inside io_submit(), so its wake-up has come
 * by then or never will; epoll is given WAKE_MS all the same.  A
 * completion that io_getevents() finds in the ring while epoll reported
 * nothing is missed.  Writes before and after the attack show that the
 * objects are woken without it, so that a miss is the attack's.
 *
 * The whole attack, from the start of the submitters to their death,
 * lasts well under the 21 s after which the kernel reports a task that
 * holds up RCU: an idle thread that the scheduler leaves behind may sit
 * preempted inside an RCU read-side section (preempt=full).
 */
#include "lib/aio.h"
#include "lib/futex.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

PT_BUDGET(50);

/* Return hooks per possible CPU in the module's pool. */
#define POOL_PER_CPU		64
/* Submitters at the start, over all CPUs, unless the pool needs more. */
#define SUBMITTERS		300
#define MAX_SUBMITTERS		2048
#define MAX_CPUS		64
/*
 * Normal threads spinning on each CPU once the submitters are parked:
 * an idle thread's share of the CPU against them is 3 / (64 x 1024 + 3 x
 * the idle threads), and each turn of one that holds a node gives the
 * node back until that thread is parked again.
 */
#define HOGS_PER_CPU		64
/*
 * Submitters held in reserve on each CPU, set up and asleep, and let go
 * one by one during the attack.  A node comes free and stays free when a
 * parked thread resumes and is preempted again before its next write (by
 * the tick, or because the emulator's host took the vCPU away and the
 * scheduler charged the thread for that time, which leaves it behind
 * the others for seconds), and when the victim's own completion gives
 * its node back where its next one takes it.  The parked submitters
 * cannot be counted on to take such a node: those holding none may be
 * the ones left behind, and the spinners keep the others' turns rare.
 * A submitter woken from its sleep is placed level with the spinners
 * and has its turn within milliseconds; its first write takes whatever
 * node is free.
 */
#define RESERVE			200
#define RELEASE_EVERY_MS	25
/* Small stacks, for hundreds of threads; arm64's glibc allows no less than 128 KiB. */
#define THREAD_STACK		(64 * 1024 < PTHREAD_STACK_MIN ? \
				 PTHREAD_STACK_MIN : 64 * 1024)

/* The victim's writes during the attack, and before and after it. */
#define ROUNDS			10
#define CONTROL_ROUNDS		3
/* Between two writes of the victim, and after each during the attack. */
#define ROUND_GAP_MS		200
#define ROUND_WAIT_MS		200
/* How long a wake-up may take: epoll is watched that long. */
#define WAKE_MS			2000
/* How long the attacker threads may take to be made. */
#define START_MS		20000
/* How long the submitters may take to be parked once each. */
#define PARK_MS			3000
/* How long the attack runs before the victim's first write. */
#define SETTLE_MS		500
/*
 * How long the attack may run, from the start of the submitters: it
 * ends with fewer of the victim's writes rather than later (see the
 * head comment on RCU).  Stretched on a slower kernel (POLLFS_TIME_SCALE)
 * like every limit, where starting the submitters alone took as long
 * (check-race's KCSAN kernel: 12.4 s); the slow kernels are the debug
 * ones, not fully preemptible, and the RT one, which boosts preempted
 * RCU readers.
 */
#define ATTACK_MS		12000

/* Written by the attackers, read by the victim: MAP_SHARED. */
struct attack_stats {
	atomic_int expected;	/* submitters at the start, all attackers */
	atomic_int started;	/* ... set up and waiting */
	atomic_int failed;	/* ... that could not be made or set up */
	atomic_int ran;		/* submitters that completed a write */
	atomic_int released;	/* reserve submitters let go */
	atomic_int spinning;	/* attackers whose spinners run */
	atomic_int inside;	/* submitters inside io_submit() now */
	atomic_long writes;	/* writes completed */
	atomic_llong go_ns;	/* when the first attacker let its go */
};

static struct attack_stats *stats;
static pid_t attackers[MAX_CPUS];
static int nr_attackers;

/* What the threads of one attacker process share. */
static int attack_efd;
static int attack_null;
static atomic_uint attack_go;	/* futex words: every thread is up, */
static atomic_uint hogs_go;	/* every submitter has been parked, */
static atomic_uint reserve_go[RESERVE];	/* let this one go */
static atomic_int reserve_ready;
static pthread_attr_t attack_attr;

/* Kills every attacker process and reaps it; idempotent. */
static void stop_attack(void)
{
	/* all killed first: they die together, not one after another */
	for (int i = 0; i < nr_attackers; i++)
		if (attackers[i] > 0)
			kill(attackers[i], SIGKILL);
	for (int i = 0; i < nr_attackers; i++) {
		if (attackers[i] <= 0)
			continue;
		pt_kill_reap(attackers[i]);
		attackers[i] = 0;
	}
}

static void wait_go(atomic_uint *go)
{
	while (!atomic_load(go))
		fx_futex(go, FUTEX_WAIT_PRIVATE, 0, 0, NULL, 0);
}

static void set_go(atomic_uint *go)
{
	atomic_store(go, 1);
	fx_futex(go, FUTEX_WAKE_PRIVATE, INT_MAX, 0, NULL, 0);
}

/*
 * Asleep on the eventfd, and asleep again at once after each wake-up:
 * the next completion's signal must find it asleep to preempt.
 */
static void *preempter(void *arg)
{
	uint64_t v;

	(void)arg;
	for (;;)
		if (read(attack_efd, &v, sizeof(v)) != sizeof(v) &&
		    errno != EINTR)
			FAIL("attacker: read(eventfd): %s", strerror(errno));
	return NULL;
}

static void *hog(void *arg)
{
	(void)arg;
	wait_go(&hogs_go);
	for (;;)
		;
	return NULL;
}

/* @arg: NULL, or 1 + the index of a submitter held in reserve. */
static void *submitter(void *arg)
{
	struct sched_param sp = { .sched_priority = 0 };
	intptr_t reserve = (intptr_t)arg;
	static const char byte = 'x';
	volatile struct ax_ring_head *ring = NULL;
	struct iocb cb, *cbp = &cb;
	aio_context_t ctx = 0;
	bool ran = false;

	/*
	 * One write first, then SCHED_IDLE: the scheduler charges an idle
	 * thread's CPU time some 340 times over, and a thread that did its
	 * setup, or faulted in its first write's pages, as one would get
	 * its next turn seconds after the others.
	 */
	ax_prep_pwrite(&cb, attack_null, &byte, 1, 0, 0);
	if (!ax_sys_setup(4, &ctx)) {
		ring = ax_ring(ctx);
		if (ax_sys_submit(ctx, 1, &cbp) != 1)
			ring = NULL;
	}
	if (!ring || sched_setscheduler(0, SCHED_IDLE, &sp)) {
		atomic_fetch_add(reserve ? &reserve_ready : &stats->failed, 1);
		return NULL;
	}
	ring->head = ring->tail;
	if (reserve) {
		atomic_fetch_add(&reserve_ready, 1);
		wait_go(&reserve_go[reserve - 1]);
	} else {
		atomic_fetch_add(&stats->started, 1);
		wait_go(&attack_go);
	}
	for (;;) {
		ax_prep_pwrite(&cb, attack_null, &byte, 1, 0, 0);
		cb.aio_flags = IOCB_FLAG_RESFD;
		cb.aio_resfd = (__u32)attack_efd;
		atomic_fetch_add(&stats->inside, 1);
		if (ax_sys_submit(ctx, 1, &cbp) != 1)
			FAIL("attacker: io_submit: %s", strerror(errno));
		atomic_fetch_sub(&stats->inside, 1);
		if (!ran) {
			atomic_fetch_add(&stats->ran, 1);
			ran = true;
		}
		atomic_fetch_add(&stats->writes, 1);
		/*
		 * Reaped by moving the ring's head, as libaio does: no
		 * io_getevents() between two completions, whose time a
		 * resumed thread would spend with no node held.
		 */
		ring->head = ring->tail;
	}
	return NULL;
}

static void *releaser(void *arg)
{
	(void)arg;
	wait_go(&hogs_go);
	for (int i = 0; i < RESERVE; i++) {
		pt_sleep_ms(RELEASE_EVERY_MS);
		set_go(&reserve_go[i]);
		atomic_fetch_add(&stats->released, 1);
	}
	return NULL;
}

/*
 * An attacker process: uid 65534, every thread pinned to @cpu, @n
 * submitters to start with.  Those it cannot make (a limit of the guest)
 * count as failed, and the victim judges whether enough ran.
 */
static void attacker(int cpu, int n, pid_t parent)
{
	cpu_set_t set;
	pthread_t th;
	int64_t t;

	pt_on_fail(NULL);
	alarm(0);
	pt_become_nobody();
	/* After the credentials change, which clears the death signal. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(PT_FAIL);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		FAIL("attacker: sched_setaffinity(CPU %d): %s", cpu,
		     strerror(errno));
	attack_efd = CHECK_SYS(eventfd(0, EFD_CLOEXEC));
	attack_null = CHECK_SYS(open("/dev/null", O_WRONLY | O_CLOEXEC));
	CHECK(!pthread_attr_init(&attack_attr));
	CHECK(!pthread_attr_setstacksize(&attack_attr, THREAD_STACK));
	if (pthread_create(&th, &attack_attr, preempter, NULL))
		FAIL("attacker: cannot make its preempting thread");
	for (int i = 0; i < HOGS_PER_CPU; i++)
		if (pthread_create(&th, &attack_attr, hog, NULL))
			FAIL("attacker: cannot make its spinning threads");
	if (pthread_create(&th, &attack_attr, releaser, NULL))
		FAIL("attacker: cannot make its releasing thread");
	for (int i = 0; i < n; i++) {
		if (pthread_create(&th, &attack_attr, submitter, NULL)) {
			atomic_fetch_add(&stats->failed, n - i);
			break;
		}
	}
	for (intptr_t i = 0; i < RESERVE; i++)
		if (pthread_create(&th, &attack_attr, submitter,
				   (void *)(i + 1)))
			FAIL("attacker: cannot make its reserve submitters");

	/*
	 * Every thread of every attacker made first, then the submitters
	 * let go together: this thread would compete with them for its CPU.
	 * The spinners last: an idle thread would wait behind them for its
	 * first turn.
	 */
	while (atomic_load(&stats->started) + atomic_load(&stats->failed) <
	       atomic_load(&stats->expected) ||
	       atomic_load(&reserve_ready) < RESERVE)
		pt_sleep_ms(1);
	t = pt_mono();
	atomic_compare_exchange_strong(&stats->go_ns, &(long long){ 0 }, t);
	set_go(&attack_go);
	while (atomic_load(&stats->ran) + atomic_load(&stats->failed) <
	       atomic_load(&stats->expected) && pt_mono() - t < MS(PARK_MS))
		pt_sleep_ms(1);
	set_go(&hogs_go);
	atomic_fetch_add(&stats->spinning, 1);
	for (;;)
		pause();
}

/* Possible CPUs, which the module's pool is sized by. */
static int possible_cpus(void)
{
	char buf[256], *p = buf, *end;
	int n = 0;

	if (pt_read_file("/sys/devices/system/cpu/possible", buf,
			 sizeof(buf)) < 0)
		FAIL("/sys/devices/system/cpu/possible: %s", strerror(errno));
	for (;;) {
		long a = strtol(p, &end, 10), b = a;

		if (end == p)
			break;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
		}
		n += (int)(b - a + 1);
		if (*end != ',')
			break;
		p = end + 1;
	}
	CHECK(n > 0);
	return n;
}

/*
 * The victim's AIO contexts and objects: one for each write during the
 * attack, so that a wake-up that comes late is still told from one that
 * never comes, and one for the writes before and after it.
 */
struct victim {
	aio_context_t ctx;
	int fd;
	bool submitted, reported;
	int64_t submit_ns;
};

static struct victim victims[ROUNDS + 1];
static int victim_ep, victim_null;

static void victim_setup(void)
{
	struct epoll_event e = { .events = EPOLLIN };

	victim_ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	victim_null = CHECK_SYS(open("/dev/null", O_WRONLY | O_CLOEXEC));
	for (int i = 0; i <= ROUNDS; i++) {
		victims[i].ctx = ax_setup(4);
		victims[i].fd = ax_fd(victims[i].ctx, POLLFS_NONBLOCK);
		e.data.u32 = (uint32_t)i;
		CHECK_SYS(epoll_ctl(victim_ep, EPOLL_CTL_ADD, victims[i].fd,
				    &e));
	}
}

static void victim_submit(int i)
{
	static const char byte = 'v';
	struct iocb cb, *cbp = &cb;

	ax_prep_pwrite(&cb, victim_null, &byte, 1, 0, (uint64_t)i);
	victims[i].submitted = true;
	victims[i].reported = false;
	victims[i].submit_ns = pt_mono();
	ax_submit(victims[i].ctx, 1, &cbp);
}

/* Reaps the completion of write @i, which must be in its ring. */
static void victim_reap(int i)
{
	struct timespec zero = { 0, 0 };
	struct io_event ev;

	if (ax_sys_getevents(victims[i].ctx, 1, 1, &ev, &zero) != 1)
		FAIL("the victim's write %d is not in its ring", i);
	ax_check_event(&ev, (uint64_t)i, 1);
	victims[i].submitted = false;
}

/*
 * What epoll reports within @timeout_ms: each object reported is reaped
 * (level-triggered, with nothing left to read it is reported no more).
 */
static void victim_collect(int timeout_ms)
{
	struct epoll_event e[ROUNDS + 1];
	int n;

	do
		n = epoll_wait(victim_ep, e, ROUNDS + 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	CHECK(n >= 0);
	for (int k = 0; k < n; k++) {
		int i = (int)e[k].data.u32;

		CHECK_EQ(e[k].events, EPOLLIN);
		if (!victims[i].submitted)
			continue;
		victims[i].reported = true;
		victim_reap(i);
	}
}

/* One write through the control object, which epoll must report. */
static void victim_control(const char *when)
{
	victim_submit(ROUNDS);
	victim_collect(WAKE_MS * (int)pt_time_scale());
	if (!victims[ROUNDS].reported)
		FAIL("%s the attack, a completion woke nothing", when);
}

int main(void)
{
	int min_inside = INT_MAX, max_inside = 0, missed = 0;
	int ncpus, possible, pool, total, per_cpu, cpus[MAX_CPUS];
	int64_t t0, t_go, t_kill, deadline;
	long writes0, writes1;
	cpu_set_t set;
	int ran, rounds;

	/* Threads made, 20 s at most; the attack, 10 s; the rest, 5 s. */
	if (geteuid() != 0)
		pt_diag("not root: the victim is uid %d, as the attacker",
			(int)geteuid());

	CHECK_SYS(sched_getaffinity(0, sizeof(set), &set));
	ncpus = 0;
	for (int c = 0; c < CPU_SETSIZE && ncpus < MAX_CPUS; c++)
		if (CPU_ISSET(c, &set))
			cpus[ncpus++] = c;
	possible = possible_cpus();
	pool = POOL_PER_CPU * possible;
	total = SUBMITTERS;
	if (total < pool * 2)
		total = pool * 2;
	if (total > MAX_SUBMITTERS)
		total = MAX_SUBMITTERS;
	per_cpu = (total + ncpus - 1) / ncpus;
	total = per_cpu * ncpus;
	pt_diag("%d CPUs online, %d possible: the pool holds %d return hooks; "
		"%d submitters to start with, %d per CPU", ncpus, possible,
		pool, total, per_cpu);
	if (total <= pool)
		pt_skip("%d threads cannot hold %d hooks", total, pool);

	victim_setup();
	for (int i = 0; i < CONTROL_ROUNDS; i++)
		victim_control("without");

	stats = mmap(NULL, sizeof(*stats), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(stats != MAP_FAILED);
	atomic_store(&stats->expected, total);
	pt_on_fail(stop_attack);
	/*
	 * The victim runs first whenever it is ready (SCHED_FIFO), so that
	 * the spinners do not stretch its part, and the attack with it,
	 * past ATTACK_MS; the attackers are forked with the normal policy.
	 */
	if (geteuid() == 0) {
		struct sched_param sp = { .sched_priority = 1 };

		CHECK_SYS(sched_setscheduler(0, SCHED_FIFO |
					     SCHED_RESET_ON_FORK, &sp));
	}
	t0 = pt_mono();
	for (int i = 0; i < ncpus; i++) {
		pid_t parent = getpid(), pid = fork();

		if (pid < 0)
			FAIL("fork: %s", strerror(errno));
		if (pid == 0)
			attacker(cpus[i], per_cpu, parent);
		attackers[nr_attackers++] = pid;
	}

	deadline = t0 + MS(START_MS + PARK_MS) * pt_time_scale();
	while (atomic_load(&stats->spinning) < nr_attackers) {
		if (pt_mono() > deadline)
			FAIL("the attack did not start in %d ms",
			     START_MS + PARK_MS);
		for (int i = 0; i < nr_attackers; i++) {
			pid_t pid = attackers[i];

			if (waitpid(pid, NULL, WNOHANG) == pid) {
				attackers[i] = 0;
				FAIL("attacker %d exited while starting", i);
			}
		}
		pt_sleep_ms(20);
	}
	t_go = atomic_load(&stats->go_ns);
	ran = atomic_load(&stats->ran);
	pt_diag("attacker threads made in %lld ms; after %lld ms more, %d of "
		"%d submitters had completed a write (%d could not start), and "
		"the spinners started",
		(long long)((t_go - t0) / NSEC_PER_MSEC),
		(long long)((pt_mono() - t_go) / NSEC_PER_MSEC), ran, total,
		atomic_load(&stats->failed));
	if (ran <= pool)
		FAIL("only %d submitters ran, too few to hold the %d return "
		     "hooks: the attack did not happen", ran, pool);
	pt_sleep_ms(SETTLE_MS);

	writes0 = atomic_load(&stats->writes);
	for (rounds = 0; rounds < ROUNDS; rounds++) {
		int inside;

		pt_sleep_ms(ROUND_GAP_MS);
		if (pt_mono() - t_go > MS(ATTACK_MS) * pt_time_scale())
			break;
		inside = atomic_load(&stats->inside);
		if (inside < min_inside)
			min_inside = inside;
		if (inside > max_inside)
			max_inside = inside;
		victim_submit(rounds);
		victim_collect(ROUND_WAIT_MS);
	}
	writes1 = atomic_load(&stats->writes);
	ran = atomic_load(&stats->ran);
	for (int i = 0; i < nr_attackers; i++)
		if (waitpid(attackers[i], NULL, WNOHANG) == attackers[i]) {
			attackers[i] = 0;
			FAIL("attacker %d exited during the attack", i);
		}
	pt_on_fail(NULL);
	t_kill = pt_mono();
	stop_attack();
	pt_diag("attack over %lld ms after it started (killing it took %lld "
		"ms): %d submitters ran, %d of them let go during the attack; "
		"%ld attacker writes during the victim's; submitters inside "
		"io_submit at each of those: %d to %d",
		(long long)((pt_mono() - t_go) / NSEC_PER_MSEC),
		(long long)((pt_mono() - t_kill) / NSEC_PER_MSEC), ran,
		atomic_load(&stats->released), writes1 - writes0, min_inside,
		max_inside);

	/* Any wake-up still to come has WAKE_MS from its write. */
	if (geteuid() == 0) {
		struct sched_param sp = { .sched_priority = 0 };

		CHECK_SYS(sched_setscheduler(0, SCHED_OTHER, &sp));
	}
	if (rounds < ROUNDS)
		pt_diag("the attack's time was up after %d writes of the "
			"victim", rounds);
	if (!rounds)
		FAIL("the victim wrote nothing during the attack");
	for (int i = 0; i < rounds; i++) {
		int64_t end = victims[i].submit_ns +
			      MS(WAKE_MS) * pt_time_scale();

		while (victims[i].submitted && pt_mono() < end)
			victim_collect((int)((end - pt_mono()) /
					     NSEC_PER_MSEC) + 1);
		if (!victims[i].submitted)
			continue;
		victim_reap(i);
		missed++;
		pt_diag("write %d: its completion is in the ring, and epoll "
			"reported nothing in %d ms", i,
			WAKE_MS * (int)pt_time_scale());
	}

	victim_control("after");
	if (missed)
		FAIL("victim missed %d of %d completions during the attack",
		     missed, rounds);
	pt_diag("victim missed 0 of %d completions during the attack", rounds);

	for (int i = 0; i <= ROUNDS; i++) {
		CHECK_SYS(close(victims[i].fd));
		ax_destroy(victims[i].ctx);
	}
	CHECK_SYS(close(victim_null));
	CHECK_SYS(close(victim_ep));
	return PT_PASS;
}
