// SPDX-License-Identifier: GPL-2.0
/*
 * kexec-load: load a kernel with kexec_file_load(2) and optionally boot it.
 *
 * KHO hands its state to the next kernel only on the kexec_file_load path,
 * so this is all the guest needs from kexec-tools.
 *
 * With -F, before the kexec that succeeds, make it fail at each fault point
 * of the kexec path in turn (/proc/thread-self/fail-nth: the allocations,
 * failslab and fail_page_alloc, and fail_function at the error injection
 * hook of the freeze of each preserved hugetlb file), and check that every
 * failed kexec returned the errno of the point that failed (the kernel log
 * names it: -EIO for a freeze, -ENOMEM for an allocation) and left the huge
 * page pools and the pin counters as they were.  A kexec that goes through
 * although a fault was injected shows as a FAULT_INJECTION message after
 * the last "HLU: fault-injection kexec try" line, which the host harness
 * fails at one of our own points; -F N says N freezes at least must fail
 * (one per preserved hugetlb file), which the harness checks.  The sweep's
 * lines go to the kernel log (/dev/kmsg), not to stdout: the console prints
 * kernel messages from a thread, late and in the middle of a line written
 * to it, so only the kernel log keeps them in order with the messages of
 * each try and whole.  On a kernel
 * with kmemleak, the leaks of the first failed tries' unwinding are looked
 * for (two scans) before the sweep goes on.
 *
 * With -N POINT, make the kexec fail once, at the POINTth fault point or
 * (-N freeze) at the first freeze of a preserved hugetlb file, check it as
 * a try of the sweep, unload the kernel and return: a program that stopped
 * something for the update (guest/hlu-vm.c, a VM) then checks that it can
 * go on on this kernel.
 *
 * usage: kexec-load [-e [-F N | -N POINT]] -c CMDLINE KERNEL [INITRD]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kexec.h>
#include <linux/reboot.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DEBUGFS		"/sys/kernel/debug/"
/* The error injection hook in the freeze of a hugetlb file (mm/hugetlb_luo.c). */
#define FREEZE_HOOK	"hugetlb_luo_should_fail_freeze"
#define MAX_POINTS	10000
#define KMEMLEAK	DEBUGFS "kmemleak"
/*
 * How the lines of a try start: the host harness counts the sweep's tries
 * (tests/run.sh), not the single ones of -N.
 */
static const char *tag = "fault-injection kexec";
/* The failed tries before kmemleak looks at their unwinding. */
#define KMEMLEAK_AFTER	10

static int usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-e [-F N | -N POINT]] -c CMDLINE KERNEL [INITRD]\n",
		prog);
	return 2;
}

static int kexec(void)
{
	return syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2,
		       LINUX_REBOOT_CMD_KEXEC, NULL);
}

/* Append the first line of @path to @buf. */
static void append_file(char *buf, size_t len, const char *path)
{
	char line[256] = "";
	FILE *f = fopen(path, "r");

	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
	}
	line[strcspn(line, "\n")] = 0;
	snprintf(buf + strlen(buf), len - strlen(buf), "%s=%s ",
		 strrchr(path, '/') + 1, line);
}

/* The counters a failed kexec must not change. */
static void snapshot(char *buf, size_t len)
{
	static const char * const counters[] = {
		"nr_hugepages", "free_hugepages", "resv_hugepages",
		"surplus_hugepages",
	};
	char path[512], line[256];
	struct dirent *d;
	DIR *dir;
	FILE *f;

	buf[0] = 0;
	dir = opendir("/sys/kernel/mm/hugepages");
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(buf + strlen(buf), len - strlen(buf), "%s: ", d->d_name);
		for (size_t i = 0; i < sizeof(counters) / sizeof(*counters); i++) {
			snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/%s/%s",
				 d->d_name, counters[i]);
			append_file(buf, len, path);
		}
	}
	if (dir)
		closedir(dir);
	/* Fold the per-CPU deltas in, or the vmstat worker may do it between two reads. */
	f = fopen("/proc/sys/vm/stat_refresh", "w");
	if (f) {
		fputs("1", f);
		fclose(f);
	}
	f = fopen("/proc/vmstat", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "nr_foll_pin_", 12))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s", line);
	}
	if (f)
		fclose(f);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), len = strlen(text), ret;

	if (fd < 0)
		return -1;
	ret = write(fd, text, len) == len ? 0 : -1;
	close(fd);
	return ret;
}

static int fail_nth_fd = -1, kmsg_fd = -1, klog_fd = -1;

/* One line of the sweep, as one record of the kernel log. */
static void __attribute__((format(printf, 1, 2))) klog(const char *fmt, ...)
{
	char rec[512];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(rec, sizeof(rec), fmt, ap);
	va_end(ap);
	if (len >= (int)sizeof(rec))
		len = sizeof(rec) - 1;
	if (write(klog_fd, rec, len) != len)
		printf("HLU: error: /dev/kmsg: %s (lost: %s)\n", strerror(errno), rec);
}

static int fail_nth(int n)
{
	char text[16];
	int len = snprintf(text, sizeof(text), "%d", n);

	return pwrite(fail_nth_fd, text, len, 0) == len ? 0 : -1;
}

static int fail_nth_left(void)
{
	char text[16];
	ssize_t len = pread(fail_nth_fd, text, sizeof(text) - 1, 0);

	if (len <= 0)
		return -1;
	text[len] = 0;
	return atoi(text);
}

/*
 * The attribute whose fault the kernel logged since the last call, or NULL:
 * a __GFP_NOWARN allocation fails silently.
 */
static const char *fault_logged(void)
{
	static const char * const names[] = {
		"failslab", "fail_page_alloc", "fail_function",
	};
	const char *found = NULL;
	char rec[4096], pat[64];
	unsigned int i;
	ssize_t len;

	while ((len = read(kmsg_fd, rec, sizeof(rec) - 1)) > 0 ||
	       (len < 0 && errno == EPIPE)) {
		if (len < 0)
			continue;
		rec[len] = 0;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(pat, sizeof(pat), "name %s,", names[i]);
			if (strstr(rec, pat))
				found = names[i];
		}
	}
	return found;
}

/*
 * Scan for leaks twice (kmemleak reports an object that two scans find
 * unreferenced and unchanged, and older than 5 s) and fail on any.
 */
static int kmemleak_check(void)
{
	char line[256];
	int leaks = 0;
	FILE *f;

	if (access(KMEMLEAK, W_OK))
		return 0;
	klog("HLU: fault-injection kexec: kmemleak scans after %d failed tries\n",
	     KMEMLEAK_AFTER);
	if (write_file(KMEMLEAK, "scan") || sleep(6) || write_file(KMEMLEAK, "scan")) {
		printf("HLU: error: kmemleak scan failed: %s\n", strerror(errno));
		return -1;
	}
	f = fopen(KMEMLEAK, "r");
	while (f && fgets(line, sizeof(line), f))
		leaks += !strncmp(line, "unreferenced object", 19);
	if (f)
		fclose(f);
	if (leaks) {
		printf("HLU: error: kmemleak: %d leaks after failed kexecs\n", leaks);
		return -1;
	}
	return 0;
}

static int fault_setup(void)
{
	static const char * const files[][2] = {
		{ "failslab/verbose", "1" },
		{ "failslab/ignore-gfp-wait", "N" },
		{ "fail_page_alloc/verbose", "1" },
		{ "fail_page_alloc/ignore-gfp-wait", "N" },
		{ "fail_page_alloc/min-order", "0" },
		{ "fail_function/verbose", "1" },
		/* Only the freeze hook, failing with -EIO (0x...fffb). */
		{ "fail_function/inject", " " },
		{ "fail_function/inject", FREEZE_HOOK },
		{ "fail_function/" FREEZE_HOOK "/retval", "0xfffffffffffffffb" },
		/* No rate limit on the sweep's lines in the kernel log. */
		{ "/proc/sys/kernel/printk_devkmsg", "on\n" },
	};
	char path[128];
	unsigned int i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s%s",
			 files[i][0][0] == '/' ? "" : DEBUGFS, files[i][0]);
		if (write_file(path, files[i][1])) {
			printf("HLU: error: %s: %s (CONFIG_FAULT_INJECTION_DEBUG_FS, "
			       "CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC, "
			       "CONFIG_FAIL_FUNCTION)\n", path, strerror(errno));
			return -1;
		}
	}
	fail_nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	klog_fd = open("/dev/kmsg", O_WRONLY);
	if (fail_nth_fd < 0 || kmsg_fd < 0 || klog_fd < 0) {
		printf("HLU: error: fail-nth or /dev/kmsg: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * One try of the sweep: fail the Nth fault point of the kexec path (with
 * @n 0, the fault that fail_function is set up to inject), and check that
 * the kexec failed with its errno and left the counters alone.
 */
static int kexec_try(int n)
{
	static char before[8192], after[8192];
	const char *name;
	int err, left, want;

	snapshot(before, sizeof(before));
	klog("HLU: %s try %d\n", tag, n);
	fflush(stdout);
	sync();
	lseek(kmsg_fd, 0, SEEK_END);
	if (n && fail_nth(n)) {
		perror("fail-nth");
		return 1;
	}
	kexec();
	err = errno;
	left = n ? fail_nth_left() : 0;
	if (n)
		fail_nth(0);
	name = fault_logged();
	if (left || (!n && !name)) {
		printf("HLU: error: kexec failed without an injected fault: %s\n",
		       strerror(err));
		return 1;
	}
	want = name && !strcmp(name, "fail_function") ? EIO : ENOMEM;
	if (err != want) {
		printf("HLU: error: %s point %d (%s): %s, not %s\n", tag,
		       n, name ? name : "a __GFP_NOWARN allocation", strerror(err),
		       strerror(want));
		return 1;
	}
	snapshot(after, sizeof(after));
	if (strcmp(before, after)) {
		printf("HLU: error: %s point %d changed the counters:\n"
		       "before: %s\nafter:  %s\n", tag, n, before, after);
		return 1;
	}
	klog("HLU: %s point %d covered: %s: %s, counters unchanged\n", tag,
	     n, name ? name : "a __GFP_NOWARN allocation", strerror(err));
	return 0;
}

/*
 * Fail the Nth fault point of the kexec path, for N = 1, 2, ... until the
 * kexec goes through.  Only returns on an error.  fail-nth counts the fault
 * points this task reaches in reboot(): LUO's freeze of the preserved files
 * and what it allocates.
 */
static int kexec_fault_sweep(int want_own)
{
	int n;

	if (fault_setup())
		return 1;
	klog("HLU: fault-injection kexec: at least %d points of ours\n", want_own);
	for (n = 1; n <= MAX_POINTS; n++) {
		if (n == KMEMLEAK_AFTER + 1 && kmemleak_check())
			return 1;
		if (kexec_try(n))
			return 1;
	}
	printf("HLU: error: the kexec has more than %d fault points\n", MAX_POINTS);
	return 1;
}

/* -N POINT: fail the kexec once, at POINT, and unload the kernel. */
static int kexec_fail_once(const char *point)
{
	int n = strcmp(point, "freeze") ? atoi(point) : 0, ret;

	if (!n && strcmp(point, "freeze")) {
		printf("HLU: error: -N %s: not a fault point\n", point);
		return 1;
	}
	tag = "kexec-fail";
	ret = fault_setup();
	/* -N freeze: the first call of the freeze hook fails. */
	if (!ret && !n && (write_file(DEBUGFS "fail_function/interval", "1") ||
			   write_file(DEBUGFS "fail_function/times", "1") ||
			   write_file(DEBUGFS "fail_function/probability", "100"))) {
		printf("HLU: error: fail_function: %s\n", strerror(errno));
		ret = 1;
	}
	if (!ret)
		ret = kexec_try(n);
	/* Nothing armed for the next kexec, and no kernel loaded. */
	if (write_file(DEBUGFS "fail_function/probability", "0") ||
	    write_file(DEBUGFS "fail_function/inject", "!" FREEZE_HOOK)) {
		printf("HLU: error: fail_function reset: %s\n", strerror(errno));
		ret = 1;
	}
	if (syscall(SYS_kexec_file_load, -1, -1, 0, NULL, KEXEC_FILE_UNLOAD)) {
		perror("kexec_file_load(KEXEC_FILE_UNLOAD)");
		ret = 1;
	}
	return ret;
}

int main(int argc, char **argv)
{
	const char *cmdline = "", *once = NULL;
	unsigned long flags = 0;
	int opt, exec = 0, sweep = 0, kfd, ifd = -1;

	while ((opt = getopt(argc, argv, "eF:N:c:")) != -1) {
		switch (opt) {
		case 'e':
			exec = 1;
			break;
		case 'F':
			sweep = atoi(optarg);
			break;
		case 'N':
			once = optarg;
			break;
		case 'c':
			cmdline = optarg;
			break;
		default:
			return usage(argv[0]);
		}
	}
	if (optind >= argc || argc - optind > 2 || ((sweep || once) && !exec))
		return usage(argv[0]);

	kfd = open(argv[optind], O_RDONLY | O_CLOEXEC);
	if (kfd < 0) {
		perror(argv[optind]);
		return 1;
	}
	if (optind + 1 < argc) {
		ifd = open(argv[optind + 1], O_RDONLY | O_CLOEXEC);
		if (ifd < 0) {
			perror(argv[optind + 1]);
			return 1;
		}
	} else {
		flags |= KEXEC_FILE_NO_INITRAMFS;
	}

	/* The length passed to the kernel includes the terminating NUL. */
	if (syscall(SYS_kexec_file_load, kfd, ifd, strlen(cmdline) + 1,
		    cmdline, flags)) {
		perror("kexec_file_load");
		return 1;
	}
	if (!exec)
		return 0;
	if (sweep)
		return kexec_fault_sweep(sweep);
	if (once)
		return kexec_fail_once(once);

	sync();
	/* Where the kexec's blackout starts, for make bench (kernel clock). */
	klog_fd = open("/dev/kmsg", O_WRONLY);
	if (klog_fd >= 0)
		klog("HLU: reboot\n");
	kexec();
	perror("reboot(LINUX_REBOOT_CMD_KEXEC)");
	return 1;
}
