/* metrics.c - the health ticker of one authenticated link: every
 * `interval` seconds (slept in 200 ms steps, so a new config or the link's
 * end is seen quickly) one flag-4 frame per enabled type, in the seed's
 * order: system, process (while profiling or paused), network, disk
 * (opt-in), threads (opt-in, with a pid).  The numbers come from
 * collectors/health.c; this file only writes them as the seed's JSON. */
#include "agent.h"
#include "collectors/health.h"

#include <stdio.h>
#include <string.h>

int link_alive(struct link *l);

static void warn_once(const char *msg)
{
	agent_log("metrics: %s", msg);
}

static void head(struct jw *w, const char *type)
{
	jw_obj(w);
	jw_kstr(w, "type", type);
	jw_kreal(w, "ts", real_now(), 3);
}

static void write_system(struct jw *w, const struct coll_health_system *s)
{
	head(w, "system");
	jw_key(w, "cpu");
	jw_obj(w);
	jw_key(w, "overall_pct");
	if (s->have_overall)
		jw_real(w, s->overall_pct, 1);
	else
		jw_null(w);
	jw_key(w, "per_core");
	jw_arr(w);
	for (int i = 0; i < s->num_cores; i++)
		jw_real(w, s->per_core[i], 1);
	jw_arr_end(w);
	if (s->n_freq > 0) {
		jw_key(w, "freq_mhz");
		jw_arr(w);
		for (int i = 0; i < s->n_freq; i++)
			jw_real(w, s->freq_mhz[i], 0);
		jw_arr_end(w);
	}
	jw_kint(w, "num_cores", s->num_cores);
	jw_obj_end(w);
	jw_key(w, "mem");
	jw_obj(w);
	jw_kint(w, "total_kb", (int64_t)s->mem_total_kb);
	jw_kint(w, "available_kb", (int64_t)s->mem_available_kb);
	jw_kint(w, "buffers_kb", (int64_t)s->mem_buffers_kb);
	jw_kint(w, "cached_kb", (int64_t)s->mem_cached_kb);
	jw_kint(w, "swap_total_kb", (int64_t)s->swap_total_kb);
	jw_kint(w, "used_kb", (int64_t)s->mem_used_kb);
	jw_kint(w, "swap_used_kb", (int64_t)s->swap_used_kb);
	jw_kreal(w, "used_pct", s->mem_used_pct, 1);
	jw_obj_end(w);
	jw_key(w, "load");
	jw_obj(w);
	jw_kreal(w, "avg_1m", s->load_1m, 2);
	jw_kreal(w, "avg_5m", s->load_5m, 2);
	jw_kreal(w, "avg_15m", s->load_15m, 2);
	jw_obj_end(w);
	if (s->have_temp)
		jw_kint(w, "temp_c", s->temp_c);
	jw_kint(w, "uptime_sec", (int64_t)s->uptime_sec);
	jw_kint(w, "context_switches", (int64_t)s->context_switches);
	jw_kint(w, "interrupts", (int64_t)s->interrupts);
	jw_kint(w, "procs_running", (int64_t)s->procs_running);
	jw_kint(w, "procs_blocked", (int64_t)s->procs_blocked);
	jw_obj_end(w);
}

static void write_process(struct jw *w, const struct coll_health_process *p)
{
	char state[2] = {p->state, 0};
	head(w, "process");
	jw_kint(w, "pid", p->pid);
	jw_key(w, "comm");
	jw_path(w, p->comm, strlen(p->comm));
	jw_kstr(w, "state", state);
	jw_key(w, "cpu_pct");
	if (p->have_cpu)
		jw_real(w, p->cpu_pct, 1);
	else
		jw_null(w);
	jw_kint(w, "rss_kb", (int64_t)p->rss_kb);
	jw_kint(w, "vsize_kb", (int64_t)p->vsize_kb);
	jw_kint(w, "threads", (int64_t)p->threads);
	jw_kint(w, "minor_faults", (int64_t)p->minor_faults);
	jw_kint(w, "major_faults", (int64_t)p->major_faults);
	jw_kint(w, "fds", p->fds);
	jw_kint(w, "voluntary_csw", (int64_t)p->voluntary_csw);
	jw_kint(w, "involuntary_csw", (int64_t)p->involuntary_csw);
	jw_kint(w, "oom_score", p->oom_score);
	jw_kint(w, "start_time", (int64_t)p->start_time);
	jw_obj_end(w);
}

static void write_network(struct jw *w, const struct coll_health_network *n)
{
	head(w, "network");
	jw_key(w, "interfaces");
	jw_obj(w);
	for (int i = 0; i < n->n; i++) {
		const struct coll_health_iface *f = &n->ifs[i];
		jw_key(w, f->name);
		jw_obj(w);
		jw_kint(w, "rx_bytes", (int64_t)f->rx_bytes);
		jw_kint(w, "rx_packets", (int64_t)f->rx_packets);
		jw_kint(w, "rx_errors", (int64_t)f->rx_errors);
		jw_kint(w, "rx_drops", (int64_t)f->rx_drops);
		jw_kint(w, "tx_bytes", (int64_t)f->tx_bytes);
		jw_kint(w, "tx_packets", (int64_t)f->tx_packets);
		jw_kint(w, "tx_errors", (int64_t)f->tx_errors);
		jw_obj_end(w);
	}
	jw_obj_end(w);
	jw_obj_end(w);
}

static void write_disk(struct jw *w, const struct coll_health_disk *d)
{
	head(w, "disk");
	jw_key(w, "devices");
	jw_obj(w);
	for (int i = 0; i < d->n; i++) {
		const struct coll_health_disk_dev *v = &d->devs[i];
		jw_key(w, v->name);
		jw_obj(w);
		jw_kint(w, "reads", (int64_t)v->reads);
		jw_kint(w, "read_bytes", (int64_t)v->read_bytes);
		jw_kint(w, "writes", (int64_t)v->writes);
		jw_kint(w, "write_bytes", (int64_t)v->write_bytes);
		jw_kint(w, "read_ms", (int64_t)v->read_ms);
		jw_kint(w, "write_ms", (int64_t)v->write_ms);
		jw_obj_end(w);
	}
	jw_obj_end(w);
	if (d->have_proc) {
		jw_key(w, "proc");
		jw_obj(w);
		jw_kint(w, "read_bytes", (int64_t)d->proc_read_bytes);
		jw_kint(w, "write_bytes", (int64_t)d->proc_write_bytes);
		jw_kint(w, "syscr", (int64_t)d->proc_syscr);
		jw_kint(w, "syscw", (int64_t)d->proc_syscw);
		jw_obj_end(w);
	}
	jw_obj_end(w);
}

static void write_threads(struct jw *w, const struct coll_health_threads *t)
{
	head(w, "threads");
	jw_kint(w, "pid", t->pid);
	jw_kint(w, "clk_tck", t->clk_tck);
	jw_key(w, "threads");
	jw_arr(w);
	for (int i = 0; i < t->n; i++) {
		char state[2] = {t->t[i].state, 0};
		jw_obj(w);
		jw_kint(w, "tid", t->t[i].tid);
		jw_key(w, "comm");
		jw_path(w, t->t[i].comm, strlen(t->t[i].comm));
		jw_kstr(w, "state", state);
		jw_kint(w, "ticks", (int64_t)t->t[i].ticks);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
}

static int send_w(struct link *l, struct jw *w)
{
	int rc = 0;
	if (!w->overflow)
		rc = link_send(l, 4, w->buf, w->len);
	jw_reset(w);
	return rc;
}

/* One tick: 0, or -1 when a send failed (the link is gone). */
static int tick(struct link *l, struct coll_health_state *st, struct jw *w)
{
	struct coll_health_system sys;
	int pid, profiling, net, disk, threads;
	pthread_mutex_lock(&A.mu);
	pid = A.pid;
	profiling = A.state != ST_IDLE;
	net = A.m_network;
	disk = A.m_disk;
	threads = A.m_threads;
	pthread_mutex_unlock(&A.mu);
	if (coll_health_system(st, &sys, warn_once) == 0) {
		write_system(w, &sys);
		if (send_w(l, w) < 0)
			return -1;
	}
	if (profiling && pid > 0) {
		struct coll_health_process p;
		if (coll_health_process(st, pid, &p, warn_once) == 0) {
			write_process(w, &p);
			if (send_w(l, w) < 0)
				return -1;
		}
	}
	if (net) {
		struct coll_health_network n;
		if (coll_health_network(&n) == 0) {
			write_network(w, &n);
			if (send_w(l, w) < 0)
				return -1;
		}
	}
	if (disk) {
		struct coll_health_disk d;
		if (coll_health_disk(pid, &d) == 0) {
			write_disk(w, &d);
			if (send_w(l, w) < 0)
				return -1;
		}
	}
	if (threads && pid > 0) {
		static struct coll_health_threads t; /* 5 KB; one ticker at a time */
		if (coll_health_threads(pid, &t) == 0) {
			write_threads(w, &t);
			if (send_w(l, w) < 0)
				return -1;
		}
	}
	return 0;
}

void *metrics_main(void *arg)
{
	struct link *l = arg;
	struct coll_health_state st;
	struct jw w;
	memset(&st, 0, sizeof st);
	jw_init(&w, 64 * 1024);
	double next = mono_now();
	while (link_alive(l)) {
		int enabled, interval;
		pthread_mutex_lock(&A.mu);
		enabled = A.m_enabled;
		interval = A.m_interval;
		pthread_mutex_unlock(&A.mu);
		if (enabled && mono_now() >= next) {
			if (tick(l, &st, &w) < 0)
				break;
			next = mono_now() + interval;
		}
		sleep_ms(200);
	}
	jw_free(&w);
	return NULL;
}
