#!/bin/bash
# Write the series from a git tree of the kernel (commits on top of the tag
# `pristine`, as prepare-tree.sh makes them) into patches/: one
# format-patch file per commit, the series file, and the cover letter,
# whose subject and text come from patches/cover-letter.txt (first line:
# the subject; then the text).
# Usage: export-series.sh [GIT_TREE]   (default: the cache's tree)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

src=${1:-$TREE}
cover=$TOP/patches/cover-letter.txt
[ -f "$cover" ] || die "no $cover"
n=$(git -C "$src" rev-list --count pristine..HEAD)
[ "$n" -gt 0 ] || die "no commits on top of pristine in $src"
# Edits not committed would not be exported, and the stamp would say the
# tree matches patches/.
dirty=$(tree_changes "$src")
[ "$dirty" -eq 0 ] ||
	die "$src has $dirty changed or new file(s) not committed: commit them (or stash them) first"

rm -f "$TOP"/patches/*.patch
# The cover letter is from the author of the series.
git -C "$src" -c user.name="$(git -C "$src" log -1 --format=%an)" \
	-c user.email="$(git -C "$src" log -1 --format=%ae)" \
	format-patch -q --no-signature --cover-letter \
	-o "$TOP/patches" pristine..HEAD
for p in "$TOP"/patches/[0-9]*.patch; do
	case $p in */0000-cover-letter.patch) continue ;; esac
	basename "$p"
done > "$TOP/patches/series"

# Fill in format-patch's placeholders, and date the letter as the last
# commit (format-patch dates it now): an unchanged tree exports the same
# files.
python3 - "$TOP/patches/0000-cover-letter.patch" "$cover" \
	"$(git -C "$src" log -1 --format=%cD)" <<'EOF'
import re, sys
letter, cover, date = sys.argv[1], sys.argv[2], sys.argv[3]
subject, _, blurb = open(cover).read().partition('\n')
s = open(letter).read()
s = re.sub(r'^Date: .*$', 'Date: ' + date, s, count=1, flags=re.M)
s = s.replace('*** SUBJECT HERE ***', subject.strip(), 1)
s = s.replace('*** BLURB HERE ***', blurb.strip('\n'), 1)
open(letter, 'w').write(s)
EOF
# patches/ now holds the cache's tree: prepare-tree.sh keeps it as it is.
if [ "$(cd "$src" && pwd -P)" = "$(cd "$TREE" 2>/dev/null && pwd -P)" ]; then
	echo "$(series_hash) $(git -C "$src" rev-parse HEAD)" > "$SERIES_STAMP"
fi
say "exported $n patch(es) and the cover letter from $src to patches/"
