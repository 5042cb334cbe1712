#!/bin/bash
# Judge one test VM's boot from its serial log (tests/vmtest.sh boots it and
# runs this; tests/judge-test.sh runs it on recorded logs).
#
# Usage: judge.sh [-t STAGE_TIMEOUT] [-s SKIPS] [-e EXPECT] LOG PROG:N...
# Prints one line per program: "PROG pass|fail|skip REASON", and a note
# ("# fault injection: ...") for a boot with fault-injection sweeps.  A
# program fails when any of its stages does not report rc=0 or prints a TAP
# "not ok" line, on a timeout, when any stage's kernel log shows a splat or
# an "HLU: error:" line of init, when the last stage does not end with
# "HLU: done" and QEMU's clean exit (the log's last line, "[host] qemu exit
# RC after ..."), when the boot's kexec fault sweep went wrong
# (tests/fault-coverage.awk), and when it skips a test (a TAP "# SKIP"
# line, or exit code 4 for the whole program) that the allow-list SKIPS
# does not name: lines "PROG [TEXT]  # reason" allow PROG's skip lines that
# contain TEXT (all of them without TEXT).  With -e, every program also
# fails when no line of the log matches the extended regex EXPECT: a boot
# that exists to reach a kernel path says so.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

stage_timeout=120 skips=/dev/null expect=""
while getopts "t:s:e:" o; do
	case $o in
	t) stage_timeout=$OPTARG ;;
	s) skips=$OPTARG ;;
	e) expect=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
log=$1
shift
progs=("$@")
stages=$(stage_count "${progs[@]}")
rc=$(sed -n 's/^\[host\] qemu exit \([0-9]*\) after .*/\1/p' "$log" | tail -n 1)
rc=${rc:-none}

# Kernel splats that fail a run, in any stage.
SPLAT='WARNING:|BUG:|Oops|KASAN:|general protection fault|Kernel panic'
SPLAT+='|possible (recursive|circular|irq lock inversion).*(locking|dependency)'
SPLAT+='|inconsistent lock state|hung task|blocked for more than'
SPLAT+='|refcount_t:|list_(add|del) corruption|UBSAN:|kmemleak: [0-9]+ new suspected'
SPLAT+='|kmemleak: Kernel memory leak detector disabled'
SPLAT+='|pagealloc: memory corruption|pagealloc: single bit error'
SPLAT+='|rcu: INFO: .*stall|INFO: rcu_tasks.* detected stall'
SPLAT+='|kmemleak: (Found object by alias|Cannot insert .* into the object search tree'
SPLAT+='|Partially freeing unknown|Not resetting the checksum of an unknown'
SPLAT+='|Adding scan area to unknown|Scan area larger than|Setting excess_ref on unknown'
SPLAT+='|Not scanning unknown|Updating stack trace for unknown)'
SPLAT+='|stackdepot: (hash table|stack pools) allocation failed'
SPLAT+='|printk messages dropped'
# The OOM killer's first line names the allocation that ran out.
SPLAT+='|invoked oom-killer:'
# A vmstat counter below zero (guest/init.sh reads stat_refresh).
SPLAT+='|vmstat_refresh: [a-z_]+ -[0-9]+'
SPLAT+='|BUG [^ ]+ \([^)]*\): '
SPLAT+='|HLU: error:'

# Split the log into stages: a stage starts with the kernel's banner.
splat=""
# Lines after a stray banner (a program printing /proc/version) belong to
# the last stage.
banners=$(grep -ac 'Linux version ' "$log" || true)
for ((k = 1; k <= stages; k++)); do
	hit=$(awk -v k="$k" -v last="$stages" '/Linux version /{ n++ }
		n == k || (k == last && n > last)' "$log" |
		grep -aEm1 "$SPLAT" || true)
	if [ -n "$hit" ]; then
		splat="kernel splat in stage $k: ${hit#\[host*\] }"
		break
	fi
done
# The last stage must end: a hang or a crash after the last result line
# leaves no "HLU: done", or QEMU does not exit by itself.
ending=""
if ! grep -aqE '^\[host *[0-9.]+\] HLU: done$' "$log"; then
	ending="no 'HLU: done': the last stage did not end"
elif [ "$banners" -lt "$stages" ]; then
	ending="$banners kernels booted for $stages stages"
elif [ "$rc" != 0 ]; then
	ending="QEMU exited with $rc after 'HLU: done'"
fi
[ "$rc" != 124 ] || ending="timeout after $((stages * stage_timeout)) s"
# A kernel booted with hlu.kmemleak=1 must have looked for leaks: a stage
# whose command line asks for it and has no "HLU: kmemleak: N unreferenced
# objects" line never scanned (init skipped it, or the stage ended early).
if [ -z "$ending" ]; then
	noscan=$(awk '/\] Command line: / { n++; want[n] = /hlu\.kmemleak=1( |$)/ }
		/HLU: kmemleak: [0-9]+ unreferenced objects/ { got[n] = 1 }
		END { for (k = 1; k <= n; k++) if (want[k] && !got[k]) { print k; exit } }' "$log")
	[ -z "$noscan" ] ||
		ending="stage $noscan was booted with hlu.kmemleak=1 and never scanned for leaks"
fi

if [ -z "$ending" ] && [ -n "$expect" ] && ! grep -aqE "$expect" "$log"; then
	ending="no line of the log matches '$expect'"
fi

# The boot's fault-injection sweeps: a note, and a failure of every
# program when the kexec sweep went wrong.
coverage=$(awk -f "$TOP/tests/fault-coverage.awk" "$log")
sweep=$(sed -n 's/^bad: //p' <<< "$coverage")
note=$(sed -n 's/^note: //p' <<< "$coverage")

# The TAP skip lines of PROG, all stages.
skip_lines() {
	awk -v p="$1" '
		index($0, "HLU: run stage=") && index($0, " prog=" p) { on = $0 ~ (" prog=" p "$") }
		index($0, "HLU: result stage=") { on = 0 }
		on && /# SKIP/ { sub(/^\[host *[0-9.]*\] /, ""); print }' "$log"
}

# The first TAP "not ok" line of PROG, all stages: a program that reports a
# failed test and still exits 0 fails.
not_ok_line() {
	awk -v p="$1" '
		index($0, "HLU: run stage=") && index($0, " prog=" p) { on = $0 ~ (" prog=" p "$") }
		index($0, "HLU: result stage=") { on = 0 }
		on && /(^|\] )[# ]*not ok / { sub(/^\[host *[0-9.]*\] /, ""); print; exit }' "$log"
}

# Why stage $2 of PROG failed, in its own words: its "Bail out!" line
# (ksft_exit_fail_msg()), else its first "not ok" line (a kselftest
# harness test), else its last line of output.
fail_message() {
	awk -v s="HLU: run stage=$2 prog=$1" '
		{ t = $0; sub(/^\[host *[0-9.]*\] /, "", t) }
		t == s { on = 1; next }
		on && index(t, "HLU: result stage=") { on = 0 }
		!on || t ~ /^\[ *[0-9]+\.[0-9]+\]/ || index(t, "HLU:") { next }
		{ last = t }
		/Bail out! / { bail = t }
		t ~ /^[# ]*not ok / && notok == "" { notok = t }
		END { print bail != "" ? bail : notok != "" ? notok : last }' "$log"
}

# Whether SKIPS allows PROG to skip the line $2 ("" for the whole program).
skip_allowed() {
	local prog text
	while read -r prog text; do
		[ "$prog" = "$1" ] || continue
		[ -n "$text" ] || return 0
		[ -n "$2" ] && [[ "$2" == *"$text"* ]] && return 0
	done < <(sed 's/[[:space:]]*#.*//; /^[[:space:]]*$/d' "$skips")
	return 1
}

for p in "${progs[@]}"; do
	prog=${p%%:*} n=${p##*:} status=pass reason=""
	for ((k = 1; k <= n; k++)); do
		res=$( (grep -aoE "HLU: result stage=$k prog=$prog rc=[0-9]+" "$log" || true) |
			tail -n 1 | sed 's/.*rc=//')
		if [ -z "$res" ]; then
			status=fail
			reason="stage $k never reported"
			[ "$rc" = 124 ] && reason+=" (timeout after $((stages * stage_timeout)) s)"
			break
		elif [ "$res" = 4 ]; then
			status=skip
			reason=$(awk -v s="HLU: run stage=$k prog=$prog" \
				'index($0, s) { on = 1; next } on && /SKIP/ { print; exit }' "$log")
			reason="${reason#\[host*\] }"
			reason=${reason:-"exit code 4 (KSFT_SKIP)"}
			if ! skip_allowed "$prog" ""; then
				status=fail
				reason="skip not in the allow-list: $reason"
			fi
			break
		elif [ "$res" != 0 ]; then
			status=fail
			reason="stage $k exited with $res: $(fail_message "$prog" "$k")"
			break
		fi
	done
	allowed=0
	while IFS= read -r line; do
		if ! skip_allowed "$prog" "$line"; then
			[ "$status" = fail ] || reason="skip not in the allow-list: $line"
			status=fail
			break
		fi
		allowed=$((allowed + 1))
	done < <(skip_lines "$prog")
	[ "$status" != pass ] || [ "$allowed" = 0 ] || reason="($allowed allowed skips)"
	if [ "$status" != fail ]; then
		line=$(not_ok_line "$prog")
		[ -z "$line" ] || { status=fail reason="exited 0 after a failed test: $line"; }
	fi
	if [ -n "$splat" ] || [ -n "$ending" ] || [ -n "$sweep" ]; then
		status=fail
		reason=${splat:-${ending:-$sweep}}
	fi
	echo "$prog $status $reason"
done
[ -z "$note" ] || echo "# $note"
