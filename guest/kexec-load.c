// SPDX-License-Identifier: GPL-2.0
/*
 * kexec-load: load a kernel with kexec_file_load(2) and optionally boot it.
 *
 * KHO hands its state to the next kernel only on the kexec_file_load path,
 * so this is all the guest needs from kexec-tools.
 *
 * usage: kexec-load [-e] -c CMDLINE KERNEL [INITRD]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/kexec.h>
#include <linux/reboot.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-e] -c CMDLINE KERNEL [INITRD]\n", prog);
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmdline = "";
	unsigned long flags = 0;
	int opt, exec = 0, kfd, ifd = -1;

	while ((opt = getopt(argc, argv, "ec:")) != -1) {
		switch (opt) {
		case 'e':
			exec = 1;
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

	sync();
	syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2,
		LINUX_REBOOT_CMD_KEXEC, NULL);
	perror("reboot(LINUX_REBOOT_CMD_KEXEC)");
	return 1;
}
