/* metrics.c - the health ticker of one authenticated link: every
 * `interval` seconds (slept in 200 ms steps, so a new config or the link's
 * end is seen quickly) one flag-4 frame per enabled type, in the seed's
 * order: system, process (while profiling or paused), network, disk
 * (opt-in), threads (opt-in, with a pid).  The numbers come from
 * collectors/health.c; this file only writes them as the seed's JSON. */
#include "agent.h"
#include "collectors/health.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static void warn_once(const char *msg)
{
	agent_log("metrics: %s", msg);
}

/* ------------------------------------------------------------------ */
/* the frames, as tables of fields                                      */

/* How one field of a health.h struct is written.  A field may hang on an
 * int of the same struct (aux): a presence flag, or the count of a
 * T_REALS array.  When that int is 0 the key is left out (OMIT) or
 * written as null / an empty array.  T_OBJ ... T_END nest an object
 * (left out whole when aux says so and OMIT is set). */
enum field_type { T_U64, T_I64, T_INT, T_REAL, T_REALS, T_PATH, T_CHAR, T_OBJ, T_END };
enum { NO_AUX = 0xffff, OMIT = 1 };

struct field {
	const char *key;
	uint16_t off, aux;       /* offsets in the struct */
	uint8_t type, decimals, flags;
};

#define FIELD(S, m, key, type) {key, offsetof(S, m), NO_AUX, type, 0, 0}
#define REAL(S, m, key, dec) {key, offsetof(S, m), NO_AUX, T_REAL, dec, 0}
#define IF(S, have, fl, key, m, type, dec) {key, offsetof(S, m), offsetof(S, have), type, dec, fl}
#define OBJ(key) {key, 0, NO_AUX, T_OBJ, 0, 0}
#define OBJ_IF(S, have, key) {key, 0, offsetof(S, have), T_OBJ, 0, OMIT}
#define END {NULL, 0, NO_AUX, T_END, 0, 0}
_Static_assert(sizeof(struct coll_health_system) < NO_AUX && sizeof(struct coll_health_disk) < NO_AUX,
	       "field offsets are 16-bit");

static int aux_of(const char *base, const struct field *f)
{
	int v;
	if (f->aux == NO_AUX)
		return 1;
	memcpy(&v, base + f->aux, sizeof v);
	return v;
}

/* Past the T_END closing the T_OBJ at f. */
static const struct field *skip_obj(const struct field *f)
{
	int depth = 0;
	do {
		depth += f->type == T_OBJ ? 1 : f->type == T_END ? -1 : 0;
		f++;
	} while (depth > 0);
	return f;
}

static void write_value(struct jw *w, const char *p, const struct field *f, int aux)
{
	switch (f->type) {
	case T_U64: jw_int(w, (int64_t) * (const uint64_t *)p); break;
	case T_I64: jw_int(w, *(const int64_t *)p); break;
	case T_INT: jw_int(w, *(const int *)p); break;
	case T_REAL: jw_real(w, *(const double *)p, f->decimals); break;
	case T_PATH: jw_path(w, p, strlen(p)); break;
	case T_CHAR: jw_str(w, p, *p ? 1 : 0); break;
	case T_REALS:
		jw_arr(w);
		for (int i = 0; i < aux; i++)
			jw_real(w, ((const double *)p)[i], f->decimals);
		jw_arr_end(w);
		break;
	}
}

/* The fields of table of the struct at base, up to the table's T_END;
 * returns that T_END. */
static const struct field *write_fields(struct jw *w, const void *base, const struct field *f)
{
	const char *b = base;
	while (f->type != T_END) {
		int aux = aux_of(b, f);
		if (aux == 0 && (f->flags & OMIT)) {
			f = f->type == T_OBJ ? skip_obj(f) : f + 1;
			continue;
		}
		jw_key(w, f->key);
		if (f->type == T_OBJ) {
			jw_obj(w);
			f = write_fields(w, base, f + 1);
			jw_obj_end(w);
		} else if (aux == 0 && f->type != T_REALS) {
			jw_null(w);
		} else {
			write_value(w, b + f->off, f, aux);
		}
		f++;
	}
	return f;
}

#define SYS struct coll_health_system
static const struct field system_fields[] = {
	OBJ("cpu"),
	IF(SYS, have_overall, 0, "overall_pct", overall_pct, T_REAL, 1),
	IF(SYS, num_cores, 0, "per_core", per_core, T_REALS, 1),
	IF(SYS, n_freq, OMIT, "freq_mhz", freq_mhz, T_REALS, 0),
	FIELD(SYS, num_cores, "num_cores", T_INT),
	END,
	OBJ("mem"),
	FIELD(SYS, mem_total_kb, "total_kb", T_U64),
	FIELD(SYS, mem_available_kb, "available_kb", T_U64),
	FIELD(SYS, mem_buffers_kb, "buffers_kb", T_U64),
	FIELD(SYS, mem_cached_kb, "cached_kb", T_U64),
	FIELD(SYS, swap_total_kb, "swap_total_kb", T_U64),
	FIELD(SYS, mem_used_kb, "used_kb", T_U64),
	FIELD(SYS, swap_used_kb, "swap_used_kb", T_U64),
	REAL(SYS, mem_used_pct, "used_pct", 1),
	END,
	OBJ("load"),
	REAL(SYS, load_1m, "avg_1m", 2),
	REAL(SYS, load_5m, "avg_5m", 2),
	REAL(SYS, load_15m, "avg_15m", 2),
	END,
	IF(SYS, have_temp, OMIT, "temp_c", temp_c, T_INT, 0),
	FIELD(SYS, uptime_sec, "uptime_sec", T_U64),
	FIELD(SYS, context_switches, "context_switches", T_U64),
	FIELD(SYS, interrupts, "interrupts", T_U64),
	FIELD(SYS, procs_running, "procs_running", T_U64),
	FIELD(SYS, procs_blocked, "procs_blocked", T_U64),
	END,
};

#define PROC struct coll_health_process
static const struct field process_fields[] = {
	FIELD(PROC, pid, "pid", T_INT),
	FIELD(PROC, comm, "comm", T_PATH),
	FIELD(PROC, state, "state", T_CHAR),
	IF(PROC, have_cpu, 0, "cpu_pct", cpu_pct, T_REAL, 1),
	FIELD(PROC, rss_kb, "rss_kb", T_U64),
	FIELD(PROC, vsize_kb, "vsize_kb", T_U64),
	FIELD(PROC, threads, "threads", T_U64),
	FIELD(PROC, minor_faults, "minor_faults", T_U64),
	FIELD(PROC, major_faults, "major_faults", T_U64),
	FIELD(PROC, fds, "fds", T_I64),
	FIELD(PROC, voluntary_csw, "voluntary_csw", T_U64),
	FIELD(PROC, involuntary_csw, "involuntary_csw", T_U64),
	FIELD(PROC, oom_score, "oom_score", T_I64),
	FIELD(PROC, start_time, "start_time", T_U64),
	END,
};

#define IFACE struct coll_health_iface
static const struct field iface_fields[] = {
	FIELD(IFACE, rx_bytes, "rx_bytes", T_U64),
	FIELD(IFACE, rx_packets, "rx_packets", T_U64),
	FIELD(IFACE, rx_errors, "rx_errors", T_U64),
	FIELD(IFACE, rx_drops, "rx_drops", T_U64),
	FIELD(IFACE, tx_bytes, "tx_bytes", T_U64),
	FIELD(IFACE, tx_packets, "tx_packets", T_U64),
	FIELD(IFACE, tx_errors, "tx_errors", T_U64),
	END,
};

#define DEV struct coll_health_disk_dev
static const struct field dev_fields[] = {
	FIELD(DEV, reads, "reads", T_U64),
	FIELD(DEV, read_bytes, "read_bytes", T_U64),
	FIELD(DEV, writes, "writes", T_U64),
	FIELD(DEV, write_bytes, "write_bytes", T_U64),
	FIELD(DEV, read_ms, "read_ms", T_U64),
	FIELD(DEV, write_ms, "write_ms", T_U64),
	END,
};

#define DISK struct coll_health_disk
static const struct field disk_fields[] = {   /* after "devices" */
	OBJ_IF(DISK, have_proc, "proc"),
	FIELD(DISK, proc_read_bytes, "read_bytes", T_U64),
	FIELD(DISK, proc_write_bytes, "write_bytes", T_U64),
	FIELD(DISK, proc_syscr, "syscr", T_U64),
	FIELD(DISK, proc_syscw, "syscw", T_U64),
	END,
	END,
};

#define THREAD struct coll_health_thread
static const struct field thread_fields[] = {
	FIELD(THREAD, tid, "tid", T_INT),
	FIELD(THREAD, comm, "comm", T_PATH),
	FIELD(THREAD, state, "state", T_CHAR),
	FIELD(THREAD, ticks, "ticks", T_U64),
	END,
};

#define THREADS struct coll_health_threads
static const struct field threads_fields[] = {
	FIELD(THREADS, pid, "pid", T_INT),
	FIELD(THREADS, clk_tck, "clk_tck", T_I64),
	END,
};

/* n records of size bytes from first under key: an object keyed by each
 * record's name (a char array at its start) when named, else an array. */
static void write_records(struct jw *w, const char *key, const void *first, size_t size, int n,
			  int named, const struct field *table)
{
	jw_key(w, key);
	named ? jw_obj(w) : jw_arr(w);
	for (int i = 0; i < n; i++) {
		const char *rec = (const char *)first + (size_t)i * size;
		if (named)
			jw_key(w, rec);
		jw_obj(w);
		write_fields(w, rec, table);
		jw_obj_end(w);
	}
	named ? jw_obj_end(w) : jw_arr_end(w);
}

static void head(struct jw *w, const char *type)
{
	jw_obj(w);
	jw_kstr(w, "type", type);
	jw_kreal(w, "ts", real_now(), 3);
}

/* ------------------------------------------------------------------ */
/* the ticker                                                           */

/* Each frame's writer: read its type's numbers for pid, write the frame
 * into w; 0, or -1 when its source cannot be read (no frame). */
static int frame_system(struct jw *w, struct coll_health_state *st, int pid)
{
	struct coll_health_system s;
	(void)pid;
	if (coll_health_system(st, &s, warn_once) < 0)
		return -1;
	head(w, "system");
	write_fields(w, &s, system_fields);
	jw_obj_end(w);
	return 0;
}

static int frame_process(struct jw *w, struct coll_health_state *st, int pid)
{
	struct coll_health_process p;
	if (coll_health_process(st, pid, &p, warn_once) < 0)
		return -1;
	head(w, "process");
	write_fields(w, &p, process_fields);
	jw_obj_end(w);
	return 0;
}

static int frame_network(struct jw *w, struct coll_health_state *st, int pid)
{
	struct coll_health_network n;
	(void)st, (void)pid;
	if (coll_health_network(&n) < 0)
		return -1;
	head(w, "network");
	write_records(w, "interfaces", n.ifs, sizeof n.ifs[0], n.n, 1, iface_fields);
	jw_obj_end(w);
	return 0;
}

static int frame_disk(struct jw *w, struct coll_health_state *st, int pid)
{
	struct coll_health_disk d;
	(void)st;
	if (coll_health_disk(pid, &d) < 0)
		return -1;
	head(w, "disk");
	write_records(w, "devices", d.devs, sizeof d.devs[0], d.n, 1, dev_fields);
	write_fields(w, &d, disk_fields);
	jw_obj_end(w);
	return 0;
}

static int frame_threads(struct jw *w, struct coll_health_state *st, int pid)
{
	static struct coll_health_threads t; /* 5 KB; one ticker at a time */
	(void)st;
	if (coll_health_threads(pid, &t) < 0)
		return -1;
	head(w, "threads");
	write_fields(w, &t, threads_fields);
	write_records(w, "threads", t.t, sizeof t.t[0], t.n, 0, thread_fields);
	jw_obj_end(w);
	return 0;
}

enum { M_SYSTEM = 1, M_PROCESS = 2, M_NETWORK = 4, M_DISK = 8, M_THREADS = 16 };

/* The seed's order of the frames of one tick. */
static const struct {
	unsigned bit;
	int (*write)(struct jw *w, struct coll_health_state *st, int pid);
} frames[] = {
	{M_SYSTEM, frame_system},   {M_PROCESS, frame_process}, {M_NETWORK, frame_network},
	{M_DISK, frame_disk},       {M_THREADS, frame_threads},
};

/* The types this tick sends: system always, process while profiling or
 * paused, network and disk when enabled, threads when enabled with a pid. */
static unsigned tick_types(int *pid)
{
	unsigned want = M_SYSTEM;
	pthread_mutex_lock(&A.mu);
	*pid = A.pid;
	if (A.state != ST_IDLE && A.pid > 0)
		want |= M_PROCESS;
	if (A.m_network)
		want |= M_NETWORK;
	if (A.m_disk)
		want |= M_DISK;
	if (A.m_threads && A.pid > 0)
		want |= M_THREADS;
	pthread_mutex_unlock(&A.mu);
	return want;
}

/* One tick: 0, or -1 when a send failed (the link is gone). */
static int tick(const struct metrics_outlet *out, struct coll_health_state *st, struct jw *w)
{
	int pid, rc = 0;
	unsigned want = tick_types(&pid);
	for (size_t i = 0; i < sizeof frames / sizeof frames[0] && rc == 0; i++) {
		if (!(want & frames[i].bit) || frames[i].write(w, st, pid) < 0)
			continue;
		if (!w->overflow)
			rc = out->send(out->link, 4, w->buf, w->len);
		jw_reset(w);
	}
	return rc < 0 ? -1 : 0;
}

void *metrics_main(void *arg)
{
	const struct metrics_outlet *out = arg;
	struct coll_health_state st;
	struct jw w;
	memset(&st, 0, sizeof st);
	jw_init(&w, 64 * 1024);
	double next = mono_now();
	while (out->alive(out->link)) {
		int enabled, interval;
		pthread_mutex_lock(&A.mu);
		enabled = A.m_enabled;
		interval = A.m_interval;
		pthread_mutex_unlock(&A.mu);
		if (enabled && mono_now() >= next) {
			if (tick(out, &st, &w) < 0)
				break;
			next = mono_now() + interval;
		}
		sleep_ms(200);
	}
	jw_free(&w);
	return NULL;
}
