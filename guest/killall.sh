#!/bin/sh
# killall [-SIGNAL] [--wait] NAME, as psmisc has it, for upstream's hugetlb
# selftest scripts: busybox's killall has no --wait.
sig=-TERM wait=""
while [ $# -gt 1 ]; do
	case $1 in
	--wait) wait=1 ;;
	-*) sig=$1 ;;
	esac
	shift
done
busybox killall "$sig" "$1" || exit 1
if [ -n "$wait" ]; then
	while busybox pidof "$1" > /dev/null; do
		sleep 0.1
	done
fi
