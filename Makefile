# SPDX-License-Identifier: GPL-2.0
#
# pollfs: `make` builds the module, libpollfs, the tests, the examples
# and the benchmarks, `make check` runs the suite in the QEMU guest,
# `make help` lists every target.  Here: building and installing.  The
# kernel the module is built for (KERNEL=, KDIR, BTF) and make module:
# vm/kernel.mk; the checks: vm/lanes.mk; the packaging: dkms/packaging.mk.

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man

# The project's one version, the file VERSION: MAJOR.MINOR is the
# interface's (libpollfs's newest symbol version, the contract's
# "version 1.2"), PATCH counts releases of fixes to the module or the
# library.  Kbuild, userlib, the man pages, DKMS and debian/ take it.
VERSION := $(shell sed -n '/^[0-9]/p' $(CURDIR)/VERSION)
export POLLFS_VERSION := $(VERSION)

#>> Building and installing (Makefile)
#> all the module, libpollfs, the tests, the examples, the benchmarks
all: module lib tests examples bench-build

#> module pollfs.ko for KERNEL= (default: the default kernel of vm/kernels)
include vm/kernel.mk

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

#> bench-build the benchmark programs
bench-build:
	$(MAKE) -C bench

# libpollfs (shared and static), its headers under INCLUDEDIR/pollfs
# (never INCLUDEDIR/linux: userlib/Makefile says why), libpollfs.pc and
# the man pages, their headers naming VERSION; DESTDIR stages them.
# make uninstall removes exactly those.
MANPAGES = $(wildcard man/*.3 man/*.7)
MAN_INSTALLED = $(foreach page,$(MANPAGES),\
	$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(page)))/$(notdir $(page)))

#> install libpollfs, its headers, libpollfs.pc, the man pages (PREFIX, DESTDIR)
install: install-lib install-man

install-lib:
	$(MAKE) -C userlib install PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) \
		INCLUDEDIR=$(INCLUDEDIR)

install-man:
	install -d $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7
	install -m 0644 $(filter %.3,$(MANPAGES)) $(DESTDIR)$(MANDIR)/man3/
	install -m 0644 $(filter %.7,$(MANPAGES)) $(DESTDIR)$(MANDIR)/man7/
	sed -i '/^\.TH /s/"pollfs[^"]*"/"pollfs $(VERSION)"/' $(MAN_INSTALLED)

#> uninstall remove exactly what make install installed
uninstall:
	$(MAKE) -C userlib uninstall PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) \
		INCLUDEDIR=$(INCLUDEDIR)
	rm -f $(MAN_INSTALLED)

#> clean remove what the build made
clean:
	$(KBUILD) clean 2>/dev/null || true
	rm -rf module/generated
	$(MAKE) -C userlib clean
	$(MAKE) -C tests clean
	$(MAKE) -C examples clean

# The "#>" lines above the targets ("#>>": a group), makefile by makefile.
#> help this list
help:
	@awk '/^#>> /{ sub(/^#>> /, ""); printf "\n%s\n", $$0; next } \
	     /^#> /{ sub(/^#> /, ""); t = $$1; sub(/^[^ ]+ +/, ""); \
		     printf "  make %-22s %s\n", t, $$0 }' $(MAKEFILE_LIST)

include vm/lanes.mk dkms/packaging.mk

.PHONY: all lib tests examples bench-build install install-lib install-man \
	uninstall clean help
