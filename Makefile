# SPDX-License-Identifier: GPL-2.0
#
# pollfs: `make` builds the module, libpollfs, the tests, the examples
# and the benchmarks; `make check` boots the QEMU guest and runs the
# suite in it; `make help` lists every target.  The checks live in
# vm/lanes.mk, installing the module and packaging it in
# dkms/packaging.mk.
#
# The module is built for the guest kernel, KERNEL=NAME, a kernel of the
# table vm/kernels (KERNEL defaults to $POLLFS_KERNEL; none: the default
# kernel), against its headers and with the private layouts read from
# its BTF.  Its image, headers and vmlinux are fetched into build/ the
# first time (vm/setup --host), never onto the host, except for the
# default kernel's headers, which its metapackage installs there.  How,
# and where the module is built, vm/kernels' HOW says:
#   host    the default kernel: in this tree, ./pollfs.ko;
#   fetch   out of this tree, in build/module-NAME/;
#   chroot  its kbuild needs another Debian release's compiler and
#           libraries: build/kernel-NAME is a build root of that
#           release, the module is built in it (chroot, with a /proc of
#           its own in a private mount namespace; root only), then
#           copied to build/module-NAME/.
# POLLFS_KERNEL=NAME is exported to vm/setup, vm/run and
# vm/kernel-version, which boot that kernel with that module.  Override
# KDIR and BTF to build for a kernel of your own.

KERNEL ?= $(POLLFS_KERNEL)
KERNEL_HOW := $(shell POLLFS_KERNEL='$(KERNEL)' vm/kernel-version --how)
ifeq ($(KERNEL_HOW),)
$(error KERNEL=$(KERNEL): not a kernel of vm/kernels)
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
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man

# The project's one version, in the file VERSION: MAJOR.MINOR is the
# interface's (libpollfs's newest symbol version, the contract's
# "version 1.2"), PATCH counts releases of fixes to the module or the
# library.  The module's MODULE_VERSION (Kbuild defines POLLFS_VERSION),
# libpollfs's file name and pkg-config Version, the installed man pages'
# headers, DKMS's PACKAGE_VERSION and the Debian packages (debian/rules
# checks that debian/changelog agrees) all take it from there.
VERSION := $(shell sed -n '/^[0-9]/p' $(CURDIR)/VERSION)
export POLLFS_VERSION := $(VERSION)

#>> Building and installing (Makefile)
#> all the module, libpollfs, the tests, the examples, the benchmarks
all: module lib tests examples bench-build

KBUILD = $(MAKE) -C $(KDIR) M=$(CURDIR) $(if $(BTF),POLLFS_BTF=$(BTF))

# The module's sources, for the builds outside this tree (make
# check-debug, DKMS): the Kbuild file and include/ go with them.
MODULE_SCRIPTS = module/gen-btf-header module/btf-path module/extract-vmlinux
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

#> module pollfs.ko for KERNEL= (default: the default kernel of vm/kernels)
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

# The project's own build: a warning is an error (not in make install or
# the Debian package build: userlib/Makefile says why).
#> lib libpollfs, shared and static, and libpollfs.pc
lib:
	$(MAKE) -C userlib WERROR=1

#> tests the test programs and their runner (run in the guest)
tests: lib
	$(MAKE) -C tests

#> examples the demo and the event-loop examples
examples: lib
	$(MAKE) -C examples

# The benchmark programs (bench/); vm/lanes.mk runs them.
#> bench-build the benchmark programs
bench-build:
	$(MAKE) -C bench

# libpollfs (shared and static), its headers under INCLUDEDIR/pollfs
# (never INCLUDEDIR/linux: userlib/Makefile says why), libpollfs.pc and
# the man pages, their headers naming VERSION; DESTDIR stages them.
# make uninstall removes exactly those.
MANPAGES = $(wildcard man/*.3 man/*.7)

#> install libpollfs, its headers, libpollfs.pc, the man pages (PREFIX, DESTDIR)
install: install-lib install-man

install-lib:
	$(MAKE) -C userlib install PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) \
		INCLUDEDIR=$(INCLUDEDIR)

install-man:
	install -d $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7
	for page in $(MANPAGES); do \
		dest=$(DESTDIR)$(MANDIR)/man$${page##*.}/$${page##*/}; \
		sed '/^\.TH /s/"pollfs[^"]*"/"pollfs $(VERSION)"/' $$page >$$dest && \
		chmod 0644 $$dest || exit 1; \
	done

#> uninstall remove exactly what make install installed
uninstall:
	$(MAKE) -C userlib uninstall PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) \
		INCLUDEDIR=$(INCLUDEDIR)
	rm -f $(foreach page,$(MANPAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(page)))/$(notdir $(page)))

#> clean remove what the build made
clean:
	$(KBUILD) clean 2>/dev/null || true
	rm -rf module/generated
	$(MAKE) -C userlib clean
	$(MAKE) -C tests clean
	$(MAKE) -C examples clean

# make help: the targets, in groups, from the "#>" lines above them
# ("#>>" opens a group).
#> help this list
help:
	@awk '/^#>> /{ sub(/^#>> /, ""); printf "\n%s\n", $$0; next } \
	     /^#> /{ sub(/^#> /, ""); t = $$1; sub(/^[^ ]+ +/, ""); \
		     printf "  make %-22s %s\n", t, $$0 }' $(MAKEFILE_LIST)

include vm/lanes.mk dkms/packaging.mk

.PHONY: all module kernel-setup lib tests examples bench-build install \
	install-lib install-man uninstall clean help
