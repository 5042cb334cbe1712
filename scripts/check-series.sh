#!/bin/bash
# make check-series: is patches/series bisectable and clean?
#  1. build the tree at every step of the series (fast config);
#  2. build the whole series with CONFIG_LIVEUPDATE=n, CONFIG_HUGETLBFS=n
#     and with the new option (CONFIG_LIVEUPDATE_HUGETLB) off;
#  3. run scripts/checkpatch.pl --strict on every patch.
# The steps are the commits git am made in the tree; each build has its own
# output dir, so the test kernels stay untouched.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$TOP/scripts/prepare-tree.sh"
mapfile -t series < <(grep -vE '^[[:space:]]*(#|$)' "$TOP/patches/series" || true)
n=${#series[@]}
tip=$(git -C "$TREE" rev-parse HEAD)
trap 'git -C "$TREE" checkout -q --detach "$tip"' EXIT
mkdir -p "$LOGS"
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

# Compiler warnings count as failures in the series builds.
build() {
	local out

	out=$("$TOP/scripts/build-kernel.sh" "$@" 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	if grep -E 'warning:|error:' <<< "$out"; then
		return 1
	fi
}

# The fast config without the options the tree does not have yet (a later
# patch adds them).
step_config() {
	local line sym

	while read -r line; do
		sym=$(sed -nE 's/^(# )?CONFIG_([A-Z0-9_]+)( is not set|=).*/\2/p' <<< "$line")
		if [ -n "$sym" ] &&
			! git -C "$TREE" grep -qE "^(menu)?config $sym\$" -- '*Kconfig*'; then
			continue
		fi
		echo "$line"
	done < "$TOP/config/fast.config"
}

for ((i = 1; i <= n; i++)); do
	git -C "$TREE" checkout -q --detach "$tip~$((n - i))"
	step_config > "$LOGS/check-series.config"
	step "build with patches 1-$i (${series[i - 1]})" \
		build series "$LOGS/check-series.config"
done
git -C "$TREE" checkout -q --detach "$tip"
for v in "$TOP"/config/variants/*.config; do
	step "build the series with ${v#"$TOP"/}" \
		build "$(basename "$v" .config)" "$TOP/config/fast.config" "$v"
done
# checkpatch's SPDX check runs Debian's python3 (with python3-ply).  The
# tree has no upstream history, so the ids of Fixes: tags cannot be looked
# up in it: UNKNOWN_COMMIT_ID is left out.  FILE_PATH_CHANGES ("does
# MAINTAINERS need updating?") warns on every patch that adds a file and
# leaves MAINTAINERS alone, whether an entry covers the file or not: it is
# left out too, and every file the series adds must have a MAINTAINERS
# section instead (get_maintainer.pl, below).
for p in "${series[@]}"; do
	step "checkpatch --strict $p" env PATH="/usr/bin:$PATH" \
		perl "$TREE/scripts/checkpatch.pl" --root="$TREE" --strict --quiet \
		--ignore UNKNOWN_COMMIT_ID,FILE_PATH_CHANGES "$TOP/patches/$p"
done
covered() {
	local f sections bad=0

	while read -r f; do
		sections=$(
			cd "$TREE" || exit 1
			perl scripts/get_maintainer.pl --no-git --no-git-fallback \
				--sections -f "$f" 2>/dev/null |
				grep -E '^[A-Z0-9][A-Z0-9 ()/_.,-]+$' | grep -vx 'THE REST' || true
		)
		if [ -z "$sections" ]; then
			echo "$f: no MAINTAINERS section"
			bad=1
		fi
	done < <(git -C "$TREE" diff --name-only --diff-filter=A pristine "$tip")
	return $bad
}
step "every added file has a MAINTAINERS section" covered
echo "check-series: $n patch(es), $fails problem(s)"
[ "$fails" = 0 ]
