#!/bin/bash
# The harness's test of its own judge (tests/judge.sh), as kunit_tool_test.py
# tests kunit's parser: each case in tests/judge/ is a recorded serial log
# (CASE.log), the judge's arguments (CASE.cmd, paths relative to
# tests/judge/) and the verdicts it must print (CASE.expect).  Runs in a
# second; make test runs it before booting anything.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

cd "$TOP/tests/judge"
bad=0 n=0 args=()
indent() {
	local l

	while IFS= read -r l; do
		echo "    $l"
	done
}
for cmd in *.cmd; do
	name=${cmd%.cmd}
	eval "args=($(cat "$cmd"))"
	got=$("$TOP/tests/judge.sh" "${args[@]}" 2>&1) || true
	n=$((n + 1))
	if [ "$got" != "$(cat "$name.expect")" ]; then
		echo "FAIL judge-test $name: the judge printed"
		indent <<< "$got"
		echo "  not"
		indent < "$name.expect"
		bad=$((bad + 1))
	fi
done
[ "$bad" = 0 ] || die "the judge (tests/judge.sh) is wrong on $bad of $n recorded logs"
say "judge: $n recorded logs judged as expected (tests/judge/)"
