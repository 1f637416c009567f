/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel internals pollfs uses and the kernel does not export, as
 * module/internals.list names them, in generated/btf.h: the offsets of
 * the private members, read from the target kernel's BTF when the module
 * is built; a static call to each function and, in struct pollfs_ksyms,
 * a typed pointer to each variable, resolved by name when the module
 * loads (ksyms.c).
 *
 * Functions are called through static calls, never through a pointer:
 * with IBT (CONFIG_X86_KERNEL_IBT, Debian's since 6.2), a function the
 * kernel itself never calls indirectly loses its ENDBR at boot on a CPU
 * that enforces IBT, and an indirect call to it is a control protection
 * fault.  A static call is a direct call (or a direct jump from its
 * trampoline), which needs no ENDBR.
 */
#ifndef _POLLFS_KSYMS_H
#define _POLLFS_KSYMS_H

#include <linux/mutex.h>	/* before futex.h, which needs it since 6.12 */
#include <linux/futex.h>
#include <linux/ktime.h>
#include <linux/mm_types.h>
#include <linux/rethook.h>
#include <linux/signal.h>
#include <linux/static_call.h>
#include <linux/time_namespace.h>
#include <linux/wait.h>

struct futex_hash_bucket;
struct futex_q;
struct wake_q_head;

#include "generated/btf.h"

extern struct pollfs_ksyms pollfs_ksyms;

/* pollfs_call(futex_unqueue)(q): the kernel's futex_unqueue(q). */
#define pollfs_call(name)	static_call(pollfs_##name)

int pollfs_ksyms_init(void);
int pollfs_btf_check(void);

#endif /* _POLLFS_KSYMS_H */
