# shellcheck shell=bash
# shellcheck disable=SC2034 # CFG_* are read by tests/run.sh
# Kernel configs the suite runs on.  Per config: the kernel image, guest
# memory in GiB (a boot may ask for more), extra kernel arguments and the
# timeout of one stage in seconds.

config_image() {
	case $1 in
	fast) echo "$BUILD/bzImage" ;;
	*) echo "$BUILD/bzImage-$1" ;;
	esac
}

# KHO's boot parameter for its scratch sizes, named here only: Linux 7.4
# renames it kho_bootmem= (and the debugfs files the selftests read,
# scratch_phys/scratch_len, see luo_hugetlb_utils.c).
KHO_SCRATCH=kho_scratch

# Kernel arguments of a config that depend on the guest memory (GiB): KASAN's
# shadow (an eighth of memory) makes the default KHO scratch size
# unreservable, and the scratch must hold the next kernel's shadow; with
# less lowmem scratch the kexec'd kernel fails early.  A boot's own
# $KHO_SCRATCH= comes later on the command line and wins.
config_mem_args() {
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

config_load() {
	case $1 in
	fast)
		CFG_MEM=2
		CFG_ARGS=""
		CFG_TIMEOUT=120
		;;
	debug)
		# 2 GiB: kmemleak's scans and the boot take longer with more
		# memory (config_mem_args sets the KHO scratch sizes).
		CFG_MEM=2
		CFG_ARGS="page_poison=1"
		CFG_ARGS+=" sysctl.kernel.hung_task_timeout_secs=60"
		# 4-level paging: with LA57 (-cpu max has it), an interrupt that
		# arrives while identify_cpu() rebuilds the boot CPU's feature
		# bits makes KASAN see no LA57, hence no shadow for the direct
		# map: "BUG: KASAN: wild-memory-access in rcu_is_watching" at
		# boot, now and then (an upstream race, not in our code).
		CFG_ARGS+=" no5lvl"
		# guest/init.sh: leak scans before each kexec and at the end.
		CFG_ARGS+=" hlu.kmemleak=1"
		# SLUB poisoning moves the free pointer out of the object and
		# fills free objects with a pattern.  Without it, an object
		# allocated keeps the stale free pointer to the next free one,
		# which kmemleak takes for a reference: leaked small objects
		# (16 of 200 bytes, planted in preserve) went unreported.
		CFG_ARGS+=" slab_debug=P"
		CFG_TIMEOUT=600
		;;
	*)
		echo "unknown kernel config '$1'" >&2
		return 1
		;;
	esac
}
