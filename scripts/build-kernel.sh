#!/bin/bash
# Configure and build one kernel from the tree ($TREE, see prepare-tree.sh)
# out of tree with ccache.
# Usage: build-kernel.sh KERNEL
#   a kernel of config/kernels.sh (make kernel-KERNEL): its fragments, from
#   a copy of its FROM kernel's build (built first if there is none); then
#   build/bzImage-KERNEL links to its image.
# Usage: build-kernel.sh [-f FROM] NAME FRAGMENT...
#   any other config (check-series.sh): NAME is the output dir name
#   ($CACHE/kbuild-NAME).
# FRAGMENTs are merged, in order, on top of `make tinyconfig`, and every
# option they set must land in the final .config as the last fragment that
# names it says.  A FROM build is copied by the first build of a config
# that differs from it in a few options: kbuild then recompiles only what
# the changed options touch, a minute instead of a full build.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$TOP/config/kernels.sh"

from=""
if [ "${1:-}" = -f ]; then
	from=$(kbuild_dir "$2")
	shift 2
fi
name=${1:?usage: build-kernel.sh KERNEL, or [-f FROM] NAME FRAGMENT...}
shift
link="" target=bzImage
if [ $# -eq 0 ]; then
	kernel_load "$name" || exit 1
	if [ "${K_FROM[$name]}" != - ]; then
		from=$(kbuild_dir "${K_FROM[$name]}")
		# The copy needs a build of FROM, not an up-to-date one: kbuild
		# remakes what changed since (make test builds FROM just before).
		[ -f "$from/.hlu-config" ] || "$0" "${K_FROM[$name]}"
	fi
	mapfile -t frags < <(kernel_fragments "$name")
	set -- "${frags[@]}"
	image=$(kernel_image_in_build "${K_ARCH[$name]}")
	target=$(basename "$image")
	link=$(kernel_image "$name")
fi
out=$(kbuild_dir "$name")
# kbuild trusts mtimes, and an unpacked source release is older than any
# object built from the last one: a build dir made from another kernel
# release starts over (ccache keeps the compiles that are still valid).
src=$(cat "$PRISTINE/.hlu-source")
if [ -d "$out" ] && [ "$(cat "$out/.hlu-source" 2>/dev/null)" != "$src" ]; then
	say "kernel '$name': $out was built from another source, starting afresh"
	rm -rf "$out"
fi
# A build that starts from another starts from a fresh copy of it again
# when its own config changes.
want=$(cat "$@" | sha256sum)
if [ -n "$from" ] && [ -f "$from/.config" ] &&
	[ "$(cat "$out/.hlu-config" 2>/dev/null)" != "$want" ]; then
	say "kernel '$name': starting from a copy of $from"
	rm -rf "$out"
	cp -a "$from" "$out"
	rm -f "$out/.hlu-config"
fi
mkdir -p "$out" "$CCACHE_DIR"
echo "$src" > "$out/.hlu-source"
kmake() {
	make -s -C "$TREE" O="$out" CC="$TOP/scripts/ccache-cc" HOSTCC="ccache gcc" "$@"
}

# Re-run the config step only when the fragments change.
if [ "$(cat "$out/.hlu-config" 2>/dev/null)" != "$want" ] || [ ! -f "$out/.config" ]; then
	# No stamp while .config is being rewritten: a config step that fails
	# must not leave its .config to a later build with the old fragments.
	rm -f "$out/.hlu-config"
	kmake tinyconfig >/dev/null
	"$TREE/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$@" >/dev/null
	kmake olddefconfig >/dev/null
	bad=0
	while read -r line; do
		k=${line%%=*}
		k=${k#\# }
		k=${k%% is not set}
		got=$(grep -E "^$k=|^# $k is not set" "$out/.config" || true)
		# An option that is off may be left out of .config altogether.
		[ -n "$got" ] || [ "$line" != "# $k is not set" ] || got=$line
		if [ "$got" != "$line" ]; then
			echo "config $name: want '$line', got '${got:-nothing}'" >&2
			bad=1
		fi
	done < <(grep -hE '^CONFIG_[A-Z0-9_]+=|^# CONFIG_[A-Z0-9_]+ is not set' "$@" |
		awk '{ k = $1 == "#" ? $2 : substr($1, 1, index($1, "=") - 1) }
			!(k in v) { order[n++] = k } { v[k] = $0 }
			END { for (i = 0; i < n; i++) print v[order[i]] }')
	[ $bad = 0 ] || die "config fragment lines did not land in $out/.config"
	echo "$want" > "$out/.hlu-config"
fi
say "building kernel '$name' in $out (a first build takes 10 to 20 minutes)"
start=$(date +%s)
touch "$out/.hlu-build-start"
kmake -j"$JOBS" "$target" &
pid=$!
# A progress line a minute while make runs.
next=$((start + 60))
while kill -0 "$pid" 2>/dev/null; do
	sleep 2
	if [ "$(date +%s)" -ge "$next" ]; then
		echo "    kernel '$name': $(find "$out" -name '*.o' -newer "$out/.hlu-build-start" |
			wc -l) objects compiled, $((($(date +%s) - start) / 60)) min"
		next=$((next + 60))
	fi
done
wait "$pid" || die "kernel '$name' did not build"
echo "kernel '$name' built in $(($(date +%s) - start)) s"
if [ -n "$link" ]; then
	mkdir -p "$(dirname "$link")"
	ln -sf "$out/$image" "$link"
fi
