#!/bin/bash
# Pack the test initramfs: busybox-static, the guest programs, /init, the
# kernel that stage 1 kexecs into (/boot/bzImage) and other kernels a test
# may kexec into (/boot/NAME).
# With VM=1 in the environment it also holds Debian's QEMU, for the nested-VM
# test (guest/hlu-vm.c), and that test's guest image.
# Usage: mkinitramfs.sh BZIMAGE BIN_DIR OUT.cpio[.gz] [NAME=IMAGE...]
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
# -P: links stay links (guest/hlu-vm.c is run by several names).
cp -P --remove-destination "$bin"/* "$root/bin/"
install -m 755 "$TOP/guest/init.sh" "$root/init"
cp "$bz" "$root/boot/bzImage"
for k in "$@"; do
	cp "${k#*=}" "$root/boot/${k%%=*}"
done
if [ "${VM:-0}" = 1 ]; then
	# QEMU finds its firmware relative to its binary (/usr/share/...), its
	# TCG accelerator module in QEMU_MODULE_DIR (set by hlu-vm); it needs
	# the libraries ldd lists.  Only the firmware the test's VM loads.
	qemu=/usr/bin/qemu-system-x86_64 tcg=/usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so
	[ -x $qemu ] || die "no $qemu (make deps installs qemu-system-x86)"
	mkdir -p "$root/usr/bin" "$root/usr/share/qemu" "$root/usr/share/seabios" \
		"$root/usr/lib/x86_64-linux-gnu/qemu"
	cp $qemu "$root/usr/bin/"
	cp $tcg "$root/usr/lib/x86_64-linux-gnu/qemu/"
	for lib in $({ ldd $qemu; ldd $tcg; } | grep -o '/[^ ]*' | sort -u); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
	cp -L /usr/share/seabios/bios-256k.bin "$root/usr/share/seabios/"
	for f in kvmvapic.bin linuxboot_dma.bin multiboot_dma.bin; do
		cp -L "/usr/share/qemu/$f" "$root/usr/share/qemu/"
	done
	cp "$bin/../vm/hluvm.elf" "$root/boot/"
fi
mknod -m 600 "$root/dev/console" c 5 1
# Under TCG the kernel inflated the gzip'd 38 MB in 3 to 7.5 s: QEMU's 90 MB go in
# uncompressed (copied, not inflated, in every boot).
compress="gzip -1"
[ "${VM:-0}" != 1 ] || compress="cat"
(cd "$root" && find . | cpio -o -H newc --quiet) | $compress > "$out.tmp"
mv "$out.tmp" "$out"
