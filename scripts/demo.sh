#!/bin/bash
# make demo: carry a memfd full of data across a live update (kexec with KHO
# and LUO) in QEMU, check every byte in the new kernel and time each step.
# env DEMO=TYPE:MIB (TYPE shmem, 2M or 1G) picks the memfd; see README.md.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$TOP/config/kernels.sh"

spec=${DEMO:-1G:2048}
kernel_load fast
type=${spec%%:*} mib=${spec##*:}
# A hugetlb pool with room for the memfd and a quarter more (one more 1 GiB
# page), on both kernels, and the memory for it: 1 GiB pages need aligned
# ranges, and QEMU's PCI hole leaves none between 2 and 4 GiB.
mem=$CFG_MEM
case $type in
2M) pool="hugepages=$((mib * 5 / 8))" ;;
1G)
	pool="hugepagesz=1G hugepages=$(((mib + 1023) / 1024 + 1))"
	mem=$((mem + (mib + 1023) / 1024 + 3))
	;;
*) pool="" ;;
esac
initrd=$BUILD/initramfs-fast.cpio.gz
log=$LOGS/demo.log
"$TOP/scripts/mkinitramfs.sh" "$(kernel_image fast)" "$BUILD/guest/bin" "$initrd"

say "booting Linux $UPSTREAM in QEMU; a memfd ($spec MiB) will be carried across a live update"
say "kernel arguments: liveupdate=on $pool"
res=$("$TOP/tests/vmtest.sh" -m "${mem}G" -t "$CFG_TIMEOUT" \
	-a "$CFG_ARGS $pool hlu.demo=$spec" "$(kernel_image fast)" "$initrd" "$log" hlu-demo:2)

# Host time (s since QEMU start) of the first log line matching $1.
at() {
	grep -am1 "$1" "$log" | sed -n 's/^\[host *\([0-9.]*\)\].*/\1/p'
}

grep -a 'demo: ' "$log" | sed 's/^\[host[^]]*\] *//; s/^demo: /  /'
t_kexec=$(at 'HLU: kexec stage=2')
t_stage2=$(at 'HLU: stage 2 begin')
t_end=$(at 'HLU: halt')
if [ -n "$t_kexec" ] && [ -n "$t_stage2" ] && [ -n "$t_end" ]; then
	echo "  timeline (host seconds since QEMU start):"
	echo "    first kernel's userspace starts      $(at 'HLU: stage 1 begin')"
	echo "    kexec into the new kernel            $t_kexec"
	echo "    new kernel's userspace starts        $t_stage2"
	echo "    demo done                            $t_end"
	echo "  live update (kexec to new userspace): $(echo "$t_stage2 - $t_kexec" | bc) s"
fi
read -r _ status reason <<< "$res"
if [ "$status" != pass ]; then
	echo "demo FAILED: $reason (log: ${log#"$TOP"/})"
	exit 1
fi
echo "demo passed (serial log: ${log#"$TOP"/})"
