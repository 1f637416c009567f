/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pollfs: signals, high-resolution timers, futex waits and AIO completion
 * rings as pollable file descriptors with record-based read and write.
 *
 * Objects are created by ioctls on /dev/pollfs; each ioctl returns the new
 * object's file descriptor.  See pollfs(7).
 */
#ifndef _UAPI_LINUX_POLLFS_H
#define _UAPI_LINUX_POLLFS_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/time_types.h>

/*
 * Creation flags.  They equal the architecture's O_NONBLOCK and O_CLOEXEC,
 * spelled out here because <linux/fcntl.h> clashes with glibc's <fcntl.h>.
 */
#if defined(__alpha__)
#define POLLFS_NONBLOCK		00000004
#define POLLFS_CLOEXEC		010000000
#elif defined(__hppa__)
#define POLLFS_NONBLOCK		000200000
#define POLLFS_CLOEXEC		010000000
#elif defined(__mips__)
#define POLLFS_NONBLOCK		0x0080
#define POLLFS_CLOEXEC		02000000
#elif defined(__sparc__)
#define POLLFS_NONBLOCK		0x4000
#define POLLFS_CLOEXEC		0x400000
#else
#define POLLFS_NONBLOCK		00004000
#define POLLFS_CLOEXEC		02000000
#endif

/* Argument of POLLFS_IOC_TIMER and POLLFS_IOC_FUTEX. */
struct pollfs_open {
	__u32 flags;		/* POLLFS_NONBLOCK | POLLFS_CLOEXEC */
	__u32 reserved;		/* must be zero */
};

/* Argument of POLLFS_IOC_SIGNAL. */
struct pollfs_signal_open {
	__u64 mask;		/* bit (signo - 1) selects signal signo */
	__u32 flags;
	__u32 reserved;
};

/* Argument of POLLFS_IOC_AIO. */
struct pollfs_aio_open {
	__u64 ctx;		/* aio_context_t from io_setup(2) */
	__u32 flags;
	__u32 reserved;
};

#define POLLFS_IOC_MAGIC	0xB8
#define POLLFS_IOC_SIGNAL	_IOW(POLLFS_IOC_MAGIC, 1, struct pollfs_signal_open)
#define POLLFS_IOC_TIMER	_IOW(POLLFS_IOC_MAGIC, 2, struct pollfs_open)
#define POLLFS_IOC_FUTEX	_IOW(POLLFS_IOC_MAGIC, 3, struct pollfs_open)
#define POLLFS_IOC_AIO		_IOW(POLLFS_IOC_MAGIC, 4, struct pollfs_aio_open)

/*
 * Signal object: read one record per dequeued signal, write a new __u64
 * mask.  The layout and meaning are those of struct signalfd_siginfo.
 */
struct pollfs_siginfo {
	__u32 psi_signo;
	__s32 psi_errno;
	__s32 psi_code;
	__u32 psi_pid;
	__u32 psi_uid;
	__s32 psi_fd;
	__u32 psi_tid;
	__u32 psi_band;
	__u32 psi_overrun;
	__u32 psi_trapno;
	__s32 psi_status;
	__s32 psi_int;
	__u64 psi_ptr;
	__u64 psi_utime;
	__u64 psi_stime;
	__u64 psi_addr;
	__u16 psi_addr_lsb;
	__u16 __pad2;
	__s32 psi_syscall;
	__u64 psi_call_addr;
	__u32 psi_arch;
	__u8 __pad[28];
};

/* Timer object: write a spec to arm or disarm, read expiration events. */
#define POLLFS_TIMER_ABSTIME	0x1
/*
 * With POLLFS_TIMER_ABSTIME on CLOCK_REALTIME(_ALARM) only: a
 * discontinuous set of the realtime clock makes the next read fail with
 * ECANCELED, as timerfd's TFD_TIMER_CANCEL_ON_SET.  (1.1)
 */
#define POLLFS_TIMER_CANCEL_ON_SET	0x2

/*
 * clockid is one of CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME,
 * CLOCK_REALTIME_ALARM and CLOCK_BOOTTIME_ALARM.
 */
struct pollfs_timer_spec {
	__s32 clockid;
	__u32 flags;		/* POLLFS_TIMER_ABSTIME, _CANCEL_ON_SET */
	struct __kernel_timespec value;		/* first expiry; 0 disarms */
	struct __kernel_timespec interval;	/* period; 0 is one-shot */
};

struct pollfs_timer_event {
	__u64 expirations;	/* since the previous read, >= 1 */
	struct __kernel_timespec remaining;	/* to the next expiry */
	struct __kernel_timespec interval;
};

/* On a timer object: its state now, consuming nothing.  (1.1) */
#define POLLFS_IOC_TIMER_GET	_IOR(POLLFS_IOC_MAGIC, 0x20, struct pollfs_timer_event)

/*
 * Futex object: write one record to wait on a futex word, or 2 to
 * POLLFS_FUTEX_WAITV_MAX records to wait on any of them; read the
 * record(s) that were woken.  With POLLFS_FUTEX_WATCH (1.1) a read
 * re-arms each woken record on its word's value now, returned in val.
 * One record of all zeros disarms the object.  (1.1)
 */
#define POLLFS_FUTEX_SHARED	0x1
#define POLLFS_FUTEX_WATCH	0x2
#define POLLFS_FUTEX_WAITV_MAX	128

struct pollfs_futex_event {
	__u64 addr;		/* user address of a 4-byte aligned __u32 */
	__u32 val;		/* expected value */
	__u32 flags;		/* POLLFS_FUTEX_SHARED, POLLFS_FUTEX_WATCH */
};

/* AIO object: read how many completions the ring holds, unreaped. */
struct pollfs_aio_event {
	__u64 ctx;
	__u64 available;
};

/*
 * The record ring (1.2): on a timer or futex object, POLLFS_IOC_RING sets
 * up a ring of records that the kernel fills and the application maps
 * (mmap of p.mmap_size bytes at offset 0, MAP_SHARED) and drains with
 * loads and stores.  head is the application's, tail the kernel's; both
 * count records modulo 2^32, record i is at off_records + (i & (entries
 * - 1)) * record_size.  The kernel stores tail with release ordering
 * after the record; the application loads tail with acquire ordering and
 * stores head with release ordering once it has copied the records.
 * POLLFS_RING_OVERFLOW in the flags word: records wait in the object,
 * for read(2).  See pollfs(7).
 */
#define POLLFS_RING_OVERFLOW	0x1
#define POLLFS_RING_ENTRIES_MIN	2
#define POLLFS_RING_ENTRIES_MAX	4096

struct pollfs_ring_params {
	__u32 entries;		/* in: a power of two, 2..4096 */
	__u32 flags;		/* in: 0 */
	__u32 record_size;	/* out: the object's read record size */
	__u32 off_head;		/* out: offsets in the mapping of the */
	__u32 off_tail;		/*      three __u32 words */
	__u32 off_flags;
	__u32 off_records;	/* out: offset of record 0 */
	__u32 reserved;		/* in: 0 */
	__u64 mmap_size;	/* out: the length to map */
};

#define POLLFS_IOC_RING		_IOWR(POLLFS_IOC_MAGIC, 0x21, struct pollfs_ring_params)

#endif /* _UAPI_LINUX_POLLFS_H */
