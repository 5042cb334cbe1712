// SPDX-License-Identifier: GPL-2.0
/*
 * hlu-bench: the guest side of make bench (scripts/bench.sh).  Each stage
 * of the boot is one point of a size sweep: it retrieves what the stage
 * before preserved and times that, then preserves the next point's memfd
 * and leaves a process holding its session until the kexec.
 *
 * The kernel command line sets it up:
 *   hlu.bench=TYPE        2M, 1G or shmem (a memfd of that page size)
 *   hlu.bench_sizes=A,B   the sizes in MiB, each repeated
 *   hlu.bench_reps=R      times (R rounds: nothing preserved, then each size)
 *   hlu.bench_trace=1[,F1,F2]  print the function graph of LUO's preserve
 *                         and retrieve of a file (or of F1 and F2), three
 *                         calls deep: where the time goes (slows them);
 *                         hlu.bench_trace=N (N > 1): N calls deep, every call
 *   hlu.bench_warm=N      before each point, preserve (and after the kexec,
 *                         retrieve and finish) a file of N pages of the same
 *                         type in a session of its own, timed apart
 *                         (preserve_cold_ms, retrieve_cold_ms): the first file
 *                         an update handles runs code TCG has not translated
 *                         yet, and preserves the FLBs; the point's own file
 *                         then measures the kernel's work.  N=2 also runs
 *                         what only a file of several pages does (sorting
 *                         and checking the list, page cache and reserve map
 *                         entries past the first)
 *   hlu.bench=yield       instead: the boot-time 1 GiB pool's yield, cold,
 *                         after an update with nothing preserved, and after
 *                         one carrying a 2 MiB and a 1 GiB file (3 stages)
 *
 * Every measurement is one line for the host:
 *   HLU: bench preserve point=P mib=S pages=N fill_ms=F preserve_ms=T
 *        migrated=M [preserve_cold_ms=T]
 *   HLU: bench retrieve point=P mib=S pages=N memtotal_kb=M retrieve_ms=T
 *        touch_ms=T touch_fresh_us=U finish_ms=T [retrieve_cold_ms=T]
 *   HLU: bench yield stage=K nr=N free=F [after_retrieve=N]
 * (one line each).  The kexec itself is timed by the host from the kernel
 * log ("HLU: reboot", which kexec-load writes right before reboot(), and
 * the next kernel's lines).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/memfd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <libliveupdate.h>

#define TOKEN		1
#define MAX_POINTS	256
/* Fresh pages touched for the comparison: per page size. */
#define FRESH_SHMEM	256
#define FRESH_2M	16
#define FRESH_1G	1

static const char *type = "2M";
static unsigned long sizes[MAX_POINTS], nr_sizes, reps = 5;
static unsigned long plan[MAX_POINTS], nr_points;
static int trace, warm;
static char trace_depth[12];
/* hlu.bench_trace=1,FN1,FN2: other functions than LUO's preserve and retrieve. */
static char *trace_fn[2] = { "luo_preserve_file", "luo_retrieve_file" };

#define TRACING "/sys/kernel/debug/tracing/"

static int write_flags(const char *path, const char *text, int flags)
{
	int fd = open(path, O_WRONLY | flags), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

static int write_str(const char *path, const char *text)
{
	return write_flags(path, text, O_TRUNC);
}

/*
 * hlu.bench_trace=1: the function graph of LUO's preserve and retrieve of
 * a file, three calls deep, and the calls that took more than 10 µs, as
 * "trace:" lines (where the time goes; not for timing runs).
 */
static void trace_begin(void)
{
	if (!trace)
		return;
	if (write_str(TRACING "current_tracer", "nop") ||
	    write_str(TRACING "set_graph_function", trace_fn[0]) ||
	    write_flags(TRACING "set_graph_function", trace_fn[1], O_APPEND) ||
	    write_str(TRACING "max_graph_depth", trace > 1 ? trace_depth : "3") ||
	    write_str(TRACING "current_tracer", "function_graph") ||
	    write_str(TRACING "tracing_on", "1"))
		printf("hlu-bench: tracing: %s\n", strerror(errno));
}

static void trace_end(void)
{
	char line[512];
	FILE *f;

	if (!trace)
		return;
	write_str(TRACING "tracing_on", "0");
	f = fopen(TRACING "trace", "r");
	if (!f)
		printf("hlu-bench: " TRACING "trace: %s\n", strerror(errno));
	while (f && fgets(line, sizeof(line), f)) {
		/* "| 1234.567 us |" marked + (over 10 us), ! (100 us), # (1 ms) and up. */
		if (strstr(line, " us ") && (trace > 1 || strpbrk(line, "+#!@*$")))
			printf("trace: %s", line);
	}
	if (f)
		fclose(f);
	write_str(TRACING "trace", "");
	write_str(TRACING "current_tracer", "nop");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int fail(const char *fmt, ...)
{
	va_list ap;

	printf("hlu-bench: FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(": %s\n", strerror(errno));
	fflush(stdout);
	return 1;
}

static void parse_cmdline(void)
{
	static char line[4096];
	char *arg, *save = NULL, *p;
	FILE *f = fopen("/proc/cmdline", "r");

	if (!f || !fgets(line, sizeof(line), f))
		exit(fail("/proc/cmdline"));
	fclose(f);
	for (arg = strtok_r(line, " \n", &save); arg; arg = strtok_r(NULL, " \n", &save)) {
		if (!strncmp(arg, "hlu.bench=", 10)) {
			type = arg + 10;
		} else if (!strncmp(arg, "hlu.bench_trace=", 16)) {
			trace = strtol(arg + 16, &p, 10);
			snprintf(trace_depth, sizeof(trace_depth), "%d", trace);
			for (int i = 0; i < 2 && *p == ','; i++) {
				*p++ = 0;
				trace_fn[i] = p;
				p = strchrnul(p, ',');
			}
		} else if (!strncmp(arg, "hlu.bench_warm=", 15)) {
			warm = strtol(arg + 15, NULL, 10);
		} else if (!strncmp(arg, "hlu.bench_reps=", 15)) {
			reps = strtoul(arg + 15, NULL, 10);
		} else if (!strncmp(arg, "hlu.bench_sizes=", 16)) {
			for (p = arg + 16; *p && nr_sizes < MAX_POINTS; p++) {
				sizes[nr_sizes++] = strtoul(p, &p, 10);
				if (*p != ',')
					break;
			}
		}
	}
	/*
	 * R rounds of a point with nothing preserved and one of each size:
	 * whatever drifts along the chain of kernels drifts for all sizes.
	 */
	for (unsigned long r = 0; r < reps; r++) {
		if (nr_points < MAX_POINTS)
			plan[nr_points++] = 0;
		for (unsigned long s = 0; s < nr_sizes && nr_points < MAX_POINTS; s++)
			plan[nr_points++] = sizes[s];
	}
}

static unsigned int type_flags(const char *t)
{
	if (!strcmp(t, "2M"))
		return MFD_HUGETLB | MFD_HUGE_2MB;
	if (!strcmp(t, "1G"))
		return MFD_HUGETLB | MFD_HUGE_1GB;
	return 0;
}

static size_t page_size(const char *t)
{
	if (!strcmp(t, "2M"))
		return 2UL << 20;
	if (!strcmp(t, "1G"))
		return 1UL << 30;
	return 4096;
}

/* The number after "@key" and a blank or colon in a /proc file, or -1. */
static long proc_value(const char *path, const char *key)
{
	size_t len = strlen(key);
	char line[256];
	long val = -1;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && (line[len] == ' ' || line[len] == ':'))
			val = atol(line + len + 1);
	if (f)
		fclose(f);
	return val;
}

static long sysfs_long(const char *path)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	return atol(buf);
}

static int luo_open(void)
{
	int fd = luo_open_device();

	if (fd < 0)
		exit(fail(LUO_DEVICE));
	return fd;
}

static int memfd_of(const char *t, size_t size)
{
	int fd = memfd_create("hlu-bench", MFD_CLOEXEC | type_flags(t));

	if (fd < 0 || ftruncate(fd, size) || fallocate(fd, 0, 0, size))
		exit(fail("%s memfd of %zu MiB", t, size >> 20));
	return fd;
}

/* Preserve @fds in session @name and hold it until the kexec. */
static void preserve_and_hold(int luo, const char *name, const int *fds, int nr,
			      double *preserve_s)
{
	int session = luo_create_session(luo, name), i;
	double t0;

	if (session < 0)
		exit(fail("create session %s", name));
	trace_begin();
	t0 = now();
	for (i = 0; i < nr; i++)
		if (luo_session_preserve_fd(session, fds[i], TOKEN + i))
			exit(fail("preserve in %s", name));
	*preserve_s = now() - t0;
	trace_end();
	fflush(stdout);
	if (fork() == 0) {
		/* The session fd keeps the files preserved; nothing else must stay. */
		close(luo);
		for (i = 0; i < nr; i++)
			close(fds[i]);
		setsid();
		for (;;)
			pause();
	}
}

/* First touch of one byte in each page of @map: seconds. */
static double touch(volatile char *map, size_t size, size_t page)
{
	double t0 = now();
	size_t off;

	for (off = 0; off < size; off += page)
		map[off] = 1;
	return now() - t0;
}

/* Seconds per page for the first touch of fresh pages of @t. */
static double touch_fresh(const char *t)
{
	size_t page = page_size(t), n;
	double secs;
	char *map;
	int fd;

	n = page == 4096 ? FRESH_SHMEM : page == (2UL << 20) ? FRESH_2M : FRESH_1G;
	fd = memfd_create("hlu-bench-fresh", MFD_CLOEXEC | type_flags(t));
	if (fd < 0 || ftruncate(fd, n * page))
		exit(fail("fresh %s memfd", t));
	map = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		exit(fail("mmap fresh %s memfd", t));
	secs = touch(map, n * page, page) / n;
	munmap(map, n * page);
	close(fd);
	return secs;
}

/* The session @name and its memfd: 0, or 1 after saying why not. */
static int retrieve_file(int luo, const char *name, int *session, int *fd)
{
	*session = luo_retrieve_session(luo, name);
	if (*session < 0)
		return fail("retrieve session %s", name);
	*fd = luo_session_retrieve_fd(*session, TOKEN);
	if (*fd < 0)
		return fail("retrieve the memfd of session %s", name);
	return 0;
}

/* Retrieve and finish the warm-up file of @point (hlu.bench_warm=N). */
static int retrieve_warm_up(int luo, unsigned long point)
{
	char name[32];
	int session, fd;

	snprintf(name, sizeof(name), "warm-%lu", point);
	if (retrieve_file(luo, name, &session, &fd))
		return 1;
	if (luo_session_finish(session))
		return fail("finish warm-%lu", point);
	close(fd);
	close(session);
	return 0;
}

static int retrieve_point(int luo, unsigned long point)
{
	size_t size = plan[point] << 20, page = page_size(type);
	double t0, t_ret, t_touch, t_fin, fresh, t_cold = 0;
	long memtotal = proc_value("/proc/meminfo", "MemTotal");
	char cold[48] = "", name[32];
	int session, fd;
	void *map;

	if (warm) {
		t0 = now();
		if (retrieve_warm_up(luo, point))
			return 1;
		t_cold = now() - t0;
		snprintf(cold, sizeof(cold), " retrieve_cold_ms=%.3f", t_cold * 1e3);
	}
	if (!size) {
		printf("HLU: bench retrieve point=%lu mib=0 pages=0 memtotal_kb=%ld%s\n", point,
		       memtotal, cold);
		return 0;
	}
	snprintf(name, sizeof(name), "bench-%lu", point);
	trace_begin();
	t0 = now();
	if (retrieve_file(luo, name, &session, &fd))
		return 1;
	t_ret = now() - t0;
	trace_end();
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return fail("mmap of the retrieved memfd");
	t_touch = touch(map, size, page);
	t0 = now();
	if (luo_session_finish(session))
		return fail("finish bench-%lu", point);
	t_fin = now() - t0;
	munmap(map, size);
	close(fd);
	close(session);
	fresh = touch_fresh(type);
	printf("HLU: bench retrieve point=%lu mib=%lu pages=%zu memtotal_kb=%ld retrieve_ms=%.3f "
	       "touch_ms=%.3f touch_fresh_us=%.3f finish_ms=%.3f%s\n", point, plan[point],
	       size / page, memtotal, t_ret * 1e3, t_touch * 1e3, fresh * 1e6, t_fin * 1e3, cold);
	return 0;
}

static int sweep(int stage)
{
	unsigned long point;
	double t0, fill_s, preserve_s;
	char name[32], cold[48] = "";
	long migrated;
	int luo, fd;

	if (!nr_points)
		return fail("no hlu.bench_sizes");
	luo = luo_open();
	if (stage > 1 && retrieve_point(luo, stage - 2))
		return 1;
	point = stage - 1;
	if (point >= nr_points) {
		fflush(stdout);
		return 0;
	}
	printf("hlu-bench: point %lu of %lu: %s memfd of %lu MiB\n", point + 1, nr_points, type,
	       plan[point]);
	if (warm) {
		fd = memfd_of(type, warm * page_size(type));
		snprintf(name, sizeof(name), "warm-%lu", point);
		preserve_and_hold(luo, name, &fd, 1, &preserve_s);
		close(fd);
		snprintf(cold, sizeof(cold), " preserve_cold_ms=%.3f", preserve_s * 1e3);
	}
	if (!plan[point]) {
		printf("HLU: bench preserve point=%lu mib=0 pages=0%s\n", point, cold);
		fflush(stdout);
		return 0;
	}
	t0 = now();
	fd = memfd_of(type, plan[point] << 20);
	fill_s = now() - t0;
	snprintf(name, sizeof(name), "bench-%lu", point);
	migrated = proc_value("/proc/vmstat", "pgmigrate_success");
	preserve_and_hold(luo, name, &fd, 1, &preserve_s);
	/* Pages the long-term pin moved (out of KHO scratch, which is CMA). */
	migrated = proc_value("/proc/vmstat", "pgmigrate_success") - migrated;
	printf("HLU: bench preserve point=%lu mib=%lu pages=%lu fill_ms=%.3f preserve_ms=%.3f "
	       "migrated=%ld%s\n", point, plan[point], (plan[point] << 20) / page_size(type),
	       fill_s * 1e3, preserve_s * 1e3, migrated, cold);
	fflush(stdout);
	return 0;
}

#define POOL_1G "/sys/kernel/mm/hugepages/hugepages-1048576kB/"

static int yield(int stage)
{
	int luo = luo_open(), fds[2], session, i;
	double unused;

	printf("HLU: bench yield stage=%d nr=%ld free=%ld\n", stage,
	       sysfs_long(POOL_1G "nr_hugepages"), sysfs_long(POOL_1G "free_hugepages"));
	if (stage == 2) {
		/* A file of each size: small pages left preserved block 1 GiB ranges. */
		fds[0] = memfd_of("2M", 32UL << 20);
		fds[1] = memfd_of("1G", 1UL << 30);
		preserve_and_hold(luo, "bench-yield", fds, 2, &unused);
	}
	if (stage == 3) {
		session = luo_retrieve_session(luo, "bench-yield");
		if (session < 0)
			return fail("retrieve session bench-yield");
		for (i = 0; i < 2; i++)
			if (luo_session_retrieve_fd(session, TOKEN + i) < 0)
				return fail("retrieve file %d of bench-yield", i);
		if (luo_session_finish(session))
			return fail("finish bench-yield");
		printf("HLU: bench yield stage=%d after_retrieve=%ld\n", stage,
		       sysfs_long(POOL_1G "nr_hugepages"));
	}
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	int stage = 1;

	if (argc == 3 && !strcmp(argv[1], "-s"))
		stage = atoi(argv[2]);
	parse_cmdline();
	if (!strcmp(type, "yield"))
		return yield(stage);
	return sweep(stage);
}
