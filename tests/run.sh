#!/bin/bash
# Run the suite (tests/suite.sh) on the given kernels (config/kernels.sh)
# and print one line per test (a test is one program on one kernel), then
# "N passed, N failed[, N skipped]".  Needs the kernels and guest programs
# built (make kernel-fast kernel-debug kernel-nohandler guest).
# Usage: run.sh KERNEL...    env ONLY=BOOT_NAME runs one boot line only;
# LONG=1 also runs the boot lines marked -l (make test-long); TEST_JOBS=N
# runs N boots at a time (default 2).
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$TOP/config/kernels.sh"

passed=0 failed=0 skipped=0
cfg=""
declare -A initrd_built=()
# Boots run side by side, $TEST_JOBS at a time (default 2, one per core of
# the CI machine): a TCG guest keeps about one host core busy (its boot,
# kmemleak's scans and most programs run on one vCPU), and the debug
# kernel's boots, half an hour one after another, are most of make test.
# Their result lines come as each ends.  TEST_JOBS=1 runs them in order.
jobs=${TEST_JOBS:-2}
declare -A job_boot=()
# Background jobs ignore SIGINT: an interrupted run takes its QEMUs down.
trap 'trap - INT TERM; kill -TERM 0' INT TERM

boot() {
	local name=$1 mem=$CFG_MEM args="" qargs="" o log
	local only_cfg="" long=0 stages expect="" vm=0
	local initrd=$BUILD/initramfs-$cfg.cpio.gz
	shift
	OPTIND=1
	while getopts "c:e:lm:a:q:v" o; do
		case $o in
		c) only_cfg=$OPTARG ;;
		v) vm=1 ;;
		e) [ "${OPTARG%%:*}" != "$cfg" ] || expect=${OPTARG#*:} ;;
		l) long=1 ;;
		m) [ "$OPTARG" -gt "$mem" ] && mem=$OPTARG ;;
		a) args+=" $OPTARG" ;;
		q) qargs=$OPTARG ;;
		*) die "suite: bad option in boot $name" ;;
		esac
	done
	shift $((OPTIND - 1))
	args="$CFG_ARGS $(kernel_mem_args "$cfg" "$mem")$args"
	[ -z "$only_cfg" ] || [ "$only_cfg" = "$cfg" ] || return 0
	[ -z "${ONLY:-}" ] || [ "$ONLY" = "$name" ] || return 0
	[ "$long" = 0 ] || [ "${LONG:-0}" = 1 ] || [ -n "${ONLY:-}" ] || return 0
	log=$LOGS/$cfg/$name.log
	# The nested-VM boots have QEMU in their initramfs (90 MB, uncompressed):
	# only they.
	if [ "$vm" = 1 ]; then
		initrd=$BUILD/initramfs-$cfg-vm.cpio
		if [ -z "${initrd_built[$cfg]:-}" ]; then
			VM=1 "$TOP/scripts/mkinitramfs.sh" "$(kernel_image "$cfg")" \
				"$BUILD/guest/bin" "$initrd"
			initrd_built[$cfg]=1
		fi
	fi
	stages=$(stage_count "$@")
	while [ "${#job_boot[@]}" -ge "$jobs" ]; do
		reap_boot
	done
	# A progress line: a boot takes from seconds to minutes.
	printf '.... %-6s %-24s booting, %d stage(s), %s GiB  [%s]\n' "$cfg" "$name" \
		"$stages" "$mem" "$(date +%T)"
	mkdir -p "$LOGS/$cfg"
	rm -f "$log.result"
	{ "$TOP/tests/vmtest.sh" -m "${mem}G" -t "$CFG_TIMEOUT" -a "$args" \
		-q "$qargs" -s "$TOP/tests/skips/$cfg" -e "$expect" "$(kernel_image "$cfg")" \
		"$initrd" "$log" "$@" > "$log.result" || true; } &
	job_boot[$!]="$cfg $# $log"
}

# Wait for one running boot to end, print its programs' result lines and
# count them.
reap_boot() {
	local pid jcfg nprogs log prog status reason line seen=0

	wait -n -p pid "${!job_boot[@]}" || true
	read -r jcfg nprogs log <<< "${job_boot[$pid]}"
	unset "job_boot[$pid]"
	while read -r prog status reason; do
		# A note of the judge's on the boot (its fault-injection sweeps).
		if [ "$prog" = "#" ]; then
			printf '     %-6s %s %s\n' "$jcfg" "$status" "$reason"
			continue
		fi
		case $status in
		pass) passed=$((passed + 1)) ;;
		skip) skipped=$((skipped + 1)) ;;
		*) failed=$((failed + 1)) ;;
		esac
		line=$(printf '%-4s %-6s %-24s' "${status^^}" "$jcfg" "$prog")
		[ -z "$reason" ] || line+=" $reason"
		[ "$status" = pass ] || line+="  [log: ${log#"$TOP"/}]"
		echo "$line"
		seen=$((seen + 1))
	done < "$log.result"
	rm -f "$log.result"
	# A harness error must not make tests vanish from the count.
	if [ "$seen" -lt "$nprogs" ]; then
		echo "FAIL $jcfg boot $(basename "$log" .log): the harness judged $seen of $nprogs programs  [log: ${log#"$TOP"/}]"
		failed=$((failed + nprogs - seen))
	fi
}

for cfg in "$@"; do
	kernel_load "$cfg"
	[ -f "$(kernel_image "$cfg")" ] || die "no kernel for '$cfg': run make first"
	"$TOP/scripts/mkinitramfs.sh" "$(kernel_image "$cfg")" "$BUILD/guest/bin" \
		"$BUILD/initramfs-$cfg.cpio.gz" "bzImage-nohandler=$(kernel_image nohandler)"
	[ -n "${ONLY:-}" ] || rm -rf "${LOGS:?}/$cfg"
	# shellcheck source=tests/suite.sh
	. "$TOP/tests/suite.sh"
done
while [ "${#job_boot[@]}" -gt 0 ]; do
	reap_boot
done

summary="$passed passed, $failed failed"
[ "$skipped" = 0 ] || summary+=", $skipped skipped"
echo "$summary"
[ "$failed" = 0 ]
