#!/bin/bash
# Boot one test VM in QEMU (TCG) and let it run its stages, chained by kexec
# (see guest/init.sh), then judge every program from the serial log
# (tests/judge.sh, which says when a program fails).
#
# Usage: vmtest.sh [-m MEM] [-t STAGE_TIMEOUT] [-a KERNEL_ARGS] [-q QEMU_ARGS]
#                  [-s SKIPS] [-e EXPECT] BZIMAGE INITRD LOG PROG:N...
# Prints what tests/judge.sh prints: one line per program, "PROG
# pass|fail|skip REASON", and notes ("# ...").  -t, -s and -e are the
# judge's too.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

# -t, -s and -e go on to the judge as they are.
mem=2G stage_timeout=120 kargs="" qargs="" judge=()
while getopts "m:t:a:q:s:e:" o; do
	case $o in
	m) mem=$OPTARG ;;
	a) kargs=$OPTARG ;;
	q) qargs=$OPTARG ;;
	t | s | e)
		judge+=("-$o" "$OPTARG")
		[ "$o" != t ] || stage_timeout=$OPTARG
		;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
bz=$1 initrd=$2 log=$3
shift 3
progs=("$@")

stages=$(stage_count "${progs[@]}")
run=$(IFS=,; echo "${progs[*]}")

# The console prints kernel messages from a thread, so a kernel line can
# come in the middle of a line a program writes ("HLU: res[  3.1] ...",
# then "ult stage=1 ..." on the next line): each kernel line (from its
# "[  SECONDS] " prefix to the end of the line) goes to the log on its own,
# and the pieces of the program's line are joined and logged once its end
# comes.  A kernel line is never cut: the console driver writes it whole.
mkdir -p "$(dirname "$log")"
start=$(date +%s.%N)
set +e
# shellcheck disable=SC2086 # qargs holds several QEMU options
timeout --foreground -k 5 $((stages * stage_timeout)) \
	qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m "$mem" $qargs \
	-nodefaults -display none -no-reboot -serial stdio -monitor none \
	-kernel "$bz" -initrd "$initrd" \
	-append "console=ttyS0 earlyprintk=serial,ttyS0 printk.time=1 panic=-1 retain_initrd liveupdate=on $kargs hlu.run=$run hlu.stages=$stages" \
	</dev/null 2>&1 |
	perl -MTime::HiRes=time -ne 'BEGIN { $| = 1; $t0 = '"$start"'; $u = "" }
		sub out { printf "[host %8.3f] %s\n", time - $t0, $_[0] }
		s/\r//g;
		$end = s/\n$//;
		if (/^(.*?)(\[ *[0-9]+\.[0-9]{6}\] .*)$/) {
			$u .= $1;
			out($2);
		} else {
			$u .= $_;
			if ($end) { out($u); $u = "" }
		}
		END { out($u) if $u ne "" }' > "$log"
rc=${PIPESTATUS[0]}
set -e
wall=$(perl -MTime::HiRes=time -e "printf '%.1f', time - $start")
echo "[host] qemu exit $rc after ${wall}s" >> "$log"

exec "$(dirname "$0")/judge.sh" "${judge[@]}" "$log" "${progs[@]}"
