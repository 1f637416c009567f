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
#include <linux/pollfs.h>

#include "core.h"

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
	const void __user *argp = (const void __user *)arg;

	switch (cmd) {
	case POLLFS_IOC_SIGNAL:
		return pollfs_signal_create(argp);
	case POLLFS_IOC_TIMER:
		return pollfs_timer_create(argp);
	case POLLFS_IOC_FUTEX:
		return pollfs_futex_create(argp);
	case POLLFS_IOC_AIO:
		return pollfs_aio_create(argp);
	default:
		return -ENOTTY;
	}
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

/* Each kind's load-time set-up: its cache, its symbols, its probes. */
static const struct {
	int (*init)(void);
	void (*exit)(void);
} pollfs_kinds[] = {
	{ pollfs_signal_init,	pollfs_signal_exit },
	{ pollfs_timer_init,	pollfs_timer_exit },
	{ pollfs_futex_init,	pollfs_futex_exit },
	{ pollfs_aio_init,	pollfs_aio_exit },
};

static void pollfs_kinds_exit(unsigned int n)
{
	while (n--)
		pollfs_kinds[n].exit();
}

static int __init pollfs_init(void)
{
	unsigned int n;
	int err;

	err = pollfs_ksyms_init();
	if (err)
		return err;
	for (n = 0; n < ARRAY_SIZE(pollfs_kinds); n++) {
		err = pollfs_kinds[n].init();
		if (err)
			goto kinds_exit;
	}
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
	pollfs_kinds_exit(n);
	return err;
}

static void __exit pollfs_exit(void)
{
	misc_deregister(&pollfs_dev);
	pollfs_fs_exit();
	pollfs_kinds_exit(ARRAY_SIZE(pollfs_kinds));
}

module_init(pollfs_init);
module_exit(pollfs_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("The pollfs developers");
MODULE_DESCRIPTION("Signals, timers, futex waits and AIO rings as pollable files");
MODULE_VERSION("0.1");
