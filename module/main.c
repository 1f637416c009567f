// SPDX-License-Identifier: GPL-2.0
/*
 * pollfs: things a process waits for, as file descriptors it can poll.
 *
 * /dev/pollfs is the factory: each ioctl on it creates one object and
 * returns the object's new descriptor.  Opening the device needs no
 * privilege, exactly as calling a syscall would not.
 */

#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/pollfs.h>
#include <linux/slab.h>

#include "core.h"
#include "ksyms.h"

/* Every kind of kinds.h, at the number of the ioctl that creates it. */
struct pollfs_kind_entry {
	const struct pollfs_kind *kind;
	unsigned int cmd;
	const char *cache_name;
	struct kmem_cache *cache;
};

/* Creating ioctls are numbered from 1: room for more kinds than a few. */
static struct pollfs_kind_entry pollfs_kinds[16];

#define for_each_kind(entry)						\
	for (entry = pollfs_kinds;					\
	     entry < pollfs_kinds + ARRAY_SIZE(pollfs_kinds); entry++)

static int pollfs_dev_open(struct inode *inode, struct file *file)
{
	/* Keeps the internal mount up while a factory handle is open. */
	return pollfs_fs_pin();
}

static int pollfs_dev_release(struct inode *inode, struct file *file)
{
	pollfs_fs_unpin();
	return 0;
}

static long pollfs_dev_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	const struct pollfs_kind_entry *entry;
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != POLLFS_IOC_MAGIC ||
	    nr >= ARRAY_SIZE(pollfs_kinds))
		return -ENOTTY;
	entry = &pollfs_kinds[array_index_nospec(nr, ARRAY_SIZE(pollfs_kinds))];
	if (!entry->kind || entry->cmd != cmd)
		return -ENOTTY;
	return pollfs_create(entry->kind, entry->cache,
			     (const void __user *)arg);
}

static const struct file_operations pollfs_dev_fops = {
	.owner		= THIS_MODULE,
	.open		= pollfs_dev_open,
	.release	= pollfs_dev_release,
	.unlocked_ioctl	= pollfs_dev_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice pollfs_dev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "pollfs",
	.fops	= &pollfs_dev_fops,
	.mode	= 0666,
};

/* A kind that does not say what the core needs of it is a bug. */
static bool pollfs_kind_complete(const struct pollfs_kind_entry *entry)
{
	const struct pollfs_kind *kind = entry->kind;

	return kind->name && kind->size >= sizeof(struct pollfs_object) &&
	       kind->open_size == _IOC_SIZE(entry->cmd) &&
	       kind->open_size <= POLLFS_OPEN_MAX &&
	       kind->open_flags + sizeof(struct pollfs_open) <= kind->open_size &&
	       kind->read_size && kind->read_size <= POLLFS_RECORD_MAX &&
	       kind->write_size <= POLLFS_RECORD_MAX &&
	       kind->read && kind->poll && kind->waitq &&
	       !kind->write == !kind->write_size;
}

/*
 * Hooks first: a probe handler may still look at an object until a
 * grace period after it is out, and the objects of a kind that frees
 * them after one are freed into its cache.
 */
static void pollfs_kinds_exit(void)
{
	struct pollfs_kind_entry *entry;

	for_each_kind(entry) {
		if (!entry->kind)
			continue;
		if (entry->kind->hook)
			pollfs_hook_remove(entry->kind->hook);
		if (entry->kind->exit)
			entry->kind->exit();
	}
	rcu_barrier();
	for_each_kind(entry) {
		kmem_cache_destroy(entry->cache);
		entry->cache = NULL;
	}
}

static int pollfs_kind_add(const struct pollfs_kind *kind, unsigned int cmd,
			   const char *cache_name)
{
	struct pollfs_kind_entry *entry;

	if (_IOC_NR(cmd) >= ARRAY_SIZE(pollfs_kinds)) {
		pr_err("kind %s: ioctl number beyond the table\n", cache_name);
		return -EINVAL;
	}
	entry = &pollfs_kinds[_IOC_NR(cmd)];
	if (entry->kind) {
		pr_err("kinds %s and %s share an ioctl\n", entry->cache_name,
		       cache_name);
		return -EINVAL;
	}
	*entry = (struct pollfs_kind_entry) {
		.kind = kind,
		.cmd = cmd,
		.cache_name = cache_name,
	};
	if (!pollfs_kind_complete(entry)) {
		pr_err("kind %s is incomplete\n", cache_name);
		return -EINVAL;
	}
	if (kind->check) {
		int err = kind->check();

		if (err)
			return err;
	}
	entry->cache = kmem_cache_create(cache_name, kind->size, kind->align,
					 SLAB_ACCOUNT, NULL);
	return entry->cache ? 0 : -ENOMEM;
}

static int pollfs_kinds_init(void)
{
	int err = 0;

#define POLLFS_KIND(name, ioctl) \
	(err = err ?: pollfs_kind_add(&pollfs_##name##_kind, ioctl, "pollfs_" #name))
#include "kinds.h"
#undef POLLFS_KIND
	if (err)
		pollfs_kinds_exit();
	return err;
}

static int __init pollfs_init(void)
{
	int err;

	err = pollfs_ksyms_init();
	if (err)
		return err;
	err = pollfs_btf_check();
	if (err)
		return err;
	err = pollfs_kinds_init();
	if (err)
		return err;
	err = pollfs_fs_init();
	if (err)
		goto kinds_exit;
	err = misc_register(&pollfs_dev);
	if (err)
		goto fs_exit;
	return 0;

fs_exit:
	pollfs_fs_exit();
kinds_exit:
	pollfs_kinds_exit();
	return err;
}

static void __exit pollfs_exit(void)
{
	misc_deregister(&pollfs_dev);
	pollfs_fs_exit();
	pollfs_kinds_exit();
}

module_init(pollfs_init);
module_exit(pollfs_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("The pollfs developers");
MODULE_DESCRIPTION("Signals, timers, futex waits and AIO rings as pollable files");
#ifndef POLLFS_VERSION
#error "POLLFS_VERSION is unset: build through the top Makefile, or with the VERSION file beside Kbuild"
#endif
MODULE_VERSION(POLLFS_VERSION);
