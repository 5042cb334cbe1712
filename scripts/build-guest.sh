#!/bin/bash
# Build the static guest programs against the patched tree's exported
# headers: the tree's LUO selftests (including the ones our series adds),
# upstream's hugetlb and memfd selftests, and the project's own tools in
# guest/.
# Usage: build-guest.sh KBUILD_DIR OUT_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kb=$1 out=$2
# Objects and their .d files from another tree would be taken as current.
rm -rf "$out/obj"
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
# Upstream's hugetlb and memfd selftests, run by guest/upstream-mm.sh.
mm=$TREE/tools/testing/selftests/mm
for t in hugetlb-mmap hugetlb-shm hugetlb-mremap hugetlb-madvise \
	hugetlb_dio hugetlb_fault_after_madv hugetlb_madv_vs_map hugetlb-read-hwpoison \
	hugetlb-soft-offline write_to_hugetlbfs; do
	gcc -static -O2 -isystem "$inc" -I"$mm" -I"$mm/.." -o "$out/bin/$t" \
		"$mm/$t.c" "$mm/vm_util.c" "$mm/hugepage_settings.c" -lpthread
done
install -m 755 "$mm/charge_reserved_hugetlb.sh" "$mm/hugetlb_reparenting_test.sh" \
	"$mm/write_hugetlb_memory.sh" "$out/bin/"
md=$TREE/tools/testing/selftests/memfd
gcc -static -O2 -isystem "$inc" -I"$md/.." -o "$out/bin/memfd_test" \
	"$md/memfd_test.c" "$md/common.c"
install -m 755 "$TOP/guest/upstream-mm.sh" "$out/bin/upstream_mm"
# What those scripts need of procps and psmisc, which busybox lacks.
install -m 755 "$TOP/guest/pgrep.sh" "$out/bin/pgrep"
install -m 755 "$TOP/guest/killall.sh" "$out/bin/killall"
# The guest programs use the LUO selftests' client library (lib/lu_utils.c).
# It is built once, with the selftests' own warnings: under -Wextra it has a
# -Wsign-compare warning (luo_ensure_nofile_limit()), so no -Werror for it.
gcc -O2 -Wall -isystem "$inc" -I"$sdir/lib/include" -c -o "$out/obj/lu_utils.o" \
	"$sdir/lib/lu_utils.c"
for c in "$TOP"/guest/*.c; do
	gcc -static -O2 -Wall -Wextra -Werror -isystem "$inc" -I"$sdir/lib/include" \
		-o "$out/bin/$(basename "$c" .c)" "$c" "$out/obj/lu_utils.o"
done
# The nested-VM tests: hlu-vm takes the test from the name it runs by.
for t in 2m 1g shmem badfile kexecfail; do
	ln -sf hlu-vm "$out/bin/hlu-vm-$t"
done
# The nested VM's guest (guest/hlu-vm.c runs it): a freestanding 32-bit
# multiboot image.
mkdir -p "$out/vm"
gcc -m32 -march=i686 -ffreestanding -fno-pic -fno-stack-protector -nostdlib -static -O2 \
	-Wall -Wextra -Werror -Wl,-T,"$TOP/guest/vm/hluvm.ld" -Wl,--build-id=none \
	-o "$out/vm/hluvm.elf" "$TOP/guest/vm/hluvm.c"
