/* aggregate.c - hotspots, thread, DSO and call-path views (aggregate.h).
 *
 * One pass over the unique stacks: a per-function "last stack seen" stamp
 * makes inclusive weight count each function once per stack in O(depth),
 * and the same trick serves DSOs.  Sorting breaks every tie by name and
 * then by id, so output order never depends on hash layout.
 */
#include "aggregate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void add_amount(struct pl_amount *a, const struct pl_weight *w)
{
	a->samples += w->samples;
	a->period += w->period;
}

static size_t dso_slot(struct pl_view *v, uint32_t *slot_of, uint32_t dso)
{
	uint32_t key = dso == PL_NOID ? 0 : dso + 1;

	if (slot_of[key] == PL_NOID) {
		slot_of[key] = (uint32_t)v->ndsos;
		v->dso_ids[v->ndsos++] = dso;
	}
	return slot_of[key];
}

/* Per-stack marks, so a function or DSO that appears twice in one stack
 * (recursion) counts once in its inclusive amount. */
struct view_marks {
	uint32_t *func_stamp;   /* per function: the last stack (id + 1) counted */
	uint32_t *dso_stamp;    /* per DSO string id + 1 (0: no DSO) */
	uint32_t *slot_of;      /* DSO string id + 1 -> slot in v->dsos */
};

static void view_add_stack(struct pl_view *v, struct view_marks *m, uint32_t s,
			   const struct pl_weight *w)
{
	const struct pl_profile *p = v->p;
	const struct pl_stack *st = &p->stacks[s];
	uint32_t stamp = s + 1;

	v->stacks++;
	add_amount(&v->total, w);
	add_amount(&v->threads[st->thread], w);
	if (st->depth == 0)
		return;
	for (uint32_t d = 0; d < st->depth; d++) {
		const struct pl_frame *fr = &p->frames[st->frames[d]];
		uint32_t dso = p->funcs[fr->func].dso;
		uint32_t dkey = dso == PL_NOID ? 0 : dso + 1;
		if (m->func_stamp[fr->func] != stamp) {
			m->func_stamp[fr->func] = stamp;
			add_amount(&v->funcs[fr->func].incl, w);
		}
		if (m->dso_stamp[dkey] != stamp) {
			m->dso_stamp[dkey] = stamp;
			add_amount(&v->dsos[dso_slot(v, m->slot_of, dso)].incl, w);
		}
	}
	const struct pl_frame *leaf = &p->frames[st->frames[st->depth - 1]];
	const struct pl_func *f = &p->funcs[leaf->func];
	add_amount(&v->funcs[leaf->func].self, w);
	add_amount(&v->dsos[dso_slot(v, m->slot_of, f->dso)].self, w);
	if (f->unknown)
		add_amount(&v->unknown_leaf, w);
}

/* The functions and threads with samples, in id order, then sorted. */
static void view_order(struct pl_view *v, size_t nfuncs)
{
	const struct pl_profile *p = v->p;

	v->hot_order = pl_xmalloc((nfuncs ? nfuncs : 1) * sizeof(uint32_t));
	for (uint32_t f = 0; f < nfuncs; f++)
		if (v->funcs[f].incl.samples)
			v->hot_order[v->nhot++] = f;
	v->thread_order = pl_xmalloc((pl_nthreads(p) + 1) * sizeof(uint32_t));
	for (uint32_t t = 0; t < pl_nthreads(p); t++)
		if (v->threads[t].samples)
			v->thread_order[v->nthread_order++] = t;
	pl_view_sort(v, PL_SORT_SELF);
}

void pl_view_build(struct pl_view *v, const struct pl_profile *p, uint32_t event)
{
	size_t nfuncs = pl_nfuncs(p), nstrs = p->strs.count + 1;
	struct view_marks m = {
		.func_stamp = pl_xcalloc(nfuncs ? nfuncs : 1, sizeof(uint32_t)),
		.dso_stamp = pl_xcalloc(nstrs, sizeof(uint32_t)),
		.slot_of = pl_xmalloc(nstrs * sizeof(uint32_t)),
	};

	memset(v, 0, sizeof(*v));
	v->p = p;
	v->event = event;
	v->funcs = pl_xcalloc(nfuncs ? nfuncs : 1, sizeof(*v->funcs));
	v->threads = pl_xcalloc(pl_nthreads(p) + 1, sizeof(*v->threads));
	v->dso_ids = pl_xmalloc(nstrs * sizeof(uint32_t));
	v->dsos = pl_xcalloc(nstrs, sizeof(*v->dsos));
	memset(m.slot_of, 0xff, nstrs * sizeof(uint32_t));
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_weight *w = pl_stack_weight(p, s, event);
		if (w)
			view_add_stack(v, &m, s, w);
	}
	free(m.func_stamp);
	free(m.dso_stamp);
	free(m.slot_of);
	view_order(v, nfuncs);
}

/* qsort has no context argument, so the view being sorted is a global,
 * one per thread (the artifact writer builds views off the main thread). */
static __thread const struct pl_view *sort_view;
static __thread enum pl_hot_sort sort_by;

static int cmp_amount_desc(const struct pl_amount *a, const struct pl_amount *b)
{
	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return 0;
}

static int cmp_opt_str(const char *a, const char *b)
{
	if (!a || !b)
		return a ? 1 : (b ? -1 : 0);
	return strcmp(a, b);
}

static int cmp_hot(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct pl_func_weight *wa = &sort_view->funcs[a], *wb = &sort_view->funcs[b];
	const struct pl_profile *p = sort_view->p;
	int c;

	if (sort_by == PL_SORT_SELF) {
		if ((c = cmp_amount_desc(&wa->self, &wb->self)))
			return c;
		if ((c = cmp_amount_desc(&wa->incl, &wb->incl)))
			return c;
	} else {
		if ((c = cmp_amount_desc(&wa->incl, &wb->incl)))
			return c;
		if ((c = cmp_amount_desc(&wa->self, &wb->self)))
			return c;
	}
	if ((c = cmp_opt_str(pl_str(p, p->funcs[a].symbol), pl_str(p, p->funcs[b].symbol))))
		return c;
	if ((c = cmp_opt_str(pl_str(p, p->funcs[a].dso), pl_str(p, p->funcs[b].dso))))
		return c;
	return a < b ? -1 : (a > b);
}

static int cmp_thread(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int c = cmp_amount_desc(&sort_view->threads[a], &sort_view->threads[b]);
	return c ? c : (a < b ? -1 : (a > b));
}

void pl_view_sort(struct pl_view *v, enum pl_hot_sort by)
{
	sort_view = v;
	sort_by = by;
	qsort(v->hot_order, v->nhot, sizeof(uint32_t), cmp_hot);
	qsort(v->thread_order, v->nthread_order, sizeof(uint32_t), cmp_thread);
	sort_view = NULL;
}

void pl_view_release(struct pl_view *v)
{
	free(v->funcs);
	free(v->hot_order);
	free(v->threads);
	free(v->thread_order);
	free(v->dso_ids);
	free(v->dsos);
	memset(v, 0, sizeof(*v));
}

double pl_percent(const struct pl_view *v, uint64_t period)
{
	if (v->total.period == 0)
		return 0.0;
	return round((double)period * 100.0 / (double)v->total.period * 10000.0) / 10000.0;
}

/* ------------------------------------------------------------ call paths */

static int cmp_path(const void *pa, const void *pb)
{
	const struct pl_callpath *a = pa, *b = pb;
	int c = cmp_amount_desc(&a->w, &b->w);
	uint32_t n = a->depth < b->depth ? a->depth : b->depth;

	if (c)
		return c;
	for (uint32_t i = 0; i < n; i++)
		if (a->funcs[i] != b->funcs[i])
			return a->funcs[i] < b->funcs[i] ? -1 : 1;
	return a->depth < b->depth ? -1 : (a->depth > b->depth);
}

void pl_callpaths_build(struct pl_callpaths *cp, const struct pl_profile *p,
			uint32_t event, uint32_t func_filter)
{
	uint32_t *buf = NULL;
	size_t buf_cap = 0, cap = 0;

	memset(cp, 0, sizeof(*cp));
	pl_strtab_init(&cp->keys);
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_stack *st = &p->stacks[s];
		const struct pl_weight *w = pl_stack_weight(p, s, event);
		bool keep = func_filter == PL_NOID;
		uint32_t id;

		if (!w)
			continue;
		PL_GROW(buf, buf_cap, st->depth + 1);
		for (uint32_t d = 0; d < st->depth; d++) {
			buf[d] = p->frames[st->frames[d]].func;
			keep |= buf[d] == func_filter;
		}
		if (!keep)
			continue;
		id = pl_strtab_intern(&cp->keys, (const char *)buf, st->depth * 4u);
		if (id == cp->n) {
			PL_GROW(cp->paths, cap, cp->n + 1);
			cp->paths[id] = (struct pl_callpath){
				(const uint32_t *)cp->keys.strs[id], st->depth, {0, 0}};
			cp->n++;
		}
		add_amount(&cp->paths[id].w, w);
	}
	free(buf);
	qsort(cp->paths, cp->n, sizeof(*cp->paths), cmp_path);
}

void pl_callpaths_release(struct pl_callpaths *cp)
{
	pl_strtab_release(&cp->keys);
	free(cp->paths);
	memset(cp, 0, sizeof(*cp));
}

/* ------------------------------------------------ the main executable */

/* Could `dso` be a program rather than a library or the kernel?  Its name
 * is the whole evidence a text profile gives: not "[...]", no ".so". */
static bool may_be_program(const struct pl_profile *p, const struct pl_func *fn)
{
	const char *name, *base;

	if (fn->dso == PL_NOID || fn->kind != PL_KIND_USER || fn->inlined)
		return false;
	name = pl_str(p, fn->dso);
	base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	return name[0] != '[' && name[0] != '(' && !strstr(base, ".so");
}

/* Does the module file `dso` carry the thread's name (comm, which the
 * kernel cuts to 15 bytes)? */
static bool named_like(const struct pl_profile *p, uint32_t dso, uint32_t comm)
{
	const char *name = pl_str(p, dso), *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	const char *c = comm == PL_NOID ? NULL : pl_str(p, comm);

	return c && c[0] && strncmp(base, c, strlen(c)) == 0;
}

/* The main executable of the event's samples, as a DSO string id, or
 * PL_NOID (see aggregate.h).  The program module of the most samples whose thread is named
 * after it wins; else the program module of the most samples.  Each
 * sample counts once per module (inclusive), ties go to the lower id. */
uint32_t pl_main_dso(const struct pl_profile *p, uint32_t event)
{
	size_t nstr = p->strs.count;
	uint64_t *named = pl_xcalloc(nstr + 1, sizeof(uint64_t)), *any = pl_xcalloc(nstr + 1, sizeof(uint64_t));
	uint32_t *seen = pl_xcalloc(nstr + 1, sizeof(uint32_t)), best = PL_NOID;

	for (size_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_stack *st = &p->stacks[s];
		const struct pl_weight *w = pl_stack_weight(p, (uint32_t)s, event);
		uint32_t comm = p->threads[st->thread].comm;
		if (!w || !w->samples)
			continue;
		for (uint32_t d = 0; d < st->depth; d++) {
			const struct pl_func *fn = &p->funcs[p->frames[st->frames[d]].func];
			if (!may_be_program(p, fn) || seen[fn->dso] == s + 1)
				continue;
			seen[fn->dso] = (uint32_t)s + 1;
			any[fn->dso] += w->samples;
			if (named_like(p, fn->dso, comm))
				named[fn->dso] += w->samples;
		}
	}
	for (uint64_t *score = named; score; score = score == named ? any : NULL) {
		for (size_t i = 0; i < nstr; i++)
			if (score[i] && (best == PL_NOID || score[i] > score[best]))
				best = (uint32_t)i;
		if (best != PL_NOID)
			break;
	}
	free(named);
	free(any);
	free(seen);
	return best;
}
