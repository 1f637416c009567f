// SPDX-License-Identifier: MIT
/*
 * /proc/self/fdinfo of each object kind shows its state after the usual
 * pos, flags, mnt_id and ino lines, as pollfs(7) describes and the
 * module prints it:
 *  - signal: "mask: 0x" and 16 hexadecimal digits, SIGKILL and SIGSTOP
 *    removed, the new mask after a write;
 *  - timer: "clockid:", "ticks:", "settime flags:", "it_value:" and
 *    "it_interval:" as (sec, nsec), for a new, an armed (relative and
 *    absolute, on several clocks), an expired one-shot (before and after
 *    the read), an expired periodic not read (its count so far, the
 *    read then counting the periods missed) and a disarmed timer;
 *  - futex: "state:" unarmed, armed or woken, "fired:", "records:" and
 *    one "wait: addr ... val ... flags ..." line per record, "woken" for
 *    each woken record not yet read;
 *  - aio: "ctx:", then "state: live" with "available: N", or
 *    "state: destroyed" once the context is gone.
 */
#include "lib/aio.h"
#include "lib/futex.h"
#include "lib/signal.h"
#include "lib/timer.h"

#include <stdio.h>

PT_BUDGET(50);

/* The object's lines of fd's fdinfo: everything after the "ino:" line. */
static void object_lines(int fd, char *out, size_t size)
{
	char buf[4096];
	const char *p;

	pt_fdinfo(fd, buf, sizeof(buf));
	if (strncmp(buf, "pos:\t", 5) || !strstr(buf, "\nflags:\t") ||
	    !strstr(buf, "\nmnt_id:\t"))
		FAIL("fdinfo of fd %d does not begin with pos, flags, mnt_id: "
		     "'%s'", fd, buf);
	p = strstr(buf, "\nino:\t");
	if (!p || !(p = strchr(p + 1, '\n')))
		FAIL("fdinfo of fd %d has no ino line: '%s'", fd, buf);
	snprintf(out, size, "%s", p + 1);
}

/* Fails unless the object's lines are exactly `want`. */
#define expect_lines(fd, ...) do {					\
	char got_[4096], want_[4096];					\
	snprintf(want_, sizeof(want_), __VA_ARGS__);			\
	object_lines((fd), got_, sizeof(got_));				\
	if (strcmp(got_, want_))					\
		FAIL("fdinfo of fd %d:\n'%s'\nexpected:\n'%s'", (fd),	\
		     got_, want_);					\
} while (0)

/* The value of line `key` among the object's lines. */
static void line_value(int fd, const char *key, char *val, size_t size)
{
	char lines[4096], pat[64];
	const char *p, *end;

	object_lines(fd, lines, sizeof(lines));
	snprintf(pat, sizeof(pat), "%s: ", key);
	for (p = lines; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, pat, strlen(pat)))
			break;
	if (!p || !*p)
		FAIL("fdinfo of fd %d has no '%s' line: '%s'", fd, pat, lines);
	p += strlen(pat);
	end = strchr(p, '\n');
	snprintf(val, size, "%.*s", end ? (int)(end - p) : (int)strlen(p), p);
}

static long long line_number(int fd, const char *key)
{
	char val[128], *end;
	long long v;

	line_value(fd, key, val, sizeof(val));
	v = strtoll(val, &end, 0);
	if (end == val || *end)
		FAIL("fdinfo of fd %d: %s: '%s'", fd, key, val);
	return v;
}

/* ---- signal ---- */

TEST(signal)
{
	uint64_t mask;
	int fd;

	fd = ps_signal(0, 0);
	expect_lines(fd, "mask: 0x0000000000000000\n");
	CHECK_SYS(close(fd));

	mask = ps_bit(SIGUSR1) | ps_bit(SIGKILL) | ps_bit(SIGSTOP) |
	       ps_bit(SIGRTMIN) | ps_bit(64);
	fd = ps_signal(mask, POLLFS_NONBLOCK);
	expect_lines(fd, "mask: 0x%016llx\n",
		     (unsigned long long)(mask & ~(ps_bit(SIGKILL) |
						   ps_bit(SIGSTOP))));
	CHECK_EQ(mask & ~(ps_bit(SIGKILL) | ps_bit(SIGSTOP)),
		 0x8000000200000200ULL);

	/* a write replaces it */
	mask = ps_bit(SIGHUP) | ps_bit(SIGTERM);
	CHECK_EQ(write(fd, &mask, sizeof(mask)), 8);
	expect_lines(fd, "mask: 0x0000000000004001\n");
	mask = ~0ULL;
	CHECK_EQ(write(fd, &mask, sizeof(mask)), 8);
	expect_lines(fd, "mask: 0xfffffffffffbfeff\n");
	mask = 0;
	CHECK_EQ(write(fd, &mask, sizeof(mask)), 8);
	expect_lines(fd, "mask: 0x0000000000000000\n");
	CHECK_SYS(close(fd));
}

/* ---- timer ---- */

struct timer_info {
	int clockid;
	unsigned long long ticks;
	unsigned int flags;
	int64_t value, interval;
};

/*
 * Parses the five lines of a timer, failing unless they are exactly in
 * the module's format: printed back from the values read, they must give
 * the same text (flags in hexadecimal with 0x, nsec below 10^9).
 */
static struct timer_info timer_info(int fd)
{
	struct timer_info ti;
	char lines[4096], again[4096];
	long long vs, is;
	long vn, in;

	object_lines(fd, lines, sizeof(lines));
	if (sscanf(lines, "clockid: %d ticks: %llu settime flags: %x "
		   "it_value: (%lld, %ld) it_interval: (%lld, %ld)",
		   &ti.clockid, &ti.ticks, &ti.flags, &vs, &vn, &is,
		   &in) != 7)
		FAIL("timer fd %d: fdinfo '%s'", fd, lines);
	snprintf(again, sizeof(again), "clockid: %d\nticks: %llu\n"
		 "settime flags: 0x%x\nit_value: (%lld, %ld)\n"
		 "it_interval: (%lld, %ld)\n", ti.clockid, ti.ticks,
		 ti.flags, vs, vn, is, in);
	if (strcmp(lines, again))
		FAIL("timer fd %d: fdinfo '%s', not in the form '%s'", fd,
		     lines, again);
	if (vs < 0 || vn < 0 || vn >= NSEC_PER_SEC || is < 0 || in < 0 ||
	    in >= NSEC_PER_SEC)
		FAIL("timer fd %d: fdinfo '%s'", fd, lines);
	ti.value = vs * NSEC_PER_SEC + vn;
	ti.interval = is * NSEC_PER_SEC + in;
	return ti;
}

TEST(timer)
{
	struct pollfs_timer_event ev;
	struct timer_info ti;
	int64_t t0, t1;
	int fd;

	/* new: CLOCK_MONOTONIC, disarmed */
	fd = tmr_new(POLLFS_NONBLOCK);
	expect_lines(fd, "clockid: 1\nticks: 0\nsettime flags: 0x0\n"
		     "it_value: (0, 0)\nit_interval: (0, 0)\n");

	/* armed, relative, on CLOCK_REALTIME */
	t0 = pt_mono();
	tmr_arm(fd, CLOCK_REALTIME, 0, MS(5000), MS(2500));
	ti = timer_info(fd);
	t1 = pt_mono();
	CHECK_EQ(ti.clockid, CLOCK_REALTIME);
	CHECK_EQ(ti.ticks, 0);
	CHECK_EQ(ti.flags, 0);
	CHECK_RANGE(ti.value, MS(5000) - (t1 - t0), MS(5000));
	CHECK_EQ(ti.interval, MS(2500));

	/* armed, absolute, on CLOCK_MONOTONIC and CLOCK_BOOTTIME */
	t0 = pt_mono();
	tmr_arm(fd, CLOCK_MONOTONIC, POLLFS_TIMER_ABSTIME, t0 + MS(3000), 0);
	ti = timer_info(fd);
	t1 = pt_mono();
	CHECK_EQ(ti.clockid, CLOCK_MONOTONIC);
	CHECK_EQ(ti.flags, POLLFS_TIMER_ABSTIME);
	CHECK_RANGE(ti.value, MS(3000) - (t1 - t0), MS(3000));
	CHECK_EQ(ti.interval, 0);
	t0 = pt_now(CLOCK_BOOTTIME);
	tmr_arm(fd, CLOCK_BOOTTIME, POLLFS_TIMER_ABSTIME, t0 + MS(4000),
		MS(1500) + 7);
	ti = timer_info(fd);
	t1 = pt_now(CLOCK_BOOTTIME);
	CHECK_EQ(ti.clockid, CLOCK_BOOTTIME);
	CHECK_EQ(ti.ticks, 0);
	CHECK_EQ(ti.flags, POLLFS_TIMER_ABSTIME);
	CHECK_RANGE(ti.value, MS(4000) - (t1 - t0), MS(4000));
	CHECK_EQ(ti.interval, MS(1500) + 7);

	/* an expired one-shot: a tick, no expiry left; read: none */
	tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(10), 0);
	pt_wait_readable(fd, PT_WAIT_MS);
	expect_lines(fd, "clockid: 1\nticks: 1\nsettime flags: 0x0\n"
		     "it_value: (0, 0)\nit_interval: (0, 0)\n");
	tmr_read_event(fd, &ev);
	expect_lines(fd, "clockid: 1\nticks: 0\nsettime flags: 0x0\n"
		     "it_value: (0, 0)\nit_interval: (0, 0)\n");

	/* an expired periodic timer, not read: fdinfo shows its count and
	 * what is left of its period (timerfd's: 1 tick, nothing left, the
	 * timer stopped until read), and the read counts the periods missed.
	 * That fdinfo leaves the timer as it was is timer-fdinfo-readonly's */
	t0 = pt_mono();
	tmr_arm(fd, CLOCK_MONOTONIC, 0, MS(40), MS(40));
	pt_sleep_ms(250);
	ti = timer_info(fd);
	t1 = pt_mono();
	CHECK_RANGE(ti.ticks, 1, (t1 - t0) / MS(40));
	CHECK_RANGE(ti.value, 0, MS(40));
	CHECK_EQ(ti.interval, MS(40));
	CHECK(pt_poll_in(fd, 0));
	tmr_read_event(fd, &ev);
	CHECK(ev.expirations >= ti.ticks);
	CHECK(ev.expirations >= 2);

	/* disarmed */
	tmr_disarm(fd);
	expect_lines(fd, "clockid: 1\nticks: 0\nsettime flags: 0x0\n"
		     "it_value: (0, 0)\nit_interval: (0, 0)\n");
	CHECK_SYS(close(fd));
}

/* ---- futex ---- */

static uint32_t fw[3] __attribute__((aligned(16)));

TEST(futex)
{
	struct pollfs_futex_event evs[3], r[4];
	unsigned long long a0 = (uintptr_t)&fw[0];
	unsigned long long a1 = (uintptr_t)&fw[1];
	unsigned long long a2 = (uintptr_t)&fw[2];
	int fd;

	fd = fx_new(POLLFS_NONBLOCK);
	expect_lines(fd, "state: unarmed\nfired: 0\nwatch: 0\nrecords: 0\n");

	/* armed, then woken, then read */
	fw[0] = 7;
	fx_arm(fd, &fw[0], 7, FX_PRIVATE);
	expect_lines(fd, "state: armed\nfired: 0\nwatch: 0\nrecords: 1\n"
		     "wait: addr %#llx val 7 flags 0x0\n", a0);
	CHECK_EQ(fx_wake(&fw[0], 1, FX_PRIVATE), 1);
	expect_lines(fd, "state: armed\nfired: 1\nwatch: 0\nrecords: 1\n"
		     "wait: addr %#llx val 7 flags 0x0 woken\n", a0);
	fx_expect_rec(fd, &fw[0], 7, FX_PRIVATE);
	expect_lines(fd, "state: unarmed\nfired: 0\nwatch: 0\nrecords: 0\n");

	/* a failed arming leaves it unarmed */
	CHECK_ERR(fx_write1(fd, &fw[0], 8, FX_PRIVATE), EAGAIN);
	expect_lines(fd, "state: unarmed\nfired: 0\nwatch: 0\nrecords: 0\n");

	/* a wait-any of three, one shared, values up to 2^32 - 1 */
	fw[1] = 0;
	fw[2] = UINT32_MAX;
	evs[0] = fx_ev(&fw[0], 7, FX_PRIVATE);
	evs[1] = fx_ev(&fw[1], 0, FX_SHARED);
	evs[2] = fx_ev(&fw[2], UINT32_MAX, FX_PRIVATE);
	fx_armv(fd, evs, 3);
	expect_lines(fd, "state: armed\nfired: 0\nwatch: 0\nrecords: 3\n"
		     "wait: addr %#llx val 7 flags 0x0\n"
		     "wait: addr %#llx val 0 flags 0x1\n"
		     "wait: addr %#llx val 4294967295 flags 0x0\n",
		     a0, a1, a2);
	CHECK_EQ(fx_wake(&fw[2], 1, FX_PRIVATE), 1);
	CHECK_EQ(fx_wake(&fw[1], 1, FX_SHARED), 1);
	expect_lines(fd, "state: armed\nfired: 1\nwatch: 0\nrecords: 3\n"
		     "wait: addr %#llx val 7 flags 0x0\n"
		     "wait: addr %#llx val 0 flags 0x1 woken\n"
		     "wait: addr %#llx val 4294967295 flags 0x0 woken\n",
		     a0, a1, a2);
	/* one record read: disarmed, one woken record left */
	CHECK_EQ(read(fd, r, FX_REC), FX_REC);
	fx_check_rec(&r[0], &fw[1], 0, FX_SHARED);
	expect_lines(fd, "state: woken\nfired: 0\nwatch: 0\nrecords: 3\n"
		     "wait: addr %#llx val 7 flags 0x0\n"
		     "wait: addr %#llx val 0 flags 0x1\n"
		     "wait: addr %#llx val 4294967295 flags 0x0 woken\n",
		     a0, a1, a2);
	CHECK_EQ(fx_wake(&fw[0], 1, FX_PRIVATE), 0);
	CHECK_EQ(read(fd, r, sizeof(r)), FX_REC);
	fx_check_rec(&r[0], &fw[2], UINT32_MAX, FX_PRIVATE);
	expect_lines(fd, "state: unarmed\nfired: 0\nwatch: 0\nrecords: 0\n");

	/* re-armed over a woken, unread wait: the new one alone */
	fx_arm(fd, &fw[0], 7, FX_SHARED);
	CHECK_EQ(fx_wake(&fw[0], 1, FX_SHARED), 1);
	fx_arm(fd, &fw[1], 0, FX_PRIVATE);
	expect_lines(fd, "state: armed\nfired: 0\nwatch: 0\nrecords: 1\n"
		     "wait: addr %#llx val 0 flags 0x0\n", a1);

	/* watched: a read leaves it armed on the value then; disarmed */
	fx_arm(fd, &fw[1], 0, FX_PRIVATE | FX_WATCH);
	expect_lines(fd, "state: armed\nfired: 0\nwatch: 1\nrecords: 1\n"
		     "wait: addr %#llx val 0 flags 0x2\n", a1);
	fw[1] = 5;
	CHECK_EQ(fx_wake(&fw[1], 1, FX_PRIVATE), 1);
	fx_expect_watch(fd, &fw[1], 5, FX_PRIVATE | FX_WATCH);
	expect_lines(fd, "state: armed\nfired: 0\nwatch: 1\nrecords: 1\n"
		     "wait: addr %#llx val 5 flags 0x2\n", a1);
	fx_disarm(fd);
	expect_lines(fd, "state: unarmed\nfired: 0\nwatch: 0\nrecords: 0\n");
	CHECK_SYS(close(fd));
}

/* ---- aio ---- */

TEST(aio)
{
	aio_context_t ctx = ax_setup(8);
	struct io_event done[4];
	struct iocb cb[3], *cbs[3] = { &cb[0], &cb[1], &cb[2] };
	static char buf[3][256];
	int fd, file;

	file = ax_tmpfile("/tmp", 0);
	fd = ax_fd(ctx, POLLFS_NONBLOCK);
	expect_lines(fd, "ctx: %#llx\nstate: live\navailable: 0\n",
		     (unsigned long long)ctx);

	for (int i = 0; i < 3; i++)
		ax_prep_pwrite(&cb[i], file, buf[i], sizeof(buf[i]),
			       i * sizeof(buf[i]), i);
	ax_submit(ctx, 3, cbs);
	pt_wait_readable(fd, PT_WAIT_MS);
	{
		int64_t end = pt_mono() + MS(PT_WAIT_MS);

		/* the three complete, maybe one by one */
		while (line_number(fd, "available") != 3) {
			if (pt_mono() > end)
				FAIL("available: %lld, expected 3",
				     line_number(fd, "available"));
			pt_sleep_ms(1);
		}
	}
	expect_lines(fd, "ctx: %#llx\nstate: live\navailable: 3\n",
		     (unsigned long long)ctx);
	ax_reap(ctx, 2, 2, done, PT_WAIT_MS);
	expect_lines(fd, "ctx: %#llx\nstate: live\navailable: 1\n",
		     (unsigned long long)ctx);
	ax_reap(ctx, 1, 4, done, PT_WAIT_MS);
	expect_lines(fd, "ctx: %#llx\nstate: live\navailable: 0\n",
		     (unsigned long long)ctx);

	ax_destroy(ctx);
	expect_lines(fd, "ctx: %#llx\nstate: destroyed\n",
		     (unsigned long long)ctx);
	CHECK_SYS(close(fd));
	CHECK_SYS(close(file));
}

int main(void)
{
	return pt_run_tests();
}
