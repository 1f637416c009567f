// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel symbols that are not exported to modules.
 *
 * kallsyms_lookup_name() itself is not exported; registering a kprobe on
 * it makes the kprobe core look its address up for us.  Every symbol a
 * kind needs is resolved once, at load time, and a missing one refuses
 * the load with its name.
 */

#include <linux/crc32.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/string.h>

#include "core.h"
#include "generated/btf.h"

static unsigned long (*pollfs_lookup_name)(const char *name);

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

/*
 * The private layouts in generated/btf.h were read from one kernel's
 * BTF.  Load only on that kernel: its BTF blob must be the same bytes.
 */
static int pollfs_btf_check(void)
{
	const u8 *start = pollfs_ksym("__start_BTF");
	const u8 *stop = pollfs_ksym("__stop_BTF");
	size_t size;
	u32 crc;

	if (!start || !stop)
		return -ENOENT;
	size = stop - start;
	crc = size == POLLFS_BTF_SIZE ? crc32_le(~0, start, size) ^ ~0 : 0;
	if (size != POLLFS_BTF_SIZE || crc != POLLFS_BTF_CRC) {
		pr_err("built for another kernel: this kernel's BTF (%zu bytes, crc %#x) is not the one pollfs was built from (%u bytes, crc %#x); rebuild pollfs against this kernel\n",
		       size, crc, POLLFS_BTF_SIZE, POLLFS_BTF_CRC);
		return -ENOEXEC;
	}
	return 0;
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
	pollfs_lookup_name = (void *)addr;
	return pollfs_btf_check();
}

/* Returns the address of @name, or NULL after saying it is missing. */
void *pollfs_ksym(const char *name)
{
	void *addr = (void *)pollfs_lookup_name(name);

	if (!addr)
		pr_err("kernel symbol %s not found; this kernel is not supported\n",
		       name);
	return addr;
}
