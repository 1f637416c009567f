# SPDX-License-Identifier: MIT
# make syz (included by vm/lanes.mk; on demand, not in CI):
# coverage-guided fuzzing of pollfs with syzkaller, tests/syz/README.md.
# The KCOV kernel of vm/syz.config (vm/debug-kernel syz: tens of minutes
# once, cached in build/syz-kernel), the module built against it from
# this tree's module/, then tests/syz/run: the disk image, the
# description built into the syzkaller tree SYZKALLER=..., and
# syz-manager for SYZ_TIME (2h) with its workdir in build/syz/.
SYZ_TREE = $(CURDIR)/build/syz-kernel/linux
SYZ_MODULE = $(CURDIR)/build/syz-module
SYZ_TIME ?= 2h

#> syz syzkaller for SYZ_TIME (2h) on a KCOV kernel, SYZKALLER=PATH (not in CI)
syz:
	@test -n "$(SYZKALLER)" || { echo "make syz: set SYZKALLER=PATH, a syzkaller tree (tests/syz/README.md)" >&2; exit 2; }
	nice -n 19 vm/debug-kernel syz >/dev/null
	rm -rf $(SYZ_MODULE)
	$(call staged-module,$(SYZ_MODULE),$(SYZ_TREE),$(SYZ_TREE)/vmlinux)
	SYZKALLER=$(SYZKALLER) SYZ_TREE=$(SYZ_TREE) SYZ_TIME=$(SYZ_TIME) \
		SYZ_MODULE=$(SYZ_MODULE)/pollfs.ko tests/syz/run

.PHONY: syz
