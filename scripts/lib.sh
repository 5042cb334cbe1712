# shellcheck shell=bash
# shellcheck disable=SC2034 # the variables are used by the scripts that source this
# Common settings for the project's scripts; sourced, never run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/hugetlb-lu
BUILD=$TOP/build
LOGS=$BUILD/logs
PIN=$TOP/config/linux-source.pin
UPSTREAM=$(sed -n 's/^UPSTREAM=//p' "$PIN")
# Pristine unpacked source and the git tree the series is applied to.
PRISTINE=$CACHE/linux-$UPSTREAM
TREE=$CACHE/tree-$UPSTREAM
# One job more than CPUs: the compilers wait on the disk now and then.
JOBS=$(($(nproc) + 1))
export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
# Depend mode: on a miss ccache runs the compiler only, not the
# preprocessor first (a fifth of a cold kernel build); kbuild passes the
# -MMD it needs.
export CCACHE_DEPEND=${CCACHE_DEPEND:-1}

# awk functions of the bench scripts: sort(arr, n) sorts arr[1..n] in
# place (insertion sort: a few dozen values), median(arr, n) is the median
# of a sorted arr[1..n].
SORT_AWK='
function sort(arr, n,   i, k, x) {
	for (i = 2; i <= n; i++) { x = arr[i]; for (k = i - 1; k >= 1 && arr[k] > x; k--) arr[k + 1] = arr[k]; arr[k + 1] = x }
}
function median(arr, n) { return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2 }
'

die() {
	echo "error: $*" >&2
	exit 1
}

say() {
	echo "==> $*"
}

# The stamp that says which series $TREE holds: the hash of the patches in
# patches/series, then the tree's HEAD once they were applied (or exported).
SERIES_STAMP=$TREE/.git/hlu-series

series_hash() {
	local p
	grep -vE '^[[:space:]]*(#|$)' "$TOP/patches/series" | while read -r p; do
		cat "$TOP/patches/$p"
	done | sha256sum
}

# How many files of git tree $1 differ from its HEAD or are new.
tree_changes() {
	git -C "$1" status --porcelain | wc -l
}

# The stages of a boot that runs PROG:N... (programs and their stage
# counts): the largest N.  tests/vmtest.sh passes it to guest/init.sh as
# hlu.stages.
stage_count() {
	local p n=1

	for p in "$@"; do
		[ "${p##*:}" -le "$n" ] || n=${p##*:}
	done
	echo "$n"
}

# Output directory of a kernel config (fast, debug, ...).
kbuild_dir() {
	echo "$CACHE/kbuild-$1"
}
