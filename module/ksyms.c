// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel symbols that are not exported to modules.
 *
 * kallsyms_lookup_name() itself is not exported; registering a kprobe on
 * it makes the kprobe core look its address up for us.  Every symbol of
 * module/internals.list is resolved once, at load time, and a missing
 * one refuses the load with its name.
 */

#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/string.h>

#include "ksyms.h"

struct pollfs_ksyms pollfs_ksyms;

static const struct {
	const char *name;
	size_t offset;
} pollfs_ksym_slots[] = {
#define X(name) { #name, offsetof(struct pollfs_ksyms, name) },
	POLLFS_KSYMS(X)
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

static int pollfs_ksyms_resolve(unsigned long (*lookup_name)(const char *))
{
	unsigned long addr;
	unsigned int i;
	int err = 0;

	for (i = 0; i < ARRAY_SIZE(pollfs_ksym_slots); i++) {
		addr = lookup_name(pollfs_ksym_slots[i].name);
		if (!addr) {
			pr_err("kernel symbol %s not found; this kernel is not supported\n",
			       pollfs_ksym_slots[i].name);
			err = -ENOENT;
			continue;
		}
		*(unsigned long *)((char *)&pollfs_ksyms +
				   pollfs_ksym_slots[i].offset) = addr;
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
	return pollfs_ksyms_resolve((void *)addr);
}
