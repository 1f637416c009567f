# SPDX-License-Identifier: GPL-2.0
#
# make            the module, libpollfs, the tests and the examples
# make check      boot the QEMU guest and run the test suite in it
# make check-unprivileged   the same suite as uid/gid 65534
# make check-preempt        the suite with the guest kernel fully preemptible
# make check-debug          the suite on a KASAN, lockdep and kmemleak kernel
# make check-race           the suite and a long fuzz on a KCSAN kernel, with
#                           the module's line coverage
# make fuzz       the fuzzer in the guest, FUZZ_TIME s (600), FUZZ_SEED
# make run        boot the guest and run the demo (the main job)
# make shell      an interactive shell in the guest, module loaded
# make style      checkpatch on the kernel code
# make install    libpollfs, headers, pkg-config file, man pages
# make uninstall  remove them again
# make install-module, make dkms-install: the module on this machine
# make deb        the Debian packages pollfs-dkms, libpollfs1, libpollfs-dev
# make check-deb  install them in the guest with dpkg, DKMS builds the module
#
# The module is built for the guest kernel: the one whose headers the
# linux-headers-amd64 package installed (vm/setup installs it), with the
# private layouts read from that kernel's BTF.  Override KDIR and BTF to
# build for another kernel.
#
# KERNEL=6.12 (make all, module, check, run, shell, fuzz, bench): Debian
# 12's 6.12 kernel instead (linux-image-6.12-amd64 from bookworm-security),
# which vm/setup fetches with its headers into build/kernel-6.12, never
# onto the host.  The module is built against those headers and that
# kernel's BTF out of this tree, in build/module-6.12/, so ./pollfs.ko
# stays the 6.1 one; POLLFS_KERNEL=6.12 is exported to vm/setup, vm/run
# and vm/kernel-version, which boot that kernel with that module.  KERNEL
# defaults to $POLLFS_KERNEL; none, or 6.1: the default kernel.
#
# KERNEL=6.1-rt: Debian 12's PREEMPT_RT flavour of 6.1
# (linux-image-rt-amd64 from bookworm-security), fetched and built for
# as 6.12 is, into build/kernel-6.1-rt and build/module-6.1-rt/.  On
# demand, not in CI.
#
# KERNEL=7.3: trixie-backports' 7.3, whose kbuild needs Debian 13's
# compiler and libraries: vm/setup makes build/kernel-7.3 a Debian 13
# build root with the headers installed, and the module is built in it
# (chroot, with a /proc of its own in a private mount namespace; root
# only), then copied to build/module-7.3/.
#
# The kernels and how each is had are the table vm/kernels.
#
# make check-preempt (KERNEL= as above): the suite with the guest booted
# preempt=full, or preempt=lazy on a kernel that has the lazy model but
# does not boot it already (read from the kernel's config); PREEMPT=MODE
# chooses.  Debian's 6.1 and 6.12 are built PREEMPT_DYNAMIC and boot
# voluntary, where a lock held where it may not be, or a wait that
# counts on not being preempted, hides.  7.3 boots lazy already (its
# build default), so it gets full; 6.1-rt is always fully preemptible:
# there it is make check.

KERNEL ?= $(POLLFS_KERNEL)
# host (the default kernel), fetch or chroot: vm/kernels' HOW.
KERNEL_HOW := $(shell POLLFS_KERNEL='$(KERNEL)' vm/kernel-version --how)
ifeq ($(KERNEL_HOW),)
$(error KERNEL=$(KERNEL): not a kernel of vm/kernels)
endif
ifneq ($(KERNEL_HOW),host)
export POLLFS_KERNEL := $(KERNEL)
KTREE = $(CURDIR)/build/kernel-$(KERNEL)
# Known once `vm/setup --host` (the module's prerequisite) has fetched it.
KVER ?= $(shell POLLFS_KERNEL=$(KERNEL) vm/kernel-version 2>/dev/null)
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
else
unexport POLLFS_KERNEL
endif

KVER ?= $(shell vm/kernel-version 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
BTF ?= $(CURDIR)/build/kernel/vmlinux
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man

# The project's one version, in the file VERSION: MAJOR.MINOR is the
# interface's (libpollfs's newest symbol version, the contract's
# "version 1.1"), PATCH counts releases of fixes to the module or the
# library.  The module's MODULE_VERSION (Kbuild defines POLLFS_VERSION;
# until module/main.c says MODULE_VERSION(POLLFS_VERSION), modinfo shows
# its old literal 0.1 and make check-deb notes it), libpollfs's file name
# and pkg-config Version, the installed man pages' headers, DKMS's
# PACKAGE_VERSION and the Debian packages (debian/rules checks that
# debian/changelog agrees) all take it from there.
VERSION := $(shell sed -n '/^[0-9]/p' $(CURDIR)/VERSION)
export POLLFS_VERSION := $(VERSION)

all: module lib tests examples bench-build

KBUILD = $(MAKE) -C $(KDIR) M=$(CURDIR) $(if $(BTF),POLLFS_BTF=$(BTF))

# The module's sources, for the builds outside this tree (make
# check-debug, DKMS): the Kbuild file and include/ go with them.
MODULE_SCRIPTS = module/gen-btf-header module/btf-path module/extract-vmlinux
MODULE_FILES = $(wildcard module/*.c module/*.h module/*.list) $(MODULE_SCRIPTS)

ifdef MODULE_OUT
# Another kernel's module: built out of this tree, from copies of the
# sources (cp -a keeps their times: only what changed is rebuilt), as
# make check-debug does.
ifdef BUILD_ROOT
module: kernel-setup
	mkdir -p $(BUILD_ROOT)/pollfs/module $(MODULE_OUT)
	cp -a Kbuild include $(BUILD_ROOT)/pollfs/
	cp -a $(MODULE_FILES) $(BUILD_ROOT)/pollfs/module/
	unshare --mount --fork sh -ec 'mount -t proc proc $(BUILD_ROOT)/proc; \
		exec env -u MAKEFLAGS -u MFLAGS chroot $(BUILD_ROOT) \
		make -C $(KDIR) M=/pollfs \
		POLLFS_BTF=$(BTF) modules'
	cp $(BUILD_ROOT)/pollfs/pollfs.ko $(MODULE_OUT)/
else
module: kernel-setup
	mkdir -p $(MODULE_OUT)/module
	cp -a Kbuild include $(MODULE_OUT)/
	cp -a $(MODULE_FILES) $(MODULE_OUT)/module/
	$(MAKE) -C $(KDIR) M=$(MODULE_OUT) POLLFS_BTF=$(BTF) modules
endif

# The kernel's image, headers and vmlinux (cached).
kernel-setup:
	vm/setup --host
else
# A fresh clone has no guest kernel yet: say so in one line.
module:
	@[ -r '$(BTF)' ] || { echo "make: no kernel BTF at $(BTF) yet: run 'make host-setup' (or 'make check', which does it) first, or give KDIR= and BTF=" >&2; exit 2; }
	$(KBUILD) modules
endif

# The project's own build: a warning is an error (not in make install or
# the Debian package build: userlib/Makefile says why).
lib:
	$(MAKE) -C userlib WERROR=1

tests: lib
	$(MAKE) -C tests

examples: lib
	$(MAKE) -C examples

# Installs what the guest pipeline needs, fetches the guest kernel and
# builds its root filesystem, all cached.
setup:
	vm/setup

# Only what building the module for the guest kernel needs: the host
# packages and that kernel's vmlinux, for its BTF; no root filesystem.
host-setup:
	vm/setup --host

check: setup
	$(MAKE) all
	vm/check

# The suite on a kernel built with KASAN, lockdep, kmemleak and the other
# checkers of vm/debug.config (vm/debug-kernel builds it once: tens of
# minutes), the module built against it out of the source tree.  That
# kernel runs several times slower under TCG: the tests' limits are
# stretched (DEBUG_TIME_SCALE) and the guest's timeout is long.
DEBUG_TREE = $(CURDIR)/build/debug-kernel/linux
DEBUG_MODULE = $(CURDIR)/build/debug-module
DEBUG_TIME_SCALE ?= 4

# $(call checking-module,TREE,OUT,ARGS): the module built out of this
# tree against vm/debug-kernel's TREE, in OUT, with kbuild's ARGS.
define checking-module
	rm -rf $(2)
	mkdir -p $(2)/module
	cp -a Kbuild include $(2)/
	cp -a $(MODULE_FILES) $(2)/module/
	$(MAKE) -C $(1) M=$(2) POLLFS_BTF=$(1)/vmlinux $(3) modules
endef

check-debug: setup
	vm/debug-kernel >/dev/null
	$(MAKE) lib tests examples bench-build
	$(call checking-module,$(DEBUG_TREE),$(DEBUG_MODULE))
	POLLFS_KO=$(DEBUG_MODULE)/pollfs.ko POLLFS_VM_TREE=$(DEBUG_TREE) \
		POLLFS_VM_TIMEOUT=5400 POLLFS_TIME_SCALE=$(DEBUG_TIME_SCALE) \
		vm/check

# The data-race lane: the suite, its fuzz test run for FUZZ_TIME s (600),
# on a KCSAN kernel (vm/debug-kernel race; tens of minutes, once).  A
# KCSAN report fails the run only if a frame of it is in pollfs
# (vm/kcsan-sort lists the kernel's own).  The module is built with gcov
# too: build/coverage/summary is the share of module/ lines the suite and
# the fuzzer ran, build/coverage/uncovered the lines they never did.
RACE_TREE = $(CURDIR)/build/race-kernel/linux
RACE_MODULE = $(CURDIR)/build/race-module
check-race: setup
	vm/debug-kernel race >/dev/null
	$(MAKE) lib tests examples bench-build
	$(call checking-module,$(RACE_TREE),$(RACE_MODULE),POLLFS_GCOV=1)
	rm -rf build/coverage
	POLLFS_KO=$(RACE_MODULE)/pollfs.ko POLLFS_VM_TREE=$(RACE_TREE) \
		POLLFS_VM_KCSAN=sort POLLFS_GCOV_OUT=build/coverage/data \
		POLLFS_FUZZ_TIME=$(FUZZ_TIME) POLLFS_VM_TIMEOUT=5400 \
		POLLFS_TIME_SCALE=$(DEBUG_TIME_SCALE) vm/check
	vm/coverage $(RACE_MODULE) build/coverage/data build/coverage

# The fuzzer (tests/fuzz.c) in the guest for FUZZ_TIME seconds (default
# 600), through the test runner, so that the kernel log is checked and
# the module must unload at the end.  FUZZ_SEED replays a seed that the
# output printed ("# seed N"); without it the fuzzer picks one.
FUZZ_TIME ?= 600
FUZZ_SEED ?=
fuzz: setup
	$(MAKE) module tests
	vm/run --timeout $$(($(FUZZ_TIME) + 300)) -- /usr/bin/env \
		POLLFS_FUZZ_TIME=$(FUZZ_TIME) POLLFS_FUZZ_SEED=$(FUZZ_SEED) \
		/pollfs/tests/run -t $$(($(FUZZ_TIME) + 60)) fuzz

# The suite with the guest kernel preemptible where make check's is not
# (the head of this file says why).  The mode is chosen from the
# kernel's own config, which its headers carry, on a kernel that can
# change it at boot (PREEMPT_DYNAMIC): preempt=lazy where the kernel has
# that model (ARCH_HAS_PREEMPT_LAZY, 6.13 on: full preemption for
# real-time tasks, at the next tick for the others) and is not built to
# boot it (PREEMPT_LAZY), else preempt=full.  One built fully
# preemptible (PREEMPT_RT) runs as it is.  PREEMPT=MODE overrides the
# choice.  The guest's init prints the model it runs ("preemption: ...").
PREEMPT ?=
check-preempt: setup
	$(MAKE) all
	@config=$(BUILD_ROOT)$(KDIR)/.config; mode=$(PREEMPT); \
	[ -r $$config ] || { echo "check-preempt: no $$config" >&2; exit 1; }; \
	if [ -z "$$mode" ] && grep -qx CONFIG_PREEMPT_DYNAMIC=y $$config; then \
		mode=full; \
		if grep -qx CONFIG_ARCH_HAS_PREEMPT_LAZY=y $$config && \
		   ! grep -qx CONFIG_PREEMPT_LAZY=y $$config; then \
			mode=lazy; \
		fi; \
	fi; \
	if [ -n "$$mode" ]; then \
		echo "check-preempt: booting $(KVER) with preempt=$$mode"; \
		POLLFS_VM_APPEND="$$POLLFS_VM_APPEND preempt=$$mode" vm/check; \
	elif grep -qxE 'CONFIG_PREEMPT(_RT)?=y' $$config; then \
		echo "check-preempt: $(KVER) is built fully preemptible"; \
		vm/check; \
	else \
		echo "check-preempt: $(KVER) cannot be made preemptible at boot" >&2; \
		exit 1; \
	fi

# The whole suite as an unprivileged user (uid and gid 65534): tests that
# need root skip.
check-unprivileged: setup
	$(MAKE) all
	vm/check -u 65534

# DKMS inside the guest: build, install and modprobe the module there.
check-dkms:
	vm/setup --rootfs dkms
	$(MAKE) lib tests
	tar -cf build/pollfs-src.tar Makefile Kbuild dkms.conf VERSION \
		$(MODULE_FILES) $(DKMS_SCRIPTS) dkms/kernel-postinst include
	vm/run --rootfs dkms --no-module --mem 3072 --timeout 1800 \
		--add build/pollfs-src.tar --add tests/dkms/check -- /check

# The main job: the demo's epoll loop, then a short comparison with
# timerfd, signalfd and eventfd, through epoll and io_uring (make bench
# runs the long one).
run: setup
	$(MAKE) all
	vm/run -- /bin/sh -c \
		'/pollfs/bin/demo && echo && /pollfs/bin/bench-run --quick timer signal futex aio uring'

shell: setup
	$(MAKE) all
	vm/run --interactive

# The benchmark programs (bench/), built by `make all`.
bench-build:
	$(MAKE) -C bench

# Runs them in the guest (about 10 minutes under TCG), plots the ratios
# into build/bench/bench.png and prints the table of build/bench/bench.csv.
bench: setup
	$(MAKE) all
	$(MAKE) -C bench
	@echo "bench: host load before the run: $$(cut -d' ' -f1-3 /proc/loadavg) ($$(nproc) CPUs)"
	vm/run --out build/bench -- /pollfs/bin/bench-run
	@echo "bench: host load after the run: $$(cut -d' ' -f1-3 /proc/loadavg) (the guest itself keeps up to 2 busy)"
	bench/plot build/bench/bench.csv build/bench/bench.png
	@bench/run --table build/bench/bench.csv

CHECKPATCH ?= build/checkpatch/checkpatch.pl
# After host-setup, whose apt-get must not run beside this one's.
$(CHECKPATCH): | host-setup
	vm/fetch-checkpatch $(dir $@)

# checkpatch, sparse and W=1 on the module, cppcheck on the library:
# any finding fails.
style: host-setup $(CHECKPATCH)
	$(CHECKPATCH) --no-tree --quiet -f module/*.c module/*.h \
		include/uapi/linux/pollfs.h
	$(MAKE) style-build
	cppcheck --enable=warning,style,performance,portability \
		--error-exitcode=1 --quiet -I include/uapi -I userlib userlib/*.c

# The build's own status goes into the log too: tee's would hide it.
style-build:
	touch module/*.c
	{ $(KBUILD) C=1 W=1 modules 2>&1; echo "build exit $$?"; } | \
		tee build/style.log
	grep -qx 'build exit 0' build/style.log
	! grep -E 'warning:|error:' build/style.log

# libpollfs (shared and static), its headers under INCLUDEDIR/pollfs
# (never INCLUDEDIR/linux: userlib/Makefile says why), libpollfs.pc and
# the man pages, their headers naming VERSION; DESTDIR stages them.
# make uninstall removes exactly those.
MANPAGES = $(wildcard man/*.3 man/*.7)

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

uninstall:
	$(MAKE) -C userlib uninstall PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) \
		INCLUDEDIR=$(INCLUDEDIR)
	rm -f $(foreach page,$(MANPAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(page)))/$(notdir $(page)))

# On this machine: for the running kernel, with its own BTF, unless
# KVER (and BTF) say otherwise.
install-module dkms-install: KVER = $(shell uname -r)
install-module dkms-install: BTF =

install-module: module
	$(KBUILD) INSTALL_MOD_PATH=$(INSTALL_MOD_PATH) modules_install
	depmod $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(KVER)

# The DKMS source tree, DESTDIR/usr/src/pollfs-VERSION, and the kernel
# hook that builds the module again when a kernel update changes its
# BTF (dkms/kernel-postinst): what pollfs-dkms ships (debian/rules runs
# this, dh_dkms adds dkms.conf) and make dkms-install installs.
DKMS_SRC = $(DESTDIR)/usr/src/pollfs-$(VERSION)
DKMS_SCRIPTS = dkms/build dkms/post-build dkms/btf-source dkms/btf-id
DKMS_HOOK = $(DESTDIR)/etc/kernel/postinst.d/pollfs-dkms

dkms-src:
	install -d $(DKMS_SRC)/module $(DKMS_SRC)/dkms \
		$(DKMS_SRC)/include/uapi/linux $(dir $(DKMS_HOOK))
	install -m 0644 Kbuild VERSION $(DKMS_SRC)/
	install -m 0644 $(filter-out $(MODULE_SCRIPTS),$(MODULE_FILES)) \
		$(DKMS_SRC)/module/
	install -m 0755 $(MODULE_SCRIPTS) $(DKMS_SRC)/module/
	install -m 0755 $(DKMS_SCRIPTS) $(DKMS_SRC)/dkms/
	install -m 0644 include/uapi/linux/pollfs.h $(DKMS_SRC)/include/uapi/linux/
	install -m 0755 dkms/kernel-postinst $(DKMS_HOOK)

# dkms.conf's version is written in here, as dh_dkms -V does.
dkms-install:
	dkms remove pollfs/$(VERSION) --all >/dev/null 2>&1 || true
	rm -rf $(DKMS_SRC)
	$(MAKE) dkms-src
	sed 's/#MODULE_VERSION#/$(VERSION)/' dkms.conf >$(DKMS_SRC)/dkms.conf
	dkms add pollfs/$(VERSION)
	dkms install pollfs/$(VERSION) -k $(KVER)

dkms-uninstall:
	dkms remove pollfs/$(VERSION) --all >/dev/null 2>&1 || true
	rm -rf $(DKMS_SRC) $(DKMS_HOOK)

# The Debian packages of this tree (debian/), built by dpkg-buildpackage
# from a copy of it in build/deb/pollfs-VERSION (the tree as it is, less
# what git ignores), and checked by lintian: build/deb/*.deb,
# build/deb/lintian.log.  Only the library is compiled: DKMS builds the
# module where pollfs-dkms is installed.  No guest is booted.
deb:
	tests/deb/build $(CURDIR)/build/deb

# The same tree under a lower version: the "previous release" that make
# check-deb upgrades from.
PREV_VERSION = $(VERSION)~prev
deb-prev:
	tests/deb/build --version $(PREV_VERSION) --no-lintian \
		$(CURDIR)/build/deb-prev

# In the guest, with a root filesystem of Debian's (12's for 6.1 and
# 6.12, 13's for 7.3) holding dkms and the kernel's headers: the packages
# installed with dpkg as a user would (on 6.1 and 7.3 as an upgrade from
# the previous version's), the module built by DKMS and loaded, a
# program built with pkg-config, a few tests, then dpkg --purge leaving
# nothing behind.  On the default kernel also a kernel update that
# replaces the image under the same release, and a boot of the updated
# image: tests/deb/README.md.  Each DKMS build takes minutes under TCG.
check-deb: deb deb-prev
	$(MAKE) lib tests
	tests/deb/run $(KERNEL)

clean:
	$(KBUILD) clean 2>/dev/null || true
	rm -rf module/generated
	$(MAKE) -C userlib clean
	$(MAKE) -C tests clean
	$(MAKE) -C examples clean

.PHONY: all module kernel-setup lib tests examples setup host-setup check check-dkms run \
	shell style fuzz check-unprivileged check-debug check-preempt check-race \
	style-build \
	install install-lib install-man uninstall install-module dkms-src \
	dkms-install dkms-uninstall deb deb-prev check-deb \
	clean bench bench-build
