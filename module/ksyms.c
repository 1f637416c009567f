// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel symbols that are not exported to modules.
 *
 * kallsyms_lookup_name() itself is not exported; registering a kprobe on
 * it makes the kprobe core look its address up for us.  Every symbol of
 * module/internals.list is resolved once, at load time, and a missing
 * one refuses the load with its name, but a var? variable on a kernel
 * without KALLSYMS_ALL (Debian's arm64 6.1), whose kallsyms names no
 * data: its pointer stays NULL, and the code that reads one does
 * without it there.  Functions,
 * kallsyms_lookup_name() too, are reached through static calls (see
 * ksyms.h: IBT).
 */

#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/string.h>

#define POLLFS_KSYMS_DEFINE
#include "ksyms.h"

struct pollfs_ksyms pollfs_ksyms;

DEFINE_STATIC_CALL_NULL(pollfs_kallsyms_lookup_name, kallsyms_lookup_name);

static const struct {
	const char *name;
	struct static_call_key *key;
	void *tramp;
} pollfs_ksym_funcs[] = {
#define X(name) { #name, &STATIC_CALL_KEY(pollfs_##name),		\
		  STATIC_CALL_TRAMP_ADDR(pollfs_##name) },
	POLLFS_KSYM_FUNCS(X)
#undef X
};

static const struct {
	const char *name;
	size_t offset;
	bool optional;
} pollfs_ksym_vars[] = {
#define X(name) { #name, offsetof(struct pollfs_ksyms, name), false },
	POLLFS_KSYM_VARS(X)
#undef X
#define X(name) { #name, offsetof(struct pollfs_ksyms, name),	\
		  !IS_ENABLED(CONFIG_KALLSYMS_ALL) },
	POLLFS_KSYM_OPTIONAL_VARS(X)
#undef X
};

/*
 * The probe may sit past the function's first instruction (after an
 * ENDBR when IBT is on).  kallsyms tells the offset; take it off.
 */
static unsigned long pollfs_function_start(unsigned long addr)
{
	char sym[KSYM_SYMBOL_LEN];
	unsigned long offset;
	char *plus, *slash;

	sprint_symbol(sym, addr);
	plus = strchr(sym, '+');
	slash = plus ? strchr(plus, '/') : NULL;
	if (!slash)
		return 0;
	*slash = '\0';
	if (kstrtoul(plus + 1, 0, &offset) || offset > addr)
		return 0;
	*plus = '\0';
	if (strcmp(sym, "kallsyms_lookup_name"))
		return 0;
	return addr - offset;
}

static unsigned long pollfs_ksym_lookup(const char *name, bool optional)
{
	unsigned long addr = static_call(pollfs_kallsyms_lookup_name)(name);

	if (!addr && !optional)
		pr_err("kernel symbol %s not found; this kernel is not supported\n",
		       name);
	return addr;
}

static int pollfs_ksyms_resolve(void)
{
	unsigned long addr;
	unsigned int i;
	int err = 0;

	for (i = 0; i < ARRAY_SIZE(pollfs_ksym_funcs); i++) {
		addr = pollfs_ksym_lookup(pollfs_ksym_funcs[i].name, false);
		if (!addr) {
			err = -ENOENT;
			continue;
		}
		__static_call_update(pollfs_ksym_funcs[i].key,
				     pollfs_ksym_funcs[i].tramp, (void *)addr);
	}
	for (i = 0; i < ARRAY_SIZE(pollfs_ksym_vars); i++) {
		addr = pollfs_ksym_lookup(pollfs_ksym_vars[i].name,
					  pollfs_ksym_vars[i].optional);
		if (!addr) {
			if (!pollfs_ksym_vars[i].optional)
				err = -ENOENT;
			continue;
		}
		*(unsigned long *)((char *)&pollfs_ksyms +
				   pollfs_ksym_vars[i].offset) = addr;
	}
	return err;
}

int pollfs_ksyms_init(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	unsigned long addr;
	int err;

	err = register_kprobe(&kp);
	if (err) {
		pr_err("cannot locate kallsyms_lookup_name with a kprobe (%d); this kernel is not supported\n",
		       err);
		return err;
	}
	addr = pollfs_function_start((unsigned long)kp.addr);
	unregister_kprobe(&kp);
	if (!addr) {
		pr_err("kprobe on kallsyms_lookup_name landed at %pS; this kernel is not supported\n",
		       kp.addr);
		return -ENOENT;
	}
	static_call_update(pollfs_kallsyms_lookup_name,
			   (typeof(&kallsyms_lookup_name))addr);
	return pollfs_ksyms_resolve();
}
