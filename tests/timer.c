// SPDX-License-Identifier: MIT
/* Helpers of the timer tests; see timer.h. */
#include "timer.h"

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
