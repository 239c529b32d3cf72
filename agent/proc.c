/* proc.c - what the agent reads of /proc about processes: the platform,
 * whether the target is still the same process (pid + start time), the
 * process list, and the executable mappings with their build-ids (the
 * maps extension).  Every file is read into a bounded buffer. */
#include "agent.h"
#include "collectors/health.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

int read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	if (fd < 0)
		return -1;
	while (n + 1 < cap) {
		ssize_t k = read(fd, buf + n, cap - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	buf[n] = '\0';
	return (int)n;
}

int target_alive(int pid, uint64_t start_time)
{
	uint64_t st;
	char state = 0;
	if (coll_proc_stat_identity(pid, &st, NULL, 0, &state) < 0)
		return 0;
	return st == start_time && state != 'Z' && state != 'X';
}

/* The kernel lowers perf_event_max_sample_rate when sampling interrupts
 * take too long, so it is read again each time. */
int max_sample_rate(void)
{
	char buf[32];
	if (read_small("/proc/sys/kernel/perf_event_max_sample_rate", buf, sizeof buf) > 0 && atoi(buf) > 0)
		A.max_sample_rate = atoi(buf);
	return A.max_sample_rate;
}

void platform_detect(void)
{
	struct utsname u;
	char buf[64];
	if (uname(&u) == 0) {
		snprintf(A.arch, sizeof A.arch, "%s", u.machine);
		snprintf(A.kernel, sizeof A.kernel, "%s", u.release);
	}
	if (perf_version(A.perf, A.perf_version, sizeof A.perf_version) < 0)
		snprintf(A.perf_version, sizeof A.perf_version, "unknown");
	A.paranoid = -1;
	if (read_small("/proc/sys/kernel/perf_event_paranoid", buf, sizeof buf) > 0)
		A.paranoid = atoi(buf);
	if (A.paranoid > 1 && geteuid() != 0)
		agent_log("perf_event_paranoid is %d: perf may not profile other users' processes", A.paranoid);
	A.max_sample_rate = 100000;
	max_sample_rate();
}

/* ------------------------------------------------------------------ */
/* processes                                                            */

static int read_cmdline(int pid, char *out, size_t cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
	int n = read_small(path, out, cap);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (out[i] == '\0')
			out[i] = ' ';
	while (n > 0 && out[n - 1] == ' ')
		out[--n] = '\0';
	return n;
}

static uint64_t proc_ticks(int pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	if (read_small(path, buf, sizeof buf) <= 0)
		return 0;
	char *p = strrchr(buf, ')');
	if (!p || !p[1] || !p[2])
		return 0;
	p += 3;  /* past ") " and the state */
	unsigned long long f[16] = {0};
	for (int i = 4; i <= 15; i++) {  /* fields 4..15: utime is 14, stime 15 */
		char *e;
		while (*p == ' ')
			p++;
		f[i] = strtoull(p, &e, 10);
		if (e == p)
			return 0;
		p = e;
	}
	return f[14] + f[15];
}

static uint64_t total_ticks(void)
{
	char buf[512];
	if (read_small("/proc/stat", buf, sizeof buf) <= 0 || strncmp(buf, "cpu ", 4) != 0)
		return 0;
	uint64_t t = 0;
	char *p = buf + 4;
	for (int i = 0; i < 8; i++) {
		char *e;
		t += strtoull(p, &e, 10);
		p = e;
	}
	return t;
}

struct proc_ent {
	int pid;
	uint64_t t0;
	double cpu;
};

static int by_cpu(const void *a, const void *b)
{
	const struct proc_ent *x = a, *y = b;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? 1 : -1;
	return x->pid - y->pid;
}

/* The seed's list_processes: two snapshots 500 ms apart, cpu as a share
 * of the whole machine, highest first, at most 200. */
void write_processes(struct jw *w)
{
	enum { MAX_SCAN = 4096, MAX_LIST = 200 };
	struct proc_ent *e = calloc(MAX_SCAN, sizeof *e);
	int n = 0;
	DIR *d = opendir("/proc");
	struct dirent *de;
	jw_key(w, "processes");
	jw_arr(w);
	if (!e || !d) {
		if (d)
			closedir(d);
		free(e);
		jw_arr_end(w);
		return;
	}
	while ((de = readdir(d)) != NULL && n < MAX_SCAN) {
		int pid = atoi(de->d_name);
		if (pid > 0) {
			e[n].pid = pid;
			e[n].t0 = proc_ticks(pid);
			n++;
		}
	}
	closedir(d);
	uint64_t tot0 = total_ticks();
	sleep_ms(500);
	uint64_t dt = total_ticks() - tot0;
	for (int i = 0; i < n; i++) {
		uint64_t t1 = proc_ticks(e[i].pid);
		e[i].cpu = dt > 0 && t1 >= e[i].t0 ? 100.0 * (double)(t1 - e[i].t0) / (double)dt : 0.0;
	}
	qsort(e, (size_t)n, sizeof *e, by_cpu);
	int shown = 0;
	for (int i = 0; i < n && shown < MAX_LIST; i++) {
		char comm[64], cmd[256];
		uint64_t st;
		if (coll_proc_stat_identity(e[i].pid, &st, comm, sizeof comm, NULL) < 0)
			continue;
		if (read_cmdline(e[i].pid, cmd, sizeof cmd) < 0)
			cmd[0] = '\0';
		jw_obj(w);
		jw_kint(w, "pid", e[i].pid);
		jw_key(w, "comm");
		jw_path(w, comm, strlen(comm));
		jw_key(w, "cmdline");
		jw_path(w, cmd, strlen(cmd));
		jw_kreal(w, "cpu", e[i].cpu, 1);
		jw_obj_end(w);
		shown++;
	}
	jw_arr_end(w);
	free(e);
}

void write_pid_info(struct jw *w, int pid)
{
	char comm[64], cmd[256];
	uint64_t st;
	int exists = coll_proc_stat_identity(pid, &st, comm, sizeof comm, NULL) == 0;
	jw_kbool(w, "exists", exists);
	jw_kint(w, "pid", pid);
	if (!exists)
		return;
	if (read_cmdline(pid, cmd, sizeof cmd) < 0)
		cmd[0] = '\0';
	jw_key(w, "info");
	jw_obj(w);
	jw_key(w, "comm");
	jw_path(w, comm, strlen(comm));
	jw_key(w, "cmdline");
	jw_path(w, cmd, strlen(cmd));
	jw_kint(w, "start_time", (int64_t)st);
	jw_obj_end(w);
}

/* ------------------------------------------------------------------ */
/* build-ids                                                            */

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

static int rd_at(int fd, void *buf, size_t n, uint64_t off)
{
	return pread(fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -1;
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
			hex_encode(p + name_end, dsz, hex);
			return 0;
		}
		off = desc_end;
	}
	return -1;
}

/* The GNU build-id of the ELF on fd, from its PT_NOTE segments. */
int elf_build_id(int fd, char *hex, size_t cap)
{
	uint8_t eh[64];
	if (rd_at(fd, eh, sizeof eh, 0) < 0 || memcmp(eh, ELFMAG, SELFMAG) != 0)
		return -1;
	int is64 = eh[EI_CLASS] == ELFCLASS64, be = eh[EI_DATA] == ELFDATA2MSB;
	uint64_t phoff = is64 ? rd64(eh + 32, be) : rd32(eh + 28, be);
	unsigned phentsize = is64 ? (unsigned)(eh[54 + (be ? 0 : 1)] << 8 | eh[54 + (be ? 1 : 0)])
				  : (unsigned)(eh[42 + (be ? 0 : 1)] << 8 | eh[42 + (be ? 1 : 0)]);
	unsigned phnum = is64 ? (unsigned)(eh[56 + (be ? 0 : 1)] << 8 | eh[56 + (be ? 1 : 0)])
			      : (unsigned)(eh[44 + (be ? 0 : 1)] << 8 | eh[44 + (be ? 1 : 0)]);
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

/* ------------------------------------------------------------------ */
/* maps                                                                 */

struct map_line {
	char start[20], end[20], perms[5], offset[20], dev[12];
	unsigned long long inode;
	const char *path;
	size_t path_len;
};

/* The next blank-separated token of *p, copied into out (cap bytes): 0,
 * or -1 when it is missing or does not fit. */
static int token(const char **p, char stop, char *out, size_t cap)
{
	size_t n = 0;
	while (**p == ' ')
		(*p)++;
	while ((*p)[n] && (*p)[n] != ' ' && (*p)[n] != stop)
		n++;
	if (n == 0 || n >= cap)
		return -1;
	memcpy(out, *p, n);
	out[n] = '\0';
	*p += n;
	if (**p == stop)
		(*p)++;
	return 0;
}

/* "start-end perms offset dev inode   path" */
static int parse_map_line(char *line, struct map_line *m)
{
	const char *p = line;
	char inode[24];
	if (token(&p, '-', m->start, sizeof m->start) < 0 || token(&p, ' ', m->end, sizeof m->end) < 0 ||
	    token(&p, ' ', m->perms, sizeof m->perms) < 0 ||
	    token(&p, ' ', m->offset, sizeof m->offset) < 0 || token(&p, ' ', m->dev, sizeof m->dev) < 0 ||
	    token(&p, ' ', inode, sizeof inode) < 0)
		return -1;
	m->inode = strtoull(inode, NULL, 10);
	while (*p == ' ')
		p++;
	m->path = p;
	m->path_len = strlen(p);
	return 0;
}

/* The whole of /proc/PID/maps, NUL-terminated (caller frees), at most 8 MB. */
static char *read_maps(int pid)
{
	char path[64];
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	for (;;) {
		if (n + 1 >= cap) {
			if (cap >= 8u << 20)
				break;
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		ssize_t k = read(fd, buf + n, cap - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	buf[n] = '\0';
	return buf;
}

static const char *strip_zero(const char *s)
{
	while (s[0] == '0' && s[1])
		s++;
	return s;
}

uint64_t maps_hash(int pid)
{
	char *buf = read_maps(pid);
	uint64_t h = 1469598103934665603ull;
	if (!buf)
		return 0;
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct map_line m;
		if (parse_map_line(line, &m) < 0 || !strchr(m.perms, 'x'))
			continue;
		for (const char *p = line; *p; p++)
			h = (h ^ (uint8_t)*p) * 1099511628211ull;
	}
	free(buf);
	return h;
}

static void write_build_id(struct jw *w, int pid, const struct map_line *m)
{
	char path[4200], hex[130];
	int fd = -1;
	if (m->inode != 0) {
		/* map_files names the very file mapped, deleted or replaced since. */
		snprintf(path, sizeof path, "/proc/%d/map_files/%s-%s", pid, strip_zero(m->start),
			 strip_zero(m->end));
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && m->path[0] == '/' && m->path_len < 4000) {
			snprintf(path, sizeof path, "/proc/%d/root%s", pid, m->path);
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
	}
	if (fd >= 0 && elf_build_id(fd, hex, sizeof hex) == 0)
		jw_cstr(w, hex);
	else
		jw_null(w);
	if (fd >= 0)
		close(fd);
}

/* The maps frame of docs/agent-protocol.md (extension 2) into w: 0, or
 * -1 when the process's maps cannot be read. */
int write_maps_frame(struct jw *w, int pid, uint64_t start_time, uint32_t seq)
{
	enum { MAX_MAPS = 4096, MAX_FRAME = 1 << 20 };
	char *buf = read_maps(pid), *save = NULL;
	int n = 0, truncated = 0;
	if (!buf)
		return -1;
	jw_obj(w);
	jw_kstr(w, "type", "maps");
	jw_kint(w, "pid", pid);
	jw_kint(w, "start_time", (int64_t)start_time);
	jw_kreal(w, "ts", real_now(), 3);
	jw_kint(w, "seq", seq);
	jw_key(w, "maps");
	jw_arr(w);
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct map_line m;
		if (parse_map_line(line, &m) < 0 || !strchr(m.perms, 'x'))
			continue;
		if (n >= MAX_MAPS || w->len > MAX_FRAME - 8192) {
			truncated = 1;
			break;
		}
		jw_obj(w);
		jw_kstr(w, "start", strip_zero(m.start));
		jw_kstr(w, "end", strip_zero(m.end));
		jw_kstr(w, "offset", strip_zero(m.offset));
		jw_kstr(w, "perms", m.perms);
		jw_kint(w, "inode", (int64_t)m.inode);
		jw_key(w, "path");
		jw_path(w, m.path, m.path_len);
		jw_key(w, "build_id");
		write_build_id(w, pid, &m);
		jw_kstr(w, "dev", m.dev);
		jw_obj_end(w);
		n++;
	}
	jw_arr_end(w);
	if (truncated)
		jw_kbool(w, "truncated", 1);
	jw_obj_end(w);
	free(buf);
	return 0;
}
