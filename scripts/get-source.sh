#!/bin/bash
# Fetch Debian's linux-source-X.Y (X.Y from UPSTREAM in the pin) at a pinned
# revision and unpack it into the cache (never into the repository).  The
# .deb is kept, so later runs need no mirror.  Revisions and checksums come
# from config/linux-source.pin.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PKG=linux-source-${UPSTREAM%.*}
SUITES=(trixie-backports forky sid)
APT_LIST=/etc/apt/sources.list.d/hugetlb-lu-kernel.sources
APT_PREF=/etc/apt/preferences.d/hugetlb-lu-kernel
DEBS=$CACHE/debs
mkdir -p "$DEBS"

mapfile -t REVS < <(awk '$1 == "rev" { print $2 }' "$PIN")
[ ${#REVS[@]} -gt 0 ] || die "no 'rev' line in $PIN"

sha_of_rev() {
	awk -v r="$1" '$1 == "rev" && $2 == r { print $3 }' "$PIN"
}

deb_name() {
	echo "${PKG}_${1/:/%3a}_all.deb"
}

verified_deb() {
	local rev=$1 deb
	deb=$DEBS/$(deb_name "$rev")
	[ -f "$deb" ] || return 1
	echo "$(sha_of_rev "$rev")  $deb" | sha256sum --quiet -c - || return 1
	echo "$deb"
}

# Newer suites, for this one package only: every other package from them is
# pinned to -1 so nothing else on the machine is ever upgraded from there.
setup_apt() {
	cat > "$APT_LIST" <<EOT
Types: deb
URIs: http://deb.debian.org/debian
Suites: ${SUITES[*]}
Components: main
Architectures: amd64
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOT
	: > "$APT_PREF"
	for s in "${SUITES[@]}"; do
		printf 'Package: *\nPin: release n=%s\nPin-Priority: -1\n\n' "$s" >> "$APT_PREF"
	done
	apt-get update -qq -o Dir::Etc::SourceList="$APT_LIST" \
		-o Dir::Etc::SourceParts=- -o APT::Get::List-Cleanup=0
}

# Print "suite rev" for every pinned revision a suite serves, in suite order.
served_pins() {
	local s r
	for s in "${SUITES[@]}"; do
		for r in "${REVS[@]}"; do
			apt-cache madison "$PKG" |
				awk -F' *[|] *' -v r="$r" -v s="$s" \
					'$2 == r && $3 ~ (" " s "/") { print s, r; exit }'
		done
	done
}

fetch() {
	local suite rev deb tmp
	setup_apt
	read -r suite rev < <(served_pins) || true
	if [ -z "${rev:-}" ]; then
		echo "error: no suite serves a pinned revision of $PKG (pinned: ${REVS[*]})" >&2
		echo "served now:" >&2
		apt-cache madison "$PKG" >&2 || true
		echo "to bump the pin: pick a revision above, take its SHA256 from" >&2
		echo "  apt-cache show $PKG=<rev> | grep SHA256" >&2
		echo "and add 'rev <rev> <sha256>' (and UPSTREAM=) to $PIN" >&2
		exit 1
	fi
	say "downloading $PKG $rev from $suite" >&2
	tmp=$(mktemp -d)
	(cd "$tmp" && apt-get download -qq -o APT::Sandbox::User=root "$PKG=$rev")
	mv "$tmp"/*.deb "$DEBS/$(deb_name "$rev")"
	rmdir "$tmp"
	verified_deb "$rev" || die "checksum mismatch for $PKG $rev (see $PIN)"
}

deb=
for r in "${REVS[@]}"; do
	deb=$(verified_deb "$r") && break
	deb=
done
[ -n "$deb" ] || deb=$(fetch)

stamp=$PRISTINE/.hlu-source
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(basename "$deb")" ]; then
	exit 0
fi
say "unpacking $(basename "$deb") into $PRISTINE"
rm -rf "$PRISTINE" "$PRISTINE.tmp"
mkdir -p "$PRISTINE.tmp"
dpkg-deb --fsys-tarfile "$deb" |
	tar -xO --wildcards '*/usr/src/linux-source-*.tar.xz' |
	tar -xJ -C "$PRISTINE.tmp" --strip-components=1
grep -q "^SUBLEVEL = ${UPSTREAM##*.}\$" "$PRISTINE.tmp/Makefile" ||
	die "$(basename "$deb") does not hold Linux $UPSTREAM"
mv "$PRISTINE.tmp" "$PRISTINE"
basename "$deb" > "$stamp"
