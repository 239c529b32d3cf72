/* procfs.c - the /proc readers of procfs.h.
 *
 * Small files are read whole into the caller's fixed buffer, the few
 * large ones (/proc/PID/maps) into a buffer that grows to a stated cap;
 * text is parsed with strtoull on lines (not sscanf: the static agent
 * then links no scanf).  No state outside the caller's, so every
 * function is safe from several threads. */
#include "procfs.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* files and text                                                       */

/* Read fd into buf[0..cap-1) until EOF or full; the length. */
static size_t read_fd(int fd, char *buf, size_t cap, size_t n)
{
	while (n + 1 < cap) {
		ssize_t k = read(fd, buf + n, cap - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	return n;
}

long coll_read_text(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = read_fd(fd, buf, cap, 0);
	close(fd);
	buf[n] = '\0';
	return (long)n;
}

char *coll_read_alloc(const char *path, size_t max, size_t *len)
{
	size_t cap = 65536 < max ? 65536 : max, n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf = fd >= 0 ? malloc(cap) : NULL;
	if (!buf) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (;;) {
		n = read_fd(fd, buf, cap, n);
		if (n + 1 < cap || cap >= max)
			break;          /* EOF, or the cap reached */
		size_t ncap = cap * 2 < max ? cap * 2 : max;
		char *nb = realloc(buf, ncap);
		if (!nb)
			break;
		buf = nb;
		cap = ncap;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

int coll_u64s(const char *p, unsigned long long *v, int n)
{
	int k = 0;
	while (k < n) {
		char *e;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			break;
		v[k++] = strtoull(p, &e, 10);
		p = e;
	}
	return k;
}

int coll_key_u64(const char *text, const char *key, uint64_t *out)
{
	size_t kl = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, kl) == 0 && p[kl] == ':') {
			*out = strtoull(p + kl + 1, NULL, 10);
			return 1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* CPU time                                                             */

int coll_cpu_line(const char *line, struct coll_cpu_times *t)
{
	unsigned long long v[8] = {0};
	const char *p = strchr(line, ' ');
	if (!p || coll_u64s(p, v, 8) < 4)
		return -1;
	uint64_t total = 0;
	for (int i = 0; i < 8; i++)   /* user..steal; guest is inside user */
		total += v[i];
	t->total = total;
	t->busy = total - v[3] - v[4]; /* idle + iowait */
	return 0;
}

int coll_system_cpu_times(struct coll_cpu_times *t)
{
	char buf[512];  /* the "cpu " line comes first */
	if (coll_read_text("/proc/stat", buf, sizeof buf) <= 0 || strncmp(buf, "cpu ", 4) != 0)
		return -1;
	return coll_cpu_line(buf, t);
}

/* ------------------------------------------------------------------ */
/* /proc/PID/stat                                                       */

int coll_pid_stat_read(const char *path, struct coll_pid_stat *out)
{
	char buf[2048];
	unsigned long long f[25] = {0};
	memset(out, 0, sizeof *out);
	if (coll_read_text(path, buf, sizeof buf) <= 0)
		return -1;
	char *open_p = strchr(buf, '('), *close_p = strrchr(buf, ')');
	if (!open_p || !close_p || close_p < open_p)
		return -1;
	size_t n = (size_t)(close_p - open_p - 1);
	if (n >= sizeof out->comm)
		n = sizeof out->comm - 1;
	memcpy(out->comm, open_p + 1, n);
	char *p = close_p + 1;
	while (*p == ' ')
		p++;
	out->state = *p;
	if (*p)
		p++;
	for (int i = 4; i < 25 && *p; i++) {  /* fields 4.. (state is 3) */
		char *e;
		f[i] = strtoull(p, &e, 10);  /* a negative field (nice, priority) wraps */
		if (e == p)
			break;
		p = e;
	}
	out->minor_faults = f[10];
	out->major_faults = f[12];
	out->utime = f[14];
	out->stime = f[15];
	out->threads = f[20];
	out->start_time = f[22];
	out->vsize = f[23];
	out->rss_pages = f[24];
	return 0;
}

int coll_pid_stat(int pid, struct coll_pid_stat *out)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	if (pid <= 0) {
		memset(out, 0, sizeof *out);
		return -1;
	}
	return coll_pid_stat_read(path, out);
}

int coll_proc_stat_identity(int pid, uint64_t *start_time, char *comm, unsigned comm_cap,
			    char *state)
{
	struct coll_pid_stat s;
	if (coll_pid_stat(pid, &s) < 0)
		return -1;
	*start_time = s.start_time;
	if (comm && comm_cap > 0)
		snprintf(comm, comm_cap, "%s", s.comm);
	if (state)
		*state = s.state;
	return 0;
}

int coll_proc_cmdline(int pid, char *out, size_t cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
	long n = coll_read_text(path, out, cap);
	if (n < 0)
		return -1;
	for (long i = 0; i < n; i++)
		if (out[i] == '\0')
			out[i] = ' ';
	while (n > 0 && out[n - 1] == ' ')
		out[--n] = '\0';
	return (int)n;
}

/* ------------------------------------------------------------------ */
/* the process list                                                     */

struct scan_ent {
	int pid;
	uint64_t t0;
	double cpu;
};

static uint64_t pid_ticks(int pid)
{
	struct coll_pid_stat s;
	return coll_pid_stat(pid, &s) == 0 ? s.utime + s.stime : 0;
}

static int by_cpu(const void *a, const void *b)
{
	const struct scan_ent *x = a, *y = b;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? 1 : -1;
	return x->pid - y->pid;
}

/* Every numeric entry of /proc (at most max) with its CPU ticks. */
static int scan_pids(struct scan_ent *e, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;
	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL && n < max) {
		int pid = atoi(de->d_name);
		if (pid > 0) {
			e[n].pid = pid;
			e[n].t0 = pid_ticks(pid);
			n++;
		}
	}
	closedir(d);
	return n;
}

int coll_proc_top(struct coll_proc_entry *out, int max, int window_ms)
{
	enum { MAX_SCAN = 4096 };
	struct scan_ent *e = calloc(MAX_SCAN, sizeof *e);
	struct coll_cpu_times c0 = {0, 0}, c1 = {0, 0};
	struct timespec window = {window_ms / 1000, (long)(window_ms % 1000) * 1000000L};
	int n = e ? scan_pids(e, MAX_SCAN) : -1, shown = 0;
	if (n < 0) {
		free(e);
		return -1;
	}
	coll_system_cpu_times(&c0);
	nanosleep(&window, NULL);
	coll_system_cpu_times(&c1);
	uint64_t dt = c1.total > c0.total ? c1.total - c0.total : 0;
	for (int i = 0; i < n; i++) {
		uint64_t t1 = pid_ticks(e[i].pid);
		e[i].cpu = dt > 0 && t1 >= e[i].t0 ? 100.0 * (double)(t1 - e[i].t0) / (double)dt : 0.0;
	}
	qsort(e, (size_t)n, sizeof *e, by_cpu);
	for (int i = 0; i < n && shown < max; i++) {
		struct coll_proc_entry *o = &out[shown];
		uint64_t st;
		if (coll_proc_stat_identity(e[i].pid, &st, o->comm, sizeof o->comm, NULL) < 0)
			continue;   /* gone since the scan */
		if (coll_proc_cmdline(e[i].pid, o->cmdline, sizeof o->cmdline) < 0)
			o->cmdline[0] = '\0';
		o->pid = e[i].pid;
		o->cpu_pct = e[i].cpu;
		shown++;
	}
	free(e);
	return shown;
}

/* ------------------------------------------------------------------ */
/* /proc/PID/maps                                                       */

char *coll_maps_read(int pid)
{
	char path[64];
	size_t len;
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	return coll_read_alloc(path, 8u << 20, &len);
}

/* The next blank-separated token of *p, copied into out (cap bytes)
 * without leading zeros when strip: 0, or -1 when it is missing or does
 * not fit. */
static int token(const char **p, char stop, char *out, size_t cap, int strip)
{
	size_t n = 0;
	while (**p == ' ')
		(*p)++;
	while ((*p)[n] && (*p)[n] != ' ' && (*p)[n] != stop)
		n++;
	if (n == 0 || n >= cap)
		return -1;
	const char *s = *p;
	*p += n;
	while (strip && n > 1 && s[0] == '0')
		s++, n--;
	memcpy(out, s, n);
	out[n] = '\0';
	if (**p == stop)
		(*p)++;
	return 0;
}

/* "start-end perms offset dev inode   path" */
static int parse_map_line(const char *line, struct coll_map *m)
{
	const char *p = line;
	char inode[24];
	if (token(&p, '-', m->start, sizeof m->start, 1) < 0 ||
	    token(&p, ' ', m->end, sizeof m->end, 1) < 0 ||
	    token(&p, ' ', m->perms, sizeof m->perms, 0) < 0 ||
	    token(&p, ' ', m->offset, sizeof m->offset, 1) < 0 ||
	    token(&p, ' ', m->dev, sizeof m->dev, 0) < 0 ||
	    token(&p, ' ', inode, sizeof inode, 0) < 0)
		return -1;
	m->inode = strtoull(inode, NULL, 10);
	while (*p == ' ')
		p++;
	m->line = line;
	m->path = p;
	m->path_len = strlen(p);
	return 0;
}

int coll_maps_next(char **cursor, struct coll_map *m)
{
	while (*cursor && **cursor) {
		char *line = *cursor, *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		*cursor = nl ? nl + 1 : line + strlen(line);
		if (parse_map_line(line, m) == 0 && strchr(m->perms, 'x'))
			return 1;
	}
	return 0;
}

int coll_map_build_id(int pid, const struct coll_map *m, char *hex, size_t cap)
{
	char path[4200];
	int fd = -1, rc;
	if (m->inode == 0)
		return -1;  /* anonymous, [vdso], ... */
	snprintf(path, sizeof path, "/proc/%d/map_files/%s-%s", pid, m->start, m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && m->path[0] == '/' && m->path_len < 4000) {
		snprintf(path, sizeof path, "/proc/%d/root%s", pid, m->path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return -1;
	rc = coll_elf_build_id(fd, hex, cap);
	close(fd);
	return rc;
}

/* ------------------------------------------------------------------ */
/* ELF build-ids                                                        */

static uint32_t rd32(const uint8_t *p, int be)
{
	return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		  : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static uint64_t rd64(const uint8_t *p, int be)
{
	return be ? (uint64_t)rd32(p, 1) << 32 | rd32(p + 4, 1)
		  : (uint64_t)rd32(p + 4, 0) << 32 | rd32(p, 0);
}

static unsigned rd16(const uint8_t *p, int be)
{
	return be ? (unsigned)(p[0] << 8 | p[1]) : (unsigned)(p[1] << 8 | p[0]);
}

static int rd_at(int fd, void *buf, size_t n, uint64_t off)
{
	return pread(fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

static void to_hex(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

/* An NT_GNU_BUILD_ID in a note area of len bytes (len <= 64 KB). */
static int note_build_id(const uint8_t *p, size_t len, int be, size_t align, char *hex, size_t cap)
{
	size_t off = 0;
	while (off + 12 <= len) {
		uint32_t nsz = rd32(p + off, be), dsz = rd32(p + off + 4, be), type = rd32(p + off + 8, be);
		size_t name_end = off + 12 + ((nsz + align - 1) & ~(align - 1));
		size_t desc_end = name_end + ((dsz + align - 1) & ~(align - 1));
		if (nsz > len || dsz > len || name_end > len || name_end + dsz > len)
			return -1;
		if (type == NT_GNU_BUILD_ID && nsz == 4 && memcmp(p + off + 12, "GNU", 4) == 0 &&
		    dsz > 0 && dsz * 2 + 1 <= cap) {
			to_hex(p + name_end, dsz, hex);
			return 0;
		}
		off = desc_end;
	}
	return -1;
}

int coll_elf_build_id(int fd, char *hex, size_t cap)
{
	uint8_t eh[64];
	if (rd_at(fd, eh, sizeof eh, 0) < 0 || memcmp(eh, ELFMAG, SELFMAG) != 0)
		return -1;
	int is64 = eh[EI_CLASS] == ELFCLASS64, be = eh[EI_DATA] == ELFDATA2MSB;
	uint64_t phoff = is64 ? rd64(eh + 32, be) : rd32(eh + 28, be);
	unsigned phentsize = rd16(eh + (is64 ? 54 : 42), be), phnum = rd16(eh + (is64 ? 56 : 44), be);
	if (phnum > 256 || phentsize < (is64 ? 56u : 32u) || phentsize > 128)
		return -1;
	for (unsigned i = 0; i < phnum; i++) {
		uint8_t ph[128];
		if (rd_at(fd, ph, phentsize, phoff + (uint64_t)i * phentsize) < 0)
			return -1;
		if (rd32(ph, be) != PT_NOTE)
			continue;
		uint64_t off = is64 ? rd64(ph + 8, be) : rd32(ph + 4, be);
		uint64_t sz = is64 ? rd64(ph + 32, be) : rd32(ph + 16, be);
		uint64_t al = is64 ? rd64(ph + 48, be) : rd32(ph + 28, be);
		if (sz == 0 || sz > 65536)
			continue;
		uint8_t *buf = malloc(sz);
		if (!buf)
			return -1;
		int rc = rd_at(fd, buf, sz, off) == 0 ?
				 note_build_id(buf, sz, be, al == 8 ? 8 : 4, hex, cap) : -1;
		free(buf);
		if (rc == 0)
			return 0;
	}
	return -1;
}
