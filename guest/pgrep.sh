#!/bin/sh
# pgrep -f PATTERN, as procps has it, for upstream's hugetlb selftest
# scripts: busybox-static has no pgrep.
[ "${1:-}" = -f ] && shift
found=1
for d in /proc/[0-9]*; do
	pid=${d#/proc/}
	[ "$pid" = $$ ] && continue
	cmd=$(tr '\0' ' ' < "$d/cmdline" 2>/dev/null) || continue
	case $cmd in
	*"$1"*)
		echo "$pid"
		found=0
		;;
	esac
done
exit $found
