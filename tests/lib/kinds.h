/* SPDX-License-Identifier: MIT */
/*
 * The kinds of pollfs object, one entry each, for the tests that must
 * cover every kind (fuzz, leak-slab, memcg-limit, module-leak-cycles,
 * core-pollout, core-inode-owner, core-inode-type, core-write-huge,
 * unpriv-fdpass, uring-rw, uring-multishot-kinds, libpollfs-device,
 * epoll-et, epoll-level):
 * they walk pt_kinds[] and name no kind, so a kind added here is
 * created, used, fuzzed and leak-checked by all of them.  What only one
 * kind does is the business of that kind's own tests; the fuzzer, which
 * knows more of each, finds it by its place in the table (PT_KIND_*).
 */
#ifndef POLLFS_TESTS_KINDS_H
#define POLLFS_TESTS_KINDS_H

#include "lib.h"

/* The largest open argument and record of any kind, for buffers. */
#define PT_KIND_ARG_MAX	32
#define PT_KIND_REC_MAX	128

/*
 * The places in pt_kinds[] of the kinds the fuzzer knows more of; a new
 * kind needs no place here: its entry goes at the end of the table,
 * which is as long as its entries.
 */
enum pt_kind_id {
	PT_KIND_SIGNAL,
	PT_KIND_TIMER,
	PT_KIND_FUTEX,
	PT_KIND_AIO,
};

/* The n of arm() whose state is armed and waiting, with nothing ready
 * nor about to be (a timer an hour away). */
#define PT_KIND_WAITING	4

/* The most descriptors a kind's passing checks (below) pass at once. */
#define PT_PASS_FDS	4

/* What a sender passes with the descriptors, besides them. */
struct pt_pass_msg {
	uint64_t ctx;		/* an AIO context of the sender's */
	uint64_t sender_only;	/* a word mapped only in the sender */
	pid_t sender;
	int nfds;
};

/*
 * One check of what a descriptor passed over a UNIX socket to a process
 * of another user (unpriv-fdpass) gives it: nothing of the sender's.
 * The receiver is forked first, sharing nothing with the sender but
 * the socket.  send(), in the sender, makes what to pass, puts it in
 * fds and m (m->nfds of them); receive(), in the receiver, checks what
 * it may do with them (the harness closes them after); kept(), in the
 * sender once the receiver is done, checks that what is the sender's
 * stayed so, and closes the descriptors.
 */
struct pt_passing {
	const char *name;	/* the behaviour, a TEST's name */
	void (*send)(int *fds, struct pt_pass_msg *m);
	void (*receive)(const int *fds, const struct pt_pass_msg *m);
	void (*kept)(int *fds, const struct pt_pass_msg *m);
};

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
	/* The same object made by libpollfs (userlib/), with these
	 * POLLFS_ flags: its fd, or -1 with errno. */
	int (*lib_new)(int flags);
	/* The n-th sample record to write (write_size bytes): a valid one,
	 * which arms the object in one of its live states. */
	void (*sample)(void *rec, unsigned int n);
	/* Leaves the object in the n-th of its live states (armed, fired
	 * and unread, ...): what a leak may hide behind. */
	void (*arm)(int fd, unsigned int n);
	/*
	 * One record, made on demand (pt_kind_use() and the tests that
	 * read through epoll or io_uring): prime() fills a record that,
	 * written, readies the object for fire(); fire() then makes one
	 * record ready within milliseconds; expect() fails unless the
	 * record read after it is that one; take() takes what else fire()
	 * left.  No prime(): the kind takes no writes, its objects are
	 * ready for fire() from the start.  No fire(): the record written
	 * makes the record alone (a timer's expiry), within milliseconds.
	 * No take(): the read took everything.  Whatever arm() left is
	 * replaced.
	 */
	void (*prime)(void *rec);
	void (*fire)(int fd);
	void (*expect)(const void *rec);
	void (*take)(int fd);
	/* NULL if a record read from any object of the kind is well formed,
	 * else what is wrong with it. */
	const char *(*bad_record)(const void *rec);
	/* A record of write_size bytes that a write refuses, EINVAL (a
	 * timespec out of range); NULL: the kind has none. */
	void (*invalid)(void *rec);
	/* A valid record whose wait is already over (the futex word no
	 * longer holds the value): a write of it fails with EAGAIN; NULL:
	 * the kind has none. */
	void (*stale)(void *rec);
	/*
	 * A read takes nothing: its one record tells what waits elsewhere
	 * (AIO: the completions in the context's ring, reaped apart), the
	 * same until that changes, and reads 0 once what it follows is
	 * gone (the context destroyed).
	 */
	bool read_peeks;
	/* A write's records are one set, taken all or none, of at most
	 * this many (the futex's waits); 0: applied one by one, in order,
	 * until one fails or a signal ends the write. */
	unsigned int write_set;
	/*
	 * Records of zeros are valid and each changes the object (a signal
	 * mask of 0, a timer disarmed), so that a write of any number of
	 * them is applied one by one: this line of its fdinfo then says so.
	 * NULL: a write of many records of zeros fails at once, EINVAL.
	 */
	const char *zero_fdinfo;
	/* The object takes a record ring (POLLFS_IOC_RING, mmap; 1.2). */
	bool ring;
	/* What a descriptor passed to another user gives it, checked;
	 * ended by an entry with no name.  NULL: the object holds nothing
	 * of the process that made it. */
	const struct pt_passing *passing;
};

extern const struct pt_kind pt_kinds[];
extern const unsigned int pt_nkinds;

#define pt_for_each_kind(k) \
	for (const struct pt_kind *k = pt_kinds; k < pt_kinds + pt_nkinds; k++)

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
/* Writes the record prime() fills, if the kind has one: the object is
 * ready for fire(). */
#define pt_kind_prime(k, fd) pt_kind_prime_at(__FILE__, __LINE__, (k), (fd))
void pt_kind_prime_at(const char *file, int line, const struct pt_kind *k,
		      int fd);
/* pt_kind_prime(), and fire() if the kind has one: one record will be
 * ready. */
#define pt_kind_ready(k, fd) pt_kind_ready_at(__FILE__, __LINE__, (k), (fd))
void pt_kind_ready_at(const char *file, int line, const struct pt_kind *k,
		      int fd);
/* The object does its job once: pt_kind_ready(), the record read when
 * it is, expect()ed, and take(). */
void pt_kind_use(const struct pt_kind *k, int fd);
/*
 * Adds a TEST (lib.h) named "KIND-name" (name NULL: "KIND") that runs
 * fn(k): a behaviour of every kind, or of those with what it needs,
 * each reported on its own line.  Before pt_run_tests().
 */
void pt_add_kind_test(const struct pt_kind *k, const char *name,
		      void (*fn)(const struct pt_kind *k));

#endif /* POLLFS_TESTS_KINDS_H */
