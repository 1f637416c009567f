# SPDX-License-Identifier: GPL-2.0
#
# make            the module, libpollfs, the tests and the examples
# make check      boot the QEMU guest and run the test suite in it
#                 (TESTS="NAME...": only those)
# make check-unprivileged   the same suite as uid/gid 65534
# make check-preempt        the suite with the guest kernel fully preemptible
# make check-smoke          a test of each kind and io_uring path only
# make check-debug          the suite on a KASAN, lockdep and kmemleak kernel
# make check-race           the suite and a long fuzz on a KCSAN kernel, with
#                           the module's line coverage
# make fuzz       the fuzzer in the guest, FUZZ_TIME s (600), FUZZ_SEED
# make run        boot the guest and run the demo (the main job)
# make shell      an interactive shell in the guest, module loaded
# make style      checkpatch on the kernel code; the kernel tables of the docs
# make install    libpollfs, headers, pkg-config file, man pages
# make uninstall  remove them again
# make install-module, make dkms-install: the module on this machine
# make deb        the Debian packages pollfs-dkms, pollfs-common, libpollfs1,
#                 libpollfs-dev
# make check-deb  install them in the guest with apt, DKMS builds the module
#
# The module is built for the guest kernel, KERNEL=NAME, a kernel of the
# table vm/kernels (make all, module, check, run, shell, fuzz, bench;
# KERNEL defaults to $POLLFS_KERNEL; none: the default kernel), against
# its headers and with the private layouts read from its BTF.  Its image,
# headers and vmlinux are fetched into build/ the first time (vm/setup
# --host), never onto the host, except for the default kernel's headers,
# which its metapackage installs there.  How, and where the module is
# built, vm/kernels' HOW says:
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

# TESTS="NAME...": only those tests.
check: setup
	$(MAKE) all
	vm/check $(TESTS)

# The smoke lane, for the kernels CI has no time to run the whole suite
# on: the module built for the kernel and loaded, then a test of each
# kind of object (the device, signal, timer, futex waited and watched,
# AIO, each through epoll), each io_uring path (poll, read and write,
# multishot read) and an unload and reload; about a minute.
SMOKE_TESTS = core-device signal-epoll-level timer-epoll-level \
	futex-wake-one futex-watch-basic aio-epoll-level aio-rw \
	uring-poll uring-rw uring-multishot-kinds module-reload
check-smoke: setup
	$(MAKE) module tests
	vm/check $(SMOKE_TESTS)

# The suite on a kernel built with KASAN, lockdep, kmemleak and the other
# checkers of vm/debug.config (vm/debug-kernel builds it once: tens of
# minutes), the module built against it out of the source tree.  That
# kernel runs several times slower under TCG: the tests' limits are
# stretched (DEBUG_TIME_SCALE) and the guest's timeout is long.
# DEBUG_SOURCE=6.12: the same checkers on Debian's linux-source-6.12.
DEBUG_SOURCE ?= 6.1
DEBUG_DIR = build/debug-kernel$(if $(filter-out 6.1,$(DEBUG_SOURCE)),-$(DEBUG_SOURCE))
DEBUG_TREE = $(CURDIR)/$(DEBUG_DIR)/linux
DEBUG_MODULE = $(CURDIR)/build/debug-module
DEBUG_TIME_SCALE ?= 4

check-debug: setup
	POLLFS_DEBUG_SOURCE=$(DEBUG_SOURCE) vm/debug-kernel >/dev/null
	$(MAKE) lib tests examples bench-build
	rm -rf $(DEBUG_MODULE)
	$(call staged-module,$(DEBUG_MODULE),$(DEBUG_TREE),$(DEBUG_TREE)/vmlinux)
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
	rm -rf $(RACE_MODULE)
	$(call staged-module,$(RACE_MODULE),$(RACE_TREE),$(RACE_TREE)/vmlinux,POLLFS_GCOV=1)
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
		$(MODULE_FILES) $(DKMS_SCRIPTS) dkms/kernel-postinst include \
		vm/kernels vm/kernel-version vm/lib.sh
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

# The tables of kernels in README.md, pollfs(7) and vm/README.md against
# vm/kernels (host-side, a second); checkpatch, sparse and W=1 on the
# module, cppcheck on the library: any finding fails.
style: host-setup $(CHECKPATCH)
	vm/check-kernel-docs
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
# this, dh_dkms adds build/dkms.conf) and make dkms-install installs.
DKMS_SRC = $(DESTDIR)/usr/src/pollfs-$(VERSION)
DKMS_SCRIPTS = dkms/build dkms/post-build dkms/btf-source dkms/btf-id
DKMS_HOOK = $(DESTDIR)/etc/kernel/postinst.d/pollfs-dkms

dkms-src: build/dkms.conf
	install -d $(DKMS_SRC)/module $(DKMS_SRC)/dkms \
		$(DKMS_SRC)/include/uapi/linux $(dir $(DKMS_HOOK))
	install -m 0644 Kbuild VERSION $(DKMS_SRC)/
	install -m 0644 $(filter-out $(MODULE_SCRIPTS),$(MODULE_FILES)) \
		$(DKMS_SRC)/module/
	install -m 0755 $(MODULE_SCRIPTS) $(DKMS_SRC)/module/
	install -m 0755 $(DKMS_SCRIPTS) $(DKMS_SRC)/dkms/
	install -m 0644 include/uapi/linux/pollfs.h $(DKMS_SRC)/include/uapi/linux/
	install -m 0755 dkms/kernel-postinst $(DKMS_HOOK)

# dkms.conf with the kernels of vm/kernels' DKMS column written in; its
# version is written in by dh_dkms -V, or by dkms-install.
build/dkms.conf: dkms.conf vm/kernels vm/kernel-version vm/lib.sh
	mkdir -p $(@D)
	kernels=$$(vm/kernel-version --dkms | sed 's/[\/&]/\\&/g') && \
		sed "s/#POLLFS_KERNELS#/$$kernels/" dkms.conf >$@

dkms-install: build/dkms.conf
	dkms remove pollfs/$(VERSION) --all >/dev/null 2>&1 || true
	rm -rf $(DKMS_SRC)
	$(MAKE) dkms-src
	sed 's/#MODULE_VERSION#/$(VERSION)/' build/dkms.conf >$(DKMS_SRC)/dkms.conf
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
# installed with apt as a user would (on 6.1 and 7.3 as an upgrade from
# the previous version's), the module built and signed by DKMS, loaded
# by what the boot runs, a program built with pkg-config, a few tests,
# then apt remove unloading it and README.md's apt purge line leaving
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
	shell style fuzz check-unprivileged check-smoke check-debug check-preempt check-race \
	style-build \
	install install-lib install-man uninstall install-module dkms-src \
	dkms-install dkms-uninstall deb deb-prev check-deb \
	clean bench bench-build
