# shellcheck shell=bash
# The test suite, read by tests/run.sh: one `boot` line per VM boot, run on
# every kernel config.  Programs in one boot share its stages and kexecs.
#   boot NAME [-m GiB] [-a KERNEL_ARGS] [-q QEMU_ARGS] PROG:STAGES...

# Upstream LUO selftests (regression guard): the non-kexec API test and the
# four two-stage kexec tests, in one kexec round trip.
boot luo liveupdate:1 luo_kexec_simple:2 luo_multi_session:2 \
	luo_stress_sessions:2 luo_stress_files:2

# hugetlb memfd preservation (2 MiB pages).  The pool size matters to the
# tests' expected counts, so each has its own boot.
boot hugetlb -a "hugepages=32 hugetlb_cma=64M" luo_hugetlb:1
boot hugetlb_kexec -a "hugepages=64" luo_hugetlb_kexec:2
boot hugetlb_chain -a "hugepages=16" luo_hugetlb_chain:4
boot hugetlb_overcommit -a "hugepages=8" luo_hugetlb_overcommit:2
boot hugetlb_cgroup -a "hugepages=16" luo_hugetlb_cgroup:2
