/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel internals pollfs uses and the kernel does not export, as
 * module/internals.list names them, in generated/btf.h: the offsets of
 * the private members, read from the target kernel's BTF when the module
 * is built, and struct pollfs_ksyms, a typed pointer to each symbol,
 * resolved by name when the module loads (ksyms.c).
 */
#ifndef _POLLFS_KSYMS_H
#define _POLLFS_KSYMS_H

#include <linux/mutex.h>	/* before futex.h, which needs it since 6.12 */
#include <linux/futex.h>
#include <linux/ktime.h>
#include <linux/mm_types.h>
#include <linux/signal.h>
#include <linux/time_namespace.h>
#include <linux/wait.h>

struct futex_hash_bucket;
struct futex_q;
struct wake_q_head;

#include "generated/btf.h"

extern struct pollfs_ksyms pollfs_ksyms;

int pollfs_ksyms_init(void);
int pollfs_btf_check(void);

#endif /* _POLLFS_KSYMS_H */
