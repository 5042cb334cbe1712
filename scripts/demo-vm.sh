#!/bin/bash
# make demo-vm: a real VM (Debian's QEMU inside the test VM, its RAM in a
# hugetlb memfd) goes on running across a live update of the kernel under
# it.  Narrates each step as it happens and prints the VM's downtime,
# step by step.  env DEMO_VM=TYPE:MIB (TYPE 2M, 1G or shmem) picks the
# RAM; see README.md and docs/vmm.md.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$TOP/config/kernels.sh"

spec=${DEMO_VM:-1G:1024}
kernel_load fast
type=${spec%%:*} mib=${spec##*:}
mem=$CFG_MEM
case $type in
2M) pool="hugepages=$((mib / 2 + 16))" ;;
1G)
	# 1 GiB pages need aligned ranges free at boot: QEMU's PCI hole
	# leaves none between 2 and 4 GiB.
	pool="hugepagesz=1G hugepages=$(((mib + 1023) / 1024))"
	mem=$((mem + (mib + 1023) / 1024 + 1))
	;;
shmem) pool="" ;;
*) die "DEMO_VM=$spec: TYPE must be 2M, 1G or shmem" ;;
esac
initrd=$BUILD/initramfs-fast-vm.cpio
log=$LOGS/demo-vm.log
say "packing the test VM's initramfs with Debian's QEMU in it"
VM=1 "$TOP/scripts/mkinitramfs.sh" "$(kernel_image fast)" "$BUILD/guest/bin" "$initrd"

say "booting Linux $UPSTREAM in QEMU (the host of the demo); inside it, QEMU runs a"
say "small VM whose $mib MiB of RAM is a $type memfd, then the host kernel is live-updated"
mkdir -p "$LOGS"
: > "$log"
"$TOP/tests/vmtest.sh" -m "${mem}G" -t "$CFG_TIMEOUT" -a "$CFG_ARGS $pool hlu.vm=$type:$mib" \
	"$(kernel_image fast)" "$initrd" "$log" hlu-vm:2 > "$log.result" &
pid=$!
# The steps as they come: the agent's lines and the kernel switch.
tail -F -n +1 --pid=$pid "$log" 2> /dev/null |
	grep -a --line-buffered -E 'hlu-vm: |HLU: (kexec stage|stage 2 begin)' |
	sed -u -E 's/^\[host *([0-9.]+)\] /  [\1 s] /; s/HLU: kexec stage=2.*/kexec into the new kernel/;
		s/HLU: stage 2 begin.*/the new kernel runs its userspace/' || true
wait $pid || true
read -r _ status reason < "$log.result"

# Host seconds (since QEMU started) of the first line matching $1 after
# the first line matching $2 (default: from the start).
at() {
	awk -v re="$1" -v after="${2:-.}" '
		!on && $0 ~ after { on = 1 }
		on && $0 ~ re { sub(/^\[host */, ""); sub(/\].*/, ""); print; exit }' "$log"
}
# The agent's own timing NAME in ms (HLU: vm-time NAME MS), stage 1 or 2.
ms() {
	awk -v n="$1" -v s="$2" '/HLU: stage [0-9] begin/ { st = $5 }
		st == s && $0 ~ "HLU: vm-time " n " " { print $NF; exit }' "$log"
}
# Kernel timestamp (s) of the first line matching $1 in stage 2.
kt() {
	awk -v re="$1" '/HLU: kexec stage=2/ { on = 1 }
		on && $0 ~ re { sub(/^\[host *[0-9.]*\] \[ */, ""); sub(/\].*/, ""); print; exit }' "$log"
}

t_stop=$(at 'hlu-vm: stop:')
t_saved=$(at 'hlu-vm: device state saved')
t_kexec=$(at 'HLU: kexec stage=2')
t_start=$(at 'kexec_core: Starting new kernel')
t_user=$(at 'HLU: stage 2 begin')
t_ret=$(at 'hlu-vm: RAM and device state retrieved')
t_line=$(at 'vm: HLUVM resumed' 'HLU: stage 2 begin')
if [ "$status" = pass ] && [ -n "$t_line" ]; then
	k_init=$(kt 'Run /init as init process')
	k_unpack=$(kt 'Unpacking initramfs')
	k_unpacked=$(kt 'Freeing unused kernel image \(initmem\)')
	f() { printf '%8.2f s' "$(echo "$*" | bc -l)"; }
	echo
	echo "The VM's downtime, from 'stop' to its first line after 'cont' (host clock):"
	echo "  device state save (stop, migrate, QEMU exits)  $(f "$(ms save 1) / 1000")"
	echo "  preserve the state memfd, agent exits, init   $(f "$t_kexec - $t_saved")"
	echo "  kexec to the new kernel's userspace            $(f "$t_user - $t_kexec")"
	echo "      load, LUO freeze, shutdown (old kernel)    $(f "$t_start - $t_kexec")"
	echo "      new kernel boot to /init                   $(f "$t_user - $t_start")"
	echo "        of which unpacking the 90 MB initramfs   $(f "$k_unpacked - $k_unpack")"
	echo "  agent start and retrieve                       $(f "$t_ret - $t_user")"
	echo "      of which the retrieve ioctls               $(f "$(ms retrieve 2) / 1000")"
	echo "  QEMU start and device state load               $(f "$(ms restore 2) / 1000")"
	echo "  cont to the VM's first line                    $(f "$(ms cont_to_line 2) / 1000")"
	echo "  total downtime                                 $(f "$t_line - $t_stop")"
	echo "Before the downtime, while the VM ran: preserve of its RAM $(ms preserve_ram 1) ms."
	echo "Most of the downtime is the kexec: booting a kernel under TCG ($(printf '%.2f s' "$k_init") to"
	echo "/init by its own clock) with the test's 90 MB initramfs (QEMU is in it)."
	echo "docs/vmm.md ('Downtime') says which parts are TCG's and which the design's."
fi
if [ "$status" != pass ]; then
	echo "demo-vm FAILED: $reason (log: ${log#"$TOP"/})"
	exit 1
fi
echo "demo-vm passed: the VM resumed on the new kernel with its RAM in place (serial log: ${log#"$TOP"/})"
