/* lock.c - the lock mode's report: perf lock over what perf lock record
 * wrote, kept as lock.txt, with its rows read into the metadata.
 *
 * perf lock record takes the kernel's lock:contention_begin/end
 * tracepoints (or lockdep's lock:lock_acquire family where the kernel has
 * them): it sees kernel locks only.  A pthread mutex is a futex: its
 * waiters sleep in futex_wait, which no lock tracepoint marks, so a
 * program contending on user-space mutexes gives an empty report.  That
 * is said in a warning, and the next step is the off-CPU collection whose
 * futex_wait stacks show those waits.  Which reporter fits depends on the
 * events recorded: `perf lock contention` for contention_begin/end,
 * `perf lock report` for lockdep's.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"
#include "base/util.h"

#define MAX_LOCK_ROWS 50

struct lock_sink {
	FILE *fp;
	bool contention;     /* `perf lock contention` rows */
	uint64_t rows;
	json_t *locks;       /* the first MAX_LOCK_ROWS rows, read */
};

/* "10.50 us" -> ns; false for an unknown unit. */
static bool to_ns(double v, const char *unit, double *ns)
{
	static const struct { const char *u; double f; } units[] = {
		{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9},
	};
	for (size_t i = 0; i < PL_ARRAY_LEN(units); i++)
		if (strcmp(unit, units[i].u) == 0) {
			*ns = v * units[i].f;
			return true;
		}
	return false;
}

/* " contended total wait max wait avg wait type caller" row:
 * "  5   10.50 us   4.12 us   2.10 us   spinlock   foo+0x12". */
static json_t *contention_row(const char *line)
{
	unsigned long n;
	double total, max, avg, tns, mns, ans;
	char tu[8], mu[8], au[8], type[64];
	int used = 0;

	if (sscanf(line, " %lu %lf %7s %lf %7s %lf %7s %63s %n", &n, &total, tu, &max, mu, &avg, au,
		   type, &used) < 8 || !to_ns(total, tu, &tns) || !to_ns(max, mu, &mns) ||
	    !to_ns(avg, au, &ans))
		return NULL;
	return json_pack("{s:I,s:I,s:I,s:I,s:s,s:o}", "contended", (json_int_t)n,
			 "total_wait_ns", (json_int_t)tns, "max_wait_ns", (json_int_t)mns,
			 "avg_wait_ns", (json_int_t)ans, "type", type,
			 "caller", coll_text_json(line + used, strlen(line + used)));
}

static enum pl_err lock_line(void *arg, const char *line, size_t len, struct pl_error *err)
{
	struct lock_sink *s = arg;
	const char *p = line;
	json_t *row = NULL;

	(void)err;
	fwrite(line, 1, len, s->fp);
	fputc('\n', s->fp);
	while (*p == ' ' || *p == '\t')
		p++;
	/* Header lines start with a word; rows with a count or a name. */
	if (!*p || strncmp(p, "contended", 9) == 0 || strncmp(p, "Name ", 5) == 0 || *p == '#' ||
	    strncmp(p, "===", 3) == 0)
		return PL_OK;
	if (s->contention && !(row = contention_row(line)))
		return PL_OK;
	s->rows++;
	if (s->contention && json_array_size(s->locks) < MAX_LOCK_ROWS)
		json_array_append_new(s->locks, row);
	else if (s->contention)
		json_decref(row);
	return PL_OK;
}

/* Whether the recording holds lock:contention_begin (perf evlist). */
static enum pl_err evlist_line(void *arg, const char *line, size_t len, struct pl_error *err)
{
	(void)err;
	if (len >= 21 && strncmp(line, "lock:contention_begin", 21) == 0)
		*(bool *)arg = true;
	return PL_OK;
}

static bool has_contention_events(const struct pl_collect_env *env, const char *data, uint32_t timeout_ms)
{
	const char *argv[] = {env->perf_path, "evlist", "-i", data, NULL};
	struct pl_run_result res;
	struct pl_error ignored;
	bool found = false;

	coll_run_perf(env, argv, timeout_ms, 0, false, evlist_line, &found, &res, &ignored);
	pl_run_result_release(&res);
	return found;
}

enum pl_err coll_lock(const struct pl_collect_env *env, const struct pl_collect_req *r,
		      const char *dir, const char *data, json_t *meta, json_t *warnings,
		      struct pl_error *err)
{
	bool contention = has_contention_events(env, data, r->timeout_ms);
	const char *argv[] = {env->perf_path, "lock", contention ? "contention" : "report", "-i", data, NULL};
	struct lock_sink s = {NULL, contention, 0, json_array()};
	struct pl_run_result res;
	char path[PATH_MAX];
	enum pl_err rc;

	coll_join(path, sizeof(path), dir, "lock.txt");
	json_object_set_new(meta, "post_command", coll_argv_json(argv));
	if (!(s.fp = fopen(path, "w"))) {
		json_decref(s.locks);
		return pl_fail(err, PL_ERR_OUTPUT, NULL, "cannot write '%s'", path);
	}
	rc = coll_run_perf(env, argv, r->timeout_ms, 0, false, lock_line, &s, &res, err);
	pl_run_result_release(&res);
	if (fclose(s.fp) != 0 && rc == PL_OK)
		rc = pl_fail(err, PL_ERR_OUTPUT, "check free space", "cannot write '%s'", path);
	json_object_set_new(meta, "lock", json_pack("{s:s,s:I,s:o}",
		"reporter", contention ? "perf lock contention" : "perf lock report",
		"rows", (json_int_t)s.rows, "locks", contention ? s.locks : json_array()));
	if (!contention)
		json_decref(s.locks);
	if (rc == PL_OK && s.rows == 0)
		json_array_append_new(warnings, json_string(
			"perf lock saw no lock contention: it sees kernel locks only (lock tracepoints), not "
			"user-space pthread mutexes, whose waiters sleep in the kernel's futex_wait; the "
			"off-CPU collection in next_steps shows those waits as futex_wait stacks"));
	return rc;
}
