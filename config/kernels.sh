# shellcheck shell=bash
# shellcheck disable=SC2034 # CFG_* are read by the scripts that source this
# The kernels the project builds and boots, one record each.  Everything
# that builds or boots one reads it: scripts/build-kernel.sh (make
# kernel-NAME), tests/run.sh, the demo and the bench.  A new kernel is a
# record here and its fragment under config/.
#
#   kernel NAME ARCH FROM MEM TIMEOUT FRAGMENTS [ARGS]
#
# NAME       its one name: make kernel-NAME, $CACHE/kbuild-NAME,
#            build/bzImage-NAME, tests/skips/NAME when the suite runs on it
# ARCH       x86_64
# FROM       "-", or a kernel whose build a first build of this one copies
#            (a config that differs in a few options: kbuild recompiles
#            only what they touch), and which make kernel-NAME builds first
#            when it has no build yet
# MEM        guest memory in GiB (a boot may ask for more)
# TIMEOUT    seconds per stage (the boot's limit is stages times this)
# FRAGMENTS  files under config/, comma-separated, merged in order on top
#            of `make tinyconfig`
# ARGS       kernel arguments of every boot of it
#
# Only the suite's kernels (fast, debug) take ARGS and kernel_mem_args.

declare -A K_ARCH=() K_FROM=() K_MEM=() K_TIMEOUT=() K_FRAGMENTS=() K_ARGS=()
K_NAMES=()

kernel() {
	K_NAMES+=("$1")
	K_ARCH[$1]=$2 K_FROM[$1]=$3 K_MEM[$1]=$4 K_TIMEOUT[$1]=$5
	K_FRAGMENTS[$1]=$6 K_ARGS[$1]=${7:-}
}

# The debug kernel: KASAN, lockdep, UBSAN, kmemleak (config/debug.config).
# hung_task: a stuck task fails the boot.  no5lvl: 4-level paging: with
# LA57 (-cpu max has it), an interrupt that arrives while identify_cpu()
# rebuilds the boot CPU's feature bits makes KASAN see no LA57, hence no
# shadow for the direct map: "BUG: KASAN: wild-memory-access in
# rcu_is_watching" at boot, now and then (an upstream race, not in our
# code).  hlu.kmemleak=1: guest/init.sh scans for leaks before each kexec
# and at the end.  slab_debug=P: SLUB poisoning moves the free pointer out
# of the object and fills free objects with a pattern; without it, an
# object allocated keeps the stale free pointer to the next free one,
# which kmemleak takes for a reference (leaked small objects, 16 of 200
# bytes planted in preserve, went unreported).  2 GiB: kmemleak's scans
# and the boot take longer with more memory.
debug_args="page_poison=1 sysctl.kernel.hung_task_timeout_secs=60 no5lvl"
debug_args+=" hlu.kmemleak=1 slab_debug=P"

kernel fast      x86_64 -    2 120 fast.config
kernel debug     x86_64 -    2 600 fast.config,debug.config "$debug_args"
# The next kernel of a test that updates into a kernel without the handler.
kernel nohandler x86_64 fast 2 120 fast.config,variants/nohandler.config
# The kernel make bench times: no test-only code, no debug checks.
kernel bench     x86_64 fast 2 180 fast.config,variants/bench.config

# KHO's boot parameter for its scratch sizes, named here only: Linux 7.4
# renames it kho_bootmem= (and the debugfs files the selftests read,
# scratch_phys/scratch_len, see luo_hugetlb_utils.c).
KHO_SCRATCH=kho_scratch

# Kernel arguments of kernel $1 that depend on the guest memory ($2 GiB):
# KASAN's shadow (an eighth of memory) makes the default KHO scratch size
# unreservable, and the scratch must hold the next kernel's shadow; with
# less lowmem scratch the kexec'd kernel fails early.  A boot's own
# $KHO_SCRATCH= comes later on the command line and wins.
kernel_mem_args() {
	case $1 in
	debug)
		if [ "$2" -le 2 ]; then
			echo "$KHO_SCRATCH=128M,256M,128M"
		else
			echo "$KHO_SCRATCH=256M,512M,256M"
		fi
		;;
	esac
}

# Is $1 a kernel of the table?
kernel_known() {
	[ -n "${1:-}" ] && [ -n "${K_ARCH[$1]:-}" ]
}

# CFG_MEM, CFG_ARGS and CFG_TIMEOUT of kernel $1.
kernel_load() {
	kernel_known "$1" || {
		echo "unknown kernel '$1' (config/kernels.sh has: ${K_NAMES[*]})" >&2
		return 1
	}
	CFG_MEM=${K_MEM[$1]}
	CFG_ARGS=${K_ARGS[$1]}
	CFG_TIMEOUT=${K_TIMEOUT[$1]}
}

# The image of kernel $1 that the harness boots: a link into its build.
kernel_image() {
	echo "$BUILD/bzImage-$1"
}

# The image in a build directory of architecture $1.
kernel_image_in_build() {
	case $1 in
	x86_64) echo arch/x86/boot/bzImage ;;
	*)
		echo "no image path for architecture '$1'" >&2
		return 1
		;;
	esac
}

# The fragments of kernel $1, one path per line.
kernel_fragments() {
	local f

	for f in ${K_FRAGMENTS[$1]//,/ }; do
		echo "$TOP/config/$f"
	done
}
