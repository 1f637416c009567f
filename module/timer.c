// SPDX-License-Identifier: GPL-2.0
/*
 * The timer object: one high-resolution timer per file.
 *
 * A write of a struct pollfs_timer_spec arms it on any of five clocks, a
 * read returns the expirations counted since the previous read.  As in
 * timerfd, a periodic timer is not re-armed from its callback but when
 * its count is consumed, so a tiny period cannot keep a CPU busy and the
 * overruns of a timer nobody read are counted all at once.
 *
 * POLLFS_TIMER_CANCEL_ON_SET is timerfd's TFD_TIMER_CANCEL_ON_SET: the
 * timer notes the offset of the realtime clock from the monotonic one
 * when armed, and a read that finds the offset changed (the clock was
 * set) fails with ECANCELED.  A kprobe on timerfd_clock_was_set(), which
 * the kernel calls after every discontinuous set, walks the list of such
 * timers: it wakes their pollers and, as timerfd does, makes the cancel
 * stick, so that two sets that bring the offset back where it was still
 * cancel.  The comparison stands in for a probe that missed.
 */

#include <linux/alarmtimer.h>
#include <linux/capability.h>
#include <linux/hrtimer.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/pollfs.h>
#include <linux/rculist.h>
#include <linux/time_namespace.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "core.h"
#include "compat.h"
#include "ksyms.h"

#ifndef CONFIG_TIME_NS
#error "pollfs timers need CONFIG_TIME_NS: absolute times are converted from the caller's time namespace"
#endif

struct pollfs_timer_ctx {
	struct pollfs_object obj;
	wait_queue_head_t wqh;	/* its lock guards everything below */
	union {
		struct hrtimer tmr;
		struct alarm alarm;
	} t;
	ktime_t interval;
	u64 ticks;		/* expirations not yet read */
	ktime_t grid;		/* a ring's restart put off: the expiry to count */
	clockid_t clockid;
	u32 flags;		/* of the last arming, for fdinfo */
	bool expired;		/* fired, and not re-armed since */
	ktime_t moffs;		/* realtime - monotonic, when armed */
	bool clock_set;		/* the probe saw a set since arming */
	struct mutex write_lock;	/* one arming at a time */
	struct list_head cancel_link;	/* on pollfs_timer_cancel_list */
	bool cancel_listed;	/* on it now */
};

/*
 * The CANCEL_ON_SET timers, to wake when the realtime clock is set: an
 * RCU list, as timerfd's, so that the walk over however many timers
 * users armed keeps interrupts off for one timer at a time.
 */
static LIST_HEAD(pollfs_timer_cancel_list);
static DEFINE_SPINLOCK(pollfs_timer_cancel_lock);

static struct pollfs_timer_ctx *to_timer(struct pollfs_object *obj)
{
	return container_of(obj, struct pollfs_timer_ctx, obj);
}

static bool pollfs_timer_cancels(const struct pollfs_timer_ctx *t)
{
	return t->flags & POLLFS_TIMER_CANCEL_ON_SET;
}

/* Was the realtime clock set since arming?  The lock held. */
static bool pollfs_timer_cancelled(const struct pollfs_timer_ctx *t)
{
	lockdep_assert_held(&t->wqh.lock);
	return pollfs_timer_cancels(t) &&
	       (t->clock_set || t->moffs != ktime_mono_to_real(0));
}

/* Wake the pollers of every timer that now cancels. */
static void pollfs_timer_wake_cancelled(void)
{
	struct pollfs_timer_ctx *t;
	unsigned long flags;

	rcu_read_lock();
	list_for_each_entry_rcu(t, &pollfs_timer_cancel_list, cancel_link) {
		spin_lock_irqsave(&t->wqh.lock, flags);
		if (pollfs_timer_cancelled(t)) {
			t->clock_set = true;
			/* Freed a grace period after release, as @t is. */
			if (pollfs_ring_of(&t->obj))
				pollfs_ring_flag_overflow(pollfs_ring_of(&t->obj));
			wake_up_locked_poll(&t->wqh, EPOLLIN);
		}
		spin_unlock_irqrestore(&t->wqh.lock, flags);
	}
	rcu_read_unlock();
}

static void pollfs_timer_clock_work_fn(struct work_struct *work)
{
	pollfs_timer_wake_cancelled();
}

static DECLARE_WORK(pollfs_timer_clock_work, pollfs_timer_clock_work_fn);

/*
 * kprobe pre-handler of timerfd_clock_was_set(), in process context after
 * the clock was set.  A kprobe handler runs with preemption off, where
 * PREEMPT_RT's spinlock_t, which sleeps, may not be taken: there the
 * wake-up is a work item's.  Readiness itself needs no hook (poll and
 * read compare the clock's offset), only the sleepers' wake-up.
 */
static int pollfs_timer_clock_was_set(struct kprobe *kp, struct pt_regs *regs)
{
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		schedule_work(&pollfs_timer_clock_work);
	else
		pollfs_timer_wake_cancelled();
	return 0;
}

static struct kprobe pollfs_timer_kprobe = {
	.symbol_name	= "timerfd_clock_was_set",
	.pre_handler	= pollfs_timer_clock_was_set,
};

/* In when the first CANCEL_ON_SET timer is armed, until unload. */
static struct pollfs_hook pollfs_timer_clock_hook =
	POLLFS_HOOK_INIT(pollfs_timer_clock_hook, "timerfd_clock_was_set",
			 .kprobe = &pollfs_timer_kprobe);

/* On the list exactly while armed with CANCEL_ON_SET.  Write lock held. */
static void pollfs_timer_set_cancel(struct pollfs_timer_ctx *t, bool on)
{
	lockdep_assert_held(&t->write_lock);
	if (on == t->cancel_listed)
		return;
	spin_lock_irq(&pollfs_timer_cancel_lock);
	if (on)
		list_add_rcu(&t->cancel_link, &pollfs_timer_cancel_list);
	else
		list_del_rcu(&t->cancel_link);
	spin_unlock_irq(&pollfs_timer_cancel_lock);
	t->cancel_listed = on;
}

static bool pollfs_clock_is_alarm(clockid_t clockid)
{
	return clockid == CLOCK_REALTIME_ALARM ||
	       clockid == CLOCK_BOOTTIME_ALARM;
}

static bool pollfs_clock_valid(s32 clockid)
{
	switch (clockid) {
	case CLOCK_REALTIME:
	case CLOCK_MONOTONIC:
	case CLOCK_BOOTTIME:
	case CLOCK_REALTIME_ALARM:
	case CLOCK_BOOTTIME_ALARM:
		return true;
	default:
		return false;
	}
}

/* Checked on the 64-bit fields, before they are narrowed. */
static bool pollfs_timespec_valid(const struct __kernel_timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 &&
	       ts->tv_nsec < NSEC_PER_SEC;
}

static ktime_t pollfs_timespec_to_ktime(const struct __kernel_timespec *ts)
{
	struct timespec64 ts64 = {
		.tv_sec = ts->tv_sec,
		.tv_nsec = ts->tv_nsec,
	};

	return timespec64_to_ktime(ts64);
}

static void pollfs_ktime_to_timespec(ktime_t kt, struct __kernel_timespec *ts)
{
	struct timespec64 ts64 = ktime_to_timespec64(kt);

	ts->tv_sec = ts64.tv_sec;
	ts->tv_nsec = ts64.tv_nsec;
}

static struct hrtimer *pollfs_timer_hrtimer(struct pollfs_timer_ctx *t)
{
	return pollfs_clock_is_alarm(t->clockid) ? &t->t.alarm.timer :
						   &t->t.tmr;
}

/*
 * A ring-fed periodic timer restarts from its expiry, but never sooner
 * than this after it: a shorter period's expirations in between are
 * counted in its next record.  The periods stay where the arming put
 * them (@grid): a restart put off by the floor does not move the ones
 * after it.
 */
#define POLLFS_TIMER_RING_MIN	(50 * NSEC_PER_USEC)

/*
 * And a CPU restarts at most this many timers a second from their
 * expiries, whoever armed them: the interrupt time no user pays for is
 * bounded (a timerfd, restarted by the read that consumes it, costs its
 * reader as much as the interrupt).  Past it, an expiry waits in the
 * object, flagged, and the read(2) that consumes it restarts the timer,
 * as without a ring.
 */
#define POLLFS_TIMER_RING_RESTARTS	20000

struct pollfs_timer_budget {
	unsigned long second;	/* jiffies / HZ of the count below */
	unsigned int restarts;
};

static DEFINE_PER_CPU(struct pollfs_timer_budget, pollfs_timer_budget);

/*
 * One restart of this CPU's budget, with interrupts off (the timer's
 * lock), or on PREEMPT_RT with migration off, where a preempted count
 * may be off by one.
 */
static bool pollfs_timer_ring_budget(void)
{
	struct pollfs_timer_budget *budget = this_cpu_ptr(&pollfs_timer_budget);
	unsigned long second = jiffies / HZ;

	if (budget->second != second) {
		budget->second = second;
		budget->restarts = 0;
	}
	if (budget->restarts >= POLLFS_TIMER_RING_RESTARTS)
		return false;
	budget->restarts++;
	return true;
}

/*
 * An expiry into the ring, the lock held: its record counts the
 * expirations since the previous record (the periods from the first one
 * not counted yet to now), and a periodic timer starts its next period,
 * through *@restart for an hrtimer, whose callback this is.  False, with nothing changed, when the expiry is the
 * object's to keep: the ring did not take it, or the object holds
 * expirations or a clock set already, which go first.
 */
static bool pollfs_timer_ring_fire(struct pollfs_timer_ctx *t,
				   struct pollfs_ring *ring, bool *restart)
{
	struct hrtimer *tmr = pollfs_timer_hrtimer(t);
	bool alarm = pollfs_clock_is_alarm(t->clockid);
	ktime_t interval = t->interval, expires, now, next = 0, fire = 0;
	struct pollfs_timer_event ev;
	u64 missed = 0;

	lockdep_assert_held(&t->wqh.lock);
	if (t->ticks || pollfs_timer_cancelled(t) ||
	    (interval && !pollfs_timer_ring_budget())) {
		pollfs_ring_flag_overflow(ring);
		return false;
	}

	expires = alarm ? t->t.alarm.node.expires : hrtimer_get_expires(tmr);
	now = expires - (alarm ? alarm_expires_remaining(&t->t.alarm) :
				 hrtimer_expires_remaining(tmr));
	if (t->grid)
		expires = t->grid;
	if (interval) {
		/* As the kernel's forward, from the expiry to count. */
		if (now > expires)
			missed = ktime_divns(now - expires, interval);
		next = ktime_add_safe(expires, (missed + 1) * interval);
		fire = max_t(ktime_t, next, now + POLLFS_TIMER_RING_MIN);
	}
	ev.expirations = 1 + missed;
	pollfs_ktime_to_timespec(interval ? next - now : 0, &ev.remaining);
	pollfs_ktime_to_timespec(interval, &ev.interval);
	if (!pollfs_ring_push(ring, &ev))
		return false;

	t->grid = fire != next ? next : 0;
	if (!interval)
		return true;
	if (!alarm) {
		t->expired = false;
		hrtimer_set_expires(tmr, fire);
		*restart = true;
		return true;
	}
	/*
	 * An alarm not started because @fire passed already (the floor's
	 * 50 us went by since it was computed) stops, and its expiry at
	 * @next waits in the object for the read(2) that restarts it.
	 */
	if (pollfs_alarm_start(&t->t.alarm, fire, false)) {
		t->expired = false;
	} else {
		t->t.alarm.node.expires = next;
		t->grid = 0;
		t->ticks += 1;
		pollfs_ring_flag_overflow(ring);
	}
	return true;
}

/*
 * An expiry, the lock held: into the ring if there is one that takes it,
 * else counted in the object for read(2), which restarts a periodic
 * timer.  True when the hrtimer whose callback this is restarts.
 */
static bool pollfs_timer_fire_locked(struct pollfs_timer_ctx *t)
{
	struct pollfs_ring *ring = pollfs_ring_of(&t->obj);
	bool restart = false;

	lockdep_assert_held(&t->wqh.lock);
	t->expired = true;
	if (!ring || !pollfs_timer_ring_fire(t, ring, &restart)) {
		/*
		 * The read's restart counts from the expiry this one stands
		 * for, not from the later one the floor fired it at.
		 */
		if (t->grid) {
			if (pollfs_clock_is_alarm(t->clockid))
				t->t.alarm.node.expires = t->grid;
			else
				hrtimer_set_expires(&t->t.tmr, t->grid);
			t->grid = 0;
		}
		t->ticks += 1;
	}
	wake_up_locked_poll(&t->wqh, EPOLLIN);
	return restart;
}

static bool pollfs_timer_fire(struct pollfs_timer_ctx *t)
{
	unsigned long flags;
	bool restart;

	spin_lock_irqsave(&t->wqh.lock, flags);
	restart = pollfs_timer_fire_locked(t);
	spin_unlock_irqrestore(&t->wqh.lock, flags);
	return restart;
}

static enum hrtimer_restart pollfs_hrtimer_fired(struct hrtimer *tmr)
{
	return pollfs_timer_fire(container_of(tmr, struct pollfs_timer_ctx,
					      t.tmr)) ?
	       HRTIMER_RESTART : HRTIMER_NORESTART;
}

#ifdef POLLFS_ALARM_VOID_FN
static void pollfs_alarm_fired(struct alarm *alarm, ktime_t now)
{
	pollfs_timer_fire(container_of(alarm, struct pollfs_timer_ctx, t.alarm));
}
#else
static enum alarmtimer_restart pollfs_alarm_fired(struct alarm *alarm,
						  ktime_t now)
{
	pollfs_timer_fire(container_of(alarm, struct pollfs_timer_ctx, t.alarm));
	return ALARMTIMER_NORESTART;
}
#endif

/*
 * Start an alarm, the lock held.  One that has expired already may not
 * be armed (its callback would take the lock we hold): it fires here
 * instead, as timerfd does.
 */
static void pollfs_timer_alarm_start(struct pollfs_timer_ctx *t,
				     ktime_t expires, bool relative)
{
	lockdep_assert_held(&t->wqh.lock);
	if (!pollfs_alarm_start(&t->t.alarm, expires, relative))
		pollfs_timer_fire_locked(t);
}

/*
 * Called with the lock held: start the next period of a periodic timer
 * that fired, and return the periods it missed besides the one counted.
 * When the clock was set back behind that expiry, the kernel's forward
 * finds nothing to count and leaves the expiry where it was, which would
 * fire it twice: the next expiry is then one period after the one that
 * fired.  An alarm found expired again at its start fires at once (see
 * pollfs_timer_alarm_start()), counted in @t->ticks for the next read.
 */
static u64 pollfs_timer_rearm(struct pollfs_timer_ctx *t)
{
	struct alarm *alarm = &t->t.alarm;
	struct hrtimer *tmr = &t->t.tmr;
	u64 periods;

	lockdep_assert_held(&t->wqh.lock);
	if (!t->expired || !t->interval)
		return 0;
	t->expired = false;
	if (pollfs_clock_is_alarm(t->clockid)) {
		periods = alarm_forward_now(alarm, t->interval);
		if (!periods)
			alarm->node.expires = ktime_add_safe(alarm->node.expires,
							     t->interval);
		pollfs_timer_alarm_start(t, alarm->node.expires, false);
	} else {
		periods = hrtimer_forward_now(tmr, t->interval);
		if (!periods)
			hrtimer_add_expires(tmr, t->interval);
		hrtimer_restart(tmr);
	}
	return periods ? periods - 1 : 0;
}

/* Called with the lock held, after pollfs_timer_rearm(). */
static ktime_t pollfs_timer_remaining(struct pollfs_timer_ctx *t)
{
	ktime_t remaining;

	lockdep_assert_held(&t->wqh.lock);
	if (!hrtimer_is_queued(pollfs_timer_hrtimer(t)))
		return 0;
	if (pollfs_clock_is_alarm(t->clockid))
		remaining = alarm_expires_remaining(&t->t.alarm);
	else
		remaining = hrtimer_expires_remaining_adjusted(&t->t.tmr);
	return remaining < 0 ? 0 : remaining;
}

/*
 * What pollfs_timer_rearm() would count and where it would put the next
 * expiry, without doing it: for TIMER_GET and fdinfo, which only look,
 * as timerfd's do.  @missed: the periods missed besides the one counted
 * in @t->ticks; @remaining: to the next expiry.  The lock held.
 */
static void pollfs_timer_peek(struct pollfs_timer_ctx *t, u64 *missed,
			      ktime_t *remaining)
{
	ktime_t interval = t->interval, delta;
	u64 periods;

	lockdep_assert_held(&t->wqh.lock);
	if (!t->expired || !interval) {
		*missed = 0;
		*remaining = pollfs_timer_remaining(t);
		return;
	}
	if (pollfs_clock_is_alarm(t->clockid)) {
		delta = -alarm_expires_remaining(&t->t.alarm);
	} else {
		delta = -hrtimer_expires_remaining(&t->t.tmr);
		interval = max_t(ktime_t, interval, hrtimer_resolution);
	}
	/*
	 * As the kernel's forward: past the expiry, whole periods missed;
	 * before it (the clock set back), one period after it, saturated as
	 * the re-arm's addition is.
	 */
	if (delta < 0) {
		*missed = 0;
		*remaining = ktime_add_safe(interval, -delta);
		return;
	}
	periods = ktime_divns(delta, interval);
	*missed = periods;
	*remaining = periods * interval + interval - delta;
}

static ktime_t pollfs_timer_to_host(clockid_t clockid, ktime_t tim)
{
	return pollfs_call(do_timens_ktime_to_host)(clockid, tim,
			&current->nsproxy->time_ns->offsets);
}

/* Called with the lock held and the timer inactive. */
static void pollfs_timer_program(struct pollfs_timer_ctx *t,
				 const struct pollfs_timer_spec *spec)
{
	bool abs = spec->flags & POLLFS_TIMER_ABSTIME;
	enum hrtimer_mode mode = abs ? HRTIMER_MODE_ABS : HRTIMER_MODE_REL;
	ktime_t expires = pollfs_timespec_to_ktime(&spec->value);

	lockdep_assert_held(&t->wqh.lock);
	t->clockid = spec->clockid;
	t->flags = spec->flags;
	t->interval = pollfs_timespec_to_ktime(&spec->interval);
	t->ticks = 0;
	t->grid = 0;
	t->expired = false;
	t->moffs = ktime_mono_to_real(0);
	t->clock_set = false;
	if (pollfs_ring_of(&t->obj))
		pollfs_ring_drained(pollfs_ring_of(&t->obj));

	if (pollfs_clock_is_alarm(t->clockid))
		alarm_init(&t->t.alarm, t->clockid == CLOCK_REALTIME_ALARM ?
			   ALARM_REALTIME : ALARM_BOOTTIME, pollfs_alarm_fired);
	else
		pollfs_hrtimer_setup(&t->t.tmr, pollfs_hrtimer_fired, t->clockid,
				     mode);
	if (!expires)
		return;

	if (abs)
		expires = pollfs_timer_to_host(t->clockid, expires);
	if (pollfs_clock_is_alarm(t->clockid))
		pollfs_timer_alarm_start(t, expires, !abs);
	else
		hrtimer_start(&t->t.tmr, expires, mode);
}

static int pollfs_timer_apply(struct pollfs_object *obj, const void *rec)
{
	const struct pollfs_timer_spec *spec = rec;
	struct pollfs_timer_ctx *t = to_timer(obj);
	bool cancels = spec->flags & POLLFS_TIMER_CANCEL_ON_SET;
	int cancelled, err;

	if ((spec->flags & ~(POLLFS_TIMER_ABSTIME |
			     POLLFS_TIMER_CANCEL_ON_SET)) ||
	    !pollfs_clock_valid(spec->clockid) ||
	    !pollfs_timespec_valid(&spec->value) ||
	    !pollfs_timespec_valid(&spec->interval))
		return -EINVAL;
	if (cancels && (!(spec->flags & POLLFS_TIMER_ABSTIME) ||
			(spec->clockid != CLOCK_REALTIME &&
			 spec->clockid != CLOCK_REALTIME_ALARM)))
		return -EINVAL;
	if (pollfs_clock_is_alarm(spec->clockid) && !capable(CAP_WAKE_ALARM))
		return -EPERM;
	if (cancels) {
		err = pollfs_hook_install(&pollfs_timer_clock_hook);
		if (err)
			return err;
	}

	/* The cancel list and the armed flags change together. */
	mutex_lock(&t->write_lock);
	pollfs_timer_set_cancel(t, cancels);

	/*
	 * The old timer must be inactive before it is set up anew, maybe on
	 * another clock; its callback takes the lock, so wait for a running
	 * one with the lock dropped.
	 */
	for (;;) {
		spin_lock_irq(&t->wqh.lock);
		if (pollfs_clock_is_alarm(t->clockid))
			cancelled = alarm_try_to_cancel(&t->t.alarm);
		else
			cancelled = hrtimer_try_to_cancel(&t->t.tmr);
		if (cancelled >= 0)
			break;
		spin_unlock_irq(&t->wqh.lock);
		pollfs_hrtimer_cancel_wait(pollfs_timer_hrtimer(t));
	}
	pollfs_timer_program(t, spec);
	spin_unlock_irq(&t->wqh.lock);
	mutex_unlock(&t->write_lock);
	return 0;
}

/*
 * Each record is copied in before the write lock is taken: a write that
 * faults on its buffer (a page its writer controls) holds nothing
 * another writer of the object waits for.
 */
static ssize_t pollfs_timer_write(struct pollfs_object *obj,
				  struct iov_iter *from, size_t nrec)
{
	return pollfs_write_each(obj, from, nrec,
				 sizeof(struct pollfs_timer_spec),
				 pollfs_timer_apply);
}

static int pollfs_timer_pop(struct pollfs_object *obj, void *rec, bool nowait)
{
	struct pollfs_timer_event *ev = rec;
	struct pollfs_timer_ctx *t = to_timer(obj);
	struct pollfs_ring *ring = pollfs_ring_of(obj);
	ktime_t remaining, interval;

	spin_lock_irq(&t->wqh.lock);
	/* Once per set of the clock; the expirations wait for a next read. */
	if (pollfs_timer_cancelled(t)) {
		t->moffs = ktime_mono_to_real(0);
		t->clock_set = false;
		if (ring && !t->ticks)
			pollfs_ring_drained(ring);
		spin_unlock_irq(&t->wqh.lock);
		return -ECANCELED;
	}
	if (!t->ticks) {
		spin_unlock_irq(&t->wqh.lock);
		return -EAGAIN;
	}
	ev->expirations = t->ticks;
	t->ticks = 0;
	/* Restarted, it feeds the ring again. */
	if (ring)
		pollfs_ring_drained(ring);
	ev->expirations += pollfs_timer_rearm(t);
	remaining = pollfs_timer_remaining(t);
	interval = t->interval;
	spin_unlock_irq(&t->wqh.lock);

	pollfs_ktime_to_timespec(remaining, &ev->remaining);
	pollfs_ktime_to_timespec(interval, &ev->interval);
	return 1;
}

static __poll_t pollfs_timer_poll(struct pollfs_object *obj)
{
	struct pollfs_timer_ctx *t = to_timer(obj);
	__poll_t events;

	spin_lock_irq(&t->wqh.lock);
	events = t->ticks || pollfs_timer_cancelled(t) ? EPOLLIN : 0;
	spin_unlock_irq(&t->wqh.lock);
	return events;
}

/* POLLFS_IOC_TIMER_GET: timerfd_gettime(), plus the count not yet read. */
static long pollfs_timer_ioctl(struct pollfs_object *obj, unsigned int cmd,
			       void __user *arg)
{
	struct pollfs_timer_ctx *t = to_timer(obj);
	struct pollfs_timer_event ev;
	ktime_t remaining, interval;
	u64 missed;

	if (cmd != POLLFS_IOC_TIMER_GET)
		return -ENOTTY;

	spin_lock_irq(&t->wqh.lock);
	pollfs_timer_peek(t, &missed, &remaining);
	ev.expirations = t->ticks + missed;
	interval = t->interval;
	spin_unlock_irq(&t->wqh.lock);

	pollfs_ktime_to_timespec(remaining, &ev.remaining);
	pollfs_ktime_to_timespec(interval, &ev.interval);
	if (copy_to_user(arg, &ev, sizeof(ev)))
		return -EFAULT;
	return 0;
}

static wait_queue_head_t *pollfs_timer_waitq(struct pollfs_object *obj)
{
	return &to_timer(obj)->wqh;
}

static void pollfs_timer_show_fdinfo(struct seq_file *m,
				     struct pollfs_object *obj)
{
	struct pollfs_timer_ctx *t = to_timer(obj);
	struct timespec64 value, interval;
	ktime_t remaining;
	clockid_t clockid;
	u64 ticks, missed;
	u32 flags;

	spin_lock_irq(&t->wqh.lock);
	pollfs_timer_peek(t, &missed, &remaining);
	value = ktime_to_timespec64(remaining);
	interval = ktime_to_timespec64(t->interval);
	clockid = t->clockid;
	ticks = t->ticks + missed;
	flags = t->flags;
	spin_unlock_irq(&t->wqh.lock);

	seq_printf(m, "clockid: %d\nticks: %llu\nsettime flags: %#x\n"
		   "it_value: (%lld, %ld)\nit_interval: (%lld, %ld)\n",
		   clockid, ticks, flags,
		   (long long)value.tv_sec, value.tv_nsec,
		   (long long)interval.tv_sec, interval.tv_nsec);
}

/*
 * A clock-set walk may still be looking at it, if it ever was on the
 * CANCEL_ON_SET list: the core frees it a grace period later (free_rcu),
 * which, as timerfd frees its context, is off the closing task's path.
 */
static void pollfs_timer_release(struct pollfs_object *obj)
{
	struct pollfs_timer_ctx *t = to_timer(obj);

	mutex_lock(&t->write_lock);
	pollfs_timer_set_cancel(t, false);
	mutex_unlock(&t->write_lock);
	if (pollfs_clock_is_alarm(t->clockid))
		alarm_cancel(&t->t.alarm);
	else
		hrtimer_cancel(&t->t.tmr);
	mutex_destroy(&t->write_lock);
}

static int pollfs_timer_setup(struct pollfs_object *obj,
				     const void *arg)
{
	struct pollfs_timer_ctx *t = to_timer(obj);

	init_waitqueue_head(&t->wqh);
	mutex_init(&t->write_lock);
	t->clockid = CLOCK_MONOTONIC;
	pollfs_hrtimer_setup(&t->t.tmr, pollfs_hrtimer_fired, t->clockid,
			     HRTIMER_MODE_ABS);
	return 0;
}

static void pollfs_timer_exit(void)
{
	pollfs_hook_remove(&pollfs_timer_clock_hook);
	flush_work(&pollfs_timer_clock_work);
}

static_assert(sizeof(struct pollfs_timer_spec) == 40);
static_assert(sizeof(struct pollfs_timer_event) == 40);

const struct pollfs_kind pollfs_timer_kind = {
	.name		= "[timer]",
	POLLFS_OBJECT(struct pollfs_timer_ctx),
	POLLFS_OPEN(struct pollfs_open),
	.setup		= pollfs_timer_setup,
	.exit		= pollfs_timer_exit,
	.read_size	= sizeof(struct pollfs_timer_event),
	/*
	 * One record holds every expiration: a read must not pick up a
	 * second one that a short period fired while it copied the first.
	 */
	.read_max	= 1,
	.write_size	= sizeof(struct pollfs_timer_spec),
	.read		= pollfs_timer_pop,
	.write		= pollfs_timer_write,
	.poll		= pollfs_timer_poll,
	.waitq		= pollfs_timer_waitq,
	.ioctl		= pollfs_timer_ioctl,
	.show_fdinfo	= pollfs_timer_show_fdinfo,
	.release	= pollfs_timer_release,
	.free_rcu	= true,
	.ring		= true,
};
