# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the vm/ scripts that run on the host, so that they report
# and install packages the same way.

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
