#!/bin/bash
# The report of make bench, from the CSV files scripts/bench.sh wrote:
# bench.md (tables, fit, extrapolation, yield, targets), the PNG plots,
# the README's bench section, and the targets as PASS/MISS lines.
# Usage: bench-report.sh RESULTS_DIR REPS
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$1 reps=$2
summary=$out/summary.csv fit=$out/fit.csv
kver=$(grep -aom1 'kernel=[^ ]*' "$LOGS/bench/1G.log" | sed 's/kernel=//')
day=$(date +%F)

# The summary's COL for TYPE and MIB (COL e.g. preserve_ms_med).
val() {
	awk -F, -v t="$1" -v m="$2" -v c="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) col = i; next }
		$1 == t && $2 == m { print $col; exit }' "$summary"
}
# The fit's fixed or per-page cost of METRIC for TYPE.
fitv() {
	awk -F, -v t="$1" -v m="$2" -v w="$3" '$1 == t && $2 == m { print (w == "fixed" ? $3 : $4); exit }' "$fit"
}
# Bytes per page of TYPE.
ps_of() {
	case $1 in
	1G) echo 1073741824 ;;
	2M) echo 2097152 ;;
	*) echo 4096 ;;
	esac
}
calc() {
	awk "BEGIN { printf \"$1\", $2 }"
}
# median (min to max) of COL for TYPE and MIB, with printf format FMT.
mm() {
	local med min max
	med=$(val "$1" "$2" "${3}_med") min=$(val "$1" "$2" "${3}_min") max=$(val "$1" "$2" "${3}_max")
	[ -n "$med" ] || { echo "-"; return; }
	echo "$(calc "$4" "$med") ($(calc "$4" "$min")-$(calc "$4" "$max"))"
}

md=$out/bench.md
{
	echo "# make bench: $day, Linux $kver"
	echo
	echo "Fast kernel under QEMU TCG (2 host cores, no KVM), one VM per page size,"
	echo "one kexec per point, every point $reps times: median (min-max).  Times"
	echo "are the guest's CLOCK_MONOTONIC except the blackout (host clock, serial"
	echo "timestamps) and the kexec's old-kernel part (the old kernel's clock)."
	echo
	echo "## Per size"
	echo
	echo "| pages | MiB | preserve ms | migrated at preserve | retrieve ms | finish ms | first touch, all pages ms | first touch µs/page (fresh page) | old kernel, reboot() to next kernel ms | next kernel to userspace s | blackout s | metadata B/page |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for t in 1G 2M shmem; do
		awk -F, -v t="$t" '$1 == t { print $2 }' "$summary" | while read -r mib; do
			pages=$(val "$t" "$mib" pages)
			meta=-
			if [ "$mib" != 0 ]; then
				meta=$(calc '%.1f' "$(val "$t" "$mib" metadata_b_med) / $pages")
				echo "| $t | $mib | $(mm "$t" "$mib" preserve_ms '%.2f') | $(calc '%.0f' "$(val "$t" "$mib" migrated_med) * 4096 / $(ps_of "$t")") | $(mm "$t" "$mib" retrieve_ms '%.2f') | $(mm "$t" "$mib" finish_ms '%.2f') | $(mm "$t" "$mib" touch_ms '%.1f') | $(calc '%.2f' "$(val "$t" "$mib" touch_page_us_med)") ($(calc '%.1f' "$(val "$t" "$mib" touch_fresh_us_med)")) | $(mm "$t" "$mib" kexec_old_ms '%.1f') | $(mm "$t" "$mib" new_uptime_s '%.2f') | $(mm "$t" "$mib" blackout_s '%.2f') | $meta |"
			else
				echo "| $t | nothing | | | | | | | $(mm "$t" 0 kexec_old_ms '%.1f') | $(mm "$t" 0 new_uptime_s '%.2f') | $(mm "$t" 0 blackout_s '%.2f') | |"
			fi
		done
	done
	echo
	echo "## Fixed cost and cost per page"
	echo
	echo "cost = fixed + per page x pages, fitted (Theil-Sen) to the medians of the sizes."
	echo
	echo "| pages | preserve | retrieve | finish | first touch | metadata |"
	echo "| --- | --- | --- | --- | --- | --- |"
	for t in 1G 2M shmem; do
		row="| $t "
		for m in preserve_ms retrieve_ms finish_ms touch_ms; do
			row+="| $(calc '%.3g' "$(fitv "$t" "$m" fixed)") ms + $(calc '%.3g' "$(fitv "$t" "$m" per_page) * 1000") µs per page "
		done
		row+="| $(calc '%.0f' "$(fitv "$t" metadata_b fixed)") B + $(calc '%.1f' "$(fitv "$t" metadata_b per_page)") B per page |"
		echo "$row"
	done
	echo
	echo "A preserve pins the pages for good, and a pin first migrates (copies)"
	echo "pages that lie in KHO scratch (CMA memory the next kernel boots from):"
	for t in 2M shmem; do
		big=$(awk -F, -v t="$t" '$1 == t { m = $2 } END { print m }' "$summary")
		migr=$(val "$t" "$big" migrated_med)
		{ [ -n "$migr" ] && [ "$migr" != 0 ]; } || continue
		extra=$(calc '%.1f' "$(val "$t" "$big" preserve_ms_med) - ($(fitv "$t" preserve_ms fixed) + $(fitv "$t" preserve_ms per_page) * $(val "$t" "$big" pages))")
		if awk "BEGIN { exit !($extra > 0) }"; then
			echo "at $big MiB of $t pages, $(calc '%.0f' "$migr * 4096 / 1048576") MiB of them, $extra ms more than the fit,"
			echo "$(calc '%.1f' "$extra * 1000 / ($migr * 4096 / 1048576)") µs per MiB copied."
		else
			echo "at $big MiB of $t pages, $(calc '%.0f' "$migr * 4096 / 1048576") MiB of them, within the noise of the fit."
		fi
	done
	echo "What lands in scratch is bounded by the scratch size, not by the pool."
	echo
	echo "## Extrapolated to a host's guest RAM"
	echo
	echo "From the fit (TCG times: hardware runs the same code 10-50 times faster;"
	echo "the preserve without migrations out of KHO scratch)."
	echo
	echo "| guest RAM | pages | preserve | retrieve | finish | metadata |"
	echo "| --- | --- | ---: | ---: | ---: | ---: |"
	for gib in 64 1024 12288; do
		for t in 2M 1G shmem; do
			case $t in
			1G) pages=$gib ;;
			2M) pages=$((gib * 512)) ;;
			shmem) pages=$((gib * 262144)) ;;
			esac
			row="| $( [ "$gib" -ge 1024 ] && echo "$((gib / 1024)) TiB" || echo "$gib GiB") | $t: $pages "
			for m in preserve_ms retrieve_ms finish_ms; do
				row+="| $(calc '%.3g s' "($(fitv "$t" "$m" fixed) + $(fitv "$t" "$m" per_page) * $pages) / 1000") "
			done
			row+="| $(calc '%.3g MiB' "($(fitv "$t" metadata_b fixed) + $(fitv "$t" metadata_b per_page) * $pages) / 1048576") |"
			echo "$row"
		done
	done
	echo
	echo "## Boot-time 1 GiB pool yield (8 GiB VM, hugepagesz=1G hugepages=8)"
	echo
	echo "The preserved 1 GiB page is one of the pool's pages: the boot allocates"
	echo "the others, and retrieve adds it back."
	echo
	echo "| boot | 1 GiB pages |"
	echo "| --- | ---: |"
	tail -n +2 "$out/yield.csv" | sed 's/^/| /; s/,\([0-9]*\)$/ | \1 |/'
} > "$md"

# Targets, from the numbers just measured.
targets=$out/targets.txt
{
	s=$(val shmem 1024 preserve_ms_med) r=$(val shmem 1024 retrieve_ms_med)
	g=$(val 1G 1024 preserve_ms_med) q=$(val 1G 1024 retrieve_ms_med)
	ratio=$(calc '%.0f' "($s + $r) / ($g + $q)")
	v=$([ "$ratio" -ge 1000 ] && echo PASS || echo MISS)
	echo "$v preserve + retrieve of 1 GiB: 1 GiB pages $(calc '%.2f' "$g + $q") ms, shmem $(calc '%.1f' "$s + $r") ms: ${ratio}x faster (target 1000x)"
	b0=$(val 1G 0 blackout_s_med) b4=$(val 1G 4096 blackout_s_med)
	pct=$(calc '%.1f' "($b4 / $b0 - 1) * 100")
	v=$(awk "BEGIN { print ($pct <= 5 ? \"PASS\" : \"MISS\") }")
	echo "$v kexec blackout with 4 GiB in 1 GiB pages: $(calc '%.2f' "$b4") s, nothing preserved $(calc '%.2f' "$b0") s: ${pct}% (target 5%)"
	for t in 1G 2M; do
		big=$(awk -F, -v t="$t" '$1 == t { m = $2 } END { print m }' "$summary")
		tp=$(val "$t" "$big" touch_page_us_med) tf=$(val "$t" "$big" touch_fresh_us_med)
		v=$(awk "BEGIN { print ($tp * 10 < $tf ? \"PASS\" : \"MISS\") }")
		echo "$v first touch of a retrieved $t page: $(calc '%.1f' "$tp") µs, of a fresh one (cleared) $(calc '%.1f' "$tf") µs: $(calc '%.0f' "$tf / $tp")x (no byte zeroed or copied: target 10x at least)"
	done
	for t in 1G 2M; do
		pp=$(fitv "$t" metadata_b per_page)
		big=$(awk -F, -v t="$t" '$1 == t { m = $2 } END { print m }' "$summary")
		at=$(calc '%.1f' "$(val "$t" "$big" metadata_b_med) / $(val "$t" "$big" pages)")
		v=$(awk "BEGIN { print ($pp <= 16 ? \"PASS\" : \"MISS\") }")
		echo "$v metadata per $t page: $(calc '%.1f' "$pp") B/page more for each page (fit), $at B/page in all at $big MiB (target 16)"
	done
	yc=$(sed -n 's/^cold,//p' "$out/yield.csv")
	ya=$(sed -n 's/^after an update with a 2M and a 1G file: after retrieve,//p' "$out/yield.csv")
	v=$([ $((yc - ya)) -le 1 ] && echo PASS || echo MISS)
	echo "$v boot-time 1 GiB pool after an update carrying data: $ya pages, cold boot $yc (target: within 1 page)"
} > "$targets"
{
	echo
	echo "## Targets"
	echo
	sed 's/^/- /' "$targets"
} >> "$md"

# Plots.
plot() {
	gnuplot -e "set terminal png size 900,560 font ',10'; set output '$out/$1'; set datafile separator ','; set key top left; set grid; $2"
}
plot bench-costs.png "set logscale xy; set xlabel 'memfd size (MiB)'; set ylabel 'ms (median, TCG)';
	set title 'preserve and retrieve of a memfd, Linux $kver under TCG, $day';
	plot for [t in '1G 2M shmem'] '$summary' every ::1 using (strcol(1) eq t && \$2 > 0 ? \$2 : 1/0):5 with linespoints title 'preserve '.t,
	     for [t in '1G 2M shmem'] '$summary' every ::1 using (strcol(1) eq t && \$2 > 0 ? \$2 : 1/0):20 with linespoints dashtype 2 title 'retrieve '.t"
plot bench-blackout.png "set logscale x; set xlabel 'memfd size (MiB; 32 = nothing preserved)'; set ylabel 's (median, host clock)';
	set yrange [0:*]; set title 'kexec blackout, reboot() to the next userspace, $day';
	plot for [t in '1G 2M shmem'] '$summary' every ::1 using (strcol(1) eq t ? (\$2 > 0 ? \$2 : 32) : 1/0):17:18:19 with yerrorlines title t"

# The README's bench section.
readme=$TOP/README.md
if grep -q '<!-- bench:begin -->' "$readme"; then
	awk -v md="$md" '
		/<!-- bench:begin -->/ { print; print ""
			while ((getline l < md) > 0) {
				if (l ~ /^# /) {
					sub(/^# make bench: /, "", l)
					print "Latest run: " l " (`bench/results/bench.md`)."
					print ""
					print "![preserve and retrieve](bench/results/bench-costs.png)"
					print "![kexec blackout](bench/results/bench-blackout.png)"
				} else
					print (l ~ /^## / ? "#" l : l)
			}
			skip = 1; next }
		/<!-- bench:end -->/ { print ""; skip = 0 }
		!skip' "$readme" > "$readme.tmp"
	mv "$readme.tmp" "$readme"
fi

cat "$targets"
echo "bench: results in ${out#"$TOP"/}/ (bench.md, bench.csv, summary.csv, fit.csv, yield.csv, PNG plots); logs in ${LOGS#"$TOP"/}/bench/"
