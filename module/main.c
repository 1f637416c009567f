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

#include "core.h"
#include "ksyms.h"

/* Every kind, at the number of the ioctl that creates it. */
static const struct pollfs_kind *const pollfs_kinds[] = {
	[_IOC_NR(POLLFS_IOC_SIGNAL)]	= &pollfs_signal_kind,
	[_IOC_NR(POLLFS_IOC_TIMER)]	= &pollfs_timer_kind,
	[_IOC_NR(POLLFS_IOC_FUTEX)]	= &pollfs_futex_kind,
	[_IOC_NR(POLLFS_IOC_AIO)]	= &pollfs_aio_kind,
};

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
	const struct pollfs_kind *kind;
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != POLLFS_IOC_MAGIC ||
	    nr >= ARRAY_SIZE(pollfs_kinds))
		return -ENOTTY;
	kind = pollfs_kinds[array_index_nospec(nr, ARRAY_SIZE(pollfs_kinds))];
	if (!kind || kind->cmd != cmd)
		return -ENOTTY;
	return kind->create((const void __user *)arg);
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

/* A table that does not say what each of its kinds needs is a bug. */
static int pollfs_kinds_check(void)
{
	const struct pollfs_kind *kind;
	unsigned int nr;

	for (nr = 0; nr < ARRAY_SIZE(pollfs_kinds); nr++) {
		kind = pollfs_kinds[nr];
		if (kind && (_IOC_NR(kind->cmd) != nr || !kind->name ||
			     !kind->create || !kind->read_size ||
			     kind->read_size > POLLFS_RECORD_MAX ||
			     kind->write_size > POLLFS_RECORD_MAX ||
			     !kind->read || !kind->poll || !kind->waitq ||
			     !kind->release || !kind->write != !kind->write_size)) {
			pr_err("kind %u (%s) is incomplete\n", nr,
			       kind->name ?: "?");
			return -EINVAL;
		}
	}
	return 0;
}

static void pollfs_kinds_exit(unsigned int n)
{
	while (n--)
		if (pollfs_kinds[n] && pollfs_kinds[n]->exit)
			pollfs_kinds[n]->exit();
}

static int pollfs_kinds_init(void)
{
	unsigned int n;
	int err;

	for (n = 0; n < ARRAY_SIZE(pollfs_kinds); n++) {
		if (!pollfs_kinds[n] || !pollfs_kinds[n]->init)
			continue;
		err = pollfs_kinds[n]->init();
		if (err) {
			pollfs_kinds_exit(n);
			return err;
		}
	}
	return 0;
}

static int __init pollfs_init(void)
{
	int err;

	err = pollfs_kinds_check();
	if (err)
		return err;
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
	pollfs_kinds_exit(ARRAY_SIZE(pollfs_kinds));
	return err;
}

/*
 * A kind may free its objects an RCU grace period after release (a probe
 * handler may still hold one): those callbacks run code of this module,
 * so every kind's are waited for here, whatever the kinds' own exits did.
 */
static void __exit pollfs_exit(void)
{
	misc_deregister(&pollfs_dev);
	pollfs_fs_exit();
	rcu_barrier();
	pollfs_kinds_exit(ARRAY_SIZE(pollfs_kinds));
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
