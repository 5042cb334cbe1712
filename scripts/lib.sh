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

die() {
	echo "error: $*" >&2
	exit 1
}

say() {
	echo "==> $*"
}

# Output directory of a kernel config (fast, debug, ...).
kbuild_dir() {
	echo "$CACHE/kbuild-$1"
}
