# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the vm/ scripts that run on the host, so that they report,
# install packages and read the table of kernels the same way.

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

KERNELS_TABLE=$(dirname "${BASH_SOURCE[0]}")/kernels

# kernel_entry NAME: print NAME's HOW and PACKAGE from vm/kernels (HOW:
# host, fetch or chroot); an empty NAME is the default kernel, the one
# whose HOW is host.  Fails, printing nothing, for a name not listed.
kernel_entry()
{
	awk -v k="$1" '!/^#/ && NF &&
		((k == "" && $2 == "host") || $1 == k) { print $2, $3; found = 1; exit }
		END { exit !found }' "$KERNELS_TABLE"
}

# kernel_time_scale NAME: NAME's SCALE in vm/kernels, 1 if none.
kernel_time_scale()
{
	awk -v k="$1" '!/^#/ && NF &&
		((k == "" && $2 == "host") || $1 == k) { s = $4 }
		END { print s ? s : 1 }' "$KERNELS_TABLE"
}

# The names of vm/kernels, for messages: "6.1, 6.12, ...".
kernel_names()
{
	awk '!/^#/ && NF { printf "%s%s", sep, $1; sep = ", " } END { print "" }' \
		"$KERNELS_TABLE"
}
