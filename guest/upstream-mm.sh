#!/bin/sh
# upstream_mm -s 1|2|3: upstream's own hugetlb and memfd selftests
# (tools/testing/selftests/mm and memfd, built by scripts/build-guest.sh) on
# the patched kernel, as TAP.
#   stage 1: every test on a plain boot, then preserve 64 MiB of 2 MiB
#            pages (luo-hold)
#   stage 2: after a live update, with those pages retrieved and mapped,
#            every test that leaves the pool's other pages alone; then
#            preserve 64 MiB again
#   stage 3: after another live update, those pages retrieved and the
#            session finished, the tests that size the pool (after the
#            memory failure tests of stage 2, poisoned pages would stay in
#            the pool)
# Each test gets the free pages it needs (nr_hugepages = pages in use +
# need), and the pool is set back after it.  Exit code 1 if a test failed.
# The two cgroup scripts take minutes each on a debug kernel under TCG:
# hlu.upstream_cgroup=STAGES on the kernel command line (a comma-separated
# list of stages, or "none"; default "1,3") says in which stages they run.
set -u
PATH=/bin:/sbin
NR=/proc/sys/vm/nr_hugepages
HOLD_MIB=64

stage=1
[ "${1:-}" = -s ] && stage=$2
n=0 failed=0

meminfo() {
	sed -n "s/^$1: *\([0-9]*\).*/\1/p" /proc/meminfo
}

# Make @1 2 MiB pages free (or exactly @1 with "exact"), keeping those in use.
pool_free() {
	used=$(($(meminfo HugePages_Total) - $(meminfo HugePages_Free)))
	echo $((used + $1)) > $NR
	free=$(meminfo HugePages_Free)
	if [ "$free" -lt "$1" ] || { [ "${2:-}" = exact ] && [ "$free" != "$1" ]; }; then
		echo "# pool: $free free pages, wanted $1"
	fi
}

# run NEED NAME CMD...: one TAP line for CMD, with NEED free pages.
run() {
	need=$1 name=$2
	shift 2
	n=$((n + 1))
	before=$(cat $NR)
	case $need in
	exact:*) pool_free "${need#exact:}" exact ;;
	*) pool_free "$need" ;;
	esac
	echo "# $name: $* (pool: $(cat $NR) pages, $(meminfo HugePages_Free) free)"
	(cd /bin && "$@") > /tmp/upstream.out 2>&1
	rc=$?
	sed 's/^/# /' /tmp/upstream.out
	echo "$before" > $NR
	case $rc in
	0) echo "ok $n $name" ;;
	4) echo "ok $n $name # SKIP $(grep -im1 skip /tmp/upstream.out)" ;;
	*)
		echo "not ok $n $name # exit code $rc"
		failed=$((failed + 1))
		;;
	esac
}

# The tests that leave the pool's other pages alone.  The memory failure
# tests come last: each poisoned huge page stays in the pool, in use, for
# good.
run_in_use() {
	run 128 hugetlb-shm hugetlb-shm
	run 16 hugetlb-mremap hugetlb-mremap
	run 24 hugetlb-madvise hugetlb-madvise
	run 8 hugetlb_dio hugetlb_dio
	run 8 "memfd_test hugetlbfs" memfd_test hugetlbfs
	run 0 memfd_test memfd_test
	run 8 hugetlb-read-hwpoison hugetlb-read-hwpoison
	run 8 hugetlb-soft-offline hugetlb-soft-offline
}

# The tests that set the pool's size themselves (all of its pages free), or
# need an exact number of free pages.
run_pool_sized() {
	run 0 hugetlb-mmap hugetlb-mmap
	run exact:1 hugetlb_madv_vs_map hugetlb_madv_vs_map
	cg=$(sed -n 's/.*hlu\.upstream_cgroup=\([0-9a-z,]*\).*/\1/p' /proc/cmdline)
	case ",${cg:-1,3}," in
	*",$stage,"*) ;;
	*)
		echo "# stage $stage: the cgroup scripts do not run (hlu.upstream_cgroup=${cg:-1,3})"
		return
		;;
	esac
	run 0 charge_reserved_hugetlb.sh bash ./charge_reserved_hugetlb.sh -cgroup-v2
	run 0 hugetlb_reparenting_test.sh bash ./hugetlb_reparenting_test.sh -cgroup-v2
}

echo "TAP version 13"
case $stage in
1)
	run_pool_sized
	run_in_use
	luo-hold preserve $HOLD_MIB || failed=$((failed + 1))
	;;
2)
	if luo-hold retrieve $HOLD_MIB; then
		run_in_use
		luo-hold finish || failed=$((failed + 1))
	else
		failed=$((failed + 1))
	fi
	luo-hold preserve $HOLD_MIB || failed=$((failed + 1))
	;;
3)
	luo-hold take $HOLD_MIB || failed=$((failed + 1))
	run_pool_sized
	;;
esac
echo "1..$n"
echo "# upstream_mm stage $stage: $n tests, $failed failed"
[ "$failed" = 0 ]
