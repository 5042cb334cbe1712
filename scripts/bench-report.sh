#!/bin/bash
# The report of make bench, from the CSV files scripts/bench.sh wrote:
# bench.md (tables, fit, extrapolation, yield, targets), the PNG plots,
# and the targets as PASS/MISS lines.
# Usage: bench-report.sh RESULTS_DIR REPS [PAIR_MIB]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$1 reps=$2 pair_mib=${3:-12288}
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
	awk -F, -v t="$1" -v m="$2" -v w="$3" '$1 == t && $2 == m { print (w == "fixed" ? $3 : w == "resolved" ? $6 : $4); exit }' "$fit"
}
# The per-page cost of METRIC for TYPE, times FACTOR, with printf FORMAT;
# "n/r" when the fit could not resolve one.
per_page() {
	if [ "$(fitv "$1" "$2" resolved)" = 1 ]; then
		calc "$4" "$(fitv "$1" "$2" per_page) * $3"
	else
		echo "n/r"
	fi
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
	echo "| pages | MiB | preserve ms | migrated at preserve | retrieve ms (session + file) | finish ms | first touch, all pages ms | first touch µs/page (fresh page) | old kernel: LUO freeze, serialize, shutdown ms | next kernel to userspace s | blackout s | metadata, all of it, per page B |"
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
	echo "cost = fixed + per page x pages, fitted (Theil-Sen) to the medians of the sizes;"
	echo "n/r: no cost per page resolved (it came out 0 or less: noise on a constant)."
	echo "Metadata is resolved to a 4 KiB page: for 1 to 4 pages of 1 GiB, that is"
	echo "1 to 4 KiB per page, so its per-page cost there says nothing."
	echo
	echo "| pages | preserve | retrieve | finish | first touch | metadata |"
	echo "| --- | --- | --- | --- | --- | --- |"
	for t in 1G 2M shmem; do
		row="| $t "
		for m in preserve_ms retrieve_ms finish_ms touch_ms; do
			row+="| $(calc '%.3g' "$(fitv "$t" "$m" fixed)") ms + $(per_page "$t" "$m" 1000 '%.3g') µs per page "
		done
		row+="| $(calc '%.0f' "$(fitv "$t" metadata_b fixed)") B + $(per_page "$t" metadata_b 1 '%.1f') B per page |"
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
	echo "From the fit, up to 3000 times past the largest size measured: how each"
	echo "cost scales, in TCG's time (hardware's factor is not measured here); ≥:"
	echo "the fixed cost only, as no cost per page was resolved.  The preserve"
	echo "leaves out migrations out of KHO scratch, whose size grows with RAM."
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
			for m in preserve_ms retrieve_ms finish_ms metadata_b; do
				div=1000 unit=s
				[ "$m" != metadata_b ] || div=1048576 unit=MiB
				lb=""
				[ "$(fitv "$t" "$m" resolved)" = 1 ] || lb="≥ "
				row+="| $lb$(calc "%.3g $unit" "($(fitv "$t" "$m" fixed) + $(fitv "$t" "$m" per_page) * $pages) / $div") "
			done
			row+="|"
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
	# Retrieve's cost per page (fit, TCG), and 12 TiB of 1 GiB pages.
	for tt in "1G 50" "2M 5"; do
		read -r t us <<< "$tt"
		pp=$(calc '%.1f' "$(fitv "$t" retrieve_ms per_page) * 1000")
		v=$(awk "BEGIN { print ($pp <= $us ? \"PASS\" : \"MISS\") }")
		echo "$v retrieve per $t page: $pp µs (fit, TCG, HVO on; target $us µs)"
	done
	tb=$(calc '%.2f' "($(fitv 1G retrieve_ms fixed) + $(fitv 1G retrieve_ms per_page) * 12288) / 1000")
	v=$(awk "BEGIN { print ($tb < 1 ? \"PASS\" : \"MISS\") }")
	echo "$v retrieve of 12 TiB in 1 GiB pages, extrapolated from the fit: $tb s (TCG; target under 1 s)"
	# Boot: in the 1G-pairs VM, each round's point with data against the
	# same round's point that carried nothing, by the next kernel's own
	# clock (its uptime when userspace starts), by the kernels' clocks
	# (the old kernel's part + that uptime) and by the host clock (the
	# blackout, which also has purgatory and the decompression); the
	# median of the differences with a distribution-free confidence
	# interval (order statistics, at least 90%).  PASS: the next kernel's
	# interval lies at or under 5%; MISS: above; else INCONCLUSIVE.
	read -r n conf hmed hlo hhi kmed klo khi umed ulo uhi < <(awk -F, -v pm="$pair_mib" "$SORT_AWK"'
		$1 == "1G-pairs" && $3 == 0 { h0 = $9; k0 = $7 / 1000 + $8; u0 = $8 }
		$1 == "1G-pairs" && $3 == pm && h0 != "" { n++; h[n] = ($9 / h0 - 1) * 100; k[n] = (($7 / 1000 + $8) / k0 - 1) * 100; u[n] = ($8 / u0 - 1) * 100 }
		END {
			if (n < 1) { print 0; exit }
			sort(h, n); sort(k, n); sort(u, n)
			# The largest j with P(Binomial(n, 1/2) < j) <= 5%:
			# [x(j), x(n + 1 - j)] covers the median with >= 90%.
			j = 1; c = 0; p = 0.5 ^ n
			for (i = 0; i < n; i++) { c += p; if (c > 0.05) break; j = i + 2; p = p * (n - i) / (i + 1) }
			if (j > (n + 1) / 2) j = 1
			cov = 1; c = 0; p = 0.5 ^ n
			for (i = 0; i < j - 1; i++) { c += p; p = p * (n - i) / (i + 1) }
			printf "%d %.0f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f\n", n, (1 - 2 * c) * 100,
			       median(h, n), h[j], h[n + 1 - j], median(k, n), k[j], k[n + 1 - j],
			       median(u, n), u[j], u[n + 1 - j]
		}' "$out/bench.csv")
	if [ "$n" = 0 ]; then
		echo "MISS next kernel's boot: no pairs measured"
	else
		v=$(awk "BEGIN { print ($uhi <= 5 ? \"PASS\" : $ulo > 5 ? \"MISS\" : \"INCONCLUSIVE\") }")
		echo "$v next kernel's time to userspace with $((pair_mib / 1024)) GiB in 1 GiB pages against nothing preserved, $n rounds paired: median ${umed}% (${conf}% interval ${ulo}% to ${uhi}%) by its own clock; ${kmed}% (${klo}% to ${khi}%) with the old kernel's part, ${hmed}% (${hlo}% to ${hhi}%) by the host clock (target 5%)"
	fi
	for t in 1G 2M; do
		big=$(awk -F, -v t="$t" '$1 == t { m = $2 } END { print m }' "$summary")
		tp=$(val "$t" "$big" touch_page_us_med) tf=$(val "$t" "$big" touch_fresh_us_med)
		v=$(awk "BEGIN { print ($tp * 10 < $tf ? \"PASS\" : \"MISS\") }")
		echo "$v after preserve, nothing copied or zeroed: first touch of a retrieved $t page $(calc '%.1f' "$tp") µs, of a fresh one (cleared) $(calc '%.1f' "$tf") µs: $(calc '%.0f' "$tf / $tp")x (target 10x at least)"
		copied=$(awk -F, -v t="$t" 'NR > 1 && $1 == t && $8 > m { m = $8; s = $2 } END { if (m > 0) printf "%.0f MiB of %s MiB", m * 4096 / 1048576, s }' "$summary")
		if [ -n "$copied" ]; then
			echo "MISS at preserve, nothing copied: the long-term pin migrated $t pages out of KHO scratch, up to $copied (median)"
		else
			echo "PASS at preserve, nothing copied: no $t page migrated"
		fi
	done
	pp=$(fitv 2M metadata_b per_page)
	big=$(awk -F, '$1 == "2M" { m = $2 } END { print m }' "$summary")
	res=$(calc '%.1f' "4096 / ($(val 2M "$big" pages) - $(val 2M 64 pages))")
	v=$(awk "BEGIN { print ($pp <= 16 ? \"PASS\" : \"MISS\") }")
	echo "$v metadata per 2M page: $(calc '%.1f' "$pp") B per page (fit, resolution ${res} B: one 4 KiB page over the sizes), $(calc '%.1f' "$(val 2M "$big" metadata_b_med) / $(val 2M "$big" pages)") B per page in all at $big MiB (target 16; the folio entry alone is 16 B)"
	echo "N/R metadata per 1G page: $(calc '%.0f' "$(val 1G 1024 metadata_b_med)") B for 1 page, $(calc '%.0f' "$(val 1G 4096 metadata_b_med)") B for 4 (the serialized file, its list and LUO's, per file); one 4 KiB page of resolution is 1 KiB per page: not resolved"
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

cat "$targets"
echo "bench: results in ${out#"$TOP"/}/ (bench.md, bench.csv, summary.csv, fit.csv, yield.csv, PNG plots); logs in ${LOGS#"$TOP"/}/bench/"
