#!/bin/bash
# Run the suite (tests/suite.sh) on the given kernel configs and print one
# line per test (a test is one program on one kernel config), then
# "N passed, N failed[, N skipped]".  Needs the kernels and guest programs
# built (make kernel kernel-debug kernel-nohlu guest).
# Usage: run.sh CONFIG...    env ONLY=BOOT_NAME runs one boot line only.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$TOP/tests/configs.sh"

passed=0 failed=0 skipped=0
cfg=""

boot() {
	local name=$1 mem=$CFG_MEM args=$CFG_ARGS qargs="" o log line
	local prog status reason seen=0 only_cfg=""
	shift
	OPTIND=1
	while getopts "c:m:a:q:" o; do
		case $o in
		c) only_cfg=$OPTARG ;;
		m) [ "$OPTARG" -gt "$mem" ] && mem=$OPTARG ;;
		a) args+=" $OPTARG" ;;
		q) qargs=$OPTARG ;;
		*) die "suite: bad option in boot $name" ;;
		esac
	done
	shift $((OPTIND - 1))
	[ -z "$only_cfg" ] || [ "$only_cfg" = "$cfg" ] || return 0
	[ -z "${ONLY:-}" ] || [ "$ONLY" = "$name" ] || return 0
	log=$LOGS/$cfg/$name.log
	while read -r prog status reason; do
		if [ "$status" = skip ] && ! grep -qx "$prog" <(sed 's/[[:space:]]*#.*//' "$TOP/tests/skips/$cfg"); then
			status=fail
			reason="skip not allowed on $cfg: $reason"
		fi
		case $status in
		pass) passed=$((passed + 1)) ;;
		skip) skipped=$((skipped + 1)) ;;
		*) failed=$((failed + 1)) ;;
		esac
		line=$(printf '%-4s %-6s %-24s' "${status^^}" "$cfg" "$prog")
		[ -z "$reason" ] || line+=" $reason"
		[ "$status" = pass ] || line+="  [log: ${log#"$TOP"/}]"
		echo "$line"
		seen=$((seen + 1))
	done < <("$TOP/tests/vmtest.sh" -m "${mem}G" -t "$CFG_TIMEOUT" -a "$args" \
		-q "$qargs" "$(config_image "$cfg")" "$BUILD/initramfs-$cfg.cpio.gz" \
		"$log" "$@" || true)
	# A harness error must not make tests vanish from the count.
	if [ "$seen" -lt $# ]; then
		echo "FAIL $cfg boot $name: the harness judged $seen of $# programs  [log: ${log#"$TOP"/}]"
		failed=$((failed + $# - seen))
	fi
}

# The fault-injection coverage of a config's logs: "points covered/found"
# of each operation the sweeps reported, and of the kexec (guest/kexec-load.c
# -F: every try but the last, which went through, failed at one point).
fault_coverage() {
	local cfg=$1
	local logs=("$LOGS/$cfg"/*.log)

	[ -e "${logs[0]}" ] || return 0
	# One pass over the logs.  Kernel messages may interleave with these
	# lines: match inside them.
	awk -v cfg="$cfg" '
		match($0, /# fault-injection: [a-z]+: [0-9]+\/[0-9]+/) {
			split(substr($0, RSTART, RLENGTH), f, " ")
			split(f[4], cf, "/")
			sub(/:$/, "", f[3])
			out = out f[3] " " f[4] ", "
			cov += cf[1]; found += cf[2]
		}
		match($0, /HLU: fault-injection kexec try [0-9]+/) {
			split(substr($0, RSTART, RLENGTH), f, " ")
			if (f[5] + 0 > tries) tries = f[5] + 0
		}
		match($0, /HLU: fault-injection kexec point [0-9]+ covered/) {
			split(substr($0, RSTART, RLENGTH), f, " ")
			if (!(f[5] in seen)) { seen[f[5]] = 1; kcov++ }
		}
		END {
			if (tries > 0) {
				out = out "kexec " (kcov + 0) "/" (tries - 1) ", "
				cov += kcov; found += tries - 1
			}
			if (out != "")
				printf "fault injection (%s): %stotal %d/%d points covered/found\n",
				       cfg, out, cov, found
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

for cfg in "$@"; do
	fault_coverage "$cfg"
done
summary="$passed passed, $failed failed"
[ "$skipped" = 0 ] || summary+=", $skipped skipped"
echo "$summary"
[ "$failed" = 0 ]
