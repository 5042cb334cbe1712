#!/bin/bash
# make bench: what a live update of huge pages costs, against shmem memfds,
# and how each cost grows with the memory preserved.  One QEMU VM per page
# size (1G, 2M, shmem) runs a size sweep, one kexec per point, each point
# BENCH_REPS times (guest/hlu-bench.c); one more VM measures the boot-time
# 1 GiB pool's yield.  Writes bench/results/: bench.csv (every point),
# summary.csv (median, min, max), fit.csv (fixed + per-page costs),
# bench.md (tables, extrapolation, targets) and PNG plots; prints the
# targets as PASS/MISS lines.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$TOP/config/kernels.sh"
kernel_load bench

reps=${BENCH_REPS:-5}
out=$TOP/bench/results
blogs=$LOGS/bench
mkdir -p "$out" "$blogs"
initrd=$BUILD/initramfs-bench.cpio.gz
[ "${BENCH_REUSE:-0}" = 1 ] ||
	"$TOP/scripts/mkinitramfs.sh" "$(kernel_image bench)" "$BUILD/guest/bin" "$initrd"

small="64,128,256,512,1024,2048,4096"
# HVO on, as on hosts that keep guest RAM in huge pages: a retrieve pays
# for the vmemmap optimization of every page it restores, as a fresh page
# does.
hvo=hugetlb_free_vmemmap=on
# Each point first hands over a file of two pages of its type in a session
# of its own (guest/hlu-bench.c, hlu.bench_warm=2), timed apart as the
# cold costs: the first file an update preserves or retrieves runs kernel
# code TCG translates then (and preserves the FLBs), which would otherwise
# be measured as the point's fixed cost.  Two pages, so that what only a
# file of several pages runs is translated too: with one, 1 GiB files of
# two and four pages paid about 0.15 ms more each for their list's check
# and their page cache and reserve map entries than a file of one, which
# the fit took for a per-page cost.  The pools have room for it.
# BENCH_WARM=0 hands over the point's file alone.
warm=hlu.bench_warm=2
[ "${BENCH_WARM:-1}" = 1 ] || warm=""
# NAME  GiB  KERNEL_ARGS  (the sizes in MiB; 1 GiB pages start at 1 GiB)
configs=(
	"1G 11 $hvo hugepagesz=1G hugepages=6 hlu.bench=1G hlu.bench_sizes=1024,2048,4096"
	"2M 6 $hvo hugepages=2064 hlu.bench=2M hlu.bench_sizes=$small"
	"shmem 6 hlu.bench=shmem hlu.bench_sizes=$small"
)
# The boot-time target needs more pairs than the sweep's rounds: nothing
# and 12 GiB of 1 GiB pages in a 16 GiB VM, BENCH_PAIRS rounds.
pairs=${BENCH_PAIRS:-15}
pair_mib=12288
pair_config="1G-pairs 16 $hvo hugepagesz=1G hugepages=13 hlu.bench=1G hlu.bench_sizes=$pair_mib"
# Under TCG a boot's length by the host clock varies by a fifth from one
# kexec to the next, more than the 5% the target asks to resolve.  QEMU's
# instruction counting (-icount) drives the guest's clock by the
# instructions it executes (shift=0: 1 ns each; sleep=off: an idle vCPU
# skips to its next timer), so the next kernel's own clock measures the
# work its boot does, not how the host ran it.  The host clock is still
# reported.  BENCH_ICOUNT=0 boots these VMs as the others.
pair_qemu=""
[ "${BENCH_ICOUNT:-1}" = 0 ] || pair_qemu="-icount shift=0,sleep=off"

# Boot one VM, printing its progress; $1 name, $2 GiB, $3 stages, $4 args,
# $5 QEMU options.
bench_vm() {
	local name=$1 mem=$2 stages=$3 args=$4 qargs=${5:-} log=$blogs/$1.log pid res
	printf '==> bench %-6s %2d stages (one kexec each), %s GiB  [%s]\n' "$name" "$stages" \
		"$mem" "$(date +%T)"
	: > "$log"
	"$TOP/tests/vmtest.sh" -m "${mem}G" -t "$CFG_TIMEOUT" -a "$args" -q "$qargs" "$(kernel_image bench)" "$initrd" \
		"$log" "hlu-bench:$stages" > "$log.result" &
	pid=$!
	tail -F -n +1 --pid=$pid "$log" 2> /dev/null |
		grep -a --line-buffered 'hlu-bench: point' |
		sed -u 's/^\[host *\([0-9.]*\)\] hlu-bench: /    [\1 s] /' || true
	wait $pid || true
	res=""
	read -r _ res _ < "$log.result" || true
	[ "$res" = pass ] || die "bench VM $name failed: $(cut -d' ' -f3- "$log.result") (log: ${log#"$TOP"/})"
}

# BENCH_REUSE=1: only the report, from the last run's logs; BENCH_ONLY="NAME
# ...": only these VMs (1G 2M shmem 1G-pairs yield), the others' last logs.
run_vm() {
	[ "${BENCH_REUSE:-0}" != 1 ] || return 1
	[ -z "${BENCH_ONLY:-}" ] || [[ " $BENCH_ONLY " == *" $1 "* ]]
}
for c in "${configs[@]}"; do
	read -r name mem args <<< "$c"
	run_vm "$name" || continue
	sizes=${args##*hlu.bench_sizes=}
	sizes=${sizes%% *}
	points=$((reps + reps * $(tr ',' '\n' <<< "$sizes" | wc -l)))
	bench_vm "$name" "$mem" $((points + 1)) "$args hlu.bench_reps=$reps $warm"
done
read -r name mem args <<< "$pair_config"
if run_vm "$name"; then
	# A warm-up file of one page: 12 and 2 would not fit in the 16 GiB VM.
	bench_vm "$name" "$mem" $((2 * pairs + 1)) "$args hlu.bench_reps=$pairs ${warm:+hlu.bench_warm=1}" \
		"$pair_qemu"
fi
if run_vm yield; then
	bench_vm yield 8 3 "hugepagesz=1G hugepages=8 hugepagesz=2M hugepages=32 hlu.bench=yield"
fi

# The report reads every VM's log: after BENCH_ONLY, the others' last ones.
for c in "${configs[@]}" "$pair_config" yield; do
	name=${c%% *}
	[ -s "$blogs/$name.log" ] ||
		die "no log of bench VM $name ($blogs/$name.log) for the report: run make bench without BENCH_ONLY once; the figures of this run are the 'HLU: bench' lines of the logs in $blogs"
done

# Every point: the guest's lines and the kexec that carried the point
# (the one after the stage that preserved it): kernel clock from
# "HLU: reboot" to "Starting new kernel" in the old kernel, the new
# kernel's uptime when its userspace starts, host clock from "HLU:
# reboot" to that moment.
csv=$out/bench.csv
echo "type,point,mib,pages,preserve_ms,migrated,kexec_old_ms,new_uptime_s,blackout_s,retrieve_ms,touch_ms,touch_page_us,touch_fresh_us,finish_ms,memtotal_kb,metadata_b,preserve_cold_ms,retrieve_cold_ms" > "$csv"
for c in "${configs[@]}" "$pair_config"; do
	read -r name _ args <<< "$c"
	# With HVO on, a pool page allocated at boot gives its memory map
	# back and a pending preserved one does not yet.  MemTotal grows by
	# all of it: the boot memory map HVO frees (the KiB the kernel logs)
	# and the page it keeps, which it allocates from memory MemTotal
	# counts already.  1 GiB pages, preserved or not, have their memory
	# map optimized before it exists (7.3, and patch 83 for preserved
	# ones): no difference.
	hvo_kb=0
	if [[ " $args " == *" $hvo "* ]] && [ "$name" = 2M ]; then
		hvo_kb=$(grep -aom1 "[0-9]* KiB vmemmap can be freed for a ${name:0:1}" "$blogs/$name.log" |
			cut -d' ' -f1)
		[ -n "$hvo_kb" ] || die "no HVO line in the log of bench VM $name"
		hvo_kb=$((hvo_kb + 4))
	fi
	awk -v type="$name" -v hvo_kb="$hvo_kb" '
		function host() { s = $0; sub(/^\[host */, "", s); sub(/\].*/, "", s); return s + 0 }
		function kern() { s = $0; sub(/^\[host[^]]*\] \[ */, "", s); sub(/\].*/, "", s); return s + 0 }
		function kv(key,   re) {
			re = " " key "=[^ ]*"
			if (!match($0, re)) return ""
			return substr($0, RSTART + length(key) + 2, RLENGTH - length(key) - 2)
		}
		/HLU: stage [0-9]+ begin/ {
			if (p != "" && t_reboot != "") {
				blackout[p] = host() - t_reboot
				uptime[p] = kv("uptime")
			}
			t_reboot = ""
		}
		/HLU: bench preserve / {
			p = kv("point"); mib[p] = kv("mib"); pages[p] = kv("pages")
			pres[p] = kv("preserve_ms"); mig[p] = kv("migrated"); pcold[p] = kv("preserve_cold_ms")
		}
		/\] HLU: reboot$/ { t_reboot = host(); k_reboot = kern() }
		/kexec_core: Starting new kernel/ { kold[p] = (kern() - k_reboot) * 1000 }
		/HLU: bench retrieve / {
			q = kv("point"); mem[q] = kv("memtotal_kb"); ret[q] = kv("retrieve_ms")
			tch[q] = kv("touch_ms"); fresh[q] = kv("touch_fresh_us"); fin[q] = kv("finish_ms")
			rcold[q] = kv("retrieve_cold_ms")
			n = q + 1 > n ? q + 1 : n
		}
		END {
			# Before retrieve, MemTotal counts neither the
			# preserved data nor the preserved metadata handed
			# over with it (the serialized file, its folio list,
			# LUO'"'"'s blobs; KHO'"'"'s radix tree is read and freed at
			# boot, so it is not in it): the difference to the
			# point of the same round that carried nothing, less
			# the data and the vmemmap HVO gave back for the pages
			# that round allocated at boot instead, is that
			# metadata, to a 4 KiB page.
			for (q = 0; q < n; q++) {
				if (mib[q] == 0) base = mem[q]
				meta = ""
				if (mib[q] > 0 && base != "")
					meta = (base - mem[q] - mib[q] * 1024 - pages[q] * hvo_kb) * 1024
				tp = pages[q] > 0 && tch[q] != "" ? tch[q] * 1000 / pages[q] : ""
				printf "%s,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", type, q, mib[q],
				       pages[q], pres[q], mig[q], kold[q] == "" ? "" : sprintf("%.3f", kold[q]),
				       uptime[q], blackout[q] == "" ? "" : sprintf("%.3f", blackout[q]), ret[q],
				       tch[q], tp, fresh[q], fin[q], mem[q], meta, pcold[q], rcold[q]
			}
		}' "$blogs/$name.log" >> "$csv"
done

# Median, min and max of each column per type and size.
summary=$out/summary.csv
cols="preserve_ms migrated kexec_old_ms new_uptime_s blackout_s retrieve_ms touch_ms touch_page_us touch_fresh_us finish_ms metadata_b preserve_cold_ms retrieve_cold_ms"
{
	printf 'type,mib,pages,reps'
	for col in $cols; do printf ',%s_med,%s_min,%s_max' "$col" "$col" "$col"; done
	echo
	awk -F, -v cols="$cols" "$SORT_AWK"'
		NR == 1 { for (i = 1; i <= NF; i++) idx[$i] = i; next }
		{ key = $1 "," $3; if (!(key in seen)) { order[++nk] = key; pg[key] = $4 } seen[key]++
		  ncol = split(cols, c, " ")
		  for (j = 1; j <= ncol; j++) v[key, j, seen[key]] = $(idx[c[j]]) }
		function med(key, j, n,   a, i, m) {
			m = 0
			for (i = 1; i <= n; i++) if (v[key, j, i] != "") a[++m] = v[key, j, i] + 0
			if (!m) return ",,"
			sort(a, m)
			return sprintf("%g,%g,%g", median(a, m), a[1], a[m])
		}
		END { ncol = split(cols, c, " ")
		      for (k = 1; k <= nk; k++) { key = order[k]; line = key "," pg[key] "," seen[key]
			for (j = 1; j <= ncol; j++) line = line "," med(key, j, seen[key]); print line } }' "$csv"
} > "$summary"

# Fixed cost + cost per page, per type: y = a + b * pages over the medians
# of the sizes that carried data, by Theil-Sen (b the median of the
# slopes between pairs of sizes, a the median of y - b * pages): one or
# two odd sizes do not bend the line.  A slope or fixed cost that comes
# out negative is noise: 0.  The preserve's fit leaves out the sizes whose
# long-term pin migrated pages out of KHO scratch (a cost of its own).
fit=$out/fit.csv
# resolved: 0 when the slope came out 0 or negative (noise on a constant).
echo "type,metric,fixed,per_page,unit,resolved" > "$fit"
for t in 1G 2M shmem; do
	for m in preserve_ms retrieve_ms finish_ms touch_ms metadata_b blackout_s; do
		awk -F, -v t="$t" -v m="$m" "$SORT_AWK"'
			NR == 1 { for (i = 1; i <= NF; i++) { if ($i == m "_med") col = i; if ($i == "migrated_med") mc = i }; next }
			# The preserve of sizes that migrated pages out of KHO
			# scratch has a cost of its own (bench-report.sh).
			m == "preserve_ms" && $mc > 0 { next }
			$1 == t && $2 > 0 && $col != "" { n++; x[n] = $3; y[n] = $col }
			END { if (n < 2) exit
			      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] != x[i]) sl[++ns] = (y[j] - y[i]) / (x[j] - x[i])
			      sort(sl, ns); b = median(sl, ns); resolved = b > 0; if (b < 0) b = 0
			      for (i = 1; i <= n; i++) r[i] = y[i] - b * x[i]
			      sort(r, n); a = median(r, n); if (a < 0) a = 0
			      unit = m; sub(/.*_/, "", unit)
			      printf "%s,%s,%.6g,%.6g,%s,%d\n", t, m, a, b, unit, resolved }' "$summary" >> "$fit"
	done
done

# Yield of the boot-time 1 GiB pool (hugepages=8 asks for more than fits).
yl=$blogs/yield.log
y_cold=$(grep -aoE 'bench yield stage=1 nr=[0-9]+' "$yl" | sed 's/.*nr=//')
y_empty=$(grep -aoE 'bench yield stage=2 nr=[0-9]+' "$yl" | sed 's/.*nr=//')
y_boot=$(grep -aoE 'bench yield stage=3 nr=[0-9]+' "$yl" | sed 's/.*nr=//')
y_after=$(grep -aoE 'after_retrieve=[0-9]+' "$yl" | sed 's/.*=//')
{ [ -n "$y_cold" ] && [ -n "$y_empty" ] && [ -n "$y_boot" ] && [ -n "$y_after" ]; } ||
	die "the yield VM's log lacks its lines (log: ${yl#"$TOP"/})"
echo "boot,nr_1g_pages" > "$out/yield.csv"
{
	echo "cold,$y_cold"
	echo "after an update with nothing preserved,$y_empty"
	echo "after an update with a 2M and a 1G file: at boot,$y_boot"
	echo "after an update with a 2M and a 1G file: after retrieve,$y_after"
} >> "$out/yield.csv"

"$TOP/scripts/bench-report.sh" "$out" "$reps" "$pair_mib"
