#!/bin/bash
# Make $TREE a git copy of the pristine source with patches/series applied
# by `git am`.  Only files that differ are rewritten, so builds stay
# incremental; nothing happens when the series is unchanged.
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
want=$(for p in "${series[@]}"; do cat "$TOP/patches/$p"; done | sha256sum)
[ "$(cat "$TREE/.git/hlu-series" 2>/dev/null)" = "$want $(git_t rev-parse HEAD)" ] &&
	[ -z "$(git_t status --porcelain)" ] && exit 0

say "applying ${#series[@]} patch(es) to $TREE"
rm -f "$TREE/.git/hlu-series"
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
echo "$want $(git_t rev-parse HEAD)" > "$TREE/.git/hlu-series"
