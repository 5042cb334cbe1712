# hugetlb live update: build, test and demo.  See README.md.
SHELL := /bin/bash
S := scripts
CACHE := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/hugetlb-lu
KB_FAST := $(CACHE)/kbuild-fast
KB_DEBUG := $(CACHE)/kbuild-debug
KB_NOHLU := $(CACHE)/kbuild-no-liveupdate-hugetlb
KB_BENCH := $(CACHE)/kbuild-bench
BZ := arch/x86/boot/bzImage

.PHONY: all deps tree kernel kernel-debug kernel-nohlu kernel-bench guest test test-long test-fast test-debug test-vmtest \
	demo demo-vm bench check-series export shellcheck clean

all: kernel guest

deps:
	@$(S)/deps.sh

tree: deps
	@$(S)/prepare-tree.sh

kernel: tree
	@$(S)/build-kernel.sh fast config/fast.config
	@mkdir -p build && ln -sf $(KB_FAST)/$(BZ) build/bzImage

kernel-debug: tree
	@$(S)/build-kernel.sh debug config/fast.config config/debug.config
	@mkdir -p build && ln -sf $(KB_DEBUG)/$(BZ) build/bzImage-debug

# The next kernel of a test that updates into a kernel without the handler.
# It differs from the fast kernel in three options: start from a copy of
# that build, and make recompiles what they touch.
kernel-nohlu: kernel
	@$(S)/build-kernel.sh -f fast no-liveupdate-hugetlb config/fast.config \
		config/variants/no-liveupdate-hugetlb.config
	@mkdir -p build && ln -sf $(KB_NOHLU)/$(BZ) build/bzImage-nohlu

# The kernel make bench times: the fast one without test-only code and
# debug checks (config/variants/bench.config), built from a copy of it.
kernel-bench: kernel
	@$(S)/build-kernel.sh -f fast bench config/fast.config config/variants/bench.config
	@mkdir -p build && ln -sf $(KB_BENCH)/$(BZ) build/bzImage-bench

guest: kernel
	@$(S)/build-guest.sh $(KB_FAST) build/guest

test: kernel kernel-debug kernel-nohlu guest
	@tests/run.sh fast debug

# The suite plus the boots marked -l in tests/suite.sh (about 10 minutes
# more), then the selftests through upstream's own vmtest.sh.
test-long: kernel kernel-debug kernel-nohlu guest
	@LONG=1 tests/run.sh fast debug
	@$(S)/upstream-vmtest.sh

# The liveupdate selftests that run under upstream's run-vmtests.sh, with
# its own kernel build (docs/testing.md).
test-vmtest: tree
	@$(S)/upstream-vmtest.sh

test-fast: kernel kernel-nohlu guest
	@tests/run.sh fast

test-debug: kernel-debug kernel-nohlu guest
	@tests/run.sh debug

demo: kernel guest
	@$(S)/demo.sh

# A QEMU VM inside the test VM, its RAM in huge pages, across a live update.
demo-vm: kernel guest
	@$(S)/demo-vm.sh

# What a live update costs against shmem, and how it scales (about 22
# minutes): bench/results/ and the README's bench section.
bench: kernel-bench guest
	@$(S)/bench.sh

check-series: tree
	@$(S)/check-series.sh

# Write the kernel tree's commits back to patches/ (docs/testing.md,
# "Changing the series").  No tree target: it must not apply patches/.
export:
	@$(S)/export-series.sh

shellcheck:
	shellcheck $(S)/*.sh tests/*.sh guest/*.sh .ci/run

clean:
	rm -rf build
