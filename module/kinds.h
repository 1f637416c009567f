/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kind of object, once: POLLFS_KIND(name, ioctl); for the kind that
 * module/name.c defines as pollfs_name_kind, made by the ioctl of
 * /dev/pollfs.  Its slab cache is "pollfs_name".  The declarations of
 * core.h, the table of main.c and the object list of Kbuild are made
 * from these lines; a new kind is its file and one line here.
 */
POLLFS_KIND(signal,	POLLFS_IOC_SIGNAL);
POLLFS_KIND(timer,	POLLFS_IOC_TIMER);
POLLFS_KIND(futex,	POLLFS_IOC_FUTEX);
POLLFS_KIND(aio,	POLLFS_IOC_AIO);
