/* parse_json.c - speedscope files and V8 .cpuprofile files into the
 * profile model (jansson reads the JSON; see parse_pprof.h).
 *
 * V8 .cpuprofile (Node --cpu-prof, Chrome DevTools): `nodes` is a call
 * tree ({id, callFrame {functionName, url, lineNumber}, children} or a
 * `parent` id), `samples` the node sampled each tick and `timeDeltas` the
 * microseconds from the previous tick (the first from startTime).  Two
 * events: "samples" (count: each tick weighs 1) and "time" (microseconds:
 * a tick lasts until the next one, the last until endTime, as DevTools
 * times self time; a tick of no positive duration adds no time).  A node
 * is a frame named by its function ("(anonymous)" when empty) in its
 * script (url, the DSO), with srcline url:line (1-based); the "(root)"
 * node is the tree's root, not a frame.  A node whose parent links never
 * reach a root (a cycle), or that points at ids that are not there, makes
 * its ticks malformed (counted); a child listed under two parents keeps
 * the first.
 *
 * speedscope (www.speedscope.app/file-format-schema.json): shared frames
 * {name, file, line}; each profile is a thread named by the profile's
 * name.  "sampled" profiles give stacks (frame indexes, root first) and
 * their weights; "evented" ones open ("O") and close ("C") frames at
 * times, and each interval weighs its duration to the stack open then.
 * Weights go to one event per kind of unit: time units ("nanoseconds" to
 * "seconds") to "time" in nanoseconds (so that fractional milliseconds
 * stay exact to the nanosecond and profiles in different time units stay
 * one quantity), "bytes" to "bytes", "none" to "weight" (count).  A
 * sample or event that names no frame, a negative or non-finite weight,
 * an event out of time order or a close that does not match the open
 * frame are malformed records (an evented profile stops there); a weight
 * past 2^63 is malformed too.
 *
 * Sample times (profile.h's timed samples, for view.time and get_timeline),
 * in a time unit only: an evented interval is timed at its start (the
 * event's "at" that opened it); a sampled profile's samples are laid end
 * to end from its startValue (0 when it has none), each timed at its start
 * (the startValue plus the weights before it), as speedscope's own time
 * order lays them out.  Profiles in bytes or "none" have no times: their
 * samples are counted untimed.
 */
#include "parse_pprof.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- common */

/* `kind` names the format in the error: the file may have been forced to
 * it (format=NAME) while being something else altogether. */
static enum pl_err load(const void *data, size_t n, const char *source, const char *kind,
			json_t **doc, struct pl_error *err)
{
	json_error_t je;

	*doc = json_loadb(data, n, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	if (!*doc)
		return pl_fail(err, PL_ERR_MALFORMED, "check that the file is whole and is JSON, or analyze it with format auto",
			       "'%s' is not valid JSON, so not a %s file: %s (line %d)", source, kind,
			       je.text, je.line);
	if (!json_is_object(*doc)) {
		json_decref(*doc);
		return pl_fail(err, PL_ERR_MALFORMED, "pass the profile object itself",
			       "'%s' is JSON but not an object", source);
	}
	return PL_OK;
}

static void bad(struct pl_profile *p, uint64_t record, const char *reason, const char *what)
{
	pl_note_malformed(p, record, reason, what, strlen(what));
}

static enum pl_err count_record(struct pl_profile *p, struct pl_error *err)
{
	if (++p->records_parsed > p->limits.max_records)
		return pl_fail(err, PL_ERR_LIMIT, "raise --max-records",
			       "more than %llu records", (unsigned long long)p->limits.max_records);
	return PL_OK;
}

/* Would `w` more take the event's total past 2^64? */
static enum pl_err total_fits(struct pl_profile *p, uint32_t event, uint64_t w, struct pl_error *err)
{
	uint64_t sum;

	if (__builtin_add_overflow(p->events[event].period, w, &sum))
		return pl_fail(err, PL_ERR_MALFORMED, "check the profile's weights",
			       "weights of event '%s' add up past 2^64", pl_str(p, p->events[event].name));
	return PL_OK;
}

/* A frame: `name` in `file` (the DSO; NULL or "" for none) at line. */
static uint32_t make_frame(struct pl_profile *p, const char *name, size_t n, const char *file,
			   int64_t line, struct pl_error *err)
{
	uint32_t sym = pl_intern_str(p, name, n), dso = PL_NOID, srcline = PL_NOID;

	if (file && *file) {
		struct pl_buf b = {0};
		dso = pl_intern_str(p, file, strlen(file));
		pl_buf_adds(&b, file);
		if (line > 0)
			pl_buf_addf(&b, ":%lld", (long long)line);
		srcline = pl_intern_str(p, b.data, b.len);
		pl_buf_release(&b);
	}
	return pl_intern_frame(p, pl_intern_func(p, sym, dso), false, 0, srcline, err);
}

/* ------------------------------------------------------------------ V8 */

struct v8_node {
	int64_t id;
	uint32_t parent;     /* node index, UINT32_MAX: none */
	uint32_t frame;      /* PL_NOID for the (root) node */
	uint32_t stack;      /* PL_NOID until made; V8_BAD when it cannot be */
	bool bad;
};
#define V8_BAD (PL_NOID - 1)

struct v8_id {
	int64_t id;
	uint32_t index;
};

static int cmp_v8_id(const void *a, const void *b)
{
	const struct v8_id *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

struct v8 {
	struct pl_profile *p;
	struct pl_error *err;
	struct v8_node *nodes;
	size_t n;
	struct v8_id *ids;   /* sorted, duplicates removed */
	size_t nids;
	uint32_t thread, ev_samples, ev_time;
	uint32_t *buf;       /* a stack's frames, leaf first */
};

static uint32_t v8_find(const struct v8 *v, json_t *id)
{
	size_t lo = 0, hi = v->nids;
	int64_t want;

	if (!json_is_integer(id))
		return UINT32_MAX;
	want = json_integer_value(id);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v->ids[mid].id < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->nids && v->ids[lo].id == want ? v->ids[lo].index : UINT32_MAX;
}

/* Read every node's id and frame. */
static enum pl_err v8_nodes(struct v8 *v, json_t *nodes)
{
	size_t w = 0;

	v->n = json_array_size(nodes);
	v->nodes = pl_xcalloc(v->n ? v->n : 1, sizeof(*v->nodes));
	v->ids = pl_xmalloc((v->n ? v->n : 1) * sizeof(*v->ids));
	for (size_t i = 0; i < v->n; i++) {
		json_t *nd = json_array_get(nodes, i), *cf = json_object_get(nd, "callFrame");
		json_t *fn = json_object_get(cf, "functionName"), *url = json_object_get(cf, "url");
		json_t *line = json_object_get(cf, "lineNumber"), *id = json_object_get(nd, "id");
		struct v8_node *x = &v->nodes[i];
		const char *name;
		size_t len;

		x->parent = UINT32_MAX;
		x->stack = PL_NOID;
		x->frame = PL_NOID;
		if (!json_is_integer(id) || !json_is_object(cf) || !json_is_string(fn) ||
		    (url && !json_is_string(url)) || (line && !json_is_integer(line))) {
			x->bad = true;
			x->id = INT64_MIN;
			bad(v->p, i + 1, "node without an integer id and a callFrame", "node");
			continue;
		}
		x->id = json_integer_value(id);
		v->ids[w++] = (struct v8_id){x->id, (uint32_t)i};
		name = json_string_value(fn);
		len = json_string_length(fn);
		if (strcmp(name, "(root)") == 0)
			continue;
		if (len == 0)
			name = "(anonymous)", len = 11;
		x->frame = make_frame(v->p, name, len, url ? json_string_value(url) : NULL,
				      line ? json_integer_value(line) + 1 : 0, v->err);
		if (x->frame == PL_NOID)
			return v->err->code;
	}
	qsort(v->ids, w, sizeof(*v->ids), cmp_v8_id);
	v->nids = 0;
	for (size_t i = 0; i < w; i++) {
		if (v->nids && v->ids[v->nids - 1].id == v->ids[i].id) {
			v->nodes[v->ids[i].index].bad = true;
			bad(v->p, v->ids[i].index + 1, "node id repeats an earlier node's", "node");
			continue;
		}
		v->ids[v->nids++] = v->ids[i];
	}
	return PL_OK;
}

/* Parent links, from `children` (or a node's own `parent`). */
static void v8_links(struct v8 *v, json_t *nodes)
{
	for (size_t i = 0; i < v->n; i++) {
		json_t *nd = json_array_get(nodes, i), *kids = json_object_get(nd, "children"), *c;
		size_t k;

		if (v->nodes[i].bad)
			continue;
		if (kids && !json_is_array(kids)) {
			bad(v->p, i + 1, "node's children is not an array", "node");
			continue;
		}
		json_array_foreach(kids, k, c) {
			uint32_t ci = v8_find(v, c);
			if (ci == UINT32_MAX || ci == i) {
				bad(v->p, i + 1, "child id points nowhere", "node");
				continue;
			}
			if (v->nodes[ci].parent == UINT32_MAX)
				v->nodes[ci].parent = (uint32_t)i;
			else if (v->nodes[ci].parent != i)
				bad(v->p, ci + 1, "node listed under two parents: the first kept", "node");
		}
	}
	for (size_t i = 0; i < v->n; i++) {
		json_t *par = json_object_get(json_array_get(nodes, i), "parent");
		uint32_t pi;
		if (!par || v->nodes[i].bad || v->nodes[i].parent != UINT32_MAX)
			continue;
		if ((pi = v8_find(v, par)) == UINT32_MAX || pi == i)
			bad(v->p, i + 1, "parent id points nowhere", "node");
		else
			v->nodes[i].parent = pi;
	}
}

/* Which nodes reach a root: each walk up stops at a node already judged,
 * so every node is visited once; a walk that meets its own path is a
 * cycle, and every node below a bad one is bad too. */
static void v8_resolve(struct v8 *v)
{
	enum { UNSEEN, ON_PATH, GOOD, BAD };
	unsigned char *state = pl_xcalloc(v->n ? v->n : 1, 1);
	uint32_t *path = pl_xmalloc((v->n ? v->n : 1) * sizeof(*path));

	for (size_t i = 0; i < v->n; i++) {
		size_t np = 0;
		uint32_t j = (uint32_t)i;
		unsigned char outcome = GOOD;

		while (j != UINT32_MAX && state[j] == UNSEEN && !v->nodes[j].bad) {
			state[j] = ON_PATH;
			path[np++] = j;
			j = v->nodes[j].parent;
		}
		if (j != UINT32_MAX)
			outcome = v->nodes[j].bad || state[j] == ON_PATH ? BAD : state[j];
		if (j != UINT32_MAX && state[j] == ON_PATH)
			bad(v->p, j + 1, "parent links loop", "node");
		while (np)
			state[path[--np]] = outcome;
	}
	for (size_t i = 0; i < v->n; i++)
		if (state[i] == BAD)
			v->nodes[i].stack = V8_BAD;
	free(state);
	free(path);
}

/* The stack of node `i`: its frames and its ancestors', root first (V8_BAD
 * when v8_resolve found it does not reach a root, or only (root) ran). */
static enum pl_err v8_stack(struct v8 *v, uint32_t i, uint32_t *out)
{
	struct v8_node *x = &v->nodes[i];
	uint32_t d = 0;

	if (x->stack != PL_NOID) {
		*out = x->stack;
		return PL_OK;
	}
	for (uint32_t j = i; j != UINT32_MAX; j = v->nodes[j].parent) {
		if (v->nodes[j].frame == PL_NOID)
			continue;
		if (d >= v->p->limits.max_depth)
			return pl_fail(v->err, PL_ERR_LIMIT, "raise --max-depth",
				       "V8 node %lld is deeper than %u frames", (long long)x->id,
				       v->p->limits.max_depth);
		v->buf[d++] = v->nodes[j].frame;
	}
	for (uint32_t a = 0, b = d ? d - 1 : 0; a < b; a++, b--) {
		uint32_t t = v->buf[a];
		v->buf[a] = v->buf[b];
		v->buf[b] = t;
	}
	if (d == 0) {
		x->stack = V8_BAD;
		*out = V8_BAD;
		return PL_OK;
	}
	x->stack = pl_intern_stack(v->p, v->thread, v->buf, d, v->err);
	if (x->stack == PL_NOID)
		return v->err->code;
	*out = x->stack;
	return PL_OK;
}

static bool json_num(json_t *j, double *out)
{
	if (!json_is_number(j))
		return false;
	*out = json_number_value(j);
	return isfinite(*out);
}

/* A tick's time (microseconds: startTime plus the deltas so far) into the
 * timeline, in nanoseconds; a negative or overflowing one counts as none. */
static void v8_time(struct pl_profile *p, uint32_t stack, uint32_t event, double t_us,
		    uint64_t period)
{
	if (t_us >= 0 && t_us < 9.2e15)
		pl_add_timed(p, stack, event, (uint64_t)llround(t_us * 1000.0), period);
	else
		pl_note_untimed(p);
}

static enum pl_err v8_ticks(struct v8 *v, json_t *doc)
{
	json_t *samples = json_object_get(doc, "samples"), *deltas = json_object_get(doc, "timeDeltas");
	size_t n = json_array_size(samples);
	double t = 0, end = 0;
	bool has_end;
	enum pl_err rc;

	if (!json_num(json_object_get(doc, "startTime"), &t))
		t = 0;
	has_end = json_num(json_object_get(doc, "endTime"), &end);
	for (size_t i = 0; i < n; i++) {
		uint32_t ni = v8_find(v, json_array_get(samples, i)), stack = V8_BAD;
		double d, next, dur = 0;

		if (!json_num(json_array_get(deltas, i), &d)) {
			bad(v->p, i + 1, "tick without a numeric time delta", "sample");
			continue;
		}
		t += d;
		if (i + 1 < n && json_num(json_array_get(deltas, i + 1), &next))
			dur = next;
		else if (i + 1 == n && has_end)
			dur = end - t;
		if (ni == UINT32_MAX) {
			bad(v->p, i + 1, "sampled node id points nowhere", "sample");
			continue;
		}
		if ((rc = v8_stack(v, ni, &stack)))
			return rc;
		if (stack == V8_BAD) {
			v->p->records_malformed++;
			continue;
		}
		if (!(dur < 9.2e18)) {
			bad(v->p, i + 1, "tick lasts past 2^63 microseconds", "sample");
			continue;
		}
		if (dur >= 1 && (rc = total_fits(v->p, v->ev_time, (uint64_t)llround(dur), v->err)))
			return rc;
		pl_add_weight(v->p, stack, v->ev_samples, 1, 1, true);
		v8_time(v->p, stack, v->ev_samples, t, 1);
		if (dur >= 1) {
			pl_add_weight(v->p, stack, v->ev_time, 1, (uint64_t)llround(dur), true);
			v8_time(v->p, stack, v->ev_time, t, (uint64_t)llround(dur));
		}
		if ((rc = count_record(v->p, v->err)))
			return rc;
	}
	return PL_OK;
}

enum pl_err pl_parse_cpuprofile(struct pl_profile *p, const void *data, size_t n,
				const char *source, struct pl_error *err)
{
	struct v8 v = {.p = p, .err = err};
	json_t *doc, *nodes, *samples, *deltas;
	enum pl_err rc;

	if ((rc = load(data, n, source, "V8 .cpuprofile", &doc, err)))
		return rc;
	nodes = json_object_get(doc, "nodes");
	samples = json_object_get(doc, "samples");
	deltas = json_object_get(doc, "timeDeltas");
	if (!json_is_array(nodes) || !json_is_array(samples) || !json_is_array(deltas)) {
		json_decref(doc);
		return pl_fail(err, PL_ERR_MALFORMED, "pass a V8 .cpuprofile (node --cpu-prof writes one)",
			       "'%s' has no nodes, samples and timeDeltas arrays", source);
	}
	if (json_array_size(samples) != json_array_size(deltas))
		bad(p, 0, "samples and timeDeltas differ in length", "profile");
	if ((v.ev_samples = pl_intern_event_unit(p, "samples", 7, "count", err)) == PL_NOID ||
	    (v.ev_time = pl_intern_event_unit(p, "time", 4, "microseconds", err)) == PL_NOID) {
		json_decref(doc);
		return err->code;
	}
	v.thread = pl_intern_thread(p, -1, -1, PL_NOID);
	v.buf = pl_xmalloc((size_t)p->limits.max_depth * sizeof(uint32_t));
	if (!(rc = v8_nodes(&v, nodes))) {
		v8_links(&v, nodes);
		v8_resolve(&v);
		rc = v8_ticks(&v, doc);
	}
	free(v.nodes);
	free(v.ids);
	free(v.buf);
	json_decref(doc);
	return rc;
}

/* ---------------------------------------------------------- speedscope */

struct ss {
	struct pl_profile *p;
	struct pl_error *err;
	json_t *frames;      /* shared.frames */
	uint32_t *frame;     /* frame index -> frame id, PL_NOID until made */
	size_t nframes;
	uint32_t *buf;       /* a stack, root first */
	uint64_t record;
};

/* Frame index `j` (a JSON value) as a frame id; PL_NOID with *bad when it
 * names no frame. */
static uint32_t ss_frame(struct ss *s, json_t *j, bool *badp)
{
	json_int_t k;
	json_t *f, *name, *file, *line;

	if (!json_is_integer(j) || (k = json_integer_value(j)) < 0 || (size_t)k >= s->nframes) {
		*badp = true;
		return PL_NOID;
	}
	if (s->frame[k] != PL_NOID)
		return s->frame[k];
	f = json_array_get(s->frames, (size_t)k);
	name = json_object_get(f, "name");
	file = json_object_get(f, "file");
	line = json_object_get(f, "line");
	if (!json_is_string(name) || (file && !json_is_string(file))) {
		*badp = true;
		return PL_NOID;
	}
	s->frame[k] = make_frame(s->p, json_string_value(name), json_string_length(name),
				 file ? json_string_value(file) : NULL,
				 json_is_integer(line) ? json_integer_value(line) : 0, s->err);
	return s->frame[k];
}

/* The event of a unit, and the factor to its integer unit. */
static uint32_t ss_event(struct ss *s, const char *unit, double *factor)
{
	static const struct { const char *unit, *event, *as; double f; } units[] = {
		{"none", "weight", "count", 1}, {"bytes", "bytes", "bytes", 1},
		{"nanoseconds", "time", "nanoseconds", 1}, {"microseconds", "time", "nanoseconds", 1e3},
		{"milliseconds", "time", "nanoseconds", 1e6}, {"seconds", "time", "nanoseconds", 1e9},
	};

	for (size_t i = 0; i < PL_ARRAY_LEN(units); i++)
		if (strcmp(unit, units[i].unit) == 0) {
			*factor = units[i].f;
			return pl_intern_event_unit(s->p, units[i].event, strlen(units[i].event),
						    units[i].as, s->err);
		}
	pl_fail(s->err, PL_ERR_MALFORMED, "use a unit of the speedscope schema",
		"speedscope unit '%s' is none of none, bytes, nanoseconds, microseconds, milliseconds, seconds",
		unit);
	return PL_NOID;
}

/* How a profile's values read as times: factor to nanoseconds, and
 * whether its unit is one of time at all. */
struct ss_clock {
	double factor;
	bool timed;
};

/* A weight in the event's integer unit: false when it is not one. */
static bool ss_weight(double w, double factor, uint64_t *out)
{
	double v = w * factor;

	if (!isfinite(w) || w < 0 || !(v < 9.2e18))
		return false;
	*out = (uint64_t)llround(v);   /* 0 (a weight below half a unit) is skipped */
	return true;
}

/* A record's time in the profile's unit into the timeline (nanoseconds);
 * a profile without time units, or a time before 0 or past 2^63 ns, counts
 * the record untimed. */
static void ss_time(struct pl_profile *p, uint32_t stack, uint32_t event, uint64_t weight,
		    const struct ss_clock *clock, double at)
{
	double ns = at * clock->factor;

	if (clock->timed && ns >= 0 && ns < 9.2e18)
		pl_add_timed(p, stack, event, (uint64_t)llround(ns), weight);
	else
		pl_note_untimed(p);
}

static enum pl_err ss_add(struct ss *s, uint32_t thread, uint32_t event, uint32_t depth,
			  uint64_t weight, const struct ss_clock *clock, double at)
{
	uint32_t stack;

	if (weight == 0 || depth == 0) {
		s->p->records_skipped++;
		return PL_OK;
	}
	stack = pl_intern_stack(s->p, thread, s->buf, depth, s->err);
	if (stack == PL_NOID)
		return s->err->code;
	if (total_fits(s->p, event, weight, s->err))
		return s->err->code;
	pl_add_weight(s->p, stack, event, 1, weight, true);
	ss_time(s->p, stack, event, weight, clock, at);
	return count_record(s->p, s->err);
}

static enum pl_err ss_sampled(struct ss *s, json_t *prof, uint32_t thread, uint32_t event,
			      const struct ss_clock *clock)
{
	json_t *samples = json_object_get(prof, "samples"), *weights = json_object_get(prof, "weights");
	size_t n = json_array_size(samples);
	double at = 0, start;   /* the next sample's start, in the profile's unit */
	enum pl_err rc;

	if (json_num(json_object_get(prof, "startValue"), &start))
		at = start;
	if (!json_is_array(samples) || !json_is_array(weights) || json_array_size(weights) != n) {
		bad(s->p, s->record, "sampled profile without samples and as many weights", "profile");
		return PL_OK;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *st = json_array_get(samples, i), *f;
		size_t k;
		uint64_t w;
		bool badp = false;
		double wv = json_is_number(json_array_get(weights, i)) ?
			json_number_value(json_array_get(weights, i)) : -1;

		double sample_at = at;

		s->record++;
		if (!json_is_array(st) || !ss_weight(wv, clock->factor, &w)) {
			bad(s->p, s->record, "sample is not an array, or its weight not a number >= 0", "sample");
			continue;
		}
		at += wv;   /* a sample left out below still took its time */
		if (json_array_size(st) > s->p->limits.max_depth)
			return pl_fail(s->err, PL_ERR_LIMIT, "raise --max-depth",
				       "speedscope sample %llu is deeper than %u frames",
				       (unsigned long long)s->record, s->p->limits.max_depth);
		json_array_foreach(st, k, f) {
			s->buf[k] = ss_frame(s, f, &badp);
			if (badp)
				break;
			if (s->buf[k] == PL_NOID)
				return s->err->code;
		}
		if (badp) {
			bad(s->p, s->record, "sample's frame index points nowhere", "sample");
			continue;
		}
		if ((rc = ss_add(s, thread, event, (uint32_t)json_array_size(st), w, clock, sample_at)))
			return rc;
	}
	return PL_OK;
}

static enum pl_err ss_evented(struct ss *s, json_t *prof, uint32_t thread, uint32_t event,
			      const struct ss_clock *clock)
{
	json_t *events = json_object_get(prof, "events"), *e;
	uint32_t depth = 0;
	double last = 0;
	size_t i;
	enum pl_err rc;

	if (!json_is_array(events)) {
		bad(s->p, s->record, "evented profile without events", "profile");
		return PL_OK;
	}
	json_array_foreach(events, i, e) {
		json_t *type = json_object_get(e, "type");
		double at;
		uint64_t w;
		bool badp = false;
		uint32_t f;

		s->record++;
		if (!json_num(json_object_get(e, "at"), &at) || !json_is_string(type) ||
		    (i && at < last)) {
			bad(s->p, s->record, "event without a type and a time in order: profile stops here", "event");
			return PL_OK;
		}
		if (i && depth && at > last) {
			if (!ss_weight(at - last, clock->factor, &w)) {
				bad(s->p, s->record, "interval too long: profile stops here", "event");
				return PL_OK;
			}
			if ((rc = ss_add(s, thread, event, depth, w, clock, last)))
				return rc;
		}
		last = at;
		f = ss_frame(s, json_object_get(e, "frame"), &badp);
		if (!badp && f == PL_NOID)
			return s->err->code;
		if (badp) {
			bad(s->p, s->record, "event's frame index points nowhere: profile stops here", "event");
			return PL_OK;
		}
		if (strcmp(json_string_value(type), "O") == 0) {
			if (depth >= s->p->limits.max_depth)
				return pl_fail(s->err, PL_ERR_LIMIT, "raise --max-depth",
					       "speedscope event %llu opens more than %u frames",
					       (unsigned long long)s->record, s->p->limits.max_depth);
			s->buf[depth++] = f;
		} else if (strcmp(json_string_value(type), "C") == 0 && depth && s->buf[depth - 1] == f) {
			depth--;
		} else {
			bad(s->p, s->record, "close of a frame that is not open, or an unknown type: profile stops here", "event");
			return PL_OK;
		}
	}
	if (depth)
		bad(s->p, s->record, "frames left open at the end", "profile");
	return PL_OK;
}

enum pl_err pl_parse_speedscope(struct pl_profile *p, const void *data, size_t n,
				const char *source, struct pl_error *err)
{
	struct ss s = {.p = p, .err = err};
	json_t *doc, *profiles, *prof;
	enum pl_err rc = PL_OK;
	size_t i;

	if ((rc = load(data, n, source, "speedscope", &doc, err)))
		return rc;
	s.frames = json_object_get(json_object_get(doc, "shared"), "frames");
	profiles = json_object_get(doc, "profiles");
	if (!json_is_array(s.frames) || !json_is_array(profiles)) {
		json_decref(doc);
		return pl_fail(err, PL_ERR_MALFORMED, "pass a speedscope file (speedscope's file-format-schema.json)",
			       "'%s' has no shared.frames and profiles arrays", source);
	}
	s.nframes = json_array_size(s.frames);
	s.frame = pl_xmalloc((s.nframes ? s.nframes : 1) * sizeof(uint32_t));
	memset(s.frame, 0xff, (s.nframes ? s.nframes : 1) * sizeof(uint32_t));
	s.buf = pl_xmalloc((size_t)p->limits.max_depth * sizeof(uint32_t));
	json_array_foreach(profiles, i, prof) {
		json_t *type = json_object_get(prof, "type"), *unit = json_object_get(prof, "unit");
		json_t *name = json_object_get(prof, "name");
		uint32_t ev, thread, comm = PL_NOID;
		struct ss_clock clock = {1, false};

		if (!json_is_string(type) || !json_is_string(unit)) {
			bad(p, s.record, "profile without a type and a unit", "profile");
			continue;
		}
		if ((ev = ss_event(&s, json_string_value(unit), &clock.factor)) == PL_NOID) {
			rc = err->code;
			break;
		}
		if (json_is_string(name) && json_string_length(name))
			comm = pl_intern_str(p, json_string_value(name), json_string_length(name));
		thread = pl_intern_thread(p, -1, -1, comm);
		clock.timed = strcmp(pl_str(p, p->events[ev].name), "time") == 0;
		if (strcmp(json_string_value(type), "sampled") == 0)
			rc = ss_sampled(&s, prof, thread, ev, &clock);
		else if (strcmp(json_string_value(type), "evented") == 0)
			rc = ss_evented(&s, prof, thread, ev, &clock);
		else
			bad(p, s.record, "profile type is neither sampled nor evented", "profile");
		if (rc)
			break;
	}
	free(s.frame);
	free(s.buf);
	json_decref(doc);
	return rc;
}

/* ------------------------------------------------------------ detection */

enum pl_format pl_json_profile_sniff(const char *head, size_t n)
{
	size_t i = 0;

	if (n >= 3 && memcmp(head, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
		i++;
	if (i >= n || head[i] != '{')
		return PL_FMT_AUTO;
	if (memmem(head, n, "speedscope.app/file-format-schema.json", 38) ||
	    (memmem(head, n, "\"shared\"", 8) && memmem(head, n, "\"profiles\"", 10)))
		return PL_FMT_SPEEDSCOPE;
	if (memmem(head, n, "\"nodes\"", 7) &&
	    (memmem(head, n, "\"callFrame\"", 11) || memmem(head, n, "\"timeDeltas\"", 12)))
		return PL_FMT_CPUPROFILE;
	return PL_FMT_AUTO;
}
