// SPDX-License-Identifier: GPL-2.0
/*
 * hluvm: the tiny guest of the nested-VM test (guest/hlu-vm.c runs it in
 * QEMU inside the test VM).  A multiboot image: QEMU's -kernel loads it and
 * enters it in 32-bit protected mode without paging, so it reaches all of
 * its RAM below 4 GiB directly.
 *
 * Its state lives at fixed addresses outside the loaded image (the image
 * has no data and no bss): a state block with a magic word and the
 * counter, the stack, and the pattern region from PATTERN_START to the end
 * of RAM, one 32-bit word in each 4 KiB page (a word per page keeps nested
 * TCG fast).  Every second of the RTC the counter goes up, the region is
 * rewritten with a pattern of the counter and the address, and a line
 *	HLUVM tick counter=N sum=S bad=B
 * goes out on COM1 with the checksum S of the region and the number B of
 * words that did not hold the last tick's pattern before the rewrite.  A jump of the RTC by
 * RESUME_GAP seconds or more between two polls means the VM was stopped
 * and continued (a migration, a live update of its host): before anything
 * changes, the region is checked against the counter's pattern and
 *	HLUVM resumed gap=G
 *	HLUVM verify counter=N sum=S bad=B region=MIB
 * says so (B: words that differ).  At start, the magic word in the state
 * block means the RAM was kept from an earlier run: "HLUVM boot resume"
 * and the same check; otherwise "HLUVM boot fresh".
 */
#define MB_MAGIC	0x1badb002
#define MB_FLAGS	0
#define MB_BOOT_MAGIC	0x2badb002

#define STATE_ADDR	0x300000u
#define STACK_TOP	0x3ff000u
#define PATTERN_START	0x400000u
#define STATE_MAGIC	0x484c5556u	/* "HLUV" */
#define RESUME_GAP	3
#define COM1		0x3f8

typedef unsigned int u32;
typedef unsigned char u8;

struct state {
	u32 magic;
	u32 counter;
	u32 start;
	u32 end;
	u32 last_sec;
	u32 boots;
};

/* The multiboot header, in the first 8 KiB of the file (see hluvm.ld). */
__attribute__((section(".multiboot"), used, aligned(4)))
static const u32 mb_header[3] = {
	MB_MAGIC, MB_FLAGS, -(MB_MAGIC + MB_FLAGS),
};

void hluvm_main(u32 magic, const u32 *info);

asm(".globl _start\n"
    "_start:\n"
    "	mov $" "0x3ff000" ", %esp\n"
    "	push %ebx\n"
    "	push %eax\n"
    "	call hluvm_main\n"
    "1:	hlt\n"
    "	jmp 1b\n");

static inline void outb(unsigned short port, u8 val)
{
	asm volatile("outb %0, %1" : : "a"(val), "Nd"(port));
}

static inline u8 inb(unsigned short port)
{
	u8 val;

	asm volatile("inb %1, %0" : "=a"(val) : "Nd"(port));
	return val;
}

static void putc(char c)
{
	while (!(inb(COM1 + 5) & 0x20))
		;
	outb(COM1, c);
}

static void puts(const char *s)
{
	while (*s) {
		if (*s == '\n')
			putc('\r');
		putc(*s++);
	}
}

static void putu(u32 v)
{
	char buf[11];
	int i = 10;

	buf[i] = 0;
	do {
		buf[--i] = '0' + v % 10;
		v /= 10;
	} while (v);
	puts(buf + i);
}

static void putx(u32 v)
{
	int i;

	puts("0x");
	for (i = 28; i >= 0; i -= 4)
		putc("0123456789abcdef"[(v >> i) & 15]);
}

static u8 cmos(u8 reg)
{
	outb(0x70, reg);
	return inb(0x71);
}

/* Seconds since midnight by the RTC (QEMU's follows the host's clock). */
static u32 rtc_seconds(void)
{
	u32 s, m, h;
	int bcd;

	while (cmos(0x0a) & 0x80)
		;
	s = cmos(0x00);
	m = cmos(0x02);
	h = cmos(0x04);
	bcd = !(cmos(0x0b) & 0x04);
	if (bcd) {
		s = (s & 15) + (s >> 4) * 10;
		m = (m & 15) + (m >> 4) * 10;
		h = (h & 15) + ((h & 0x70) >> 4) * 10;
	}
	return h * 3600 + m * 60 + s;
}

static volatile u32 *word_of(u32 page)
{
	/* A different word of each page, so that all offsets get written. */
	return (volatile u32 *)(page + ((page >> 12) & 0x3ff) * 4);
}

static u32 pattern(u32 counter, u32 page)
{
	u32 w = (page ^ counter * 0x9e3779b9u) * 2654435761u;

	w ^= w >> 15;
	w *= 0x2c1b3c6du;
	return w ^ w >> 12;
}

static u32 mix(u32 sum, u32 w)
{
	return sum * 31 + w;
}

/* Write the counter's pattern and return its checksum. */
static u32 fill(const struct state *st)
{
	u32 page, w, sum = 0;

	for (page = st->start; page < st->end; page += 4096) {
		w = pattern(st->counter, page);
		*word_of(page) = w;
		sum = mix(sum, w);
	}
	return sum;
}

/* Check the region against the counter's pattern: its checksum, bad words. */
static u32 check(const struct state *st, u32 *bad)
{
	u32 page, w, sum = 0;

	*bad = 0;
	for (page = st->start; page < st->end; page += 4096) {
		w = *word_of(page);
		*bad += w != pattern(st->counter, page);
		sum = mix(sum, w);
	}
	return sum;
}

static void report(const struct state *st)
{
	u32 bad, sum = check(st, &bad);

	puts("HLUVM verify counter=");
	putu(st->counter);
	puts(" sum=");
	putx(sum);
	puts(" bad=");
	putu(bad);
	puts(" region=");
	putu((st->end - st->start) >> 20);
	puts("MiB\n");
}

void hluvm_main(u32 magic, const u32 *info)
{
	struct state *st = (struct state *)STATE_ADDR;
	u32 sec, gap, sum, bad, i;

	if (st->magic == STATE_MAGIC) {
		st->boots++;
		puts("HLUVM boot resume\n");
		report(st);
	} else {
		st->counter = 0;
		st->boots = 0;
		st->start = PATTERN_START;
		/* mem_upper: KiB of RAM from 1 MiB on, when flags bit 0 says so. */
		st->end = 0x1000000;
		if (magic == MB_BOOT_MAGIC && (info[0] & 1))
			st->end = (0x100000 + info[2] * 1024) & ~0xfffu;
		fill(st);
		st->magic = STATE_MAGIC;
		puts("HLUVM boot fresh\n");
	}
	st->last_sec = rtc_seconds();
	for (;;) {
		sec = rtc_seconds();
		if (sec == st->last_sec) {
			for (i = 0; i < 10000; i++)
				asm volatile("pause");
			continue;
		}
		gap = (sec + 86400 - st->last_sec) % 86400;
		if (gap >= RESUME_GAP) {
			/* The line first, the check (a walk of all RAM) after it. */
			puts("HLUVM resumed gap=");
			putu(gap);
			puts("\n");
			report(st);
		}
		st->last_sec = sec;
		/* The last tick's pattern must still be there. */
		check(st, &bad);
		st->counter++;
		sum = fill(st);
		puts("HLUVM tick counter=");
		putu(st->counter);
		puts(" sum=");
		putx(sum);
		puts(" bad=");
		putu(bad);
		puts("\n");
	}
}
