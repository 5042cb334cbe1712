#!/bin/bash
# make check-series: is patches/series bisectable and clean?
#  1. apply the series one patch at a time and build each step (fast config);
#  2. build the whole series with CONFIG_LIVEUPDATE=n and CONFIG_HUGETLBFS=n;
#  3. run scripts/checkpatch.pl --strict on every patch.
# Uses its own tree and build dirs, so the test kernels stay untouched.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

stree=$CACHE/tree-series-$UPSTREAM
mapfile -t series < <(grep -vE '^[[:space:]]*(#|$)' "$TOP/patches/series" || true)
fails=0
step() {
	local what=$1
	shift
	if "$@" > "$LOGS/check-series.step.log" 2>&1; then
		echo "ok      $what"
	else
		echo "FAILED  $what"
		tail -n 20 "$LOGS/check-series.step.log"
		fails=$((fails + 1))
	fi
}
mkdir -p "$LOGS"

for ((i = 1; i <= ${#series[@]}; i++)); do
	"$TOP/scripts/prepare-tree.sh" "$stree" "$i" >/dev/null
	step "build after ${series[i - 1]}" \
		"$TOP/scripts/build-kernel.sh" series "$stree" "$TOP/config/fast.config"
done
"$TOP/scripts/prepare-tree.sh" "$stree" >/dev/null
for v in no-liveupdate no-hugetlbfs; do
	step "build whole series with config/variants/$v.config" \
		"$TOP/scripts/build-kernel.sh" "$v" "$stree" "$TOP/config/fast.config" \
		"$TOP/config/variants/$v.config"
done
for p in "${series[@]}"; do
	step "checkpatch --strict $p" \
		perl "$stree/scripts/checkpatch.pl" --root="$stree" --strict --quiet "$TOP/patches/$p"
done
echo "check-series: ${#series[@]} patch(es), $fails problem(s)"
[ "$fails" = 0 ]
