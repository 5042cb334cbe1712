# hugetlb live update: build, test and demo.  See README.md.
SHELL := /bin/bash
S := scripts
CACHE := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/hugetlb-lu

.PHONY: all deps tree kernel guest test test-long test-fast test-debug test-vmtest \
	demo demo-vm bench check-series export shellcheck clean

all: kernel guest

deps:
	@$(S)/deps.sh

tree: deps
	@$(S)/prepare-tree.sh

# make kernel-NAME builds a kernel of config/kernels.sh (fast, debug,
# nohandler, bench) and links build/bzImage-NAME to it; a kernel built
# from a copy of another builds that one first.
kernel: kernel-fast

kernel-%: tree
	@$(S)/build-kernel.sh $*

guest: kernel-fast
	@$(S)/build-guest.sh $(CACHE)/kbuild-fast build/guest

test: kernel-fast kernel-debug kernel-nohandler guest
	@tests/judge-test.sh
	@tests/run.sh fast debug

# The suite plus the boots marked -l in tests/suite.sh (about 10 minutes
# more), then the selftests through upstream's own vmtest.sh.
test-long: kernel-fast kernel-debug kernel-nohandler guest
	@tests/judge-test.sh
	@LONG=1 tests/run.sh fast debug
	@$(S)/upstream-vmtest.sh

# The liveupdate selftests that run under upstream's run-vmtests.sh, with
# its own kernel build (docs/testing.md).
test-vmtest: tree
	@$(S)/upstream-vmtest.sh

test-fast: kernel-fast kernel-nohandler guest
	@tests/judge-test.sh
	@tests/run.sh fast

test-debug: kernel-debug kernel-nohandler guest
	@tests/judge-test.sh
	@tests/run.sh debug

demo: kernel-fast guest
	@$(S)/demo.sh

# A QEMU VM inside the test VM, its RAM in huge pages, across a live update.
demo-vm: kernel-fast guest
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
	shellcheck -x $(S)/*.sh tests/*.sh guest/*.sh config/*.sh .ci/run

clean:
	rm -rf build
