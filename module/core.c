// SPDX-License-Identifier: GPL-2.0
/*
 * The pollfs pseudo filesystem and the record I/O common to every object.
 *
 * Each object is a file on an internal mount of "pollfs".  The mount and
 * the one inode all object files share exist only while something uses
 * them (an open /dev/pollfs handle or a live object): the superblock
 * holds a reference on this module, so the module cannot go away while
 * the last file is still being torn down, and once everything is closed
 * nothing of pollfs remains and rmmod succeeds.
 */

#include <linux/file.h>
#include <linux/fs_context.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/pseudo_fs.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/pollfs.h>

#include "core.h"

#define POLLFS_MAGIC	0x706f6c6c	/* "poll" */

static DEFINE_MUTEX(pollfs_mount_lock);
static atomic_t pollfs_mount_users = ATOMIC_INIT(0);
static struct vfsmount *pollfs_mnt;
static struct inode *pollfs_inode;

static char *pollfs_dname(struct dentry *dentry, char *buffer, int buflen)
{
	char name[32];
	int len;

	len = snprintf(name, sizeof(name), "pollfs:%s",
		       dentry->d_name.name) + 1;
	if (len > sizeof(name) || len > buflen)
		return ERR_PTR(-ENAMETOOLONG);
	return memcpy(buffer + buflen - len, name, len);
}

static const struct dentry_operations pollfs_dentry_ops = {
	.d_dname	= pollfs_dname,
};

static int pollfs_init_fs_context(struct fs_context *fc)
{
	struct pseudo_fs_context *ctx = init_pseudo(fc, POLLFS_MAGIC);

	if (!ctx)
		return -ENOMEM;
	ctx->dops = &pollfs_dentry_ops;
	return 0;
}

static struct file_system_type pollfs_fs_type = {
	.owner			= THIS_MODULE,
	.name			= "pollfs",
	.init_fs_context	= pollfs_init_fs_context,
	.kill_sb		= kill_anon_super,
};

/*
 * Take a use of the internal mount, mounting it on first use.  Users that
 * find it mounted only bump the count; the mutex serializes the first and
 * the last user against each other.
 */
int pollfs_fs_pin(void)
{
	struct vfsmount *mnt;
	struct inode *inode;
	int err = 0;

	if (atomic_inc_not_zero(&pollfs_mount_users))
		return 0;

	mutex_lock(&pollfs_mount_lock);
	if (!atomic_read(&pollfs_mount_users)) {
		mnt = kern_mount(&pollfs_fs_type);
		if (IS_ERR(mnt)) {
			err = PTR_ERR(mnt);
			goto out;
		}
		inode = alloc_anon_inode(mnt->mnt_sb);
		if (IS_ERR(inode)) {
			kern_unmount(mnt);
			err = PTR_ERR(inode);
			goto out;
		}
		/*
		 * alloc_anon_inode() gives the inode the fsuid of whoever
		 * mounts first, and every object shares it: that user could
		 * then watch every other user's objects with inotify, or
		 * chmod them.  Like the stock anon inode, it is root's.
		 */
		inode->i_uid = GLOBAL_ROOT_UID;
		inode->i_gid = GLOBAL_ROOT_GID;
		/*
		 * The file type is the kernel's to choose: none on Debian's
		 * 6.1, 6.12 and 7.3, as for the stock anon inode; S_IFREG on
		 * kernels with "anon_inode: use a proper mode internally"
		 * and not its revert.  Only the permissions are ours.
		 */
		inode->i_mode = (inode->i_mode & S_IFMT) | 0600;
		pollfs_mnt = mnt;
		pollfs_inode = inode;
	}
	/*
	 * The mount and the inode are seen by whoever finds the count
	 * above zero (a fully ordered atomic_inc_not_zero()) on a weakly
	 * ordered CPU too: stored before the count.
	 */
	smp_mb__before_atomic();
	atomic_inc(&pollfs_mount_users);
out:
	mutex_unlock(&pollfs_mount_lock);
	return err;
}

/*
 * Drop a use.  The last one unmounts; files still being torn down keep
 * their own references to the mount and the inode until __fput ends.
 */
void pollfs_fs_unpin(void)
{
	if (!atomic_dec_and_mutex_lock(&pollfs_mount_users, &pollfs_mount_lock))
		return;
	iput(pollfs_inode);
	kern_unmount(pollfs_mnt);
	pollfs_inode = NULL;
	pollfs_mnt = NULL;
	mutex_unlock(&pollfs_mount_lock);
}

/* What the object and its ring hold: a read returns a record iff IN. */
static __poll_t pollfs_events(struct pollfs_object *obj)
{
	struct pollfs_ring *ring = pollfs_ring_of(obj);
	__poll_t events = obj->kind->poll(obj);

	if (ring && pollfs_ring_nonempty(ring))
		events |= EPOLLIN;
	return events;
}

/*
 * What a blocked read waits for: the object's own record, or the ring's;
 * but a read whose take gave up to other consumers (@busy) waits for
 * the next record pushed after @tail, not for one that is there and
 * that they keep taking first.
 */
static bool pollfs_read_ready(struct pollfs_object *obj,
			      struct pollfs_ring *ring, bool busy, u32 tail)
{
	if (obj->kind->poll(obj) & (EPOLLIN | EPOLLHUP | EPOLLERR))
		return true;
	if (!ring)
		return false;
	if (busy)
		return pollfs_ring_tail(ring) != tail;
	return pollfs_ring_nonempty(ring);
}

/*
 * Through read(2), readv(2) and io_uring alike.  IOCB_NOWAIT (io_uring's
 * first, inline try) is answered like O_NONBLOCK: io_uring then waits
 * for POLLIN and tries again, instead of parking a worker thread in the
 * sleep below.
 *
 * A kind with no read_max (the futex object: a watched set re-arms as it
 * is read) can have a record ready as fast as another process wakes it,
 * so the caller's buffer alone would bound the loop: a pending signal
 * ends the read after the records copied so far, as it ends the write
 * below.
 *
 * With a ring, its records come first (taken as any consumer takes
 * them), then those waiting in the object: the order they were made in.
 */
static ssize_t pollfs_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct file *file = iocb->ki_filp;
	struct pollfs_object *obj = file->private_data;
	const struct pollfs_kind *kind = obj->kind;
	size_t size = kind->read_size;
	size_t nrec = iov_iter_count(to) / size;
	bool nowait = (file->f_flags & O_NONBLOCK) ||
		      (iocb->ki_flags & IOCB_NOWAIT);
	struct pollfs_ring *ring = pollfs_ring_of(obj);
	size_t done = 0, taken = 0;
	u8 rec[POLLFS_RECORD_MAX];
	bool busy = false;
	u32 tail = 0;
	int ret;

	if (!nrec)
		return -EINVAL;

	while (done < nrec) {
		if (done && signal_pending(current))
			break;
		if (ring) {
			tail = pollfs_ring_tail(ring);
			ret = pollfs_ring_read_one(ring, rec);
			busy = ret == -EBUSY;
		}
		if (!ring || ret != 1) {
			if (kind->read_max && taken == kind->read_max)
				break;
			ret = kind->read(obj, rec, nowait || done);
			if (ret == -EAGAIN && !done && !nowait) {
				ret = wait_event_interruptible(*kind->waitq(obj),
					pollfs_read_ready(obj, ring, busy, tail));
				if (ret)
					break;
				continue;
			}
			if (ret <= 0)
				break;
			taken++;
		}
		cond_resched();
		/*
		 * Like signalfd and timerfd, a record popped into a buffer
		 * that faults is lost: the caller passed memory it cannot
		 * write.
		 */
		if (copy_to_iter(rec, size, to) != size) {
			ret = -EFAULT;
			break;
		}
		done++;
	}
	return done ? done * size : ret;
}

/* A write never waits for an event, so IOCB_NOWAIT changes nothing. */
static ssize_t pollfs_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct pollfs_object *obj = iocb->ki_filp->private_data;
	const struct pollfs_kind *kind = obj->kind;
	size_t count = iov_iter_count(from);
	ssize_t ret;

	if (!kind->write_size || count < kind->write_size)
		return -EINVAL;
	ret = kind->write(obj, from, count / kind->write_size);
	return ret < 0 ? ret : ret * kind->write_size;
}

/*
 * Apply records one by one, in order, until one fails.  The caller picks
 * the count (hundreds of millions of records in one 2 GiB write): a
 * pending signal ends the write after the records applied so far, as it
 * ends a pipe write, and every record is a scheduling point.
 */
ssize_t pollfs_write_each(struct pollfs_object *obj, struct iov_iter *from,
			  size_t nrec, size_t size,
			  int (*apply)(struct pollfs_object *obj,
				       const void *rec))
{
	u8 rec[POLLFS_RECORD_MAX];
	size_t done;
	int ret = 0;

	for (done = 0; done < nrec; done++) {
		if (done && signal_pending(current))
			break;
		cond_resched();
		if (copy_from_iter(rec, size, from) != size) {
			ret = -EFAULT;
			break;
		}
		ret = apply(obj, rec);
		if (ret)
			break;
	}
	return done ? done : ret;
}

/* A write never waits: every object that takes writes can take one now. */
static __poll_t pollfs_poll(struct file *file, poll_table *pt)
{
	struct pollfs_object *obj = file->private_data;
	__poll_t events;

	poll_wait(file, obj->kind->waitq(obj), pt);
	events = pollfs_events(obj);
	if (obj->kind->write_size)
		events |= EPOLLOUT | EPOLLWRNORM;
	return events;
}

static void pollfs_object_free_rcu(struct rcu_head *rcu)
{
	struct pollfs_object *obj = container_of(rcu, struct pollfs_object,
						 rcu);

	if (obj->ring)
		pollfs_ring_free(obj->ring);
	kmem_cache_free(obj->cache, obj);
}

/*
 * The end of an object whose @setup succeeded.  Its release stops every
 * producer of its ring, which goes with it; a mapping of the ring held
 * the file, so none is left.
 */
static void pollfs_object_free(struct pollfs_object *obj)
{
	if (obj->kind->release)
		obj->kind->release(obj);
	if (obj->kind->free_rcu) {
		call_rcu(&obj->rcu, pollfs_object_free_rcu);
		return;
	}
	if (obj->ring)
		pollfs_ring_free(obj->ring);
	kmem_cache_free(obj->cache, obj);
}

static int pollfs_release(struct inode *inode, struct file *file)
{
	pollfs_object_free(file->private_data);
	pollfs_fs_unpin();
	return 0;
}

/*
 * POLLFS_IOC_RING: the object's ring, once.  Its memory is charged to
 * the caller's memory cgroup.
 */
static long pollfs_ring_ioctl(struct pollfs_object *obj,
			      struct pollfs_ring_params __user *uparams)
{
	struct pollfs_ring_params params;
	struct pollfs_ring *ring;

	if (!obj->kind->ring)
		return -EOPNOTSUPP;
	if (copy_from_user(&params, uparams, sizeof(params)))
		return -EFAULT;
	if (READ_ONCE(obj->ring))
		return -EBUSY;
	ring = pollfs_ring_alloc(&params, obj->kind->read_size);
	if (IS_ERR(ring))
		return PTR_ERR(ring);
	if (copy_to_user(uparams, &params, sizeof(params))) {
		pollfs_ring_free(ring);
		return -EFAULT;
	}
	/*
	 * Records the object made before the ring wait in it: the flag
	 * says so, and keeps the next ones out of the ring until read(2)
	 * has taken them.  Looked at before the ring is published and
	 * again after, for one made meanwhile.
	 */
	if (obj->kind->poll(obj) & EPOLLIN)
		pollfs_ring_flag_overflow(ring);
	/* Pairs with pollfs_ring_of(): a producer sees the ring whole. */
	if (cmpxchg_release(&obj->ring, NULL, ring)) {
		pollfs_ring_free(ring);
		return -EBUSY;
	}
	if (obj->kind->ring_attached)
		obj->kind->ring_attached(obj);
	if (obj->kind->poll(obj) & EPOLLIN)
		pollfs_ring_flag_overflow(ring);
	return 0;
}

static long pollfs_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	struct pollfs_object *obj = file->private_data;

	if (cmd == POLLFS_IOC_RING)
		return pollfs_ring_ioctl(obj, (void __user *)arg);
	if (!obj->kind->ioctl)
		return -ENOTTY;
	return obj->kind->ioctl(obj, cmd, (void __user *)arg);
}

/* An object without a ring has nothing to map. */
static int pollfs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pollfs_ring *ring = pollfs_ring_of(file->private_data);

	if (!ring)
		return -ENODEV;
	return pollfs_ring_mmap(ring, vma);
}

static void pollfs_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct pollfs_object *obj = file->private_data;
	struct pollfs_ring *ring = pollfs_ring_of(obj);

	if (obj->kind->show_fdinfo)
		obj->kind->show_fdinfo(m, obj);
	if (ring)
		pollfs_ring_show_fdinfo(m, ring);
}

static const struct file_operations pollfs_fops = {
	.owner		= THIS_MODULE,
	.read_iter	= pollfs_read_iter,
	.write_iter	= pollfs_write_iter,
	.poll		= pollfs_poll,
	.release	= pollfs_release,
	.unlocked_ioctl	= pollfs_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= pollfs_mmap,
	.show_fdinfo	= pollfs_show_fdinfo,
};

int pollfs_hook_install(struct pollfs_hook *hook)
{
	int err = 0;

	/* Pairs with the release below: true means it is in. */
	if (smp_load_acquire(&hook->installed))
		return 0;
	mutex_lock(&hook->lock);
	if (!hook->installed) {
		if (hook->kprobe)
			err = register_kprobe(hook->kprobe);
		else if (hook->install)
			err = hook->install();
		/*
		 * Once: every creating ioctl tries again, and where
		 * something else holds the function (a livepatch), a user
		 * would fill the log.
		 */
		if (err && !hook->failed) {
			hook->failed = true;
			pr_err("cannot hook %s (%d): objects that need it cannot be made\n",
			       hook->what, err);
		}
		if (!err)	/* pairs with the acquire above */
			smp_store_release(&hook->installed, true);
	}
	mutex_unlock(&hook->lock);
	return err;
}

/* At unload, when no object is left to install it again. */
void pollfs_hook_remove(struct pollfs_hook *hook)
{
	if (!hook->installed)
		return;
	if (hook->kprobe)
		unregister_kprobe(hook->kprobe);
	else if (hook->remove)
		hook->remove();
	hook->installed = false;
}

/*
 * Give a new object a file and a descriptor: the descriptor, from which
 * on the file owns @obj; on error the caller still does.
 */
static int pollfs_install(struct pollfs_object *obj, u32 flags)
{
	struct file *file;
	int fd, err;

	err = pollfs_fs_pin();
	if (err)
		return err;

	fd = get_unused_fd_flags(flags & O_CLOEXEC);
	if (fd < 0) {
		err = fd;
		goto unpin;
	}

	ihold(pollfs_inode);
	file = alloc_file_pseudo(pollfs_inode, pollfs_mnt, obj->kind->name,
				 O_RDWR | (flags & O_NONBLOCK), &pollfs_fops);
	if (IS_ERR(file)) {
		iput(pollfs_inode);
		err = PTR_ERR(file);
		goto put_fd;
	}
	/* Paired with the fops_put() in __fput(). */
	__module_get(THIS_MODULE);
	/* read_iter and write_iter honour IOCB_NOWAIT: io_uring goes inline. */
	file->f_mode |= FMODE_NOWAIT;
	file->private_data = obj;
	fd_install(fd, file);
	return fd;

put_fd:
	put_unused_fd(fd);
unpin:
	pollfs_fs_unpin();
	return err;
}

/**
 * pollfs_create - make an object of @kind, the creating ioctl
 * @kind:	its kind
 * @cache:	the kind's slab cache
 * @uarg:	the ioctl's argument, @kind->open_size bytes
 *
 * Returns the new object's descriptor or -errno.
 */
int pollfs_create(const struct pollfs_kind *kind, struct kmem_cache *cache,
		  const void __user *uarg)
{
	u64 arg[POLLFS_OPEN_MAX / sizeof(u64)];
	struct pollfs_open open;
	struct pollfs_object *obj;
	int err, fd;

	BUILD_BUG_ON(POLLFS_NONBLOCK != O_NONBLOCK);
	BUILD_BUG_ON(POLLFS_CLOEXEC != O_CLOEXEC);

	if (copy_from_user(arg, uarg, kind->open_size))
		return -EFAULT;
	memcpy(&open, (u8 *)arg + kind->open_flags, sizeof(open));
	if (open.reserved || open.flags & ~(POLLFS_NONBLOCK | POLLFS_CLOEXEC))
		return -EINVAL;
	if (kind->hook) {
		err = pollfs_hook_install(kind->hook);
		if (err)
			return err;
	}

	obj = kmem_cache_zalloc(cache, GFP_KERNEL);
	if (!obj)
		return -ENOMEM;
	obj->kind = kind;
	obj->cache = cache;
	if (kind->setup) {
		err = kind->setup(obj, arg);
		if (err) {
			kmem_cache_free(cache, obj);
			return err;
		}
	}
	fd = pollfs_install(obj, open.flags);
	if (fd < 0)
		pollfs_object_free(obj);
	return fd;
}

int pollfs_fs_init(void)
{
	return register_filesystem(&pollfs_fs_type);
}

void pollfs_fs_exit(void)
{
	WARN_ON(atomic_read(&pollfs_mount_users));
	unregister_filesystem(&pollfs_fs_type);
}
