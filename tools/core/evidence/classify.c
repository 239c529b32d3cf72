/* classify.c - the classification engine (classify.h).
 *
 * Compiling: every pattern of the rules document is compiled once with
 * regcomp(REG_EXTENDED | REG_NOSUB); event sets become bits.  Matching:
 * each function of a profile is tested once against every rule, giving a
 * 64-bit mask per function (a folded "_[k]"/"_[j]" suffix is read as the
 * frame's kind and stripped before matching).  Per event, one pass over
 * the stacks ORs the masks of a stack's frames: a rule's inclusive weight
 * is the weight of the stacks it touches (counted once per stack, so
 * nested matches such as malloc -> _int_malloc never add up twice), its
 * self weight that of the stacks whose leaf it matches; a rule whose
 * "unless" names rules the stack also matches loses the stack (one kind
 * of wait per stack: preempted before I/O, disk before peer).  Metric rules
 * read figures computed in the same pass or in one of their own.
 *
 * Thread gates: a rule with a "thread" clause (busy_wait) keeps a stack
 * only when the stack's thread passes it: the rule's stacks hold at least
 * min_share_percent of the thread's weight, and the thread ran at least
 * min_core_percent of one CPU over the span its timed samples cover (its
 * CPU-time periods, in ns, over last - first + one mean period).  Where
 * the span or the unit is not known (folded input, cycles) the core test
 * cannot be made and the share decides alone, which the candidate says.
 * The gate is computed once per event (struct thread_gate) and applied
 * before "unless", so a poll loop of a thread that sleeps stays a system
 * call.  The span is read from every timed sample of the event: under a
 * time window (view.h), whose weights are the window's, a thread's share
 * of a CPU is still that of its whole recording.
 *
 * Everything is sorted with explicit tie-breaks (weight, then samples,
 * then function id; rule order), so the same analysis always gives the
 * same candidates in the same order.
 */
#include "classify.h"
#include "base/schemas.h"

#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#define SETS_MAX 16
#define MATCHERS_MAX 16
#define GATED_MAX 4              /* rules with a thread gate */
#define GATE_THREADS_TOP 3       /* threads a gated candidate lists */

enum need { NEED_NO = 0, NEED_HELPFUL, NEED_NEEDED };
enum metric {
	METRIC_NONE = 0,
	METRIC_SAMPLES,
	METRIC_TRUNCATED,
	METRIC_UNKNOWN_LEAF,
	METRIC_UNKNOWN_FRAME,
	METRIC_DWARF_TRUNCATED
};

static const char *const metric_names[] = {
	[METRIC_NONE] = "", [METRIC_SAMPLES] = "samples",
	[METRIC_TRUNCATED] = "truncated_stack_percent",
	[METRIC_UNKNOWN_LEAF] = "unknown_leaf_percent",
	[METRIC_UNKNOWN_FRAME] = "unknown_frame_percent",
	[METRIC_DWARF_TRUNCATED] = "dwarf_truncated_stack_percent",
};

struct event_set {
	const char *name;
	const char *not_matched;
	regex_t re;
	bool compiled;
};

struct matcher {
	regex_t sym, dso, not_sym, not_dso;
	bool has_sym, has_dso, has_not_sym, has_not_dso;
	unsigned kinds;          /* 1 << enum pl_kind; 0 = any */
};

struct rule {
	json_t *doc;             /* borrowed from the rules document */
	const char *id;
	bool data_quality;
	uint32_t events, skip, whole;  /* event-set bits; events 0 = all */
	struct matcher m[MATCHERS_MAX];
	size_t nm;
	bool inclusive;
	bool per_function;       /* figure: the heaviest matched function alone */
	uint64_t unless;         /* rule bits: a stack one of them matches is not this rule's */
	enum metric metric;
	bool below;
	double threshold;
	regex_t roots;
	bool has_roots;
	enum need call_graph, source_lines;
	int gate;                /* index into the thread gates, -1: none */
	double min_share, min_core;
	bool callers;            /* a self rule whose samples stand for their callers */
};

struct pl_rules {
	json_t *doc;
	int version;
	int own_rule;            /* the rule whose functions are the program's own
				  * code (own_code_rule), -1: none */
	struct event_set sets[SETS_MAX];
	size_t nsets;
	struct rule rules[PL_RULES_MAX];
	size_t n;
	uint32_t gated[GATED_MAX];  /* rule indexes with a thread gate */
	size_t ngated;
	uint64_t gated_bits;
};

/* One thread's figures under one event, for the thread gates. */
struct gate_thread {
	struct pl_amount total;
	struct pl_amount rule[GATED_MAX];  /* stacks the gated rule matches */
	uint64_t first_ns, last_ns, timed_period, timed_n;
	double core;                       /* percent of one CPU; -1 unknown */
	uint64_t pass;                     /* gated rule bits it passes */
};

struct thread_gate {
	uint32_t event;                    /* PL_NOID: not computed */
	struct gate_thread *t;             /* [nthreads] */
};

/* ------------------------------------------------------------ compiling */

static enum pl_err bad_rules(struct pl_error *err, const char *where, const char *what)
{
	return pl_fail(err, PL_ERR_INTERNAL,
		       "fix " PL_RULES_PATH " (check it against schemas/classify-rules.schema.json)",
		       "classification rules: %s: %s", where, what);
}

static enum pl_err compile_re(regex_t *re, const char *pattern, const char *where,
			      struct pl_error *err)
{
	int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
	char msg[128];

	if (rc == 0)
		return PL_OK;
	regerror(rc, re, msg, sizeof(msg));
	return bad_rules(err, where, msg);
}

static enum pl_err compile_sets(struct pl_rules *r, json_t *sets, struct pl_error *err)
{
	const char *name;
	json_t *s;
	enum pl_err rc;

	if (!json_is_object(sets) || json_object_size(sets) > SETS_MAX)
		return bad_rules(err, "event_sets", "must be an object of at most 16 sets");
	json_object_foreach(sets, name, s) {
		struct event_set *es = &r->sets[r->nsets];
		const char *pat = json_string_value(json_object_get(s, "pattern"));
		es->name = name;
		es->not_matched = json_string_value(json_object_get(s, "not_matched"));
		if (!pat || !es->not_matched)
			return bad_rules(err, name, "an event set needs pattern and not_matched");
		if ((rc = compile_re(&es->re, pat, name, err)))
			return rc;
		es->compiled = true;
		r->nsets++;
	}
	return PL_OK;
}

static enum pl_err set_bits(const struct pl_rules *r, json_t *names, const char *where,
			    uint32_t *bits, struct pl_error *err)
{
	json_t *n;
	size_t i;

	*bits = 0;
	json_array_foreach(names, i, n) {
		size_t k = 0;
		while (k < r->nsets && strcmp(r->sets[k].name, json_string_value(n) ? json_string_value(n) : "") != 0)
			k++;
		if (k == r->nsets)
			return bad_rules(err, where, "names an event set that event_sets does not define");
		*bits |= 1u << k;
	}
	return PL_OK;
}

static enum need parse_need(json_t *requires, const char *key)
{
	const char *v = json_string_value(json_object_get(requires, key));

	if (v && strcmp(v, "needed") == 0)
		return NEED_NEEDED;
	if (v && strcmp(v, "helpful") == 0)
		return NEED_HELPFUL;
	return NEED_NO;
}

/* The optional pattern `key` of a matcher into *re; *has says it is set. */
static enum pl_err compile_opt_re(regex_t *re, bool *has, json_t *spec, const char *key,
				  const char *id, struct pl_error *err)
{
	const char *pat = json_string_value(json_object_get(spec, key));
	enum pl_err rc;

	if (!pat)
		return PL_OK;
	if ((rc = compile_re(re, pat, id, err)))
		return rc;
	*has = true;
	return PL_OK;
}

static enum pl_err compile_matcher(struct matcher *m, json_t *spec, const char *id,
				   struct pl_error *err)
{
	json_t *kinds = json_object_get(spec, "kinds"), *k;
	enum pl_err rc;
	size_t i;

	if ((rc = compile_opt_re(&m->sym, &m->has_sym, spec, "symbol", id, err)) ||
	    (rc = compile_opt_re(&m->dso, &m->has_dso, spec, "dso", id, err)) ||
	    (rc = compile_opt_re(&m->not_sym, &m->has_not_sym, spec, "not_symbol", id, err)) ||
	    (rc = compile_opt_re(&m->not_dso, &m->has_not_dso, spec, "not_dso", id, err)))
		return rc;
	json_array_foreach(kinds, i, k) {
		for (unsigned kind = PL_KIND_USER; kind <= PL_KIND_UNKNOWN; kind++)
			if (json_string_value(k) && strcmp(json_string_value(k), pl_kind_name((enum pl_kind)kind)) == 0)
				m->kinds |= 1u << kind;
	}
	if (!m->has_sym && !m->has_dso && !m->kinds)
		return bad_rules(err, id, "a function matcher needs symbol, dso or kinds");
	return PL_OK;
}

static enum pl_err compile_metric(struct rule *ru, json_t *match, struct pl_error *err)
{
	const char *name = json_string_value(json_object_get(match, "metric"));
	json_t *below = json_object_get(match, "below"), *at_least = json_object_get(match, "at_least");
	const char *roots = json_string_value(json_object_get(match, "roots"));

	for (size_t i = 1; i < PL_ARRAY_LEN(metric_names); i++)
		if (strcmp(metric_names[i], name) == 0)
			ru->metric = (enum metric)i;
	if (ru->metric == METRIC_NONE)
		return bad_rules(err, ru->id, "unknown metric");
	if (!json_is_number(below) == !json_is_number(at_least))
		return bad_rules(err, ru->id, "a metric rule needs exactly one of below and at_least");
	ru->below = json_is_number(below);
	ru->threshold = json_number_value(ru->below ? below : at_least);
	if ((ru->metric == METRIC_TRUNCATED || ru->metric == METRIC_DWARF_TRUNCATED) != (roots != NULL))
		return bad_rules(err, ru->id, "roots belongs to the truncated stack metrics, which need it");
	if (roots) {
		enum pl_err rc = compile_re(&ru->roots, roots, ru->id, err);
		if (rc)
			return rc;
		ru->has_roots = true;
	}
	return PL_OK;
}

/* A function rule's "thread" clause: the rule keeps the stacks of the
 * threads that pass it (see the top of this file). */
static enum pl_err compile_gate(struct pl_rules *r, struct rule *ru, json_t *thread, struct pl_error *err)
{
	size_t i = (size_t)(ru - r->rules);

	ru->gate = -1;
	if (!thread)
		return PL_OK;
	if (!json_is_number(json_object_get(thread, "min_share_percent")) ||
	    !json_is_number(json_object_get(thread, "min_core_percent")))
		return bad_rules(err, ru->id, "thread needs min_share_percent and min_core_percent");
	if (r->ngated == GATED_MAX || ru->per_function)
		return bad_rules(err, ru->id, "at most 4 rules have a thread gate, none of them per_function");
	ru->min_share = json_number_value(json_object_get(thread, "min_share_percent"));
	ru->min_core = json_number_value(json_object_get(thread, "min_core_percent"));
	ru->gate = (int)r->ngated;
	r->gated[r->ngated++] = (uint32_t)i;
	r->gated_bits |= UINT64_C(1) << i;
	return PL_OK;
}

static enum pl_err compile_rule(struct pl_rules *r, struct rule *ru, json_t *doc,
				struct pl_error *err)
{
	json_t *match = json_object_get(doc, "match"), *fns = json_object_get(match, "functions"), *f;
	const char *group = json_string_value(json_object_get(doc, "group"));
	const char *weight = json_string_value(json_object_get(match, "weight"));
	enum pl_err rc;
	size_t i;

	ru->doc = doc;
	ru->gate = -1;
	ru->id = json_string_value(json_object_get(doc, "id"));
	if (!ru->id || !json_is_object(match) || !group || !json_string_value(json_object_get(doc, "label")))
		return bad_rules(err, ru->id ? ru->id : "a rule", "needs id, label, group and match");
	ru->data_quality = strcmp(group, "data_quality") == 0;
	if ((rc = set_bits(r, json_object_get(match, "events"), ru->id, &ru->events, err)) ||
	    (rc = set_bits(r, json_object_get(match, "skip_events"), ru->id, &ru->skip, err)) ||
	    (rc = set_bits(r, json_object_get(match, "whole_event"), ru->id, &ru->whole, err)))
		return rc;
	ru->call_graph = parse_need(json_object_get(doc, "requires"), "call_graph");
	ru->source_lines = parse_need(json_object_get(doc, "requires"), "source_lines");
	if (json_object_get(match, "metric"))
		return compile_metric(ru, match, err);
	if (json_array_size(fns) == 0 || json_array_size(fns) > MATCHERS_MAX || !weight ||
	    !json_is_number(json_object_get(match, "min_percent")))
		return bad_rules(err, ru->id, "a function rule needs 1 to 16 functions, weight and min_percent");
	ru->inclusive = strcmp(weight, "inclusive") == 0;
	ru->per_function = json_is_true(json_object_get(match, "per_function"));
	if ((rc = compile_gate(r, ru, json_object_get(match, "thread"), err)))
		return rc;
	ru->callers = json_is_true(json_object_get(match, "callers"));
	if (ru->callers && (ru->inclusive || ru->per_function))
		return bad_rules(err, ru->id, "callers belongs to a self-weight rule that is not per_function");
	ru->threshold = json_number_value(json_object_get(match, "min_percent"));
	json_array_foreach(fns, i, f) {
		if ((rc = compile_matcher(&ru->m[i], f, ru->id, err)))
			return rc;
		ru->nm++;
	}
	return PL_OK;
}

static void free_rule(struct rule *ru)
{
	for (size_t i = 0; i < ru->nm; i++) {
		if (ru->m[i].has_sym)
			regfree(&ru->m[i].sym);
		if (ru->m[i].has_dso)
			regfree(&ru->m[i].dso);
		if (ru->m[i].has_not_sym)
			regfree(&ru->m[i].not_sym);
		if (ru->m[i].has_not_dso)
			regfree(&ru->m[i].not_dso);
	}
	if (ru->has_roots)
		regfree(&ru->roots);
}

void pl_rules_free(struct pl_rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nsets; i++)
		if (r->sets[i].compiled)
			regfree(&r->sets[i].re);
	for (size_t i = 0; i < r->n; i++)
		free_rule(&r->rules[i]);
	json_decref(r->doc);
	free(r);
}

/* A function rule's "unless": the ids of other function rules, as bits. */
static enum pl_err compile_unless(struct pl_rules *r, struct rule *ru, json_t *ids,
				  struct pl_error *err)
{
	json_t *id;
	size_t i;

	json_array_foreach(ids, i, id) {
		size_t k = 0;
		while (k < r->n && strcmp(r->rules[k].id, json_string_value(id) ? json_string_value(id) : "") != 0)
			k++;
		if (k == r->n || &r->rules[k] == ru || r->rules[k].metric != METRIC_NONE)
			return bad_rules(err, ru->id, "unless names a rule that is not another function rule");
		ru->unless |= UINT64_C(1) << k;
	}
	return PL_OK;
}

enum pl_err pl_rules_compile(json_t *doc, struct pl_rules **out, struct pl_error *err)
{
	struct pl_rules *r = pl_xcalloc(1, sizeof(*r));
	json_t *rules = json_object_get(doc, "rules"), *ru;
	enum pl_err rc;
	size_t i;

	*out = NULL;
	r->doc = json_incref(doc);
	r->version = (int)json_integer_value(json_object_get(doc, "version"));
	if (r->version < 1 || !json_is_array(rules) || json_array_size(rules) == 0 ||
	    json_array_size(rules) > PL_RULES_MAX || !json_is_object(json_object_get(doc, "evidence_texts"))) {
		rc = bad_rules(err, "document", "needs version >= 1, evidence_texts and 1 to 64 rules");
		goto fail;
	}
	if ((rc = compile_sets(r, json_object_get(doc, "event_sets"), err)))
		goto fail;
	json_array_foreach(rules, i, ru) {
		for (size_t k = 0; k < i; k++)
			if (strcmp(r->rules[k].id, json_string_value(json_object_get(ru, "id")) ?
				   json_string_value(json_object_get(ru, "id")) : "") == 0) {
				rc = bad_rules(err, r->rules[k].id, "two rules have this id");
				goto fail;
			}
		r->n++;
		if ((rc = compile_rule(r, &r->rules[i], ru, err)))
			goto fail;
	}
	json_array_foreach(rules, i, ru)
		if ((rc = compile_unless(r, &r->rules[i], json_object_get(json_object_get(ru, "match"), "unless"), err)))
			goto fail;
	r->own_rule = -1;
	for (size_t k = 0; k < r->n && json_string_value(json_object_get(doc, "own_code_rule")); k++)
		if (strcmp(r->rules[k].id, json_string_value(json_object_get(doc, "own_code_rule"))) == 0 &&
		    r->rules[k].metric == METRIC_NONE)
			r->own_rule = (int)k;
	if (json_object_get(doc, "own_code_rule") && r->own_rule < 0) {
		rc = bad_rules(err, "own_code_rule", "names no function rule");
		goto fail;
	}
	*out = r;
	return PL_OK;
fail:
	pl_rules_free(r);
	return rc;
}

static pthread_mutex_t builtin_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pl_rules *builtin;

enum pl_err pl_rules_builtin(const struct pl_rules **out, struct pl_error *err)
{
	enum pl_err rc = PL_OK;

	pthread_mutex_lock(&builtin_lock);
	if (!builtin) {
		const char *text = pl_schema_text(PL_RULES_PATH);
		json_error_t je;
		json_t *doc = text ? json_loads(text, 0, &je) : NULL;
		if (!doc)
			rc = bad_rules(err, PL_RULES_PATH, text ? je.text : "not embedded in this build");
		else
			rc = pl_rules_compile(doc, &builtin, err);
		json_decref(doc);
	}
	pthread_mutex_unlock(&builtin_lock);
	*out = builtin;
	return rc;
}

/* The embedded event sets alone: names and patterns copied out of the
 * document (which is freed before any pattern is compiled, so what stays
 * fills its holes), each pattern compiled when first asked (glibc's
 * compiled form of one takes about 17 kB).  The zygote holds what the
 * server asked before its fork, and each spare copies the zygote's heap,
 * so little is kept: list_hotspots' "off_cpu" (tools/common.c). */
static struct {
	char *name, *pattern;
	regex_t re;
	int state;               /* 0 not compiled, 1 compiled, -1 refused */
} builtin_sets[SETS_MAX];
static size_t builtin_nsets;
static bool builtin_sets_done;

static void load_builtin_sets_locked(void)
{
	const char *text = pl_schema_text(PL_RULES_PATH);
	json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
	json_t *sets = json_object_get(doc, "event_sets"), *s;
	const char *name;

	builtin_sets_done = true;
	json_object_foreach(sets, name, s) {
		const char *pat = json_string_value(json_object_get(s, "pattern"));
		if (builtin_nsets == SETS_MAX || !pat)
			continue;
		builtin_sets[builtin_nsets].name = pl_xstrdup(name);
		builtin_sets[builtin_nsets++].pattern = pl_xstrdup(pat);
	}
	json_decref(doc);
}

void pl_rules_builtin_sets_prepare(void)
{
	pthread_mutex_lock(&builtin_lock);
	if (!builtin_sets_done)
		load_builtin_sets_locked();
	pthread_mutex_unlock(&builtin_lock);
}

bool pl_rules_builtin_event_in_set(const char *set, const char *event)
{
	const regex_t *re = NULL;

	pthread_mutex_lock(&builtin_lock);
	if (!builtin_sets_done)
		load_builtin_sets_locked();
	for (size_t i = 0; i < builtin_nsets; i++)
		if (strcmp(builtin_sets[i].name, set) == 0) {
			if (builtin_sets[i].state == 0)
				builtin_sets[i].state = regcomp(&builtin_sets[i].re, builtin_sets[i].pattern,
								REG_EXTENDED | REG_NOSUB) == 0 ? 1 : -1;
			if (builtin_sets[i].state == 1)
				re = &builtin_sets[i].re;
			break;
		}
	pthread_mutex_unlock(&builtin_lock);
	return re && event && regexec(re, event, 0, NULL, 0) == 0;
}

int pl_rules_version(const struct pl_rules *r)
{
	return r->version;
}

size_t pl_rules_count(const struct pl_rules *r)
{
	return r->n;
}

json_t *pl_rules_forbidden(const struct pl_rules *r)
{
	return json_object_get(r->doc, "forbidden_conclusions");
}

/* ------------------------------------------------------------- matching */

static bool rule_re_match(const regex_t *re, const char *s)
{
	return regexec(re, s ? s : "", 0, NULL, 0) == 0;
}

static bool matcher_hits(const struct matcher *m, const char *sym, const char *dso,
			 enum pl_kind kind)
{
	if (m->kinds && !(m->kinds & (1u << kind)))
		return false;
	if (m->has_sym && !rule_re_match(&m->sym, sym))
		return false;
	if (m->has_dso && !(dso && rule_re_match(&m->dso, dso)))
		return false;
	if (m->has_not_sym && rule_re_match(&m->not_sym, sym))
		return false;
	return !m->has_not_dso || !dso || !rule_re_match(&m->not_dso, dso);
}

/* Folded input marks kernel and JIT frames with "_[k]" and "_[j]": read
 * the kind from the mark and match the bare name. */
static char *folded_name(const char *sym, enum pl_kind *kind)
{
	size_t n = sym ? strlen(sym) : 0;

	if (n > 4 && sym[n - 4] == '_' && sym[n - 3] == '[' && sym[n - 1] == ']' &&
	    (sym[n - 2] == 'k' || sym[n - 2] == 'j')) {
		*kind = sym[n - 2] == 'k' ? PL_KIND_KERNEL : PL_KIND_JIT;
		return pl_xstrndup(sym, n - 4);
	}
	return NULL;
}

static uint64_t func_mask(const struct pl_rules *r, const struct pl_profile *p, uint32_t f)
{
	const struct pl_func *fn = &p->funcs[f];
	enum pl_kind kind = (enum pl_kind)fn->kind;
	const char *sym = pl_str(p, fn->symbol), *dso = pl_str(p, fn->dso);
	char *bare = kind == PL_KIND_UNKNOWN ? folded_name(sym, &kind) : NULL;
	uint64_t mask = 0;

	for (size_t i = 0; i < r->n; i++) {
		const struct rule *ru = &r->rules[i];
		for (size_t k = 0; k < ru->nm; k++)
			if (matcher_hits(&ru->m[k], bare ? bare : sym, dso, kind)) {
				mask |= UINT64_C(1) << i;
				break;
			}
	}
	free(bare);
	return mask;
}

uint64_t pl_rules_stack_mask(const struct pl_rules *r, uint64_t any)
{
	uint64_t out = any;

	for (size_t i = 0; i < r->n; i++)
		if ((any & r->rules[i].unless) != 0)
			out &= ~(UINT64_C(1) << i);
	return out;
}

void pl_classifier_init(struct pl_classifier *c, const struct pl_rules *r,
			const struct pl_profile *p, const char *analysis_id)
{
	size_t n = pl_nfuncs(p);

	c->rules = r;
	c->p = p;
	c->analysis_id = analysis_id;
	c->func_mask = pl_xcalloc(n ? n : 1, sizeof(uint64_t));
	for (uint32_t f = 0; f < n; f++)
		c->func_mask[f] = func_mask(r, p, f);
	c->gate = pl_xcalloc(1, sizeof(*c->gate));
	c->gate->event = PL_NOID;
}

void pl_classifier_release(struct pl_classifier *c)
{
	free(c->func_mask);
	c->func_mask = NULL;
	if (c->gate)
		free(c->gate->t);
	free(c->gate);
	c->gate = NULL;
}

/* ---------------------------------------------------------- thread gates */

/* Each thread's weight and the weight of each gated rule's stacks in it
 * (as matched, after unless), under `event`. */
static void gate_weights(const struct pl_classifier *c, uint32_t event, struct gate_thread *t)
{
	const struct pl_profile *p = c->p;
	const struct pl_rules *r = c->rules;

	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_stack *st = &p->stacks[s];
		const struct pl_weight *w = pl_stack_weight(p, s, event);
		struct gate_thread *g = &t[st->thread];
		uint64_t any = 0;

		if (!w)
			continue;
		g->total.samples += w->samples;
		g->total.period += w->period;
		for (uint32_t d = 0; d < st->depth; d++)
			any |= c->func_mask[p->frames[st->frames[d]].func];
		any = pl_rules_stack_mask(r, any);
		for (size_t k = 0; k < r->ngated; k++)
			if (any & (UINT64_C(1) << r->gated[k])) {
				g->rule[k].samples += w->samples;
				g->rule[k].period += w->period;
			}
	}
}

/* Each thread's share of one CPU over the span of its timed samples,
 * when the event's periods are CPU time in ns; -1 where unknown. */
static void gate_cores(const struct pl_profile *p, uint32_t event, struct gate_thread *t, size_t nt)
{
	bool ns = strcmp(pl_event_unit(p, event), "ns") == 0;

	for (size_t i = 0; ns && i < p->timed.n; i++) {
		const struct pl_timed *x = &p->timed.v[i];
		struct gate_thread *g;
		if (x->event != event || x->stack >= pl_nstacks(p))
			continue;
		g = &t[p->stacks[x->stack].thread];
		if (!g->timed_n || x->time_ns < g->first_ns)
			g->first_ns = x->time_ns;
		if (!g->timed_n || x->time_ns > g->last_ns)
			g->last_ns = x->time_ns;
		g->timed_period += x->period;
		g->timed_n++;
	}
	for (size_t i = 0; i < nt; i++) {
		struct gate_thread *g = &t[i];
		double span = (double)(g->last_ns - g->first_ns) + (double)g->timed_period / (double)(g->timed_n ? g->timed_n : 1);
		g->core = -1;
		if (ns && g->timed_n >= 2 && span > 0) {
			g->core = 100.0 * (double)g->timed_period / span;
			g->core = g->core > 100.0 ? 100.0 : round(g->core * 1e4) / 1e4;
		}
	}
}

static double share_of(struct pl_amount part, struct pl_amount whole)
{
	return whole.period ? round((double)part.period * 100.0 / (double)whole.period * 1e4) / 1e4 : 0.0;
}

static size_t r_index(const struct pl_rules *r, const struct rule *ru)
{
	return (size_t)(ru - r->rules);
}

/* The thread gates of `event`, computed when first asked for it. */
static const struct thread_gate *gate_for(const struct pl_classifier *c, uint32_t event)
{
	const struct pl_rules *r = c->rules;
	struct thread_gate *g = c->gate;
	size_t nt = pl_nthreads(c->p);

	if (g->event == event)
		return g;
	free(g->t);
	g->t = pl_xcalloc(nt ? nt : 1, sizeof(*g->t));
	g->event = event;
	gate_weights(c, event, g->t);
	gate_cores(c->p, event, g->t, nt);
	for (size_t i = 0; i < nt; i++)
		for (size_t k = 0; k < r->ngated; k++) {
			const struct rule *ru = &r->rules[r->gated[k]];
			struct gate_thread *t = &g->t[i];
			if (t->rule[k].samples && share_of(t->rule[k], t->total) >= ru->min_share &&
			    (t->core < 0 || t->core >= ru->min_core))
				t->pass |= UINT64_C(1) << r->gated[k];
		}
	return g;
}

uint64_t pl_classifier_stack_rules(const struct pl_classifier *c, uint32_t event, uint32_t stack,
				   uint64_t any)
{
	const struct pl_rules *r = c->rules;

	if (any & r->gated_bits) {
		const struct thread_gate *g = gate_for(c, event);
		any &= ~(r->gated_bits & ~g->t[c->p->stacks[stack].thread].pass);
	}
	return pl_rules_stack_mask(r, any);
}

/* ------------------------------------------------------ per-event pass */

static void add_w(struct pl_amount *a, const struct pl_weight *w)
{
	a->samples += w->samples;
	a->period += w->period;
}

/* What one pass over an event's stacks learns. */
struct event_facts {
	struct pl_amount self[PL_RULES_MAX];   /* leaf matched */
	struct pl_amount incl[PL_RULES_MAX];   /* any frame matched */
	struct pl_amount deep;                 /* stacks of depth >= 2 */
	struct pl_amount unknown_frame;        /* stacks with an [unknown] frame */
	bool source_lines;
};

static void scan_event(const struct pl_classifier *c, uint32_t event, struct event_facts *ef)
{
	const struct pl_profile *p = c->p;

	memset(ef, 0, sizeof(*ef));
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_stack *st = &p->stacks[s];
		const struct pl_weight *w = pl_stack_weight(p, s, event);
		uint64_t any = 0, leaf, kept;
		bool unknown = false;

		if (!w || st->depth == 0)
			continue;
		for (uint32_t d = 0; d < st->depth; d++) {
			const struct pl_frame *fr = &p->frames[st->frames[d]];
			any |= c->func_mask[fr->func];
			unknown |= p->funcs[fr->func].unknown;
			ef->source_lines |= fr->srcline != PL_NOID;
		}
		leaf = c->func_mask[p->frames[st->frames[st->depth - 1]].func];
		kept = pl_classifier_stack_rules(c, event, s, any);
		leaf &= kept;
		any = kept;
		for (size_t i = 0; i < c->rules->n; i++) {
			if (any & (UINT64_C(1) << i))
				add_w(&ef->incl[i], w);
			if (leaf & (UINT64_C(1) << i))
				add_w(&ef->self[i], w);
		}
		if (st->depth >= 2)
			add_w(&ef->deep, w);
		if (unknown)
			add_w(&ef->unknown_frame, w);
	}
}

static bool unknown_place(const struct pl_profile *p, uint32_t func)
{
	const struct pl_func *f = &p->funcs[func];
	const char *dso = pl_str(p, f->dso);

	return f->unknown && (!dso || strcmp(dso, "[unknown]") == 0);
}

/* The weight of `stack`'s samples (event `event`) whose frame-pointer
 * chain may skip a caller at some frame (the caller check, profile.h). */
static struct pl_amount skipped_caller(const struct pl_profile *p, uint32_t stack, uint32_t event)
{
	struct pl_amount a = {0};

	for (size_t i = pl_marked_first(p, stack); i < p->nmarked && p->marked[i].stack == stack; i++) {
		size_t n;
		const uint32_t *w = pl_mark_words(p, p->marked[i].mark, &n);
		bool skip = false;
		for (size_t k = 0; k < n && !skip; k++)
			skip = PL_MARK_EDGE(w[k]) == PL_EDGE_MAY_SKIP;
		if (skip && p->marked[i].event == event) {
			a.samples += p->marked[i].samples;
			a.period += p->marked[i].period;
		}
	}
	return a;
}

/* Stacks the unwinder cut short: one frame that is not an entry point,
 * or a root frame outside any mapping; and the samples of other stacks
 * whose frame-pointer chain may skip a caller.  Fills the per-leaf
 * weights. */
static struct pl_amount truncated_stacks(const struct pl_classifier *c, const struct rule *ru,
					 uint32_t event, struct pl_amount *per_leaf)
{
	const struct pl_profile *p = c->p;
	size_t n = pl_nfuncs(p);
	signed char *is_root = pl_xmalloc(n ? n : 1);
	struct pl_amount total = {0};

	memset(is_root, -1, n ? n : 1);
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_stack *st = &p->stacks[s];
		const struct pl_weight *w = pl_stack_weight(p, s, event);
		uint32_t root, leaf;
		bool cut;

		if (!w || st->depth == 0)
			continue;
		root = p->frames[st->frames[0]].func;
		leaf = p->frames[st->frames[st->depth - 1]].func;
		if (st->depth == 1 && is_root[leaf] < 0)
			is_root[leaf] = rule_re_match(&ru->roots, pl_str(p, p->funcs[leaf].symbol));
		cut = (st->depth == 1 && !is_root[leaf]) || unknown_place(p, root);
		if (cut) {
			add_w(&total, w);
			add_w(&per_leaf[leaf], w);
		} else if (p->nmarked) {
			struct pl_amount a = skipped_caller(p, s, event);
			total.samples += a.samples;
			total.period += a.period;
			per_leaf[leaf].samples += a.samples;
			per_leaf[leaf].period += a.period;
		}
	}
	free(is_root);
	return total;
}

/* A frame of user code whose module is known (not the kernel, not a
 * pseudo-frame such as "[state D]", not a pc outside any mapping). */
static bool user_frame(const struct pl_profile *p, uint32_t func)
{
	const struct pl_func *f = &p->funcs[func];

	return (f->kind == PL_KIND_USER || f->kind == PL_KIND_JIT) && f->dso != PL_NOID;
}

/* DWARF stacks cut short: stacks with user frames of which none is an
 * entry point (a whole chain reaches _start, __libc_start_call_main,
 * start_thread or clone), so the unwinder stopped before the thread's
 * first frame: where the stack copy ended (sample_stack_user bytes above
 * the stack pointer), or at a module without unwind tables.  Fills the
 * weights per outermost user frame (where the chain stopped). */
static struct pl_amount dwarf_cut_stacks(const struct pl_classifier *c, const struct rule *ru,
					 uint32_t event, struct pl_amount *per_stop)
{
	const struct pl_profile *p = c->p;
	size_t n = pl_nfuncs(p);
	signed char *is_root = pl_xmalloc(n ? n : 1);
	struct pl_amount total = {0};

	memset(is_root, -1, n ? n : 1);
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_stack *st = &p->stacks[s];
		const struct pl_weight *w = pl_stack_weight(p, s, event);
		uint32_t stop = PL_NOID;
		bool entry = false;

		if (!w || st->depth == 0)
			continue;
		for (uint32_t d = 0; d < st->depth && !entry; d++) {
			uint32_t f = p->frames[st->frames[d]].func;
			if (is_root[f] < 0)
				is_root[f] = rule_re_match(&ru->roots, pl_str(p, p->funcs[f].symbol));
			entry = is_root[f];
			if (stop == PL_NOID && user_frame(p, f))
				stop = f;
		}
		if (entry || stop == PL_NOID)
			continue;
		add_w(&total, w);
		add_w(&per_stop[stop], w);
	}
	free(is_root);
	return total;
}

/* ------------------------------------------------ questions about rules */

/* Which event sets `name` belongs to. */
static uint32_t event_bits(const struct pl_rules *r, const char *name);

bool pl_rules_event_in_set(const struct pl_rules *r, const char *set, const char *event)
{
	for (size_t i = 0; i < r->nsets; i++)
		if (strcmp(r->sets[i].name, set) == 0)
			return rule_re_match(&r->sets[i].re, event);
	return false;
}

bool pl_rules_entry_point(const struct pl_rules *r, const char *symbol)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->rules[i].has_roots)
			return rule_re_match(&r->rules[i].roots, symbol);
	return false;
}

bool pl_rules_function_rule(const struct pl_rules *r, size_t i, const char *event,
			    const char **id, const char **label, bool *inclusive)
{
	const struct rule *ru = i < r->n ? &r->rules[i] : NULL;
	uint32_t bits = event_bits(r, event);

	if (!ru || ru->data_quality || ru->metric != METRIC_NONE || (ru->whole & bits) ||
	    (ru->events && !(ru->events & bits)) || (ru->skip & bits))
		return false;
	*id = ru->id;
	*label = json_string_value(json_object_get(ru->doc, "label"));
	*inclusive = ru->inclusive;
	return true;
}

/* ------------------------------------------------------------- results */

static json_t *amount_json(const struct pl_view *v, struct pl_amount a)
{
	return json_pack("{s:I,s:I,s:f}", "samples", (json_int_t)a.samples,
			 "period", (json_int_t)a.period, "percent", pl_percent(v, a.period));
}

static const struct pl_amount *sort_w;

static int cmp_func_weight(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (sort_w[x].period != sort_w[y].period)
		return sort_w[x].period > sort_w[y].period ? -1 : 1;
	if (sort_w[x].samples != sort_w[y].samples)
		return sort_w[x].samples > sort_w[y].samples ? -1 : 1;
	return x < y ? -1 : (x > y);
}

/* The matched hotspots, heaviest `measure` first: the top ones as JSON,
 * their count in *total, the heaviest id in *top (PL_NOID when none). */
static json_t *hotspots_json(const struct pl_classifier *c, const struct pl_view *v,
			     const struct pl_amount *measure, size_t *total, uint32_t *top)
{
	const struct pl_profile *p = c->p;
	size_t n = pl_nfuncs(p), k = 0;
	uint32_t *order = pl_xmalloc((n ? n : 1) * sizeof(uint32_t));
	json_t *out = json_array();

	for (uint32_t f = 0; f < n; f++)
		if (measure[f].samples)
			order[k++] = f;
	sort_w = measure;
	qsort(order, k, sizeof(uint32_t), cmp_func_weight);
	*total = k;
	*top = k ? order[0] : PL_NOID;
	for (size_t i = 0; i < k && i < PL_CLASSIFY_TOP; i++) {
		const struct pl_func *fn = &p->funcs[order[i]];
		json_array_append_new(out, json_pack("{s:o,s:s,s:o,s:s,s:o,s:o,s:o}",
			"hotspot_id", json_sprintf("fn%u", order[i]),
			"symbol", pl_str(p, fn->symbol),
			"dso", fn->dso == PL_NOID ? json_null() : json_string(pl_str(p, fn->dso)),
			"kind", pl_kind_name((enum pl_kind)fn->kind),
			"self", amount_json(v, v->funcs[order[i]].self),
			"inclusive", amount_json(v, v->funcs[order[i]].incl),
			"matched", amount_json(v, measure[order[i]])));
	}
	free(order);
	return out;
}

/* Replace {name} placeholders; NULL when one has no value here. */
static char *fill(const char *tmpl, const char *const *keys, const char *const *vals, size_t nk)
{
	struct pl_buf b = {0};
	const char *s = tmpl;

	pl_buf_adds(&b, "");
	while (*s) {
		const char *close = *s == '{' ? strchr(s, '}') : NULL;
		size_t i = 0;
		if (close) {
			for (; i < nk; i++)
				if (strlen(keys[i]) == (size_t)(close - s - 1) && strncmp(keys[i], s + 1, (size_t)(close - s - 1)) == 0)
					break;
		}
		if (!close || i == nk) {
			pl_buf_addc(&b, *s++);
			continue;
		}
		if (!vals[i]) {
			pl_buf_release(&b);
			return NULL;
		}
		pl_buf_adds(&b, vals[i]);
		s = close + 1;
	}
	return b.data;
}

/* An argument's value with its placeholders filled (strings, and the
 * strings of an array); NULL when a placeholder has no value here. */
static json_t *fill_value(json_t *v, const char *const *keys, const char *const *vals, size_t nk)
{
	json_t *out, *x;
	size_t i;
	char *s;

	if (json_is_array(v)) {
		out = json_array();
		json_array_foreach(v, i, x) {
			json_t *f = fill_value(x, keys, vals, nk);
			if (!f) {
				json_decref(out);
				return NULL;
			}
			json_array_append_new(out, f);
		}
		return out;
	}
	if (!json_is_string(v))
		return json_incref(v);
	if (!(s = fill(json_string_value(v), keys, vals, nk)))
		return NULL;
	out = json_string(s);
	free(s);
	return out;
}

/* One next step made concrete: {"kind": "tool", "tool", "arguments",
 * "call", "why"} or {"kind": "command", "command", "why"}; NULL when a
 * placeholder it needs has no value. */
static json_t *next_step_json(json_t *spec, const char *const *keys, const char *const *vals, size_t nk)
{
	const char *tool = json_string_value(json_object_get(spec, "tool"));
	const char *why = json_string_value(json_object_get(spec, "why"));
	json_t *args, *v, *out;
	struct pl_buf call = {0};
	const char *key;
	char *cmd;

	if (!tool) {
		cmd = fill(json_string_value(json_object_get(spec, "command")), keys, vals, nk);
		if (!cmd)
			return NULL;
		out = json_pack("{s:s,s:s,s:s}", "kind", "command", "command", cmd, "why", why);
		free(cmd);
		return out;
	}
	args = json_object();
	pl_buf_addf(&call, "%s(", tool);
	json_object_foreach(json_object_get(spec, "arguments"), key, v) {
		json_t *val = fill_value(v, keys, vals, nk);
		char *text;
		if (!val) {
			json_decref(args);
			pl_buf_release(&call);
			return NULL;
		}
		text = json_dumps(val, JSON_ENCODE_ANY | JSON_COMPACT);
		pl_buf_addf(&call, "%s%s=%s", json_object_size(args) ? ", " : "", key, text);
		free(text);
		json_object_set_new(args, key, val);
	}
	pl_buf_adds(&call, ")");
	out = json_pack("{s:s,s:s,s:o,s:s,s:s}", "kind", "tool", "tool", tool, "arguments", args,
			"call", call.data, "why", why);
	pl_buf_release(&call);
	return out;
}

/* Whether `event` is one perf could record: an event whose unit the input
 * named (pprof sample types, speedscope and V8 weights) is not, so a
 * collect_profile step for it could only fail. */
static bool perf_can_record(const struct pl_profile *p, const char *event)
{
	for (size_t i = 0; i < p->nevents; i++)
		if (strcmp(pl_str(p, p->events[i].name), event) == 0 && p->events[i].unit1)
			return false;
	return true;
}

/* A rule's collect_profile step (borrowed) for an off-CPU time event:
 * offcpu-time is no perf event (perf record -e offcpu-time exits 129), so
 * the step is the off_cpu mode's collection instead (new); NULL when the
 * step asks what that mode cannot change (its stacks are frame-pointer
 * chains: call_graph="dwarf" is no remedy there). */
static json_t *offcpu_spec(json_t *spec)
{
	json_t *args = json_object_get(spec, "arguments");
	const char *graph = json_string_value(json_object_get(args, "call_graph"));
	json_t *out;

	if (graph && strcmp(graph, "fp") != 0 && strcmp(graph, "dwarf") != 0)
		return NULL;
	out = json_pack("{s:s,s:{s:s},s:O}", "tool", "collect_profile", "arguments", "mode", "off_cpu",
			"why", json_object_get(spec, "why"));
	if (graph && strcmp(graph, "dwarf") == 0) {
		json_object_set_new(json_object_get(out, "arguments"), "call_graph", json_string("dwarf"));
		if (json_object_get(args, "dwarf_stack_bytes"))
			json_object_set(json_object_get(out, "arguments"), "dwarf_stack_bytes",
					json_object_get(args, "dwarf_stack_bytes"));
	}
	return out;
}

/* A step's dwarf_stack_bytes compared with the stack copy `event` had:
 * 1 larger (or the step asks none), 0 not larger. */
static int bigger_stack_than(json_t *spec, const struct pl_profile *p, const char *event)
{
	json_int_t asked = json_integer_value(json_object_get(json_object_get(spec, "arguments"),
							      "dwarf_stack_bytes"));
	uint32_t e = pl_find_event(p, event);

	if (!asked || e == PL_NOID)
		return 1;
	return asked > (json_int_t)pl_event_dwarf_stack(p, e);
}

static json_t *next_steps_json(const struct pl_classifier *c, const struct rule *ru,
			       const char *event, uint32_t top)
{
	const struct pl_profile *p = c->p;
	char top_id[24];
	const char *keys[] = {"analysis_id", "event", "top_symbol", "top_hotspot_id", "top_dso"};
	const char *vals[5];
	json_t *out = json_array(), *spec;
	size_t i;

	snprintf(top_id, sizeof(top_id), "fn%u", top);
	vals[0] = c->analysis_id;
	vals[1] = event;
	vals[2] = top == PL_NOID ? NULL : pl_str(p, p->funcs[top].symbol);
	vals[3] = top == PL_NOID ? NULL : top_id;
	vals[4] = top == PL_NOID ? NULL : pl_str(p, p->funcs[top].dso);
	json_array_foreach(json_object_get(ru->doc, "next_steps"), i, spec) {
		const char *tool = json_string_value(json_object_get(spec, "tool")) ?: "";
		json_t *step, *own = NULL;
		/* A collection of an event perf cannot record could only fail;
		 * one asking for no larger a stack copy than this one's would
		 * change nothing. */
		if (!perf_can_record(p, event) && strcmp(tool, "collect_profile") == 0)
			continue;
		if (bigger_stack_than(spec, p, event) == 0)
			continue;
		/* A step that already asks for mode off_cpu (with its own
		 * call_graph: the mode takes dwarf) stands as written. */
		if (strcmp(tool, "collect_profile") == 0 && pl_event_is_offcpu_time(event) &&
		    strcmp(json_string_value(json_object_get(json_object_get(spec, "arguments"), "mode")) ?: "",
			   "off_cpu") != 0 &&
		    !(own = offcpu_spec(spec)))
			continue;
		step = next_step_json(own ? own : spec, keys, vals, PL_ARRAY_LEN(keys));
		json_decref(own);
		if (step)
			json_array_append_new(out, step);
	}
	return out;
}

struct evidence {
	bool call_graph, source_lines;
};

static json_t *evidence_json(struct evidence e, const struct pl_view *v, const struct event_facts *ef)
{
	const char *level = e.call_graph ? (e.source_lines ? "call_graph_with_source_lines" : "call_graph")
					 : (e.source_lines ? "flat_with_source_lines" : "flat");

	return json_pack("{s:s,s:b,s:f,s:b}", "level", level, "call_graph", e.call_graph,
			 "call_graph_percent", pl_percent(v, ef->deep.period), "source_lines", e.source_lines);
}

static json_t *missing_json(const struct pl_rules *r, const struct rule *ru, struct evidence e)
{
	json_t *out = json_deep_copy(json_object_get(ru->doc, "missing_evidence"));
	json_t *texts = json_object_get(r->doc, "evidence_texts");

	if (!e.call_graph && ru->call_graph != NEED_NO)
		json_array_append(out, json_object_get(texts, "call_graph"));
	if (!e.source_lines && ru->source_lines != NEED_NO)
		json_array_append(out, json_object_get(texts, "source_lines"));
	return out;
}

/* Which event sets `name` belongs to. */
static uint32_t event_bits(const struct pl_rules *r, const char *name)
{
	uint32_t bits = 0;

	for (size_t i = 0; i < r->nsets; i++)
		if (rule_re_match(&r->sets[i].re, name))
			bits |= 1u << i;
	return bits;
}

static const char *set_reason(const struct pl_rules *r, uint32_t bits)
{
	for (size_t i = 0; i < r->nsets; i++)
		if (bits & (1u << i))
			return r->sets[i].not_matched;
	return "";
}

/* One rule's verdict on one event. */
struct verdict {
	const struct rule *ru;
	size_t index;
	const char *not_applicable;  /* reason, or NULL */
	bool whole;
	double value;
	struct pl_amount amount;
	const char *figure;
	bool fired;
};

/* The weight of the heaviest single function rule `index` matches (ties:
 * more samples, then the lower id), for per_function rules. */
static struct pl_amount heaviest_function(const struct pl_classifier *c, const struct pl_view *v,
					  size_t index, bool inclusive)
{
	uint64_t bit = UINT64_C(1) << index;
	struct pl_amount best = {0};

	for (uint32_t f = 0; f < pl_nfuncs(c->p); f++) {
		const struct pl_amount *a = inclusive ? &v->funcs[f].incl : &v->funcs[f].self;
		if (!(c->func_mask[f] & bit))
			continue;
		if (a->period > best.period || (a->period == best.period && a->samples > best.samples))
			best = *a;
	}
	return best;
}

/* A function rule's figure: the whole event, the heaviest function, or
 * the matched functions' sum. */
static void function_figure(const struct pl_classifier *c, const struct pl_view *v,
			    const struct event_facts *ef, struct verdict *vd)
{
	const struct rule *ru = vd->ru;

	if (vd->whole) {
		vd->amount = v->total;
		vd->figure = "event_percent";
	} else if (ru->per_function) {
		vd->amount = heaviest_function(c, v, vd->index, ru->inclusive);
		vd->figure = ru->inclusive ? "function_inclusive_percent" : "function_self_percent";
	} else {
		vd->amount = ru->inclusive ? ef->incl[vd->index] : ef->self[vd->index];
		vd->figure = ru->inclusive ? "inclusive_percent" : "self_percent";
	}
	vd->value = pl_percent(v, vd->amount.period);
}

static void judge(const struct pl_classifier *c, const struct pl_view *v, const struct event_facts *ef,
		  uint32_t ev_bits, struct evidence e, struct verdict *vd)
{
	const struct rule *ru = vd->ru;
	json_t *texts = json_object_get(c->rules->doc, "evidence_texts");

	vd->whole = (ru->whole & ev_bits) != 0;
	if (!vd->whole && ru->events && !(ru->events & ev_bits))
		vd->not_applicable = set_reason(c->rules, ru->events);
	else if (!vd->whole && (ru->skip & ev_bits))
		vd->not_applicable = set_reason(c->rules, ru->skip & ev_bits);
	else if (ru->call_graph == NEED_NEEDED && !e.call_graph)
		vd->not_applicable = json_string_value(json_object_get(texts, "call_graph"));
	else if (ru->metric == METRIC_TRUNCATED && pl_event_dwarf_stack(c->p, v->event))
		vd->not_applicable = json_string_value(json_object_get(texts, "dwarf_stacks"));
	else if (ru->metric == METRIC_DWARF_TRUNCATED && !pl_event_dwarf_stack(c->p, v->event))
		vd->not_applicable = json_string_value(json_object_get(texts, "not_dwarf_stacks"));
	else if (ru->source_lines == NEED_NEEDED && !e.source_lines)
		vd->not_applicable = json_string_value(json_object_get(texts, "source_lines"));
	if (vd->not_applicable)
		return;
	switch (ru->metric) {
	case METRIC_NONE:
		function_figure(c, v, ef, vd);
		break;
	case METRIC_SAMPLES:
		vd->amount = v->total;
		vd->value = (double)v->total.samples;
		break;
	case METRIC_UNKNOWN_LEAF:
		vd->amount = v->unknown_leaf;
		vd->value = pl_percent(v, vd->amount.period);
		break;
	case METRIC_UNKNOWN_FRAME:
		vd->amount = ef->unknown_frame;
		vd->value = pl_percent(v, vd->amount.period);
		break;
	case METRIC_TRUNCATED:
	case METRIC_DWARF_TRUNCATED:
		break;  /* filled by the caller, which keeps the per-frame weights */
	}
	if (ru->metric != METRIC_NONE)
		vd->figure = metric_names[ru->metric];
}

static bool fires(const struct verdict *vd)
{
	if (vd->not_applicable)
		return false;
	if (vd->ru->below)
		return vd->value < vd->ru->threshold;
	return vd->amount.samples > 0 && vd->value >= vd->ru->threshold;
}

/* The weight behind each function of rule `index`, which has "unless" or
 * a thread gate: only the stacks the rule keeps count, each matched
 * function once per stack (inclusive) or the matched leaf (self). */
static void unless_measure(const struct pl_classifier *c, uint32_t event, size_t index,
			   struct pl_amount *measure)
{
	const struct pl_profile *p = c->p;
	const struct rule *ru = &c->rules->rules[index];
	uint64_t bit = UINT64_C(1) << index;
	uint32_t *stamp = pl_xcalloc(pl_nfuncs(p) ? pl_nfuncs(p) : 1, sizeof(uint32_t));

	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_stack *st = &p->stacks[s];
		const struct pl_weight *w = pl_stack_weight(p, s, event);
		uint64_t any = 0;

		if (!w || st->depth == 0)
			continue;
		for (uint32_t d = 0; d < st->depth; d++)
			any |= c->func_mask[p->frames[st->frames[d]].func];
		if (!(pl_classifier_stack_rules(c, event, s, any) & bit))
			continue;
		for (uint32_t d = ru->inclusive ? 0 : st->depth - 1; d < st->depth; d++) {
			uint32_t f = p->frames[st->frames[d]].func;
			if (!(c->func_mask[f] & bit) || stamp[f] == s + 1)
				continue;
			stamp[f] = s + 1;
			add_w(&measure[f], w);
		}
	}
	free(stamp);
}

/* The weight behind each function for a candidate's hotspot list. */
static void rule_measure(const struct pl_classifier *c, const struct pl_view *v, const struct verdict *vd,
			 struct pl_amount *measure)
{
	const struct pl_profile *p = c->p;
	uint64_t bit = UINT64_C(1) << vd->index;

	if (vd->ru->metric == METRIC_NONE && !vd->whole && (vd->ru->unless || vd->ru->gate >= 0)) {
		unless_measure(c, v->event, vd->index, measure);
		return;
	}
	for (uint32_t f = 0; f < pl_nfuncs(p); f++) {
		switch (vd->ru->metric) {
		case METRIC_NONE:
			if (vd->whole)
				measure[f] = v->funcs[f].self;
			else if (c->func_mask[f] & bit)
				measure[f] = vd->ru->inclusive ? v->funcs[f].incl : v->funcs[f].self;
			break;
		case METRIC_UNKNOWN_LEAF:
			if (p->funcs[f].unknown)
				measure[f] = v->funcs[f].self;
			break;
		case METRIC_UNKNOWN_FRAME:
			if (p->funcs[f].unknown)
				measure[f] = v->funcs[f].incl;
			break;
		case METRIC_SAMPLES:
		case METRIC_TRUNCATED:
		case METRIC_DWARF_TRUNCATED:
			break;
		}
	}
}

#define OWN_CALLERS_TOP 3

/* Where the program's own code calls into what a library or kernel rule
 * matched: for each stack the rule counts, the nearest frame above the
 * outermost matched frame (toward the root) that is the program's own
 * code (the functions of own_code_rule: user code outside libc, runtimes,
 * interpreters and the system's library folders; inline frames are
 * frames), its weight summed per function.  The top ones as JSON (shares
 * of the event and of the candidate), NULL when the rule matches own code
 * itself or no stack has an own caller. */
/* The depth of the stack's outermost frame the verdict matched (its leaf
 * for a whole-profile or leaf rule), or -1 when the rule does not count
 * this stack. */
static int64_t matched_from(const struct pl_classifier *c, const struct verdict *vd, const struct pl_stack *st,
			    uint32_t s, uint32_t event, uint64_t bit)
{
	const struct pl_profile *p = c->p;
	uint64_t any = 0;

	for (uint32_t d = 0; d < st->depth; d++)
		any |= c->func_mask[p->frames[st->frames[d]].func];
	if (!vd->whole && !(pl_classifier_stack_rules(c, event, s, any) & bit))
		return -1;
	if (vd->whole || !vd->ru->inclusive) {
		if (!vd->whole && !(c->func_mask[p->frames[st->frames[st->depth - 1]].func] & bit))
			return -1;
		return (int64_t)st->depth - 1;
	}
	for (uint32_t d = 0; d < st->depth; d++)
		if (c->func_mask[p->frames[st->frames[d]].func] & bit)
			return d;
	return -1;
}

/* The top own callers of `by` (weights per function), as JSON shares of
 * the event and of the candidate's `total`; NULL when there are none. */
static json_t *own_callers_top(const struct pl_profile *p, const struct pl_view *v, struct pl_amount *by,
			       const struct pl_amount *total)
{
	size_t k = 0, n = pl_nfuncs(p);
	uint32_t *order = pl_xmalloc((n ? n : 1) * sizeof(uint32_t));
	json_t *out = NULL;

	for (uint32_t f = 0; f < n; f++)
		if (by[f].samples)
			order[k++] = f;
	if (k) {
		sort_w = by;
		qsort(order, k, sizeof(uint32_t), cmp_func_weight);
		out = json_array();
		for (size_t i = 0; i < k && i < OWN_CALLERS_TOP; i++) {
			const struct pl_func *fn = &p->funcs[order[i]];
			json_array_append_new(out, json_pack("{s:o,s:s,s:o,s:f,s:f}",
				"hotspot_id", json_sprintf("fn%u", order[i]), "symbol", pl_str(p, fn->symbol),
				"dso", fn->dso == PL_NOID ? json_null() : json_string(pl_str(p, fn->dso)),
				"percent", pl_percent(v, by[order[i]].period),
				"of_candidate_percent", total->period ? 100.0 * (double)by[order[i]].period / (double)total->period : 0.0));
		}
	}
	free(order);
	return out;
}

static json_t *own_callers_json(const struct pl_classifier *c, const struct pl_view *v, const struct verdict *vd)
{
	const struct pl_profile *p = c->p;
	const struct rule *ru = vd->ru;
	uint64_t bit = UINT64_C(1) << vd->index, own;
	struct pl_amount *by, total = {0};
	size_t n = pl_nfuncs(p);
	json_t *out;

	if (c->rules->own_rule < 0 || (int)vd->index == c->rules->own_rule || ru->metric != METRIC_NONE ||
	    ru->data_quality)
		return NULL;
	own = UINT64_C(1) << c->rules->own_rule;
	by = pl_xcalloc(n ? n : 1, sizeof(*by));
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_stack *st = &p->stacks[s];
		const struct pl_weight *w = pl_stack_weight(p, s, v->event);
		int64_t from;

		if (!w || st->depth == 0 || (from = matched_from(c, vd, st, s, v->event, bit)) < 0)
			continue;
		if (c->func_mask[p->frames[st->frames[from]].func] & own)
			continue;  /* the matched frame is the program's own */
		add_w(&total, w);
		for (int64_t d = from - 1; d >= 0; d--) {
			uint32_t f = p->frames[st->frames[d]].func;
			if (c->func_mask[f] & own) {
				add_w(&by[f], w);
				break;
			}
		}
	}
	out = own_callers_top(p, v, by, &total);
	free(by);
	return out;
}

static __thread const struct gate_thread *sort_gt;
static __thread size_t sort_gk;

static int cmp_gate_threads(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct pl_amount *wx = &sort_gt[x].rule[sort_gk], *wy = &sort_gt[y].rule[sort_gk];

	if (wx->period != wy->period)
		return wx->period > wy->period ? -1 : 1;
	return x < y ? -1 : (x > y);
}

/* A gated rule's evidence: the threads that passed its gate (heaviest
 * first), each with its share in the rule's stacks and its share of one
 * CPU, and what the gate left out. */
static json_t *gate_json(const struct pl_classifier *c, const struct pl_view *v, const struct rule *ru)
{
	const struct pl_profile *p = c->p;
	const struct thread_gate *g = gate_for(c, v->event);
	size_t nt = pl_nthreads(p), k = (size_t)ru->gate, npass = 0, nout = 0;
	uint32_t *order = pl_xmalloc((nt ? nt : 1) * sizeof(uint32_t));
	struct pl_amount out = {0};
	json_t *passed = json_array();

	for (uint32_t t = 0; t < nt; t++) {
		if (!g->t[t].rule[k].samples)
			continue;
		if (g->t[t].pass & (UINT64_C(1) << r_index(c->rules, ru))) {
			order[npass++] = t;
		} else {
			nout++;
			out.samples += g->t[t].rule[k].samples;
			out.period += g->t[t].rule[k].period;
		}
	}
	sort_gt = g->t;
	sort_gk = k;
	qsort(order, npass, sizeof(uint32_t), cmp_gate_threads);
	for (size_t i = 0; i < npass && i < GATE_THREADS_TOP; i++) {
		const struct gate_thread *t = &g->t[order[i]];
		const struct pl_thread *th = &p->threads[order[i]];
		json_array_append_new(passed, json_pack("{s:o,s:o,s:o,s:f,s:o,s:f}",
			"pid", th->pid < 0 ? json_null() : json_integer(th->pid),
			"tid", th->tid < 0 ? json_null() : json_integer(th->tid),
			"comm", th->comm == PL_NOID ? json_null() : json_string(pl_str(p, th->comm)),
			"share_percent", share_of(t->rule[k], t->total),
			"core_percent", t->core < 0 ? json_null() : json_real(t->core),
			"percent", pl_percent(v, t->rule[k].period)));
	}
	free(order);
	return json_pack("{s:f,s:f,s:I,s:o,s:{s:I,s:I,s:f}}", "min_share_percent", ru->min_share,
		"min_core_percent", ru->min_core, "passed_total", (json_int_t)npass, "passed", passed,
		"left_out", "threads", (json_int_t)nout, "samples", (json_int_t)out.samples,
		"percent", pl_percent(v, out.period));
}

#define CALLERS_TOP 3

/* The frame above leaf-matched frames of rule `bit` in stack `st`, from
 * the leaf toward the root: its depth, or -1 when every frame matches. */
static int64_t caller_depth(const struct pl_classifier *c, const struct pl_stack *st, uint64_t bit)
{
	int64_t d = (int64_t)st->depth - 1;

	while (d >= 0 && (c->func_mask[c->p->frames[st->frames[d]].func] & bit))
		d--;
	return d;
}

/* A "callers" rule's samples by the path they interrupted: the nearest
 * caller frame the rule does not match (top CALLERS_TOP) and the
 * inclusive hotspot rules that path matches (the frames from the root to
 * that caller), as shares of the candidate; nothing is moved: every
 * figure of the analysis keeps these samples on their leaf. */
static json_t *callers_json(const struct pl_classifier *c, const struct pl_view *v, const struct verdict *vd)
{
	const struct pl_profile *p = c->p;
	const struct pl_rules *r = c->rules;
	const char *event = pl_str(p, p->events[v->event].name);
	uint64_t bit = UINT64_C(1) << vd->index;
	size_t n = pl_nfuncs(p), k = 0;
	struct pl_amount *by = pl_xcalloc(n ? n : 1, sizeof(*by)), total = {0}, none = {0};
	struct pl_amount by_rule[PL_RULES_MAX] = {{0}};
	uint32_t *order;
	json_t *callers = json_array(), *rules = json_array();

	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_stack *st = &p->stacks[s];
		const struct pl_weight *w = pl_stack_weight(p, s, v->event);
		uint64_t any = 0;
		int64_t d;

		if (!w || st->depth == 0 || !(c->func_mask[p->frames[st->frames[st->depth - 1]].func] & bit))
			continue;
		add_w(&total, w);
		if ((d = caller_depth(c, st, bit)) < 0) {
			add_w(&none, w);
			continue;
		}
		add_w(&by[p->frames[st->frames[d]].func], w);
		for (int64_t i = 0; i <= d; i++)
			any |= c->func_mask[p->frames[st->frames[i]].func];
		any = pl_classifier_stack_rules(c, v->event, s, any);
		for (size_t i = 0; i < r->n; i++)
			if (any & (UINT64_C(1) << i))
				add_w(&by_rule[i], w);
	}
	order = pl_xmalloc((n ? n : 1) * sizeof(uint32_t));
	for (uint32_t f = 0; f < n; f++)
		if (by[f].samples)
			order[k++] = f;
	sort_w = by;
	qsort(order, k, sizeof(uint32_t), cmp_func_weight);
	for (size_t i = 0; i < k && i < CALLERS_TOP; i++)
		json_array_append_new(callers, json_pack("{s:o,s:s,s:f,s:f}", "hotspot_id", json_sprintf("fn%u", order[i]),
			"symbol", pl_str(p, p->funcs[order[i]].symbol), "percent", pl_percent(v, by[order[i]].period),
			"of_candidate_percent", share_of(by[order[i]], total)));
	for (size_t i = 0; i < r->n; i++) {
		const char *id, *label;
		bool inclusive;
		if (!by_rule[i].samples || (int)i == r->own_rule ||
		    !pl_rules_function_rule(r, i, event, &id, &label, &inclusive) || !inclusive)
			continue;
		json_array_append_new(rules, json_pack("{s:s,s:f}", "rule", id,
			"of_candidate_percent", share_of(by_rule[i], total)));
	}
	free(order);
	free(by);
	return json_pack("{s:I,s:o,s:o,s:f}", "callers_total", (json_int_t)k, "callers", callers,
			 "rules", rules, "without_caller_percent", share_of(none, total));
}

static json_t *candidate_json(const struct pl_classifier *c, const struct pl_view *v,
			      const struct event_facts *ef, const struct verdict *vd,
			      struct evidence e, const struct pl_amount *measure)
{
	const struct rule *ru = vd->ru;
	const char *event = pl_str(c->p, c->p->events[v->event].name);
	size_t total = 0;
	uint32_t top = PL_NOID;
	json_t *hot = json_array();

	json_t *own = own_callers_json(c, v, vd), *out;

	if (ru->metric != METRIC_SAMPLES) {
		json_decref(hot);
		hot = hotspots_json(c, v, measure, &total, &top);
	}
	out = json_pack("{s:o,s:s,s:{s:s,s:O,s:O,s:O},s:s,s:s,s:{s:s,s:f,s:s,s:f,s:I,s:I},"
			 "s:o,s:I,s:o,s:o,s:o,s:O,s:O}",
		"candidate_id", json_sprintf("%s@%s", ru->id, event),
		"status", "candidate",
		"rule", "id", ru->id, "label", json_object_get(ru->doc, "label"),
		"group", json_object_get(ru->doc, "group"), "description", json_object_get(ru->doc, "description"),
		"event", event, "unit", pl_event_unit(c->p, v->event),
		"figure", "name", vd->figure, "value", vd->value, "op", ru->below ? "below" : "at_least",
		"threshold", ru->threshold, "samples", (json_int_t)vd->amount.samples,
		"period", (json_int_t)vd->amount.period,
		"hotspots", hot, "hotspots_total", (json_int_t)total,
		"evidence", evidence_json(e, v, ef),
		"missing_evidence", missing_json(c->rules, ru, e),
		"next_steps", next_steps_json(c, ru, event, top),
		"experiment", json_object_get(ru->doc, "experiment"),
		"forbidden_conclusions", json_object_get(ru->doc, "forbidden_conclusions"));
	if (own)
		json_object_set_new(out, "own_callers", own);
	if (ru->gate >= 0)
		json_object_set_new(out, "threads", gate_json(c, v, ru));
	if (ru->callers)
		json_object_set_new(out, "interrupted", callers_json(c, v, vd));
	return out;
}

static json_t *quiet_json(const struct verdict *vd)
{
	return json_pack("{s:s,s:s,s:o,s:s,s:f,s:o}", "rule", vd->ru->id,
		"outcome", vd->not_applicable ? "not_applicable" : "below_threshold",
		"value", vd->not_applicable ? json_null() : json_real(vd->value),
		"op", vd->ru->below ? "below" : "at_least", "threshold", vd->ru->threshold,
		"reason", vd->not_applicable ? json_string(vd->not_applicable) : json_null());
}

static int cmp_verdicts(const void *a, const void *b)
{
	const struct verdict *x = *(const struct verdict *const *)a, *y = *(const struct verdict *const *)b;

	if (x->ru->data_quality != y->ru->data_quality)
		return x->ru->data_quality ? -1 : 1;
	if (!x->ru->data_quality && x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return x->index < y->index ? -1 : (x->index > y->index);
}

static json_t *quality_json(const struct pl_view *v, const struct event_facts *ef,
			    struct evidence e, json_t *truncated)
{
	return json_pack("{s:I,s:I,s:b,s:f,s:b,s:f,s:f,s:o}",
		"samples", (json_int_t)v->total.samples, "period", (json_int_t)v->total.period,
		"call_graph", e.call_graph, "call_graph_percent", pl_percent(v, ef->deep.period),
		"source_lines", e.source_lines,
		"unknown_leaf_percent", pl_percent(v, v->unknown_leaf.period),
		"unknown_frame_percent", pl_percent(v, ef->unknown_frame.period),
		"truncated_stack_percent", truncated);
}

json_t *pl_classify_event(struct pl_classifier *c, const struct pl_view *v)
{
	const struct pl_rules *r = c->rules;
	const char *event = pl_str(c->p, c->p->events[v->event].name);
	size_t n = pl_nfuncs(c->p), nfired = 0;
	struct event_facts *ef = pl_xmalloc(sizeof(*ef));
	struct verdict vds[PL_RULES_MAX], *fired[PL_RULES_MAX];
	struct pl_amount *measures[PL_RULES_MAX] = {0};
	json_t *cands = json_array(), *quiet = json_array(), *truncated = json_null(), *out;
	uint32_t ev_bits = event_bits(r, event);
	struct evidence e;

	scan_event(c, v->event, ef);
	e.call_graph = ef->deep.samples > 0;
	e.source_lines = ef->source_lines;
	for (size_t i = 0; i < r->n; i++) {
		struct verdict *vd = &vds[i];
		memset(vd, 0, sizeof(*vd));
		vd->ru = &r->rules[i];
		vd->index = i;
		judge(c, v, ef, ev_bits, e, vd);
		if ((vd->ru->metric == METRIC_TRUNCATED || vd->ru->metric == METRIC_DWARF_TRUNCATED) &&
		    !vd->not_applicable) {
			measures[i] = pl_xcalloc(n ? n : 1, sizeof(struct pl_amount));
			vd->amount = vd->ru->metric == METRIC_TRUNCATED ?
				     truncated_stacks(c, vd->ru, v->event, measures[i]) :
				     dwarf_cut_stacks(c, vd->ru, v->event, measures[i]);
			vd->value = pl_percent(v, vd->amount.period);
			if (json_is_null(truncated))
				truncated = json_real(vd->value);
		}
		vd->fired = fires(vd);
		if (vd->fired)
			fired[nfired++] = vd;
		else
			json_array_append_new(quiet, quiet_json(vd));
	}
	qsort(fired, nfired, sizeof(fired[0]), cmp_verdicts);
	for (size_t i = 0; i < nfired; i++) {
		size_t k = fired[i]->index;
		if (!measures[k]) {
			measures[k] = pl_xcalloc(n ? n : 1, sizeof(struct pl_amount));
			rule_measure(c, v, fired[i], measures[k]);
		}
		json_array_append_new(cands, candidate_json(c, v, ef, fired[i], e, measures[k]));
	}
	out = json_pack("{s:s,s:s,s:o,s:o,s:o}", "event", event, "unit", pl_event_unit(c->p, v->event),
			"quality", quality_json(v, ef, e, truncated), "candidates", cands, "quiet", quiet);
	for (size_t i = 0; i < r->n; i++)
		free(measures[i]);
	free(ef);
	return out;
}
