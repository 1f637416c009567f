// SPDX-License-Identifier: MIT
/* Helpers of the timer tests; see timer.h. */
#include "timer.h"

#include <sys/timerfd.h>

int tmr_try(unsigned int flags)
{
	struct pollfs_open op = { .flags = flags, .reserved = 0 };
	int dev, fd, e;

	dev = open("/dev/pollfs", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -1;
	fd = ioctl(dev, POLLFS_IOC_TIMER, &op);
	e = errno;
	close(dev);
	errno = e;
	return fd;
}

int tmr_new_at(const char *file, int line, unsigned int flags)
{
	int fd = tmr_try(flags);

	if (fd < 0)
		pt_fail_at(file, line,
			   "creating a timer (flags %#x): errno %d (%s)",
			   flags, errno, strerror(errno));
	return fd;
}

struct pollfs_timer_spec tmr_spec(clockid_t clk, unsigned int flags,
				  int64_t value_ns, int64_t interval_ns)
{
	struct pollfs_timer_spec s;

	memset(&s, 0, sizeof(s));
	s.clockid = clk;
	s.flags = flags;
	s.value = pt_ns_ts(value_ns);
	s.interval = pt_ns_ts(interval_ns);
	return s;
}

ssize_t tmr_set(int fd, clockid_t clk, unsigned int flags,
		int64_t value_ns, int64_t interval_ns)
{
	struct pollfs_timer_spec s = tmr_spec(clk, flags, value_ns,
					      interval_ns);

	return write(fd, &s, sizeof(s));
}

void tmr_arm_at(const char *file, int line, int fd, clockid_t clk,
		unsigned int flags, int64_t value_ns, int64_t interval_ns)
{
	ssize_t r = tmr_set(fd, clk, flags, value_ns, interval_ns);

	if (r != TMR_SPEC_SIZE)
		pt_fail_at(file, line,
			   "arming timer fd %d (%s, flags %#x, value %lld ns, "
			   "interval %lld ns): write returned %zd, errno %d (%s)",
			   fd, pt_clock_name(clk), flags, (long long)value_ns,
			   (long long)interval_ns, r, errno, strerror(errno));
}

void tmr_read_event_at(const char *file, int line, int fd,
		       struct pollfs_timer_event *ev)
{
	ssize_t r;

	memset(ev, 0, sizeof(*ev));
	do
		r = read(fd, ev, sizeof(*ev));
	while (r < 0 && errno == EINTR);
	if (r != TMR_EVENT_SIZE)
		pt_fail_at(file, line,
			   "read(timer fd %d, 40): returned %zd, errno %d (%s)",
			   fd, r, errno, strerror(errno));
}

void tmr_check_oneshot_at(const char *file, int line,
			  const struct pollfs_timer_event *ev)
{
	if (ev->expirations != 1 || ev->remaining.tv_sec ||
	    ev->remaining.tv_nsec || ev->interval.tv_sec ||
	    ev->interval.tv_nsec)
		pt_fail_at(file, line,
			   "one-shot event: expirations %llu remaining "
			   "%lld.%09lld interval %lld.%09lld, expected 1, 0, 0",
			   (unsigned long long)ev->expirations,
			   (long long)ev->remaining.tv_sec,
			   (long long)ev->remaining.tv_nsec,
			   (long long)ev->interval.tv_sec,
			   (long long)ev->interval.tv_nsec);
}

int tmr_get_try(int fd, struct pollfs_timer_event *ev)
{
	return ioctl(fd, POLLFS_IOC_TIMER_GET, ev);
}

static bool ts_valid(const struct __kernel_timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 &&
	       ts->tv_nsec < NSEC_PER_SEC;
}

void tmr_get_at(const char *file, int line, int fd,
		struct pollfs_timer_event *ev)
{
	int r;

	memset(ev, 0xa5, sizeof(*ev));
	r = tmr_get_try(fd, ev);
	if (r != 0)
		pt_fail_at(file, line, "ioctl(timer fd %d, POLLFS_IOC_TIMER_GET): "
			   "returned %d, errno %d (%s)", fd, r, errno,
			   strerror(errno));
	if (!ts_valid(&ev->remaining) || !ts_valid(&ev->interval))
		pt_fail_at(file, line, "POLLFS_IOC_TIMER_GET on fd %d: "
			   "expirations %llu remaining %lld.%09lld interval "
			   "%lld.%09lld: not valid timespecs", fd,
			   (unsigned long long)ev->expirations,
			   (long long)ev->remaining.tv_sec,
			   (long long)ev->remaining.tv_nsec,
			   (long long)ev->interval.tv_sec,
			   (long long)ev->interval.tv_nsec);
}

static int64_t real_saved, mono_saved;
static volatile sig_atomic_t real_is_saved;

static int64_t raw_now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

void tmr_real_save(void)
{
	mono_saved = raw_now(CLOCK_MONOTONIC);
	real_saved = raw_now(CLOCK_REALTIME);
	real_is_saved = 1;
	pt_on_fail(tmr_real_restore);
}

void tmr_real_restore(void)
{
	int64_t ns;
	struct timespec ts;
	int e = errno;

	if (!real_is_saved)
		return;
	ns = real_saved + (raw_now(CLOCK_MONOTONIC) - mono_saved);
	ts.tv_sec = ns / NSEC_PER_SEC;
	ts.tv_nsec = ns % NSEC_PER_SEC;
	if (clock_settime(CLOCK_REALTIME, &ts))
		pt_diag("cannot restore CLOCK_REALTIME: %s", strerror(errno));
	errno = e;
}

void tmr_real_step_at(const char *file, int line, int64_t delta)
{
	int64_t ns = raw_now(CLOCK_REALTIME) + delta;
	struct timespec ts = { ns / NSEC_PER_SEC, ns % NSEC_PER_SEC };

	if (clock_settime(CLOCK_REALTIME, &ts))
		pt_fail_at(file, line, "clock_settime(CLOCK_REALTIME, %+lld ns): "
			   "%s", (long long)delta, strerror(errno));
}

bool tmr_have_alarm(void)
{
	int fd = timerfd_create(CLOCK_REALTIME_ALARM, TFD_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}
