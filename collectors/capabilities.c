/* capabilities.c - what perf can collect here (see capabilities.h).
 *
 * Event probes use perf itself as the workload (`perf bench` for load,
 * `perf version` for a short run).  Counting: perf stat -x, on stderr,
 * read per event.  Sampling: perf record into a scratch folder under the
 * artifact root.  Call graphs: callgraph_probe.c, which records this
 * PerfLens binary re-run as a chain of known depth and says per mode how
 * much of the chain came back.  The answer is cached in
 * collections/capabilities.json, keyed by the boot id and the path, size
 * and modification time of perf and of the workload binary.
 */
#include <stdio.h>
#include "capabilities.h"
#include "callgraph_probe.h"
#include "coll_int.h"
#include "collect.h"
#include "procfs.h"
#include "base/fsatomic.h"
#include "base/util.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROBE_TIMEOUT_MS 20000

static const char *const probe_events[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches",
	"cycles", "instructions", "cache-misses", "branch-misses",
};
static const char *const sampled_events[] = {"cpu-clock", "cycles"};
static const struct {
	const char *name, *path, *used_by;
} tracepoints[] = {
	{"sched:sched_switch", "events/sched/sched_switch", "off_cpu, sched"},
	{"sched:sched_wakeup", "events/sched/sched_wakeup", "sched"},
	{"lock:contention_begin", "events/lock/contention_begin", "lock"},
};

/* A small /proc file without its trailing blanks (caller frees), or NULL. */
static char *read_small(const char *path)
{
	char buf[256];
	long n = coll_read_text(path, buf, sizeof(buf));

	if (n < 0)
		return NULL;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	return pl_xstrndup(buf, (size_t)n);
}

/* A file's identity in the cache key: its size and mtime (0 when gone). */
static json_t *file_identity(const char *path)
{
	struct stat st;

	if (!path || stat(path, &st) != 0)
		memset(&st, 0, sizeof(st));
	return json_pack("{s:s?,s:I,s:I}", "path", path, "size", (json_int_t)st.st_size,
			 "mtime", (json_int_t)st.st_mtime);
}

/* The cache key: boot id + perf's identity + the workload's (a rebuilt
 * PerfLens probes again). */
static json_t *cache_key(const char *perf, const char *workload)
{
	char *boot = read_small("/proc/sys/kernel/random/boot_id");
	json_t *k = json_pack("{s:s?,s:o,s:o,s:i}", "boot_id", boot, "perf", file_identity(perf),
			      "workload", file_identity(workload), "version", 2);

	free(boot);
	return k;
}

/* "VALUE,UNIT,EVENT,..." lines of perf stat -x, for `event`. */
static const char *count_status(const char *stderr_text, const char *event, int status)
{
	const char *line = stderr_text ? stderr_text : "";

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		if (memmem(line, n, event, strlen(event))) {
			if (memmem(line, n, "<not supported>", 15))
				return "not_supported";
			if (memmem(line, n, "<not counted>", 13))
				return "not_counted";
			return status == 0 ? "counted" : "failed";
		}
		line = nl ? nl + 1 : NULL;
	}
	return "failed";
}

json_t *coll_probe_event(const char *perf, const char *scratch, const char *event)
{
	const char *stat_argv[] = {perf, "stat", "-x", ",", "-e", event, "--", perf, "version", NULL};
	char data[4200], *out = NULL, *errt = NULL;
	const char *count, *record = "not_tried";
	int st = pl_perf_probe(stat_argv, PROBE_TIMEOUT_MS, &out, &errt);
	json_t *j;

	count = count_status(errt, event, st);
	free(out);
	free(errt);
	for (size_t i = 0; i < PL_ARRAY_LEN(sampled_events); i++) {
		if (strcmp(event, sampled_events[i]) != 0)
			continue;
		snprintf(data, sizeof(data), "%.4000s/%s.data", scratch, event);
		const char *rec_argv[] = {perf, "record", "-e", event, "-N", "-o", data, "--", perf,
					  "bench", "mem", "memset", "-s", "4MB", "-l", "20", NULL};
		out = errt = NULL;
		st = pl_perf_probe(rec_argv, PROBE_TIMEOUT_MS, &out, &errt);
		free(out);
		free(errt);
		record = st == 0 ? "works" : "failed";
		if (st == 0) {
			/* perf record silently falls back (cycles -> cpu-clock):
			 * it works only if the file holds the event asked for. */
			const char *ev_argv[] = {perf, "evlist", "-i", data, NULL};
			out = errt = NULL;
			pl_perf_probe(ev_argv, PROBE_TIMEOUT_MS, &out, &errt);
			if (!out || strncmp(out, event, strlen(event)) != 0)
				record = "failed";
			free(out);
			free(errt);
		}
		unlink(data);
	}
	j = json_pack("{s:s,s:s,s:s,s:s}", "event", event, "count", count, "record", record,
		      "detail", strcmp(count, "counted") == 0 ? "counts with perf stat" :
		      "perf stat could not count it here (VMs often lack hardware events: use cpu-clock, task-clock)");
	return j;
}

static json_t *probe_tracepoints(void)
{
	static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	json_t *out = json_array();
	char path[512];

	for (size_t i = 0; i < PL_ARRAY_LEN(tracepoints); i++) {
		bool found = false;
		for (size_t r = 0; r < PL_ARRAY_LEN(roots) && !found; r++) {
			snprintf(path, sizeof(path), "%s/%s", roots[r], tracepoints[i].path);
			found = access(path, F_OK) == 0;
		}
		json_array_append_new(out, json_pack("{s:s,s:b,s:s}", "name", tracepoints[i].name,
						     "available", found, "used_by", tracepoints[i].used_by));
	}
	return out;
}

json_t *coll_tracefs_json(void)
{
	FILE *fp = fopen("/proc/self/mounts", "r");
	char line[1024], dev[256], dir[512], type[64], path[600] = "", events[700];
	const char *via = NULL;
	bool readable;

	while (fp && fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%255s %511s %63s", dev, dir, type) != 3)
			continue;
		if (strcmp(type, "tracefs") == 0 && (!via || strcmp(via, "tracefs") != 0 ||
						     strcmp(dir, "/sys/kernel/tracing") == 0)) {
			snprintf(path, sizeof(path), "%s", dir);
			via = "tracefs";
		} else if (strcmp(type, "debugfs") == 0 && !via) {
			snprintf(path, sizeof(path), "%s/tracing", dir);
			via = "debugfs";
		}
	}
	if (fp)
		fclose(fp);
	snprintf(events, sizeof(events), "%s/events", path[0] ? path : "/sys/kernel/tracing");
	readable = access(events, R_OK) == 0;
	if (!via && readable) {
		snprintf(path, sizeof(path), "/sys/kernel/tracing");
		via = "tracefs";
	}
	return json_pack("{s:b,s:s?,s:s?,s:b,s:s,s:s,s:s}", "mounted", via != NULL && readable,
			 "path", path[0] ? path : NULL, "via", via, "events_readable", readable,
			 "mount_command", COLL_TRACEFS_MOUNT, "needed_by", "collect_profile mode off_cpu, sched and lock",
			 "detail", via && readable ? "tracepoints are readable: the tracepoint modes can record" :
			 "tracefs is not mounted: the tracepoint modes are refused until it is (as root: "
			 COLL_TRACEFS_MOUNT "); PerfLens does not mount file systems itself");
}

static json_t *advice(json_t *events, json_t *graphs)
{
	json_t *a = json_array(), *e;
	size_t i;
	bool hw = false;

	json_array_foreach(events, i, e)
		if (strcmp(json_string_value(json_object_get(e, "event")), "cycles") == 0)
			hw = strcmp(json_string_value(json_object_get(e, "count")), "counted") == 0;
	json_array_append_new(a, json_string(hw ? "hardware events count here: cycles and instructions give IPC"
					     : "hardware events are not available: sample cpu-clock and count task-clock"));
	json_array_foreach(graphs, i, e) {
		if (strcmp(json_string_value(json_object_get(e, "status")), "real_chains") != 0)
			continue;
		json_array_append_new(a, json_sprintf("call_graph=\"%s\" yields real chains%s",
			json_string_value(json_object_get(e, "mode")),
			json_is_true(json_object_get(e, "needs_frame_pointers")) ?
			" in code built with -fno-omit-frame-pointer" :
			json_is_false(json_object_get(e, "needs_frame_pointers")) ?
			", also without frame pointers" : ""));
	}
	return a;
}

static json_t *probe_all(const char *perf, const char *workload, const char *scratch)
{
	json_t *events = json_array(), *graphs;
	char *par = read_small("/proc/sys/kernel/perf_event_paranoid");
	char *version = pl_perf_version(perf);
	json_t *r;

	for (size_t i = 0; i < PL_ARRAY_LEN(probe_events); i++)
		json_array_append_new(events, coll_probe_event(perf, scratch, probe_events[i]));
	graphs = coll_probe_call_graphs(perf, workload, scratch, PROBE_TIMEOUT_MS);
	r = json_pack("{s:s,s:s?,s:o,s:o,s:b,s:o,s:o,s:o,s:o}", "perf_path", perf, "perf_version", version,
		      "perf_event_paranoid", par ? json_integer(atoi(par)) : json_null(),
		      "cpus", coll_cpus_json(), "cached", false,
		      "events", events, "call_graphs", graphs, "tracepoints", probe_tracepoints(),
		      "advice", advice(events, graphs));
	free(par);
	free(version);
	return r;
}

/* The cached answer when its key matches `key`, else NULL (new). */
static json_t *cached_answer(const char *cache, json_t *key)
{
	json_t *old = json_load_file(cache, 0, NULL), *r = NULL;

	if (old && json_equal(json_object_get(old, "key"), key)) {
		r = json_deep_copy(json_object_get(old, "answer"));
		json_object_set_new(r, "cached", json_true());
	}
	json_decref(old);
	return r;
}

static char *boot_id_copy;
static pthread_once_t boot_id_once = PTHREAD_ONCE_INIT;

static void read_boot_id(void)
{
	boot_id_copy = read_small("/proc/sys/kernel/random/boot_id");
}

const char *coll_boot_id(void)
{
	pthread_once(&boot_id_once, read_boot_id);
	return boot_id_copy;
}

json_t *coll_capabilities_cached(const char *perf_path, const char *artifact_root, const char *boot_id)
{
	char cache[4200];
	json_t *old, *key, *r = NULL;

	if (!perf_path || !artifact_root || !boot_id)
		return NULL;
	snprintf(cache, sizeof(cache), "%.4000s/collections/capabilities.json", artifact_root);
	old = json_load_file(cache, 0, NULL);
	key = json_object_get(old, "key");
	if (json_is_object(json_object_get(old, "answer")) &&
	    strcmp(json_string_value(json_object_get(key, "boot_id")) ?: "", boot_id) == 0 &&
	    strcmp(json_string_value(json_object_get(json_object_get(key, "perf"), "path")) ?: "", perf_path) == 0)
		r = json_incref(json_object_get(old, "answer"));
	json_decref(old);
	return r;
}

/* Probe in a scratch folder under `collections`; on PL_OK *result is new. */
static enum pl_err probe_in_scratch(const char *perf, const char *workload, const char *collections,
				    json_t **result, struct pl_error *err)
{
	char scratch[4200];
	enum pl_err rc;

	if ((rc = pl_make_dirs(collections, err)))
		return rc;
	snprintf(scratch, sizeof(scratch), "%.4000s/.probe-XXXXXX", collections);
	if (!mkdtemp(scratch))
		return pl_fail(err, PL_ERR_OUTPUT, "check the artifact root", "cannot create '%s'", scratch);
	*result = probe_all(perf, workload, scratch);
	rmdir(scratch);
	return PL_OK;
}

/* Store {key, answer} atomically in `cache`; `key` is stolen. */
static enum pl_err store_answer(const char *cache, json_t *key, json_t *answer, struct pl_error *err)
{
	json_t *store = json_pack("{s:o,s:O}", "key", key, "answer", answer);
	char *text = json_dumps(store, JSON_SORT_KEYS | JSON_INDENT(1));
	enum pl_err rc = pl_write_file_atomic(cache, text, strlen(text), err);

	json_decref(store);
	free(text);
	return rc;
}

enum pl_err coll_capabilities(const char *perf_path, const char *workload, const char *artifact_root,
			      bool refresh, json_t **result, struct pl_error *err)
{
	char cache[4200], collections[4200];
	json_t *key = cache_key(perf_path, workload), *r = NULL;
	enum pl_err rc;

	snprintf(collections, sizeof(collections), "%.4000s/collections", artifact_root);
	snprintf(cache, sizeof(cache), "%.4000s/capabilities.json", collections);
	if (!refresh && (r = cached_answer(cache, key))) {
		json_decref(key);
		/* A mount changes within a boot: never from the cache. */
		json_object_set_new(r, "tracepoints", probe_tracepoints());
		json_object_set_new(r, "tracefs", coll_tracefs_json());
		*result = r;
		return PL_OK;
	}
	if ((rc = probe_in_scratch(perf_path, workload, collections, &r, err))) {
		json_decref(key);
		return rc;
	}
	json_object_set_new(r, "boot_id", json_is_string(json_object_get(key, "boot_id")) ?
			    json_incref(json_object_get(key, "boot_id")) : json_null());
	if ((rc = store_answer(cache, key, r, err))) {
		json_decref(r);
		return rc;
	}
	json_object_set_new(r, "tracefs", coll_tracefs_json());
	*result = r;
	return PL_OK;
}
