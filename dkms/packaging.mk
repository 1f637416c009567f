# SPDX-License-Identifier: GPL-2.0
#
# Installing the module and packaging it, included by the top Makefile:
# the module on this machine (make install-module, DKMS), the DKMS
# source tree that pollfs-dkms ships, the Debian packages (debian/,
# built by tests/packaging/deb/build) and their checks in the guest
# (tests/packaging/deb/run, tests/packaging/dkms/check).  README.md,
# "Installing it on Debian", is the user's side of it.

#>> Installing the module, packaging (dkms/packaging.mk)

# On this machine: for the running kernel, with its own BTF, unless
# KVER (and BTF) say otherwise.
install-module dkms-install: KVER = $(shell uname -r)
install-module dkms-install: BTF =

#> install-module the module for the running kernel, on this machine
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

#> dkms-src the DKMS source tree and kernel hook under DESTDIR
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

#> dkms-install the module through DKMS on this machine
dkms-install: build/dkms.conf
	dkms remove pollfs/$(VERSION) --all >/dev/null 2>&1 || true
	rm -rf $(DKMS_SRC)
	$(MAKE) dkms-src
	sed 's/#MODULE_VERSION#/$(VERSION)/' build/dkms.conf >$(DKMS_SRC)/dkms.conf
	dkms add pollfs/$(VERSION)
	dkms install pollfs/$(VERSION) -k $(KVER)

#> dkms-uninstall remove it from DKMS again
dkms-uninstall:
	dkms remove pollfs/$(VERSION) --all >/dev/null 2>&1 || true
	rm -rf $(DKMS_SRC) $(DKMS_HOOK)

# The Debian packages of this tree (debian/), built by dpkg-buildpackage
# from a copy of it in build/deb/pollfs-VERSION (the tree as it is, less
# what git ignores), and checked by lintian: build/deb/*.deb,
# build/deb/lintian.log.  Only the library is compiled: DKMS builds the
# module where pollfs-dkms is installed.  No guest is booted.
#> deb the Debian packages, checked by lintian (build/deb)
deb:
	tests/packaging/deb/build $(CURDIR)/build/deb

# The same tree under a lower version: the "previous release" that make
# check-deb upgrades from.
PREV_VERSION = $(VERSION)~prev
#> deb-prev the same under a lower version, for check-deb's upgrade
deb-prev:
	tests/packaging/deb/build --version $(PREV_VERSION) --no-lintian \
		$(CURDIR)/build/deb-prev

# In the guest, with a root filesystem of Debian's (12's for 6.1 and
# 6.12, 13's for 7.3) holding dkms and the kernel's headers: the packages
# installed with apt as a user would (on 6.1 and 7.3 as an upgrade from
# the previous version's), the module built and signed by DKMS, loaded
# by what the boot runs, a program built with pkg-config, a few tests,
# then apt remove unloading it and README.md's apt purge line leaving
# nothing behind.  On the default kernel also a kernel update that
# replaces the image under the same release, and a boot of the updated
# image: tests/packaging/deb/README.md.  Each DKMS build takes minutes
# under TCG.
#> check-deb the packages installed with apt in the guest, DKMS building there
check-deb: deb deb-prev
	$(MAKE) lib tests
	tests/packaging/deb/run $(KERNEL)

# DKMS inside the guest: build, install and modprobe the module there.
#> check-dkms DKMS building and loading the module in the guest
check-dkms:
	vm/setup --rootfs dkms
	$(MAKE) lib tests
	tar -cf build/pollfs-src.tar Makefile Kbuild dkms.conf VERSION \
		$(MODULE_FILES) $(DKMS_SCRIPTS) dkms/kernel-postinst include \
		vm/kernels vm/kernel-version vm/lib.sh vm/kernel.mk vm/lanes.mk \
		dkms/packaging.mk tests/syz/syz.mk
	vm/run --rootfs dkms --no-module --mem 3072 --timeout 1800 \
		--add build/pollfs-src.tar --add tests/packaging/dkms/check -- /check

.PHONY: install-module dkms-src dkms-install dkms-uninstall deb deb-prev \
	check-deb check-dkms
