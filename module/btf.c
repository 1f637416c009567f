// SPDX-License-Identifier: GPL-2.0
/*
 * The private layouts in generated/btf.h were read from one kernel's BTF
 * when the module was built.  Load only on that kernel: its BTF must be
 * the same bytes.  They are read as sysfs hands them out, from
 * /sys/kernel/btf/vmlinux, not through the symbols that bound them in
 * memory, which kallsyms names only with KALLSYMS_ALL.
 */

#include <linux/crc32.h>
#include <linux/fs.h>
#include <linux/slab.h>

#include "ksyms.h"

#define POLLFS_BTF_FILE		"/sys/kernel/btf/vmlinux"
#define POLLFS_BTF_CHUNK	(64 * 1024)

int pollfs_btf_check(void)
{
	struct file *file;
	size_t size = 0;
	loff_t pos = 0;
	u32 crc = ~0;
	ssize_t n;
	void *buf;

	file = filp_open(POLLFS_BTF_FILE, O_RDONLY, 0);
	if (IS_ERR(file)) {
		pr_err("cannot open %s (%ld), where pollfs checks that this is the kernel it was built for\n",
		       POLLFS_BTF_FILE, PTR_ERR(file));
		return PTR_ERR(file);
	}
	buf = kmalloc(POLLFS_BTF_CHUNK, GFP_KERNEL);
	if (!buf) {
		filp_close(file, NULL);
		return -ENOMEM;
	}
	while ((n = kernel_read(file, buf, POLLFS_BTF_CHUNK, &pos)) > 0) {
		crc = crc32_le(crc, buf, n);
		size += n;
	}
	kfree(buf);
	filp_close(file, NULL);
	if (n < 0) {
		pr_err("cannot read %s (%zd)\n", POLLFS_BTF_FILE, n);
		return n;
	}
	crc ^= ~0;
	if (size != POLLFS_BTF_SIZE || crc != POLLFS_BTF_CRC) {
		pr_err("built for another kernel: this kernel's BTF (%zu bytes, crc %#x) is not the one pollfs was built from (%u bytes, crc %#x); rebuild pollfs against this kernel\n",
		       size, crc, POLLFS_BTF_SIZE, POLLFS_BTF_CRC);
		return -ENOEXEC;
	}
	return 0;
}
