/* proc.c - what the agent says about the machine and its processes: the
 * platform, whether the target is still the same process (pid + start
 * time), the process list, a pid's info and the maps frame (extension
 * 2).  The reading of /proc is collectors/procfs.c's; this file only
 * writes what it returns as the seed's JSON. */
#include "agent.h"
#include "collectors/agentlink/frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

int target_alive(int pid, uint64_t start_time)
{
	uint64_t st;
	char state = 0;
	if (coll_proc_stat_identity(pid, &st, NULL, 0, &state) < 0)
		return 0;
	return st == start_time && state != 'Z' && state != 'X';
}

/* A positive integer file (a sysctl): its value, or 0. */
static int read_positive(const char *path)
{
	char buf[32];
	return coll_read_text(path, buf, sizeof buf) > 0 && atoi(buf) > 0 ? atoi(buf) : 0;
}

/* The kernel lowers perf_event_max_sample_rate when sampling interrupts
 * take too long, so it is read again each time. */
int max_sample_rate(void)
{
	int r = read_positive("/proc/sys/kernel/perf_event_max_sample_rate");
	if (r > 0)
		A.max_sample_rate = r;
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
	if (coll_read_text("/proc/sys/kernel/perf_event_paranoid", buf, sizeof buf) > 0)
		A.paranoid = atoi(buf);
	if (A.paranoid > 1 && geteuid() != 0)
		agent_log("perf_event_paranoid is %d: perf may not profile other users' processes", A.paranoid);
	A.max_sample_rate = 100000;
	max_sample_rate();
}

/* ------------------------------------------------------------------ */
/* processes                                                            */

static void write_names(struct jw *w, const char *comm, const char *cmdline)
{
	jw_key(w, "comm");
	jw_path(w, comm, strlen(comm));
	jw_key(w, "cmdline");
	jw_path(w, cmdline, strlen(cmdline));
}

/* The seed's list_processes: two snapshots 500 ms apart, cpu as a share
 * of the whole machine, highest first, at most 200. */
void write_processes(struct jw *w)
{
	enum { MAX_LIST = 200 };
	struct coll_proc_entry *e = calloc(MAX_LIST, sizeof *e);
	int n = e ? coll_proc_top(e, MAX_LIST, 500) : -1;
	jw_key(w, "processes");
	jw_arr(w);
	for (int i = 0; i < n; i++) {
		jw_obj(w);
		jw_kint(w, "pid", e[i].pid);
		write_names(w, e[i].comm, e[i].cmdline);
		jw_kreal(w, "cpu", e[i].cpu_pct, 1);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	/* cpu above is a share of all CPUs (the seed's): their count lets a
	 * server give it per CPU (an extra field, which seed servers skip). */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus > 0)
		jw_kint(w, "cpus", cpus);
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
	if (coll_proc_cmdline(pid, cmd, sizeof cmd) < 0)
		cmd[0] = '\0';
	jw_key(w, "info");
	jw_obj(w);
	write_names(w, comm, cmd);
	jw_kint(w, "start_time", (int64_t)st);
	jw_obj_end(w);
}

/* ------------------------------------------------------------------ */
/* maps                                                                 */

uint64_t maps_hash(int pid)
{
	char *buf = coll_maps_read(pid), *cur = buf;
	struct coll_map m;
	uint64_t h = 1469598103934665603ull;  /* FNV-1a of the executable lines */
	if (!buf)
		return 0;
	while (coll_maps_next(&cur, &m))
		for (const char *p = m.line; *p; p++)
			h = (h ^ (uint8_t)*p) * 1099511628211ull;
	free(buf);
	return h;
}

static void write_map(struct jw *w, int pid, const struct coll_map *m)
{
	char hex[130];
	jw_obj(w);
	jw_kstr(w, "start", m->start);
	jw_kstr(w, "end", m->end);
	jw_kstr(w, "offset", m->offset);
	jw_kstr(w, "perms", m->perms);
	jw_kint(w, "inode", (int64_t)m->inode);
	jw_key(w, "path");
	jw_path(w, m->path, m->path_len);
	jw_key(w, "build_id");
	jw_cstr(w, coll_map_build_id(pid, m, hex, sizeof hex) == 0 ? hex : NULL);
	jw_kstr(w, "dev", m->dev);
	jw_obj_end(w);
}

/* The maps frame of docs/agent-protocol.md (extension 2) into w: 0, or
 * -1 when the process's maps cannot be read. */
int write_maps_frame(struct jw *w, int pid, uint64_t start_time, uint32_t seq)
{
	enum { MAX_MAPS = AGENT_MAPS_ENTRIES, MAX_FRAME = AGENT_MAPS_MAX };
	char *buf = coll_maps_read(pid), *cur = buf;
	struct coll_map m;
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
	while (coll_maps_next(&cur, &m)) {
		if (n >= MAX_MAPS || w->len > MAX_FRAME - 8192) {
			truncated = 1;
			break;
		}
		write_map(w, pid, &m);
		n++;
	}
	jw_arr_end(w);
	if (truncated)
		jw_kbool(w, "truncated", 1);
	jw_obj_end(w);
	free(buf);
	return 0;
}
