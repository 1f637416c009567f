/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pollfs core: the pseudo filesystem, record I/O and the object
 * kinds that plug into it.  The core knows no kind's details; each kind
 * lives in a file of its own and talks to the core only through
 * struct pollfs_kind.
 */
#ifndef _POLLFS_CORE_H
#define _POLLFS_CORE_H

#include <linux/build_bug.h>
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/seq_file.h>
#include <linux/stddef.h>
#include <linux/uio.h>
#include <linux/wait.h>

#include "ring.h"

struct kprobe;
struct pollfs_object;

/**
 * struct pollfs_hook - a hook into the kernel that some objects need
 * @lock:	serializes installing it
 * @installed:	it is in, until unload
 * @failed:	installing it failed once, and the kernel log said so
 * @what:	the kernel function it hooks, for that message
 * @kprobe:	a kprobe to register, or
 * @install:	how to put it in (and @remove, how to take it out)
 *
 * A hook costs the whole system something (every call of a kernel
 * function runs it), so it goes in with the first object that needs it,
 * never at load, and stays until unload.  One with neither @kprobe nor
 * @install is the hook of a kernel that needs none.
 */
struct pollfs_hook {
	struct mutex lock;
	bool installed;
	bool failed;
	const char *what;
	struct kprobe *kprobe;
	int (*install)(void);
	void (*remove)(void);
};

#define POLLFS_HOOK_INIT(name, function, ...)				\
	{ .lock = __MUTEX_INITIALIZER(name.lock), .what = function,	\
	  __VA_ARGS__ }

int pollfs_hook_install(struct pollfs_hook *hook);
void pollfs_hook_remove(struct pollfs_hook *hook);

/**
 * struct pollfs_kind - what makes a file a timer, a signal set, ...
 * @name:	dentry name, shown as pollfs:@name in /proc/PID/fd
 * @size:	size of its object, a struct whose first member is a
 *		struct pollfs_object named obj (POLLFS_OBJECT())
 * @align:	that struct's alignment
 * @open_size:	size of the argument of its creating ioctl
 * @open_flags:	where struct pollfs_open's flags and reserved word are
 *		in that argument (POLLFS_OPEN())
 * @setup:	fill in a zeroed object from the argument, which the core
 *		copied in and whose flags it checked; on error, undo what
 *		it did (optional)
 * @check:	at load, refuse (-errno) a kernel the kind cannot serve
 *		(optional)
 * @hook:	installed before the first object is made (optional)
 * @exit:	at unload, after @hook is removed (optional)
 * @read_size:	size of one record read
 * @read_max:	records of the object one read() returns at most (its
 *		ring's are not counted), 0 for no limit
 * @write_size:	size of one record written, 0 if writes are refused
 * @read:	pop one record into @rec: 1 when it did, 0 at end of file,
 *		-EAGAIN when nothing is ready, else -errno.  It never waits
 *		for an event; with @nowait (O_NONBLOCK, IOCB_NOWAIT, or a
 *		record already taken) it does not wait for a lock either
 * @write:	apply @nrec records from @from: the number applied (at
 *		least 1) or -errno
 * @poll:	readiness now, without waiting
 * @waitq:	the queue woken whenever @poll may have changed
 * @ioctl:	an ioctl on the object's file, -ENOTTY if not its (optional)
 * @show_fdinfo: state shown in /proc/PID/fdinfo (optional)
 * @release:	undo @setup and what the object did since, when its file
 *		goes away or installing it failed (optional)
 * @free_rcu:	free it a grace period after @release, not at once: a
 *		hook may still be looking at it
 * @ring:	it takes a record ring (POLLFS_IOC_RING): its producers push
 *		into pollfs_ring_of(obj) (ring.h)
 * @ring_attached: told once the ring is the object's (optional)
 *
 * The core owns the object's life: it copies and checks the argument,
 * allocates from the kind's cache, calls @setup, installs the file and,
 * when the file goes away, calls @release and frees.  A new kind is its
 * file, defining pollfs_<name>_kind, and its line in kinds.h.
 */
struct pollfs_kind {
	const char *name;
	size_t size;
	size_t align;
	size_t open_size;
	size_t open_flags;
	int (*setup)(struct pollfs_object *obj, const void *arg);
	int (*check)(void);
	struct pollfs_hook *hook;
	void (*exit)(void);
	size_t read_size;
	unsigned int read_max;
	size_t write_size;
	int (*read)(struct pollfs_object *obj, void *rec, bool nowait);
	ssize_t (*write)(struct pollfs_object *obj, struct iov_iter *from,
			 size_t nrec);
	__poll_t (*poll)(struct pollfs_object *obj);
	wait_queue_head_t *(*waitq)(struct pollfs_object *obj);
	long (*ioctl)(struct pollfs_object *obj, unsigned int cmd,
		      void __user *arg);
	void (*show_fdinfo)(struct seq_file *m, struct pollfs_object *obj);
	void (*release)(struct pollfs_object *obj);
	bool free_rcu;
	bool ring;
	void (*ring_attached)(struct pollfs_object *obj);
};

/* Embedded first, as obj, in every kind's context. */
struct pollfs_object {
	const struct pollfs_kind *kind;
	struct kmem_cache *cache;
	struct pollfs_ring *ring;	/* set once, by POLLFS_IOC_RING */
	struct rcu_head rcu;
};

/*
 * The object's ring, or NULL: its producers find it without the object's
 * locks, and see it whole (pairs with the release in the ioctl).
 */
static inline struct pollfs_ring *pollfs_ring_of(struct pollfs_object *obj)
{
	/* Pairs with the ioctl's cmpxchg_release(). */
	return smp_load_acquire(&obj->ring);
}

#define POLLFS_OBJECT(type)						\
	.size = sizeof(type) +						\
		BUILD_BUG_ON_ZERO(offsetof(type, obj) != 0),		\
	.align = __alignof__(type)

#define POLLFS_OPEN(type)						\
	.open_size = sizeof(type),					\
	.open_flags = offsetof(type, flags) +				\
		BUILD_BUG_ON_ZERO(offsetof(type, reserved) !=		\
				  offsetof(type, flags) + sizeof(__u32))

#define POLLFS_KIND(name, ioctl) \
	extern const struct pollfs_kind pollfs_##name##_kind
#include "kinds.h"
#undef POLLFS_KIND

/* The largest record of any kind; the core bounces records through it. */
#define POLLFS_RECORD_MAX	128
/* The largest argument of a creating ioctl; the core copies it in. */
#define POLLFS_OPEN_MAX		64

int pollfs_create(const struct pollfs_kind *kind, struct kmem_cache *cache,
		  const void __user *arg);

int pollfs_fs_init(void);
void pollfs_fs_exit(void);
int pollfs_fs_pin(void);
void pollfs_fs_unpin(void);

ssize_t pollfs_write_each(struct pollfs_object *obj, struct iov_iter *from,
			  size_t nrec, size_t size,
			  int (*apply)(struct pollfs_object *obj,
				       const void *rec));

#endif /* _POLLFS_CORE_H */
