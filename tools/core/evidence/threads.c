/* threads.c - per-thread descriptions (threads.h).
 *
 * The stacks of the requested threads are bucketed in one pass; each
 * thread's stacks are then read with a per-function stamp (inclusive once
 * per stack), a rule mask OR-ed over the frames (inclusive rules) or taken
 * from the leaf (self rules), and the "[state X]" frame when there is one.
 * The per-function table is shared by the threads and only the entries a
 * thread touched are reset, so the cost is that of the threads' own
 * frames.  Every sort ends on the function id: same input, same bytes.
 */
#include "threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STATES_MAX 8
#define STATE_LEN 8

struct thread_pass {
	const struct pl_classifier *c;
	const struct pl_view *v;
	struct pl_amount *incl, *self;   /* [nfuncs], reset after each thread */
	uint32_t *stamp;                 /* [nfuncs]: last stack counted */
	uint32_t *touched;               /* functions this thread reached */
	size_t ntouched;
	struct pl_amount total;
	struct pl_amount rule_incl[PL_RULES_MAX], rule_self[PL_RULES_MAX];
	char states[STATES_MAX][STATE_LEN];
	struct pl_amount state_w[STATES_MAX];
	size_t nstates;
};

static void add(struct pl_amount *a, const struct pl_weight *w)
{
	a->samples += w->samples;
	a->period += w->period;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? round((double)part * 100.0 / (double)whole * 1e4) / 1e4 : 0.0;
}

/* "S" from a "[state S]" frame; NULL for any other symbol. */
static const char *state_of(const char *sym, size_t *len)
{
	size_t n = sym ? strlen(sym) : 0;

	if (n < 9 || strncmp(sym, "[state ", 7) != 0 || sym[n - 1] != ']' || n - 8 >= STATE_LEN)
		return NULL;
	*len = n - 8;
	return sym + 7;
}

static void add_state(struct thread_pass *tp, const char *state, size_t len, const struct pl_weight *w)
{
	size_t i = 0;

	while (i < tp->nstates && !(strlen(tp->states[i]) == len && strncmp(tp->states[i], state, len) == 0))
		i++;
	if (i == tp->nstates) {
		if (tp->nstates == STATES_MAX)
			return;
		memcpy(tp->states[i], state, len);
		tp->states[i][len] = '\0';
		tp->nstates++;
	}
	add(&tp->state_w[i], w);
}

static void add_stack(struct thread_pass *tp, uint32_t s, const struct pl_weight *w)
{
	const struct pl_profile *p = tp->c->p;
	const struct pl_stack *st = &p->stacks[s];
	uint64_t any = 0, leaf;
	bool state_seen = false;

	add(&tp->total, w);
	if (st->depth == 0)
		return;
	for (uint32_t d = 0; d < st->depth; d++) {
		uint32_t f = p->frames[st->frames[d]].func;
		const char *state;
		size_t len;
		any |= tp->c->func_mask[f];
		if (!state_seen && (state = state_of(pl_str(p, p->funcs[f].symbol), &len))) {
			add_state(tp, state, len, w);
			state_seen = true;
		}
		if (tp->stamp[f] == s + 1)
			continue;
		if (!tp->incl[f].samples)
			tp->touched[tp->ntouched++] = f;
		tp->stamp[f] = s + 1;
		add(&tp->incl[f], w);
	}
	any = pl_classifier_stack_rules(tp->c, tp->v->event, s, any);
	leaf = tp->c->func_mask[p->frames[st->frames[st->depth - 1]].func] & any;
	add(&tp->self[p->frames[st->frames[st->depth - 1]].func], w);
	for (size_t i = 0; i < pl_rules_count(tp->c->rules); i++) {
		if (any & (UINT64_C(1) << i))
			add(&tp->rule_incl[i], w);
		if (leaf & (UINT64_C(1) << i))
			add(&tp->rule_self[i], w);
	}
}

static __thread const struct thread_pass *sort_tp;

static int cmp_touched(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct pl_amount *ix = &sort_tp->incl[x], *iy = &sort_tp->incl[y];

	if (ix->period != iy->period)
		return ix->period > iy->period ? -1 : 1;
	if (sort_tp->self[x].period != sort_tp->self[y].period)
		return sort_tp->self[x].period > sort_tp->self[y].period ? -1 : 1;
	return x < y ? -1 : (x > y);
}

static bool kernel_func(const struct pl_profile *p, uint32_t f)
{
	const char *sym = pl_str(p, p->funcs[f].symbol);
	size_t n = sym ? strlen(sym) : 0;

	return p->funcs[f].kind == PL_KIND_KERNEL || (n > 4 && strcmp(sym + n - 4, "_[k]") == 0);
}

/* The heaviest functions by inclusive weight, the program's own (user,
 * JIT, unknown) before the kernel's: on off-CPU stacks every frame from
 * the system call down is at 100%, and the user frame above it says what
 * the thread waits for. */
static json_t *top_functions(struct thread_pass *tp)
{
	const struct pl_profile *p = tp->c->p;
	json_t *out = json_array();
	size_t len;

	sort_tp = tp;
	qsort(tp->touched, tp->ntouched, sizeof(uint32_t), cmp_touched);
	sort_tp = NULL;
	for (int kernel = 0; kernel < 2; kernel++)
		for (size_t i = 0; i < tp->ntouched && json_array_size(out) < PL_THREAD_TOP; i++) {
			uint32_t f = tp->touched[i];
			const char *sym = pl_str(p, p->funcs[f].symbol);
			if (kernel_func(p, f) != (kernel == 1) || pl_rules_entry_point(tp->c->rules, sym ? sym : "") ||
			    state_of(sym, &len))
				continue;
			json_array_append_new(out, json_pack("{s:o,s:s,s:f,s:f}", "hotspot_id", json_sprintf("fn%u", f),
				"symbol", sym ? sym : "", "inclusive_percent", pct(tp->incl[f].period, tp->total.period),
				"self_percent", pct(tp->self[f].period, tp->total.period)));
		}
	return out;
}

static int cmp_share(const void *a, const void *b)
{
	double x = json_number_value(json_object_get(*(json_t *const *)a, "percent"));
	double y = json_number_value(json_object_get(*(json_t *const *)b, "percent"));

	if (x != y)
		return x > y ? -1 : 1;
	/* qsort is not stable: ties keep the rules' order */
	x = (double)json_integer_value(json_object_get(*(json_t *const *)a, "order"));
	y = (double)json_integer_value(json_object_get(*(json_t *const *)b, "order"));
	return x < y ? -1 : (x > y);
}

/* The applicable rules covering at least PL_THREAD_RULE_MIN percent. */
static json_t *rule_shares(const struct thread_pass *tp, const char *event)
{
	json_t *all[PL_RULES_MAX], *out = json_array();
	size_t n = 0;

	for (size_t i = 0; i < pl_rules_count(tp->c->rules); i++) {
		const char *id, *label;
		bool inclusive;
		double share;
		if (!pl_rules_function_rule(tp->c->rules, i, event, &id, &label, &inclusive))
			continue;
		share = pct((inclusive ? tp->rule_incl[i] : tp->rule_self[i]).period, tp->total.period);
		if (share >= PL_THREAD_RULE_MIN)
			all[n++] = json_pack("{s:s,s:s,s:f,s:I}", "rule", id, "label", label, "percent", share,
					     "order", (json_int_t)i);
	}
	qsort(all, n, sizeof(all[0]), cmp_share);
	for (size_t i = 0; i < n; i++) {
		json_object_del(all[i], "order");
		if (i < PL_THREAD_TOP)
			json_array_append(out, all[i]);
		json_decref(all[i]);
	}
	return out;
}

static json_t *states_json(const struct thread_pass *tp)
{
	json_t *out;
	size_t order[STATES_MAX];

	if (tp->nstates == 0)
		return json_null();
	for (size_t i = 0; i < tp->nstates; i++)
		order[i] = i;
	/* heaviest first, then by name; at most STATES_MAX entries */
	for (size_t i = 1; i < tp->nstates; i++)
		for (size_t k = i; k > 0; k--) {
			const struct pl_amount *a = &tp->state_w[order[k - 1]], *b = &tp->state_w[order[k]];
			if (a->period > b->period || (a->period == b->period &&
			    strcmp(tp->states[order[k - 1]], tp->states[order[k]]) <= 0))
				break;
			size_t t = order[k];
			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	out = json_array();
	for (size_t i = 0; i < tp->nstates; i++) {
		const struct pl_amount *a = &tp->state_w[order[i]];
		json_array_append_new(out, json_pack("{s:s,s:I,s:I,s:f}", "state", tp->states[order[i]],
			"samples", (json_int_t)a->samples, "period", (json_int_t)a->period,
			"percent", pct(a->period, tp->total.period)));
	}
	return out;
}

/* Forget one thread's figures, touching only what it used. */
static void reset(struct thread_pass *tp)
{
	for (size_t i = 0; i < tp->ntouched; i++) {
		uint32_t f = tp->touched[i];
		memset(&tp->incl[f], 0, sizeof(tp->incl[f]));
		memset(&tp->self[f], 0, sizeof(tp->self[f]));
	}
	tp->ntouched = 0;
	tp->nstates = 0;
	memset(&tp->total, 0, sizeof(tp->total));
	memset(tp->rule_incl, 0, sizeof(tp->rule_incl));
	memset(tp->rule_self, 0, sizeof(tp->rule_self));
	memset(tp->state_w, 0, sizeof(tp->state_w));
}

/* The stacks (with weight under the event) of each requested thread:
 * (*list)[(*start)[i] .. (*start)[i + 1]) for threads[i]. */
static void bucket(const struct pl_profile *p, uint32_t event, const uint32_t *threads, size_t n,
		   size_t **start, uint32_t **list)
{
	size_t nt = pl_nthreads(p), *fill;
	uint32_t *slot = pl_xmalloc((nt + 1) * sizeof(uint32_t));

	memset(slot, 0xff, (nt + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < n; i++)
		slot[threads[i]] = (uint32_t)i;
	*start = pl_xcalloc(n + 2, sizeof(size_t));
	for (uint32_t s = 0; s < pl_nstacks(p); s++)
		if (slot[p->stacks[s].thread] != PL_NOID && pl_stack_weight(p, s, event))
			(*start)[slot[p->stacks[s].thread] + 2]++;
	for (size_t i = 2; i < n + 2; i++)
		(*start)[i] += (*start)[i - 1];
	*list = pl_xmalloc(((*start)[n + 1] + 1) * sizeof(uint32_t));
	fill = *start + 1;
	for (uint32_t s = 0; s < pl_nstacks(p); s++)
		if (slot[p->stacks[s].thread] != PL_NOID && pl_stack_weight(p, s, event))
			(*list)[fill[slot[p->stacks[s].thread]]++] = s;
	free(slot);
}

json_t *pl_threads_describe(const struct pl_classifier *c, const struct pl_view *v,
			    const uint32_t *threads, size_t n)
{
	const struct pl_profile *p = c->p;
	size_t nf = pl_nfuncs(p) ? pl_nfuncs(p) : 1, *start;
	const char *event = pl_str(p, p->events[v->event].name);
	struct thread_pass *tp = pl_xcalloc(1, sizeof(*tp));
	json_t *out = json_array();
	uint32_t *list;

	tp->c = c;
	tp->v = v;
	tp->incl = pl_xcalloc(nf, sizeof(struct pl_amount));
	tp->self = pl_xcalloc(nf, sizeof(struct pl_amount));
	tp->stamp = pl_xcalloc(nf, sizeof(uint32_t));
	tp->touched = pl_xmalloc(nf * sizeof(uint32_t));
	bucket(p, v->event, threads, n, &start, &list);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = start[i]; k < start[i + 1]; k++)
			add_stack(tp, list[k], pl_stack_weight(p, list[k], v->event));
		json_t *d = json_pack("{s:o,s:o,s:o}", "top_functions", top_functions(tp),
			"rule_shares", rule_shares(tp, event), "blocked_by_state", states_json(tp));
		/* Off-CPU records that sum waits: the waits (the samples) and
		 * the distinct stacks they were summed into, apart. */
		if (pl_event_counts_waits(p, v->event))
			json_object_set_new(d, "waits", json_pack("{s:I,s:I}", "waits", (json_int_t)tp->total.samples,
				"stacks", (json_int_t)(start[i + 1] - start[i])));
		json_array_append_new(out, d);
		reset(tp);
	}
	free(start);
	free(list);
	free(tp->incl);
	free(tp->self);
	free(tp->stamp);
	free(tp->touched);
	free(tp);
	return out;
}

/* ------------------------------------------------- where stacks block */

struct blocking {
	uint32_t func, caller;   /* caller PL_NOID: none above */
	struct pl_amount w;
};

static int cmp_blocking(const void *a, const void *b)
{
	const struct blocking *x = a, *y = b;

	if (x->w.period != y->w.period)
		return x->w.period > y->w.period ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return x->caller < y->caller ? -1 : (x->caller > y->caller);
}

/* The depth of the first non-kernel, non-state frame from the leaf, or -1. */
static int64_t blocking_depth(const struct pl_profile *p, const struct pl_stack *st)
{
	size_t len;

	for (uint32_t d = st->depth; d-- > 0;) {
		uint32_t f = p->frames[st->frames[d]].func;
		if (!kernel_func(p, f) && !state_of(pl_str(p, p->funcs[f].symbol), &len))
			return d;
	}
	return -1;
}

json_t *pl_blocking_frames(const struct pl_profile *p, const struct pl_view *v)
{
	struct pl_strtab keys;
	struct blocking *all = NULL;
	size_t cap = 0;
	json_t *out = json_array();

	pl_strtab_init(&keys);
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_stack *st = &p->stacks[s];
		const struct pl_weight *w = pl_stack_weight(p, s, v->event);
		int64_t d = w ? blocking_depth(p, st) : -1;
		uint32_t key[2], id;
		if (d < 0)
			continue;
		key[0] = p->frames[st->frames[d]].func;
		key[1] = d > 0 ? p->frames[st->frames[d - 1]].func : PL_NOID;
		id = pl_strtab_intern(&keys, (const char *)key, sizeof(key));
		if (id >= cap) {
			size_t old = cap;
			PL_GROW(all, cap, (size_t)id + 1);
			memset(all + old, 0, (cap - old) * sizeof(*all));
		}
		all[id].func = key[0];
		all[id].caller = key[1];
		add(&all[id].w, w);
	}
	if (keys.count)
		qsort(all, keys.count, sizeof(*all), cmp_blocking);
	for (size_t i = 0; i < keys.count && i < PL_BLOCKING_TOP; i++) {
		const struct blocking *b = &all[i];
		json_array_append_new(out, json_pack("{s:o,s:s,s:o,s:o,s:I,s:I,s:f}",
			"hotspot_id", json_sprintf("fn%u", b->func), "symbol", pl_str(p, p->funcs[b->func].symbol),
			"caller", b->caller == PL_NOID ? json_null() : json_string(pl_str(p, p->funcs[b->caller].symbol)),
			"caller_hotspot_id", b->caller == PL_NOID ? json_null() : json_sprintf("fn%u", b->caller),
			"samples", (json_int_t)b->w.samples, "period", (json_int_t)b->w.period,
			"percent", pl_percent(v, b->w.period)));
	}
	free(all);
	pl_strtab_release(&keys);
	return out;
}
