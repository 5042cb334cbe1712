#!/bin/bash
# make test-vmtest: the liveupdate selftests run the way a maintainer runs
# them, through upstream's own tools/testing/selftests/liveupdate/
# run-vmtests.sh and vmtest.sh: a kernel of their own, built from the
# selftests' config files in the tree's .luo_test_build.x86/, and one QEMU
# boot per test with upstream's init.c (two stages, one kexec).  The tests
# that need more stages, another kernel, NUMA or our /init's help run in
# make test only (docs/testing.md).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$TOP/scripts/prepare-tree.sh"
dir=$TREE/tools/testing/selftests/liveupdate
# vmtest.sh builds in the tree's .luo_test_build.x86/, which the tree's
# `git clean -fdx` on each change of the series would take: keep the
# build in the cache, behind a link.
mkdir -p "$(kbuild_dir vmtest)"
[ -L "$TREE/.luo_test_build.x86" ] || rm -rf "$TREE/.luo_test_build.x86"
ln -sfn "$(kbuild_dir vmtest)" "$TREE/.luo_test_build.x86"
out=$LOGS/vmtest
rm -rf "$out"
mkdir -p "$out"
say "upstream's run-vmtests.sh: the first test builds its kernel (5 to 15 minutes cold), then one line per test; logs in $out"
"$dir/run-vmtests.sh" -k -o "$out" | tee "$out/summary.log" || true

# run-vmtests.sh counts a skip as a pass (vmtest.sh skips with a KTAP
# "# SKIP" line, then exits 0, the kselftest way), so every x86_64 test
# must say it succeeded.  aarch64 needs a cross compiler: its skips only
# show here.
mapfile -t tests < <(sed -n '/^TEST_NAMES=(/,/^)/{s/^[[:space:]]*"\([a-z0-9_]*\).*/\1/p}' \
	"$dir/run-vmtests.sh")
[ "${#tests[@]}" -gt 0 ] || die "no TEST_NAMES in $dir/run-vmtests.sh"
passed=0 failed=()
for t in "${tests[@]}"; do
	if grep -q "^ok 1 $t succeeded" "$out/x86_64_$t.log" 2>/dev/null; then
		passed=$((passed + 1))
	else
		failed+=("$t: $(grep -m1 -E '^(not ok|ok 1 .*# SKIP)' "$out/x86_64_$t.log" 2>/dev/null ||
			echo "no result")")
	fi
done
arm=$(cat "$out"/aarch64_*.log 2>/dev/null | grep -c '^ok 1 .*# SKIP' || true)
if [ ${#failed[@]} -gt 0 ]; then
	printf 'upstream vmtest: FAILED %s\n' "${failed[@]}"
	echo "upstream vmtest: ${#failed[@]} of ${#tests[@]} x86_64 tests failed or skipped; logs in $out"
	exit 1
fi
echo "upstream vmtest: all $passed x86_64 tests passed (aarch64: $arm skipped, see $out)"
