/* SPDX-License-Identifier: MIT */
/*
 * The kinds of pollfs object, one entry each, for the tests that must
 * cover every kind (fuzz, leak-slab, memcg-limit, module-leak-cycles,
 * core-pollout, core-inode-owner, core-inode-type):
 * they walk pt_kinds[] and name no kind, so a kind added here is
 * created, used, fuzzed and leak-checked by all of them.
 */
#ifndef POLLFS_TESTS_KINDS_H
#define POLLFS_TESTS_KINDS_H

#include "lib.h"

/* The largest open argument and record of any kind, for buffers. */
#define PT_KIND_ARG_MAX	32
#define PT_KIND_REC_MAX	128

struct pt_kind {
	const char *name;	/* the file is pollfs:[name] */
	const char *cache;	/* its objects' slab cache (/proc/slabinfo) */
	unsigned int cmd;	/* the ioctl of /dev/pollfs that creates one */
	size_t arg_size;	/* that ioctl's argument */
	size_t read_size;	/* a record read */
	size_t write_size;	/* a record written; 0: no write is valid */
	/*
	 * What every object of the kind needs from the process that makes
	 * it, set up once per process (an AIO context; SIGUSR1 blocked for
	 * the signal objects' use); NULL: nothing.
	 */
	void (*prepare)(void);
	/* A valid argument for cmd with these flags and reserved field. */
	void (*fill_arg)(void *arg, uint32_t flags, uint32_t reserved);
	/* The n-th sample record to write (write_size bytes): a valid one,
	 * which arms the object in one of its live states. */
	void (*sample)(void *rec, unsigned int n);
	/* Leaves the object in the n-th of its live states (armed, fired
	 * and unread, ...): what a leak may hide behind. */
	void (*arm)(int fd, unsigned int n);
	/* The object does its job once: made readable, a record read and
	 * checked.  Whatever arm() left is replaced. */
	void (*use)(int fd);
	/* NULL if a record read from any object of the kind is well formed,
	 * else what is wrong with it. */
	const char *(*bad_record)(const void *rec);
};

extern const struct pt_kind pt_kinds[];
extern const unsigned int pt_nkinds;

#define pt_for_each_kind(k) \
	for (const struct pt_kind *k = pt_kinds; k < pt_kinds + pt_nkinds; k++)

/* The kind named name, or NULL. */
const struct pt_kind *pt_kind_by_name(const char *name);
/* prepare() of every kind that has one, once per process. */
void pt_kinds_prepare(void);
/* One object of kind k on dev (after pt_kinds_prepare): its fd, or -1
 * with errno. */
int pt_kind_try(const struct pt_kind *k, int dev, uint32_t flags);
/* The same, failing the test if the ioctl fails. */
#define pt_kind_new(k, dev, flags) \
	pt_kind_new_at(__FILE__, __LINE__, (k), (dev), (flags))
int pt_kind_new_at(const char *file, int line, const struct pt_kind *k,
		   int dev, uint32_t flags);

#endif /* POLLFS_TESTS_KINDS_H */
