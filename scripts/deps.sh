#!/bin/bash
# Install the Debian packages the project needs, skipping those already there.
set -euo pipefail

pkgs=(build-essential flex bison bc libelf-dev libssl-dev cpio kmod rsync
	dwarves busybox-static bash-static qemu-system-x86 ccache git perl xz-utils
	python3 python3-ply python3-git gnuplot-nox)
missing=()
for p in "${pkgs[@]}"; do
	dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "==> installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
