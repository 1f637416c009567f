# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the vm/ scripts that run on the host and by the guest's
# init (vm/run puts it at /pollfs/lib.sh), so that they report, install
# packages, read the table of kernels and the list of kernel messages
# that fail a run the same way.

say() { echo "vm: $*"; }

# die_status: vm/run's own failures must not read as its command's
# status, so it sets 125.
die()
{
	echo "vm: error: $*" >&2
	exit "${die_status:-1}"
}

# install_packages PACKAGE...: install those of the Debian packages that
# are not installed yet.  The lists are refreshed first: on a fresh
# machine apt knows no package at all yet.
install_packages()
{
	local missing=() p

	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'ok installed' || missing+=("$p")
	done
	((${#missing[@]})) || return 0
	[[ $(id -u) == 0 ]] || die "missing packages (${missing[*]}); run as root"
	say "installing ${missing[*]}"
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends "${missing[@]}"
}

# Debian's archive and its security suites.
MIRROR=${POLLFS_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${POLLFS_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

# suite_source SUITE: the apt source line of SUITE (bookworm-security,
# trixie-backports...).
suite_source()
{
	if [[ $1 == *-security ]]; then
		echo "deb $SECURITY_MIRROR $1 main"
	else
		echo "deb $MIRROR $1 main"
	fi
}

# vm/kernels, beside this file (sourced by a path, never from its own
# directory by a bare name).
KERNELS_TABLE=${BASH_SOURCE[0]%/*}/kernels

# kernel_table: vm/kernels' rows, without comments and empty lines.
# Fails, naming the line, on a row that is not seven fields.
kernel_table()
{
	awk '!/^#/ && NF {
		if (NF != 7) {
			printf "%s:%d: not NAME HOW SUITE PACKAGE SCALE CI DKMS\n",
				FILENAME, FNR >"/dev/stderr"
			bad = 1
			exit
		}
		$1 = $1
		print
	} END { exit bad }' "$KERNELS_TABLE"
}

# kernel_load NAME: NAME's row of vm/kernels into kernel_name (empty for
# the default kernel, the one whose HOW is host, which an empty NAME
# also means), kernel_how, kernel_suite, kernel_package, kernel_scale,
# kernel_ci and kernel_dkms, and kernel_tree, where vm/setup keeps it below the top
# directory: build/kernel for the default, else build/kernel-NAME
# (vm/arm64's build/arm64/kernel-NAME for an arm64 one).
# Fails for a name not listed, with the reason in kernel_error.
# shellcheck disable=SC2034 # for the scripts that source this file
kernel_load()
{
	local row names

	row=$(kernel_table | awk -v k="$1" \
		'(k == "" && $2 == "host") || $1 == k { print; exit }') || row=
	if [[ ! $row ]]; then
		names=$(kernel_table | awk '{ printf "%s%s", sep, $1; sep = ", " }')
		kernel_error="POLLFS_KERNEL=$1: not a kernel the harness knows ($names; vm/kernels)"
		return 1
	fi
	read -r kernel_name kernel_how kernel_suite kernel_package \
		kernel_scale kernel_ci kernel_dkms <<<"$row"
	[[ $kernel_how == host ]] && kernel_name=
	kernel_tree=build/kernel${kernel_name:+-$kernel_name}
	[[ $kernel_how != arm64 ]] || kernel_tree=build/arm64/kernel-$kernel_name
}

# chroot_run ROOT CMD...: CMD in ROOT, chroot'ed, with a /proc of its
# own (some maintainer scripts read it) that goes with the private mount
# namespace.  chroot_apt ROOT ARGS...: apt-get so in ROOT,
# non-interactive.
chroot_run()
{
	local root=$1

	shift
	unshare --mount --fork sh -ec 'mount -t proc proc "$1/proc"; shift
		exec chroot "$@"' sh "$root" "$root" "$@"
}

chroot_apt()
{
	local root=$1

	shift
	chroot_run "$root" env DEBIAN_FRONTEND=noninteractive \
		apt-get -q -o APT::Sandbox::User=root "$@"
}

# copy_source_tree TOP DEST: the source tree TOP as it is into DEST: its
# tracked and new files, not the ignored ones nor those deleted; without
# git, all but build/ and .git.
copy_source_tree()
{
	mkdir -p "$2"
	if git -C "$1" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$1" && git ls-files -z -c -o --exclude-standard --deduplicate |
			while IFS= read -r -d '' f; do
				[[ -e $f || -L $f ]] && printf '%s\0' "$f"
			done | cpio -0 -pdm --quiet "$2")
	else
		tar -C "$1" --exclude=./build --exclude=./.git -cf - . |
			tar -C "$2" -xf -
	fi
}

# guest_kernel_load NAME: kernel_load for the amd64 guests of vm/setup
# and vm/run, failing for an arm64 row, which vm/arm64 has.
# shellcheck disable=SC2034 # kernel_error: for the scripts that source this file
guest_kernel_load()
{
	kernel_load "$1" || return 1
	[[ $kernel_how != arm64 ]] && return 0
	kernel_error="POLLFS_KERNEL=$1 is an arm64 kernel: vm/arm64 builds for it and boots it"
	return 1
}

# arm64_chroot_ready ROOT: let ROOT's arm64 programs run here under
# chroot, through qemu-user-static's binfmt_misc handler (registered
# here when missing).  Its interpreter is looked up inside the chroot
# unless the handler has the F flag: then a copy goes to the same path
# in ROOT, which arm64_chroot_done removes.
arm64_chroot_ready()
{
	local reg=/proc/sys/fs/binfmt_misc/qemu-aarch64 interp

	install_packages qemu-user-static binfmt-support
	if [[ ! -e $reg ]]; then
		[[ -e /proc/sys/fs/binfmt_misc/register ]] ||
			mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
		update-binfmts --enable qemu-aarch64 >/dev/null
	fi
	[[ $(head -n 1 "$reg" 2>/dev/null) == enabled ]] ||
		die "no binfmt_misc handler runs arm64 programs here ($reg)"
	interp=$(sed -n 's/^interpreter //p' "$reg")
	grep -q '^flags:.*F' "$reg" && return 0
	mkdir -p "$1${interp%/*}"
	cp /usr/bin/qemu-aarch64-static "$1$interp"
}

arm64_chroot_done()
{
	local interp

	interp=$(sed -n 's/^interpreter //p' /proc/sys/fs/binfmt_misc/qemu-aarch64)
	grep -q '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 && return 0
	rm -f "$1$interp"
	rmdir --ignore-fail-on-non-empty "$1${interp%/*}"
}

# stage_kmods STAGE KVER SRC LISTS [OWN]: into the guest's overlay STAGE,
# the kernel modules some tests load, from SRC (a kernel's kernel/
# directory, or OWN, a kernel tree of our own, which builds them in), and
# depmod's indexes of them, from LISTS' modules.order, modules.builtin and
# modules.builtin.modinfo: loop and ext4 give the tests a filesystem that
# takes O_DIRECT (tmpfs does not).  A|B: where kernels moved one (B on
# 7.3), the first found; "-": one that a kernel may not need at all
# (crc32c_generic: ext4 on 7.3 takes the crc32c library, built in).
# vm/run's and vm/arm64's guests both have them.
stage_kmods()
{
	local stage=$1 kver=$2 src=$3 lists=$4 own=${5:-} alternatives paths m b
	local kmods=(drivers/block/loop.ko fs/ext4/ext4.ko fs/jbd2/jbd2.ko
		fs/mbcache.ko 'lib/crc16.ko|lib/crc/crc16.ko'
		'crypto/crc32c_generic.ko|-')

	# The rootfs's /lib is a symlink (merged /usr): a directory in the
	# overlay would replace it.
	mkdir -p "$stage/usr/lib"
	ln -s usr/lib "$stage/lib"
	for alternatives in "${kmods[@]}"; do
		IFS='|' read -ra paths <<<"$alternatives"
		for m in "${paths[@]}"; do
			[[ $m == - || -f $src/$m || -f $src/$m.xz ]] && break
		done
		[[ $m == - ]] && continue
		# Built in (Debian's cloud kernels have ext4 so): nothing to load.
		for b in "${paths[@]}"; do
			grep -qxF "kernel/$b" "$lists/modules.builtin" 2>/dev/null && continue 2
		done
		# Debian's 6.12 and 7.3 ship them xz-compressed: staged
		# decompressed, as the guest's kmod may not read xz.
		if [[ ! -f $src/$m && -f $src/$m.xz ]]; then
			mkdir -p "$(dirname "$stage/lib/modules/$kver/kernel/$m")"
			xz -dc "$src/$m.xz" >"$stage/lib/modules/$kver/kernel/$m" ||
				die "cannot decompress $src/$m.xz"
			continue
		fi
		# A kernel of our own builds them in.
		[[ $own && ! -f $src/$m ]] && continue
		install -D -m 644 "$src/$m" "$stage/lib/modules/$kver/kernel/$m"
	done
	mkdir -p "$stage/lib/modules/$kver"
	cp "$lists"/modules.{order,builtin,builtin.modinfo} "$stage/lib/modules/$kver/"
	/usr/sbin/depmod -b "$stage" "$kver"
}

# kmsg_bad_pattern FILE: the kernel messages that fail a run, the lines
# of vm/kmsg-bad (FILE: it, or the guest's copy) joined into one
# extended regular expression.  The one reader of that list: vm/run
# (on the console log), the guest's init (on its dmesg) and tests/run
# (on each test's share of it) source this file.  Fails, printing
# nothing, when FILE is missing or its pattern would check nothing: an
# empty one matches every message, one grep -E cannot read none.
kmsg_bad_pattern()
{
	local line pattern='' rc=0

	[[ -r $1 ]] || return 1
	while IFS= read -r line || [[ $line ]]; do
		if [[ $line && $line != '#'* ]]; then
			pattern+=${pattern:+|}$line
		fi
	done <"$1"
	grep -qE "$pattern" <<<'' 2>/dev/null || rc=$?
	((rc == 1)) || return 1
	echo "$pattern"
}
