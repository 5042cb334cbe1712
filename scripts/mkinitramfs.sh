#!/bin/bash
# Pack the test initramfs: busybox-static, the guest programs, /init, the
# kernel that stage 1 kexecs into (/boot/bzImage) and other kernels a test
# may kexec into (/boot/NAME).
# Usage: mkinitramfs.sh BZIMAGE BIN_DIR OUT.cpio.gz [NAME=IMAGE...]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

bz=$1 bin=$2 out=$3
shift 3
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,boot}
cp /bin/busybox "$root/bin/busybox"
# bash for upstream's hugetlb cgroup selftests (scripts).
cp /bin/bash-static "$root/bin/bash"
for a in $("$root/bin/busybox" --list); do
	[ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
done
# A guest program may replace a busybox applet: replace the link, not busybox.
cp --remove-destination "$bin"/* "$root/bin/"
install -m 755 "$TOP/guest/init.sh" "$root/init"
cp "$bz" "$root/boot/bzImage"
for k in "$@"; do
	cp "${k#*=}" "$root/boot/${k%%=*}"
done
mknod -m 600 "$root/dev/console" c 5 1
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
