#!/bin/bash
# Make $TREE a git copy of the pristine source with patches/series applied
# by `git am`.  Only files that differ are rewritten, so builds stay
# incremental; nothing happens when the series is unchanged.  A tree with
# commits or edits that are not in patches/ is left alone, with an error
# (HLU_DISCARD_TREE=1 discards them).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$TOP/scripts/get-source.sh"

git_t() {
	git -C "$TREE" -c user.name=hugetlb-lu -c user.email=hugetlb-lu@localhost \
		-c advice.detachedHead=false "$@"
}

if ! git_t rev-parse -q --verify refs/tags/pristine >/dev/null 2>&1 ||
	[ "$(cat "$TREE/.git/hlu-source" 2>/dev/null)" != "$(cat "$PRISTINE/.hlu-source")" ]; then
	say "creating git tree $TREE"
	rm -rf "$TREE"
	cp -a "$PRISTINE" "$TREE"
	git_t init -q
	# Debian's .gitignore ignores every top-level entry: add by force.
	git_t add -A -f .
	git_t commit -q -m "Linux $UPSTREAM ($(cat "$PRISTINE/.hlu-source"))"
	git_t tag pristine
	cp "$PRISTINE/.hlu-source" "$TREE/.git/hlu-source"
fi

mapfile -t series < <(grep -vE '^[[:space:]]*(#|$)' "$TOP/patches/series" || true)
want=$(series_hash)
head=$(git_t rev-parse HEAD)
stamp=$(cat "$SERIES_STAMP" 2>/dev/null || true)
dirty=$(tree_changes "$TREE")
[ "$stamp" = "$want $head" ] && [ "$dirty" -eq 0 ] && exit 0

# Applying the series resets the tree: work done in it and not exported to
# patches/ would be lost.  A tree without a stamp is ours (new, or an apply
# that stopped half way).
if [ -n "$stamp" ] && [ -z "${HLU_DISCARD_TREE:-}" ] &&
	{ [ "${stamp##* }" != "$head" ] || [ "$dirty" -ne 0 ]; }; then
	what=""
	[ "$dirty" -eq 0 ] || what="$dirty changed or new file(s)"
	if [ "${stamp##* }" != "$head" ]; then
		[ -z "$what" ] || what="$what and "
		what="${what}commits that are not in patches/"
	fi
	die "$TREE holds kernel work not in patches/: $what.
  To keep it: commit it in $TREE, then run make export (scripts/export-series.sh).
  To drop it: run the same command again with HLU_DISCARD_TREE=1.
  (docs/testing.md, \"Changing the series\")"
fi

say "applying ${#series[@]} patch(es) to $TREE"
rm -f "$SERIES_STAMP"
git_t am --abort >/dev/null 2>&1 || true
git_t checkout -q -f --detach pristine
git_t reset -q --hard pristine
git_t clean -q -fdx
for p in "${series[@]}"; do
	git_t am -q "$TOP/patches/$p" || {
		git_t am --abort || true
		die "patch $p does not apply"
	}
done
echo "$want $(git_t rev-parse HEAD)" > "$SERIES_STAMP"
