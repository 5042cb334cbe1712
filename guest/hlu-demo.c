// SPDX-License-Identifier: GPL-2.0
/*
 * hlu-demo: carry a memfd full of data across a live update.
 *
 * Stage 1 fills a memfd with a pattern, preserves it in a LUO session and
 * leaves a daemon holding the session until the kexec.  Stage 2 retrieves
 * it, checks every byte and finishes the session.  Each step is timed.
 *
 * The kernel command line selects the memfd: hlu.demo=TYPE:MIB, where TYPE
 * is shmem, 2M or 1G (hugetlb page size); default 2M:256.
 *
 * usage: hlu-demo -s 1|2
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/memfd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <libliveupdate.h>

#define SESSION		"hlu-demo"
#define TOKEN_DATA	1
#define TOKEN_META	2

struct demo_meta {
	uint64_t size;
	uint64_t seed;
	char type[8];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	printf("demo: FAILED: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t pattern(uint64_t off, uint64_t seed)
{
	uint64_t z = off + seed + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void cmdline_arg(const char *key, char *buf, size_t len)
{
	char line[4096], *p, *tok;
	FILE *f = fopen("/proc/cmdline", "r");

	if (!f || !fgets(line, sizeof(line), f))
		die("/proc/cmdline");
	fclose(f);
	for (tok = strtok_r(line, " \n", &p); tok; tok = strtok_r(NULL, " \n", &p))
		if (!strncmp(tok, key, strlen(key)) && tok[strlen(key)] == '=')
			snprintf(buf, len, "%s", tok + strlen(key) + 1);
}

/* The counters of the hugetlb pool the demo uses (none for shmem). */
static const char *pool_type;

static long pool_read(const char *file)
{
	char path[128], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%s/%s",
		 !strcmp(pool_type, "1G") ? "1048576kB" : "2048kB", file);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		die(path);
	fclose(f);
	return atol(buf);
}

static void print_pools(const char *when)
{
	if (!strcmp(pool_type, "shmem"))
		return;
	printf("demo: %s: %s hugetlb pool: total %ld, free %ld\n", when,
	       pool_type, pool_read("nr_hugepages"), pool_read("free_hugepages"));
}

static int memfd_flags(const char *type)
{
	if (!strcmp(type, "shmem"))
		return 0;
	if (!strcmp(type, "2M"))
		return MFD_HUGETLB | MFD_HUGE_2MB;
	if (!strcmp(type, "1G"))
		return MFD_HUGETLB | MFD_HUGE_1GB;
	errno = EINVAL;
	die("hlu.demo type must be shmem, 2M or 1G");
	return -1;
}

static uint64_t page_size(const char *type)
{
	if (!strcmp(type, "2M"))
		return 2ULL << 20;
	if (!strcmp(type, "1G"))
		return 1ULL << 30;
	return 4096;
}

static void preserve(int session, int fd, int token)
{
	if (luo_session_preserve_fd(session, fd, token))
		die("LIVEUPDATE_SESSION_PRESERVE_FD");
}

static int retrieve(int session, int token)
{
	int fd = luo_session_retrieve_fd(session, token);

	if (fd < 0)
		die("LIVEUPDATE_SESSION_RETRIEVE_FD");
	return fd;
}

static void stage1(int luo)
{
	char spec[64] = "2M:256", *colon;
	struct demo_meta meta = { 0 };
	int data, mfd, session;
	uint64_t *p, i;
	double t;

	cmdline_arg("hlu.demo", spec, sizeof(spec));
	colon = strchr(spec, ':');
	if (!colon) {
		errno = EINVAL;
		die("hlu.demo must be TYPE:MIB");
	}
	*colon = 0;
	snprintf(meta.type, sizeof(meta.type), "%s", spec);
	meta.size = strtoull(colon + 1, NULL, 0) << 20;
	meta.seed = (uint64_t)time(NULL) * 2654435761ULL;
	pool_type = meta.type;

	print_pools("before");
	data = memfd_create("hlu-demo", memfd_flags(meta.type));
	if (data < 0)
		die("memfd_create");
	if (ftruncate(data, meta.size))
		die("ftruncate");
	p = mmap(NULL, meta.size, PROT_READ | PROT_WRITE, MAP_SHARED, data, 0);
	if (p == MAP_FAILED)
		die("mmap");
	t = now();
	for (i = 0; i < meta.size / 8; i++)
		p[i] = pattern(i, meta.seed);
	printf("demo: filled a %s memfd of %llu MiB with a pattern in %.2f s\n",
	       meta.type, (unsigned long long)(meta.size >> 20), now() - t);
	munmap(p, meta.size);

	mfd = memfd_create("hlu-demo-meta", 0);
	if (mfd < 0 || write(mfd, &meta, sizeof(meta)) != sizeof(meta))
		die("meta memfd");

	session = luo_create_session(luo, SESSION);
	if (session < 0)
		die("LIVEUPDATE_IOCTL_CREATE_SESSION");
	t = now();
	preserve(session, data, TOKEN_DATA);
	printf("demo: preserved it (%llu pages of %s) in LUO session '%s' in %.3f s\n",
	       (unsigned long long)(meta.size / page_size(meta.type)),
	       !strcmp(meta.type, "shmem") ? "4 KiB" : meta.type, SESSION, now() - t);
	preserve(session, mfd, TOKEN_META);
	print_pools("after preserve");
	close(data);
	close(mfd);
	close(luo);

	/* The session lives as long as its fd: keep it open until the kexec. */
	fflush(stdout);
	if (fork() == 0) {
		setsid();
		for (;;)
			pause();
	}
	printf("demo: handing over to the next kernel (kexec)\n");
}

static void stage2(int luo)
{
	struct demo_meta meta;
	uint64_t *p, i, bad = 0;
	int data, mfd, session;
	double t;

	session = luo_retrieve_session(luo, SESSION);
	if (session < 0)
		die("LIVEUPDATE_IOCTL_RETRIEVE_SESSION");
	mfd = retrieve(session, TOKEN_META);
	if (pread(mfd, &meta, sizeof(meta), 0) != sizeof(meta))
		die("read meta");
	pool_type = meta.type;
	print_pools("after boot (before retrieve)");
	t = now();
	data = retrieve(session, TOKEN_DATA);
	printf("demo: retrieved the %s memfd in %.3f s\n", meta.type, now() - t);
	print_pools("after retrieve");

	p = mmap(NULL, meta.size, PROT_READ, MAP_SHARED, data, 0);
	if (p == MAP_FAILED)
		die("mmap");
	t = now();
	for (i = 0; i < meta.size / 8; i++)
		bad += p[i] != pattern(i, meta.seed);
	if (bad) {
		printf("demo: FAILED: %llu of %llu words differ\n",
		       (unsigned long long)bad, (unsigned long long)(meta.size / 8));
		exit(1);
	}
	printf("demo: data verified: all %llu MiB match, bit for bit (%.2f s)\n",
	       (unsigned long long)(meta.size >> 20), now() - t);
	munmap(p, meta.size);

	t = now();
	if (luo_session_finish(session))
		die("LIVEUPDATE_SESSION_FINISH");
	printf("demo: finished the session in %.3f s\n", now() - t);
	close(data);
	close(mfd);
	close(session);
	print_pools("after close");
}

int main(int argc, char **argv)
{
	int luo;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3 || strcmp(argv[1], "-s")) {
		fprintf(stderr, "usage: %s -s 1|2\n", argv[0]);
		return 2;
	}
	luo = luo_open_device();
	if (luo < 0)
		die(LUO_DEVICE " (boot with liveupdate=on)");
	if (!strcmp(argv[2], "1"))
		stage1(luo);
	else
		stage2(luo);
	return 0;
}
