# SPDX-License-Identifier: GPL-2.0
#
# The checks, included by the top Makefile: the guest's lanes, which
# vm/setup, vm/run and vm/check drive (docs/testing.md says what each
# is for, vm/README.md how the harness works), the benchmarks and the
# style check.  Every variable of vm/kernel.mk (KERNEL, KDIR, BTF,
# BUILD_ROOT, staged-module) holds.

#>> Checks, in the QEMU guest unless said (vm/lanes.mk)

# Installs what the guest pipeline needs, fetches the guest kernel and
# builds its root filesystem, all cached.
#> setup install the host packages, fetch the kernel, build the root filesystem
setup:
	vm/setup

# Only what building the module for the guest kernel needs: the host
# packages and that kernel's vmlinux, for its BTF; no root filesystem.
host-setup:
	vm/setup --host

# TESTS="NAME...": only those tests.
#> check the suite (TESTS="NAME..." for some); the README's test command
check: setup
	$(MAKE) all
	vm/check $(TESTS)

# The smoke lane, for the kernels CI has no time to run the whole suite
# on: the module built for the kernel and loaded, then a test of each
# kind of object (the device, signal, timer, futex waited and watched,
# AIO, each through epoll), each io_uring path (poll, read and write,
# multishot read) and an unload and reload; about a minute.
SMOKE_TESTS = core-device epoll-level \
	futex-wake-one futex-watch-basic aio-rw \
	uring-poll uring-rw uring-multishot-kinds module-reload
#> check-smoke a test of each kind and io_uring path, on KERNEL=
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

#> check-debug the suite on a KASAN, lockdep, kmemleak kernel (DEBUG_SOURCE=6.12)
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
#> check-race the suite and a long fuzz on a KCSAN kernel, with coverage
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
#> fuzz the fuzzer for FUZZ_TIME s (600), FUZZ_SEED= replays
fuzz: setup
	$(MAKE) module tests
	vm/run --timeout $$(($(FUZZ_TIME) + 300)) -- /usr/bin/env \
		POLLFS_FUZZ_TIME=$(FUZZ_TIME) POLLFS_FUZZ_SEED=$(FUZZ_SEED) \
		/pollfs/tests/run -t $$(($(FUZZ_TIME) + 60)) fuzz

# Coverage-guided fuzzing with syzkaller on a KCOV kernel, on demand
# (tests/syz/README.md): make syz SYZKALLER=PATH.
include tests/syz/syz.mk

# The suite with the guest kernel preemptible where make check's is not.
# Debian's 6.1 and 6.12 are built PREEMPT_DYNAMIC and boot voluntary,
# where a lock held where it may not be, or a wait that counts on not
# being preempted, hides.  7.3 boots lazy already (its build default),
# so it gets full; 6.1-rt is always fully preemptible: there it is make
# check.  vm/check-preempt chooses the mode from the kernel's own
# config; PREEMPT=MODE overrides the choice.
PREEMPT ?=
#> check-preempt the suite with the guest fully preemptible (PREEMPT=MODE)
check-preempt: setup
	$(MAKE) all
	vm/check-preempt $(BUILD_ROOT)$(KDIR)/.config $(KVER) $(PREEMPT)

# The AIO tests on a guest booted with two NUMA nodes (numa=fake=2),
# freed pages poisoned (page_poison=1) and full preemption (preempt=full):
# what tests/aio-ring-migrate needs to catch an AIO object reading a ring
# page that migration has freed.  Without two nodes it skips, without the
# poison a read of the freed page looks like a read of the live one, and
# without full preemption the reader is never preempted inside the
# kernel, where the race is: make check and make check-preempt boot
# without the first two.  TESTS="NAME..." runs those instead.  A few
# minutes; on demand, not in CI.
AIO_NUMA_APPEND = preempt=full numa=fake=2 page_poison=1
AIO_TESTS = $(sort $(notdir $(basename $(wildcard tests/aio-*.c))))
#> check-aio-numa the AIO tests on two NUMA nodes, poisoned, preemptible
check-aio-numa: setup
	$(MAKE) all
	POLLFS_VM_APPEND="$$POLLFS_VM_APPEND $(AIO_NUMA_APPEND)" \
		vm/check $(or $(TESTS),$(AIO_TESTS))

# The whole suite as an unprivileged user (uid and gid 65534): tests that
# need root skip.
#> check-unprivileged the suite as uid and gid 65534
check-unprivileged: setup
	$(MAKE) all
	vm/check -u 65534

# The main job: the demo's epoll loop, then a short comparison with
# timerfd, signalfd and eventfd, through epoll and io_uring (make bench
# runs the long one).
#> run the main job: the demo, then a short comparison with the stock fds
run: setup
	$(MAKE) all
	vm/run -- /bin/sh -c \
		'/pollfs/bin/demo && echo && /pollfs/bin/bench-run --quick timer signal futex aio uring'

#> shell an interactive shell in the guest, the module loaded
shell: setup
	$(MAKE) all
	vm/run --interactive

# Runs them in the guest (about 10 minutes under TCG), plots the ratios
# into build/bench/bench.png and prints the table of build/bench/bench.csv.
#> bench the benchmarks against eventfd, signalfd, timerfd (minutes)
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
#> style on the host: checkpatch, sparse and W=1, cppcheck, the kernel tables, the kind list
style: host-setup $(CHECKPATCH)
	vm/check-kernel-docs
	vm/check-kind-list
	$(CHECKPATCH) --no-tree --quiet -f module/*.c module/*.h \
		include/uapi/linux/pollfs.h
	$(MAKE) style-build
	cppcheck --enable=warning,style,performance,portability \
		--error-exitcode=1 --quiet -I include/uapi -I userlib userlib/*.c

# A copy of the module's sources built whole (build/style, staged as
# check-debug stages its module), so that every file is compiled and
# checked and none of this tree's is touched.  The build's own status
# goes into the log too: tee's would hide it.
STYLE_STAGE = $(if $(BUILD_ROOT),$(ROOT_STAGE),$(CURDIR))/build/style
style-build:
	{ $(MAKE) --no-print-directory style-kbuild 2>&1; \
		echo "build exit $$?"; } | tee build/style.log
	grep -qx 'build exit 0' build/style.log
	! grep -E 'warning:|error:' build/style.log

style-kbuild:
	rm -rf $(BUILD_ROOT)$(STYLE_STAGE)
	$(call staged-module,$(STYLE_STAGE),$(KDIR),$(BTF),C=1 W=1,$(BUILD_ROOT))

.PHONY: setup host-setup check check-smoke check-debug check-race fuzz \
	check-preempt check-aio-numa check-unprivileged run shell bench \
	style style-build style-kbuild
