// SPDX-License-Identifier: MIT
/*
 * The pollfs objects, created by ioctls on /dev/pollfs.
 *
 * Version 1.1 made the return values one rule (pollfs.h): reads give a
 * record count, arms 1 when no wait is needed.  The three functions
 * whose results changed keep their 1.0 behaviour, under their 1.0
 * symbol version, for programs linked against libpollfs 1.0.
 *
 * The library keeps one descriptor of /dev/pollfs open, close-on-exec,
 * from the first object it creates: opening the device for each object
 * would cost two more syscalls, and each last close would tear down the
 * module's internal mount.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "pollfs.h"

static int device_fd = -1;

static int open_device_once(void)
{
	int fd = __atomic_load_n(&device_fd, __ATOMIC_ACQUIRE);
	int none = -1;

	if (fd >= 0)
		return fd;
	fd = open("/dev/pollfs", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (!__atomic_compare_exchange_n(&device_fd, &none, fd, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		close(fd);
		fd = none;
	}
	return fd;
}

static int create_object(unsigned long cmd, void *arg)
{
	int dev = open_device_once();

	return dev < 0 ? -1 : ioctl(dev, cmd, arg);
}

/* Whole records or an error: a short transfer means a bad size. */
static ssize_t whole_records(ssize_t bytes, size_t size)
{
	if (bytes < 0)
		return -1;
	if (bytes % size) {
		errno = EIO;
		return -1;
	}
	return bytes / size;
}

static uint64_t sigset_to_mask(const sigset_t *set)
{
	uint64_t mask = 0;
	int sig;

	for (sig = 1; sig <= 64; sig++)
		if (sigismember(set, sig) == 1)
			mask |= 1ULL << (sig - 1);
	return mask;
}

int pollfs_signal(const sigset_t *mask, int flags)
{
	struct pollfs_signal_open args = {
		.mask = sigset_to_mask(mask),
		.flags = flags,
	};

	return create_object(POLLFS_IOC_SIGNAL, &args);
}

int pollfs_signal_setmask(int fd, const sigset_t *mask)
{
	uint64_t bits = sigset_to_mask(mask);

	return write(fd, &bits, sizeof(bits)) < 0 ? -1 : 0;
}

ssize_t pollfs_signal_read(int fd, struct pollfs_siginfo *info, size_t n)
{
	return whole_records(read(fd, info, n * sizeof(*info)),
			     sizeof(*info));
}

int pollfs_timer(int flags)
{
	struct pollfs_open args = { .flags = flags };

	return create_object(POLLFS_IOC_TIMER, &args);
}

int pollfs_timer_arm(int fd, clockid_t clockid, int flags,
		     const struct itimerspec *its)
{
	struct pollfs_timer_spec spec = {
		.clockid = clockid,
		.flags = flags,
		.value = {
			.tv_sec = its->it_value.tv_sec,
			.tv_nsec = its->it_value.tv_nsec,
		},
		.interval = {
			.tv_sec = its->it_interval.tv_sec,
			.tv_nsec = its->it_interval.tv_nsec,
		},
	};

	return write(fd, &spec, sizeof(spec)) < 0 ? -1 : 0;
}

/*
 * In the shared library (-DPOLLFS_SHARED), a function whose results
 * changed in 1.1 is NAME_1_1, exported as NAME@@LIBPOLLFS_1.1, the
 * version a program links against now, and NAME_1_0, the 1.0 results,
 * as NAME@LIBPOLLFS_1.0 for programs linked before.  The static library
 * has NAME alone.
 */
#ifdef POLLFS_SHARED
#define POLLFS_1_1(name) \
	__attribute__((symver(#name "@@LIBPOLLFS_1.1"))) name##_1_1
#define POLLFS_1_0(name) \
	__attribute__((symver(#name "@LIBPOLLFS_1.0"))) name##_1_0
#else
#define POLLFS_1_1(name) name
#endif

int POLLFS_1_1(pollfs_timer_read)(int fd, struct pollfs_timer_event *event)
{
	return whole_records(read(fd, event, sizeof(*event)),
			     sizeof(*event));
}

int pollfs_timer_get(int fd, struct pollfs_timer_event *state)
{
	return ioctl(fd, POLLFS_IOC_TIMER_GET, state) < 0 ? -1 : 0;
}

int pollfs_futex(int flags)
{
	struct pollfs_open args = { .flags = flags };

	return create_object(POLLFS_IOC_FUTEX, &args);
}

int POLLFS_1_1(pollfs_futex_armv)(int fd,
				  const struct pollfs_futex_event *events,
				  unsigned int n)
{
	if (write(fd, events, n * sizeof(*events)) >= 0)
		return 0;
	return errno == EAGAIN ? 1 : -1;
}

static struct pollfs_futex_event futex_event(const uint32_t *addr,
					     uint32_t val, int flags)
{
	struct pollfs_futex_event event = {
		.addr = (uintptr_t)addr,
		.val = val,
		.flags = flags,
	};

	return event;
}

int POLLFS_1_1(pollfs_futex_arm)(int fd, const uint32_t *addr, uint32_t val,
				 int flags)
{
	struct pollfs_futex_event event = futex_event(addr, val, flags);

	return pollfs_futex_armv(fd, &event, 1);
}

int pollfs_futex_watch(int fd, const uint32_t *addr, uint32_t val, int flags)
{
	return pollfs_futex_arm(fd, addr, val, flags | POLLFS_FUTEX_WATCH);
}

int pollfs_futex_disarm(int fd)
{
	static const struct pollfs_futex_event disarm;

	return write(fd, &disarm, sizeof(disarm)) < 0 ? -1 : 0;
}

ssize_t pollfs_futex_read(int fd, struct pollfs_futex_event *events,
			  size_t n)
{
	return whole_records(read(fd, events, n * sizeof(*events)),
			     sizeof(*events));
}

int pollfs_aio(aio_context_t ctx, int flags)
{
	struct pollfs_aio_open args = {
		.ctx = ctx,
		.flags = flags,
	};

	return create_object(POLLFS_IOC_AIO, &args);
}

int pollfs_aio_read(int fd, struct pollfs_aio_event *event)
{
	return whole_records(read(fd, event, sizeof(*event)),
			     sizeof(*event));
}

#ifdef POLLFS_SHARED
/* The 1.0 results: 0 from a timer read, -1 with EAGAIN from an arm. */
int POLLFS_1_0(pollfs_timer_read)(int fd, struct pollfs_timer_event *event)
{
	return pollfs_timer_read(fd, event) < 0 ? -1 : 0;
}

int POLLFS_1_0(pollfs_futex_armv)(int fd,
				  const struct pollfs_futex_event *events,
				  unsigned int n)
{
	return write(fd, events, n * sizeof(*events)) < 0 ? -1 : 0;
}

int POLLFS_1_0(pollfs_futex_arm)(int fd, const uint32_t *addr, uint32_t val,
				 int flags)
{
	struct pollfs_futex_event event = futex_event(addr, val, flags);

	return pollfs_futex_armv_1_0(fd, &event, 1);
}
#endif
