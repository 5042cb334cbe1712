#!/bin/bash
# Build the static guest programs against the patched tree's exported
# headers: the tree's LUO selftests (including the ones our series adds) and
# the project's own tools in guest/.
# Usage: build-guest.sh KBUILD_DIR OUT_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kb=$1 out=$2
mkdir -p "$out/obj" "$out/bin"
out=$(cd "$out" && pwd)
make -s -C "$TREE" O="$kb" headers
inc=$kb/usr/include
sdir=$TREE/tools/testing/selftests/liveupdate
make -s -C "$sdir" OUTPUT="$out/obj" LDFLAGS=-static KHDR_INCLUDES="-isystem $inc"
# lib.mk leaves objects in the source dir; keep the tree clean
rm -f "$sdir"/*.o "$sdir"/*.d
for f in "$out"/obj/*; do
	[ -f "$f" ] && [ -x "$f" ] && install -m 755 "$f" "$out/bin/"
done
for c in "$TOP"/guest/*.c; do
	gcc -static -O2 -Wall -Wextra -Werror -isystem "$inc" \
		-o "$out/bin/$(basename "$c" .c)" "$c"
done
