/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pollfs core: the pseudo filesystem, record I/O and the object
 * kinds that plug into it.  The core knows no kind's details; each kind
 * lives in a file of its own and talks to the core only through
 * struct pollfs_kind.
 */
#ifndef _POLLFS_CORE_H
#define _POLLFS_CORE_H

#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/seq_file.h>
#include <linux/uio.h>
#include <linux/wait.h>

struct pollfs_object;

/**
 * struct pollfs_kind - what makes a file a timer, a signal set, ...
 * @name:	dentry name, shown as pollfs:@name in /proc/PID/fd
 * @cmd:	the ioctl of /dev/pollfs that creates one
 * @create:	that ioctl: make an object, return its new descriptor
 * @init:	load-time set-up, its cache (optional)
 * @exit:	undo @init, at unload (optional)
 * @read_size:	size of one record read
 * @read_max:	records one read() returns at most, 0 for no limit
 * @write_size:	size of one record written, 0 if writes are refused
 * @read:	pop one record into @rec without sleeping: 1 when it did,
 *		0 at end of file, -EAGAIN when nothing is ready, else -errno
 * @write:	apply @nrec records from @from: the number applied (at
 *		least 1) or -errno
 * @poll:	readiness now, without waiting
 * @waitq:	the queue woken whenever @poll may have changed
 * @ioctl:	an ioctl on the object's file, -ENOTTY if not its (optional)
 * @show_fdinfo: state shown in /proc/PID/fdinfo (optional)
 * @release:	free the object; called once, when its file goes away
 *
 * A new kind is one file that defines its pollfs_<kind>_kind, one line in
 * the table of main.c and its declaration below; module/README.md lists
 * what else (the uapi header, libpollfs, the fuzzer, the man pages) it
 * touches.
 */
struct pollfs_kind {
	const char *name;
	unsigned int cmd;
	int (*create)(const void __user *arg);
	int (*init)(void);
	void (*exit)(void);
	size_t read_size;
	unsigned int read_max;
	size_t write_size;
	int (*read)(struct pollfs_object *obj, void *rec);
	ssize_t (*write)(struct pollfs_object *obj, struct iov_iter *from,
			 size_t nrec);
	__poll_t (*poll)(struct pollfs_object *obj);
	wait_queue_head_t *(*waitq)(struct pollfs_object *obj);
	long (*ioctl)(struct pollfs_object *obj, unsigned int cmd,
		      void __user *arg);
	void (*show_fdinfo)(struct seq_file *m, struct pollfs_object *obj);
	void (*release)(struct pollfs_object *obj);
};

extern const struct pollfs_kind pollfs_signal_kind;
extern const struct pollfs_kind pollfs_timer_kind;
extern const struct pollfs_kind pollfs_futex_kind;
extern const struct pollfs_kind pollfs_aio_kind;

/* Embedded first in every kind's context. */
struct pollfs_object {
	const struct pollfs_kind *kind;
};

/* The largest record of any kind; the core bounces records through it. */
#define POLLFS_RECORD_MAX	128

/*
 * A hook that costs the whole system something (a probe on a kernel
 * function) goes in when the first object that needs it is made, by
 * pollfs_once(), and stays until unload; @done says whether to undo it.
 */
struct pollfs_once {
	struct mutex lock;
	bool done;
};

#define POLLFS_ONCE_INIT(name)	{ .lock = __MUTEX_INITIALIZER(name.lock) }

int pollfs_once(struct pollfs_once *once, int (*install)(void));

int pollfs_fs_init(void);
void pollfs_fs_exit(void);
int pollfs_fs_pin(void);
void pollfs_fs_unpin(void);

int pollfs_check_flags(u32 flags, u32 reserved);
int pollfs_get_open_flags(const void __user *arg, u32 *flags);
int pollfs_install(struct pollfs_object *obj, const struct pollfs_kind *kind,
		   u32 flags);
ssize_t pollfs_write_each(struct pollfs_object *obj, struct iov_iter *from,
			  size_t nrec, size_t size,
			  int (*apply)(struct pollfs_object *obj,
				       const void *rec));

#endif /* _POLLFS_CORE_H */
