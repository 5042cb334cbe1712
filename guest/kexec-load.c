// SPDX-License-Identifier: GPL-2.0
/*
 * kexec-load: load a kernel with kexec_file_load(2) and optionally boot it.
 *
 * KHO hands its state to the next kernel only on the kexec_file_load path,
 * so this is all the guest needs from kexec-tools.
 *
 * With -F, before the kexec that succeeds, make it fail at each fault point
 * of the kexec path in turn (fail_liveupdate_hugetlb: the freeze of each
 * preserved hugetlb file), and check that every failed kexec leaves the huge
 * page pools and the pin counters as they were.
 *
 * usage: kexec-load [-e [-F]] -c CMDLINE KERNEL [INITRD]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kexec.h>
#include <linux/reboot.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FAIL_ATTR	"/sys/kernel/debug/fail_liveupdate_hugetlb/"

static int usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-e [-F]] -c CMDLINE KERNEL [INITRD]\n", prog);
	return 2;
}

static int kexec(void)
{
	sync();
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

static int write_attr(const char *name, long val)
{
	char path[128], text[32];
	int fd, len, ret;

	snprintf(path, sizeof(path), FAIL_ATTR "%s", name);
	len = snprintf(text, sizeof(text), "%ld", val);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ret = write(fd, text, len) == len ? 0 : -1;
	close(fd);
	return ret;
}

static long read_attr(const char *name)
{
	char path[128], text[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), FAIL_ATTR "%s", name);
	f = fopen(path, "r");
	if (!f || !fgets(text, sizeof(text), f))
		text[0] = 0;
	if (f)
		fclose(f);
	return text[0] ? strtol(text, NULL, 10) : -1;
}

/*
 * Fail the Nth fault point of the kexec path, for N = 1, 2, ... until the
 * kexec goes through.  Only returns on an error.  The kexec path allocates
 * nothing (LUO sets everything up before), so its fault points are
 * fail_liveupdate_hugetlb's, and the attribute's own counters pick the Nth
 * (each call takes 1 off "space" while more than 1 is left, then "times"
 * calls fail): with fail-nth, a count left over would fail something on the
 * way down to the next kernel.
 */
static int kexec_fault_sweep(void)
{
	static char before[8192], after[8192];
	int n, err;

	if (read_attr("times") < 0) {
		printf("HLU: error: no " FAIL_ATTR " (CONFIG_FAIL_LIVEUPDATE_HUGETLB)\n");
		return 1;
	}
	for (n = 1;; n++) {
		snapshot(before, sizeof(before));
		if (write_attr("verbose", 1) || write_attr("interval", 1) ||
		    write_attr("probability", 100) || write_attr("space", n) ||
		    write_attr("times", 1)) {
			perror(FAIL_ATTR);
			return 1;
		}
		printf("HLU: fault-injection kexec try %d\n", n);
		fflush(stdout);
		kexec();
		err = errno;
		if (read_attr("times") != 0) {
			printf("HLU: error: kexec failed without an injected fault: %s\n",
			       strerror(err));
			return 1;
		}
		snapshot(after, sizeof(after));
		if (strcmp(before, after)) {
			printf("HLU: error: fault-injection kexec point %d changed the counters:\n"
			       "before: %s\nafter:  %s\n", n, before, after);
			return 1;
		}
		printf("HLU: fault-injection kexec point %d covered: %s, counters unchanged\n",
		       n, strerror(err));
	}
}

int main(int argc, char **argv)
{
	const char *cmdline = "";
	unsigned long flags = 0;
	int opt, exec = 0, sweep = 0, kfd, ifd = -1;

	while ((opt = getopt(argc, argv, "eFc:")) != -1) {
		switch (opt) {
		case 'e':
			exec = 1;
			break;
		case 'F':
			sweep = 1;
			break;
		case 'c':
			cmdline = optarg;
			break;
		default:
			return usage(argv[0]);
		}
	}
	if (optind >= argc || argc - optind > 2)
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
		return kexec_fault_sweep();

	kexec();
	perror("reboot(LINUX_REBOOT_CMD_KEXEC)");
	return 1;
}
