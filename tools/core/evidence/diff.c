/* diff.c - the comparison of two profiles (see diff.h).
 *
 * Each side is weighed, folded and its lines sorted on its own, the two
 * sides in two threads (pl_diff_run_pair) since nothing is shared.
 * Weighing follows aggregate.h's rules (self weight to the leaf function,
 * inclusive weight once per distinct function of a stack) in one pass
 * that also sums the [unknown] shares; it does not use pl_view_build,
 * whose sort keeps its context in a global and so cannot run twice at
 * once.
 *
 * Functions are then joined by (symbol, DSO key) text in a hash table
 * whose hashes each side computed in its thread; ids of the two profiles
 * never meet.  The key (dso_key) is the module's file name, and each
 * side's main executable is one module whatever its path, and its
 * command one root of the call paths whatever its name.
 * Paths: each candidate line is re-interned into the baseline's fold (its
 * names first, mapped id by id), so a line id names one text whichever
 * side it came from.  Lines are in byte order of their text by comparing
 * name sequences as pl_write_folded does (the order of the folded
 * exports); each side's lines are sorted in its thread, which does not
 * depend on ids, and the two orders are merged.  The functions' join and
 * the paths' merge then run side by side too.
 */
#include "diff.h"
#include "export/flamegraph.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define OUT_FLUSH (64 * 1024)  /* bytes of folded text buffered per write */

static const char *const status_names[] = {"unchanged", "changed", "added", "removed"};

const char *pl_diff_status_name(enum pl_diff_status s)
{
	return status_names[s];
}

/* Does a change show at the 4 decimals shares are given with? */
static bool shows(double points)
{
	return round(fabs(points) * 1e4) != 0;
}

enum pl_diff_status pl_diff_classify(uint64_t before, uint64_t after,
				     const double *deltas, size_t n)
{
	if (!before != !after)
		return before ? PL_DIFF_REMOVED : PL_DIFF_ADDED;
	for (size_t i = 0; i < n; i++)
		if (shows(deltas[i]))
			return PL_DIFF_CHANGED;
	return PL_DIFF_UNCHANGED;
}

/* A zeroed array of n items, its pages mapped at once (a page faulted in
 * one by one costs much more on the project's VMs; see pl_prefault). */
static void *zeroed(size_t n, size_t size)
{
	void *p = pl_xcalloc(n + 1, size);

	pl_prefault(p, (n + 1) * size);
	return p;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

void pl_diff_run_pair(void *(*fn)(void *), void *a, void *b)
{
	pthread_t t;
	bool threaded = pthread_create(&t, NULL, fn, a) == 0;

	if (!threaded)
		fn(a);
	fn(b);
	if (threaded)
		pthread_join(t, NULL);
}

/* ------------------------------------------------------------ functions */

/* One side's weights: per function (aggregate.h's rules) and in total. */
struct side {
	struct pl_diff *d;
	int s;
	struct pl_fold_opts fold;
	struct pl_func_weight *funcs;   /* [nfuncs of the side's profile] */
	uint64_t *hash;                 /* [nfuncs]: of (symbol, DSO key), for the join */
	uint32_t main_dso;              /* pl_main_dso of the side's event */
	struct pl_folded folded;
	uint32_t *sorted;               /* the fold's line ids in text order */
	uint32_t main_root;             /* the fold's name of the main executable's
					 * command, PL_NOID when none */
	enum pl_err rc;
	struct pl_error err;
};

static void add_amount(struct pl_amount *a, const struct pl_weight *w)
{
	a->samples += w->samples;
	a->period += w->period;
}

/* What a function's DSO is joined by.  Each side's main executable is
 * one module whatever its path (two builds of a program, ./app-old and
 * ./app-new, are what an A/B comparison compares); any other module by
 * its file name, so that libc under /lib and under /usr/lib, or a library
 * in two build folders, stays one; kernel and other [bracketed] names as
 * they are.  NULL for no DSO. */
static const char main_key[] = "\x01main executable";

static const char *dso_key(const struct side *sd, const struct pl_profile *p, uint32_t dso)
{
	const char *name, *slash;

	if (dso == PL_NOID)
		return NULL;
	if (dso == sd->main_dso)
		return main_key;
	name = pl_str(p, dso);
	slash = strrchr(name, '/');
	return name[0] == '[' || !slash ? name : slash + 1;
}

static void weigh_side(struct side *sd)
{
	struct pl_diff *d = sd->d;
	const struct pl_profile *p = d->p[sd->s];
	uint32_t ev = d->event[sd->s], *stamp = zeroed(pl_nfuncs(p), sizeof(uint32_t));

	sd->funcs = zeroed(pl_nfuncs(p), sizeof(*sd->funcs));
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_stack *st = &p->stacks[s];
		const struct pl_weight *w = pl_stack_weight(p, s, ev);
		bool unknown = false;

		if (!w)
			continue;
		d->unique_stacks[sd->s]++;
		add_amount(&d->total[sd->s], w);
		for (uint32_t k = 0; k < st->depth; k++) {
			uint32_t f = p->frames[st->frames[k]].func;
			unknown |= p->funcs[f].unknown;
			if (stamp[f] != s + 1) {
				stamp[f] = s + 1;
				add_amount(&sd->funcs[f].incl, w);
			}
		}
		if (st->depth) {
			uint32_t leaf = p->frames[st->frames[st->depth - 1]].func;
			add_amount(&sd->funcs[leaf].self, w);
			if (p->funcs[leaf].unknown)
				add_amount(&d->unknown_self[sd->s], w);
		}
		if (unknown)
			add_amount(&d->unknown_any[sd->s], w);
	}
	free(stamp);
	sd->main_dso = pl_main_dso(p, ev);
	sd->hash = zeroed(pl_nfuncs(p), sizeof(uint64_t));
	for (uint32_t f = 0; f < pl_nfuncs(p); f++) {
		const struct pl_func *fn = &p->funcs[f];
		const char *key = dso_key(sd, p, fn->dso);
		uint64_t h = pl_strtab_hash(pl_str(p, fn->symbol), p->strs.lens[fn->symbol]);
		if (key)
			h ^= (pl_strtab_hash(key, strlen(key)) + 1) * 0xff51afd7ed558ccdULL;
		sd->hash[f] = h;
	}
}

/* The join's table: hash of (symbol, DSO) -> index in d->funcs + 1. */
struct join {
	struct join_slot {
		uint64_t h;
		uint32_t func1;   /* 0: empty */
	} *slots;
	size_t mask;
};

static bool same_func(const struct pl_diff_func *df, const struct pl_profile *p,
		      const struct pl_func *f, const char *key)
{
	return strcmp(df->symbol, pl_str(p, f->symbol)) == 0 &&
	       (df->dso_key && key ? strcmp(df->dso_key, key) == 0 : df->dso_key == key);
}

/* Add one side's functions with weight to d->funcs (room for all of
 * them made beforehand), matching by text. */
static void join_side(struct pl_diff *d, const struct side *sd, struct join *j)
{
	const struct pl_profile *p = d->p[sd->s];

	for (uint32_t f = 0; f < pl_nfuncs(p); f++) {
		uint64_t h = sd->hash[f];
		size_t k = h & j->mask;
		const char *key = dso_key(sd, p, p->funcs[f].dso);
		struct pl_diff_func *df;

		if (!sd->funcs[f].incl.samples)
			continue;
		/* Only side 1 can match.  Within a side two functions may share a
		 * key (one symbol in libx.so of two folders): they stay apart. */
		for (; j->slots[k].func1; k = (k + 1) & j->mask)
			if (sd->s && j->slots[k].h == h &&
			    d->funcs[j->slots[k].func1 - 1].func[1] == PL_NOID &&
			    same_func(&d->funcs[j->slots[k].func1 - 1], p, &p->funcs[f], key))
				break;
		if (!j->slots[k].func1) {
			df = &d->funcs[d->nfuncs++];
			df->symbol = pl_str(p, p->funcs[f].symbol);
			df->dso = pl_str(p, p->funcs[f].dso);
			df->dso_key = key;
			df->func[0] = df->func[1] = PL_NOID;
			j->slots[k] = (struct join_slot){h, (uint32_t)d->nfuncs};
		} else {
			const char *dso = pl_str(p, p->funcs[f].dso);
			df = &d->funcs[j->slots[k].func1 - 1];
			d->dso_joined_apart += key != main_key && df->dso && dso && strcmp(df->dso, dso);
		}
		df = &d->funcs[j->slots[k].func1 - 1];
		df->func[sd->s] = f;
		df->w[sd->s] = sd->funcs[f];
	}
}

static void join_funcs(struct pl_diff *d, const struct side *sides)
{
	size_t n = 0;
	struct join j = {NULL, 15};

	for (int s = 0; s < 2; s++)
		for (uint32_t f = 0; f < pl_nfuncs(d->p[s]); f++)
			n += sides[s].funcs[f].incl.samples != 0;
	d->funcs = zeroed(n, sizeof(*d->funcs));
	while (j.mask < 2 * n)
		j.mask = j.mask * 2 + 1;
	j.slots = zeroed(j.mask, sizeof(*j.slots));
	for (int s = 0; s < 2; s++)
		d->main_dso[s] = sides[s].main_dso == PL_NOID ? NULL : pl_str(d->p[s], sides[s].main_dso);
	join_side(d, &sides[0], &j);
	join_side(d, &sides[1], &j);
	free(j.slots);
}

static void func_deltas(struct pl_diff *d)
{
	for (size_t i = 0; i < d->nfuncs; i++) {
		struct pl_diff_func *f = &d->funcs[i];
		double deltas[2];

		for (int s = 0; s < 2; s++) {
			f->self_pct[s] = share(f->w[s].self.period, d->total[s].period);
			f->incl_pct[s] = share(f->w[s].incl.period, d->total[s].period);
		}
		f->self_delta = f->self_pct[1] - f->self_pct[0];
		f->incl_delta = f->incl_pct[1] - f->incl_pct[0];
		deltas[0] = f->self_delta;
		deltas[1] = f->incl_delta;
		f->status = pl_diff_classify(f->w[0].incl.samples, f->w[1].incl.samples, deltas, 2);
	}
}

/* ---------------------------------------------------------------- paths */


/* The root name (a name id of the side's fold) of the main executable's
 * command: of the roots that name it (the command is the file name, or
 * its first 15 bytes, as the kernel keeps it), the heaviest; PL_NOID
 * when there is none, or when roots carry pids (they differ from run to
 * run anyway). */
static uint32_t main_root(const struct side *sd)
{
	const struct pl_profile *p = sd->d->p[sd->s];
	const struct pl_folded *f = &sd->folded;
	const char *dso, *base;
	uint64_t *w, best_w = 0;
	uint32_t best = PL_NOID;

	if (sd->main_dso == PL_NOID || sd->fold.pid || sd->fold.tid)
		return PL_NOID;
	dso = pl_str(p, sd->main_dso);
	base = strrchr(dso, '/') ? strrchr(dso, '/') + 1 : dso;
	w = zeroed(f->names.count + 1, sizeof(uint64_t));
	for (uint32_t i = 0; i < f->n; i++) {
		uint32_t depth;
		const uint32_t *names = pl_folded_names(f, i, &depth);
		if (depth)
			w[names[0]] += f->weights[i];
	}
	for (uint32_t i = 0; i < f->names.count; i++) {
		size_t len = f->names.lens[i];
		if (!w[i] || len == 0 || strncmp(base, f->names.strs[i], len) != 0 ||
		    (base[len] != '\0' && len < 15))
			continue;
		if (w[i] > best_w || (w[i] == best_w && best != PL_NOID && i < best)) {
			best = i;
			best_w = w[i];
		}
	}
	free(w);
	return best;
}

/* A side's own work: weigh, fold, and sort its lines by text. */
static void *side_main(void *arg)
{
	struct side *sd = arg;

	weigh_side(sd);
	sd->fold.event = sd->d->event[sd->s];
	if ((sd->rc = pl_fold(&sd->folded, sd->d->p[sd->s], &sd->fold, &sd->err)))
		return NULL;
	sd->sorted = zeroed(sd->folded.n, sizeof(uint32_t));
	for (uint32_t i = 0; i < sd->folded.n; i++)
		sd->sorted[i] = i;
	qsort_r(sd->sorted, sd->folded.n, sizeof(uint32_t), pl_folded_cmp_lines, &sd->folded);
	sd->main_root = main_root(sd);
	return NULL;
}

/* Add the candidate's fold `c` to the baseline's (d->folded, whose lines
 * keep their ids); returns each candidate line's id there (new array).
 * A candidate line rooted at `cand_root` is rooted at `base_root` instead
 * (a name id of the joint fold; PL_NOID: none renamed). */
static uint32_t *merge_candidate(struct pl_diff *d, const struct pl_folded *c,
				 uint32_t cand_root, uint32_t base_root)
{
	struct pl_folded *m = &d->folded;
	uint32_t *map = pl_xmalloc((c->names.count + 1) * sizeof(uint32_t));
	uint32_t *ids = zeroed(c->n, sizeof(uint32_t));
	uint32_t *seq = NULL;
	size_t seq_cap = 0;

	for (size_t i = 0; i < c->names.count; i++)
		map[i] = pl_strtab_intern(&m->names, c->names.strs[i], c->names.lens[i]);
	d->npaths = m->lines.count;
	d->paths = zeroed(d->npaths + c->n, sizeof(*d->paths));
	for (size_t i = 0; i < d->npaths; i++)
		d->paths[i].count[0] = m->weights[i];
	for (uint32_t i = 0; i < c->n; i++) {
		uint32_t depth, id;
		const uint32_t *names = pl_folded_names(c, i, &depth);

		PL_GROW(seq, seq_cap, (size_t)depth + 1);
		for (uint32_t k = 0; k < depth; k++)
			seq[k] = map[names[k]];
		if (depth && base_root != PL_NOID && names[0] == cand_root)
			seq[0] = base_root;
		id = pl_strtab_intern(&m->lines, (const char *)seq, depth * sizeof(uint32_t));
		if (id == d->npaths)
			d->npaths++;
		d->paths[id].count[1] += c->weights[i];
		ids[i] = id;
	}
	free(seq);
	free(map);
	return ids;
}

/* The text order of all lines from the two sides' sorted lines: a merge,
 * skipping candidate lines the baseline has (ids below nbase). */
static void merge_orders(struct pl_diff *d, const uint32_t *base_sorted, size_t nbase,
			 const uint32_t *cand_sorted, size_t ncand, const uint32_t *cand_ids)
{
	size_t i = 0, j = 0, k = 0;

	d->text_order = zeroed(d->npaths, sizeof(uint32_t));
	while (i < nbase || j < ncand) {
		uint32_t c;

		if (j < ncand && cand_ids[cand_sorted[j]] < nbase) {
			j++;
			continue;
		}
		c = j < ncand ? cand_ids[cand_sorted[j]] : 0;
		if (j == ncand || (i < nbase && pl_folded_cmp_lines(&base_sorted[i], &c, &d->folded) < 0)) {
			d->text_order[k++] = base_sorted[i++];
		} else {
			d->text_order[k++] = c;
			j++;
		}
	}
}

static void path_deltas(struct pl_diff *d)
{
	for (uint32_t i = 0; i < d->npaths; i++) {
		d->fold_total[0] += d->paths[i].count[0];
		d->fold_total[1] += d->paths[i].count[1];
	}
	for (uint32_t r = 0; r < d->npaths; r++) {
		struct pl_diff_path *p = &d->paths[d->text_order[r]];
		p->text_rank = r;
		p->pct[0] = share(p->count[0], d->fold_total[0]);
		p->pct[1] = share(p->count[1], d->fold_total[1]);
		p->delta = p->pct[1] - p->pct[0];
		p->status = pl_diff_classify(p->count[0], p->count[1], &p->delta, 1);
		d->common_paths += p->count[0] && p->count[1];
	}
}

/* The joint work once both sides are done: functions in one thread and
 * paths in the other (they touch different parts of the diff). */
struct finish_job {
	struct pl_diff *d;
	struct side *sides;
	bool paths;
	uint32_t base_root;      /* joint root of the main commands, or PL_NOID */
};

static void *finish_main(void *arg)
{
	struct finish_job *j = arg;
	struct pl_diff *d = j->d;
	uint32_t *cand_ids;

	if (!j->paths) {
		join_funcs(d, j->sides);
		func_deltas(d);
		return NULL;
	}
	cand_ids = merge_candidate(d, &j->sides[1].folded, j->sides[1].main_root, j->base_root);
	if (j->base_root == PL_NOID) {
		merge_orders(d, j->sides[0].sorted, d->folded.n, j->sides[1].sorted,
			     j->sides[1].folded.n, cand_ids);
	} else {
		/* renamed lines left the candidate's own text order */
		d->text_order = zeroed(d->npaths, sizeof(uint32_t));
		for (uint32_t i = 0; i < d->npaths; i++)
			d->text_order[i] = i;
		qsort_r(d->text_order, d->npaths, sizeof(uint32_t), pl_folded_cmp_lines, &d->folded);
	}
	free(cand_ids);
	path_deltas(d);
	return NULL;
}

/* ------------------------------------------------------------------ API */

enum pl_err pl_diff_build(struct pl_diff *d, const struct pl_profile *base,
			  uint32_t base_event, const struct pl_profile *cand,
			  uint32_t cand_event, const struct pl_fold_opts *fold,
			  struct pl_error *err)
{
	struct side sides[2];
	enum pl_err rc = PL_OK;

	memset(d, 0, sizeof(*d));
	memset(sides, 0, sizeof(sides));
	d->p[0] = base;
	d->p[1] = cand;
	d->event[0] = base_event;
	d->event[1] = cand_event;
	for (int s = 0; s < 2; s++) {
		sides[s].d = d;
		sides[s].s = s;
		sides[s].fold = *fold;
	}
	pl_diff_run_pair(side_main, &sides[0], &sides[1]);
	for (int s = 0; s < 2 && !rc; s++)
		if ((rc = sides[s].rc))
			*err = sides[s].err;
	if (!rc) {
		struct finish_job jobs[2] = {{d, sides, false, PL_NOID}, {d, sides, true, PL_NOID}};
		uint32_t r0 = sides[0].main_root, r1 = sides[1].main_root;
		const struct pl_strtab *n0 = &sides[0].folded.names, *n1 = &sides[1].folded.names;

		/* Two builds of one program under two names (prog, prog-fixed):
		 * the main executables' commands are one root. */
		if (r0 != PL_NOID && r1 != PL_NOID &&
		    (n0->lens[r0] != n1->lens[r1] || memcmp(n0->strs[r0], n1->strs[r1], n0->lens[r0]) != 0)) {
			jobs[1].base_root = r0;
			d->main_comm[0] = pl_xstrndup(n0->strs[r0], n0->lens[r0]);
			d->main_comm[1] = pl_xstrndup(n1->strs[r1], n1->lens[r1]);
		}
		/* the baseline's fold becomes the joint one */
		d->folded = sides[0].folded;
		memset(&sides[0].folded, 0, sizeof(sides[0].folded));
		pl_diff_run_pair(finish_main, &jobs[0], &jobs[1]);
	}
	for (int s = 0; s < 2; s++) {
		free(sides[s].funcs);
		free(sides[s].hash);
		free(sides[s].sorted);
		pl_folded_release(&sides[s].folded);
	}
	return rc;
}

void pl_diff_release(struct pl_diff *d)
{
	free(d->funcs);
	free(d->main_comm[0]);
	free(d->main_comm[1]);
	pl_folded_release(&d->folded);
	free(d->paths);
	free(d->text_order);
	memset(d, 0, sizeof(*d));
}

/* --------------------------------------------------------------- orders */

static int cmp_desc(double a, double b)
{
	return (a < b) - (a > b);
}

static int cmp_opt_str(const char *a, const char *b)
{
	if (!a || !b)
		return a ? 1 : (b ? -1 : 0);
	return strcmp(a, b);
}

struct func_sort {
	const struct pl_diff *d;
	bool by_inclusive;
};

static int cmp_func(const void *pa, const void *pb, void *ctx)
{
	const struct func_sort *s = ctx;
	const struct pl_diff_func *a = &s->d->funcs[*(const size_t *)pa];
	const struct pl_diff_func *b = &s->d->funcs[*(const size_t *)pb];
	double a1 = fabs(s->by_inclusive ? a->incl_delta : a->self_delta);
	double b1 = fabs(s->by_inclusive ? b->incl_delta : b->self_delta);
	double a2 = fabs(s->by_inclusive ? a->self_delta : a->incl_delta);
	double b2 = fabs(s->by_inclusive ? b->self_delta : b->incl_delta);
	int c;

	if ((c = cmp_desc(a1, b1)) || (c = cmp_desc(a2, b2)) ||
	    (c = strcmp(a->symbol, b->symbol)) || (c = cmp_opt_str(a->dso, b->dso)))
		return c;
	return 0;  /* (symbol, DSO) is unique */
}

size_t pl_diff_func_order(const struct pl_diff *d, bool by_inclusive,
			  double min_points, size_t **order)
{
	struct func_sort s = {d, by_inclusive};
	size_t n = 0;

	*order = pl_xmalloc((d->nfuncs + 1) * sizeof(size_t));
	for (size_t i = 0; i < d->nfuncs; i++)
		if (fabs(d->funcs[i].self_delta) >= min_points ||
		    fabs(d->funcs[i].incl_delta) >= min_points)
			(*order)[n++] = i;
	qsort_r(*order, n, sizeof(size_t), cmp_func, &s);
	return n;
}

static int cmp_path(const void *pa, const void *pb, void *ctx)
{
	const struct pl_diff *d = ctx;
	const struct pl_diff_path *a = &d->paths[*(const uint32_t *)pa];
	const struct pl_diff_path *b = &d->paths[*(const uint32_t *)pb];
	int c;

	if ((c = cmp_desc(fabs(a->delta), fabs(b->delta))))
		return c;
	for (int s = 1; s >= 0; s--)
		if (a->count[s] != b->count[s])
			return a->count[s] > b->count[s] ? -1 : 1;
	return (a->text_rank > b->text_rank) - (a->text_rank < b->text_rank);
}

size_t pl_diff_path_order(const struct pl_diff *d, double min_points,
			  uint32_t **order)
{
	size_t n = 0;

	*order = pl_xmalloc((d->npaths + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < d->npaths; i++)
		if (fabs(d->paths[i].delta) >= min_points)
			(*order)[n++] = i;
	qsort_r(*order, n, sizeof(uint32_t), cmp_path, (void *)d);
	return n;
}

/* --------------------------------------------------------------- output */

/* count1 as difffolded.pl -n scales it: int(count1 * total2 / total1). */
static uint64_t baseline_count(const struct pl_diff *d, const struct pl_diff_path *p,
			       bool normalize)
{
	if (!normalize || d->fold_total[0] == d->fold_total[1] || d->fold_total[0] == 0)
		return p->count[0];
	return (uint64_t)((unsigned __int128)p->count[0] * d->fold_total[1] / d->fold_total[0]);
}

/* Folded text goes through a plain buffer: ~100 MB of it for 100k stacks,
 * so each byte should cost a copy and nothing more. */
struct out_buf {
	FILE *out;
	char data[OUT_FLUSH];
	size_t len;
	bool failed;
};

static void out_flush(struct out_buf *o)
{
	if (o->len && fwrite(o->data, 1, o->len, o->out) != o->len)
		o->failed = true;
	o->len = 0;
}

static void out_add(struct out_buf *o, const char *s, size_t n)
{
	if (o->len + n > sizeof(o->data)) {
		out_flush(o);
		if (n > sizeof(o->data)) {
			o->failed |= fwrite(s, 1, n, o->out) != n;
			return;
		}
	}
	memcpy(o->data + o->len, s, n);
	o->len += n;
}

enum pl_err pl_diff_write_folded(FILE *out, const struct pl_diff *d,
				 bool normalize, struct pl_error *err)
{
	const struct pl_folded *f = &d->folded;
	struct out_buf *o = pl_xmalloc(sizeof(*o));
	char tail[48];

	o->out = out;
	o->len = 0;
	o->failed = false;
	for (size_t i = 0; i < d->npaths; i++) {
		uint32_t id = d->text_order[i], depth;
		const uint32_t *names = pl_folded_names(f, id, &depth);
		size_t n = 0;

		for (uint32_t k = 0; k < depth; k++) {
			if (k)
				out_add(o, ";", 1);
			out_add(o, f->names.strs[names[k]], f->names.lens[names[k]]);
		}
		tail[n++] = ' ';
		n += pl_fmt_u64(tail + n, baseline_count(d, &d->paths[id], normalize));
		tail[n++] = ' ';
		n += pl_fmt_u64(tail + n, d->paths[id].count[1]);
		tail[n++] = '\n';
		out_add(o, tail, n);
	}
	out_flush(o);
	if (o->failed || ferror(out)) {
		free(o);
		return pl_fail(err, PL_ERR_OUTPUT, "check free space on the output's disk",
			       "cannot write the folded diff");
	}
	free(o);
	return PL_OK;
}

enum pl_err pl_diff_write_flamegraph(FILE *out, const struct pl_diff *d,
				     bool normalize, const struct pl_svg_opts *o,
				     struct pl_error *err)
{
	struct pl_flame_stack *stacks = pl_xcalloc(d->npaths + 1, sizeof(*stacks));
	struct pl_flame_opts fo = {0};
	enum pl_err rc;

	for (uint32_t i = 0; i < d->npaths; i++) {
		stacks[i].names = pl_folded_names(&d->folded, i, &stacks[i].depth);
		stacks[i].weight = d->paths[i].count[1];
		stacks[i].before = baseline_count(d, &d->paths[i], normalize);
	}
	fo.title = o->title;
	fo.subtitle = o->subtitle;
	fo.unit = o->unit;
	fo.width = o->width;
	fo.differential = 1;
	rc = pl_flamegraph_write(out, stacks, d->npaths, d->folded.names.strs,
				 d->folded.names.count, &fo, err);
	free(stacks);
	return rc;
}
