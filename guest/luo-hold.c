// SPDX-License-Identifier: GPL-2.0
/*
 * luo-hold: keep huge pages preserved, or retrieved and in use, while other
 * programs run (upstream's hugetlb selftests, by guest/upstream-mm.sh).
 *
 *   luo-hold preserve MIB   fill a 2 MiB-page hugetlb memfd of MIB MiB with a
 *                           pattern, preserve it in session "luo-hold" and
 *                           leave a process holding the session until the
 *                           kexec; returns once it is preserved
 *   luo-hold retrieve MIB   retrieve it, check the pattern and keep it mapped
 *                           (the pages in use) in a process of its own;
 *                           returns once the pages are checked
 *   luo-hold finish         tell that process to check the pattern again,
 *                           unmap, finish the session and exit; returns its
 *                           verdict
 *   luo-hold take MIB       retrieve it, check the pattern, finish the
 *                           session (the pages join the pool)
 *
 * Exit code 0 when all went well; messages start with "luo-hold:".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/memfd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libliveupdate.h>

#define SESSION		"luo-hold"
#define TOKEN		1
#define HPAGE		(2UL << 20)
#define PIDFILE		"/tmp/luo-hold.pid"
#define RESULT		"/tmp/luo-hold.result"

static int fail(const char *what)
{
	printf("luo-hold: %s: %s\n", what, strerror(errno));
	return 1;
}

static uint64_t word(uint64_t i)
{
	return (i + 1) * 0x9e3779b97f4a7c15ULL;
}

/* Fill (@check false) or check @map: returns the words that differ. */
static long walk(uint64_t *map, size_t size, int check)
{
	long bad = 0;
	size_t i;

	for (i = 0; i < size / 8; i++) {
		if (!check)
			map[i] = word(i);
		else if (map[i] != word(i))
			bad++;
	}
	return bad;
}

/* Run the rest in a child; the parent returns once the child reports. */
static int detach(int *report)
{
	int pipefd[2], status;
	char ok;
	pid_t pid;

	if (pipe(pipefd))
		return fail("pipe");
	pid = fork();
	if (pid < 0)
		return fail("fork");
	if (!pid) {
		close(pipefd[0]);
		setsid();
		*report = pipefd[1];
		return -1;
	}
	close(pipefd[1]);
	if (read(pipefd[0], &ok, 1) != 1 || ok != 'y') {
		waitpid(pid, &status, 0);
		printf("luo-hold: the holder failed\n");
		return 1;
	}
	return 0;
}

/* /dev/liveupdate, or exit: only the holder process opens it. */
static int luo_open(void)
{
	int luo = luo_open_device();

	if (luo < 0)
		exit(fail(LUO_DEVICE));
	return luo;
}

static int preserve(size_t size)
{
	int luo, fd, session, report, ret;
	void *map;

	ret = detach(&report);
	if (ret >= 0)
		return ret;
	luo = luo_open();
	fd = memfd_create(SESSION, MFD_HUGETLB | MFD_HUGE_2MB);
	if (fd < 0 || ftruncate(fd, size))
		exit(fail("hugetlb memfd"));
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		exit(fail("mmap"));
	walk(map, size, 0);
	munmap(map, size);
	session = luo_create_session(luo, SESSION);
	if (session < 0)
		exit(fail("create session"));
	if (luo_session_preserve_fd(session, fd, TOKEN))
		exit(fail("preserve"));
	printf("luo-hold: %zu MiB preserved in session %s\n", size >> 20, SESSION);
	fflush(stdout);
	if (write(report, "y", 1) != 1)
		exit(1);
	for (;;)
		pause();
}

static int retrieve(size_t size, int hold)
{
	int luo, session, fd, report, ret, sig;
	FILE *f = NULL;
	sigset_t set;
	long bad;
	void *map;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (hold) {
		ret = detach(&report);
		if (ret >= 0)
			return ret;
	}
	luo = luo_open();
	session = luo_retrieve_session(luo, SESSION);
	if (session < 0)
		exit(fail("retrieve session"));
	fd = luo_session_retrieve_fd(session, TOKEN);
	if (fd < 0)
		exit(fail("retrieve"));
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		exit(fail("mmap"));
	bad = walk(map, size, 1);
	if (bad) {
		printf("luo-hold: %ld words differ after retrieve\n", bad);
		exit(1);
	}
	if (!hold) {
		munmap(map, size);
		close(fd);
		if (luo_session_finish(session))
			return fail("finish");
		printf("luo-hold: %zu MiB retrieved, checked and finished\n", size >> 20);
		return 0;
	}
	f = fopen(PIDFILE, "w");
	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f))
		exit(fail(PIDFILE));
	printf("luo-hold: %zu MiB retrieved and checked, mapped until 'luo-hold finish'\n",
	       size >> 20);
	fflush(stdout);
	if (write(report, "y", 1) != 1)
		exit(1);
	close(report);

	sigwait(&set, &sig);
	bad = walk(map, size, 1);
	munmap(map, size);
	close(fd);
	f = fopen(RESULT, "w");
	if (bad)
		fprintf(f, "%ld words differ at finish\n", bad);
	else if (luo_session_finish(session))
		fprintf(f, "finish: %s\n", strerror(errno));
	else
		fprintf(f, "ok\n");
	fclose(f);
	exit(0);
}

static int finish(void)
{
	char line[128] = "";
	FILE *f = fopen(PIDFILE, "r");
	int pid = 0, i;

	if (!f || fscanf(f, "%d", &pid) != 1 || kill(pid, SIGTERM))
		return fail("no holder");
	fclose(f);
	for (i = 0; i < 600 && !kill(pid, 0); i++)
		usleep(100000);
	f = fopen(RESULT, "r");
	if (!f || !fgets(line, sizeof(line), f))
		return fail(RESULT);
	fclose(f);
	line[strcspn(line, "\n")] = 0;
	printf("luo-hold: finish: %s\n", line);
	return strcmp(line, "ok") != 0;
}

int main(int argc, char **argv)
{
	size_t size = argc > 2 ? strtoul(argv[2], NULL, 0) << 20 : 0;

	if (argc == 3 && !strcmp(argv[1], "preserve") && size && !(size % HPAGE))
		return preserve(size);
	if (argc == 3 && !strcmp(argv[1], "retrieve") && size && !(size % HPAGE))
		return retrieve(size, 1);
	if (argc == 3 && !strcmp(argv[1], "take") && size && !(size % HPAGE))
		return retrieve(size, 0);
	if (argc == 2 && !strcmp(argv[1], "finish"))
		return finish();
	fprintf(stderr, "usage: %s preserve|retrieve|take MIB | finish\n", argv[0]);
	return 2;
}
