// SPDX-License-Identifier: MIT
/* The table of pollfs object kinds; see kinds.h. */
#include "kinds.h"
#include "aio.h"
#include "futex.h"
#include "signal.h"
#include "timer.h"

#include <stdio.h>
#include <sys/mman.h>

#include <pollfs.h>

/* ---- signal: SIGUSR1, blocked, read through the object ---- */

static void signal_prepare(void)
{
	ps_block(ps_bit(SIGUSR1));
}

/* An empty mask: what makes SIGUSR1 readable is the record prime()
 * writes, so that a test sees that record taken. */
static void signal_fill_arg(void *arg, uint32_t flags, uint32_t reserved)
{
	struct pollfs_signal_open o = { 0, flags, reserved };

	memcpy(arg, &o, sizeof(o));
}

static int signal_lib_new(int flags)
{
	sigset_t none;

	sigemptyset(&none);
	return pollfs_signal(&none, flags);
}

static void signal_sample(void *rec, unsigned int n)
{
	static const int sigs[] = { SIGUSR2, 40, SIGUSR1, 34 };
	uint64_t mask = ps_bit(sigs[n % 4]);

	if (n % 3 == 0)
		mask |= ps_bit(SIGUSR2);
	memcpy(rec, &mask, sizeof(mask));
}

static void signal_arm(int fd, unsigned int n)
{
	uint64_t mask;

	signal_sample(&mask, n);
	CHECK_EQ(write(fd, &mask, sizeof(mask)), sizeof(mask));
}

static void signal_prime(void *rec)
{
	uint64_t mask = ps_bit(SIGUSR1);

	memcpy(rec, &mask, sizeof(mask));
}

static void signal_fire(int fd)
{
	(void)fd;
	CHECK_SYS(kill(getpid(), SIGUSR1));
}

static void signal_expect(const void *rec)
{
	struct pollfs_siginfo si;

	memcpy(&si, rec, sizeof(si));
	ps_check_sig(&si, SIGUSR1, SI_USER);
	CHECK_EQ(si.psi_pid, getpid());
	CHECK_EQ(si.psi_uid, getuid());
}

static const char *signal_bad_record(const void *rec)
{
	struct pollfs_siginfo si;

	memcpy(&si, rec, sizeof(si));
	if (si.psi_signo < 1 || si.psi_signo > 64 || si.psi_signo == SIGKILL ||
	    si.psi_signo == SIGSTOP)
		return "signal number out of range";
	return NULL;
}

/*
 * A signal object reads the signals of whoever reads it.  The receiver
 * reads none of the sender's pending signals, only its own (its pid,
 * its uid, its value); the sender's stay pending for it.
 */
static void signal_pass_send(int *fds, struct pt_pass_msg *m)
{
	union sigval v = { .sival_int = 1111 };

	ps_block(ps_bit(SIGUSR1));
	fds[0] = ps_signal(ps_bit(SIGUSR1), 0);
	CHECK_SYS(sigqueue(getpid(), SIGUSR1, v));
	m->nfds = 1;
}

static void signal_pass_receive(const int *fds, const struct pt_pass_msg *m)
{
	union sigval v = { .sival_int = 2222 };
	struct pollfs_siginfo si;

	(void)m;
	ps_block(ps_bit(SIGUSR1));
	CHECK(!pt_poll_in(fds[0], 0));
	CHECK_ERR(pt_read_nb(fds[0], &si, sizeof(si)), EAGAIN);
	CHECK_SYS(sigqueue(getpid(), SIGUSR1, v));
	CHECK_EQ(pt_read_nb(fds[0], &si, sizeof(si)), (long)sizeof(si));
	CHECK_EQ(si.psi_signo, SIGUSR1);
	CHECK_EQ(si.psi_int, 2222);
	CHECK_EQ(si.psi_pid, getpid());
	CHECK_EQ(si.psi_uid, getuid());
	CHECK_ERR(pt_read_nb(fds[0], &si, sizeof(si)), EAGAIN);
}

/* The sender's signal is still its own to read. */
static void signal_pass_kept(int *fds, const struct pt_pass_msg *m)
{
	struct pollfs_siginfo si;

	(void)m;
	CHECK_EQ(pt_read_nb(fds[0], &si, sizeof(si)), (long)sizeof(si));
	CHECK_EQ(si.psi_signo, SIGUSR1);
	CHECK_EQ(si.psi_int, 1111);
	CHECK_EQ(si.psi_pid, getpid());
	CHECK_EQ(si.psi_uid, getuid());
	CHECK_SYS(close(fds[0]));
}

static const struct pt_passing signal_passing[] = {
	{ "object_reads_only_the_readers_signals", signal_pass_send,
	  signal_pass_receive, signal_pass_kept },
	{ NULL },
};

/* ---- timer: CLOCK_MONOTONIC ---- */

static void plain_fill_arg(void *arg, uint32_t flags, uint32_t reserved)
{
	struct pollfs_open o = { flags, reserved };

	memcpy(arg, &o, sizeof(o));
}

static int timer_lib_new(int flags)
{
	return pollfs_timer(flags);
}

/* Mostly armed far away (PT_KIND_WAITING among them); now and then
 * periodic and running, or fired and unread. */
static void timer_sample(void *rec, unsigned int n)
{
	struct pollfs_timer_spec spec;

	switch (n % 50) {
	case 0:
		spec = tmr_spec(CLOCK_MONOTONIC, 0, MS(1), MS(2));
		break;
	case 1: case 2: case 3:
		spec = tmr_spec(CLOCK_MONOTONIC, 0, US(1), 0);
		break;
	default:
		spec = tmr_spec(CLOCK_MONOTONIC, 0, 3600 * NSEC_PER_SEC, 0);
		break;
	}
	memcpy(rec, &spec, sizeof(spec));
}

static void timer_arm(int fd, unsigned int n)
{
	struct pollfs_timer_spec spec;

	timer_sample(&spec, n);
	CHECK_EQ(write(fd, &spec, sizeof(spec)), TMR_SPEC_SIZE);
}

static void timer_prime(void *rec)
{
	struct pollfs_timer_spec spec = tmr_spec(CLOCK_MONOTONIC, 0, US(50), 0);

	memcpy(rec, &spec, sizeof(spec));
}

static void timer_expect(const void *rec)
{
	struct pollfs_timer_event ev;

	memcpy(&ev, rec, sizeof(ev));
	tmr_check_oneshot(&ev);
}

static bool ts_valid(const struct __kernel_timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 &&
	       ts->tv_nsec < NSEC_PER_SEC;
}

static const char *timer_bad_record(const void *rec)
{
	struct pollfs_timer_event ev;

	memcpy(&ev, rec, sizeof(ev));
	if (ev.expirations < 1)
		return "no expiration";
	if (!ts_valid(&ev.remaining) || !ts_valid(&ev.interval))
		return "timespec out of range";
	return NULL;
}

/* Two seconds' worth of nanoseconds in a timespec's tv_nsec. */
static void timer_invalid(void *rec)
{
	struct pollfs_timer_spec spec = tmr_spec(CLOCK_MONOTONIC, 0, MS(30), 0);

	spec.value.tv_nsec = 2 * NSEC_PER_SEC;
	memcpy(rec, &spec, sizeof(spec));
}

/* ---- futex: private words of this process ---- */

/* The words arm() waits on; prime() has one of its own, which only the
 * object in use waits on, so that fire()'s wake counts exactly one. */
static uint32_t armed_words[64];
static uint32_t use_word = 7;
/* A word that never holds what stale() says it does. */
static uint32_t stale_word;

static int futex_lib_new(int flags)
{
	return pollfs_futex(flags);
}

static void futex_sample(void *rec, unsigned int n)
{
	uint32_t *w = &armed_words[n % 64];
	struct pollfs_futex_event ev = fx_ev(w, *w, FX_PRIVATE);

	memcpy(rec, &ev, sizeof(ev));
}

/* One to three words at a time. */
static void futex_arm(int fd, unsigned int n)
{
	struct pollfs_futex_event ev[3];
	size_t count = 1 + n % 3;

	for (size_t i = 0; i < count; i++)
		futex_sample(&ev[i], n + (unsigned int)i);
	fx_armv(fd, ev, count);
}

static void futex_prime(void *rec)
{
	struct pollfs_futex_event ev = fx_ev(&use_word, use_word, FX_PRIVATE);

	memcpy(rec, &ev, sizeof(ev));
}

static void futex_fire(int fd)
{
	(void)fd;
	CHECK_EQ(fx_wake(&use_word, 1, FX_PRIVATE), 1);
}

static void futex_expect(const void *rec)
{
	struct pollfs_futex_event ev;

	memcpy(&ev, rec, sizeof(ev));
	fx_check_rec(&ev, &use_word, use_word, FX_PRIVATE);
}

static const char *futex_bad_record(const void *rec)
{
	struct pollfs_futex_event ev;

	memcpy(&ev, rec, sizeof(ev));
	if (ev.addr % 4)
		return "unaligned address";
	if (ev.flags & ~(uint32_t)(POLLFS_FUTEX_SHARED | POLLFS_FUTEX_WATCH))
		return "unknown flags";
	return NULL;
}

/* An address that is no futex word's: not 4-byte aligned. */
static void futex_invalid(void *rec)
{
	struct pollfs_futex_event ev = fx_ev((char *)&use_word + 1, 0,
					     FX_PRIVATE);

	memcpy(rec, &ev, sizeof(ev));
}

static void futex_stale(void *rec)
{
	struct pollfs_futex_event ev = fx_ev(&stale_word, stale_word + 1,
					     FX_PRIVATE);

	memcpy(rec, &ev, sizeof(ev));
}

/* At the same address in the sender and the receiver, forked apart. */
static uint32_t passed_word = 41;

/* A word of a page mapped after the receiver's fork: only in the
 * sender, 9. */
static uint32_t *sender_only_word(struct pt_pass_msg *m)
{
	uint32_t *only = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(only != MAP_FAILED);
	*only = 9;
	m->sender_only = (uintptr_t)only;
	return only;
}

/*
 * A private futex object the sender armed is a waiter on the sender's
 * memory: the receiver's private wakes (and shared ones) at the same
 * address, which in its own memory is another futex, count nothing and
 * leave the object unwoken; the sender's own wake does.
 */
static void futex_pass_armed_send(int *fds, struct pt_pass_msg *m)
{
	sender_only_word(m);
	fds[0] = fx_new(0);
	fx_arm(fds[0], &passed_word, 41, FX_PRIVATE);
	m->nfds = 1;
}

static void futex_pass_armed_receive(const int *fds,
				     const struct pt_pass_msg *m)
{
	CHECK_EQ(fx_wake(&passed_word, INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&passed_word, INT_MAX, FX_SHARED), 0);
	CHECK_EQ(fx_futex((void *)(uintptr_t)m->sender_only,
			  fx_op(FUTEX_WAKE, FX_PRIVATE), INT_MAX, 0, NULL, 0),
		 0);
	fx_expect_armed(fds[0]);
}

/* Still armed, woken by the sender's wake. */
static void futex_pass_armed_kept(int *fds, const struct pt_pass_msg *m)
{
	(void)m;
	fx_expect_armed(fds[0]);
	CHECK_EQ(fx_wake(&passed_word, INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(fds[0], &passed_word, 41, FX_PRIVATE);
	CHECK_SYS(close(fds[0]));
}

/*
 * Arming writes in the writer's memory: the receiver arming a passed
 * object on an address it cannot read - mapped only in the sender, a
 * PROT_NONE page, a kernel address - gets EFAULT; on its own word it
 * works, woken by its own wake.  The sender, likewise, on what it
 * cannot read.
 */
static void futex_pass_unarmed_send(int *fds, struct pt_pass_msg *m)
{
	sender_only_word(m);
	fds[0] = fx_new(0);
	m->nfds = 1;
}

static void futex_pass_unarmed_receive(const int *fds,
				       const struct pt_pass_msg *m)
{
	void *none, *sender_only = (void *)(uintptr_t)m->sender_only;

	none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(none != MAP_FAILED);
	CHECK_ERR(fx_write1(fds[0], sender_only, 0, FX_PRIVATE), EFAULT);
	CHECK_ERR(fx_write1(fds[0], sender_only, 0, FX_SHARED), EFAULT);
	CHECK_ERR(fx_write1(fds[0], none, 0, FX_PRIVATE), EFAULT);
	CHECK_ERR(fx_write1(fds[0], none, 0, FX_SHARED), EFAULT);
	CHECK_ERR(fx_write1(fds[0], (void *)0xffffffff81000000ull, 0,
			    FX_PRIVATE), EFAULT);
	CHECK_ERR(fx_write1(fds[0], (void *)0xffff888000000000ull, 0,
			    FX_SHARED), EFAULT);
	fx_expect_unarmed(fds[0]);
	passed_word = 77;
	fx_arm(fds[0], &passed_word, 77, FX_PRIVATE);
	CHECK_EQ(fx_wake(&passed_word, INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(fds[0], &passed_word, 77, FX_PRIVATE);
}

/* What the sender cannot read, it cannot arm on either. */
static void futex_pass_unarmed_kept(int *fds, const struct pt_pass_msg *m)
{
	uint32_t *only = (uint32_t *)(uintptr_t)m->sender_only;

	CHECK_ERR(fx_write1(fds[0], (void *)0xffffffff81000000ull, 0,
			    FX_PRIVATE), EFAULT);
	CHECK_SYS(mprotect(only, 4096, PROT_NONE));
	CHECK_ERR(fx_write1(fds[0], only, 9, FX_PRIVATE), EFAULT);
	CHECK_ERR(fx_write1(fds[0], only, 9, FX_SHARED), EFAULT);
	fx_expect_unarmed(fds[0]);
	CHECK_SYS(close(fds[0]));
}

static const struct pt_passing futex_passing[] = {
	{ "private_wait_woken_only_in_the_armers_memory",
	  futex_pass_armed_send, futex_pass_armed_receive,
	  futex_pass_armed_kept },
	{ "arming_on_unreadable_memory_is_efault", futex_pass_unarmed_send,
	  futex_pass_unarmed_receive, futex_pass_unarmed_kept },
	{ NULL },
};

/* ---- AIO: one context of the process, writes to a temporary file ---- */

static aio_context_t aio_ctx;
static int aio_file = -1;

/* The iocb data of the write fire() submits, told from others'. */
#define AIO_FIRE_DATA	0xf17e

static void aio_prepare(void)
{
	aio_ctx = ax_setup(64);
	aio_file = ax_tmpfile("/tmp", 0);
}

static void aio_fill_arg(void *arg, uint32_t flags, uint32_t reserved)
{
	struct pollfs_aio_open o = { aio_ctx, flags, reserved };

	memcpy(arg, &o, sizeof(o));
}

static int aio_lib_new(int flags)
{
	return pollfs_aio(aio_ctx, flags);
}

static char aio_data[64];

/* A write completes. */
static void aio_fire(int fd)
{
	struct iocb cb, *cbs[1] = { &cb };

	(void)fd;
	ax_prep_pwrite(&cb, aio_file, aio_data, sizeof(aio_data), 0,
		       AIO_FIRE_DATA);
	ax_submit(aio_ctx, 1, cbs);
}

static void aio_expect(const void *rec)
{
	struct pollfs_aio_event ev;

	memcpy(&ev, rec, sizeof(ev));
	CHECK_EQ(ev.ctx, aio_ctx);
	CHECK_EQ(ev.available, 1);
}

/* The read reaped nothing: the write's completion is reaped here. */
static void aio_take(int fd)
{
	struct io_event done;

	(void)fd;
	CHECK_EQ(ax_reap(aio_ctx, 1, 1, &done, PT_WAIT_MS), 1);
	ax_check_event(&done, AIO_FIRE_DATA, sizeof(aio_data));
}

static const char *aio_bad_record(const void *rec)
{
	struct pollfs_aio_event ev;

	memcpy(&ev, rec, sizeof(ev));
	return ev.available < 1 ? "no completion available" : NULL;
}

/*
 * The receiver cannot create an object for the sender's context, through
 * its own /dev/pollfs handle nor the sender's (EINVAL), even with a page
 * of its own at the context's address.
 */
static void aio_pass_send(int *fds, struct pt_pass_msg *m)
{
	struct pollfs_aio_open ao = { 0, 0, 0 };
	aio_context_t ctx = 0;

	CHECK_SYS(ax_sys_setup(4, &ctx));
	fds[0] = pt_dev();
	ao.ctx = ctx;
	fds[1] = CHECK_SYS(ioctl(fds[0], POLLFS_IOC_AIO, &ao));
	m->ctx = ctx;
	m->nfds = 2;
}

/* fds: the sender's /dev/pollfs handle, its object on its context. */
static void aio_pass_receive(const int *fds, const struct pt_pass_msg *m)
{
	struct pollfs_aio_open o = { m->ctx, 0, 0 };
	struct pollfs_aio_event ae;
	aio_context_t own = 0;
	int own_dev = pt_dev(), fd;
	void *fake;

	CHECK_ERR(ioctl(fds[0], POLLFS_IOC_AIO, &o), EINVAL);
	CHECK_ERR(ioctl(own_dev, POLLFS_IOC_AIO, &o), EINVAL);
	/* a context of our own, and a page of ours where the sender's
	 * ring is, holding the ring's header */
	CHECK_SYS(ax_sys_setup(4, &own));
	fake = mmap((void *)(uintptr_t)m->ctx, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (fake != MAP_FAILED) {
		memcpy(fake, (void *)(uintptr_t)own, 32);
		CHECK_ERR(ioctl(fds[0], POLLFS_IOC_AIO, &o), EINVAL);
		CHECK_ERR(ioctl(own_dev, POLLFS_IOC_AIO, &o), EINVAL);
	} else {
		pt_diag("the sender's context address is taken here: %s",
			strerror(errno));
	}
	/* our own context works through the sender's handle */
	o.ctx = own;
	fd = CHECK_SYS(ioctl(fds[0], POLLFS_IOC_AIO, &o));
	CHECK_ERR(pt_read_nb(fd, &ae, sizeof(ae)), EAGAIN);
	CHECK_SYS(close(fd));
	CHECK_SYS(ax_sys_destroy(own));
	CHECK_SYS(close(own_dev));
}

/* The sender's object still follows its context. */
static void aio_pass_kept(int *fds, const struct pt_pass_msg *m)
{
	struct pollfs_aio_event ae;

	CHECK_ERR(pt_read_nb(fds[1], &ae, sizeof(ae)), EAGAIN);
	CHECK_SYS(ax_sys_destroy(m->ctx));
	CHECK_EQ(pt_read_nb(fds[1], &ae, sizeof(ae)), 0);
	CHECK_SYS(close(fds[1]));
	CHECK_SYS(close(fds[0]));
}

static const struct pt_passing aio_passing[] = {
	{ "no_object_for_another_process_context", aio_pass_send,
	  aio_pass_receive, aio_pass_kept },
	{ NULL },
};

const struct pt_kind pt_kinds[] = {
	[PT_KIND_SIGNAL] = {
		.name = "signal", .cache = "pollfs_signal",
		.cmd = POLLFS_IOC_SIGNAL,
		.arg_size = sizeof(struct pollfs_signal_open),
		.read_size = sizeof(struct pollfs_siginfo),
		.write_size = sizeof(uint64_t),
		.prepare = signal_prepare, .fill_arg = signal_fill_arg,
		.lib_new = signal_lib_new,
		.sample = signal_sample, .arm = signal_arm,
		.prime = signal_prime, .fire = signal_fire,
		.expect = signal_expect, .bad_record = signal_bad_record,
		.zero_fdinfo = "mask: 0x0000000000000000\n",
		.passing = signal_passing,
	},
	[PT_KIND_TIMER] = {
		.name = "timer", .cache = "pollfs_timer",
		.cmd = POLLFS_IOC_TIMER,
		.arg_size = sizeof(struct pollfs_open),
		.read_size = sizeof(struct pollfs_timer_event),
		.write_size = sizeof(struct pollfs_timer_spec),
		.fill_arg = plain_fill_arg, .lib_new = timer_lib_new,
		.sample = timer_sample, .arm = timer_arm,
		.prime = timer_prime, .expect = timer_expect,
		.bad_record = timer_bad_record, .invalid = timer_invalid,
		.zero_fdinfo = "it_value: (0, 0)\n",
		.ring = true,
	},
	[PT_KIND_FUTEX] = {
		.name = "futex", .cache = "pollfs_futex",
		.cmd = POLLFS_IOC_FUTEX,
		.arg_size = sizeof(struct pollfs_open),
		.read_size = sizeof(struct pollfs_futex_event),
		.write_size = sizeof(struct pollfs_futex_event),
		.fill_arg = plain_fill_arg, .lib_new = futex_lib_new,
		.sample = futex_sample, .arm = futex_arm,
		.prime = futex_prime, .fire = futex_fire,
		.expect = futex_expect, .bad_record = futex_bad_record,
		.invalid = futex_invalid, .stale = futex_stale,
		.write_set = POLLFS_FUTEX_WAITV_MAX,
		.ring = true,
		.passing = futex_passing,
	},
	[PT_KIND_AIO] = {
		.name = "aio", .cache = "pollfs_aio",
		.cmd = POLLFS_IOC_AIO,
		.arg_size = sizeof(struct pollfs_aio_open),
		.read_size = sizeof(struct pollfs_aio_event),
		.prepare = aio_prepare, .fill_arg = aio_fill_arg,
		.lib_new = aio_lib_new,
		.fire = aio_fire, .expect = aio_expect, .take = aio_take,
		.bad_record = aio_bad_record,
		.read_peeks = true,
		.passing = aio_passing,
	},
};
const unsigned int pt_nkinds = sizeof(pt_kinds) / sizeof(pt_kinds[0]);

_Static_assert(sizeof(struct pollfs_signal_open) <= PT_KIND_ARG_MAX &&
	       sizeof(struct pollfs_aio_open) <= PT_KIND_ARG_MAX,
	       "an open argument outgrows PT_KIND_ARG_MAX");
_Static_assert(sizeof(struct pollfs_siginfo) <= PT_KIND_REC_MAX &&
	       sizeof(struct pollfs_timer_spec) <= PT_KIND_REC_MAX,
	       "a record outgrows PT_KIND_REC_MAX");

void pt_kinds_prepare(void)
{
	/* a forked child makes its own: the parent's AIO context is not
	 * the child's */
	static pid_t prepared_by;

	if (prepared_by == getpid())
		return;
	pt_for_each_kind(k)
		if (k->prepare)
			k->prepare();
	prepared_by = getpid();
}

int pt_kind_try(const struct pt_kind *k, int dev, uint32_t flags)
{
	char arg[PT_KIND_ARG_MAX] __attribute__((aligned(8)));

	k->fill_arg(arg, flags, 0);
	return ioctl(dev, k->cmd, arg);
}

int pt_kind_new_at(const char *file, int line, const struct pt_kind *k,
		   int dev, uint32_t flags)
{
	int fd = pt_kind_try(k, dev, flags);

	if (fd < 0)
		pt_fail_at(file, line, "creating a %s object: errno %d (%s)",
			   k->name, errno, strerror(errno));
	return fd;
}

void pt_kind_prime_at(const char *file, int line, const struct pt_kind *k,
		      int fd)
{
	char rec[PT_KIND_REC_MAX] __attribute__((aligned(8)));
	ssize_t r;

	if (!k->prime)
		return;
	k->prime(rec);
	r = write(fd, rec, k->write_size);
	if (r != (ssize_t)k->write_size)
		pt_fail_at(file, line, "writing the %s record that readies "
			   "fd %d: returned %zd, errno %d (%s)", k->name, fd,
			   r, errno, strerror(errno));
}

void pt_kind_ready_at(const char *file, int line, const struct pt_kind *k,
		      int fd)
{
	pt_kind_prime_at(file, line, k, fd);
	if (k->fire)
		k->fire(fd);
}

/* Room for two records: exactly one comes. */
void pt_kind_use(const struct pt_kind *k, int fd)
{
	char rec[2 * PT_KIND_REC_MAX] __attribute__((aligned(8)));

	pt_kind_ready(k, fd);
	pt_wait_readable(fd, PT_WAIT_MS);
	CHECK_EQ(read(fd, rec, 2 * k->read_size), (ssize_t)k->read_size);
	k->expect(rec);
	if (k->take)
		k->take(fd);
}

/* The kind tests of the program: what pt_add_test_arg() runs them by. */
#define MAX_KIND_TESTS	64

static struct kind_test {
	void (*fn)(const struct pt_kind *k);
	const struct pt_kind *k;
} kind_tests[MAX_KIND_TESTS];
static unsigned int nkind_tests;

static void run_kind_test(const void *arg)
{
	const struct kind_test *t = arg;

	t->fn(t->k);
}

void pt_add_kind_test(const struct pt_kind *k, const char *name,
		      void (*fn)(const struct pt_kind *k))
{
	struct kind_test *t;
	char full[64];

	if (nkind_tests == MAX_KIND_TESTS)
		FAIL("more than %d kind tests", MAX_KIND_TESTS);
	t = &kind_tests[nkind_tests++];
	t->fn = fn;
	t->k = k;
	snprintf(full, sizeof(full), "%s%s%s", k->name, name ? "-" : "",
		 name ? name : "");
	pt_add_test_arg(full, run_kind_test, t);
}
