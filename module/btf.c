// SPDX-License-Identifier: GPL-2.0
/*
 * The private layouts in generated/btf.h were read from one kernel's BTF
 * when the module was built.  Load only on that kernel: its BTF blob must
 * be the same bytes.
 */

#include <linux/crc32.h>

#include "ksyms.h"

int pollfs_btf_check(void)
{
	size_t size = pollfs_ksyms.__stop_BTF - pollfs_ksyms.__start_BTF;
	u32 crc;

	crc = size == POLLFS_BTF_SIZE ?
	      crc32_le(~0, pollfs_ksyms.__start_BTF, size) ^ ~0 : 0;
	if (size != POLLFS_BTF_SIZE || crc != POLLFS_BTF_CRC) {
		pr_err("built for another kernel: this kernel's BTF (%zu bytes, crc %#x) is not the one pollfs was built from (%u bytes, crc %#x); rebuild pollfs against this kernel\n",
		       size, crc, POLLFS_BTF_SIZE, POLLFS_BTF_CRC);
		return -ENOEXEC;
	}
	return 0;
}
