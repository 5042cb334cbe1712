#!/bin/sh
# /init of the test initramfs (busybox sh).  The kernel command line drives it:
#   hlu.run=PROG:N[,PROG:N...]  programs in /bin to run; PROG runs in stages
#                               1..N ("PROG -s K"; with N=1, "PROG" alone)
#   hlu.stage=K                 this boot's stage, 1 if absent
#   hlu.stages=N                the boot's last stage (tests/vmtest.sh
#                               passes the largest N of hlu.run)
# After each stage but the last, init kexecs (kexec_file_load, so KHO hands
# the preserved state over) into /boot/bzImage with hlu.stage=K+1, passing its
# own initramfs on (the kernel must be booted with retain_initrd).  A program
# may change the next stage's kernel and arguments:
#   /tmp/hlu.next-kernel  the name of another kernel in /boot
#   /tmp/hlu.next-args    arguments; each replaces all of the same name
#   /tmp/hlu.kexec-faults if it exists, the kexec first fails at each of its
#                         fault points in turn (kexec-load -F); it holds
#                         how many freezes at least must fail
# Lines that start with "HLU:" are the protocol the host harness reads.
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
exec </dev/console >/dev/console 2>&1

arg() {
	tr ' ' '\n' < /proc/cmdline | sed -n "s/^$1=//p" | tail -n 1
}

# On a kernel with kmemleak (the harness boots it with hlu.kmemleak=1),
# look for leaks before each kexec and at the end of the last stage.
# kmemleak reports an object only when two scans find it unreferenced and
# unchanged (the first scan of a new object only records its checksum) and
# it is older than 5 s when the second scan starts: scan, wait until 5.5 s
# after the first scan started (every object of the stage is older than
# that scan), scan again.  Its automatic scans (the
# first one 60 s after boot) would only repeat these and, with 1 GiB pages
# in the pool, take more than a minute each under TCG.  Any failure to scan
# and any leak is an "HLU: error:" line, which fails the run.
KMEMLEAK=/sys/kernel/debug/kmemleak
kmemleak_scan() {
	[ "$(arg hlu.kmemleak)" = 1 ] || return 0
	t0=$(cut -d' ' -f1 /proc/uptime)
	echo "HLU: kmemleak scan uptime=$t0"
	if ! echo scan > $KMEMLEAK ||
		! sleep "$(awk -v t0="$t0" '{ w = t0 + 5.5 - $1; print (w > 0 ? w : 0) }' /proc/uptime)" ||
		! echo scan > $KMEMLEAK; then
		echo "HLU: error: kmemleak scan failed (kmemleak disabled?)"
		return 0
	fi
	leaks=$(grep -c '^unreferenced object' $KMEMLEAK)
	echo "HLU: kmemleak: $leaks unreferenced objects uptime=$(cut -d' ' -f1 /proc/uptime)"
	if [ "$leaks" != 0 ]; then
		echo "HLU: error: kmemleak found $leaks leaks:"
		head -n 60 $KMEMLEAK
	fi
}

halt_vm() {
	echo "HLU: halt uptime=$(cut -d' ' -f1 /proc/uptime)"
	sync
	reboot -f
	sleep 10
}

# Task stacks are not scanned: a task that lives on to the kexec (the
# programs' daemons) keeps, in the unused part of its kernel stack, stale
# copies of every pointer its system calls allocated (kmemleak_alloc() is
# passed it), which would hide any leak they made.  At the scans, every
# task is asleep, holding nothing only its stack points to.
if [ "$(arg hlu.kmemleak)" = 1 ] && ! { echo scan=off > $KMEMLEAK &&
	echo stack=off > $KMEMLEAK; }; then
	echo "HLU: error: no kmemleak, or kmemleak disabled"
fi

stage=$(arg hlu.stage)
stage=${stage:-1}
run=$(arg hlu.run | tr , ' ')
echo "HLU: stage $stage begin kernel=$(uname -r) uptime=$(cut -d' ' -f1 /proc/uptime)"
[ -e /dev/liveupdate ] || echo "HLU: note: no /dev/liveupdate (liveupdate=on missing or KHO disabled)"

last=$(arg hlu.stages)
last=${last:-1}
for t in $run; do
	prog=${t%%:*}
	n=${t##*:}
	[ "$stage" -le "$n" ] || continue
	echo "HLU: run stage=$stage prog=$prog"
	if [ "$n" -eq 1 ]; then
		"/bin/$prog"
	else
		"/bin/$prog" -s "$stage"
	fi
	echo "HLU: result stage=$stage prog=$prog rc=$?"
	# Fold the per-CPU vmstat deltas: a counter below zero (NR_HUGETLB
	# after a page counted out twice) logs "vmstat_refresh: NAME -N",
	# which tests/vmtest.sh fails as a splat.
	cat /proc/sys/vm/stat_refresh 2>/dev/null || true
done
echo "HLU: stage $stage end uptime=$(cut -d' ' -f1 /proc/uptime)"

if [ "$stage" -ge "$last" ]; then
	kmemleak_scan
	echo "HLU: done"
	halt_vm
fi
next=$((stage + 1))
# The next kernel gets this boot's initramfs, read by kexec_file_load()
# straight from /sys/firmware/initrd: a copy through userspace takes 20 s
# on the debug kernel (sysfs hands it out 4 KiB per read()).
initrd=/sys/firmware/initrd
if [ ! -r $initrd ]; then
	echo "HLU: error: no $initrd (boot with retain_initrd)"
	halt_vm
fi
# Another kernel (a program asked for it) has another config: kmemleak is
# only asked of the config under test.
[ -s /tmp/hlu.next-kernel ] && echo " hlu.kmemleak=0" >> /tmp/hlu.next-args
cmdline=" $(sed 's/ *hlu\.stage=[0-9]*//' /proc/cmdline) "
if [ -s /tmp/hlu.next-args ]; then
	# shellcheck disable=SC2013 # one argument per word
	for a in $(cat /tmp/hlu.next-args); do
		cmdline=$(echo "$cmdline" | sed "s/ ${a%%=*}=[^ ]*/ /g")
	done
	cmdline="$cmdline $(cat /tmp/hlu.next-args)"
fi
cmdline=$(echo "$cmdline hlu.stage=$next" | tr -s ' ' | sed 's/^ //')
kernel=/boot/$(cat /tmp/hlu.next-kernel 2>/dev/null || echo bzImage)
sweep=""
[ -e /tmp/hlu.kexec-faults ] && sweep="-F $(cat /tmp/hlu.kexec-faults)"
kmemleak_scan
echo "HLU: kexec stage=$next kernel=$kernel"
# shellcheck disable=SC2086 # $sweep is an option and its argument
kexec-load -e $sweep -c "$cmdline" "$kernel" $initrd
echo "HLU: error: kexec into stage $next failed"
halt_vm
