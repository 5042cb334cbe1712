// SPDX-License-Identifier: GPL-2.0
/*
 * hlu-vm: a live update agent that keeps a real VM running across a live
 * update of this kernel.  It owns the LUO session and runs QEMU (Debian's
 * qemu-system-x86_64, TCG) on a guest RAM memfd that it hands to QEMU:
 * the nested guest is /boot/hluvm.elf (guest/vm/hluvm.c), which keeps a
 * counter and a pattern in its RAM and says on its serial port when it
 * was resumed and whether its RAM was kept.
 *
 * Stage 1: create the RAM memfd (hugetlb 2 MiB or 1 GiB pages, or shmem),
 * allocate all of it, start the VM, preserve the memfd while the VM runs,
 * then stop the VM, save its device state with QEMU's migration and the
 * x-ignore-shared capability (RAM stays in place) into a shmem memfd,
 * preserve that too and hand the session to a process that holds it until
 * the kexec.  Stage 2: retrieve both memfds, start QEMU on the retrieved
 * RAM with -incoming, load the device state, continue the VM and check
 * that it resumed where it stopped with its RAM unchanged, then finish.
 * docs/vmm.md describes the sequence.
 *
 * The name it is run by chooses the test (build-guest.sh links them):
 * hlu-vm-2m and hlu-vm-1g (128 MiB of 2 MiB pages, one 1 GiB page) and
 * hlu-vm-shmem do an update, hlu-vm-badfile and hlu-vm-kexecfail (2 MiB
 * pages) the bad paths.  hlu.vm=TYPE:MIB[:MODE] on the kernel command line
 * (scripts/demo-vm.sh) overrides it: TYPE 2M, 1G or shmem, MODE
 *   update     (default) the above, two stages
 *   badfile    the VM's RAM is a file on tmpfs, not a memfd: the agent
 *              must refuse to preserve it with a clear message, the kernel
 *              with ENOENT, and the VM go on running; a file on a
 *              hugetlbfs mount is refused the same way (one stage)
 *   kexecfail  the kexec fails at a fault point (kexec-load -N: the first
 *              fault point of the kexec path, then the freeze of the RAM
 *              memfd), and the VM must resume on this kernel after each
 *              failure, its RAM unchanged; then the update as above
 *
 * Lines "hlu-vm: ..." narrate, "vm: ..." are the nested guest's serial
 * port, "HLU: vm-time NAME MS" are timings for scripts/demo-vm.sh.  Exit
 * code 0 when the VM did what it should.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/memfd.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libliveupdate.h>

#define SESSION		"hlu-vm"
#define TOKEN_RAM	1
#define TOKEN_STATE	2
#define QEMU		"/usr/bin/qemu-system-x86_64"
#define QEMU_MODULES	"/usr/lib/x86_64-linux-gnu/qemu"
#define GUEST		"/boot/hluvm.elf"
/* Where QEMU's multiboot loader put it (guest/vm/hluvm.ld). */
#define GUEST_LOAD	0x100000
#define QMP_PATH	"/tmp/hlu-vm.qmp"
#define BAD_RAM_FILE	"/tmp/hlu-vm-ram"
/* The nested guest takes an RTC jump of this many seconds for a resume. */
#define RESUME_GAP	3
/* Ticks of the nested guest: before the preserve, and while preserved. */
#define TICKS_BEFORE	3
#define TICKS_PRESERVED	2
#define TICK_TIMEOUT	60
#define MAX_TICKS	4096

static const char *type = "2M", *mode = "update";
static unsigned long ram_mib = 128;
static int luo_fd = -1, session_fd = -1;

struct linebuf {
	char buf[8192];
	size_t len;
};

static struct vm {
	pid_t pid;
	int out;		/* QEMU's stdout and stderr: the guest's serial */
	int qmp_in, qmp_out;
	struct linebuf out_buf, qmp_buf;
	char reply[8192];
	int have_reply;
	unsigned int qmp_id;
	/* What the guest said. */
	unsigned int ticks;
	unsigned long counter[MAX_TICKS];
	unsigned long sum[MAX_TICKS];
	int resumed, boot_lines, last_was_resumed;
	unsigned long res_counter, res_sum, res_bad, bad_ticks;
	double first_line;	/* when the first line came, in now() */
} vm;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void say(const char *fmt, ...)
{
	va_list ap;

	printf("hlu-vm: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static int fail(const char *fmt, ...)
{
	va_list ap;

	printf("hlu-vm: FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return 1;
}

static void timing(const char *name, double seconds)
{
	printf("HLU: vm-time %s %.1f\n", name, seconds * 1000);
	fflush(stdout);
}

static void parse_cmdline(void)
{
	static char line[4096];
	char *arg, *save = NULL;
	FILE *f = fopen("/proc/cmdline", "r");

	if (!f || !fgets(line, sizeof(line), f))
		return;
	fclose(f);
	for (arg = strtok_r(line, " \n", &save); arg; arg = strtok_r(NULL, " \n", &save)) {
		char *p;

		if (strncmp(arg, "hlu.vm=", 7))
			continue;
		type = arg + 7;
		p = strchr(type, ':');
		if (!p)
			continue;
		*p++ = 0;
		ram_mib = strtoul(p, &p, 10);
		if (*p == ':')
			mode = p + 1;
	}
}

/* One line of the guest's serial port (or of QEMU itself). */
static void vm_line(char *line)
{
	unsigned long c, s, g, b;
	int was_resumed = vm.last_was_resumed;

	if (!vm.first_line)
		vm.first_line = now();
	printf("vm: %s\n", line);
	fflush(stdout);
	vm.last_was_resumed = 0;
	if (sscanf(line, "HLUVM tick counter=%lu sum=%lx bad=%lu", &c, &s, &b) == 3 &&
	    vm.ticks < MAX_TICKS) {
		/* Words that lost the last tick's pattern while the VM ran. */
		vm.bad_ticks += b != 0;
		vm.counter[vm.ticks] = c;
		vm.sum[vm.ticks++] = s;
	} else if (sscanf(line, "HLUVM resumed gap=%lu", &g) == 1) {
		vm.last_was_resumed = 1;
	} else if (sscanf(line, "HLUVM verify counter=%lu sum=%lx bad=%lu", &c, &s, &b) == 3 &&
		   was_resumed && !vm.resumed) {
		/* The check of the first resume, right after its line. */
		vm.resumed = 1;
		vm.res_counter = c;
		vm.res_sum = s;
		vm.res_bad = b;
	} else if (!strncmp(line, "HLUVM boot", 10)) {
		vm.boot_lines++;
	}
}

/* A QMP line: keep a command's reply, skip events. */
static void qmp_line(char *line)
{
	char id[32];

	if (strncmp(line, "{\"return\"", 9) && strncmp(line, "{\"error\"", 8))
		return;
	/* Only the reply to the last command: a late one is not it. */
	snprintf(id, sizeof(id), "\"id\": %u}", vm.qmp_id);
	if (!strstr(line, id))
		return;
	snprintf(vm.reply, sizeof(vm.reply), "%s", line);
	vm.have_reply = 1;
}

/* Read from @fd into @l and hand over its complete lines; -1 at EOF. */
static int read_lines(int fd, struct linebuf *l, void (*line)(char *))
{
	ssize_t n = read(fd, l->buf + l->len, sizeof(l->buf) - l->len - 1);
	char *nl;

	if (n <= 0)
		return -1;
	/* A NUL would hide the rest of the buffer from strpbrk(). */
	for (ssize_t i = 0; i < n; i++)
		if (!l->buf[l->len + i])
			l->buf[l->len + i] = ' ';
	l->len += n;
	l->buf[l->len] = 0;
	while ((nl = strpbrk(l->buf, "\r\n"))) {
		*nl = 0;
		if (nl != l->buf)
			line(l->buf);
		l->len -= nl + 1 - l->buf;
		memmove(l->buf, nl + 1, l->len + 1);
	}
	if (l->len == sizeof(l->buf) - 1)
		l->len = 0;
	return 0;
}

/*
 * Take in what QEMU writes (the guest's serial port, QMP replies) until
 * @done() is true, QEMU exits or @timeout seconds pass.  Returns 0 when
 * @done() became true.
 */
static int vm_wait(int (*done)(void), double timeout)
{
	double end = now() + timeout;
	struct pollfd p[2] = {
		{ .fd = vm.out, .events = POLLIN },
		{ .fd = vm.qmp_out, .events = POLLIN },
	};

	while (!done()) {
		if (now() > end || vm.out < 0)
			return -1;
		if (poll(p, 2, 100) <= 0)
			continue;
		if (p[1].revents & POLLIN)
			read_lines(vm.qmp_out, &vm.qmp_buf, qmp_line);
		if ((p[0].revents & (POLLIN | POLLHUP)) &&
		    read_lines(vm.out, &vm.out_buf, vm_line)) {
			/* QEMU is gone. */
			close(vm.out);
			vm.out = -1;
			return done() ? 0 : -1;
		}
	}
	return 0;
}

static unsigned int want_ticks;

static int enough_ticks(void)
{
	return vm.ticks >= want_ticks;
}

static int resumed(void)
{
	return vm.resumed;
}

static int any_line(void)
{
	return vm.first_line != 0;
}

static int have_reply(void)
{
	return vm.have_reply;
}

static int never(void)
{
	return 0;
}

/* Take in what QEMU has written, until it is quiet for @quiet seconds. */
static void vm_drain(double quiet)
{
	vm_wait(never, quiet);
}

/* Wait for @n more ticks of the guest. */
static int vm_ticks(unsigned int n)
{
	want_ticks = vm.ticks + n;
	if (vm_wait(enough_ticks, TICK_TIMEOUT + n))
		return fail("the VM printed %u ticks, not %u, in %d s", vm.ticks,
			    want_ticks, TICK_TIMEOUT + n);
	return 0;
}

/*
 * Send a QMP command and wait for its reply (in vm.reply).  Returns 0 on a
 * "return", -1 on an "error" or when QEMU is gone.
 */
static int qmp(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int len;

	/* {"execute": ...} becomes {"id": N, "execute": ...}. */
	len = snprintf(cmd, sizeof(cmd), "{\"id\": %u, ", ++vm.qmp_id);
	va_start(ap, fmt);
	len += vsnprintf(cmd + len, sizeof(cmd) - len - 1, fmt + 1, ap);
	va_end(ap);
	if (len >= (int)sizeof(cmd) - 1)
		return fail("QMP command too long: %s", fmt), -1;
	cmd[len++] = '\n';
	vm.have_reply = 0;
	if (write(vm.qmp_in, cmd, len) != len || vm_wait(have_reply, 60)) {
		say("QMP: no reply from QEMU to %.*s", len - 1, cmd);
		return -1;
	}
	if (vm.reply[2] == 'e') {
		say("QMP error: %s", vm.reply);
		return -1;
	}
	return 0;
}

/* The number after "@key": in the last QMP reply, or -1. */
static long long qmp_num(const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(vm.reply, pat);
	return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

/*
 * QMP goes through a pair of FIFOs (QEMU's pipe chardev): the test
 * kernel has no networking, so no unix socket, which a VMM would use.
 */
static int qmp_open(void)
{
	unlink(QMP_PATH ".in");
	unlink(QMP_PATH ".out");
	if (mkfifo(QMP_PATH ".in", 0600) || mkfifo(QMP_PATH ".out", 0600))
		return fail("mkfifo " QMP_PATH ": %s", strerror(errno));
	/* O_RDWR: neither open waits for QEMU's. */
	vm.qmp_in = open(QMP_PATH ".in", O_RDWR | O_CLOEXEC);
	vm.qmp_out = open(QMP_PATH ".out", O_RDWR | O_CLOEXEC);
	if (vm.qmp_in < 0 || vm.qmp_out < 0)
		return fail(QMP_PATH ": %s", strerror(errno));
	return 0;
}

/*
 * Start QEMU on the RAM file @ram_fd (a file path for the badfile mode).
 * With @state_fd >= 0, QEMU waits for the device state (-incoming defer).
 */
static int vm_start(int ram_fd, const char *ram_path, int state_fd)
{
	char mem[64], backend[256], path[64];
	const char *argv[32];
	int pipefd[2], argc = 0;

	memset(&vm, 0, sizeof(vm));
	vm.qmp_in = vm.qmp_out = -1;
	snprintf(mem, sizeof(mem), "%luM", ram_mib);
	if (!ram_path) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", ram_fd);
		ram_path = path;
	}
	/*
	 * The RAM is the memfd QEMU inherits, opened again through
	 * /proc/self/fd (Debian's QEMU 7.2 has no fd= for a memory backend).
	 * share=on: the guest's writes go to the file, and x-ignore-shared
	 * leaves shared RAM out of the migration stream.
	 */
	snprintf(backend, sizeof(backend),
		 "memory-backend-file,id=ram0,size=%s,mem-path=%s,share=on", mem, ram_path);
	argv[argc++] = QEMU;
	argv[argc++] = "-accel";
	argv[argc++] = "tcg,tb-size=64";
	argv[argc++] = "-m";
	argv[argc++] = mem;
	argv[argc++] = "-object";
	argv[argc++] = backend;
	argv[argc++] = "-machine";
	argv[argc++] = "pc,memory-backend=ram0";
	argv[argc++] = "-nodefaults";
	argv[argc++] = "-display";
	argv[argc++] = "none";
	argv[argc++] = "-serial";
	argv[argc++] = "stdio";
	argv[argc++] = "-chardev";
	argv[argc++] = "pipe,id=qmp,path=" QMP_PATH;
	argv[argc++] = "-mon";
	argv[argc++] = "chardev=qmp,mode=control";
	argv[argc++] = "-kernel";
	argv[argc++] = GUEST;
	if (state_fd >= 0) {
		argv[argc++] = "-incoming";
		argv[argc++] = "defer";
		argv[argc++] = "-S";
	}
	argv[argc] = NULL;

	if (qmp_open())
		return 1;
	if (pipe2(pipefd, O_CLOEXEC))
		return fail("pipe: %s", strerror(errno));
	vm.pid = fork();
	if (vm.pid < 0)
		return fail("fork: %s", strerror(errno));
	if (!vm.pid) {
		/* -serial stdio reads stdin and makes a terminal raw: not the console. */
		int null = open("/dev/null", O_RDONLY);

		if (null < 0 || dup2(null, 0) < 0)
			_exit(126);
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		if (ram_fd >= 0)
			fcntl(ram_fd, F_SETFD, 0);
		setenv("QEMU_MODULE_DIR", QEMU_MODULES, 1);
		execv(QEMU, (char **)argv);
		printf("exec %s: %s\n", QEMU, strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	vm.out = pipefd[0];
	/* QEMU reads it once it is up; its greeting is not a reply. */
	return qmp("{\"execute\": \"qmp_capabilities\"}");
}

/* Wait up to @timeout seconds for QEMU's exit; then kill it. */
static int vm_reap(int *status, double timeout)
{
	double end = now() + timeout;
	pid_t pid;

	if (vm.pid <= 0)
		return 0;
	while ((pid = waitpid(vm.pid, status, WNOHANG)) == 0 && now() < end)
		usleep(20000);
	if (pid == vm.pid) {
		vm.pid = 0;
		return 0;
	}
	kill(vm.pid, SIGKILL);
	waitpid(vm.pid, status, 0);
	vm.pid = 0;
	return -1;
}

/* On a failure: no QEMU left behind. */
static void vm_kill(void)
{
	int status;

	if (vm.pid > 0)
		vm_reap(&status, 0);
}

static int vm_quit(void)
{
	int status;

	if (vm.qmp_in >= 0) {
		qmp("{\"execute\": \"quit\"}");
		close(vm.qmp_in);
		close(vm.qmp_out);
		vm.qmp_in = -1;
		vm.qmp_out = -1;
	}
	/* Up to QEMU's end of output. */
	vm_drain(10);
	if (vm.out >= 0)
		close(vm.out);
	vm.out = -1;
	if (vm_reap(&status, 10))
		return fail("QEMU did not exit after quit");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return fail("QEMU exited with status %#x", status);
	return 0;
}

/* Wait for a migration (either side) to complete; vm.reply has the last query. */
static int migration_wait(void)
{
	double end = now() + 120;

	for (;;) {
		if (qmp("{\"execute\": \"query-migrate\"}"))
			return -1;
		if (strstr(vm.reply, "\"status\": \"completed\""))
			return 0;
		if (strstr(vm.reply, "\"status\": \"failed\"") || now() > end)
			return fail("migration did not complete: %s", vm.reply);
		usleep(10000);
	}
}

static int ignore_shared(void)
{
	return qmp("{\"execute\": \"migrate-set-capabilities\", \"arguments\": "
		   "{\"capabilities\": [{\"capability\": \"x-ignore-shared\", \"state\": true}]}}");
}

/* Each tick, the guest checks the last tick's pattern: all of it held? */
static int vm_check_ticks(void)
{
	if (vm.bad_ticks)
		return fail("%lu ticks found words of the VM's pattern changed while it ran",
			    vm.bad_ticks);
	return 0;
}

static unsigned long vm_last_counter(void)
{
	return vm.ticks ? vm.counter[vm.ticks - 1] : 0;
}

/*
 * Stop the VM and save its device state into @state_fd; QEMU exits.
 * @last_counter and @last_sum get the guest's last tick before the stop.
 */
static int vm_stop_save(int state_fd, unsigned long *last_counter, unsigned long *last_sum,
			size_t ram_size, double *stopped)
{
	double t0, t1;
	struct stat st;
	long long ram_bytes, ram_total;

	say("stop: the VM's downtime starts");
	t0 = now();
	if (qmp("{\"execute\": \"stop\"}"))
		return fail("stop");
	*stopped = now();
	/* The guest's last lines before the stop may still be in the pipe. */
	vm_drain(0.2);
	*last_counter = vm_last_counter();
	*last_sum = vm.ticks ? vm.sum[vm.ticks - 1] : 0;
	if (ignore_shared() ||
	    qmp("{\"execute\": \"migrate\", \"arguments\": "
		"{\"uri\": \"exec:cat > /proc/%d/fd/%d\"}}", getpid(), state_fd) ||
	    migration_wait())
		return fail("saving the device state");
	t1 = now();
	ram_bytes = qmp_num("transferred");
	/* RAM the migration covered: zero pages take no room in the stream. */
	ram_total = qmp_num("total");
	if (vm_quit())
		return 1;
	if (fstat(state_fd, &st))
		return fail("fstat: %s", strerror(errno));
	say("device state saved: %lld KiB (migration stream %lld KiB, RAM of %zu MiB not in it), "
	    "%.0f ms, QEMU exited after %.0f ms", (long long)st.st_size >> 10, ram_bytes >> 10,
	    ram_size >> 20, (t1 - t0) * 1000, (now() - t0) * 1000);
	timing("save", now() - t0);
	/*
	 * The guest's RAM must not be in the stream: x-ignore-shared leaves
	 * out the shared backend; what remains is firmware and ROM blocks.
	 */
	if ((size_t)st.st_size > ram_size / 16 || st.st_size > 8 << 20 ||
	    ram_total < 0 || (size_t)ram_total > ram_size / 16)
		return fail("the device state (%lld bytes, RAM blocks of %lld bytes) holds guest "
			    "RAM: x-ignore-shared did not apply", (long long)st.st_size, ram_total);
	return 0;
}

/*
 * Start QEMU on @ram_fd, load the device state from @state_fd, continue
 * the VM and check that it resumed after @last_counter with its RAM
 * unchanged.  The guest must see an RTC gap of RESUME_GAP seconds since
 * @stopped (now()).
 */
static int vm_restore(int ram_fd, int state_fd, unsigned long last_counter,
		      unsigned long last_sum, double stopped)
{
	double t0 = now(), t1, t2;
	unsigned int i;
	int found = 0;

	if (vm_start(ram_fd, NULL, state_fd) || ignore_shared() ||
	    qmp("{\"execute\": \"migrate-incoming\", \"arguments\": "
		"{\"uri\": \"exec:cat /proc/%d/fd/%d\"}}", getpid(), state_fd) ||
	    migration_wait())
		return fail("loading the device state");
	t1 = now();
	if (stopped && t1 - stopped < RESUME_GAP + 1) {
		say("waiting %.1f s so that the VM's clock shows the stop",
		    RESUME_GAP + 1 - (t1 - stopped));
		usleep((RESUME_GAP + 1 - (t1 - stopped)) * 1e6);
	}
	if (qmp("{\"execute\": \"cont\"}"))
		return fail("cont");
	t2 = now();
	if (vm_wait(any_line, 30))
		return fail("the VM printed nothing after cont");
	say("VM continued: QEMU start and device state load %.0f ms, cont to the VM's first "
	    "line %.0f ms", (t1 - t0) * 1000, (vm.first_line - t2) * 1000);
	timing("restore", t1 - t0);
	timing("cont_to_line", vm.first_line - t2);
	if (vm_wait(resumed, 30))
		return fail("the VM did not say it resumed");
	if (vm.boot_lines)
		return fail("the VM booted again instead of resuming");
	if (vm.res_bad)
		return fail("%lu words of the VM's pattern differ: its RAM changed", vm.res_bad);
	/*
	 * The stop may have come in the middle of the next tick: then the
	 * guest prints that tick after the cont, or (stopped in the middle
	 * of the line) only the line's end.  Its own check (bad=0) holds
	 * either way.
	 */
	if (vm.res_counter == last_counter && vm.res_sum == last_sum)
		found = 1;
	if (vm.res_counter == last_counter + 1) {
		found = 1;
		for (i = 0; i < vm.ticks; i++)
			if (vm.counter[i] == vm.res_counter && vm.sum[i] != vm.res_sum)
				found = 0;
	}
	if (!found)
		return fail("the VM resumed at counter %lu sum %#lx, not where it stopped "
			    "(counter %lu sum %#lx)", vm.res_counter, vm.res_sum, last_counter,
			    last_sum);
	if (vm_ticks(1))
		return 1;
	if (vm_last_counter() != vm.res_counter + 1)
		return fail("the VM's counter went from %lu to %lu", vm.res_counter,
			    vm_last_counter());
	if (vm_check_ticks())
		return 1;
	say("VM resumed: counter %lu continues to %lu, pattern checksum %#lx unchanged, "
	    "0 words differ", vm.res_counter, vm_last_counter(), vm.res_sum);
	return 0;
}

static int ram_flags(void)
{
	if (!strcmp(type, "2M"))
		return MFD_HUGETLB | MFD_HUGE_2MB;
	if (!strcmp(type, "1G"))
		return MFD_HUGETLB | MFD_HUGE_1GB;
	return 0;
}

static size_t ram_page(void)
{
	if (!strcmp(type, "2M"))
		return 2UL << 20;
	if (!strcmp(type, "1G"))
		return 1UL << 30;
	return 4096;
}

/*
 * What an agent checks before it relies on a live update: the VM's RAM
 * must be a memfd (hugetlb or shmem), or nothing can carry it over.  A
 * retrieved one is a memfd by construction, but Linux 7.3's shmem handler
 * gives it no name ("/ (deleted)" in /proc): then only the filesystem.
 */
static int ram_check(int fd, int retrieved)
{
	char path[64], target[256];
	struct statfs sfs;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0 || fstatfs(fd, &sfs))
		return fail("the VM's RAM: %s", strerror(errno));
	target[n] = 0;
	if ((!retrieved && strncmp(target, "/memfd:", 7)) ||
	    (sfs.f_type != HUGETLBFS_MAGIC && sfs.f_type != TMPFS_MAGIC)) {
		say("the VM's RAM is %s (filesystem magic %#lx), not a hugetlb or shmem memfd: "
		    "a live update cannot carry it over (docs/vmm.md); the VM must stay on "
		    "this kernel", target, (unsigned long)sfs.f_type);
		return -1;
	}
	/* What it was made as: hugetlb with its page size, or shmem. */
	if (sfs.f_type != (ram_flags() ? HUGETLBFS_MAGIC : TMPFS_MAGIC) ||
	    (ram_flags() && (size_t)sfs.f_bsize != ram_page()))
		return fail("the VM's RAM%s is on filesystem %#lx with %ld-byte pages, not %s",
			    retrieved ? " (retrieved)" : "", (unsigned long)sfs.f_type,
			    (long)sfs.f_bsize, type);
	return 0;
}

/*
 * The physical pages of the RAM, hashed: the retrieved file must hold the
 * very pages that were preserved (a kernel that copied them would pass
 * every check of their contents).  One read fault per page maps it; the
 * PFNs come from /proc/self/pagemap.
 */
static int ram_pfns(int fd, size_t size, uint64_t *hash)
{
	size_t page = ram_page(), off;
	volatile char *map;
	uint64_t entry;
	int pm;

	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (map == MAP_FAILED || pm < 0)
		return fail("mmap or pagemap: %s", strerror(errno));
	*hash = 0xcbf29ce484222325ULL;
	for (off = 0; off < size; off += page) {
		(void)map[off];
		if (pread(pm, &entry, 8, ((uintptr_t)map + off) / 4096 * 8) != 8 ||
		    !(entry & (1ULL << 63)) || !(entry & ((1ULL << 55) - 1)))
			return fail("no PFN for page %zu of the RAM (pagemap %#llx)", off / page,
				    (unsigned long long)entry);
		*hash = (*hash ^ (entry & ((1ULL << 55) - 1))) * 0x100000001b3ULL;
	}
	close(pm);
	munmap((void *)map, size);
	return 0;
}

static int luo_session(void)
{
	/* Not luo_open_device(): QEMU and kexec-load must not inherit it. */
	if (luo_fd < 0)
		luo_fd = open(LUO_DEVICE, O_RDWR | O_CLOEXEC);
	if (luo_fd < 0)
		return fail(LUO_DEVICE ": %s", strerror(errno));
	session_fd = luo_create_session(luo_fd, SESSION);
	if (session_fd < 0)
		return fail("create session %s: %s", SESSION, strerror(-session_fd));
	return 0;
}

static int preserve(int fd, uint64_t token, const char *what)
{
	int ret = luo_session_preserve_fd(session_fd, fd, token);

	if (ret)
		return fail("preserve %s: %s", what, strerror(-ret));
	return 0;
}

/* Write "@name=@value" to the next stage's kernel arguments. */
static int next_arg(const char *name, const char *fmt, ...)
{
	FILE *f = fopen("/tmp/hlu.next-args", "a");
	va_list ap;

	if (!f)
		return fail("/tmp/hlu.next-args: %s", strerror(errno));
	fprintf(f, " %s=", name);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	return fclose(f) ? fail("/tmp/hlu.next-args: %s", strerror(errno)) : 0;
}

/* Keep the session, the memfds and /dev/liveupdate open until the kexec. */
static void hold_until_kexec(void)
{
	pid_t pid = fork();

	if (pid < 0)
		exit(fail("fork: %s", strerror(errno)));
	if (pid)
		return;
	setsid();
	for (;;)
		pause();
}

static int create_ram(size_t size, double *alloc_s)
{
	double t0 = now();
	int fd;

	fd = memfd_create("hlu-vm-ram", MFD_CLOEXEC | ram_flags());
	if (fd < 0 || ftruncate(fd, size))
		return fail("%s memfd of %lu MiB: %s", type, ram_mib, strerror(errno)), -1;
	/*
	 * All of the RAM now: a preserved memfd keeps its page set, so the
	 * VM could not fault in a page it has not had before.
	 */
	if (fallocate(fd, 0, 0, size)) {
		fail("fallocate %lu MiB of %s pages: %s (is the pool big enough?)", ram_mib,
		     type, strerror(errno));
		return -1;
	}
	*alloc_s = now() - t0;
	return fd;
}

/* kexec-load -N @point: a kexec that must fail, the VM stopped and saved. */
static int failed_kexec(const char *point)
{
	char cmd[512];
	int ret;

	/*
	 * Should it go through, the next kernel runs no program (no stage
	 * 99), and the harness fails the test: stage 2 never reports.
	 */
	snprintf(cmd, sizeof(cmd), "kexec-load -e -N %s -c \"$(cat /proc/cmdline) hlu.stage=99\" "
		 "/boot/bzImage /sys/firmware/initrd", point);
	say("kexec, failing at fault point %s", point);
	ret = system(cmd);
	if (ret)
		return fail("kexec-load -N %s: status %#x", point, ret);
	return 0;
}

/*
 * A file on a mounted hugetlbfs is no memfd either: the kernel must refuse
 * it with ENOENT (no handler takes it), like the tmpfs file.
 */
static int hugetlbfs_file_refused(void)
{
	int fd, err;

	if (mkdir("/tmp/hugetlbfs", 0700) && errno != EEXIST)
		return fail("mkdir /tmp/hugetlbfs: %s", strerror(errno));
	if (mount("none", "/tmp/hugetlbfs", "hugetlbfs", 0, "pagesize=2M"))
		return fail("mount hugetlbfs: %s", strerror(errno));
	fd = open("/tmp/hugetlbfs/ram", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, 2UL << 20) || fallocate(fd, 0, 0, 2UL << 20))
		return fail("a 2 MiB file on hugetlbfs: %s", strerror(errno));
	if (!ram_check(fd, 0))
		return fail("a hugetlbfs file passed for a memfd");
	err = -luo_session_preserve_fd(session_fd, fd, TOKEN_RAM + 1);
	close(fd);
	unlink("/tmp/hugetlbfs/ram");
	umount("/tmp/hugetlbfs");
	if (err != ENOENT)
		return fail("preserve of a file on a hugetlbfs mount: %s, not ENOENT",
			    err ? strerror(err) : "preserved");
	say("a file on a hugetlbfs mount: refused by the agent, and by the kernel (ENOENT)");
	return 0;
}

static int stage1_badfile(size_t size)
{
	int ram, err;

	ram = open(BAD_RAM_FILE, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (ram < 0 || ftruncate(ram, size))
		return fail(BAD_RAM_FILE ": %s", strerror(errno));
	say("starting a VM with %lu MiB of RAM in " BAD_RAM_FILE " (tmpfs, not a memfd)",
	    ram_mib);
	if (vm_start(-1, BAD_RAM_FILE, -1) || vm_ticks(TICKS_BEFORE))
		return 1;
	if (!ram_check(ram, 0))
		return fail("a tmpfs file passed for a memfd");
	if (luo_session())
		return 1;
	err = -luo_session_preserve_fd(session_fd, ram, TOKEN_RAM);
	if (err != ENOENT)
		return fail("preserve of a tmpfs file: %s, not ENOENT",
			    err ? strerror(err) : "preserved");
	say("the kernel refuses it too (%s); the VM goes on running", strerror(err));
	if (vm_ticks(1) || vm_check_ticks() || vm_quit() || hugetlbfs_file_refused())
		return 1;
	say("PASS: RAM that is not a memfd was refused with a clear message");
	return 0;
}

static int stage1(void)
{
	static const char * const points[] = { "1", "freeze" };
	size_t size = ram_mib << 20;
	unsigned long counter, sum;
	double alloc_s, t0, stopped;
	uint64_t pfns;
	int ram, state, err;
	unsigned int i;

	if (!strcmp(mode, "badfile"))
		return stage1_badfile(size);
	if (strcmp(mode, "update") && strcmp(mode, "kexecfail"))
		return fail("unknown mode %s", mode);
	/* The freeze fault point is a hugetlb one: with shmem, the kexec would go on. */
	if (!strcmp(mode, "kexecfail") && !ram_flags())
		return fail("mode kexecfail needs hugetlb RAM");
	ram = create_ram(size, &alloc_s);
	if (ram < 0)
		return 1;
	say("%lu MiB of RAM in a %s memfd, allocated in %.0f ms; starting the VM", ram_mib,
	    type, alloc_s * 1000);
	if (ram_check(ram, 0))
		return 1;
	t0 = now();
	if (vm_start(ram, NULL, -1) || vm_ticks(TICKS_BEFORE))
		return 1;
	say("VM running (first line %.0f ms after QEMU started)", (vm.first_line - t0) * 1000);
	if (luo_session())
		return 1;
	t0 = now();
	if (preserve(ram, TOKEN_RAM, "the VM's RAM"))
		return 1;
	say("RAM preserved in session " SESSION " (token %d) in %.1f ms while the VM runs",
	    TOKEN_RAM, (now() - t0) * 1000);
	timing("preserve_ram", now() - t0);
	/* After the preserve, which may move pages that must not be pinned. */
	if (ram_pfns(ram, size, &pfns) || vm_ticks(TICKS_PRESERVED) || vm_check_ticks())
		return 1;

	/*
	 * kexecfail: twice, a kexec that fails and the VM resumed on this
	 * kernel; each try's device state is a memfd of its own (a
	 * preserved one cannot be written again), under a token of its own.
	 * Then the update goes on as usual.
	 */
	for (i = 0; !strcmp(mode, "kexecfail") && i < sizeof(points) / sizeof(*points); i++) {
		state = memfd_create("hlu-vm-state", MFD_CLOEXEC);
		if (state < 0 || vm_stop_save(state, &counter, &sum, size, &stopped) ||
		    preserve(state, TOKEN_STATE + 1 + i, "the device state") ||
		    failed_kexec(points[i]))
			return 1;
		say("the kexec failed: resuming the VM on this kernel");
		if (vm_restore(ram, state, counter, sum, stopped))
			return 1;
	}

	state = memfd_create("hlu-vm-state", MFD_CLOEXEC);
	if (state < 0)
		return fail("memfd: %s", strerror(errno));
	err = vm_stop_save(state, &counter, &sum, size, &stopped);
	if (err)
		return err;
	t0 = now();
	if (preserve(state, TOKEN_STATE, "the device state"))
		return 1;
	timing("preserve_state", now() - t0);
	if (next_arg("hlu.vm_last", "%lu:%lx", counter, sum) ||
	    next_arg("hlu.vm_pfns", "%llx", (unsigned long long)pfns))
		return 1;
	hold_until_kexec();
	say("VM stopped at counter %lu; its RAM and device state are preserved in session "
	    SESSION ": live update", counter);
	return 0;
}

static int retrieve(int session, uint64_t token, const char *what)
{
	int fd = luo_session_retrieve_fd(session, token);

	if (fd < 0)
		return fail("retrieve %s (token %llu): %s", what, (unsigned long long)token,
			    strerror(-fd)), -1;
	return fd;
}

/*
 * QEMU must not write the guest's RAM on the restore: it would load the
 * -kernel image (and ROMs) into RAM at reset if no incoming migration were
 * pending.  Replace the image's multiboot header in RAM (the guest never
 * reads it again) with a mark before the restore (@after 0) and check
 * that it is still there after QEMU quit (@after 1).
 */
static int mark_image(int ram, int after)
{
	static const uint32_t magic = 0x1badb002, mark = 0x4b52414d;	/* "MARK" */
	uint32_t *word;
	void *map;
	int ret = 0;
	size_t len = ram_page() > GUEST_LOAD ? ram_page() : 2UL << 20;

	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, ram, 0);
	if (map == MAP_FAILED)
		return fail("mmap of the retrieved RAM: %s", strerror(errno));
	word = (uint32_t *)((char *)map + GUEST_LOAD);
	if (*word != (after ? mark : magic))
		ret = fail("the guest image's first word in RAM is %#x, not %#x%s", *word,
			   after ? mark : magic,
			   after ? ": QEMU wrote the guest's RAM on the restore" : "");
	else if (!after)
		*word = mark;
	munmap(map, len);
	return ret;
}

static int stage2(void)
{
	unsigned long counter = 0, sum = 0;
	unsigned long long want_pfns = 0;
	static char line[4096];
	double t0 = now();
	uint64_t pfns;
	int ram, state, ret;
	struct stat st;
	char *p;
	FILE *f;

	f = fopen("/proc/cmdline", "r");
	if (f && fgets(line, sizeof(line), f) && (p = strstr(line, "hlu.vm_last=")))
		sscanf(p, "hlu.vm_last=%lu:%lx", &counter, &sum);
	if (f && (p = strstr(line, "hlu.vm_pfns=")))
		sscanf(p, "hlu.vm_pfns=%llx", &want_pfns);
	if (f)
		fclose(f);
	luo_fd = open("/dev/liveupdate", O_RDWR | O_CLOEXEC);
	if (luo_fd < 0)
		return fail("/dev/liveupdate: %s", strerror(errno));
	session_fd = luo_retrieve_session(luo_fd, SESSION);
	if (session_fd < 0)
		return fail("retrieve session " SESSION ": %s", strerror(-session_fd));
	ram = retrieve(session_fd, TOKEN_RAM, "the VM's RAM");
	state = retrieve(session_fd, TOKEN_STATE, "the device state");
	if (ram < 0 || state < 0)
		return 1;
	say("RAM and device state retrieved from session " SESSION " in %.1f ms",
	    (now() - t0) * 1000);
	timing("retrieve", now() - t0);
	if (fstat(ram, &st) || (size_t)st.st_size != ram_mib << 20)
		return fail("the retrieved RAM has %lld bytes, not %lu MiB",
			    (long long)st.st_size, ram_mib);
	if (ram_check(ram, 1) || ram_pfns(ram, st.st_size, &pfns))
		return 1;
	if (pfns != want_pfns)
		return fail("the retrieved RAM is on other physical pages (PFN hash %#llx, not "
			    "%#llx): the kernel copied it", (unsigned long long)pfns, want_pfns);
	if (mark_image(ram, 0) || vm_restore(ram, state, counter, sum, 0) || vm_quit() ||
	    mark_image(ram, 1))
		return 1;
	ret = luo_session_finish(session_fd);
	if (ret)
		return fail("finish: %s", strerror(-ret));
	say("PASS: the VM went on running across the live update, its RAM in place");
	return 0;
}

/* hlu-vm-2m, hlu-vm-1g, ...: the test from the program's name. */
static void parse_name(const char *argv0)
{
	static const struct {
		const char *name, *type, *mode;
		unsigned long mib;
	} tests[] = {
		{ "hlu-vm-2m", "2M", "update", 128 },
		{ "hlu-vm-1g", "1G", "update", 1024 },
		{ "hlu-vm-shmem", "shmem", "update", 128 },
		{ "hlu-vm-badfile", "shmem", "badfile", 128 },
		{ "hlu-vm-kexecfail", "2M", "kexecfail", 128 },
	};
	const char *base = strrchr(argv0, '/');
	unsigned int i;

	base = base ? base + 1 : argv0;
	for (i = 0; i < sizeof(tests) / sizeof(*tests); i++) {
		if (strcmp(base, tests[i].name))
			continue;
		type = tests[i].type;
		mode = tests[i].mode;
		ram_mib = tests[i].mib;
	}
}

int main(int argc, char **argv)
{
	int stage = 1, ret;

	if (argc == 3 && !strcmp(argv[1], "-s"))
		stage = atoi(argv[2]);
	signal(SIGPIPE, SIG_IGN);
	parse_name(argv[0]);
	parse_cmdline();
	say("stage %d: %s RAM of %lu MiB, mode %s", stage, type, ram_mib, mode);
	ret = stage == 1 ? stage1() : stage2();
	if (ret)
		vm_kill();
	return ret;
}
