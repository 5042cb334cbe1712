#!/bin/bash
# Run the suite (tests/suite.sh) on the given kernel configs and print one
# line per test (a test is one program on one kernel config), then
# "N passed, N failed[, N skipped]".  Needs the kernels and guest programs
# built (make kernel kernel-debug kernel-nohlu guest).
# Usage: run.sh CONFIG...    env ONLY=BOOT_NAME runs one boot line only;
# LONG=1 also runs the boot lines marked -l (make test-long); TEST_JOBS=N
# runs N boots at a time (default 2).
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$TOP/tests/configs.sh"

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
	args="$CFG_ARGS $(config_mem_args "$cfg" "$mem")$args"
	[ -z "$only_cfg" ] || [ "$only_cfg" = "$cfg" ] || return 0
	[ -z "${ONLY:-}" ] || [ "$ONLY" = "$name" ] || return 0
	[ "$long" = 0 ] || [ "${LONG:-0}" = 1 ] || [ -n "${ONLY:-}" ] || return 0
	log=$LOGS/$cfg/$name.log
	# The nested-VM boots have QEMU in their initramfs (90 MB, uncompressed):
	# only they.
	if [ "$vm" = 1 ]; then
		initrd=$BUILD/initramfs-$cfg-vm.cpio
		if [ -z "${initrd_built[$cfg]:-}" ]; then
			VM=1 "$TOP/scripts/mkinitramfs.sh" "$(config_image "$cfg")" \
				"$BUILD/guest/bin" "$initrd"
			initrd_built[$cfg]=1
		fi
	fi
	stages=$(printf '%s\n' "$@" | sed 's/.*://' | sort -n | tail -n 1)
	while [ "${#job_boot[@]}" -ge "$jobs" ]; do
		reap_boot
	done
	# A progress line: a boot takes from seconds to minutes.
	printf '.... %-6s %-24s booting, %d stage(s), %s GiB  [%s]\n' "$cfg" "$name" \
		"$stages" "$mem" "$(date +%T)"
	mkdir -p "$LOGS/$cfg"
	rm -f "$log.result"
	{ "$TOP/tests/vmtest.sh" -m "${mem}G" -t "$CFG_TIMEOUT" -a "$args" \
		-q "$qargs" -s "$TOP/tests/skips/$cfg" -e "$expect" "$(config_image "$cfg")" \
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

# The fault-injection sweeps of a config's logs, one line: the points each
# operation reached, how many failed it and how many it absorbed (the
# programs fail on a wrong errno, on an absorbed failure of one of our own
# points and on fewer points than recorded).  The kexec sweep
# (guest/kexec-load.c -F) ends with the try that went through: a fault
# injected in it (a FAULT_INJECTION message after the last "kexec try"
# line) was absorbed, which fails the run at one of our own points
# (fail_function, at our hooks) and is counted otherwise (an allocation of the
# shutdown path after LUO's freeze, whose failure it logs and goes on).
fault_coverage() {
	local cfg=$1
	local logs=("$LOGS/$cfg"/*.log)

	[ -e "${logs[0]}" ] || return 0
	# One pass over the logs.  kexec-load writes the sweep's lines to the
	# kernel log, so they come whole and in order with the kernel's
	# messages of each try (tests/vmtest.sh logs kernel lines apart from
	# program lines).  The fault boot must have a kexec sweep.
	awk -v cfg="$cfg" '
		function end_try() {
			# The try that went through: the kernel said so.
			if (pending && !started)
				bad = bad " " tryfile ": kexec try " try " neither failed nor started the next kernel;"
			if (pending && fi == "fail_function")
				bad = bad " " tryfile ": kexec try " try " went through with a fault injected;"
			else if (pending && fi != "")
				kabs++
			pending = 0
		}
		FNR == 1 { end_try() }
		FNR == 1 && FILENAME ~ /\/hugetlb_fault\.log$/ { sweeps[FILENAME] = 1 }
		match($0, /# fault-injection: [a-z]+: [0-9]+ points, [0-9]+ failed, [0-9]+ absorbed/) {
			split(substr($0, RSTART, RLENGTH), f, " ")
			sub(/:$/, "", f[3])
			out = out f[3] " " f[4] " (" f[6] " failed, " f[8] " absorbed), "
		}
		match($0, /HLU: fault-injection kexec try [0-9]+/) {
			end_try()
			split(substr($0, RSTART, RLENGTH), f, " ")
			try = f[5]; tryfile = FILENAME; pending = 1; fi = ""; started = 0; tries++
		}
		pending && /kexec_core: Starting new kernel/ { started = 1 }
		match($0, /HLU: fault-injection kexec: at least [0-9]+ points of ours/) {
			split(substr($0, RSTART, RLENGTH), f, " ")
			want[FILENAME] = f[6]
		}
		# The sweep stopped on an error, which fails the run by itself.
		pending && /HLU: error:/ { pending = 0 }
		pending && match($0, /name [a-z_]+, interval/) {
			fi = substr($0, RSTART + 5, RLENGTH - 15)
		}
		match($0, /HLU: fault-injection kexec point [0-9]+ covered/) {
			pending = 0; kcov++
			if ($0 ~ /covered: fail_function:/)
				own[FILENAME]++
		}
		/Linux version / { end_try() }
		END {
			end_try()
			for (file in sweeps)
				if (!(file in want))
					bad = bad " " file ": no kexec sweep;"
			for (file in want)
				if (own[file] < want[file])
					bad = bad " " file ": " own[file] + 0 " freezes failed in the kexec sweep, not " want[file] ";"
			if (tries > 0)
				out = out "kexec " kcov + kabs " (" kcov + 0 " failed, " kabs + 0 " absorbed), "
			if (out != "")
				printf "fault injection (%s): %spoints reached per operation\n", cfg,
				       out
			if (bad != "") {
				printf "FAIL %s fault-injection:%s\n", cfg, bad
				exit 1
			}
		}' "${logs[@]}"
}

for cfg in "$@"; do
	config_load "$cfg"
	[ -f "$(config_image "$cfg")" ] || die "no kernel for '$cfg': run make first"
	"$TOP/scripts/mkinitramfs.sh" "$(config_image "$cfg")" "$BUILD/guest/bin" \
		"$BUILD/initramfs-$cfg.cpio.gz" "bzImage-nohlu=$BUILD/bzImage-nohlu"
	[ -n "${ONLY:-}" ] || rm -rf "${LOGS:?}/$cfg"
	# shellcheck source=tests/suite.sh
	. "$TOP/tests/suite.sh"
done
while [ "${#job_boot[@]}" -gt 0 ]; do
	reap_boot
done

for cfg in "$@"; do
	fault_coverage "$cfg" || failed=$((failed + 1))
done
summary="$passed passed, $failed failed"
[ "$skipped" = 0 ] || summary+=", $skipped skipped"
echo "$summary"
[ "$failed" = 0 ]
