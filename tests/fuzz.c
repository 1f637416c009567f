// SPDX-License-Identifier: MIT
/*
 * fuzz [-s SEED] [-t SECONDS] [-j THREADS] [-v]: a seeded, time-bounded
 * fuzzer of everything /dev/pollfs and its objects offer.
 *
 * Several threads (and the processes they fork) run random operations on
 * one shared table of descriptors: every ioctl of /dev/pollfs, valid,
 * unknown and with hostile arguments (NULL, unmapped, PROT_NONE and
 * kernel addresses, unaligned and page-crossing structures, every flag
 * bit, non-zero reserved fields); reads, readv, writes and writev of
 * every size from 0 to several KB through good, misaligned, read-only,
 * PROT_NONE and page-crossing buffers; futex arms of 1 to 130 records
 * (duplicates too) on private, shared anonymous, shared file, read-only,
 * PROT_NONE, unmapped, vDSO, text, stack, kernel and AIO-ring addresses,
 * and on a region that is unmapped, replaced, mprotected and zapped
 * under armed objects; FUTEX_WAKE, WAKE_BITSET, REQUEUE, CMP_REQUEUE,
 * WAKE_OP, WAIT, futex_waitv and the PI operations on the armed words;
 * AIO contexts set up, used (writes, IOCB_CMD_POLL of pollfs files) and
 * destroyed under their objects; close, dup, dup2/dup3 over live
 * descriptors; fork (the child goes on fuzzing the inherited table for a
 * moment, and may exec this program with -x, which exits at once, maybe
 * while one of its threads blocks in a read); epoll sets (nested too)
 * holding the objects, closed in any order; poll, select, fdinfo,
 * fcntl, lseek, sendfile; signals sent at threads, the process and the
 * children, blocked and unblocked at random, interrupting blocking
 * reads.  Every operation runs under a per-thread interval timer whose
 * signal interrupts anything that blocks, so nothing waits for long.
 *
 * Three harder ones besides:
 *  - huge calls: reads and writes of up to the kernel's 2 GiB per call
 *    (and counts it clamps), on every kind, from 2 GiB of read-only
 *    zero pages (zeros are valid records: a signal mask of 0, a timer
 *    spec that disarms) that end in a PROT_NONE page, from a smaller
 *    such region that ends in an unmapped one, and into 2 GiB of
 *    writable MAP_NORESERVE memory; the interval timer must end each
 *    one soon, with a short write of whole records; and a child killed
 *    (SIGKILL) in the middle of such a write must be reaped at once;
 *  - as root, steps of the realtime clock (1 ms to 1 hour, both ways,
 *    back to the true time often) under timers armed on the realtime
 *    clocks near now, absolute and relative, one-shot and periodic;
 *  - io_destroy racing a helper thread's AIO completions (reads and
 *    writes of a file, IOCB_CMD_POLL of a pipe) under AIO objects
 *    watched by an epoll set for EPOLLHUP alone (events 0 or EPOLLHUP,
 *    edge-triggered too).
 * And the additions of version 1.1: futex records with
 * POLLFS_FUTEX_WATCH (whole sets of them, and sets mixing them with
 * plain ones), the disarm record (alone, and among others, where it is
 * no disarm), timers armed with POLLFS_TIMER_CANCEL_ON_SET (also under
 * the clock steps), and POLLFS_IOC_TIMER_GET on every kind of
 * descriptor, through good and hostile buffers.
 * And the record ring of version 1.2: POLLFS_IOC_RING on every kind of
 * descriptor with random params (every entries count, flag bit and
 * reserved value) through good and hostile buffers; timers and futex
 * objects made with a ring, mapped, armed to fill it (periodic, watched)
 * and put in the table; mmap of every descriptor with random lengths,
 * offsets, protections and flags, mremap of the mappings, munmap; records
 * taken by the shared protocol; and a thread that scribbles head, tail,
 * the flags word and the records of the mappings at random all along,
 * while the other operations read, write, wake, poll and close.
 *
 * The operations are drawn from a generator seeded by the seed (printed
 * as "# seed N": run with -s N to replay the same choices; threads and
 * timing make the outcome differ).  Nothing depends on a particular
 * errno; what is checked is what must hold whatever happens:
 *  - a read returns -1, 0 (an AIO object only), or a whole number of
 *    records that fits in the buffer (one at most for AIO); a read of
 *    less than a record, or into memory it cannot write, returns no
 *    record; the records are well formed (signal number, timer counts
 *    and timespecs, aligned futex address and known flags, the AIO
 *    context the object was made for);
 *  - a write returns -1 or whole records; a futex write all of its
 *    records or none; writes to AIO objects and to /dev/pollfs fail;
 *  - poll never reports anything but POLLIN, POLLHUP, POLLERR and, on an
 *    object that takes writes, POLLOUT, which it then always reports;
 *  - an ioctl that cannot be valid (unknown number of pollfs's magic,
 *    unreadable argument, unknown flag or non-zero reserved field)
 *    creates nothing; a created object is a pollfs file of its kind
 *    (and, in the single-threaded children, has the flags asked for);
 *  - lseek fails;
 *  - no child dies of a signal it did not send itself, and none hangs
 *    (alive at 4 s, or still in the kernel's exit at 30 s);
 *  - a huge write returns within seconds: -1 or whole records, at least
 *    one when the first is readable zeros (signal, timer), never more
 *    than were readable; futex writes of more than 128 records fail;
 *    a child in a huge write is gone within 2 s of a SIGKILL;
 *  - a timer read never reports 0 expirations, whatever the clock did;
 *  - 1.1: a futex record read back has no flags but SHARED and WATCH;
 *    the disarm record written to a futex object returns 16; an
 *    all-zero record among two or more makes the write fail;
 *    POLLFS_IOC_TIMER_GET on a signal, futex or AIO object fails with
 *    ENOTTY, on /dev/pollfs fails, on a timer returns 0 and well-formed
 *    timespecs when the buffer is writable and fails when it is not;
 *  - 1.1, on objects of a thread's own (not in the table, so exact):
 *    a watched futex object on a word no other operation touches
 *    counts in each FUTEX_WAKE after each read (1) and not between a
 *    wake and the read (0), its read returns the word's value and
 *    leaves it armed (EAGAIN), the disarm leaves it unarmed (no wake
 *    counts it, EINVAL); a timer's POLLFS_IOC_TIMER_GET consumes
 *    nothing (expirations seen there mean POLLIN and a read of at
 *    least as many); as root, a timer with CANCEL_ON_SET becomes
 *    readable after a step of the clock and its read fails with
 *    ECANCELED, the timer still armed.
 *  - once io_destroy returned, epoll reports EPOLLHUP for every AIO
 *    object of the context within a second, poll shows POLLHUP and a
 *    read returns 0;
 *  - 1.2: POLLFS_IOC_RING with invalid params never succeeds, nor on
 *    anything but a timer or a futex object (EOPNOTSUPP on signal and
 *    AIO objects, ENOTTY on /dev/pollfs, when the argument is whole);
 *    on an object made for it, a valid one does (or ENOMEM); the layout
 *    it returns is a ring's (the object's record size, the words and
 *    records inside mmap_size, a multiple of the page size);
 *  - 1.2: mmap never succeeds with an offset, MAP_PRIVATE, PROT_EXEC,
 *    a length no ring has, or on anything but a timer or futex object;
 *    no mapping of a ring grows by mremap;
 *  - 1.2: the records read from an object with a ring are checked only
 *    as whole records: its mappings' writers (the scribbler) may have
 *    put anything in its slots, which read(2) then returns.  An object
 *    with a ring is told by a mapping of it working.
 * These checks are exact only when no other thread closed or replaced
 * the descriptor during the call (a generation count tells).
 *
 * The objects are those of every kind of tests/lib/kinds.c, created,
 * read, written and checked as its table says; the fuzzer adds what it
 * knows of the signal, timer, futex and AIO objects (hostile masks,
 * specs, words and contexts, the operations above).
 *
A supervisor process runs the fuzzing process, kills it if it overruns
 * its time, and after every process is gone checks that the module's
 * reference count (and, when /proc/slabinfo is readable, pollfs's slab
 * caches) came back to where they started: no object leaked.  It also
 * puts the realtime clock back where it would be had no one set it (the
 * realtime and monotonic clocks at its start, plus the monotonic time
 * since), on every way out it can: at the end, on a failure, and on
 * SIGTERM, SIGINT and SIGHUP.  The test runner and the guest harness
 * check the kernel log and the unload.
 *
 * Defaults: 60 s (its budget, below, is 40 s more), seed from the clock.
 * POLLFS_FUZZ_TIME and POLLFS_FUZZ_SEED in the environment replace the
 * defaults (make fuzz passes them through tests/run).
 */
#include "lib/kinds.h"

#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/ucontext.h>
#include <sys/wait.h>

#include <linux/aio_abi.h>
#include <linux/futex.h>

/* its run (POLLFS_FUZZ_TIME, 60 s by default), then the checks after it */
PT_BUDGET_TAG("40+${POLLFS_FUZZ_TIME:-60}");

#define NSLOT		160	/* descriptors in the shared table */
#define NCTX		6	/* AIO contexts at once */
#define NHOT		24	/* futex words per arena that ops aim at */
#define NPI		6	/* PI futex words per arena */
#define MAXTHREADS	8
#define MAXCHILD	4	/* forked children alive at once */
#define MAXEPHEMERAL	3	/* short-lived extra threads */
#define HIGH_FD		2000	/* F_DUPFD puts copies at or above this */
#define PRIVATE_FD	(HIGH_FD + 128)	/* fds out of the table, above */
#define NOFILE		(HIGH_FD + 256)
#define BUFPAGES	3	/* per-thread buffer, then a PROT_NONE page */
#define CHURN_PAGES	4
#define PAGE		4096
#define MAX_RW		((size_t)0x7ffff000) /* the kernel's limit per call */
#define HUGE_LEN	((size_t)1 << 31)	/* the huge regions */
#define HOLE_LEN	((size_t)64 << 20)	/* one with an unmapped tail */
#define HOLE_GAP	((size_t)2 << 20)	/* and the gap after it */
#define USER_END	0x00007ffffffff000ull	/* end of user addresses */

/*
 * What a descriptor is: K_OBJ + i is an object of pt_kinds[i] (every
 * kind of tests/lib/kinds.c is fuzzed, and checked as its entry says);
 * the kinds some operations know more of are at their places in the
 * table (K_SIGNAL, ...).
 */
enum { K_NONE, K_DEV, K_EPOLL, K_UNKNOWN, K_OBJ };
enum {
	K_SIGNAL = K_OBJ + PT_KIND_SIGNAL,
	K_TIMER = K_OBJ + PT_KIND_TIMER,
	K_FUTEX = K_OBJ + PT_KIND_FUTEX,
	K_AIO = K_OBJ + PT_KIND_AIO,
};

static bool is_obj(int k)
{
	return k >= K_OBJ && k < K_OBJ + (int)pt_nkinds;
}

static const struct pt_kind *obj_kind(int k)
{
	return is_obj(k) ? &pt_kinds[k - K_OBJ] : NULL;
}

static const char *kind_name(int k)
{
	static const char *const names[K_OBJ] = { "none", "dev", "epoll",
						  "other" };

	return is_obj(k) ? obj_kind(k)->name : names[k];
}

/* The sizes of a record read and written; 0: none. */
static size_t rsize(int k)
{
	return is_obj(k) ? obj_kind(k)->read_size : 0;
}

static size_t wsize(int k)
{
	return is_obj(k) ? obj_kind(k)->write_size : 0;
}

/* ---- statistics, in memory shared with the supervisor ---- */

struct stats {
	atomic_long ops, creates, create_fail, reads, records, eintr,
		writes, arms, wakes_counted, forks, execs, aio_setups,
		signals, closes, dups, epolls, maps, children_failed,
		huge_writes, huge_reads, short_writes, huge_kills,
		clock_steps, destroy_races, race_completions,
		watch_rounds, disarms, timer_gets, cancel_checks,
		ring_ioctls, ring_setups, ring_maps, ring_map_fails,
		ring_unmaps, ring_takes, ring_scribbles, ring_unchecked,
		slow_exits, slowest_exit_ms, in_exit_now;
	atomic_int failed;
};
static struct stats *st;

/* ---- options and global state ---- */

static uint64_t seed;
static unsigned int seconds = 60;
static int nthreads = 3;
static bool verbose;
static int64_t deadline;		/* CLOCK_MONOTONIC ns */
static atomic_int stop;
static bool single;			/* a forked child: one thread */
static int depth;			/* fork depth of this process */
static char self_exe[PATH_MAX];

/* ---- random numbers (per thread) ---- */

static __thread uint64_t rstate;

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rseed(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ (b * 0xd1342543de82ef95ull);

	rstate = splitmix(&x) | 1;
}

static uint64_t rnd(void)
{
	rstate ^= rstate >> 12;
	rstate ^= rstate << 25;
	rstate ^= rstate >> 27;
	return rstate * 0x2545f4914f6cdd1dull;
}

static uint64_t rn(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned int pct)
{
	return rn(100) < pct;
}

/* ---- a trace of the last operations of each thread ---- */

#define TRACE_LEN	48
#define TRACE_W		120
struct trace {
	char line[TRACE_LEN][TRACE_W];
	unsigned int next;
	int id;
	pid_t tid;	/* of the thread that writes it, for on_fault() */
};
/* the threads' (0 the main one), then the ring scribbler's */
#define TRACE_SCRIBBLER	(MAXTHREADS + MAXEPHEMERAL + 1)
static struct trace traces[TRACE_SCRIBBLER + 1];
static __thread struct trace *tr;

/* This thread writes trace @i from now on. */
static void trace_take(int i)
{
	tr = &traces[i];
	tr->id = i;
	tr->tid = (pid_t)syscall(SYS_gettid);
}

/* Numbers the lines of all the traces: the order of the threads' ops. */
static atomic_uint note_seq;

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	char *l;
	va_list ap;
	int n;

	if (!tr)
		return;
	l = tr->line[tr->next++ % TRACE_LEN];
	n = snprintf(l, TRACE_W, "%u ", atomic_fetch_add_explicit(
			     &note_seq, 1, memory_order_relaxed));
	va_start(ap, fmt);
	vsnprintf(l + n, TRACE_W - (size_t)n, fmt, ap);
	va_end(ap);
	if (verbose)
		pt_diag("[%d/%d] %s", (int)getpid(), tr->id, l);
}

static void dump_trace(const struct trace *x)
{
	unsigned int n = x->next, from = n > TRACE_LEN ? n - TRACE_LEN : 0;

	if (!n)
		return;
	pt_diag("last operations of thread %d (tid %d) of process %d:", x->id,
		(int)x->tid, (int)getpid());
	for (unsigned int i = from; i < n; i++)
		pt_diag("  %s", x->line[i % TRACE_LEN]);
}

static void dump_traces(void)
{
	atomic_store(&st->failed, 1);
	atomic_store(&stop, 1);
	for (size_t t = 0; t < sizeof(traces) / sizeof(traces[0]); t++)
		dump_trace(&traces[t]);
}

/* A check that only holds when nothing replaced the fd meanwhile. */
#define STRICT_FAIL(...) do {						\
	pt_diag("seed %" PRIu64 ": invariant broken", seed);		\
	FAIL(__VA_ARGS__);						\
} while (0)

/* ---- the interval timer that bounds every operation ---- */

static int sig_guard;
static __thread timer_t guard;
static __thread bool guard_ok;
static atomic_long sig_count[_NSIG];

static void on_signal(int sig)
{
	if (sig > 0 && sig < _NSIG)
		atomic_fetch_add_explicit(&sig_count[sig], 1,
					  memory_order_relaxed);
}

static void guard_init(void)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = sig_guard;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	guard_ok = timer_create(CLOCK_MONOTONIC, &sev, &guard) == 0;
	if (!guard_ok)
		FAIL("timer_create: %s", strerror(errno));
}

static void guard_arm(int64_t first_ns)
{
	struct itimerspec its = {
		.it_value = { first_ns / NSEC_PER_SEC, first_ns % NSEC_PER_SEC },
		.it_interval = { 0, 3 * NSEC_PER_MSEC },
	};

	if (guard_ok)
		timer_settime(guard, 0, &its, NULL);
}

static void guard_disarm(void)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	if (guard_ok)
		timer_settime(guard, 0, &its, NULL);
}

/* The signals the fuzzer sends, blocks and reads; all have handlers. */
static int fsigs[16];
static int nfsigs;

/* What on_fault() says of the fuzzer's own mappings (rings, AIO). */
static void fault_tables(void);

/* A hexadecimal number at *p, which moves past it; no libc. */
static unsigned long parse_hex(const char **p)
{
	unsigned long v = 0;

	for (;; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v * 16 + (unsigned long)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (unsigned long)(c - 'a' + 10);
		else
			return v;
	}
}

/*
 * The lines of /proc/self/maps that hold @addr and @ip; where none holds
 * @addr, the mappings on either side of the gap it is in.  All of the
 * file (the fuzzer's many mappings make it long), read with read(2)
 * into a static buffer, parsed by hand: async-signal-safe but for
 * pt_diag()'s formatting.
 */
static void fault_maps(uintptr_t addr, uintptr_t ip)
{
	static char maps[1 << 20];
	size_t n = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	const char *below = NULL, *above = NULL;
	bool held = false;
	ssize_t r;

	if (fd < 0) {
		pt_diag("/proc/self/maps: %s", strerror(errno));
		return;
	}
	while (n < sizeof(maps) - 1) {
		r = read(fd, maps + n, sizeof(maps) - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n == sizeof(maps) - 1)
		pt_diag("/proc/self/maps longer than %zu bytes: its start only",
			n);
	maps[n] = 0;
	for (char *l = maps, *nl; l < maps + n; l = nl + 1) {
		const char *q = l;
		unsigned long lo, hi;

		nl = memchr(l, '\n', (size_t)(maps + n - l));
		if (!nl)
			nl = maps + n;
		*nl = 0;
		lo = parse_hex(&q);
		if (*q++ != '-')
			continue;
		hi = parse_hex(&q);
		if (addr >= lo && addr < hi) {
			pt_diag("  address in: %s", l);
			held = true;
		}
		if (ip >= lo && ip < hi)
			pt_diag("  ip in: %s", l);
		if (hi <= addr)
			below = l;
		else if (lo > addr && !above)
			above = l;
	}
	if (!held)
		pt_diag("  address in no mapping (%zu bytes of maps): between "
			"%s and %s", n, below ? below : "(none)",
			above ? above : "(none)");
}

/* The faulting instruction; ucontext_t's registers are the architecture's. */
static uintptr_t fault_ip(const ucontext_t *u)
{
#if defined(__x86_64__)
	return (uintptr_t)u->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)u->uc_mcontext.pc;
#else
#error "fuzz: fault_ip() knows x86-64 and arm64 only"
#endif
}

/* A fault of our own: say where, who, and what was going on. */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
	uintptr_t addr = (uintptr_t)si->si_addr;
	uintptr_t ip = fault_ip(uc);

	pt_diag("signal %d (si_code %d%s) at address %p, ip %#lx, in process "
		"%d, thread %d (trace %d)", sig, si->si_code,
		sig == SIGSEGV && si->si_code == SEGV_MAPERR ? ": no mapping" :
		sig == SIGSEGV && si->si_code == SEGV_ACCERR ? ": protection" :
		sig == SIGBUS && si->si_code == BUS_ADRERR ? ": past the object" :
		"", si->si_addr, (unsigned long)ip, (int)getpid(),
		(int)syscall(SYS_gettid), tr ? tr->id : -1);
	fault_maps(addr, ip);
	fault_tables();
	if (tr) {
		pt_diag("the faulting thread:");
		dump_trace(tr);
	}
	dump_traces();
	_exit(PT_FAIL);
}

static void setup_signals(void)
{
	static const int base[] = { SIGUSR1, SIGUSR2, SIGHUP, SIGWINCH,
				    SIGURG, SIGCHLD, SIGCONT, SIGPIPE };
	struct sigaction sa;

	sig_guard = SIGRTMAX;
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		fsigs[nfsigs++] = base[i];
	for (int i = 1; i <= 6; i++)
		fsigs[nfsigs++] = SIGRTMIN + i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < nfsigs; i++) {
		/* half of them restart interrupted reads, half do not */
		sa.sa_flags = (i % 2) ? SA_RESTART : 0;
		CHECK_SYS(sigaction(fsigs[i], &sa, NULL));
	}
	sa.sa_flags = 0;	/* the guard interrupts, never restarts */
	CHECK_SYS(sigaction(sig_guard, &sa, NULL));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	CHECK_SYS(sigaction(SIGSEGV, &sa, NULL));
	CHECK_SYS(sigaction(SIGBUS, &sa, NULL));
}

/* ---- memory: arenas of futex words, hostile areas, buffers ---- */

static uint32_t *arena_a;	/* anonymous private, read-write */
static uint32_t *arena_s;	/* anonymous shared (with the children) */
static uint32_t *arena_f;	/* a memfd, MAP_SHARED */
static uint32_t *arena_fro;	/* the same memfd page again, read-only */
static uint32_t *watch_page;	/* op_watch's words, one per thread, which
				   no other operation touches */
static void *page_ro;		/* anonymous, PROT_READ */
static void *page_none;		/* PROT_NONE */
static char *volatile hole;	/* an unmapped page between two mapped ones */
static char *churn;		/* remapped, unmapped, mprotected at random */
static atomic_int churn_mapped;
static int memfd = -1, churn_memfd = -1, tmpfd = -1, nullfd = -1;
static uint64_t vdso;
/*
 * The huge regions, mapped once (NULL if the mapping failed): none costs
 * memory but what is written to huge_rw (reads, near its two ends only)
 * and the page tables of the zero pages that huge writes read.
 */
static char *huge_ro;		/* HUGE_LEN of zero pages, PROT_NONE after */
static char *huge_hole;		/* HOLE_LEN of zero pages, then HOLE_GAP
				   unmapped */
static char *huge_rw;		/* HUGE_LEN writable, then PROT_NONE */

static const uint64_t kaddrs[] = {
	0, 1, 4, 0xffc, 0x1000, 0x00007ffffffff000ull, 0x00007ffffffffffcull,
	0x0000800000000000ull, 0x8000000000000000ull, 0xffff800000000000ull,
	0xffff888000000000ull, 0xffffc90000000000ull, 0xffffea0000000000ull,
	0xffffffff81000000ull, 0xffffffffff600000ull, 0xfffffffffffff000ull,
	0xfffffffffffffffcull, 0xffffffffffffffffull,
};
#define NKADDR (sizeof(kaddrs) / sizeof(kaddrs[0]))

/* Word i of an arena: NHOT hot words, then NPI PI words, 64 bytes apart. */
static uint32_t *word(uint32_t *arena, int i)
{
	return arena + i * 16;
}

static void *xmap(size_t len, int prot, int flags, int fd)
{
	void *p = mmap(NULL, len, prot, flags, fd, 0);

	if (p == MAP_FAILED)
		FAIL("mmap(%zu, prot %#x, flags %#x): %s", len, prot, flags,
		     strerror(errno));
	return p;
}

static void *huge_map(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		pt_diag("mmap of %zu bytes: %s: no huge calls from there", len,
			strerror(errno));
		return NULL;
	}
	return p;
}

static void setup_huge(void)
{
	huge_ro = huge_map(HUGE_LEN + PAGE, PROT_READ);
	if (huge_ro)
		CHECK_SYS(mprotect(huge_ro + HUGE_LEN, PAGE, PROT_NONE));
	huge_hole = huge_map(HOLE_LEN + HOLE_GAP, PROT_READ);
	if (huge_hole)
		CHECK_SYS(munmap(huge_hole + HOLE_LEN, HOLE_GAP));
	/* not 2 MB at a time: only the pages reads write may cost memory */
	huge_rw = huge_map(HUGE_LEN + PAGE, PROT_READ | PROT_WRITE);
	if (huge_rw) {
		madvise(huge_rw, HUGE_LEN, MADV_NOHUGEPAGE);
		CHECK_SYS(mprotect(huge_rw + HUGE_LEN, PAGE, PROT_NONE));
	}
}

static void setup_memory(void)
{
	char *three;

	memfd = CHECK_SYS(memfd_create("pollfs-fuzz", MFD_CLOEXEC));
	CHECK_SYS(ftruncate(memfd, 2 * PAGE));
	churn_memfd = CHECK_SYS(memfd_create("pollfs-fuzz-churn", MFD_CLOEXEC));
	CHECK_SYS(ftruncate(churn_memfd, CHURN_PAGES * PAGE));
	nullfd = CHECK_SYS(open("/dev/null", O_RDWR | O_CLOEXEC));
	{
		char path[] = "/tmp/pollfs-fuzz-XXXXXX";

		tmpfd = CHECK_SYS(mkostemp(path, O_CLOEXEC));
		unlink(path);
		CHECK_SYS(ftruncate(tmpfd, 64 * 1024));
	}

	arena_a = xmap(2 * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1);
	arena_s = xmap(2 * PAGE, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1);
	arena_f = xmap(2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd);
	arena_fro = xmap(2 * PAGE, PROT_READ, MAP_SHARED, memfd);
	page_ro = xmap(PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	page_none = xmap(PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	three = xmap(3 * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1);
	CHECK_SYS(munmap(three + PAGE, PAGE));
	hole = three + PAGE;
	churn = xmap(CHURN_PAGES * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1);
	atomic_store(&churn_mapped, 1);
	vdso = getauxval(AT_SYSINFO_EHDR);
	watch_page = xmap(PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1);
	setup_huge();
}

/* Reads or writes memory that may not be there, without faulting. */
static bool peek32(uint64_t addr, uint32_t *val)
{
	struct iovec local = { val, 4 }, remote = { (void *)(uintptr_t)addr, 4 };

	return syscall(SYS_process_vm_readv, getpid(), &local, 1, &remote, 1,
		       0) == 4;
}

static bool poke(uint64_t addr, const void *src, size_t n)
{
	struct iovec local = { (void *)src, n };
	struct iovec remote = { (void *)(uintptr_t)addr, n };

	return syscall(SYS_process_vm_writev, getpid(), &local, 1, &remote, 1,
		       0) == (ssize_t)n;
}

/*
 * Calls that map or unmap in this address space (an AIO ring, a thread's
 * stack, the churn region) run between as_begin() and as_end().  Such a
 * call may map an unmapped page, a hole, in the middle of another
 * thread's system call and unmap it again before that call returns:
 * what the kernel could reach through the hole is then unknown, and
 * these counters, not a look at the hole afterwards, tell.
 */
static atomic_long as_begun, as_ended;

static void as_begin(void)
{
	atomic_fetch_add(&as_begun, 1);
}

static void as_end(void)
{
	atomic_fetch_add(&as_ended, 1);
}

/*
 * Per-thread buffer: BUFPAGES read-write pages, then a PROT_NONE one,
 * which (unlike an unmapped page) no other mapping can take: a buffer
 * crossing into it faults at the same byte whatever runs meanwhile.
 */
static __thread char *tbuf;
static bool unmapped(const void *p);

static void tbuf_init(void)
{
	char *p;

	as_begin();
	p = xmap((BUFPAGES + 1) * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1);
	CHECK_SYS(mprotect(p + BUFPAGES * PAGE, PAGE, PROT_NONE));
	as_end();
	tbuf = p;
}

/*
 * A small mapping (an AIO ring) may take the hole: then take a new one,
 * and leave the old one be.
 */
static void holes_check(void)
{
	if (!unmapped(hole)) {
		char *three;

		as_begin();
		three = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (three != MAP_FAILED && munmap(three + PAGE, PAGE) == 0)
			hole = three + PAGE;
		as_end();
	}
}

/* pick_buf() picks the small ones, pick_huge_buf() the huge ones. */
enum bufkind { B_GOOD, B_MISALIGNED, B_CROSS, B_RO, B_NONE, B_HOLE, B_NULL,
	       B_KERNEL, B_VDSO, B_NSMALL,
	       B_HUGE_RO = B_NSMALL, B_HUGE_NONE, B_HUGE_HOLE, B_HUGE_RW,
	       B_NKINDS };
static const char *const buf_name[B_NKINDS] = {
	"good", "misaligned", "cross", "ro", "none", "hole", "null", "kernel",
	"vdso", "huge-ro", "huge-ro-then-none", "huge-ro-then-hole",
	"huge-rw"
};

struct buf {
	char *p;
	int bk;
	size_t rd;	/* bytes from p the kernel can read */
	size_t wr;	/* bytes from p the kernel can write */
	char *guard;	/* a page that must stay unmapped for rd, wr */
	long as_gen;	/* as_begun when picked, or -1: unknown already */
	bool lost;	/* settle(): the guard was lost, rd and wr are only
			   upper bounds, no lower ones */
};

/* True if no mapping covers the page of p. */
static bool unmapped(const void *p)
{
	return msync((void *)((uintptr_t)p & ~(uintptr_t)(PAGE - 1)), PAGE,
		     MS_ASYNC) == -1 && errno == ENOMEM;
}

/* Before the call: the address space as it is now, for guard_lost(). */
static void guard_watch(struct buf *b, char *guard)
{
	long ended = atomic_load(&as_ended), begun = atomic_load(&as_begun);

	b->guard = guard;
	b->as_gen = begun == ended ? begun : -1;
}

/*
 * After the call: true if another thread's mapping may have covered the
 * guard page during the call (one in progress when it was picked, one
 * begun since, or one still there).
 */
static bool guard_lost(const struct buf *b)
{
	return b->guard && (b->as_gen < 0 ||
			    atomic_load(&as_begun) != b->as_gen ||
			    !unmapped(b->guard));
}

/*
 * After the call: if the guard page was lost, anything was reachable,
 * and nothing was sure to be (another thread may have unmapped the
 * buffer itself): a check that a call must fail reads rd and wr, one
 * that it must succeed also !lost.
 */
static void settle(struct buf *b)
{
	int e = errno;

	b->lost = guard_lost(b);
	if (b->lost)
		b->rd = b->wr = SIZE_MAX;
	errno = e;
}

/* A buffer for n bytes; good ones hold min(n, what fits) bytes. */
static void pick_buf(struct buf *b, size_t n, bool hostile)
{
	size_t room = BUFPAGES * PAGE, off;
	int bk = B_GOOD;

	if (hostile) {
		unsigned int r = (unsigned int)rn(100);

		bk = r < 45 ? B_GOOD : r < 62 ? B_MISALIGNED : r < 78 ? B_CROSS :
		     B_RO + (int)rn(B_NSMALL - B_RO);
	}
	b->bk = bk;
	b->guard = NULL;
	switch (bk) {
	case B_GOOD:
	case B_MISALIGNED:
		off = n < room ? rn((room - n) / 8 + 1) * 8 : 0;
		if (bk == B_MISALIGNED && off + n < room)
			off += 1 + rn(7);
		if (off > room - 1)
			off = 0;
		b->p = tbuf + off;
		b->rd = b->wr = room - off;
		break;
	case B_CROSS:
		off = rn(n < room ? n + 1 : room);
		b->p = tbuf + room - off;
		b->rd = b->wr = off;
		break;
	case B_RO:
		b->p = (char *)page_ro + rn(PAGE / 8) * 8;
		b->rd = SIZE_MAX;	/* whatever follows may be readable */
		b->wr = 0;
		break;
	case B_NONE:
		b->p = (char *)page_none + rn(PAGE);
		b->rd = b->wr = 0;
		break;
	case B_HOLE:
		b->p = hole + rn(PAGE);
		b->rd = b->wr = 0;
		guard_watch(b, hole);
		break;
	case B_NULL:
		b->p = NULL;
		b->rd = b->wr = 0;
		break;
	case B_KERNEL:
		b->p = (char *)(uintptr_t)kaddrs[5 + rn(NKADDR - 5)];
		b->rd = b->wr = 0;
		break;
	default:
		b->p = vdso ? (char *)(uintptr_t)vdso + rn(PAGE) : NULL;
		b->rd = vdso ? SIZE_MAX : 0;
		b->wr = 0;
		break;
	}
}

/* ---- the shared table of descriptors ---- */

struct slot {
	_Atomic uint64_t word;	/* generation << 32 | fd (-1 empty, -2 being filled) */
	atomic_int kind;
	_Atomic uint64_t ctx;	/* an AIO object's context */
};
static struct slot slots[NSLOT];
static atomic_int focus = -1;

#define W_FD(w)		((int)(uint32_t)(w))
#define W_GEN(w)	((uint32_t)((w) >> 32))
#define W_MAKE(g, fd)	(((uint64_t)(uint32_t)(g) << 32) | (uint32_t)(fd))

struct pick {
	int i;
	uint64_t w;
	int fd, kind;
	uint64_t ctx;
};

static void slots_init(void)
{
	for (int i = 0; i < NSLOT; i++)
		atomic_store(&slots[i].word, W_MAKE(0, -1));
}

/*
 * Puts fd in an empty slot, or closes it if there is none.  The slot is
 * reserved first (fd -2), so that two threads publishing at once never
 * mix one's kind with the other's descriptor.
 */
static void publish(int fd, int kind, uint64_t ctx)
{
	int start = (int)rn(NSLOT);

	for (int k = 0; k < NSLOT; k++) {
		struct slot *s = &slots[(start + k) % NSLOT];
		uint64_t w = atomic_load(&s->word);

		if (W_FD(w) != -1 ||
		    !atomic_compare_exchange_strong(&s->word, &w,
						    W_MAKE(W_GEN(w) + 1, -2)))
			continue;
		atomic_store(&s->kind, kind);
		atomic_store(&s->ctx, ctx);
		atomic_store(&s->word, W_MAKE(W_GEN(w) + 2, fd));
		return;
	}
	close(fd);
}

static int occupied(void)
{
	int n = 0;

	for (int i = 0; i < NSLOT; i++)
		n += W_FD(atomic_load(&slots[i].word)) >= 0;
	return n;
}

/* A random live slot (of kind want, or any kind when want < 0). */
static bool pick_slot(struct pick *p, int want)
{
	int f = atomic_load(&focus);

	for (int tries = 0; tries < 3 * NSLOT; tries++) {
		int i = (f >= 0 && tries == 0 && chance(70)) ? f : (int)rn(NSLOT);
		struct slot *s = &slots[i];
		uint64_t w = atomic_load(&s->word);
		int k;

		if (W_FD(w) < 0)
			continue;
		k = atomic_load(&s->kind);
		if (want >= 0 && k != want)
			continue;
		p->i = i;
		p->w = w;
		p->fd = W_FD(w);
		p->kind = k;
		p->ctx = atomic_load(&s->ctx);
		/* kind and ctx are the ones of this generation */
		if (atomic_load(&s->word) != w)
			continue;
		return true;
	}
	return false;
}

/* True while nothing closed or replaced p's descriptor since the pick. */
static bool same(const struct pick *p)
{
	return atomic_load(&slots[p->i].word) == p->w;
}

/* Takes p's descriptor out of the table: the caller now owns it. */
static bool claim(const struct pick *p)
{
	uint64_t w = p->w;

	return atomic_compare_exchange_strong(&slots[p->i].word, &w,
					      W_MAKE(W_GEN(w) + 1, -1));
}

/* An object kind, any. */
static int any_obj(void)
{
	return K_OBJ + (int)rn(pt_nkinds);
}

/* What some operations ask of a kind, for obj_with(). */
static bool takes_writes(const struct pt_kind *k)
{
	return k->write_size != 0;
}

static bool takes_zeros(const struct pt_kind *k)
{
	return k->zero_fdinfo != NULL;
}

static bool takes_ring(const struct pt_kind *k)
{
	return k->ring;
}

/* An object kind with what has() asks for, any; K_NONE if none has. */
static int obj_with(bool (*has)(const struct pt_kind *k))
{
	unsigned int n = 0, pick;

	for (unsigned int i = 0; i < pt_nkinds; i++)
		n += has(&pt_kinds[i]);
	if (!n)
		return K_NONE;
	pick = (unsigned int)rn(n);
	for (unsigned int i = 0; i < pt_nkinds; i++)
		if (has(&pt_kinds[i]) && !pick--)
			return K_OBJ + (int)i;
	return K_NONE;
}

/* The kind of a descriptor we own, from its /proc/self/fd link. */
static int fd_kind(int fd)
{
	char path[64], link[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return K_NONE;
	link[n] = 0;
	for (unsigned int i = 0; i < pt_nkinds; i++) {
		char want[64];

		snprintf(want, sizeof(want), "pollfs:[%s]", pt_kinds[i].name);
		if (!strcmp(link, want))
			return K_OBJ + (int)i;
	}
	if (!strcmp(link, "/dev/pollfs"))
		return K_DEV;
	if (!strcmp(link, "anon_inode:[eventpoll]"))
		return K_EPOLL;
	return K_UNKNOWN;
}

/* ---- AIO contexts ---- */

/*
 * The contexts: 0 is a free entry; the low bit tags a context whose
 * ring's first page was replaced by an inaccessible one (op_aio): the
 * context lives on, though no lookup by its id (read from the ring)
 * finds it any more; nothing writes there or maps over it again.
 */
static _Atomic uint64_t ctxs[NCTX];
#define CTX_RINGLESS	1ull

static uint64_t ctx_get(int i)
{
	return atomic_load(&ctxs[i]) & ~CTX_RINGLESS;
}
/* Whether a context that lost its ring (op_aio) still has id @ctx. */
static bool ringless_at(uint64_t ctx)
{
	for (int k = 0; k < NCTX; k++)
		if (atomic_load(&ctxs[k]) == (ctx | CTX_RINGLESS))
			return true;
	return false;
}

static _Atomic uint64_t dead_ctx;	/* the last one destroyed */

static uint64_t pick_ctx(void)
{
	uint64_t c;

	switch (rn(10)) {
	case 0:
		return atomic_load(&dead_ctx);
	case 1:
		return kaddrs[rn(NKADDR)];
	case 2:
		c = ctx_get((int)rn(NCTX));
		return c + (chance(50) ? PAGE : 1 + rn(64));
	case 3:
		return (uint64_t)(uintptr_t)arena_a;
	case 4:
		return rnd();
	default:
		for (int k = 0; k < NCTX; k++) {
			c = ctx_get((int)((k + rn(NCTX)) % NCTX));
			if (c)
				return c;
		}
		return 0;
	}
}

/* ---- futex addresses ---- */

struct faddr {
	uint64_t addr;
	uint32_t val;
};

static uint32_t *arenas_rw[3];

static void pick_faddr(struct faddr *a, uint32_t *flags)
{
	uint32_t *w;
	uint64_t x;

	*flags = 0;
	switch (rn(22)) {
	case 0: case 1: case 2: case 3: case 4: case 5:
		w = word(arena_a, (int)rn(NHOT));
		a->addr = (uintptr_t)w;
		a->val = __atomic_load_n(w, __ATOMIC_SEQ_CST);
		*flags = chance(20) ? POLLFS_FUTEX_SHARED : 0;
		break;
	case 6: case 7: case 8:
		w = word(arena_s, (int)rn(NHOT));
		a->addr = (uintptr_t)w;
		a->val = __atomic_load_n(w, __ATOMIC_SEQ_CST);
		*flags = chance(80) ? POLLFS_FUTEX_SHARED : 0;
		break;
	case 9: case 10:
		x = rn(NHOT);
		w = word(chance(70) ? arena_f : arena_fro, (int)x);
		a->addr = (uintptr_t)w;
		a->val = __atomic_load_n(w, __ATOMIC_SEQ_CST);
		*flags = chance(80) ? POLLFS_FUTEX_SHARED : 0;
		break;
	case 11:
		w = word(chance(50) ? arena_a : arena_s, NHOT + (int)rn(NPI));
		a->addr = (uintptr_t)w;
		a->val = __atomic_load_n(w, __ATOMIC_SEQ_CST);
		*flags = chance(50) ? POLLFS_FUTEX_SHARED : 0;
		break;
	case 12:
		a->addr = (uintptr_t)page_ro + rn(PAGE / 4) * 4;
		a->val = 0;
		*flags = chance(50) ? POLLFS_FUTEX_SHARED : 0;
		break;
	case 13: case 14:
		a->addr = (uintptr_t)churn + rn(CHURN_PAGES * PAGE / 64) * 64;
		if (!peek32(a->addr, &a->val))
			a->val = (uint32_t)rn(3);
		*flags = chance(50) ? POLLFS_FUTEX_SHARED : 0;
		break;
	case 15:
		a->addr = chance(50) ? (uintptr_t)page_none + rn(PAGE / 4) * 4 :
				       (uintptr_t)hole + rn(PAGE / 4) * 4;
		a->val = 0;
		break;
	case 16:
		a->addr = kaddrs[rn(NKADDR)];
		a->val = 0;
		break;
	case 17:
		switch (rn(3)) {
		case 0:
			a->addr = vdso + rn(PAGE / 4) * 4;
			break;
		case 1:
			a->addr = ((uintptr_t)&pick_faddr) & ~3ull;
			break;
		default:
			a->addr = ((uintptr_t)&x) & ~3ull;
			break;
		}
		if (!peek32(a->addr, &a->val))
			a->val = 0;
		*flags = chance(50) ? POLLFS_FUTEX_SHARED : 0;
		break;
	case 18:
		a->addr = ctx_get((int)rn(NCTX)) + rn(8) * 4;
		if (!peek32(a->addr, &a->val))
			a->val = 0;
		*flags = chance(50) ? POLLFS_FUTEX_SHARED : 0;
		break;
	case 19: case 20:
		w = word(arenas_rw[rn(3)], (int)rn(NHOT));
		a->addr = (uintptr_t)w + 1 + rn(3);
		a->val = 0;
		break;
	default:
		a->addr = rnd();
		a->val = (uint32_t)rnd();
		break;
	}
	if (chance(10))
		a->val += 1;		/* a mismatch */
	if (chance(4))
		*flags = (uint32_t)rnd();
	else if (chance(4))
		*flags |= 1u << rn(32);
}

static void fill_futex_rec(struct pollfs_futex_event *ev)
{
	struct faddr a;
	uint32_t flags;

	pick_faddr(&a, &flags);
	ev->addr = a.addr;
	ev->val = a.val;
	ev->flags = flags;
}

/* ---- record contents ---- */

static bool realtime_clock(int32_t clk)
{
	return clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_ALARM;
}

/* A timespec for a value (or an interval) of a timer on clock clk. */
static struct __kernel_timespec pick_ts(bool value, int32_t clk)
{
	struct __kernel_timespec ts = { 0, 0 };

	switch (rn(12)) {
	case 0:
		break;			/* zero: disarm, or one-shot */
	case 1:
		ts.tv_sec = -1 - (int64_t)rn(5);
		break;
	case 2:
		ts.tv_nsec = NSEC_PER_SEC + (int64_t)rn(3);
		break;
	case 3:
		ts.tv_nsec = -1;
		break;
	case 4:
		ts.tv_sec = chance(50) ? INT64_MAX : (int64_t)1 << (33 + rn(30));
		ts.tv_nsec = (int64_t)rn(NSEC_PER_SEC);
		break;
	case 5:
		ts.tv_nsec = 1 + (int64_t)rn(1000);	/* tiny */
		break;
	case 6: {
		/*
		 * Around now, for absolute times: now of the realtime clock
		 * for its timers (mostly; the monotonic now is long past
		 * for them, with overruns by the billion).
		 */
		struct timespec now;
		bool real = realtime_clock(clk) && chance(75);

		clock_gettime(real ? CLOCK_REALTIME : CLOCK_MONOTONIC, &now);
		if (real && chance(50)) {
			/* a few ms ahead or behind */
			int64_t t = (int64_t)now.tv_sec * NSEC_PER_SEC +
				    now.tv_nsec + (int64_t)rn(MS(20)) - MS(5);

			ts.tv_sec = t / NSEC_PER_SEC;
			ts.tv_nsec = t % NSEC_PER_SEC;
			break;
		}
		ts.tv_sec = now.tv_sec + (int64_t)rn(2) - 1;
		ts.tv_nsec = (int64_t)rn(NSEC_PER_SEC);
		break;
	}
	default:
		ts.tv_nsec = (int64_t)(value ? US(10) + rn(MS(20)) :
				       US(50) + rn(MS(5)));
		break;
	}
	return ts;
}

static void fill_timer_rec(struct pollfs_timer_spec *s)
{
	static const int clocks[] = { CLOCK_REALTIME, CLOCK_MONOTONIC,
				      CLOCK_BOOTTIME, CLOCK_REALTIME_ALARM,
				      CLOCK_BOOTTIME_ALARM };

	memset(s, 0, sizeof(*s));
	if (chance(85))
		s->clockid = clocks[rn(5)];
	else
		s->clockid = chance(50) ? (int32_t)rn(16) - 2 : (int32_t)rnd();
	/* 2 and 3: CANCEL_ON_SET, valid with ABSTIME on the realtime clocks */
	s->flags = chance(80) ? (uint32_t)rn(chance(25) ? 4 : 2) :
		   chance(50) ? 1u << rn(32) : (uint32_t)rnd();
	s->value = pick_ts(true, s->clockid);
	s->interval = chance(50) ? (struct __kernel_timespec){ 0, 0 } :
				   pick_ts(false, s->clockid);
}

static uint64_t pick_mask(void)
{
	uint64_t m = 0;

	switch (rn(5)) {
	case 0:
		return rnd();
	case 1:
		return ~0ull;
	case 2:
		return 0;
	default:
		for (int i = 0, n = 1 + (int)rn(4); i < n; i++)
			m |= 1ull << (fsigs[rn((uint64_t)nfsigs)] - 1);
		return m;
	}
}

/* Fills up to n bytes at p (all readable) with records of kind k. */
static void fill_records(char *p, size_t n, int k)
{
	size_t ws = wsize(k) ? wsize(k) : 16;
	char tmp[PT_KIND_REC_MAX] __attribute__((aligned(8)));
	unsigned int watch;

	if (chance(8) || !wsize(k)) {
		for (size_t i = 0; i < n; i++)
			p[i] = (char)rnd();
		return;
	}
	/* futex sets: all watched, or none (mostly), or mixed (EINVAL) */
	watch = rn(10);
	for (size_t off = 0; off < n; off += ws) {
		size_t m = n - off < ws ? n - off : ws;

		/* the kinds of which more than the sample records is known */
		if (k == K_SIGNAL) {
			uint64_t mask = pick_mask();

			memcpy(tmp, &mask, 8);
		} else if (k == K_TIMER) {
			fill_timer_rec((struct pollfs_timer_spec *)tmp);
		} else if (k == K_FUTEX) {
			struct pollfs_futex_event *ev = (void *)tmp;

			fill_futex_rec(ev);
			if (watch < 3 || (watch == 9 && chance(50)))
				ev->flags |= POLLFS_FUTEX_WATCH;
			else if (watch < 9 && chance(95))
				ev->flags &= ~(uint32_t)POLLFS_FUTEX_WATCH;
			/* duplicates: repeat the previous record now and then */
			if (off >= ws && chance(15))
				memcpy(tmp, p + off - ws, ws);
		} else {
			obj_kind(k)->sample(tmp, (unsigned int)rnd());
		}
		memcpy(p + off, tmp, m);
	}
}

/* ---- checks of what a read returned ---- */

static bool has_ring(int fd);

static void check_records(const struct pick *p, const char *buf, ssize_t r)
{
	size_t rs = rsize(p->kind);

	for (ssize_t off = 0; off + (ssize_t)rs <= r; off += (ssize_t)rs) {
		const char *rec = buf + off;

		const char *bad = obj_kind(p->kind)->bad_record(rec);
		struct pollfs_aio_event ev;

		if (!bad && p->kind == K_AIO) {
			memcpy(&ev, rec, sizeof(ev));
			if (p->ctx && ev.ctx != p->ctx)
				bad = "another context's";
		}
		/* a ring's slots hold what its mappings' writers put there */
		if (bad && (has_ring(p->fd) || !same(p))) {
			atomic_fetch_add(&st->ring_unchecked, 1);
			return;
		}
		if (bad) {
			char hex[2 * PT_KIND_REC_MAX + 1];

			for (size_t i = 0; i < rs && i < PT_KIND_REC_MAX; i++)
				snprintf(hex + 2 * i, 3, "%02x",
					 (unsigned char)rec[i]);
			STRICT_FAIL("%s fd %d (ctx %#llx): record %s: %s",
				    kind_name(p->kind), p->fd,
				    (unsigned long long)p->ctx, hex, bad);
		}
	}
}

/*
 * What holds of any read or write of n bytes that returned r: -1 or at
 * most n.  True when there is more to check: it did not fail, and the
 * descriptor was not closed or replaced meanwhile.
 */
static bool check_transfer(const struct pick *p, size_t n, ssize_t r,
			   const char *how)
{
	if (r < 0) {
		if (r != -1)
			FAIL("%s returned %zd", how, r);
		return false;
	}
	if ((size_t)r > n)
		FAIL("%s of %zu bytes returned %zd", how, n, r);
	return same(p);
}

static void check_read(const struct pick *p, const struct buf *b, size_t n,
		       ssize_t r, int e, const char *how)
{
	size_t rs;

	if (r < 0 && e == EINTR)
		atomic_fetch_add(&st->eintr, 1);
	if (!check_transfer(p, n, r, how))
		return;
	if (!is_obj(p->kind)) {
		if (p->kind == K_DEV || p->kind == K_EPOLL)
			STRICT_FAIL("%s of fd %d (%s) returned %zd", how, p->fd,
				    kind_name(p->kind), r);
		return;
	}
	rs = rsize(p->kind);
	if (r == 0) {
		if (!obj_kind(p->kind)->read_peeks && n)
			STRICT_FAIL("%s of %s fd %d (%zu bytes) returned 0",
				    how, kind_name(p->kind), p->fd, n);
		return;
	}
	if (n < rs || r % (ssize_t)rs ||
	    (obj_kind(p->kind)->read_peeks && r != (ssize_t)rs))
		STRICT_FAIL("%s of %s fd %d (%zu bytes, buffer %s): returned "
			    "%zd, not whole records of %zu", how,
			    kind_name(p->kind), p->fd, n, buf_name[b->bk], r,
			    rs);
	if ((size_t)r > (b->wr / rs) * rs)
		STRICT_FAIL("%s of %s fd %d: %zd bytes into a buffer (%s) of "
			    "which only %zu are writable", how,
			    kind_name(p->kind), p->fd, r, buf_name[b->bk],
			    b->wr);
	atomic_fetch_add(&st->records, r / (ssize_t)rs);
	check_records(p, b->p, r);
}

static void check_write(const struct pick *p, const struct buf *b, size_t n,
			ssize_t r, const char *how)
{
	size_t ws;

	if (!check_transfer(p, n, r, how))
		return;
	ws = wsize(p->kind);
	if (p->kind == K_DEV || (is_obj(p->kind) && !ws))
		STRICT_FAIL("%s to %s fd %d returned %zd", how,
			    kind_name(p->kind), p->fd, r);
	if (!is_obj(p->kind))
		return;
	if (n < ws || r == 0 || r % (ssize_t)ws)
		STRICT_FAIL("%s to %s fd %d (%zu bytes, buffer %s) returned "
			    "%zd, not whole records of %zu", how,
			    kind_name(p->kind), p->fd, n, buf_name[b->bk], r,
			    ws);
	if ((size_t)r > (b->rd / ws) * ws)
		STRICT_FAIL("%s to %s fd %d: %zd bytes from a buffer (%s) of "
			    "which only %zu are readable", how,
			    kind_name(p->kind), p->fd, r, buf_name[b->bk],
			    b->rd);
	if (obj_kind(p->kind)->write_set) {
		if (n / ws > obj_kind(p->kind)->write_set ||
		    (size_t)r != n / ws * ws)
			STRICT_FAIL("%s of %zu records to %s fd %d returned "
				    "%zd: not all or nothing", how, n / ws,
				    kind_name(p->kind), p->fd, r);
		atomic_fetch_add(&st->arms, 1);
	}
}

/* ---- operations ---- */

static size_t pick_size(size_t rec)
{
	if (!rec)
		rec = 1 + rn(64);
	switch (rn(14)) {
	case 0:
		return 0;
	case 1:
		return rn(rec);
	case 2:
		return rec - 1;
	case 3: case 4:
		return rec;
	case 5:
		return rec + 1 + rn(rec);
	case 6: case 7:
		return rec * (2 + rn(4));
	case 8:
		return rec * (1 + rn(131));
	case 9:
		return rn(8193);
	case 10:
		return 4096 + rn(4097);
	case 11:
		switch (rn(4)) {
		case 0:
			return SIZE_MAX;
		case 1:
			return (size_t)SSIZE_MAX;
		case 2:
			return 0x7ffff000;
		default:
			return (size_t)1 << (32 + rn(20));
		}
	default:
		return rec * (1 + rn(3));
	}
}

static int dev_fd(void)
{
	struct pick p;

	if (chance(80) && pick_slot(&p, K_DEV))
		return p.fd;
	return -1;
}

static void op_open_dev(void)
{
	int fd = open("/dev/pollfs", chance(50) ? O_RDWR : O_RDONLY |
		      (chance(50) ? O_CLOEXEC : 0) |
		      (chance(30) ? O_NONBLOCK : 0));

	note("open /dev/pollfs -> %d", fd);
	if (fd >= 0)
		publish(fd, K_DEV, 0);
}

static unsigned int pick_cmd_raw(int *kind)
{
	unsigned int i = (unsigned int)rn(pt_nkinds);
	unsigned int cmd = pt_kinds[i].cmd, nr = _IOC_NR(cmd);

	*kind = K_OBJ + (int)i;
	if (chance(75))
		return cmd;
	*kind = K_NONE;
	switch (rn(10)) {
	case 0:
		return _IOW(POLLFS_IOC_MAGIC, rn(256), struct pollfs_open);
	case 1:
		return _IOR(POLLFS_IOC_MAGIC, nr, struct pollfs_open);
	case 2:
		return _IOWR(POLLFS_IOC_MAGIC, nr, struct pollfs_aio_open);
	case 3:
		return _IO(POLLFS_IOC_MAGIC, nr);
	case 4:
		return _IOC(_IOC_WRITE, POLLFS_IOC_MAGIC, nr, rn(1 << 14));
	case 5:
		return cmd ^ (1u << rn(32));
	case 6:
		return chance(50) ? 0 : ~0u;
	case 7: {
		static const unsigned int generic[] = { FIONBIO, FIOCLEX,
			FIONCLEX, FIOASYNC, FIONREAD, FIGETBSZ, TCGETS,
			FIOQSIZE };

		return generic[rn(sizeof(generic) / sizeof(generic[0]))];
	}
	default:
		return (unsigned int)rnd();
	}
}

/* A command and the kind it creates (K_NONE: none). */
static unsigned int pick_cmd(int *kind)
{
	unsigned int cmd = pick_cmd_raw(kind);

	for (unsigned int i = 0; i < pt_nkinds; i++)
		if (cmd == pt_kinds[i].cmd)
			*kind = K_OBJ + (int)i;
	return cmd;
}

static bool magic_cmd(unsigned int cmd)
{
	return _IOC_TYPE(cmd) == POLLFS_IOC_MAGIC;
}

/* An ioctl on /dev/pollfs, valid or not. */
/*
 * The context an AIO object was made on, as its fdinfo says: not the
 * argument read back, which a crossing buffer lets another thread's
 * mapping change under the ioctl.  0 (unknown) if it cannot be read.
 */
static uint64_t aio_fd_ctx(int fd)
{
	char path[64], buf[512], *ctx;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (pt_read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	ctx = strstr(buf, "\nctx: ");
	return ctx ? strtoull(ctx + 6, NULL, 16) : 0;
}

static void op_create(void)
{
	int dev = dev_fd(), kind, fd, own_dev = -1;
	unsigned int cmd = pick_cmd(&kind);
	char arg[PT_KIND_ARG_MAX] __attribute__((aligned(8)));
	struct buf b;
	bool must_fail = false, hostile = chance(30);
	uint32_t flags = 0, reserved = 0;
	size_t arg_size, arg_len;
	const char *why = "";

	if (dev < 0) {
		own_dev = open("/dev/pollfs", O_RDWR | O_CLOEXEC);
		if (own_dev < 0)
			FAIL("open /dev/pollfs: %s", strerror(errno));
		dev = own_dev;
	}
	memset(arg, 0, sizeof(arg));
	if (chance(85))
		flags = (uint32_t)rn(4) == 0 ? 0 :
			(chance(50) ? POLLFS_NONBLOCK : 0) |
			(chance(50) ? POLLFS_CLOEXEC : 0);
	else
		flags = chance(50) ? 1u << rn(32) : (uint32_t)rnd();
	if (chance(6))
		reserved = chance(50) ? 1u << rn(32) : (uint32_t)rnd();
	if (flags & ~(uint32_t)(POLLFS_NONBLOCK | POLLFS_CLOEXEC)) {
		must_fail = true;
		why = "unknown flag";
	}
	if (reserved) {
		must_fail = true;
		why = "reserved field";
	}
	arg_size = is_obj(kind) ? obj_kind(kind)->arg_size :
				  sizeof(struct pollfs_open);
	/* the signal mask and the AIO context: any, not only valid ones */
	if (kind == K_SIGNAL) {
		struct pollfs_signal_open o = { pick_mask(), flags, reserved };

		memcpy(arg, &o, sizeof(o));
	} else if (kind == K_AIO) {
		struct pollfs_aio_open o = { pick_ctx(), flags, reserved };

		memcpy(arg, &o, sizeof(o));
	} else if (is_obj(kind)) {
		obj_kind(kind)->fill_arg(arg, flags, reserved);
	} else {
		struct pollfs_open o = { flags, reserved };

		memcpy(arg, &o, sizeof(o));
	}
	arg_len = arg_size > 16 ? arg_size : 16;
	pick_buf(&b, arg_len, hostile);
	if (b.bk == B_GOOD || b.bk == B_MISALIGNED || b.bk == B_CROSS) {
		size_t n = b.wr < arg_len ? b.wr : arg_len;

		memcpy(b.p, arg, n);
		if (b.wr < arg_size) {
			must_fail = true;
			why = "argument crosses into a PROT_NONE page";
		}
	} else if (b.bk == B_RO || b.bk == B_VDSO) {
		must_fail = false;	/* whatever is there */
	} else {
		must_fail = true;
		why = "unreadable argument";
	}
	if (kind == K_NONE && magic_cmd(cmd)) {
		must_fail = true;
		why = "unknown ioctl";
	}

	errno = 0;
	fd = ioctl(dev, cmd, b.p);
	if (guard_lost(&b))
		must_fail = false;
	note("ioctl(%d, %#x, %s %p) -> %d errno %d", dev, cmd, buf_name[b.bk],
	     (void *)b.p, fd, errno);
	if (own_dev >= 0)
		close(own_dev);
	if (fd < 0) {
		atomic_fetch_add(&st->create_fail, 1);
		return;
	}
	if (kind == K_NONE) {
		/* FIONBIO, FIOCLEX and friends answer 0; no fd */
		if (magic_cmd(cmd) || fd > 0)
			STRICT_FAIL("ioctl %#x on /dev/pollfs returned %d",
				    cmd, fd);
		return;
	}
	if (must_fail) {
		close(fd);
		STRICT_FAIL("ioctl %#x (%s) created fd %d: %s", cmd,
			    kind_name(kind), fd, why);
	}
	if (fd_kind(fd) != kind) {
		int k = fd_kind(fd);

		close(fd);
		STRICT_FAIL("ioctl %#x made fd %d of kind %s, expected %s",
			    cmd, fd, kind_name(k), kind_name(kind));
	}
	/* the flags asked for are ours only in a buffer we filled to the
	 * end of the structure */
	if (single && (b.bk == B_GOOD || b.bk == B_MISALIGNED ||
		       b.bk == B_CROSS) && b.wr >= arg_size) {
		int fl = fcntl(fd, F_GETFL), fdf = fcntl(fd, F_GETFD);

		if (!!(fl & O_NONBLOCK) != !!(flags & POLLFS_NONBLOCK) ||
		    !!(fdf & FD_CLOEXEC) != !!(flags & POLLFS_CLOEXEC))
			STRICT_FAIL("fd %d created with flags %#x has status "
				    "flags %#x, fd flags %#x", fd, flags, fl,
				    fdf);
	}
	atomic_fetch_add(&st->creates, 1);
	publish(fd, kind, kind == K_AIO ? aio_fd_ctx(fd) : 0);
}

/* ioctls on anything but the device: none creates an object. */
static void op_ioctl_other(void)
{
	struct pick p;
	struct buf b;
	int kind;
	unsigned int cmd = pick_cmd(&kind);
	int r;

	if (!pick_slot(&p, -1))
		return;
	pick_buf(&b, 16, true);
	if (b.wr >= 16)
		fill_records(b.p, 16, K_FUTEX);
	r = ioctl(p.fd, cmd, b.p);
	note("ioctl(%d %s, %#x) -> %d", p.fd, kind_name(p.kind), cmd, r);
	if (r > 0 && same(&p) && p.kind != K_DEV)
		STRICT_FAIL("ioctl %#x on %s fd %d returned %d", cmd,
			    kind_name(p.kind), p.fd, r);
	if (r > 0 && is_obj(fd_kind(r)))
		publish(r, fd_kind(r), 0);
}

static void op_read(void)
{
	struct pick p;
	struct buf b;
	size_t n;
	ssize_t r;
	int e;

	if (!pick_slot(&p, chance(70) ? any_obj() : -1) &&
	    !pick_slot(&p, -1))
		return;
	n = pick_size(rsize(p.kind));
	pick_buf(&b, n, chance(35));
	if (chance(20)) {
		int fl = fcntl(p.fd, F_GETFL);

		if (fl >= 0)
			fcntl(p.fd, F_SETFL, fl ^ O_NONBLOCK);
	}
	errno = 0;
	r = read(p.fd, b.p, n);
	e = errno;
	settle(&b);
	note("read(%d %s, %s, %zu) -> %zd errno %d", p.fd, kind_name(p.kind),
	     buf_name[b.bk], n, r, e);
	atomic_fetch_add(&st->reads, 1);
	check_read(&p, &b, n, r, e, "read");
}

static void op_readv(void)
{
	struct pick p;
	struct iovec iov[4];
	size_t total = 0, rs;
	int cnt = 1 + (int)rn(4);
	ssize_t r;

	if (!pick_slot(&p, any_obj()) && !pick_slot(&p, -1))
		return;
	rs = rsize(p.kind) ? rsize(p.kind) : 16;
	for (int i = 0; i < cnt; i++) {
		iov[i].iov_base = tbuf + i * 512 + rn(8);
		iov[i].iov_len = chance(50) ? rs * rn(3) : rn(rs * 2 + 1);
		total += iov[i].iov_len;
	}
	r = chance(50) ? readv(p.fd, iov, cnt) : writev(p.fd, iov, cnt);
	note("readv/writev(%d %s, %d iovecs, %zu) -> %zd errno %d", p.fd,
	     kind_name(p.kind), cnt, total, r, errno);
	if (r != -1 && (r < 0 || (size_t)r > total))
		FAIL("readv/writev of %zu bytes returned %zd", total, r);
}

static void op_write(void)
{
	struct pick p;
	struct buf b;
	size_t n, ws;
	ssize_t r;
	int e;

	if (!pick_slot(&p, chance(80) ? obj_with(takes_writes) : -1) &&
	    !pick_slot(&p, -1))
		return;
	ws = wsize(p.kind);
	/* a kind that takes sets: small ones, and up to past the most */
	if (is_obj(p.kind) && obj_kind(p.kind)->write_set && chance(60))
		n = ws * (chance(60) ? 1 + rn(4) :
			  1 + rn(obj_kind(p.kind)->write_set + 2)) +
		    (chance(10) ? rn(ws) : 0);
	else
		n = pick_size(ws);
	pick_buf(&b, n, chance(30));
	if (b.wr)	/* ours to fill; read-only ones hold what they hold */
		fill_records(b.p, n < b.wr ? n : b.wr, p.kind);
	errno = 0;
	r = write(p.fd, b.p, n);
	e = errno;
	settle(&b);
	note("write(%d %s, %s, %zu) -> %zd errno %d", p.fd, kind_name(p.kind),
	     buf_name[b.bk], n, r, e);
	atomic_fetch_add(&st->writes, 1);
	check_write(&p, &b, n, r, "write");
}

/* A futex object armed on the churn region, which then goes away. */
static void op_arm_churn(void)
{
	struct pick p;
	struct pollfs_futex_event ev[8];
	int n = 1 + (int)rn(8);
	ssize_t r;

	if (!pick_slot(&p, K_FUTEX))
		return;
	for (int i = 0; i < n; i++) {
		uint64_t a = (uintptr_t)churn + rn(CHURN_PAGES * PAGE / 64) * 64;

		ev[i].addr = a;
		if (!peek32(a, &ev[i].val))
			ev[i].val = 0;
		ev[i].flags = chance(50) ? POLLFS_FUTEX_SHARED : 0;
	}
	r = write(p.fd, ev, (size_t)n * sizeof(ev[0]));
	note("arm %d on churn: fd %d -> %zd errno %d", n, p.fd, r, errno);
}

/*
 * Serialized: the region's address must be ours whenever it is mapped
 * over, so that nothing else (a stack, a malloc arena) that took the
 * hole after a failed remap is ever replaced.  Not in the children, so
 * no fork can inherit the lock taken.
 */
static pthread_mutex_t churn_lock = PTHREAD_MUTEX_INITIALIZER;

static void op_churn(void)
{
	void *r = NULL;
	int what = (int)rn(8);

	pthread_mutex_lock(&churn_lock);
	as_begin();
	if (!atomic_load(&churn_mapped)) {
		/* only where nothing else took its place */
		r = mmap(churn, CHURN_PAGES * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0);
		if (r == churn) {
			atomic_store(&churn_mapped, 1);
		} else {
			if (r != MAP_FAILED)
				munmap(r, CHURN_PAGES * PAGE);
			as_end();
			pthread_mutex_unlock(&churn_lock);
			note("churn: region lost");
			return;
		}
	}
	switch (what) {
	case 0:		/* replace, anonymous private */
		r = mmap(churn, CHURN_PAGES * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		break;
	case 1:		/* replace, anonymous shared */
		r = mmap(churn, CHURN_PAGES * PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		break;
	case 2:		/* replace, a shared file */
		r = mmap(churn, CHURN_PAGES * PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, churn_memfd, 0);
		break;
	case 3:		/* unmap, and map again if the hole is still free */
		munmap(churn, CHURN_PAGES * PAGE);
		atomic_store(&churn_mapped, 0);
		sched_yield();
		r = mmap(churn, CHURN_PAGES * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0);
		if (r == churn)
			atomic_store(&churn_mapped, 1);
		else if (r != MAP_FAILED)
			munmap(r, CHURN_PAGES * PAGE);
		break;
	case 4:
		mprotect(churn, CHURN_PAGES * PAGE,
			 chance(50) ? PROT_NONE : PROT_READ);
		break;
	case 5:
		mprotect(churn, CHURN_PAGES * PAGE, PROT_READ | PROT_WRITE);
		break;
	case 6:
		madvise(churn, CHURN_PAGES * PAGE,
			chance(50) ? MADV_DONTNEED : MADV_PAGEOUT);
		break;
	default: {
		uint32_t v = (uint32_t)rn(3);

		poke((uintptr_t)churn + rn(CHURN_PAGES * PAGE / 64) * 64, &v,
		     4);
		break;
	}
	}
	as_end();
	pthread_mutex_unlock(&churn_lock);
	atomic_fetch_add(&st->maps, 1);
	note("churn %d -> %p", what, r);
}

static long sys_futex(uint64_t uaddr, int op, uint32_t val, uint64_t val2,
		      uint64_t uaddr2, uint32_t val3)
{
	return syscall(SYS_futex, (void *)(uintptr_t)uaddr, op, val,
		       (void *)(uintptr_t)val2, (void *)(uintptr_t)uaddr2,
		       val3);
}

static uint32_t *rw_word(void)
{
	return word(arenas_rw[rn(3)], (int)rn(NHOT));
}

static void op_futex(void)
{
	struct faddr a, b;
	uint32_t fl, fl2;
	int priv;
	long r = 0;
	int what = (int)rn(16);
	struct timespec ts = { 0, (long)(US(100) + rn(MS(2))) };

	pick_faddr(&a, &fl);
	pick_faddr(&b, &fl2);
	priv = (fl & POLLFS_FUTEX_SHARED) ? 0 : FUTEX_PRIVATE_FLAG;
	switch (what) {
	case 0: case 1: case 2: {
		/* what a futex user does: change the word, then wake */
		uint32_t *w = rw_word();

		__atomic_fetch_add(w, 1, __ATOMIC_SEQ_CST);
		r = sys_futex((uintptr_t)w, FUTEX_WAKE |
			      (chance(50) ? FUTEX_PRIVATE_FLAG : 0),
			      chance(70) ? 1 : INT_MAX, 0, 0, 0);
		break;
	}
	case 3:
		r = sys_futex(a.addr, FUTEX_WAKE | priv,
			      chance(80) ? (uint32_t)rn(3) : (uint32_t)rnd(),
			      0, 0, 0);
		break;
	case 4:
		r = sys_futex(a.addr, FUTEX_WAKE_BITSET | priv,
			      (uint32_t)rn(4), 0, 0,
			      chance(20) ? 0 : (uint32_t)rnd());
		break;
	case 5:
		r = sys_futex(a.addr, FUTEX_REQUEUE | priv, (uint32_t)rn(3),
			      chance(10) ? (uint64_t)-1 : rn(4), b.addr, 0);
		break;
	case 6:
		r = sys_futex(a.addr, FUTEX_CMP_REQUEUE | priv,
			      (uint32_t)rn(3), rn(4), b.addr, a.val);
		break;
	case 7: {
		uint32_t op = chance(80) ?
			FUTEX_OP((uint32_t)rn(5) | (chance(10) ? 8 : 0),
				 (uint32_t)rn(4), (uint32_t)rn(6),
				 (uint32_t)rn(4)) : (uint32_t)rnd();

		r = sys_futex(a.addr, FUTEX_WAKE_OP | priv, (uint32_t)rn(3),
			      rn(3), chance(80) ? (uintptr_t)rw_word() : b.addr,
			      op);
		break;
	}
	case 8: case 9: {
		/* PI on the PI words, and on armed words now and then */
		uint32_t *w = word(chance(50) ? arena_a : arena_s,
				   NHOT + (int)rn(NPI));
		uint64_t ad = chance(80) ? (uintptr_t)w : a.addr;
		struct timespec abs;

		clock_gettime(CLOCK_REALTIME, &abs);
		abs.tv_nsec += (long)MS(1);
		if (abs.tv_nsec >= NSEC_PER_SEC) {
			abs.tv_sec++;
			abs.tv_nsec -= NSEC_PER_SEC;
		}
		switch (rn(4)) {
		case 0:
			r = sys_futex(ad, FUTEX_LOCK_PI | priv, 0,
				      (uintptr_t)&abs, 0, 0);
			if (r == 0)
				sys_futex(ad, FUTEX_UNLOCK_PI | priv, 0, 0, 0,
					  0);
			break;
		case 1:
			r = sys_futex(ad, FUTEX_TRYLOCK_PI | priv, 0, 0, 0, 0);
			if (r == 0 && chance(80))
				sys_futex(ad, FUTEX_UNLOCK_PI | priv, 0, 0, 0,
					  0);
			break;
		case 2:
			r = sys_futex(ad, FUTEX_UNLOCK_PI | priv, 0, 0, 0, 0);
			break;
		default:
			r = sys_futex(ad, FUTEX_CMP_REQUEUE_PI | priv, 1,
				      rn(3), (uintptr_t)w, a.val);
			break;
		}
		break;
	}
	case 10:
		r = sys_futex(a.addr, FUTEX_WAIT | priv, a.val,
			      (uintptr_t)&ts, 0, 0);
		break;
	case 11: {
		struct timespec abs;

		abs = pt_mono_in(US(500));
		r = sys_futex(a.addr, FUTEX_WAIT_BITSET | priv, a.val,
			      (uintptr_t)&abs, 0, (uint32_t)rnd() | 1);
		break;
	}
	case 12: {
		struct futex_waitv wv[4];
		int n = 1 + (int)rn(4);
		struct timespec abs;

		for (int i = 0; i < n; i++) {
			struct faddr c;
			uint32_t f;

			pick_faddr(&c, &f);
			wv[i].uaddr = c.addr;
			wv[i].val = c.val;
			wv[i].flags = FUTEX_32 |
				((f & POLLFS_FUTEX_SHARED) ? 0 :
				 FUTEX_PRIVATE_FLAG);
			wv[i].__reserved = 0;
		}
		abs = pt_mono_in(US(500));
		r = syscall(SYS_futex_waitv, wv, n, 0, &abs, CLOCK_MONOTONIC);
		break;
	}
	case 13: {
		struct timespec abs;

		abs = pt_mono_in(US(500));
		r = sys_futex(a.addr, FUTEX_WAIT_REQUEUE_PI | priv, a.val,
			      (uintptr_t)&abs,
			      (uintptr_t)word(arena_a, NHOT + (int)rn(NPI)), 0);
		break;
	}
	default: {
		/* set a word to a small value, so that arms match often */
		uint32_t *w = rw_word();

		__atomic_store_n(w, (uint32_t)rn(3), __ATOMIC_SEQ_CST);
		r = sys_futex((uintptr_t)w, FUTEX_WAKE, INT_MAX, 0, 0, 0);
		break;
	}
	}
	if (r > 0 && what != 12)
		atomic_fetch_add(&st->wakes_counted, r);
	note("futex op %d on %#llx -> %ld errno %d", what,
	     (unsigned long long)a.addr, r, errno);
}

static void op_poll(void)
{
	struct pollfd pfd[8];
	struct pick p[8];
	int n = 1 + (int)rn(8), r;

	for (int i = 0; i < n; i++) {
		if (!pick_slot(&p[i], -1))
			return;
		pfd[i].fd = p[i].fd;
		pfd[i].events = chance(80) ? POLLIN : (short)rnd();
		pfd[i].revents = 0;
	}
	r = poll(pfd, (nfds_t)n, chance(70) ? 0 : (int)rn(10));
	note("poll(%d fds) -> %d errno %d", n, r, errno);
	if (r < 0)
		return;
	for (int i = 0; i < n; i++) {
		short out = wsize(p[i].kind) ? POLLOUT | POLLWRNORM : 0;
		short allowed = POLLIN | POLLHUP | POLLERR | out;

		if (!is_obj(p[i].kind) || !same(&p[i]))
			continue;
		/* a write never waits: POLLOUT whenever it is asked for */
		out &= pfd[i].events;
		if ((pfd[i].revents & ~allowed) || (pfd[i].revents & out) != out)
			STRICT_FAIL("poll of %s fd %d (events %#x): revents %#x",
				    kind_name(p[i].kind), pfd[i].fd,
				    (unsigned short)pfd[i].events,
				    (unsigned short)pfd[i].revents);
	}
}

static void op_select(void)
{
	fd_set rd, wr, ex;
	struct timeval tv = { 0, (long)rn(2000) };
	struct pick p;
	int maxfd = -1;

	FD_ZERO(&rd);
	FD_ZERO(&wr);
	FD_ZERO(&ex);
	for (int i = 0, n = 1 + (int)rn(6); i < n; i++) {
		if (!pick_slot(&p, -1) || p.fd >= FD_SETSIZE)
			continue;
		FD_SET(p.fd, &rd);
		if (chance(30))
			FD_SET(p.fd, &wr);
		if (chance(30))
			FD_SET(p.fd, &ex);
		if (p.fd > maxfd)
			maxfd = p.fd;
	}
	if (maxfd < 0)
		return;
	note("select(%d) -> %d", maxfd + 1,
	     select(maxfd + 1, &rd, &wr, &ex, &tv));
}

static void op_epoll(void)
{
	struct pick ep, t;
	int r = 0, what = (int)rn(10);

	atomic_fetch_add(&st->epolls, 1);
	if (what == 0 || !pick_slot(&ep, K_EPOLL)) {
		int fd = epoll_create1(chance(50) ? EPOLL_CLOEXEC : 0);

		note("epoll_create1 -> %d", fd);
		if (fd >= 0)
			publish(fd, K_EPOLL, 0);
		return;
	}
	if (what <= 6) {
		static const uint32_t evs[] = { EPOLLIN, EPOLLIN | EPOLLET,
			EPOLLIN | EPOLLONESHOT, EPOLLIN | EPOLLEXCLUSIVE,
			EPOLLOUT | EPOLLPRI | EPOLLRDHUP, EPOLLIN | EPOLLWAKEUP,
			EPOLLIN | EPOLLET | EPOLLONESHOT };
		struct epoll_event e;
		int op = what <= 3 ? EPOLL_CTL_ADD :
			 what == 4 ? EPOLL_CTL_MOD : EPOLL_CTL_DEL;

		if (!pick_slot(&t, -1))
			return;
		e.events = chance(90) ? evs[rn(sizeof(evs) / sizeof(evs[0]))] :
				       (uint32_t)rnd();
		e.data.u64 = t.w;
		r = epoll_ctl(ep.fd, op, t.fd, &e);
		note("epoll_ctl(%d, %d, %d %s) -> %d errno %d", ep.fd, op, t.fd,
		     kind_name(t.kind), r, errno);
	} else {
		struct epoll_event e[16];

		r = epoll_wait(ep.fd, e, 1 + (int)rn(16),
			       chance(60) ? 0 : (int)rn(10));
		note("epoll_wait(%d) -> %d errno %d", ep.fd, r, errno);
		for (int i = 0; i < r; i++)
			if (e[i].events & POLLNVAL)
				FAIL("epoll_wait reported POLLNVAL");
	}
}

static void op_close(void)
{
	struct pick p;

	/* Other threads may be inside a call on this descriptor, or about
	 * to make one: they picked it before the claim.  Only a claim
	 * closes, so no descriptor is ever closed twice. */
	if (!pick_slot(&p, -1))
		return;
	if (!claim(&p))
		return;
	atomic_fetch_add(&st->closes, 1);
	note("close(%d %s) -> %d", p.fd, kind_name(p.kind), close(p.fd));
}

static void op_dup(void)
{
	struct pick src, dst;
	int fd, k;

	if (!pick_slot(&src, -1))
		return;
	atomic_fetch_add(&st->dups, 1);
	switch (rn(4)) {
	case 0:
		fd = dup(src.fd);
		break;
	case 1:
		fd = fcntl(src.fd, chance(50) ? F_DUPFD : F_DUPFD_CLOEXEC,
			   HIGH_FD + (int)rn(64));
		break;
	default:
		/* over a live descriptor */
		if (!pick_slot(&dst, -1) || dst.i == src.i || !claim(&dst))
			return;
		if (chance(50))
			fd = dup2(src.fd, dst.fd);
		else
			fd = dup3(src.fd, dst.fd, chance(50) ? O_CLOEXEC : 0);
		note("dup2(%d %s, %d %s) -> %d errno %d", src.fd,
		     kind_name(src.kind), dst.fd, kind_name(dst.kind), fd,
		     errno);
		if (fd < 0)
			fd = dst.fd;	/* still ours, still open */
		break;
	}
	if (fd < 0)
		return;
	k = fd_kind(fd);
	if (k == K_NONE) {
		close(fd);
		return;
	}
	publish(fd, k, k == src.kind && same(&src) ? src.ctx : 0);
}

static void op_fcntl(void)
{
	struct pick p;
	char path[64], buf[512];
	int fd;

	if (!pick_slot(&p, -1))
		return;
	switch (rn(12)) {
	case 0: case 1: {
		int fl = fcntl(p.fd, F_GETFL);

		if (fl >= 0)
			fcntl(p.fd, F_SETFL, (fl ^ O_NONBLOCK) |
			      (chance(10) ? O_ASYNC : 0));
		break;
	}
	case 2:
		fcntl(p.fd, F_SETFD, chance(50) ? FD_CLOEXEC : 0);
		break;
	case 3:
		if (lseek(p.fd, (off_t)rn(100), (int)rn(3)) != -1 &&
		    same(&p) && (is_obj(p.kind)))
			STRICT_FAIL("lseek on %s fd %d succeeded",
				    kind_name(p.kind), p.fd);
		break;
	case 4: {
		/* fdinfo: show_fdinfo of every kind */
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", p.fd);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			while (read(fd, buf, sizeof(buf)) > 0)
				;
			close(fd);
		}
		break;
	}
	case 5:
		/* reopening through /proc must not give a second object */
		snprintf(path, sizeof(path), "/proc/self/fd/%d", p.fd);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			int k = fd_kind(fd);

			close(fd);
			if (is_obj(k))
				STRICT_FAIL("reopened %s through %s",
					    kind_name(k), path);
		}
		break;
	case 6: {
		struct stat sb;

		fstat(p.fd, &sb);
		fsync(p.fd);
		ftruncate(p.fd, (off_t)rn(10));
		break;
	}
	case 7:
		sendfile(nullfd, p.fd, NULL, rn(4096));
		break;
	case 8: {
		void *m;

		as_begin();
		m = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, p.fd, 0);
		if (m != MAP_FAILED)
			munmap(m, PAGE);
		as_end();
		break;
	}
	case 9:
		pread(p.fd, tbuf, rn(256), (off_t)rn(8));
		break;
	case 10:
		fcntl(p.fd, F_SETOWN, getpid());
		break;
	default:
		flock(p.fd, chance(50) ? LOCK_EX | LOCK_NB : LOCK_UN);
		break;
	}
	note("fcntl-ish on %d %s", p.fd, kind_name(p.kind));
}

static void op_aio(void)
{
	aio_context_t ctx = 0;
	int what = (int)rn(10), slot = (int)rn(NCTX);
	/* io_setup maps a ring, io_destroy and munmap unmap one */
	const bool maps = what <= 2 || what >= 8;
	long r = 0;

	if (maps)
		as_begin();
	switch (what) {
	case 0: case 1:
		if (atomic_load(&ctxs[slot]))
			break;
		r = syscall(SYS_io_setup, 1 + (unsigned int)rn(64), &ctx);
		if (r == 0) {
			uint64_t zero = 0;

			atomic_fetch_add(&st->aio_setups, 1);
			if (!atomic_compare_exchange_strong(&ctxs[slot], &zero,
							    ctx))
				syscall(SYS_io_destroy, ctx);
		}
		break;
	case 2: {
		/* destroyed under its objects */
		ctx = atomic_exchange(&ctxs[slot], 0) & ~CTX_RINGLESS;
		if (ctx) {
			r = syscall(SYS_io_destroy, ctx);
			atomic_store(&dead_ctx, ctx);
		}
		break;
	}
	case 3: case 4: case 5: {
		struct iocb cb, *cbs[1] = { &cb };
		struct pick p;

		ctx = ctx_get(slot);
		if (!ctx)
			break;
		memset(&cb, 0, sizeof(cb));
		cb.aio_data = rnd();
		if (what == 5 && pick_slot(&p, -1)) {
			/* IOCB_CMD_POLL of a pollfs file */
			cb.aio_lio_opcode = IOCB_CMD_POLL;
			cb.aio_fildes = (uint32_t)p.fd;
			cb.aio_buf = chance(80) ? POLLIN : rn(0x10000);
		} else {
			cb.aio_lio_opcode = chance(70) ? IOCB_CMD_PWRITE :
					    IOCB_CMD_PREAD;
			cb.aio_fildes = (uint32_t)tmpfd;
			cb.aio_buf = (uintptr_t)tbuf;
			cb.aio_nbytes = 64;
			cb.aio_offset = (int64_t)rn(1024) * 64;
		}
		r = syscall(SYS_io_submit, ctx, 1, cbs);
		break;
	}
	case 6: case 7: {
		struct io_event ev[8];
		struct timespec ts = { 0, (long)rn(US(500)) };

		ctx = ctx_get(slot);
		if (ctx)
			r = syscall(SYS_io_getevents, ctx, 0, 1 + (long)rn(8),
				    ev, &ts);
		break;
	}
	case 8: {
		/* user space owns the ring's head: scribble on it */
		uint32_t v = chance(50) ? (uint32_t)rnd() : (uint32_t)rn(70);

		/* taken out of the table meanwhile, so that no one
		 * destroys it and maps something else there */
		ctx = atomic_exchange(&ctxs[slot], 0);
		if (ctx) {
			uint64_t zero = 0;

			if (!(ctx & CTX_RINGLESS))
				poke(ctx + 8, &v, 4);
			if (!atomic_compare_exchange_strong(&ctxs[slot], &zero,
							    ctx))
				syscall(SYS_io_destroy, ctx & ~CTX_RINGLESS);
		}
		break;
	}
	case 9:
		if (chance(85))
			goto stale;
		/*
		 * User space may unmap the ring; the context lives on.  But
		 * io_destroy unmaps the ring's range whatever is there by
		 * then, a ring of pollfs's mapped since included: so the
		 * ring is replaced by an inaccessible placeholder, which
		 * keeps the range for the context.  io_destroy, which reads
		 * the context's id there, fails on it from now on: the
		 * context dies with the process.
		 */
		ctx = atomic_exchange(&ctxs[slot], 0);
		if (ctx) {
			uint64_t zero = 0;

			if (!(ctx & CTX_RINGLESS)) {
				void *m = mmap((void *)(uintptr_t)ctx, PAGE,
					       PROT_NONE, MAP_PRIVATE |
					       MAP_ANONYMOUS | MAP_FIXED,
					       -1, 0);

				r = m == MAP_FAILED ? -1 : 0;
			}
			ctx |= CTX_RINGLESS;
			if (!atomic_compare_exchange_strong(&ctxs[slot], &zero,
							    ctx))
				syscall(SYS_io_destroy, ctx & ~CTX_RINGLESS);
		}
		break;
	default:
stale:
		/* an object on a context that is not there any more */
		ctx = atomic_load(&dead_ctx);
		if (ctx) {
			struct pollfs_aio_open o = { ctx, 0, 0 };
			int dev = dev_fd(), fd;

			if (dev >= 0) {
				fd = ioctl(dev, POLLFS_IOC_AIO, &o);
				if (fd >= 0)
					publish(fd, K_AIO, ctx);
			}
		}
		break;
	}
	if (maps)
		as_end();
	note("aio op %d ctx %#llx -> %ld errno %d", what,
	     (unsigned long long)ctx, r, errno);
}

static pid_t thread_tids[MAXTHREADS + MAXEPHEMERAL + 1];

static void op_signal(void)
{
	int sig = fsigs[rn((uint64_t)nfsigs)];
	int what = (int)rn(8);
	sigset_t set;

	atomic_fetch_add(&st->signals, 1);
	switch (what) {
	case 0:
		kill(getpid(), sig);
		break;
	case 1: case 2: {
		pid_t tid = thread_tids[rn(MAXTHREADS + MAXEPHEMERAL + 1)];

		if (tid)
			syscall(SYS_tgkill, getpid(), tid, sig);
		break;
	}
	case 3: {
		union sigval v = { .sival_int = (int)rnd() };

		sigqueue(getpid(), sig, v);
		break;
	}
	case 4: case 5:
		/* block or unblock a random set of our signals */
		sigemptyset(&set);
		for (int i = 0; i < nfsigs; i++)
			if (chance(40))
				sigaddset(&set, fsigs[i]);
		pthread_sigmask(chance(50) ? SIG_BLOCK : SIG_UNBLOCK, &set,
				NULL);
		break;
	case 6:
		sigemptyset(&set);
		pthread_sigmask(SIG_SETMASK, &set, NULL);
		break;
	default:
		raise(sig);
		break;
	}
	note("signal op %d sig %d", what, sig);
}

/* ---- 1.2: the mappings of record rings ---- */

/*
 * The mappings of rings this process made and may write into: made by
 * op_ring_new (the layout known), op_ring_ioctl and op_ring_map (maybe
 * not), taken apart by op_ring_unmap.  The scribbler thread writes into
 * them under the read lock, the operations that add or remove one hold
 * the write lock, so that no write ever lands on an unmapped page.  A
 * forked child gets a copy of the table and of the mappings (MAP_SHARED:
 * the same rings), and a lock of its own (child_main).
 */
#define NRINGMAP	16
#define RING_MAX_LEN	((size_t)16 << 20)	/* longer than any ring */

struct ringmap {
	unsigned char *addr;		/* NULL: a free entry */
	size_t len;
	bool known;			/* p is its layout */
	struct pollfs_ring_params p;
};
static struct ringmap ringmaps[NRINGMAP];
static pthread_rwlock_t ringmap_lock = PTHREAD_RWLOCK_INITIALIZER;

/* For on_fault(): the mappings written into, the AIO contexts. */
static void fault_tables(void)
{
	for (int i = 0; i < NRINGMAP; i++)
		if (ringmaps[i].addr)
			pt_diag("  ring mapping %d: %p-%p%s", i,
				(void *)ringmaps[i].addr,
				(void *)(ringmaps[i].addr + ringmaps[i].len),
				ringmaps[i].known ? " (layout known)" : "");
	for (int i = 0; i < NCTX; i++)
		if (atomic_load(&ctxs[i]))
			pt_diag("  AIO context %d: %#llx%s", i,
				(unsigned long long)ctx_get(i),
				atomic_load(&ctxs[i]) & CTX_RINGLESS ?
				" (ring replaced)" : "");
}

/* ---- forked children ---- */

struct child {
	_Atomic pid_t pid;
	int64_t started;
	atomic_bool in_exit;	/* seen in its exit past the limit of a life */
};
static struct child children[MAXCHILD];
static void run_ops(int64_t until, bool is_child);

static void exec_self(void)
{
	char *argv[] = { "fuzz", "-x", NULL };
	extern char **environ;

	atomic_fetch_add(&st->execs, 1);
	guard_disarm();
	execve(self_exe, argv, environ);
	_exit(0);
}

static void *blocker(void *arg)
{
	char buf[256];
	int fd = (int)(intptr_t)arg;

	for (;;)
		if (read(fd, buf, sizeof(buf)) < 0 && errno != EINTR)
			pause();
	return NULL;
}

static void child_main(uint64_t cseed)
{
	int64_t until;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	single = true;
	depth++;
	rseed(seed, cseed);
	memset(children, 0, sizeof(children));
	/* the parent's contexts are not ours (nor their rings) */
	for (int i = 0; i < NCTX; i++)
		atomic_store(&ctxs[i], 0);
	/*
	 * The rings' mappings are ours too (fork copied them, with the
	 * table, under the read lock: no unmap of one half done), but the
	 * lock is held in the copy: a lock of our own, no scribbler.
	 */
	pthread_rwlock_init(&ringmap_lock, NULL);
	thread_tids[0] = (pid_t)syscall(SYS_gettid);
	for (int i = 1; i < MAXTHREADS + MAXEPHEMERAL + 1; i++)
		thread_tids[i] = 0;
	for (size_t t = 0; t < sizeof(traces) / sizeof(traces[0]); t++)
		traces[t].next = 0;
	trace_take(0);
	/*
	 * fork copies the descriptors a moment before the memory, and the
	 * other threads went on meanwhile: the table may name descriptors
	 * this process does not have, or others under their numbers.
	 */
	for (int i = 0; i < NSLOT; i++) {
		uint64_t w = atomic_load(&slots[i].word);
		int k;

		if (W_FD(w) < 0) {	/* forked in the middle of a publish */
			atomic_store(&slots[i].word, W_MAKE(W_GEN(w) + 1, -1));
			continue;
		}
		k = fd_kind(W_FD(w));
		if (k == K_NONE) {
			atomic_store(&slots[i].word, W_MAKE(W_GEN(w) + 1, -1));
			continue;
		}
		if (k != atomic_load(&slots[i].kind)) {
			atomic_store(&slots[i].kind, k);
			atomic_store(&slots[i].ctx, 0);
		}
		/* another AIO object under the same number: its own context */
		if (k == K_AIO)
			atomic_store(&slots[i].ctx, aio_fd_ctx(W_FD(w)));
	}
	guard_init();
	until = pt_mono() + MS(50 + rn(750));
	if (until > deadline)
		until = deadline;
	run_ops(until, true);
	switch (rn(6)) {
	case 0: {
		/* exec, maybe with a thread blocked in a read */
		struct pick p;
		pthread_t th;

		if (chance(50) && pick_slot(&p, any_obj())) {
			int fl = fcntl(p.fd, F_GETFL);

			if (fl >= 0)
				fcntl(p.fd, F_SETFL, fl & ~O_NONBLOCK);
			as_begin();
			pthread_create(&th, NULL, blocker,
				       (void *)(intptr_t)p.fd);
			as_end();
			pt_sleep_ms(1);
		}
		exec_self();
		break;
	}
	case 1:
		raise(SIGKILL);
		break;
	case 2:
		for (int i = 0; i < NSLOT; i++) {
			int fd = W_FD(atomic_load(&slots[i].word));

			if (fd >= 0)
				close(fd);
		}
		_exit(0);
	default:
		_exit(0);
	}
	_exit(0);
}

static void check_child_status(pid_t pid, int status)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	/* SIGKILL is ours; so are the others we send, which kill a child
	 * once it exec'd (exec resets the handlers).  A fault is not. */
	if (WIFSIGNALED(status) && WTERMSIG(status) != SIGSEGV &&
	    WTERMSIG(status) != SIGBUS && WTERMSIG(status) != SIGILL &&
	    WTERMSIG(status) != SIGFPE && WTERMSIG(status) != SIGABRT &&
	    WTERMSIG(status) != SIGSYS && WTERMSIG(status) != SIGTRAP)
		return;
	atomic_fetch_add(&st->children_failed, 1);
	FAIL("child %d: %s %d", (int)pid,
	     WIFEXITED(status) ? "exit status" : "killed by signal",
	     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

static void show_task(pid_t pid)
{
	char path[64], buf[512];
	const char *files[] = { "wchan", "syscall", "stack" };

	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, files[i]);
		if (pt_read_file(path, buf, sizeof(buf)) > 0)
			pt_diag("%s: %s", path, buf);
	}
}

/*
 * Sends @sig to every process whose parent is @parent, or (@sig 0) shows
 * what each one waits in.
 */
static void signal_children(pid_t parent, int sig)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char path[64], buf[1024], *ppid, *state;
		pid_t pid = atoi(de->d_name);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
		if (pt_read_file(path, buf, sizeof(buf)) < 0)
			continue;
		ppid = strstr(buf, "\nPPid:");
		if (!ppid || atoi(ppid + 7) != parent)
			continue;
		if (sig) {
			kill(pid, sig);
			continue;
		}
		state = strstr(buf, "State:");
		pt_diag("left over: pid %d, %.*s", (int)pid,
			state ? (int)strcspn(state, "\n") : 0,
			state ? state : "");
		show_task(pid);
	}
	if (d)
		closedir(d);
}

/* A child that was still in its exit past the limit of a life is gone. */
static void note_slow_exit(pid_t pid, int64_t age)
{
	long ms = (long)(age / NSEC_PER_MSEC), max;

	pt_diag("child %d reaped %ld ms after its start", (int)pid, ms);
	atomic_fetch_add(&st->slow_exits, 1);
	max = atomic_load(&st->slowest_exit_ms);
	while (ms > max &&
	       !atomic_compare_exchange_weak(&st->slowest_exit_ms, &max, ms))
		;
}

/*
 * 1 when @pid is past its last instruction, in the kernel's exit
 * (PF_EXITING, the ninth field of /proc/PID/stat), 0 when it is not,
 * -1 when it is gone: reaped, by another thread's reap() too.
 */
static int task_exiting(pid_t pid)
{
	char path[64], buf[512], *p;
	unsigned long flags;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (pt_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strrchr(buf, ')');	/* the command may hold spaces */
	return p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu",
			   &flags) == 1 && (flags & 0x4);
}

/* Child @i is seen in its exit: said once, and undone if reaped meanwhile. */
static void note_in_exit(int i, pid_t pid, int64_t age)
{
	bool no = false;

	if (!atomic_compare_exchange_strong(&children[i].in_exit, &no, true))
		return;
	atomic_fetch_add(&st->in_exit_now, 1);
	/* Reaped since its stat was read: the reaper took the flag, or will. */
	if (task_exiting(pid) < 0) {
		if (atomic_exchange(&children[i].in_exit, false))
			atomic_fetch_sub(&st->in_exit_now, 1);
		return;
	}
	pt_diag("child %d still in its exit after %lld ms", (int)pid,
		(long long)(age / NSEC_PER_MSEC));
	show_task(pid);
}

/*
 * Reaps children; kills (and reports) those that hang.  A child lives
 * under a second, so 4 s is a hang, but not in the kernel's exit, which
 * may rightly wait longer: exit_aio() waits for two RCU grace periods
 * and a work item per AIO context, each a turn of a thread among the
 * fuzzer's busy ones on an emulated CPU.  There the limit is the
 * kernel's own hung-task timeout (30 s, vm/run), and the time is told.
 */
static void reap(bool all)
{
	int64_t now = pt_mono(), scale = (int64_t)pt_time_scale();

	for (int i = 0; i < MAXCHILD; i++) {
		pid_t pid = atomic_load(&children[i].pid);
		int64_t age;
		int status, exiting;

		if (pid <= 0)
			continue;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			if (atomic_exchange(&children[i].in_exit, false)) {
				atomic_fetch_sub(&st->in_exit_now, 1);
				note_slow_exit(pid, now - children[i].started);
			}
			atomic_store(&children[i].pid, 0);
			check_child_status(pid, status);
			continue;
		}
		age = now - children[i].started;
		/* 4 s, stretched on a slower kernel (make check-debug) */
		if (!all && age < 4 * NSEC_PER_SEC * scale)
			continue;
		exiting = task_exiting(pid);
		if (exiting < 0)
			continue;	/* another thread reaped it: it reports */
		if (exiting && age < 30 * NSEC_PER_SEC * scale) {
			note_in_exit(i, pid, age);
			continue;
		}
		pt_diag("child %d still running after %lld ms", (int)pid,
			(long long)(age / NSEC_PER_MSEC));
		show_task(pid);
		kill(pid, SIGKILL);
		FAIL("child %d hangs", (int)pid);
	}
}

static void op_fork(void)
{
	int i;
	pid_t pid;
	uint64_t cseed = rnd();

	if (depth >= 2 || pt_mono() > deadline - MS(300))
		return;
	/* a signal during fork makes it start again: no guard here */
	guard_disarm();
	for (i = 0; i < MAXCHILD; i++) {
		pid_t zero = 0;

		if (atomic_compare_exchange_strong(&children[i].pid, &zero, -1))
			break;
	}
	if (i == MAXCHILD)
		return;
	/*
	 * Not in the middle of an unmap of the rings' mappings, whose entry
	 * the child would see in its table with the mapping gone, or with
	 * another thread's mapping taken at its address meanwhile.
	 */
	pthread_rwlock_rdlock(&ringmap_lock);
	pid = fork();
	if (pid == 0)
		child_main(cseed);
	pthread_rwlock_unlock(&ringmap_lock);
	note("fork -> %d", pid);
	if (pid < 0) {
		atomic_store(&children[i].pid, 0);
		return;
	}
	atomic_fetch_add(&st->forks, 1);
	children[i].started = pt_mono();
	atomic_store(&children[i].pid, pid);
}

static void op_kill_child(void)
{
	pid_t pid = atomic_load(&children[rn(MAXCHILD)].pid);

	if (pid <= 0)
		return;
	switch (rn(4)) {
	case 0:
		kill(pid, SIGSTOP);
		pt_sleep_ns((int64_t)rn(US(500)));
		kill(pid, SIGCONT);
		break;
	case 1:
		kill(pid, SIGKILL);
		break;
	default:
		kill(pid, fsigs[rn((uint64_t)nfsigs)]);
		break;
	}
	note("signal child %d", pid);
}

/* ---- threads ---- */

static atomic_int ephemeral;
static void *thread_main(void *arg);

struct targ {
	int id;
	int nops;	/* 0: until the deadline */
	uint64_t seed;
};

static void op_thread(void)
{
	static struct targ args[MAXEPHEMERAL];
	pthread_t th;
	pthread_attr_t at;
	int n = atomic_fetch_add(&ephemeral, 1);

	if (single || n >= MAXEPHEMERAL) {
		atomic_fetch_sub(&ephemeral, 1);
		return;
	}
	for (int i = 0; i < MAXEPHEMERAL; i++) {
		if (thread_tids[MAXTHREADS + 1 + i])
			continue;
		args[i].id = MAXTHREADS + 1 + i;
		args[i].nops = 1 + (int)rn(30);
		args[i].seed = rnd();
		thread_tids[args[i].id] = -1;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		as_begin();
		if (pthread_create(&th, &at, thread_main, &args[i])) {
			thread_tids[args[i].id] = 0;
			atomic_fetch_sub(&ephemeral, 1);
		}
		as_end();
		pthread_attr_destroy(&at);
		return;
	}
	atomic_fetch_sub(&ephemeral, 1);
}

static void op_focus(void)
{
	struct pick p;

	if (chance(50) || !pick_slot(&p, -1))
		atomic_store(&focus, -1);
	else
		atomic_store(&focus, p.i);
}

/* ---- huge calls ---- */

/*
 * A count at the kernel's limit or past it (it clamps to MAX_RW, and
 * fails what runs past the end of the user address space), a large one,
 * or one around the futex set's limit of 128 records.
 */
static size_t pick_huge_size(size_t rec)
{
	switch (rn(8)) {
	case 0:
		return MAX_RW;
	case 1:
		return (size_t)1 << 31;
	case 2:
		return MAX_RW / rec * rec;
	case 3:
		if (chance(25))
			return chance(50) ? SIZE_MAX : (size_t)SSIZE_MAX;
		return (size_t)1 << (32 + rn(8));
	case 4:
		return rec * (POLLFS_FUTEX_WAITV_MAX - 4 + rn(8));
	case 5:
		return (((size_t)1 << 20) + rn(HUGE_LEN)) / rec * rec;
	default:
		return ((size_t)1 << 20) + rn((size_t)63 << 20);
	}
}

/*
 * A buffer in the huge regions.  Writes read zero pages: from anywhere
 * near the start of the 2 GiB, or a few records before its PROT_NONE
 * tail, or the smaller region's unmapped one; now and then the writable
 * region, or the PROT_NONE page itself.  Reads write the writable region,
 * near its start or its PROT_NONE tail (so that they touch little), or
 * the read-only one.
 */
static void pick_huge_buf(struct buf *b, size_t rec, bool for_read)
{
	size_t tail = rec * rn(4096) + (chance(20) ? rn(rec) : 0), off;
	unsigned int r = (unsigned int)rn(20);

	b->guard = NULL;
	off = rn(1024) * PAGE + (chance(20) ? 1 + rn(7) : 0);
	if (for_read) {
		if (!huge_rw || r < 2) {
			b->bk = B_HUGE_RO;
			b->p = huge_ro + off;
			b->rd = HUGE_LEN - off;
			b->wr = 0;
			return;
		}
		if (r < 11)
			off = HUGE_LEN - tail;
		b->bk = B_HUGE_RW;
		b->p = huge_rw + off;
		b->rd = b->wr = HUGE_LEN - off;
		return;
	}
	b->wr = 0;
	if (r < 10) {
		b->bk = B_HUGE_RO;
		b->p = huge_ro + off;
		b->rd = HUGE_LEN - off;
	} else if (r < 14) {
		b->bk = B_HUGE_NONE;
		b->p = huge_ro + HUGE_LEN - tail;
		b->rd = tail;
	} else if (r < 18 && huge_hole) {
		if (chance(70))
			off = HOLE_LEN - tail;
		b->bk = B_HUGE_HOLE;
		b->p = huge_hole + off;
		b->rd = HOLE_LEN - off;
		guard_watch(b, huge_hole + HOLE_LEN);
	} else if (r < 19 && huge_rw) {
		b->bk = B_HUGE_RW;
		b->p = huge_rw + off;
		b->rd = b->wr = HUGE_LEN - off;
	} else {
		b->bk = B_HUGE_NONE;
		b->p = huge_ro + HUGE_LEN + rn(PAGE);
		b->rd = 0;
	}
}

/* How long a huge call may take: the guard's signal ends it in ms. */
#define HUGE_HELD_S	5

/*
 * A read or write of up to 2 GiB on any object.  The guard fires within
 * a few ms: the write ends there, with the records applied so far.
 */
static void op_huge(void)
{
	const int64_t held = HUGE_HELD_S * (int64_t)pt_time_scale() *
			     NSEC_PER_SEC;
	bool rd = chance(30), zeros, reach;
	struct pick p;
	struct buf b;
	size_t rec, n, lim;
	int64_t t0, took;
	ssize_t r;
	int e;

	if (!huge_ro || !guard_ok)
		return;
	if (!pick_slot(&p, any_obj()) && !pick_slot(&p, -1))
		return;
	rec = rd ? rsize(p.kind) : wsize(p.kind);
	if (!rec)
		rec = 16;
	n = pick_huge_size(rec);
	lim = n < MAX_RW ? n : MAX_RW;
	pick_huge_buf(&b, rec, rd);
	zeros = b.bk != B_HUGE_RW;
	/* the kernel fails at once what ends past the user address space */
	reach = n <= USER_END && (uintptr_t)b.p <= USER_END - n;
	guard_arm((int64_t)(US(200) + rn(MS(4))));
	t0 = pt_mono();
	errno = 0;
	r = rd ? read(p.fd, b.p, n) : write(p.fd, b.p, n);
	e = errno;
	took = pt_mono() - t0;
	settle(&b);
	note("huge %s(%d %s, %s %p, %#zx) -> %zd errno %d in %lld us",
	     rd ? "read" : "write", p.fd, kind_name(p.kind), buf_name[b.bk],
	     (void *)b.p, n, r, e, (long long)(took / 1000));
	if (took > held && same(&p))
		FAIL("a %s of %#zx bytes on %s fd %d (%s buffer) took %lld ms: "
		     "the interval timer's signal did not end it", rd ? "read" :
		     "write", n, kind_name(p.kind), p.fd, buf_name[b.bk],
		     (long long)(took / NSEC_PER_MSEC));
	if (rd) {
		atomic_fetch_add(&st->huge_reads, 1);
		check_read(&p, &b, lim, r, e, "huge read");
		return;
	}
	atomic_fetch_add(&st->huge_writes, 1);
	if (r < 0) {
		/*
		 * The first record is applied whatever is pending, and
		 * zeros are valid records of some kinds (signal masks and
		 * timer specs).
		 */
		if (same(&p) && is_obj(p.kind) &&
		    takes_zeros(obj_kind(p.kind)) && zeros && reach &&
		    !b.lost && b.rd >= wsize(p.kind))
			STRICT_FAIL("huge write of %#zx bytes of zeros (%s "
				    "buffer, %zu readable) to %s fd %d failed: "
				    "%s", n, buf_name[b.bk], b.rd,
				    kind_name(p.kind), p.fd, strerror(e));
		return;
	}
	check_write(&p, &b, lim, r, "huge write");
	if (wsize(p.kind) && !obj_kind(p.kind)->write_set &&
	    (size_t)r < lim / wsize(p.kind) * wsize(p.kind))
		atomic_fetch_add(&st->short_writes, 1);
}

/*
 * A child in the middle of a huge write (no guard there), killed: it
 * must be gone at once, not when the write would have ended.
 */
static atomic_int huge_killing;

static void op_huge_kill(void)
{
	const int64_t bound = 2 * (int64_t)pt_time_scale() * NSEC_PER_SEC;
	char arg[PT_KIND_ARG_MAX] __attribute__((aligned(8)));
	int kind = obj_with(takes_zeros);
	size_t n = chance(50) ? MAX_RW : HUGE_LEN;
	int dev, fd, pfd[2], status;
	int64_t t0, end;
	pid_t pid, r;
	char c = 0;

	if (!huge_ro || kind == K_NONE || depth >= 2 ||
	    pt_mono() > deadline - MS(300))
		return;
	if (atomic_exchange(&huge_killing, 1))
		return;		/* one at a time is plenty */
	dev = open("/dev/pollfs", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		FAIL("open /dev/pollfs: %s", strerror(errno));
	/* an object as the table makes it: the zeros written are what
	 * counts */
	obj_kind(kind)->fill_arg(arg, 0, 0);
	fd = ioctl(dev, obj_kind(kind)->cmd, arg);
	close(dev);
	if (fd < 0 || pipe2(pfd, O_CLOEXEC)) {
		note("huge kill: no %s object or pipe: %s", kind_name(kind),
		     strerror(errno));
		if (fd >= 0)
			close(fd);
		atomic_store(&huge_killing, 0);
		return;
	}
	/* a signal during fork makes it start again: no guard here */
	guard_disarm();
	pid = fork();
	if (pid == 0) {
		char *from = huge_ro + rn(1024) * PAGE;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* say it starts; the write would take minutes */
		if (write(pfd[1], &c, 1) != 1 || write(fd, from, n) < 0)
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	close(fd);
	if (pid < 0) {
		close(pfd[0]);
		atomic_store(&huge_killing, 0);
		return;
	}
	/* the child says when it starts writing (others' forks may hold
	 * the pipe's other end too: wait a bounded time) */
	for (end = pt_mono() + bound;;) {
		struct pollfd pw = { pfd[0], POLLIN, 0 };

		if ((poll(&pw, 1, 10) == 1 && read(pfd[0], &c, 1) >= 0) ||
		    pt_mono() > end)
			break;
	}
	close(pfd[0]);
	pt_sleep_ns((int64_t)rn(MS(20)));
	kill(pid, SIGKILL);
	t0 = pt_mono();
	while ((r = waitpid(pid, &status, WNOHANG)) != pid) {
		if (r < 0 && errno != EINTR)
			FAIL("waitpid(%d): %s", (int)pid, strerror(errno));
		if (pt_mono() - t0 > bound) {
			show_task(pid);
			FAIL("child %d, killed in a write of %#zx bytes to a "
			     "%s object, is still there %lld ms after the "
			     "SIGKILL", (int)pid, n, kind_name(kind),
			     (long long)((pt_mono() - t0) / NSEC_PER_MSEC));
		}
		pt_sleep_ns(US(200));
	}
	note("huge kill: child %d writing to a %s object reaped in %lld us, "
	     "status %#x", (int)pid, kind_name(kind),
	     (long long)((pt_mono() - t0) / 1000), status);
	atomic_fetch_add(&st->huge_kills, 1);
	atomic_store(&huge_killing, 0);
}

/* ---- the realtime clock ---- */

static int64_t start_real, start_mono;	/* at the supervisor's start */
static atomic_bool clock_ok;		/* root: we may set the clock */
static pthread_mutex_t clock_lock = PTHREAD_MUTEX_INITIALIZER;
#define STEP_MAX	(3600 * NSEC_PER_SEC)

static int64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* The realtime clock as it would read had no one set it since the start. */
static int64_t real_truth(void)
{
	return start_real + (clock_ns(CLOCK_MONOTONIC) - start_mono);
}

static int set_real(int64_t t)
{
	struct timespec ts = { t / NSEC_PER_SEC, t % NSEC_PER_SEC };

	return clock_settime(CLOCK_REALTIME, &ts);
}

/* Puts the realtime clock back if anyone stepped it; async-signal-safe. */
static void clock_restore(void)
{
	int e = errno;

	if (st && atomic_load(&st->clock_steps))
		set_real(real_truth());
	errno = e;
}

/*
 * Steps the realtime clock 1 ms to an hour forward or back (toward the
 * true time when it is an hour off already), or home to the true time.
 * Not once the fuzzing ends: then the main thread puts it back for good.
 */
static void clock_step(bool home)
{
	int64_t now, off, to, amount;
	int r;

	pthread_mutex_lock(&clock_lock);
	if (atomic_load(&stop) || !atomic_load(&clock_ok)) {
		pthread_mutex_unlock(&clock_lock);
		return;
	}
	now = clock_ns(CLOCK_REALTIME);
	to = real_truth();
	off = now - to;
	if (!home) {
		amount = MS(1) << rn(22);
		amount += (int64_t)rn((uint64_t)amount);
		if (amount > STEP_MAX)
			amount = STEP_MAX;
		if (off < -STEP_MAX || (off <= STEP_MAX && chance(50)))
			to = now + amount;
		else
			to = now - amount;
	}
	/* counted first: a failure that ends us now must still restore */
	atomic_fetch_add(&st->clock_steps, 1);
	errno = 0;
	r = set_real(to);
	if (r) {
		atomic_fetch_sub(&st->clock_steps, 1);
		if (errno == EPERM)
			atomic_store(&clock_ok, false);
	}
	pthread_mutex_unlock(&clock_lock);
	note("clock step %+lld ms (was %+lld ms off) -> %d errno %d",
	     (long long)((to - now) / NSEC_PER_MSEC),
	     (long long)(off / NSEC_PER_MSEC), r, errno);
}

/* A timer on a realtime clock that expires about now. */
static void realtime_spec(struct pollfs_timer_spec *s)
{
	int64_t v = US(10) + (int64_t)rn(MS(20));

	memset(s, 0, sizeof(*s));
	s->clockid = chance(80) ? CLOCK_REALTIME : CLOCK_REALTIME_ALARM;
	if (chance(60)) {
		s->flags = POLLFS_TIMER_ABSTIME |
			   (chance(40) ? POLLFS_TIMER_CANCEL_ON_SET : 0);
		v += clock_ns(CLOCK_REALTIME) - MS(5);
	}
	s->value = pt_ns_ts(v);
	if (chance(60))
		s->interval = pt_ns_ts(US(50) + (int64_t)rn(MS(5)));
}

/* Reads a timer if poll says it is ready (it may not be, once read). */
static void read_if_ready(const struct pick *p)
{
	struct pollfd pfd = { p->fd, POLLIN, 0 };
	size_t n = rsize(K_TIMER) * (1 + rn(3));
	struct buf b;
	ssize_t r;
	int e;

	if (poll(&pfd, 1, (int)rn(3)) != 1 || !(pfd.revents & POLLIN))
		return;
	pick_buf(&b, n, false);
	errno = 0;
	r = read(p->fd, b.p, n);
	e = errno;
	settle(&b);
	note("read after a step (%d %s, %zu) -> %zd errno %d", p->fd,
	     kind_name(p->kind), n, r, e);
	atomic_fetch_add(&st->reads, 1);
	check_read(p, &b, n, r, e, "timer read after a clock step");
}

/*
 * 1.1: a CANCEL_ON_SET timer of our own, far in the future, and a step
 * of the clock: readable, ECANCELED once (again only if someone set
 * the clock since), still armed.  The first read is made under the
 * clock's lock, so that no step is half done when it is counted.
 */
static int private_fd(int fd);

static void cancel_check(void)
{
	struct pollfs_open o = { POLLFS_NONBLOCK | POLLFS_CLOEXEC, 0 };
	struct pollfs_timer_spec spec;
	struct pollfs_timer_event ev;
	int64_t end, amount = MS(1) << rn(12);
	int dev, fd;
	long steps;
	ssize_t r;
	int e;

	dev = open("/dev/pollfs", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return;
	fd = private_fd(ioctl(dev, POLLFS_IOC_TIMER, &o));
	close(dev);
	if (fd < 0)
		return;
	memset(&spec, 0, sizeof(spec));
	spec.clockid = chance(80) ? CLOCK_REALTIME : CLOCK_REALTIME_ALARM;
	spec.flags = POLLFS_TIMER_ABSTIME | POLLFS_TIMER_CANCEL_ON_SET;
	spec.value = pt_ns_ts(clock_ns(CLOCK_REALTIME) +
			      10 * 3600 * NSEC_PER_SEC);
	if (chance(30))
		spec.interval = pt_ns_ts(MS(1) + (int64_t)rn(MS(10)));
	if (write(fd, &spec, sizeof(spec)) != sizeof(spec)) {
		note("cancel check: arm: %s", strerror(errno));
		close(fd);
		return;
	}
	pthread_mutex_lock(&clock_lock);
	if (atomic_load(&stop) || !atomic_load(&clock_ok)) {
		pthread_mutex_unlock(&clock_lock);
		close(fd);
		return;
	}
	atomic_fetch_add(&st->clock_steps, 1);
	if (set_real(clock_ns(CLOCK_REALTIME) +
		     (chance(50) ? amount : -amount))) {
		atomic_fetch_sub(&st->clock_steps, 1);
		pthread_mutex_unlock(&clock_lock);
		close(fd);
		return;
	}
	pthread_mutex_unlock(&clock_lock);

	end = pt_mono() + (int64_t)pt_time_scale() * NSEC_PER_SEC;
	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };

		if (poll(&pfd, 1, 10) == 1 && (pfd.revents & POLLIN))
			break;
		if (pt_mono() > end)
			FAIL("CANCEL_ON_SET timer fd %d (%s): not readable "
			     "within 1 s of a step of the realtime clock", fd,
			     pt_clock_name(spec.clockid));
	}
	pthread_mutex_lock(&clock_lock);
	errno = 0;
	r = read(fd, &ev, sizeof(ev));
	e = errno;
	steps = atomic_load(&st->clock_steps);
	pthread_mutex_unlock(&clock_lock);
	if (r != -1 || e != ECANCELED)
		FAIL("CANCEL_ON_SET timer fd %d (%s), after a step of the "
		     "realtime clock: read returned %zd, errno %d (%s), "
		     "expected ECANCELED", fd, pt_clock_name(spec.clockid), r,
		     e, strerror(e));
	if (ioctl(fd, POLLFS_IOC_TIMER_GET, &ev) ||
	    pt_ts_ns(&ev.remaining) <= 0)
		FAIL("CANCEL_ON_SET timer fd %d: after the ECANCELED, "
		     "TIMER_GET: %s, remaining %lld ns: not armed", fd,
		     strerror(errno), (long long)pt_ts_ns(&ev.remaining));
	errno = 0;
	r = read(fd, &ev, sizeof(ev));
	e = errno;
	if (!(r == -1 && e == EAGAIN) &&
	    !(r == -1 && e == ECANCELED &&
	      atomic_load(&st->clock_steps) != steps))
		FAIL("CANCEL_ON_SET timer fd %d: the read after the "
		     "ECANCELED returned %zd, errno %d (%s), expected EAGAIN",
		     fd, r, e, strerror(e));
	note("cancel check on %s: ok", pt_clock_name(spec.clockid));
	atomic_fetch_add(&st->cancel_checks, 1);
	close(fd);
}

/*
 * Realtime timers that expire about now, a step of the clock, and their
 * records (expirations >= 1 however the clock went); then mostly back
 * to the true time, so that waits on the realtime clock (FUTEX_LOCK_PI)
 * never last long.
 */
static void op_clock(void)
{
	struct pick p[3];
	int np = 0;

	if (!atomic_load(&clock_ok))
		return;
	if (chance(25)) {
		cancel_check();
		if (chance(70))
			clock_step(true);
		return;
	}
	for (int i = (int)rn(4); i > 0; i--) {
		struct pollfs_timer_spec spec;
		struct buf b = { .p = (char *)&spec, .bk = B_GOOD,
				 .rd = sizeof(spec), .wr = sizeof(spec) };
		ssize_t r;

		if (!pick_slot(&p[np], K_TIMER))
			break;
		realtime_spec(&spec);
		r = write(p[np].fd, &spec, sizeof(spec));
		note("realtime arm(%d, clock %d, flags %u, %lld.%09lld, "
		     "%lld.%09lld) -> %zd errno %d", p[np].fd, spec.clockid,
		     spec.flags, (long long)spec.value.tv_sec,
		     (long long)spec.value.tv_nsec,
		     (long long)spec.interval.tv_sec,
		     (long long)spec.interval.tv_nsec, r, errno);
		check_write(&p[np], &b, sizeof(spec), r, "realtime arm");
		np++;
	}
	if (chance(50))
		pt_sleep_ns((int64_t)rn(MS(2)));
	clock_step(false);
	if (chance(50))
		pt_sleep_ns((int64_t)rn(MS(3)));
	for (int i = 0; i < np; i++)
		read_if_ready(&p[i]);
	if (chance(70))
		clock_step(true);
}

/* ---- io_destroy racing completions ---- */

/*
 * A descriptor of our own, out of the numbers the table ever holds: a
 * thread that picked a slot whose fd was closed since would otherwise
 * act on it (an epoll_wait on our epoll set, taking its events).
 */
static int private_fd(int fd)
{
	int hi;

	if (fd < 0 || fd >= PRIVATE_FD)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, PRIVATE_FD);
	if (hi < 0)
		return fd;
	close(fd);
	return hi;
}

struct race {
	aio_context_t ctx;
	int pipe[2];		/* polled, when how is 1 */
	int how;		/* 0: file reads and writes, 1: pipe polls */
	uint64_t seed;
	atomic_int stop;
	atomic_long done;	/* requests submitted */
};

/* Completes requests on the context, as fast as it can, until it dies. */
static void *race_completer(void *arg)
{
	struct race *ra = arg;
	struct timespec zero = { 0, 0 };
	struct io_event ev[8];
	char buf[64];
	sigset_t set;

	/* the fuzzer's signals are for the fuzzing threads */
	sigfillset(&set);
	sigdelset(&set, SIGSEGV);
	sigdelset(&set, SIGBUS);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	rseed(seed, ra->seed);
	memset(buf, 0, sizeof(buf));
	for (int i = 0; i < 100000 && !atomic_load(&ra->stop); i++) {
		struct iocb cb, *cbs[1] = { &cb };

		memset(&cb, 0, sizeof(cb));
		cb.aio_data = (uint64_t)i;
		if (ra->how) {
			cb.aio_lio_opcode = IOCB_CMD_POLL;
			cb.aio_fildes = (uint32_t)ra->pipe[0];
			cb.aio_buf = POLLIN;
		} else {
			cb.aio_lio_opcode = chance(50) ? IOCB_CMD_PWRITE :
					    IOCB_CMD_PREAD;
			cb.aio_fildes = (uint32_t)tmpfd;
			cb.aio_buf = (uintptr_t)buf;
			cb.aio_nbytes = sizeof(buf);
			cb.aio_offset = (int64_t)rn(1024) * 64;
		}
		if (syscall(SYS_io_submit, ra->ctx, 1, cbs) != 1) {
			if (errno != EAGAIN)
				break;		/* destroyed */
			syscall(SYS_io_getevents, ra->ctx, 0, 8, ev, &zero);
			continue;		/* the ring was full */
		}
		atomic_fetch_add(&ra->done, 1);
		/* the pipe's wake-up completes the poll */
		if (ra->how && write(ra->pipe[1], buf, 1) == 1 &&
		    read(ra->pipe[0], buf, sizeof(buf)) < 0)
			continue;
		/* reap now and then, leaving some in the ring (POLLIN) */
		if (chance(50))
			syscall(SYS_io_getevents, ra->ctx, 0, 8, ev, &zero);
	}
	return NULL;
}

/*
 * AIO objects on a context that a helper thread keeps completing
 * requests on, watched by an epoll set for EPOLLHUP alone, and the
 * context destroyed at a random moment: the end of the context must
 * wake every watcher with EPOLLHUP, whatever wake-up the completions
 * left pending.
 */
static void op_aio_race(void)
{
	static const uint32_t watch[] = { 0, EPOLLHUP, EPOLLET,
					  EPOLLHUP | EPOLLET };
	const int64_t bound = (int64_t)pt_time_scale() * NSEC_PER_SEC;
	int fds[3], nobj = 1 + (int)rn(3), dev, ep, got = 0, all, i;
	uint32_t want[3], seen[3] = { 0, 0, 0 };
	int64_t until, dead;
	struct race ra;
	pthread_t th;
	bool helper, known;
	long r;

	memset(&ra, 0, sizeof(ra));
	ra.pipe[0] = ra.pipe[1] = -1;
	ra.how = (int)rn(2);
	ra.seed = rnd();
	as_begin();
	r = syscall(SYS_io_setup, 4 + (unsigned int)rn(60), &ra.ctx);
	as_end();
	if (r) {
		note("aio race: io_setup: %s", strerror(errno));
		return;
	}
	dev = open("/dev/pollfs", O_RDWR | O_CLOEXEC);
	ep = private_fd(epoll_create1(EPOLL_CLOEXEC));
	if (ra.how && pipe2(ra.pipe, O_NONBLOCK | O_CLOEXEC))
		ra.how = 0;
	for (i = 0; i < nobj && dev >= 0 && ep >= 0; i++) {
		struct pollfs_aio_open o = { ra.ctx, POLLFS_CLOEXEC, 0 };
		struct epoll_event e;

		if (chance(50))
			o.flags |= POLLFS_NONBLOCK;
		fds[i] = private_fd(ioctl(dev, POLLFS_IOC_AIO, &o));
		if (fds[i] < 0) {
			/* EINVAL: destroyed already, as explained below */
			if (errno != EMFILE && errno != ENFILE &&
			    errno != ENOMEM && errno != EINVAL)
				FAIL("POLLFS_IOC_AIO on the live context "
				     "%#llx: %s", (unsigned long long)ra.ctx,
				     strerror(errno));
			break;
		}
		want[i] = watch[rn(4)];
		e.events = want[i];
		e.data.u64 = (uint64_t)i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &e))
			FAIL("epoll_ctl(ADD, aio fd %d, %#x): %s", fds[i],
			     want[i], strerror(errno));
	}
	nobj = i;
	as_begin();
	helper = pthread_create(&th, NULL, race_completer, &ra) == 0;
	as_end();
	/* a random moment into the completions; the pipe written from
	 * here too now and then */
	until = pt_mono() + (int64_t)rn(US(3000));
	while (pt_mono() < until)
		if (ra.how && chance(30) && write(ra.pipe[1], "x", 1) < 0)
			sched_yield();
	if (chance(30)) {
		/* a completion of our own, just before */
		struct iocb cb, *cbs[1] = { &cb };

		memset(&cb, 0, sizeof(cb));
		cb.aio_lio_opcode = IOCB_CMD_PWRITE;
		cb.aio_fildes = (uint32_t)tmpfd;
		cb.aio_buf = (uintptr_t)tbuf;
		cb.aio_nbytes = 64;
		syscall(SYS_io_submit, ra.ctx, 1, cbs);
	}
	/*
	 * The kernel finds a context by its id, the address of its ring,
	 * through the id written in the ring: both are the fuzzer's to
	 * spoil.  op_aio unmaps rings (a context without one keeps its id,
	 * which a new ring, this one's, may then take) and futex ops write
	 * to ring words.  So io_destroy may fail (EINVAL: it found none, or
	 * another thread killed this one), or kill that other context of
	 * the same id.  Only when it succeeded and no other context has
	 * this id is it known that the objects' context died.
	 */
	as_begin();
	r = syscall(SYS_io_destroy, ra.ctx);
	as_end();
	dead = pt_mono();
	if (r && errno != EINVAL)
		FAIL("io_destroy(%#llx): %s", (unsigned long long)ra.ctx,
		     strerror(errno));
	known = !r && !ringless_at(ra.ctx);
	atomic_store(&ra.stop, 1);
	all = (1 << nobj) - 1;
	while (got != all && pt_mono() - dead < bound) {
		struct epoll_event ev[4];
		int n = epoll_wait(ep, ev, 4, 10);

		for (int k = 0; k < n; k++) {
			uint64_t j = ev[k].data.u64;

			if (j >= (uint64_t)nobj ||
			    (ev[k].events & ~(uint32_t)(EPOLLHUP | EPOLLERR)))
				FAIL("epoll_wait: events %#x for item %llu "
				     "(watched for EPOLLHUP alone)",
				     ev[k].events, (unsigned long long)j);
			seen[j] |= ev[k].events;
			if (ev[k].events & EPOLLHUP)
				got |= 1 << j;
		}
	}
	if (helper) {
		as_begin();
		pthread_join(th, NULL);
		as_end();
	}
	for (i = 0; i < nobj; i++) {
		struct pollfd pfd = { fds[i], chance(50) ? POLLIN : 0, 0 };
		char buf[16];
		ssize_t rr;
		int e;

		poll(&pfd, 1, 0);
		errno = 0;
		rr = read(fds[i], buf, sizeof(buf));
		e = errno;
		if (known &&
		    (!(got & (1 << i)) || !(pfd.revents & POLLHUP) || rr != 0))
			FAIL("aio fd %d of %d on context %#llx (epoll events "
			     "%#x): %s within %lld ms of io_destroy's return; "
			     "poll revents %#x, read %zd (errno %d); %ld "
			     "requests completed by the %s helper",
			     i + 1, nobj, (unsigned long long)ra.ctx, want[i],
			     (got & (1 << i)) ? "EPOLLHUP" : "no EPOLLHUP",
			     (long long)(bound / NSEC_PER_MSEC),
			     (unsigned)pfd.revents, rr, e,
			     atomic_load(&ra.done),
			     ra.how ? "IOCB_CMD_POLL" : "PREAD/PWRITE");
		close(fds[i]);
	}
	note("aio race: %d objects, ctx %#llx%s, %ld requests, %s -> seen "
	     "%#x %#x %#x", nobj, (unsigned long long)ra.ctx,
	     known ? "" : " (id not known to be ours: unchecked)",
	     atomic_load(&ra.done), ra.how ? "polls" : "reads and writes",
	     seen[0], seen[1], seen[2]);
	atomic_fetch_add(&st->destroy_races, 1);
	atomic_fetch_add(&st->race_completions, atomic_load(&ra.done));
	if (ra.pipe[0] >= 0) {
		close(ra.pipe[0]);
		close(ra.pipe[1]);
	}
	if (ep >= 0)
		close(ep);
	if (dev >= 0)
		close(dev);
}

/* ---- 1.1: watched futexes, the disarm record, TIMER_GET ---- */

/*
 * The disarm record (one record of all zeros) to a futex object of the
 * table: 16, whatever the object was.  Among two to four records (the
 * others good arms, watched or not) it is no disarm: an arm on address
 * 0, which fails.
 */
static void op_disarm(void)
{
	struct pollfs_futex_event ev[4];
	struct pick p;
	int n = chance(60) ? 1 : 2 + (int)rn(3);
	uint32_t watch = chance(50) ? POLLFS_FUTEX_WATCH : 0;
	ssize_t r;
	int e;

	if (!pick_slot(&p, K_FUTEX))
		return;
	memset(ev, 0, sizeof(ev));
	if (n > 1) {
		int zero = (int)rn((uint64_t)n);

		for (int i = 0; i < n; i++) {
			uint32_t *w = rw_word();

			if (i == zero)
				continue;
			ev[i].addr = (uintptr_t)w;
			ev[i].val = __atomic_load_n(w, __ATOMIC_SEQ_CST);
			ev[i].flags = watch | (chance(50) ?
					       POLLFS_FUTEX_SHARED : 0);
		}
	}
	errno = 0;
	r = write(p.fd, ev, (size_t)n * sizeof(ev[0]));
	e = errno;
	note("disarm %d records (%d) -> %zd errno %d", n, p.fd, r, e);
	atomic_fetch_add(&st->writes, 1);
	atomic_fetch_add(&st->disarms, 1);
	if (!same(&p))
		return;
	if (n == 1 && r != (ssize_t)sizeof(ev[0]))
		STRICT_FAIL("the disarm record to futex fd %d: returned %zd, "
			    "errno %d (%s)", p.fd, r, e, strerror(e));
	/*
	 * Address 0 faults; but another thread's wake may take a record
	 * queued before it, and then a plain set's wait has happened and
	 * the write succeeds whole.  A watched set fails whole regardless.
	 */
	if (n > 1 && r != -1 &&
	    (watch || r != (ssize_t)((size_t)n * sizeof(ev[0]))))
		STRICT_FAIL("%d records, one of them all zeros, to futex fd "
			    "%d: returned %zd", n, p.fd, r);
}

/*
 * A watched futex object of our own on a word of our own: exact
 * counts, for a few rounds, then the disarm and the close.
 */
static void op_watch(void)
{
	uint32_t *w = watch_page + (tr ? tr->id : 0) * 16;
	uint32_t fl = (chance(50) ? POLLFS_FUTEX_SHARED : 0) |
		      POLLFS_FUTEX_WATCH;
	int priv = (fl & POLLFS_FUTEX_SHARED) ? 0 : FUTEX_PRIVATE_FLAG;
	struct pollfs_futex_event ev = { (uintptr_t)w, 0, fl }, got[2];
	struct pollfs_open o = { POLLFS_NONBLOCK | POLLFS_CLOEXEC, 0 };
	int dev = dev_fd(), own_dev = -1, fd, rounds = 1 + (int)rn(6);
	long r;
	ssize_t n;

	if (dev < 0) {
		own_dev = open("/dev/pollfs", O_RDWR | O_CLOEXEC);
		if (own_dev < 0)
			return;
		dev = own_dev;
	}
	fd = private_fd(ioctl(dev, POLLFS_IOC_FUTEX, &o));
	if (own_dev >= 0)
		close(own_dev);
	if (fd < 0) {
		note("watch: no object: %s", strerror(errno));
		return;
	}
	if (chance(10)) {
		/* a mismatch: EAGAIN, unarmed */
		ev.val = *w + 1;
		if (write(fd, &ev, sizeof(ev)) != -1 || errno != EAGAIN)
			FAIL("watch fd %d: a mismatched arm did not fail with "
			     "EAGAIN: %s", fd, strerror(errno));
		if (read(fd, got, sizeof(got)) != -1 || errno != EINVAL)
			FAIL("watch fd %d: unarmed after a mismatch, yet a read "
			     "did not fail with EINVAL", fd);
	}
	ev.val = *w;
	n = write(fd, &ev, sizeof(ev));
	if (n != (ssize_t)sizeof(ev))
		FAIL("watch fd %d: arm on our own word %p: %zd, %s", fd,
		     (void *)w, n, strerror(errno));
	for (int i = 0; i < rounds; i++) {
		if (chance(60))
			(*w)++;
		r = sys_futex((uintptr_t)w, FUTEX_WAKE | priv,
			      chance(50) ? 1 : INT_MAX, 0, 0, 0);
		if (r != 1)
			FAIL("watch fd %d, round %d: FUTEX_WAKE returned %ld "
			     "(errno %d), expected 1: the object is armed", fd,
			     i, r, errno);
		atomic_fetch_add(&st->wakes_counted, 1);
		if (chance(30)) {
			r = sys_futex((uintptr_t)w, FUTEX_WAKE | priv, INT_MAX,
				      0, 0, 0);
			if (r != 0)
				FAIL("watch fd %d: a second FUTEX_WAKE before "
				     "the read returned %ld", fd, r);
		}
		if (chance(40))
			(*w) += 3;	/* the read reports the value now */
		memset(got, 0, sizeof(got));
		n = read(fd, got, sizeof(got));
		if (n != (ssize_t)sizeof(got[0]) || got[0].addr != ev.addr ||
		    got[0].val != *w || got[0].flags != fl)
			FAIL("watch fd %d: read returned %zd (errno %d) "
			     "{%#llx, %u, %#x}, expected {%p, %u, %#x}", fd, n,
			     errno, (unsigned long long)got[0].addr,
			     got[0].val, got[0].flags, (void *)w, *w, fl);
		atomic_fetch_add(&st->reads, 1);
		atomic_fetch_add(&st->records, 1);
		atomic_fetch_add(&st->watch_rounds, 1);
		if (read(fd, got, sizeof(got)) != -1 || errno != EAGAIN)
			FAIL("watch fd %d: armed again after the read, yet a "
			     "read did not fail with EAGAIN (errno %d)", fd,
			     errno);
	}
	if (chance(70)) {
		memset(&ev, 0, sizeof(ev));
		n = write(fd, &ev, sizeof(ev));
		if (n != (ssize_t)sizeof(ev))
			FAIL("watch fd %d: the disarm record: %zd, %s", fd, n,
			     strerror(errno));
		r = sys_futex((uintptr_t)w, FUTEX_WAKE | priv, INT_MAX, 0, 0,
			      0);
		if (r != 0)
			FAIL("watch fd %d: FUTEX_WAKE after the disarm "
			     "returned %ld", fd, r);
		if (read(fd, got, sizeof(got)) != -1 || errno != EINVAL)
			FAIL("watch fd %d: disarmed, yet a read did not fail "
			     "with EINVAL (errno %d)", fd, errno);
	}
	close(fd);
	/* closed: no waiter left (a child forked meanwhile may hold a copy
	 * of the descriptor, and the wait with it: not checked then) */
	r = sys_futex((uintptr_t)w, FUTEX_WAKE | priv, INT_MAX, 0, 0, 0);
	note("watch %#x on %p: %d rounds, wake after close -> %ld", fl,
	     (void *)w, rounds, r);
}

static bool ts_ok(const struct __kernel_timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 &&
	       ts->tv_nsec < NSEC_PER_SEC;
}

/*
 * POLLFS_IOC_TIMER_GET on a descriptor of the table, through a good or a
 * hostile buffer; or on a timer of our own, where a look must consume
 * nothing.
 */
static void op_timer_get(void)
{
	struct pollfs_timer_event ev, rd;
	struct pick p;
	struct buf b;
	int r, e;

	if (chance(30)) {
		struct pollfs_timer_spec spec;
		int fd = -1;

		for (int tries = 0; tries < 8 && fd < 0; tries++) {
			struct pollfs_open o = { POLLFS_NONBLOCK |
						 POLLFS_CLOEXEC, 0 };
			int dev = open("/dev/pollfs", O_RDWR | O_CLOEXEC);

			if (dev < 0)
				return;
			fd = private_fd(ioctl(dev, POLLFS_IOC_TIMER, &o));
			close(dev);
			if (fd < 0)
				return;
			fill_timer_rec(&spec);
			/* no CANCEL_ON_SET: what a cancel does to the
			 * count is not said */
			spec.flags &= ~(uint32_t)POLLFS_TIMER_CANCEL_ON_SET;
			if (write(fd, &spec, sizeof(spec)) != sizeof(spec)) {
				close(fd);
				fd = -1;
			}
		}
		if (fd < 0)
			return;
		pt_sleep_ns((int64_t)rn(MS(3)));
		for (int i = 0; i < 3; i++) {
			struct pollfd pfd = { fd, POLLIN, 0 };
			long steps = atomic_load(&st->clock_steps);
			ssize_t n;

			if (ioctl(fd, POLLFS_IOC_TIMER_GET, &ev))
				FAIL("TIMER_GET on our timer fd %d: %s", fd,
				     strerror(errno));
			atomic_fetch_add(&st->timer_gets, 1);
			if (!ts_ok(&ev.remaining) || !ts_ok(&ev.interval))
				FAIL("TIMER_GET on our timer fd %d: bad "
				     "timespecs: remaining %lld.%09lld, "
				     "interval %lld.%09lld (armed with clock "
				     "%d, flags %#x, value %lld.%09lld, "
				     "interval %lld.%09lld)", fd,
				     (long long)ev.remaining.tv_sec,
				     (long long)ev.remaining.tv_nsec,
				     (long long)ev.interval.tv_sec,
				     (long long)ev.interval.tv_nsec,
				     spec.clockid, spec.flags,
				     (long long)spec.value.tv_sec,
				     (long long)spec.value.tv_nsec,
				     (long long)spec.interval.tv_sec,
				     (long long)spec.interval.tv_nsec);
			if (!ev.expirations)
				continue;
			/*
			 * A step of the realtime clock meanwhile (another
			 * thread's, in op_clock) may move what a realtime
			 * timer counts: exact only without one.
			 */
			if (poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLIN)) {
				if (atomic_load(&st->clock_steps) != steps)
					continue;
				FAIL("timer fd %d: TIMER_GET saw %llu "
				     "expirations, poll no POLLIN", fd,
				     (unsigned long long)ev.expirations);
			}
			if (chance(50))
				continue;	/* look again */
			n = read(fd, &rd, sizeof(rd));
			if ((n != sizeof(rd) || rd.expirations < ev.expirations) &&
			    atomic_load(&st->clock_steps) == steps)
				FAIL("timer fd %d: TIMER_GET saw %llu "
				     "expirations, the read returned %zd "
				     "(errno %d) with %llu", fd,
				     (unsigned long long)ev.expirations, n,
				     errno,
				     (unsigned long long)rd.expirations);
			atomic_fetch_add(&st->reads, 1);
			atomic_fetch_add(&st->records, 1);
		}
		note("timer get on our own timer %d", fd);
		close(fd);
		return;
	}

	if (!pick_slot(&p, chance(60) ? K_TIMER : -1))
		return;
	pick_buf(&b, sizeof(ev), chance(30));
	errno = 0;
	r = ioctl(p.fd, POLLFS_IOC_TIMER_GET, b.p);
	e = errno;
	atomic_fetch_add(&st->timer_gets, 1);
	settle(&b);
	note("TIMER_GET(%d %s, %s %p) -> %d errno %d", p.fd, kind_name(p.kind),
	     buf_name[b.bk], (void *)b.p, r, e);
	/* what the kernel could write is unknown (settle) */
	if (!same(&p) || b.wr == SIZE_MAX)
		return;
	if (is_obj(p.kind) && p.kind != K_TIMER) {
		if (r != -1 || (b.bk == B_GOOD && e != ENOTTY))
			STRICT_FAIL("TIMER_GET on %s fd %d: returned %d, "
				    "errno %d (%s), expected ENOTTY",
				    kind_name(p.kind), p.fd, r, e,
				    strerror(e));
	} else if (p.kind == K_DEV) {
		if (r != -1)
			STRICT_FAIL("TIMER_GET on /dev/pollfs fd %d returned "
				    "%d", p.fd, r);
	} else if (p.kind == K_TIMER) {
		if (!b.lost && b.wr >= sizeof(ev) && r != 0)
			STRICT_FAIL("TIMER_GET on timer fd %d into a writable "
				    "buffer (%s): %d, errno %d (%s)", p.fd,
				    buf_name[b.bk], r, e, strerror(e));
		if (b.wr < sizeof(ev) && r != -1)
			STRICT_FAIL("TIMER_GET on timer fd %d into a buffer "
				    "(%s) of which %zu bytes are writable "
				    "returned %d", p.fd, buf_name[b.bk], b.wr,
				    r);
		if (r == 0) {
			memcpy(&ev, b.p, sizeof(ev));
			if (!ts_ok(&ev.remaining) || !ts_ok(&ev.interval))
				STRICT_FAIL("TIMER_GET on timer fd %d: "
					    "remaining %lld.%lld interval "
					    "%lld.%lld", p.fd,
					    (long long)ev.remaining.tv_sec,
					    (long long)ev.remaining.tv_nsec,
					    (long long)ev.interval.tv_sec,
					    (long long)ev.interval.tv_nsec);
		}
	}
}

/* ---- 1.2: the record ring ---- */

static bool ring_kind(int k)
{
	return is_obj(k) && takes_ring(obj_kind(k));
}

/*
 * A kind known to have no ring: what a descriptor of K_UNKNOWN is (a
 * forked child's fd that is no longer the table's) is not known.
 */
static bool ringless_kind(int k)
{
	return k == K_DEV || k == K_EPOLL || (is_obj(k) && !ring_kind(k));
}

static bool entries_ok(uint32_t n)
{
	return n >= POLLFS_RING_ENTRIES_MIN && n <= POLLFS_RING_ENTRIES_MAX &&
	       !(n & (n - 1));
}

/* What is wrong with a layout POLLFS_IOC_RING returned, or NULL. */
static const char *bad_layout(const struct pollfs_ring_params *p,
			      uint32_t entries, size_t record_size)
{
	uint64_t size = p->mmap_size;
	uint64_t recs = (uint64_t)entries * record_size;
	const uint32_t words[3] = { p->off_head, p->off_tail, p->off_flags };

	if (p->entries != entries)
		return "entries changed";
	if (p->record_size != record_size)
		return "not the object's record size";
	if (!size || size % PAGE || size > RING_MAX_LEN)
		return "mmap_size not a multiple of the page size";
	if (p->off_records + recs > size)
		return "records past mmap_size";
	for (int i = 0; i < 3; i++) {
		if (words[i] % 4 || words[i] + 4ull > size)
			return "a word outside mmap_size or misaligned";
		if (words[i] + 4ull > p->off_records &&
		    words[i] < p->off_records + recs)
			return "a word among the records";
		for (int j = 0; j < i; j++)
			if (words[i] == words[j])
				return "two words at one offset";
	}
	return NULL;
}

/* Whether fd's object has a ring: a mapping of it works (ENODEV else). */
static bool has_ring(int fd)
{
	void *m;

	as_begin();
	m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m != MAP_FAILED)
		munmap(m, PAGE);
	as_end();
	return m != MAP_FAILED;
}

/*
 * Under the write lock: unmaps entry i and frees it, but for its first
 * @done bytes, unmapped already: the lock does not keep another thread's
 * mmap from taking them meanwhile.
 */
static void ringmap_drop(int i, size_t done)
{
	struct ringmap *m = &ringmaps[i];

	as_begin();
	if (m->len > done)
		munmap(m->addr + done, m->len - done);
	as_end();
	m->addr = NULL;
	atomic_fetch_add(&st->ring_unmaps, 1);
}

/*
 * Keeps a writable mapping for the scribbler and the takers; with the
 * table full, a random entry makes room.
 */
static void ringmap_add(void *addr, size_t len,
			const struct pollfs_ring_params *p)
{
	int i, free_i = -1;

	pthread_rwlock_wrlock(&ringmap_lock);
	for (i = 0; i < NRINGMAP && free_i < 0; i++)
		if (!ringmaps[i].addr)
			free_i = i;
	if (free_i < 0) {
		free_i = (int)rn(NRINGMAP);
		ringmap_drop(free_i, 0);
	}
	ringmaps[free_i].len = len;
	ringmaps[free_i].known = p != NULL;
	if (p)
		ringmaps[free_i].p = *p;
	ringmaps[free_i].addr = addr;
	pthread_rwlock_unlock(&ringmap_lock);
}

/*
 * No mapping of a ring grows (mremap, moving or not, over any part of
 * it); the mapping is unmapped afterwards either way.  @strict: it is
 * surely a ring's.
 */
static void ring_no_growth(unsigned char *addr, size_t len, bool strict)
{
	size_t more = PAGE * (1 + rn(4));
	void *grown;

	as_begin();
	grown = mremap(addr, len, len + more, chance(50) ? MREMAP_MAYMOVE : 0);
	if (grown != MAP_FAILED)
		munmap(grown, len + more);
	else
		munmap(addr, len);
	as_end();
	note("mremap(%p, %#zx -> %#zx) -> %p", (void *)addr, len, len + more,
	     grown);
	if (grown != MAP_FAILED && strict)
		STRICT_FAIL("mremap grew a mapping of a ring from %#zx bytes "
			    "to %#zx", len, len + more);
}

/* Maps a ring of layout @p whole, read and write; NULL if mmap failed. */
static void *ring_map_whole(int fd, const struct pollfs_ring_params *p)
{
	void *m;

	as_begin();
	m = mmap(NULL, p->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	as_end();
	return m == MAP_FAILED ? NULL : m;
}

/* POLLFS_IOC_RING on any descriptor, with any params. */
static void op_ring_ioctl(void)
{
	static const uint32_t bad_entries[] = { 0, 1, 3, 5, 6, 100, 1000,
		4095, 4097, 8192, 1u << 31, 0xffffffffu };
	struct pollfs_ring_params p, out;
	int want = chance(70) ? obj_with(takes_ring) : -1;
	struct pick pk;
	struct buf b;
	bool valid, whole;
	const char *bad;
	int r, e;

	if (!pick_slot(&pk, want) && !pick_slot(&pk, -1))
		return;
	memset(&p, 0, sizeof(p));
	if (chance(80))
		p.entries = 1u << (1 + rn(12));
	else
		p.entries = chance(60) ? bad_entries[rn(sizeof(bad_entries) /
					 sizeof(bad_entries[0]))] :
					 (uint32_t)rnd();
	if (chance(6))
		p.flags = chance(50) ? 1u << rn(32) : (uint32_t)rnd();
	if (chance(6))
		p.reserved = chance(50) ? 1u << rn(32) : (uint32_t)rnd();
	/* the out fields are outputs, whatever the caller left in them */
	if (chance(30)) {
		p.record_size = (uint32_t)rnd();
		p.off_head = (uint32_t)rnd();
		p.off_records = (uint32_t)rnd();
		p.mmap_size = rnd();
	}
	valid = entries_ok(p.entries) && !p.flags && !p.reserved;
	pick_buf(&b, sizeof(p), chance(25));
	whole = (b.bk == B_GOOD || b.bk == B_MISALIGNED || b.bk == B_CROSS) &&
		b.wr >= sizeof(p);
	if (b.bk == B_GOOD || b.bk == B_MISALIGNED || b.bk == B_CROSS)
		memcpy(b.p, &p, b.wr < sizeof(p) ? b.wr : sizeof(p));
	errno = 0;
	r = ioctl(pk.fd, POLLFS_IOC_RING, b.p);
	e = errno;
	settle(&b);
	note("RING(%d %s, %u entries flags %#x reserved %#x, %s) -> %d "
	     "errno %d", pk.fd, kind_name(pk.kind), p.entries, p.flags,
	     p.reserved, buf_name[b.bk], r, e);
	atomic_fetch_add(&st->ring_ioctls, 1);
	whole = whole && !b.lost;
	if (!same(&pk))
		return;
	if (r == 0) {
		if (ringless_kind(pk.kind))
			STRICT_FAIL("POLLFS_IOC_RING on %s fd %d returned 0",
				    kind_name(pk.kind), pk.fd);
		if (whole && !valid)
			STRICT_FAIL("POLLFS_IOC_RING on %s fd %d with %u "
				    "entries, flags %#x, reserved %#x "
				    "returned 0", kind_name(pk.kind), pk.fd,
				    p.entries, p.flags, p.reserved);
		atomic_fetch_add(&st->ring_setups, 1);
		if (!whole || !ring_kind(pk.kind))
			return;
		memcpy(&out, b.p, sizeof(out));
		bad = bad_layout(&out, p.entries, rsize(pk.kind));
		if (bad)
			STRICT_FAIL("POLLFS_IOC_RING on %s fd %d: %s (entries "
				    "%u record_size %u head %u tail %u flags "
				    "%u records %u mmap_size %llu)",
				    kind_name(pk.kind), pk.fd, bad, out.entries,
				    out.record_size, out.off_head, out.off_tail,
				    out.off_flags, out.off_records,
				    (unsigned long long)out.mmap_size);
		if (chance(60)) {
			void *m = ring_map_whole(pk.fd, &out);

			if (m)
				ringmap_add(m, out.mmap_size, &out);
		}
		return;
	}
	if (r != -1)
		STRICT_FAIL("POLLFS_IOC_RING on %s fd %d returned %d",
			    kind_name(pk.kind), pk.fd, r);
	if (!whole || !valid)
		return;
	if (is_obj(pk.kind) && !ring_kind(pk.kind) && e != EOPNOTSUPP)
		STRICT_FAIL("POLLFS_IOC_RING on %s fd %d: errno %d (%s), "
			    "expected EOPNOTSUPP", kind_name(pk.kind), pk.fd,
			    e, strerror(e));
	if (pk.kind == K_DEV && e != ENOTTY)
		STRICT_FAIL("POLLFS_IOC_RING on /dev/pollfs fd %d: errno %d "
			    "(%s), expected ENOTTY", pk.fd, e, strerror(e));
	/* EINTR: the guard's signal, should the set-up ever wait */
	if (ring_kind(pk.kind) && e != EBUSY && e != ENOMEM && e != EINTR)
		STRICT_FAIL("POLLFS_IOC_RING with %u entries on %s fd %d: "
			    "errno %d (%s)", p.entries, kind_name(pk.kind),
			    pk.fd, e, strerror(e));
}

/*
 * An object of a kind with a ring (a timer, a futex object) made with a
 * ring, mapped, armed to fill it (a periodic timer, a futex word watched
 * or waited on once; another kind as its entry arms it), and put in the
 * table, where the other operations use it like any object.
 */
static void op_ring_new(void)
{
	int kind = obj_with(takes_ring);
	char arg[PT_KIND_ARG_MAX] __attribute__((aligned(8)));
	struct pollfs_ring_params p;
	int dev = dev_fd(), own_dev = -1, fd, r;
	const char *bad;
	void *m;

	if (kind == K_NONE)
		return;
	if (dev < 0) {
		own_dev = open("/dev/pollfs", O_RDWR | O_CLOEXEC);
		if (own_dev < 0)
			return;
		dev = own_dev;
	}
	obj_kind(kind)->fill_arg(arg, POLLFS_CLOEXEC |
				 (chance(70) ? POLLFS_NONBLOCK : 0), 0);
	fd = ioctl(dev, obj_kind(kind)->cmd, arg);
	if (own_dev >= 0)
		close(own_dev);
	if (fd < 0)
		return;
	memset(&p, 0, sizeof(p));
	p.entries = 1u << (1 + rn(chance(80) ? 6 : 12));
	r = ioctl(fd, POLLFS_IOC_RING, &p);
	note("ring on a new %s %d: %u entries -> %d errno %d",
	     kind_name(kind), fd, p.entries, r, errno);
	if (r) {
		/* a fresh object of ours, valid params */
		if (errno != ENOMEM && errno != EINTR)
			FAIL("POLLFS_IOC_RING with %u entries on a new %s "
			     "object: errno %d (%s)", p.entries,
			     kind_name(kind), errno, strerror(errno));
		close(fd);
		return;
	}
	atomic_fetch_add(&st->ring_ioctls, 1);
	atomic_fetch_add(&st->ring_setups, 1);
	bad = bad_layout(&p, p.entries, rsize(kind));
	if (bad)
		FAIL("POLLFS_IOC_RING on a new %s object: %s",
		     kind_name(kind), bad);
	if (kind == K_TIMER) {
		struct pollfs_timer_spec spec;

		memset(&spec, 0, sizeof(spec));
		spec.clockid = CLOCK_MONOTONIC;
		spec.value.tv_nsec = (int64_t)(US(10) + rn(MS(2)));
		spec.interval.tv_nsec = chance(80) ?
			(int64_t)(US(5) + rn(MS(1))) : 0;
		r = (int)write(fd, &spec, sizeof(spec));
	} else if (kind == K_FUTEX) {
		struct pollfs_futex_event ev;

		fill_futex_rec(&ev);
		ev.flags &= POLLFS_FUTEX_SHARED;
		if (chance(80))
			ev.flags |= POLLFS_FUTEX_WATCH;
		r = (int)write(fd, &ev, sizeof(ev));
	} else if (obj_kind(kind)->arm) {
		obj_kind(kind)->arm(fd, (unsigned int)rnd());
	}
	m = ring_map_whole(fd, &p);
	if (!m && errno != ENOMEM && errno != EINTR && errno != EAGAIN)
		FAIL("mmap of the ring of a new %s object (%llu bytes): %s",
		     kind_name(kind), (unsigned long long)p.mmap_size,
		     strerror(errno));
	if (m)
		ringmap_add(m, p.mmap_size, &p);
	atomic_fetch_add(&st->creates, 1);
	publish(fd, kind, 0);
}

/* mmap of any descriptor, any length, offset, protection and flags. */
static void op_ring_map(void)
{
	struct pick pk;
	size_t len;
	off_t off = 0;
	int prot = PROT_READ | PROT_WRITE, flags = MAP_SHARED, e;
	bool must_fail = false;
	const char *why = "";
	unsigned char *m;

	if (!pick_slot(&pk, chance(70) ? obj_with(takes_ring) : -1) &&
	    !pick_slot(&pk, -1))
		return;
	switch (rn(8)) {
	case 0:
		len = chance(50) ? 0 : 1 + rn(3 * PAGE);
		break;
	case 1:
		len = RING_MAX_LEN + PAGE * rn(1024);
		break;
	case 2:
		len = PAGE * (1 + rn(64));
		break;
	default:
		len = PAGE * (1 + rn(4));
		break;
	}
	if (chance(12))
		off = chance(50) ? (off_t)(PAGE * (1 + rn(64))) :
				   (off_t)rn(PAGE);
	if (chance(10))
		prot = chance(50) ? PROT_READ : PROT_WRITE;
	if (chance(6))
		prot |= PROT_EXEC;
	if (chance(10))
		flags = MAP_PRIVATE;
	if (ringless_kind(pk.kind))
		must_fail = true, why = "no ring on that kind";
	if (off)
		must_fail = true, why = "an offset";
	if (flags == MAP_PRIVATE)
		must_fail = true, why = "MAP_PRIVATE";
	if (prot & PROT_EXEC)
		must_fail = true, why = "PROT_EXEC";
	if (len > RING_MAX_LEN)
		must_fail = true, why = "longer than any ring";
	as_begin();
	m = mmap(NULL, len, prot, flags, pk.fd, off);
	e = errno;
	as_end();
	note("mmap(%#zx, prot %#x, flags %#x, %d %s, %#llx) -> %p errno %d",
	     len, prot, flags, pk.fd, kind_name(pk.kind),
	     (unsigned long long)off, (void *)m, e);
	if (m == MAP_FAILED) {
		atomic_fetch_add(&st->ring_map_fails, 1);
		return;
	}
	atomic_fetch_add(&st->ring_maps, 1);
	if (must_fail && same(&pk)) {
		as_begin();
		munmap(m, len);
		as_end();
		STRICT_FAIL("mmap of %s fd %d (%#zx bytes, prot %#x, flags "
			    "%#x, offset %#llx) worked: %s", kind_name(pk.kind),
			    pk.fd, len, prot, flags, (unsigned long long)off,
			    why);
	}
	if (chance(20)) {
		ring_no_growth(m, len, same(&pk) && ring_kind(pk.kind));
		return;		/* unmapped there */
	}
	/* only a ring's, for the scribbler: nothing else of ours */
	if ((prot & (PROT_READ | PROT_WRITE)) == (PROT_READ | PROT_WRITE) &&
	    flags == MAP_SHARED && ring_kind(pk.kind) && same(&pk) &&
	    chance(70)) {
		ringmap_add(m, len, NULL);
		return;
	}
	as_begin();
	munmap(m, len);
	as_end();
}

/* munmap of one of the mappings, whole; or first a look at mremap. */
static void op_ring_unmap(void)
{
	int i = (int)rn(NRINGMAP);

	pthread_rwlock_wrlock(&ringmap_lock);
	if (ringmaps[i].addr) {
		size_t done = 0;

		if (chance(20)) {
			/* the first page alone first, then the rest */
			as_begin();
			munmap(ringmaps[i].addr, PAGE);
			as_end();
			done = PAGE;
		}
		note("munmap ring mapping %p, %#zx", (void *)ringmaps[i].addr,
		     ringmaps[i].len);
		ringmap_drop(i, done);
	}
	pthread_rwlock_unlock(&ringmap_lock);
}

/*
 * A consumer: records taken from a mapping whose layout is known, by
 * the compare-and-swap of the contract, as another consumer (read(2),
 * another process) may take them at the same time; what they hold is
 * not checked (the scribbler's).  Now and then a head put back on tail,
 * as a program that found its ring broken does.
 */
static void op_ring_take(void)
{
	char rec[PT_KIND_REC_MAX];
	struct ringmap *m;
	int i = (int)rn(NRINGMAP), taken = 0;

	pthread_rwlock_rdlock(&ringmap_lock);
	m = &ringmaps[i];
	if (!m->addr || !m->known || m->len < m->p.mmap_size ||
	    m->p.record_size > sizeof(rec)) {
		pthread_rwlock_unlock(&ringmap_lock);
		return;
	}
	for (int k = 0; k < 8; k++) {
		uint32_t *head = (uint32_t *)(m->addr + m->p.off_head);
		const uint32_t *tail = (uint32_t *)(m->addr + m->p.off_tail);
		uint32_t h = __atomic_load_n(head, __ATOMIC_ACQUIRE);
		uint32_t t = __atomic_load_n(tail, __ATOMIC_ACQUIRE);

		if (t - h > m->p.entries) {
			if (chance(30))
				__atomic_store_n(head, t, __ATOMIC_RELEASE);
			break;
		}
		if (t == h)
			break;
		memcpy(rec, m->addr + m->p.off_records +
		       (size_t)(h & (m->p.entries - 1)) * m->p.record_size,
		       m->p.record_size);
		if (__atomic_compare_exchange_n(head, &h, h + 1, false,
						__ATOMIC_RELEASE,
						__ATOMIC_RELAXED))
			taken++;
	}
	pthread_rwlock_unlock(&ringmap_lock);
	atomic_fetch_add(&st->ring_takes, taken);
}

/* One write somewhere in a mapping: a word of the layout, or anything. */
static void scribble(const struct ringmap *m)
{
	uint32_t v = (uint32_t)rnd(), *w;
	size_t off;

	if (m->known && chance(70)) {
		const uint32_t *tail = (uint32_t *)(m->addr + m->p.off_tail);

		switch (rn(6)) {
		case 0:
		case 1:
			off = m->p.off_head;
			switch (rn(5)) {
			case 0:	/* a ring again */
				v = __atomic_load_n(tail, __ATOMIC_RELAXED);
				break;
			case 1:	/* ahead of tail */
				v = *tail + 1 + (uint32_t)rn(2 * m->p.entries);
				break;
			case 2:	/* far behind */
				v = *tail - m->p.entries - 1 - (uint32_t)rn(64);
				break;
			case 3:	/* within the ring, stale slots */
				v = *tail - (uint32_t)rn(m->p.entries + 1);
				break;
			default:
				break;
			}
			break;
		case 2:
			off = m->p.off_tail;
			if (chance(50))
				v = *tail + (uint32_t)rn(8) - 4;
			break;
		case 3:
			off = m->p.off_flags;
			break;
		default:
			off = m->p.off_records + rn((uint64_t)m->p.entries *
						    m->p.record_size / 4) * 4;
			break;
		}
		if (off + 4 > m->len)
			return;
	} else {
		if (m->len < 4)
			return;
		off = rn(m->len / 4) * 4;
		if (chance(20)) {
			size_t n = rn(m->len - off);

			note("scribble %p+%#zx: %#zx bytes of %#x",
			     (void *)m->addr, off, n, v & 0xff);
			memset(m->addr + off, (int)v, n);
			return;
		}
	}
	w = (uint32_t *)(m->addr + off);
	note("scribble %p+%#zx = %#x", (void *)m->addr, off, v);
	__atomic_store_n(w, v, __ATOMIC_RELAXED);
}

/*
 * The fuzzing process's scribbler: bursts of writes into the mappings,
 * under the read lock, all along the run, a short sleep between them so
 * that the operations that unmap get the lock.
 */
static void *ring_scribbler(void *arg)
{
	(void)arg;
	rseed(seed, 0x5cb1b1e5u);
	trace_take(TRACE_SCRIBBLER);
	while (!atomic_load(&stop)) {
		long n = 0;

		pthread_rwlock_rdlock(&ringmap_lock);
		for (int k = 0; k < 32; k++) {
			const struct ringmap *m = &ringmaps[rn(NRINGMAP)];

			if (m->addr) {
				scribble(m);
				n++;
			}
		}
		pthread_rwlock_unlock(&ringmap_lock);
		atomic_fetch_add(&st->ring_scribbles, n);
		pt_sleep_ns((int64_t)(US(50) + rn(US(500))));
	}
	return NULL;
}

/*
 * A module without the ring (interface 1.1 or older) answers every
 * POLLFS_IOC_RING with ENOTTY: say so once, at the start, rather than
 * as the first strict check that meets it.
 */
static void ring_probe(void)
{
	char arg[PT_KIND_ARG_MAX] __attribute__((aligned(8)));
	int kind = obj_with(takes_ring), dev, fd;
	struct pollfs_ring_params p;

	if (kind == K_NONE)
		return;
	dev = open("/dev/pollfs", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return;
	obj_kind(kind)->fill_arg(arg, POLLFS_CLOEXEC, 0);
	fd = ioctl(dev, obj_kind(kind)->cmd, arg);
	close(dev);
	if (fd < 0)
		return;
	memset(&p, 0, sizeof(p));
	p.entries = POLLFS_RING_ENTRIES_MIN;
	if (ioctl(fd, POLLFS_IOC_RING, &p) && errno == ENOTTY)
		FAIL("POLLFS_IOC_RING on a new %s object: ENOTTY: this module "
		     "has no record ring (interface 1.2)", kind_name(kind));
	close(fd);
}

struct opdef {
	void (*fn)(void);
	unsigned int weight;
	bool in_child;
};

static const struct opdef ops[] = {
	{ op_open_dev,		2,  true },
	{ op_create,		16, true },
	{ op_ioctl_other,	2,  true },
	{ op_read,		16, true },
	{ op_readv,		3,  true },
	{ op_write,		16, true },
	{ op_arm_churn,		3,  true },
	{ op_churn,		2,  false },
	{ op_futex,		12, true },
	{ op_poll,		5,  true },
	{ op_select,		1,  true },
	{ op_epoll,		6,  true },
	{ op_close,		10, true },
	{ op_dup,		4,  true },
	{ op_fcntl,		4,  true },
	{ op_aio,		5,  true },
	{ op_signal,		5,  true },
	{ op_fork,		1,  true },
	{ op_kill_child,	1,  true },
	{ op_thread,		1,  false },
	{ op_focus,		1,  false },
	/* new ones here: the indices above are used (close, create, the
	 * ephemeral threads' read, readv and write) */
	{ op_huge,		2,  true },
	{ op_huge_kill,		1,  false },
	{ op_clock,		1,  false },
	{ op_aio_race,		1,  false },
	{ op_disarm,		3,  true },
	{ op_watch,		3,  true },
	{ op_timer_get,		4,  true },
	{ op_ring_ioctl,	3,  true },
	{ op_ring_new,		3,  true },
	{ op_ring_map,		3,  true },
	{ op_ring_unmap,	2,  true },
	{ op_ring_take,		3,  true },
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

static void run_ops(int64_t until, bool is_child)
{
	unsigned int total = 0;
	long n = 0;

	for (size_t i = 0; i < NOPS; i++)
		total += ops[i].weight;
	while (!atomic_load(&stop)) {
		unsigned int r = (unsigned int)rn(total);
		size_t i;

		for (i = 0; r >= ops[i].weight; i++)
			r -= ops[i].weight;
		if (is_child && !ops[i].in_child)
			continue;
		/* few objects: create; many: close */
		if (occupied() > NSLOT * 3 / 4 && chance(30))
			i = 12;		/* op_close */
		else if (occupied() < 8 && chance(50))
			i = 1;		/* op_create */
		if ((n & 63) == 0)
			holes_check();
		guard_arm((int64_t)(US(500) + rn(MS(15))));
		ops[i].fn();
		guard_disarm();
		atomic_fetch_add_explicit(&st->ops, 1, memory_order_relaxed);
		if ((++n & 15) == 0) {
			if (pt_mono() > until)
				break;
			reap(false);
		}
	}
}

static void *thread_main(void *arg)
{
	struct targ *t = arg;

	thread_tids[t->id] = (pid_t)syscall(SYS_gettid);
	trace_take(t->id);
	rseed(seed, t->seed);
	tbuf_init();
	guard_init();
	if (t->nops) {
		/* an ephemeral thread: a few operations, then it exits
		 * with whatever it had pending or blocked */
		for (int i = 0; i < t->nops && !atomic_load(&stop); i++) {
			guard_arm((int64_t)(US(500) + rn(MS(10))));
			ops[3 + rn(3)].fn();	/* read, readv, write */
			guard_disarm();
		}
	} else {
		run_ops(deadline, false);
	}
	timer_delete(guard);
	as_begin();
	munmap(tbuf, (BUFPAGES + 1) * PAGE);
	as_end();
	if (t->nops) {
		thread_tids[t->id] = 0;
		atomic_fetch_sub(&ephemeral, 1);
	}
	return NULL;
}

/* ---- the fuzzing process ---- */

static int fuzz_main(void)
{
	pthread_t th[MAXTHREADS], scribbler;
	struct targ args[MAXTHREADS];
	struct rlimit rl;

	pt_on_fail(dump_traces);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < NOFILE) {
		rl.rlim_cur = rl.rlim_max < NOFILE ? rl.rlim_max : NOFILE;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	setup_signals();
	/* what a kind fuzz knows nothing of needs to be created at all */
	pt_kinds_prepare();
	setup_memory();
	arenas_rw[0] = arena_a;
	arenas_rw[1] = arena_s;
	arenas_rw[2] = arena_f;
	slots_init();

	rseed(seed, 0);
	trace_take(0);
	thread_tids[0] = (pid_t)syscall(SYS_gettid);
	tbuf_init();
	guard_init();
	/* a factory handle or two to start with */
	op_open_dev();
	op_open_dev();
	ring_probe();

	for (int t = 1; t <= nthreads; t++) {
		args[t - 1] = (struct targ){ .id = t, .nops = 0,
					     .seed = (uint64_t)t };
		CHECK_EQ(pthread_create(&th[t - 1], NULL, thread_main,
					&args[t - 1]), 0);
	}
	CHECK_EQ(pthread_create(&scribbler, NULL, ring_scribbler, NULL), 0);
	run_ops(deadline, false);
	atomic_store(&stop, 1);
	/* no step after this one: nothing may wait an hour on the clock */
	pthread_mutex_lock(&clock_lock);
	clock_restore();
	pthread_mutex_unlock(&clock_lock);
	for (int t = 1; t <= nthreads; t++)
		pthread_join(th[t - 1], NULL);
	pthread_join(scribbler, NULL);
	while (atomic_load(&ephemeral))
		pt_sleep_ms(1);
	guard_disarm();

	/* the children end by themselves within a second */
	for (int64_t end = pt_mono() + 10 * NSEC_PER_SEC;;) {
		bool any = false;

		for (int i = 0; i < MAXCHILD; i++)
			any |= atomic_load(&children[i].pid) > 0;
		if (!any)
			break;
		reap(pt_mono() > end);
		pt_sleep_ms(5);
	}
	for (int i = 0; i < NSLOT; i++) {
		int fd = W_FD(atomic_load(&slots[i].word));

		if (fd >= 0)
			close(fd);
	}
	for (int i = 0; i < NCTX; i++)
		if (ctx_get(i))
			syscall(SYS_io_destroy, ctx_get(i));
	return PT_PASS;
}

/* ---- the supervisor ---- */

static long read_refcnt(void)
{
	char buf[32];

	if (pt_read_file("/sys/module/pollfs/refcnt", buf, sizeof(buf)) < 0)
		return -1;
	return strtol(buf, NULL, 10);
}

/* Sum of the active objects of pollfs's slab caches, or -1. */
static long read_slab(void)
{
	char line[512];
	long sum = 0;
	FILE *f;

	pt_for_each_kind(k)
		pt_slab_shrink(k->cache);
	f = fopen("/proc/slabinfo", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char name[64];
		long active;

		if (sscanf(line, "%63s %ld", name, &active) != 2)
			continue;
		pt_for_each_kind(k)
			if (!strcmp(name, k->cache))
				sum += active;
	}
	fclose(f);
	return sum;
}

/* Killed (tests/run's timeout): the clock first, then die of it. */
static void on_term(int sig)
{
	clock_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void usage(void)
{
	fprintf(stderr, "usage: fuzz [-s SEED] [-t SECONDS] [-j THREADS] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *env;
	bool have_seed = false;
	long ref0, slab0, ref = -1, slab = -1;
	char slowest[64] = "";
	pid_t pid;
	int status, opt;
	int64_t t0, hard;
	/* a second of the waits below, longer on a slower kernel */
	const int64_t sec = (int64_t)pt_time_scale() * NSEC_PER_SEC;

	/* the exec target: exit at once, closing what was inherited */
	if (argc == 2 && !strcmp(argv[1], "-x"))
		return 0;

	env = getenv("POLLFS_FUZZ_TIME");
	if (env && *env)
		seconds = (unsigned int)strtoul(env, NULL, 10);
	env = getenv("POLLFS_FUZZ_SEED");
	if (env && *env) {
		seed = strtoull(env, NULL, 0);
		have_seed = true;
	}
	while ((opt = getopt(argc, argv, "s:t:j:vxh")) != -1) {
		switch (opt) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			have_seed = true;
			break;
		case 't':
			seconds = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'j':
			nthreads = atoi(optarg);
			if (nthreads < 0 || nthreads >= MAXTHREADS)
				usage();
			break;
		case 'v':
			verbose = true;
			break;
		case 'x':
			return 0;
		default:
			usage();
		}
	}
	if (!seconds)
		usage();
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = ((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec ^
		       ((uint64_t)getpid() << 40);
		seed %= 10000000000ull;
	}
	pt_diag("seed %" PRIu64, seed);
	pt_diag("replay: fuzz -s %" PRIu64 " -t %u (make fuzz FUZZ_SEED=%"
		PRIu64 " FUZZ_TIME=%u)", seed, seconds, seed, seconds);

	if (access("/dev/pollfs", R_OK | W_OK))
		pt_skip("/dev/pollfs: %s", strerror(errno));
	if (readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1) < 0)
		FAIL("readlink /proc/self/exe: %s", strerror(errno));

	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(st != MAP_FAILED);
	CHECK_SYS(prctl(PR_SET_CHILD_SUBREAPER, 1));
	start_mono = clock_ns(CLOCK_MONOTONIC);
	start_real = clock_ns(CLOCK_REALTIME);
	atomic_store(&clock_ok, geteuid() == 0);
	/* the fuzzing process replaces it with its own (dump_traces) */
	pt_on_fail(clock_restore);
	ref0 = read_refcnt();
	slab0 = read_slab();
	pt_diag("%u s, %d threads besides the main one; module refcnt %ld, "
		"pollfs slab objects %ld", seconds, nthreads, ref0, slab0);

	t0 = pt_mono();
	deadline = t0 + (int64_t)seconds * NSEC_PER_SEC;
	pid = fork();
	CHECK_SYS(pid);
	if (pid == 0)
		_exit(fuzz_main());
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	signal(SIGHUP, on_term);

	/*
	 * The fuzzing process must end by itself soon after the deadline,
	 * or within the time a child (or itself) may take in the kernel's
	 * exit, once found there (see reap()).
	 */
	hard = deadline + 9 * sec;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (pt_mono() > hard && hard < deadline + 39 * sec &&
		    (atomic_load(&st->in_exit_now) || task_exiting(pid) > 0)) {
			pt_diag("the fuzzing process waits for an exit in the "
				"kernel: 30 s more");
			hard = deadline + 39 * sec;
		}
		if (pt_mono() > hard) {
			pt_diag("the fuzzing process still runs %lld s after "
				"its deadline:", (long long)((pt_mono() -
							    deadline) /
							   NSEC_PER_SEC));
			show_task(pid);
			{
				char dir[64];
				DIR *d;
				struct dirent *de;

				snprintf(dir, sizeof(dir), "/proc/%d/task",
					 (int)pid);
				d = opendir(dir);
				while (d && (de = readdir(d))) {
					if (de->d_name[0] != '.')
						show_task(atoi(de->d_name));
				}
				if (d)
					closedir(d);
			}
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			FAIL("hang: seed %" PRIu64, seed);
		}
		pt_sleep_ms(20);
	}
	/*
	 * Grandchildren orphaned to us (we are their subreaper).  One that a
	 * SIGSTOP caught in fork, before it could ask for its parent's death
	 * signal, stays stopped for good: kill them all.  What SIGKILL does
	 * not end in time hangs in the kernel.
	 */
	signal_children(getpid(), SIGKILL);
	for (int64_t end = pt_mono() + 5 * sec;;) {
		pid_t r = waitpid(-1, NULL, WNOHANG);

		if (r < 0)
			break;
		if (r == 0) {
			if (pt_mono() > end) {
				signal_children(getpid(), 0);
				FAIL("processes left after the fuzzing ended");
			}
			pt_sleep_ms(10);
		}
	}
	clock_restore();
	pt_diag("%ld operations in %.1f s: %ld objects created (%ld ioctls "
		"failed), %ld reads (%ld records, %ld EINTR), %ld writes, %ld "
		"futex arms, FUTEX_WAKE counted %ld, %ld closes, %ld dups, %ld "
		"epoll ops, %ld signal ops, %ld forks, %ld execs, %ld AIO "
		"contexts, %ld memory changes",
		atomic_load(&st->ops), (double)(pt_mono() - t0) / NSEC_PER_SEC,
		atomic_load(&st->creates), atomic_load(&st->create_fail),
		atomic_load(&st->reads), atomic_load(&st->records),
		atomic_load(&st->eintr), atomic_load(&st->writes),
		atomic_load(&st->arms), atomic_load(&st->wakes_counted),
		atomic_load(&st->closes), atomic_load(&st->dups),
		atomic_load(&st->epolls), atomic_load(&st->signals),
		atomic_load(&st->forks), atomic_load(&st->execs),
		atomic_load(&st->aio_setups), atomic_load(&st->maps));
	if (atomic_load(&st->slow_exits))
		snprintf(slowest, sizeof(slowest), " (the slowest reaped %ld ms "
			 "after its start)", atomic_load(&st->slowest_exit_ms));
	pt_diag("%ld huge writes (%ld short), %ld huge reads, %ld children "
		"killed in a huge write, %ld realtime clock steps%s, %ld "
		"io_destroy races (%ld requests raced), %ld children still in "
		"their exit at 4 s%s",
		atomic_load(&st->huge_writes), atomic_load(&st->short_writes),
		atomic_load(&st->huge_reads), atomic_load(&st->huge_kills),
		atomic_load(&st->clock_steps),
		atomic_load(&clock_ok) ? "" : " (not root)",
		atomic_load(&st->destroy_races),
		atomic_load(&st->race_completions),
		atomic_load(&st->slow_exits), slowest);
	pt_diag("1.1: %ld watched rounds (own objects), %ld disarm writes, %ld "
		"TIMER_GETs, %ld CANCEL_ON_SET checks",
		atomic_load(&st->watch_rounds), atomic_load(&st->disarms),
		atomic_load(&st->timer_gets), atomic_load(&st->cancel_checks));
	pt_diag("1.2: %ld ring ioctls (%ld rings set up), %ld mappings (%ld "
		"mmaps failed), %ld unmapped, %ld records taken by "
		"compare-and-swap, %ld scribbles, %ld reads of ringed objects "
		"not checked for content",
		atomic_load(&st->ring_ioctls), atomic_load(&st->ring_setups),
		atomic_load(&st->ring_maps), atomic_load(&st->ring_map_fails),
		atomic_load(&st->ring_unmaps), atomic_load(&st->ring_takes),
		atomic_load(&st->ring_scribbles),
		atomic_load(&st->ring_unchecked));
	if (atomic_load(&st->clock_steps))
		pt_diag("realtime clock put back: %+lld us from the start's "
			"plus the monotonic time since",
			(long long)((clock_ns(CLOCK_REALTIME) - real_truth()) /
				    1000));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != PT_PASS)
		FAIL("the fuzzing process %s %d (seed %" PRIu64 ")",
		     WIFEXITED(status) ? "exited with" : "was killed by signal",
		     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
		     seed);
	if (atomic_load(&st->creates) == 0)
		FAIL("no object was ever created");

	/* everything is closed: the module's references and the objects
	 * come back to where they were (closing may finish a moment later) */
	for (int64_t end = pt_mono() + 4 * sec;;) {
		ref = read_refcnt();
		slab = read_slab();
		if (ref == ref0 && slab <= slab0)
			break;
		if (pt_mono() > end)
			FAIL("leak: module refcnt %ld (was %ld), pollfs slab "
			     "objects %ld (were %ld) after every process "
			     "ended; seed %" PRIu64, ref, ref0, slab, slab0,
			     seed);
		pt_sleep_ms(20);
	}
	pt_diag("module refcnt %ld, pollfs slab objects %ld: back to the start",
		ref, slab);
	return PT_PASS;
}
