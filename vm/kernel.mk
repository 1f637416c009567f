# SPDX-License-Identifier: GPL-2.0
#
# The kernel the module is built for, and make module, included by the
# top Makefile; vm/kernel-version and vm/setup are the scripts it drives.
# KERNEL=NAME is a kernel of vm/kernels (KERNEL defaults to
# $POLLFS_KERNEL; none: the default kernel): the module is built against
# its headers, with the private layouts read from its BTF.  Its image,
# headers and vmlinux are fetched into build/ the first time (vm/setup
# --host), never onto the host, except for the default kernel's headers,
# which its metapackage installs there.  vm/kernels' HOW (its header
# says what each means) also says where the module is built: host, in
# this tree, ./pollfs.ko; fetch, in build/module-NAME/; chroot, in the
# build root build/kernel-NAME (chroot, with a /proc of its own in a
# private mount namespace; root only), then copied to build/module-NAME/.
# POLLFS_KERNEL=NAME is exported to vm/setup, vm/run and
# vm/kernel-version, which boot that kernel with that module.  Override
# KDIR and BTF to build for a kernel of your own.  These variables and
# staged-module hold in vm/lanes.mk and dkms/packaging.mk too.

KERNEL ?= $(POLLFS_KERNEL)
KERNEL_HOW := $(shell POLLFS_KERNEL='$(KERNEL)' vm/kernel-version --how)
ifeq ($(KERNEL_HOW),)
$(error KERNEL=$(KERNEL): not a kernel of vm/kernels)
endif
ifeq ($(KERNEL_HOW),arm64)
$(error KERNEL=$(KERNEL) is an arm64 kernel: vm/arm64 builds for it and boots it (vm/README.md))
endif
# Where vm/setup keeps it.
KTREE := $(CURDIR)/$(shell POLLFS_KERNEL='$(KERNEL)' vm/kernel-version --tree)
ifeq ($(KERNEL_HOW),host)
unexport POLLFS_KERNEL
KDIR ?= /lib/modules/$(KVER)/build
BTF ?= $(KTREE)/vmlinux
else
export POLLFS_KERNEL := $(KERNEL)
MODULE_OUT = $(CURDIR)/build/module-$(KERNEL)
ifeq ($(KERNEL_HOW),chroot)
BUILD_ROOT = $(KTREE)
# Paths inside the build root.
KDIR ?= /usr/src/linux-headers-$(KVER)
BTF ?= /vmlinux
else
KDIR ?= $(KTREE)/usr/src/linux-headers-$(KVER)
BTF ?= $(KTREE)/vmlinux
endif
endif
# Known once kernel-setup (the module's prerequisite) has fetched it:
# expanded only when a recipe runs.
KVER ?= $(shell POLLFS_KERNEL='$(KERNEL)' vm/kernel-version 2>/dev/null)

KBUILD = $(MAKE) -C $(KDIR) M=$(CURDIR) $(if $(BTF),POLLFS_BTF=$(BTF))

# The module's sources, for the builds outside this tree (make
# check-debug, DKMS): the Kbuild file and include/ go with them.
MODULE_SCRIPTS = module/gen-btf-header module/btf-path module/extract-btf \
	module/extract-vmlinux
MODULE_FILES = $(wildcard module/*.c module/*.h module/*.list) $(MODULE_SCRIPTS)

# $(call staged-module,DIR,KDIR,BTF,ARGS,ROOT): the module built out of
# this tree, from copies of its sources in DIR (cp -a keeps their times:
# only what changed is rebuilt), against the headers in KDIR and the BTF
# in BTF, with kbuild's ARGS; in the build root ROOT if one is given,
# DIR, KDIR and BTF then being paths inside it (chroot, with a /proc of
# its own in a private mount namespace).  The Kbuild file and include/
# go with the sources.  "+": a make of ours, for -n and the jobserver;
# not the build root's, which shares neither.
define staged-module
	mkdir -p $(5)$(1)/module
	cp -a Kbuild include $(5)$(1)/
	cp -a $(MODULE_FILES) $(5)$(1)/module/
	$(if $(5),unshare --mount --fork sh -ec 'mount -t proc proc $(5)/proc; \
		exec env -u MAKEFLAGS -u MFLAGS chroot $(5) "$$@"' sh make,+$(MAKE)) \
		-C $(2) M=$(1) POLLFS_BTF=$(3) $(4) modules
endef

# make module (the top Makefile lists it): one of three.
ifdef BUILD_ROOT
# Staged under this tree's own path inside the build root, which every
# clone of the project that shares the root then stages apart.
ROOT_STAGE = /pollfs$(CURDIR)
module: kernel-setup
	$(call staged-module,$(ROOT_STAGE),$(KDIR),$(BTF),,$(BUILD_ROOT))
	mkdir -p $(MODULE_OUT)
	cp $(BUILD_ROOT)$(ROOT_STAGE)/pollfs.ko $(MODULE_OUT)/
else ifdef MODULE_OUT
module: kernel-setup
	$(call staged-module,$(MODULE_OUT),$(KDIR),$(BTF))
else
module: kernel-setup
	$(KBUILD) modules
endif

# The kernel's image, headers and vmlinux, fetched once (vm/setup --host
# says what it needs, if anything, to do so): only when the BTF the
# build reads is the harness's, not for install-module's or one given.
kernel-setup:
	@$(if $(filter $(CURDIR)/build/%,$(BUILD_ROOT)$(BTF)), \
		test -f $(BUILD_ROOT)$(BTF) || vm/setup --host,:)

.PHONY: module kernel-setup
