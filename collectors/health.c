/* health.c - the health metrics of health.h from /proc and /sys.
 *
 * Each source is read whole into a fixed buffer by procfs.c's readers (a
 * short read of a huge /proc file just loses its tail, it never grows
 * memory) and parsed with strtoull on lines.  No state outside the
 * caller's, so it is safe from several threads. */
#include "health.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double mono_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ */
/* system                                                               */

static double pct(struct coll_cpu_times now, struct coll_cpu_times prev)
{
	if (now.total <= prev.total)
		return 0.0;
	return 100.0 * (double)(now.busy - prev.busy) / (double)(now.total - prev.total);
}

static void system_cpu(struct coll_health_state *st, struct coll_health_system *out,
		       const char *stat)
{
	struct coll_cpu_times all = {0, 0}, core[COLL_HEALTH_MAX_CORES];
	int have_all = 0;
	memset(core, 0, sizeof core);
	for (const char *p = stat; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "cpu ", 4) == 0) {
			have_all = coll_cpu_line(p, &all) == 0;
		} else if (strncmp(p, "cpu", 3) == 0 && p[3] >= '0' && p[3] <= '9') {
			int n = atoi(p + 3);
			if (n >= 0 && n < COLL_HEALTH_MAX_CORES && coll_cpu_line(p, &core[n]) == 0 &&
			    n + 1 > out->num_cores)
				out->num_cores = n + 1;
		} else if (strncmp(p, "ctxt ", 5) == 0) {
			out->context_switches = strtoull(p + 5, NULL, 10);
		} else if (strncmp(p, "intr ", 5) == 0) {
			out->interrupts = strtoull(p + 5, NULL, 10);
		} else if (strncmp(p, "procs_running ", 14) == 0) {
			out->procs_running = strtoull(p + 14, NULL, 10);
		} else if (strncmp(p, "procs_blocked ", 14) == 0) {
			out->procs_blocked = strtoull(p + 14, NULL, 10);
		}
	}
	if (st->have_prev && have_all) {
		out->have_overall = 1;
		out->overall_pct = pct(all, st->all);
		for (int i = 0; i < out->num_cores; i++)
			out->per_core[i] = pct(core[i], st->core[i]);
	}
	st->all = all;
	memcpy(st->core, core, sizeof core);
	st->have_prev = have_all;
}

static void system_mem(struct coll_health_system *out)
{
	char buf[8192];
	uint64_t freekb = 0, swapfree = 0;
	if (coll_read_text("/proc/meminfo", buf, sizeof buf) < 0)
		return;
	coll_key_u64(buf, "MemTotal", &out->mem_total_kb);
	if (!coll_key_u64(buf, "MemAvailable", &out->mem_available_kb) && coll_key_u64(buf, "MemFree", &freekb))
		out->mem_available_kb = freekb;
	coll_key_u64(buf, "Buffers", &out->mem_buffers_kb);
	coll_key_u64(buf, "Cached", &out->mem_cached_kb);
	coll_key_u64(buf, "SwapTotal", &out->swap_total_kb);
	coll_key_u64(buf, "SwapFree", &swapfree);
	out->mem_used_kb = out->mem_total_kb > out->mem_available_kb ?
				   out->mem_total_kb - out->mem_available_kb : 0;
	out->swap_used_kb = out->swap_total_kb > swapfree ? out->swap_total_kb - swapfree : 0;
	out->mem_used_pct = out->mem_total_kb ? 100.0 * (double)out->mem_used_kb /
							(double)out->mem_total_kb : 0.0;
}

int coll_health_system(struct coll_health_state *st, struct coll_health_system *out,
		       coll_health_warn_fn warn)
{
	enum { STAT_CAP = 65536 };  /* /proc/stat's intr line is long on big machines */
	char buf[256], path[96], *stat = malloc(STAT_CAP);
	memset(out, 0, sizeof *out);
	if (!stat || coll_read_text("/proc/stat", stat, STAT_CAP) < 0) {
		free(stat);
		return -1;
	}
	system_cpu(st, out, stat);
	free(stat);
	system_mem(out);
	if (coll_read_text("/proc/loadavg", buf, sizeof buf) > 0) {
		char *e = buf;
		out->load_1m = strtod(e, &e);
		out->load_5m = strtod(e, &e);
		out->load_15m = strtod(e, &e);
	}
	if (coll_read_text("/proc/uptime", buf, sizeof buf) > 0)
		out->uptime_sec = strtoull(buf, NULL, 10);
	for (int i = 0; i < out->num_cores; i++) {
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", i);
		if (coll_read_text(path, buf, sizeof buf) <= 0)
			break;
		out->freq_mhz[out->n_freq++] = (double)strtoull(buf, NULL, 10) / 1000.0;
	}
	if (out->n_freq == 0 && warn && !st->warned_freq++)
		warn("no cpufreq in /sys/devices/system/cpu/cpu0/cpufreq: freq_mhz is left out");
	if (coll_read_text("/sys/class/thermal/thermal_zone0/temp", buf, sizeof buf) > 0) {
		out->have_temp = 1;
		out->temp_c = (int)(strtoll(buf, NULL, 10) / 1000);
	} else if (warn && !st->warned_thermal++) {
		warn("no /sys/class/thermal/thermal_zone0/temp: temp_c is left out");
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* process                                                              */

static int64_t count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int64_t n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

int coll_health_process(struct coll_health_state *st, int pid, struct coll_health_process *out,
			coll_health_warn_fn warn)
{
	char path[64], buf[4096];
	struct coll_pid_stat ps;
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	memset(out, 0, sizeof *out);
	out->pid = pid;
	if (coll_pid_stat(pid, &ps) < 0)
		return -1;
	memcpy(out->comm, ps.comm, sizeof out->comm);
	out->state = ps.state;
	out->minor_faults = ps.minor_faults;
	out->major_faults = ps.major_faults;
	out->threads = ps.threads;
	out->start_time = ps.start_time;
	out->vsize_kb = ps.vsize / 1024;
	out->rss_kb = ps.rss_pages * (uint64_t)(page > 0 ? page : 4096) / 1024;
	uint64_t ticks = ps.utime + ps.stime;
	double now = mono_seconds();
	if (st->proc_pid == pid && now > st->proc_wall && tck > 0 && ticks >= st->proc_ticks) {
		out->have_cpu = 1;
		out->cpu_pct = 100.0 * (double)(ticks - st->proc_ticks) / ((now - st->proc_wall) * (double)tck);
	}
	st->proc_pid = pid;
	st->proc_ticks = ticks;
	st->proc_wall = now;
	snprintf(path, sizeof path, "/proc/%d/fd", pid);
	out->fds = count_dir(path);
	if (out->fds < 0 && warn && !st->warned_fd++)
		warn("cannot read /proc/PID/fd (another user's process?): fds is -1");
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	if (coll_read_text(path, buf, sizeof buf) > 0) {
		coll_key_u64(buf, "voluntary_ctxt_switches", &out->voluntary_csw);
		coll_key_u64(buf, "nonvoluntary_ctxt_switches", &out->involuntary_csw);
	}
	snprintf(path, sizeof path, "/proc/%d/oom_score", pid);
	if (coll_read_text(path, buf, 64) > 0)
		out->oom_score = strtoll(buf, NULL, 10);
	return 0;
}

/* ------------------------------------------------------------------ */
/* network, disk, threads                                               */

int coll_health_network(struct coll_health_network *out)
{
	enum { CAP = 32768 };
	char *buf = malloc(CAP);
	memset(out, 0, sizeof *out);
	if (!buf || coll_read_text("/proc/net/dev", buf, CAP) < 0) {
		free(buf);
		return -1;
	}
	for (char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char *colon = strchr(p, ':'), *nl = strchr(p, '\n');
		if (!colon || (nl && colon > nl) || out->n >= COLL_HEALTH_MAX_IFACES)
			continue;
		char *name = p;
		while (*name == ' ')
			name++;
		size_t nlen = (size_t)(colon - name);
		if (nlen == 0 || nlen >= sizeof out->ifs[0].name || (nlen == 2 && !strncmp(name, "lo", 2)))
			continue;
		unsigned long long v[16] = {0};
		if (coll_u64s(colon + 1, v, 11) < 11)
			continue;
		struct coll_health_iface *i = &out->ifs[out->n++];
		memcpy(i->name, name, nlen);
		i->name[nlen] = '\0';
		i->rx_bytes = v[0];
		i->rx_packets = v[1];
		i->rx_errors = v[2];
		i->rx_drops = v[3];
		i->tx_bytes = v[8];
		i->tx_packets = v[9];
		i->tx_errors = v[10];
	}
	free(buf);
	return 0;
}

static int skip_disk(const struct coll_health_disk *out, const char *name)
{
	if (!strncmp(name, "loop", 4) || !strncmp(name, "ram", 3) || !strncmp(name, "zram", 4))
		return 1;
	for (int i = 0; i < out->n; i++)  /* a partition of a disk already listed */
		if (!strncmp(name, out->devs[i].name, strlen(out->devs[i].name)))
			return 1;
	return 0;
}

int coll_health_disk(int pid, struct coll_health_disk *out)
{
	enum { CAP = 32768 };
	char path[64], io[1024], *buf = malloc(CAP);
	memset(out, 0, sizeof *out);
	if (!buf || coll_read_text("/proc/diskstats", buf, CAP) < 0) {
		free(buf);
		return -1;
	}
	for (char *p = buf; p && *p && out->n < COLL_HEALTH_MAX_DISKS;
	     p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char name[32];
		unsigned long long v[11] = {0}, majmin[2];
		const char *q = p;
		size_t nl = 0;
		if (coll_u64s(q, majmin, 2) < 2)
			continue;
		while (*q == ' ')
			q++;
		for (int f = 0; f < 2; f++) {      /* past major and minor */
			while (*q >= '0' && *q <= '9')
				q++;
			while (*q == ' ')
				q++;
		}
		while (q[nl] && q[nl] != ' ' && q[nl] != '\n' && nl + 1 < sizeof name)
			nl++;
		memcpy(name, q, nl);
		name[nl] = '\0';
		if (nl == 0 || coll_u64s(q + nl, v, 8) < 8)
			continue;
		if (skip_disk(out, name) || (v[0] == 0 && v[4] == 0))
			continue;
		struct coll_health_disk_dev *d = &out->devs[out->n++];
		snprintf(d->name, sizeof d->name, "%s", name);
		d->reads = v[0];
		d->read_bytes = v[2] * 512;
		d->read_ms = v[3];
		d->writes = v[4];
		d->write_bytes = v[6] * 512;
		d->write_ms = v[7];
	}
	free(buf);
	if (pid > 0) {
		snprintf(path, sizeof path, "/proc/%d/io", pid);
		if (coll_read_text(path, io, sizeof io) > 0) {
			out->have_proc = 1;
			coll_key_u64(io, "read_bytes", &out->proc_read_bytes);
			coll_key_u64(io, "write_bytes", &out->proc_write_bytes);
			coll_key_u64(io, "syscr", &out->proc_syscr);
			coll_key_u64(io, "syscw", &out->proc_syscw);
		}
	}
	return 0;
}

int coll_health_threads(int pid, struct coll_health_threads *out)
{
	char path[64];
	struct dirent *e;
	memset(out, 0, sizeof *out);
	out->pid = pid;
	out->clk_tck = sysconf(_SC_CLK_TCK);
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *d = pid > 0 ? opendir(path) : NULL;
	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL && out->n < COLL_HEALTH_MAX_THREADS) {
		char tpath[96];
		struct coll_pid_stat ps;
		struct coll_health_thread *t = &out->t[out->n];
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		int tid = atoi(e->d_name);
		snprintf(tpath, sizeof tpath, "/proc/%d/task/%d/stat", pid, tid);
		if (coll_pid_stat_read(tpath, &ps) < 0)
			continue;
		memcpy(t->comm, ps.comm, sizeof t->comm);
		t->state = ps.state;
		t->tid = tid;
		t->ticks = ps.utime + ps.stime;
		out->n++;
	}
	closedir(d);
	return 0;
}
