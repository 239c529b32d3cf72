/* health.h - device health metrics read from /proc and /sys, as plain C
 * structs (the seed's section 5 fields).  No jansson and nothing outside
 * libc: the static device agent (agent/) links this file and serializes
 * the structs with its own writer; the server may link it too.
 *
 * Counters are cumulative as the kernel gives them; percentages need two
 * readings, so the caller keeps one struct coll_health_state per target
 * and passes it to every read (the first reading has no percentages:
 * have_overall / have_cpu are 0).  Every read is bounded: fixed arrays,
 * files read into fixed buffers (the readers are procfs.h's). */
#ifndef COLL_HEALTH_H
#define COLL_HEALTH_H

#include <stdint.h>

#include "procfs.h"

#define COLL_HEALTH_MAX_CORES 128
#define COLL_HEALTH_MAX_IFACES 32
#define COLL_HEALTH_MAX_DISKS 8
#define COLL_HEALTH_MAX_THREADS 64

struct coll_health_state {
	int have_prev;
	struct coll_cpu_times all, core[COLL_HEALTH_MAX_CORES];
	int proc_pid;            /* the process the previous process reading was of */
	uint64_t proc_ticks;
	double proc_wall;        /* CLOCK_MONOTONIC seconds */
	int warned_freq, warned_thermal, warned_fd;
};

struct coll_health_system {
	int have_overall;        /* 0 in the first reading */
	double overall_pct;
	int num_cores;
	double per_core[COLL_HEALTH_MAX_CORES];
	int n_freq;              /* cores with cpufreq, from cpu0 up to the first without */
	double freq_mhz[COLL_HEALTH_MAX_CORES];
	uint64_t mem_total_kb, mem_available_kb, mem_buffers_kb, mem_cached_kb, swap_total_kb;
	uint64_t mem_used_kb, swap_used_kb;
	double mem_used_pct;
	double load_1m, load_5m, load_15m;
	int have_temp;
	int temp_c;
	uint64_t uptime_sec, context_switches, interrupts, procs_running, procs_blocked;
};

struct coll_health_process {
	int pid;
	char comm[64];
	char state;
	int have_cpu;            /* 0 in the first reading of this pid */
	double cpu_pct;          /* per-core scale: may exceed 100 */
	uint64_t rss_kb, vsize_kb, threads, minor_faults, major_faults;
	int64_t fds;             /* -1 when /proc/PID/fd is unreadable */
	uint64_t voluntary_csw, involuntary_csw;
	int64_t oom_score;
	uint64_t start_time;     /* field 22 of /proc/PID/stat */
};

struct coll_health_iface {
	char name[32];
	uint64_t rx_bytes, rx_packets, rx_errors, rx_drops, tx_bytes, tx_packets, tx_errors;
};

struct coll_health_network {
	int n;
	struct coll_health_iface ifs[COLL_HEALTH_MAX_IFACES];
};

struct coll_health_disk_dev {
	char name[32];
	uint64_t reads, read_bytes, writes, write_bytes, read_ms, write_ms;
};

struct coll_health_disk {
	int n;
	struct coll_health_disk_dev devs[COLL_HEALTH_MAX_DISKS];
	int have_proc;           /* /proc/PID/io was readable */
	uint64_t proc_read_bytes, proc_write_bytes, proc_syscr, proc_syscw;
};

struct coll_health_thread {
	int tid;
	char comm[64];
	char state;
	uint64_t ticks;          /* utime + stime */
};

struct coll_health_threads {
	int pid;
	int64_t clk_tck;
	int n;
	struct coll_health_thread t[COLL_HEALTH_MAX_THREADS];
};

/* Each returns 0, or -1 when its main source cannot be read.  warn, when
 * not NULL, receives one line per missing optional source, once per state. */
typedef void (*coll_health_warn_fn)(const char *msg);
int coll_health_system(struct coll_health_state *st, struct coll_health_system *out,
		       coll_health_warn_fn warn);
int coll_health_process(struct coll_health_state *st, int pid, struct coll_health_process *out,
			coll_health_warn_fn warn);
int coll_health_network(struct coll_health_network *out);
int coll_health_disk(int pid, struct coll_health_disk *out);
int coll_health_threads(int pid, struct coll_health_threads *out);

#endif
