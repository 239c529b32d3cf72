/* stack_table.c - writing and reading the stack table (see stack_table.h).
 *
 * Writing streams the document through a 64 KiB buffer: jansson encodes
 * every JSON string (each name, and each chunk of records) and the few
 * small arrays, and only the container punctuation between them is written
 * here.  Records are decimal fields formatted with pl_fmt_u64.  To find the
 * longest prefix a stack shares with an earlier one, the writer builds a
 * call tree for the duration of the write: a hash table from (parent node,
 * frame) to node that remembers the first stack through each node.  The
 * tree stops growing at TREE_MAX_NODES; later stacks still share what is
 * there and list the rest of their frames, so memory stays bounded.
 *
 * A caller check (profile.h, enum pl_edge), when the analysis made one,
 * follows the tails: its unknown modules, the marks and the marked
 * weights, the last two as record chunks; a document without them is a
 * profile that was not checked.
 *
 * Reading unpacks the document strictly with jansson, then reads each
 * table in id order, checking every id against the tables read before it.
 * Re-interning must give back the same dense ids, so a duplicate entry is
 * malformed as well.  Output is deterministic: tables are in id order.
 */
#include "stack_table.h"
#include "artifact.h"

#include <stdlib.h>
#include <string.h>

#define STACK_TABLE_CHUNK 64        /* records per JSON string */
#define OUT_FLUSH (64 * 1024)       /* bytes buffered before emitting */
#define TREE_MAX_NODES (1u << 20)   /* call-tree nodes kept by the writer */
#define PL_MAX_DEPTH_WORDS 4096     /* edges one mark may hold */

/* ------------------------------------------------------------ writing */

struct tw {
	json_dump_callback_t emit;
	void *data;
	bool failed;
	struct pl_buf out;    /* encoded bytes not yet emitted */
	struct pl_buf rec;    /* records of the chunk being built */
	size_t nrec;          /* records in `rec` */
	size_t nchunks;       /* chunks written in the current table */
};

static void tw_flush(struct tw *w)
{
	if (w->out.len && !w->failed && w->emit(w->out.data, w->out.len, w->data) != 0)
		w->failed = true;
	w->out.len = 0;
}

static void tw_raw(struct tw *w, const char *s)
{
	pl_buf_adds(&w->out, s);
}

static int add_to_buf(const char *s, size_t n, void *data)
{
	pl_buf_add(data, s, n);
	return 0;
}

/* Append `v` as jansson encodes it; steals `v`.  The profile's strings
 * are UTF-8 (names that were not are kept escaped, profile.h), so jansson
 * refuses none of them; were it to, the value would be left out. */
static void tw_value_new(struct tw *w, json_t *v)
{
	size_t mark = w->out.len;

	if (json_dump_callback(v, add_to_buf, &w->out, PL_DUMP_FLAGS | JSON_ENCODE_ANY) != 0 &&
	    w->out.data) {
		w->out.len = mark;
		w->out.data[mark] = '\0';
	}
	json_decref(v);
	if (w->out.len >= OUT_FLUSH)
		tw_flush(w);
}

static void tw_item_new(struct tw *w, size_t index, json_t *v)
{
	if (index)
		tw_raw(w, ",");
	tw_value_new(w, v);
}

static void rec_u64(struct tw *w, uint64_t v)
{
	char d[24];
	pl_buf_add(&w->rec, d, pl_fmt_u64(d, v));
}

static void rec_x64(struct tw *w, uint64_t v)
{
	char d[24];
	pl_buf_add(&w->rec, d, pl_fmt_x64(d, v));
}

static void chunk_flush(struct tw *w)
{
	if (!w->nrec)
		return;
	tw_item_new(w, w->nchunks++, json_stringn_nocheck(w->rec.data, w->rec.len));
	pl_buf_reset(&w->rec);
	w->nrec = 0;
}

static void table_begin(struct tw *w, const char *head)
{
	tw_raw(w, head);
	w->nchunks = 0;
}

static void rec_begin(struct tw *w)
{
	if (w->nrec)
		pl_buf_addc(&w->rec, ' ');
}

static void rec_end(struct tw *w)
{
	if (++w->nrec == STACK_TABLE_CHUNK)
		chunk_flush(w);
}

static json_t *opt_id(uint32_t id)
{
	return id == PL_NOID ? json_null() : json_integer(id);
}

static json_t *opt_i64(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

static void write_names(struct tw *w, const struct pl_profile *p)
{
	for (size_t i = 0; i < p->strs.count; i++)
		tw_item_new(w, i, json_stringn_nocheck(p->strs.strs[i], p->strs.lens[i]));
	table_begin(w, "],\"events\":[");
	for (size_t i = 0; i < p->nevents; i++)
		tw_item_new(w, i, p->events[i].unit1 ?
			    json_pack("[I,I,I]", (json_int_t)p->events[i].name,
				      (json_int_t)p->events[i].records_without_period,
				      (json_int_t)p->events[i].unit1 - 1) :
			    json_pack("[I,I]", (json_int_t)p->events[i].name,
				      (json_int_t)p->events[i].records_without_period));
}

/* A function inlined into its module (symbols/srclines.c), kept apart
 * from the same name out of line: perf text's "(inlined)" pseudo-DSO
 * says so by its name already. */
static bool inlined_in_module(const struct pl_profile *p, const struct pl_func *f)
{
	const char *d = pl_str(p, f->dso);

	return f->inlined && !(d && strcmp(d, "inlined") == 0);
}

/* "SYMBOL", "SYMBOL|DSO", or with "|i" after them when inlined into the
 * module: "SYMBOL|DSO|i", "SYMBOL||i" */
static void write_functions(struct tw *w, const struct pl_profile *p)
{
	table_begin(w, "],\"functions\":[");
	for (size_t i = 0; i < pl_nfuncs(p); i++) {
		rec_begin(w);
		/* the name as the input gave it: a mangled one is demangled
		 * again when read back (pl_intern_func) */
		rec_u64(w, p->funcs[i].linkage != PL_NOID ? p->funcs[i].linkage : p->funcs[i].symbol);
		if (p->funcs[i].dso != PL_NOID) {
			pl_buf_addc(&w->rec, '|');
			rec_u64(w, p->funcs[i].dso);
		}
		if (inlined_in_module(p, &p->funcs[i]))
			pl_buf_add(&w->rec, p->funcs[i].dso != PL_NOID ? "|i" : "||i",
				   p->funcs[i].dso != PL_NOID ? 2 : 3);
		rec_end(w);
	}
	chunk_flush(w);
	table_begin(w, "],\"threads\":[");
	for (size_t i = 0; i < pl_nthreads(p); i++) {
		const struct pl_thread *t = &p->threads[i];
		tw_item_new(w, i, json_pack("[o,o,o]", opt_i64(t->pid), opt_i64(t->tid), opt_id(t->comm)));
	}
}

/* "FUNC", "FUNC|ADDR", "FUNC|ADDR|SRCLINE" or "FUNC||SRCLINE" */
static void write_frames(struct tw *w, const struct pl_profile *p)
{
	table_begin(w, "],\"frames\":[");
	for (size_t i = 0; i < pl_nframes(p); i++) {
		const struct pl_frame *f = &p->frames[i];
		rec_begin(w);
		rec_u64(w, f->func);
		if (f->has_addr || f->srcline != PL_NOID) {
			pl_buf_addc(&w->rec, '|');
			if (f->has_addr)
				rec_x64(w, f->addr);
			if (f->srcline != PL_NOID) {
				pl_buf_addc(&w->rec, '|');
				rec_u64(w, f->srcline);
			}
		}
		rec_end(w);
	}
	chunk_flush(w);
}

/* The writer's call tree: (parent node + 1, frame) -> node + 1, with the
 * first stack that passed through the node. */
struct tree_slot {
	uint64_t key;
	uint32_t node1;       /* 0: empty */
	uint32_t stack;
};
struct tree {
	struct tree_slot *slots;
	size_t mask;
	uint32_t count;
};

static size_t tree_index(const struct tree *t, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & t->mask;
}

static struct tree_slot *tree_find(const struct tree *t, uint64_t key)
{
	size_t j = tree_index(t, key);

	while (t->slots[j].node1 && t->slots[j].key != key)
		j = (j + 1) & t->mask;
	return &t->slots[j];
}

static void tree_grow(struct tree *t)
{
	struct tree old = *t;

	t->mask = old.mask * 2 + 1;
	t->slots = pl_xcalloc(t->mask + 1, sizeof(*t->slots));
	pl_prefault(t->slots, (t->mask + 1) * sizeof(*t->slots));
	for (size_t i = 0; i <= old.mask; i++)
		if (old.slots[i].node1)
			*tree_find(t, old.slots[i].key) = old.slots[i];
	free(old.slots);
}

/* Add a node known to be absent; returns its id + 1. */
static uint32_t tree_add(struct tree *t, uint64_t key, uint32_t stack)
{
	struct tree_slot *sl = tree_find(t, key);
	uint32_t node1 = ++t->count;

	*sl = (struct tree_slot){key, node1, stack};
	if ((size_t)t->count * 2 > t->mask)
		tree_grow(t);
	return node1;
}

#define TREE_KEY(parent1, frame) (((uint64_t)(parent1) << 32) | (frame))

/* How many leading frames of stack `s` an earlier stack (*base) has too;
 * adds the rest of the stack's path to the tree. */
static uint32_t tree_share(struct tree *t, const struct pl_stack *st, uint32_t s,
			   uint32_t *base)
{
	uint32_t parent1 = 0, shared = 0;

	for (; shared < st->depth; shared++) {
		const struct tree_slot *sl = tree_find(t, TREE_KEY(parent1, st->frames[shared]));
		if (!sl->node1)
			break;
		parent1 = sl->node1;
		*base = sl->stack;
	}
	for (uint32_t d = shared; d < st->depth && t->count < TREE_MAX_NODES; d++)
		parent1 = tree_add(t, TREE_KEY(parent1, st->frames[d]), s);
	return shared;
}

/* "THREAD|BASE:SHARED|FRAME,FRAME...|EVENT:SAMPLES:PERIOD;..." */
static void write_stack(struct tw *w, struct tree *t, const struct pl_profile *p,
			uint32_t s)
{
	const struct pl_stack *st = &p->stacks[s];
	uint32_t base = 0, shared = tree_share(t, st, s, &base);

	rec_begin(w);
	rec_u64(w, st->thread);
	pl_buf_addc(&w->rec, '|');
	if (shared) {
		rec_u64(w, base);
		pl_buf_addc(&w->rec, ':');
		rec_u64(w, shared);
	}
	pl_buf_addc(&w->rec, '|');
	for (uint32_t d = shared; d < st->depth; d++) {
		if (d > shared)
			pl_buf_addc(&w->rec, ',');
		rec_u64(w, st->frames[d]);
	}
	pl_buf_addc(&w->rec, '|');
	for (uint32_t i = st->first_weight; i != PL_NOID; i = p->weights[i].next) {
		if (i != st->first_weight)
			pl_buf_addc(&w->rec, ';');
		rec_u64(w, p->weights[i].event);
		pl_buf_addc(&w->rec, ':');
		rec_u64(w, p->weights[i].samples);
		pl_buf_addc(&w->rec, ':');
		rec_u64(w, p->weights[i].period);
	}
	rec_end(w);
}

static void write_stacks(struct tw *w, const struct pl_profile *p)
{
	struct tree t = {pl_xcalloc(4096, sizeof(struct tree_slot)), 4095, 0};

	table_begin(w, "],\"stacks\":[");
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		write_stack(w, &t, p, s);
		if (w->out.len >= OUT_FLUSH)
			tw_flush(w);
	}
	chunk_flush(w);
	free(t.slots);
	table_begin(w, "],\"tails\":[");
	for (size_t i = 0; i < p->ntails; i++)
		tw_item_new(w, i, json_pack("[I,I,I]", (json_int_t)p->tails[i].stack,
					     (json_int_t)p->tails[i].event, (json_int_t)p->tails[i].period));
}

/* "event_attrs": [[event, DWARF stack bytes, counts waits]...] of the
 * events recorded with DWARF stacks (pl_event_dwarf_stack) or whose
 * samples count waits (pl_event_counts_waits), when any: left open as a
 * table. */
static void write_event_attrs(struct tw *w, const struct pl_profile *p)
{
	size_t n = 0;

	for (uint32_t e = 0; e < p->nevents; e++) {
		uint32_t bytes = pl_event_dwarf_stack(p, e);
		bool waits = pl_event_counts_waits(p, e);
		if (!bytes && !waits)
			continue;
		tw_raw(w, n ? "," : "],\"event_attrs\":[");
		tw_value_new(w, json_pack("[I,I,I]", (json_int_t)e, (json_int_t)bytes, (json_int_t)waits));
		n++;
	}
}

/* The caller check (profile.h), when one was made: "marks" records are
 * "INDEX:EDGE,INDEX:EDGE...", "marked" ones "STACK:EVENT:MARK:SAMPLES:PERIOD". */
static void write_caller_check(struct tw *w, const struct pl_profile *p)
{
	const struct pl_caller_check *c = &p->caller_check;
	json_t *unknown, *fp_events;

	if (!c->attempted)
		return;
	unknown = json_array();
	fp_events = json_array();
	for (size_t i = 0; i < c->nunknown; i++)
		json_array_append_new(unknown, json_pack("[o,I]", opt_id(c->unknown[i].dso),
							 (json_int_t)c->unknown[i].why));
	for (uint32_t e = 0; e < p->nevents; e++)
		if (pl_event_fp_chain(p, e))
			json_array_append_new(fp_events, json_integer(e));
	tw_raw(w, "],\"caller_check\":");
	tw_value_new(w, json_pack("{s:o,s:I,s:o,s:I}", "fp_events", fp_events,
				  "records_unchecked", (json_int_t)c->records_unchecked,
				  "unknown_modules", unknown,
				  "unknown_modules_more", (json_int_t)c->unknown_modules_more));
	table_begin(w, ",\"marks\":[");
	for (uint32_t m = 0; m < pl_nmarks(p); m++) {
		size_t n;
		const uint32_t *words = pl_mark_words(p, m, &n);
		rec_begin(w);
		for (size_t k = 0; k < n; k++) {
			if (k)
				pl_buf_addc(&w->rec, ',');
			rec_u64(w, PL_MARK_INDEX(words[k]));
			pl_buf_addc(&w->rec, ':');
			rec_u64(w, PL_MARK_EDGE(words[k]));
		}
		rec_end(w);
	}
	chunk_flush(w);
	table_begin(w, "],\"marked\":[");
	for (size_t i = 0; i < p->nmarked; i++) {
		const struct pl_marked *m = &p->marked[i];
		uint64_t f[5] = {m->stack, m->event, m->mark, m->samples, m->period};
		rec_begin(w);
		for (int k = 0; k < 5; k++) {
			if (k)
				pl_buf_addc(&w->rec, ':');
			rec_u64(w, f[k]);
		}
		rec_end(w);
	}
	chunk_flush(w);
}

/* Timed samples by event, time, stack and period: the order stored. */
static int timed_cmp(const void *a, const void *b)
{
	const struct pl_timed *x = a, *y = b;

	if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->period < y->period ? -1 : x->period > y->period;
}

/* Insertion sort of an array that is in order but for local swaps (two
 * CPUs' samples of one microsecond, ordered by stack); true when done,
 * false, leaving a permutation of it, once the moves pass 4n (an array
 * further out of order: then qsort). */
static bool nearly_sorted(struct pl_timed *v, size_t n)
{
	size_t moves = 0;

	for (size_t i = 1; i < n; i++) {
		struct pl_timed x = v[i];
		size_t j = i;
		while (j > 0 && timed_cmp(&v[j - 1], &x) > 0) {
			v[j] = v[j - 1];
			j--;
			if (++moves > 4 * n) {
				v[j] = x;
				return false;
			}
		}
		v[j] = x;
	}
	return true;
}

/* `t`'s samples in timed_cmp's order into a new array.  Readers keep them
 * in time order within an event (perf.data through its reorder queue;
 * samples of one microsecond may come in any stack order), so the usual
 * work is one insertion-sort pass, or a split by event that keeps each
 * event's order and then that pass; only runs further out of order go
 * through qsort (glibc's merge sort was 7-8% of an FP perf.data analysis).
 * Equal entries are equal values, so the bytes written do not depend on
 * which way they were ordered. */
static struct pl_timed *timed_in_order(const struct pl_timed_table *t)
{
	struct pl_timed *v = pl_xmalloc((t->n + 1) * sizeof(*v));
	uint32_t nev = 0;
	size_t *at;

	if (t->n)
		memcpy(v, t->v, t->n * sizeof(*v));
	if (nearly_sorted(v, t->n))
		return v;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].event >= nev)
			nev = t->v[i].event + 1;
	if (nev > 4096) {   /* not a small event index: sort it all */
		qsort(v, t->n, sizeof(*v), timed_cmp);
		return v;
	}
	at = pl_xcalloc((size_t)nev + 1, sizeof(*at));
	for (size_t i = 0; i < t->n; i++)
		at[t->v[i].event + 1]++;
	for (uint32_t e = 0; e < nev; e++)
		at[e + 1] += at[e];
	for (size_t i = 0; i < t->n; i++)
		v[at[t->v[i].event]++] = t->v[i];
	for (uint32_t e = 0; e < nev; e++) {   /* scattered: at[e] is now bucket e's end */
		size_t lo = e ? at[e - 1] : 0, hi = at[e];
		if (!nearly_sorted(v + lo, hi - lo))
			qsort(v + lo, hi - lo, sizeof(*v), timed_cmp);
	}
	free(at);
	return v;
}

static uint64_t timed_first(const struct pl_timed *v, size_t n)
{
	uint64_t first = n ? v[0].time_ns : 0;

	for (size_t i = 1; i < n; i++)
		if (v[i].time_ns < first)
			first = v[i].time_ns;
	return first;
}

/* One event's samples, from v[*i]: "DT:STACK[:PERIOD]" records, DT the
 * time after the previous record's (the first's after first_ns), PERIOD
 * left out when it is the previous record's. */
static void write_timed_event(struct tw *w, const struct pl_timed *v, size_t n, size_t *i,
			      uint64_t first)
{
	uint32_t ev = v[*i].event;
	uint64_t prev_t = first, prev_period = 0;
	bool any = false;

	tw_raw(w, *i ? ",{\"event\":" : "{\"event\":");
	tw_value_new(w, json_integer(ev));
	table_begin(w, ",\"samples\":[");
	for (; *i < n && v[*i].event == ev; (*i)++) {
		rec_begin(w);
		rec_u64(w, v[*i].time_ns - prev_t);
		pl_buf_addc(&w->rec, ':');
		rec_u64(w, v[*i].stack);
		if (!any || v[*i].period != prev_period) {
			pl_buf_addc(&w->rec, ':');
			rec_u64(w, v[*i].period);
		}
		prev_t = v[*i].time_ns;
		prev_period = v[*i].period;
		any = true;
		rec_end(w);
		if (w->out.len >= OUT_FLUSH)
			tw_flush(w);
	}
	chunk_flush(w);
	tw_raw(w, "]}");
}

/* "timed": the samples' times (profile.h, struct pl_timed), when the
 * input gave any or counted some without. */
static void write_timed(struct tw *w, const struct pl_profile *p)
{
	const struct pl_timed_table *t = &p->timed;
	struct pl_timed *v;
	uint64_t first;
	size_t i = 0;

	if (!t->n && !t->past_cap && !t->untimed)
		return;
	v = timed_in_order(t);
	first = timed_first(v, t->n);
	tw_raw(w, ",\"timed\":{\"first_ns\":");
	tw_value_new(w, json_integer((json_int_t)first));
	tw_raw(w, ",\"past_cap\":");
	tw_value_new(w, json_integer((json_int_t)t->past_cap));
	tw_raw(w, ",\"untimed\":");
	tw_value_new(w, json_integer((json_int_t)t->untimed));
	tw_raw(w, ",\"events\":[");
	while (i < t->n)
		write_timed_event(w, v, t->n, &i, first);
	tw_raw(w, "]}");
	free(v);
}

bool pl_stack_table_write(const struct pl_profile *p, json_dump_callback_t emit,
			  void *data)
{
	struct tw w = {emit, data, false, {0}, {0}, 0, 0};

	pl_buf_addf(&w.out, "{\"schema\":\"perflens.stacks\",\"version\":%d,\"strings\":[",
		    PL_STACKS_SCHEMA_VERSION);
	write_names(&w, p);
	write_functions(&w, p);
	write_frames(&w, p);
	write_stacks(&w, p);
	write_event_attrs(&w, p);
	write_caller_check(&w, p);
	tw_raw(&w, "]");
	write_timed(&w, p);
	tw_raw(&w, "}\n");
	tw_flush(&w);
	pl_buf_release(&w.out);
	pl_buf_release(&w.rec);
	return !w.failed;
}

/* ------------------------------------------------------------ reading */

struct rd {
	struct pl_profile *p;
	const char *id;
	struct pl_error *err;
	const char *table;    /* the table being read, for messages */
	size_t index;         /* the entry being read */
	uint32_t *frames;     /* the stack being read, root first */
	size_t frames_cap;
	/* timed samples: the event being read, the previous record's time
	 * and period (none yet: no period to repeat) */
	uint32_t timed_event;
	uint64_t timed_prev, timed_period;
	bool timed_any;
};

static enum pl_err rd_bad(struct rd *r, const char *why)
{
	return pl_fail(r->err, PL_ERR_MALFORMED, "analyze the input again to rebuild the artifact",
		       "stack table of '%s' has a bad %s entry %zu: %s", r->id, r->table,
		       r->index, why);
}

/* A cursor over one record's text. */
struct cur {
	const char *s, *end;
};

static bool cur_eat(struct cur *c, char ch)
{
	if (c->s == c->end || *c->s != ch)
		return false;
	c->s++;
	return true;
}

static bool cur_at(const struct cur *c, char ch)
{
	return c->s < c->end && *c->s == ch;
}

static bool cur_u64(struct cur *c, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = c->s;

	for (; s < c->end && *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (s == c->s)
		return false;
	c->s = s;
	*out = v;
	return true;
}

/* A decimal id below `limit`. */
static bool cur_id(struct cur *c, size_t limit, uint32_t *out)
{
	uint64_t v;

	if (!cur_u64(c, &v) || v >= limit)
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool cur_x64(struct cur *c, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = c->s;

	for (; s < c->end && s - c->s < 16; s++) {
		char ch = *s;
		if (ch >= '0' && ch <= '9')
			v = v * 16 + (uint64_t)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			v = v * 16 + (uint64_t)(ch - 'a' + 10);
		else
			break;
	}
	if (s == c->s)
		return false;
	c->s = s;
	*out = v;
	return true;
}

typedef enum pl_err (*rec_reader)(struct rd *r, struct cur *c);

/* Read a table of record chunks: each element a string of records
 * separated by single spaces, handed to `fn` in order. */
static enum pl_err read_records(struct rd *r, json_t *table, const char *name,
				rec_reader fn)
{
	size_t i;
	json_t *v;
	enum pl_err rc;

	r->table = name;
	r->index = 0;
	json_array_foreach(table, i, v) {
		const char *s = json_string_value(v), *end;
		if (!s)
			return rd_bad(r, "not a string of records");
		end = s + json_string_length(v);
		for (;;) {
			const char *sp = memchr(s, ' ', (size_t)(end - s));
			struct cur c = {s, sp ? sp : end};
			if (c.s == c.end)
				return rd_bad(r, "empty record");
			if ((rc = fn(r, &c)))
				return rc;
			if (c.s != c.end)
				return rd_bad(r, "unexpected text after the record");
			r->index++;
			if (!sp)
				break;
			s = sp + 1;
		}
	}
	return PL_OK;
}

static enum pl_err read_function(struct rd *r, struct cur *c)
{
	struct pl_profile *p = r->p;
	uint32_t sym, dso = PL_NOID;

	bool inlined = false;

	if (!cur_id(c, p->strs.count, &sym))
		return rd_bad(r, "symbol is not a string id");
	if (cur_eat(c, '|') && !cur_at(c, '|') && !cur_id(c, p->strs.count, &dso))
		return rd_bad(r, "DSO is not a string id");
	if (cur_eat(c, '|')) {
		if (!cur_eat(c, 'i'))
			return rd_bad(r, "a function's third field is not 'i' (inlined)");
		inlined = true;
	}
	if ((inlined ? pl_intern_func_inlined(p, sym, dso) : pl_intern_func(p, sym, dso)) != r->index)
		return rd_bad(r, "repeats an earlier function");
	return PL_OK;
}

static enum pl_err read_frame(struct rd *r, struct cur *c)
{
	struct pl_profile *p = r->p;
	uint32_t func, src = PL_NOID, id;
	uint64_t addr = 0;
	bool has_addr = false;

	if (!cur_id(c, pl_nfuncs(p), &func))
		return rd_bad(r, "function is not a function id");
	if (cur_eat(c, '|')) {
		if (c->s == c->end)
			return rd_bad(r, "empty address");
		if (!cur_at(c, '|')) {
			if (!cur_x64(c, &addr))
				return rd_bad(r, "address is not lower-case hex");
			has_addr = true;
		}
		if (cur_eat(c, '|')) {
			if (!cur_id(c, p->strs.count, &src))
				return rd_bad(r, "srcline is not a string id");
		} else if (!has_addr) {
			return rd_bad(r, "empty address");
		}
	}
	id = pl_intern_frame(p, func, has_addr, addr, src, r->err);
	if (id == PL_NOID)
		return r->err->code;
	if (id != r->index)
		return rd_bad(r, "repeats an earlier frame");
	return PL_OK;
}

static void push_frame(struct rd *r, uint32_t depth, uint32_t frame)
{
	PL_GROW(r->frames, r->frames_cap, (size_t)depth + 1);
	r->frames[depth] = frame;
}

/* "BASE:SHARED|" or "|": the frames shared with an earlier stack. */
static enum pl_err read_shared(struct rd *r, struct cur *c, uint32_t *depth)
{
	const struct pl_profile *p = r->p;
	uint32_t base;
	uint64_t shared;

	*depth = 0;
	if (cur_eat(c, '|'))
		return PL_OK;
	if (!cur_id(c, r->index, &base) || !cur_eat(c, ':') || !cur_u64(c, &shared) ||
	    shared == 0 || shared > p->stacks[base].depth || !cur_eat(c, '|'))
		return rd_bad(r, "shared prefix is not BASE:DEPTH of an earlier stack");
	PL_GROW(r->frames, r->frames_cap, (size_t)shared + 1);
	memcpy(r->frames, p->stacks[base].frames, (size_t)shared * sizeof(uint32_t));
	*depth = (uint32_t)shared;
	return PL_OK;
}

static enum pl_err read_weights(struct rd *r, struct cur *c, uint32_t stack)
{
	struct pl_profile *p = r->p;

	if (c->s == c->end)
		return PL_OK;
	do {
		uint32_t ev;
		uint64_t samples, period;
		if (!cur_id(c, p->nevents, &ev) || !cur_eat(c, ':') || !cur_u64(c, &samples) ||
		    !cur_eat(c, ':') || !cur_u64(c, &period))
			return rd_bad(r, "weight is not EVENT:SAMPLES:PERIOD");
		if (pl_stack_weight(p, stack, ev))
			return rd_bad(r, "lists an event twice");
		pl_add_weight(p, stack, ev, samples, period, true);
	} while (cur_eat(c, ';'));
	return PL_OK;
}

static enum pl_err read_stack(struct rd *r, struct cur *c)
{
	struct pl_profile *p = r->p;
	uint32_t thread, depth, frame, s;
	enum pl_err rc;

	if (!cur_id(c, pl_nthreads(p), &thread) || !cur_eat(c, '|'))
		return rd_bad(r, "thread is not a thread id");
	if ((rc = read_shared(r, c, &depth)))
		return rc;
	if (!cur_at(c, '|')) {
		do {
			if (!cur_id(c, pl_nframes(p), &frame))
				return rd_bad(r, "frame is not a frame id");
			push_frame(r, depth++, frame);
		} while (cur_eat(c, ','));
	}
	if (!cur_eat(c, '|'))
		return rd_bad(r, "frames are not followed by '|'");
	s = pl_intern_stack(p, thread, r->frames, depth, r->err);
	if (s == PL_NOID)
		return r->err->code;
	if (s != r->index)
		return rd_bad(r, "repeats an earlier stack");
	return read_weights(r, c, s);
}

static bool opt_int(json_t *v, json_int_t limit, int64_t *out);

static enum pl_err read_mark(struct rd *r, struct cur *c)
{
	struct pl_profile *p = r->p;
	uint32_t words[PL_MAX_DEPTH_WORDS];
	size_t n = 0;
	uint64_t index, edge;

	do {
		if (n == PL_MAX_DEPTH_WORDS || !cur_u64(c, &index) || !cur_eat(c, ':') ||
		    !cur_u64(c, &edge) || edge < PL_EDGE_MAY_SKIP || edge > PL_EDGE_UNKNOWN ||
		    index >= p->limits.max_depth || (n && index <= PL_MARK_INDEX(words[n - 1])))
			return rd_bad(r, "not INDEX:EDGE pairs, indexes ascending, edges 1 or 2");
		words[n++] = (uint32_t)index << 2 | (uint32_t)edge;
	} while (cur_eat(c, ','));
	if (pl_intern_mark(p, words, n) != r->index)
		return rd_bad(r, "repeats an earlier mark");
	return PL_OK;
}

static enum pl_err read_marked(struct rd *r, struct cur *c)
{
	struct pl_profile *p = r->p;
	uint32_t stack, event, mark;
	uint64_t samples, period;
	const struct pl_marked *last = p->nmarked ? &p->marked[p->nmarked - 1] : NULL;

	if (!cur_id(c, pl_nstacks(p), &stack) || !cur_eat(c, ':') ||
	    !cur_id(c, p->nevents, &event) || !cur_eat(c, ':') ||
	    !cur_id(c, pl_nmarks(p), &mark) || !cur_eat(c, ':') || !cur_u64(c, &samples) ||
	    !cur_eat(c, ':') || !cur_u64(c, &period))
		return rd_bad(r, "not STACK:EVENT:MARK:SAMPLES:PERIOD");
	if (last && (last->stack > stack || (last->stack == stack && (last->event > event ||
		     (last->event == event && last->mark >= mark)))))
		return rd_bad(r, "out of order");
	pl_add_marked(p, stack, event, mark, samples, period);
	return PL_OK;
}

static enum pl_err read_caller_check(struct rd *r, json_t *cc, json_t *marks, json_t *marked)
{
	struct pl_caller_check *c = &r->p->caller_check;
	json_t *unknown, *u, *fp_events;
	json_int_t unchecked, more;
	enum pl_err rc;
	size_t i;

	r->table = "caller_check";
	r->index = 0;
	if (!cc && !marks && !marked)
		return PL_OK;
	if (!cc || !json_is_array(marks) || !json_is_array(marked) ||
	    json_unpack(cc, "{s:o,s:I,s:o,s:I!}", "fp_events", &fp_events, "records_unchecked", &unchecked,
			"unknown_modules", &unknown, "unknown_modules_more", &more) ||
	    !json_is_array(unknown) || !json_is_array(fp_events) || json_array_size(unknown) > PL_MAX_UNKNOWN_MODULES ||
	    unchecked < 0 || more < 0)
		return rd_bad(r, "not {fp_events, records_unchecked, unknown_modules, unknown_modules_more} with marks and marked");
	c->attempted = true;
	json_array_foreach(fp_events, i, u) {
		json_int_t e = json_integer_value(u);
		r->index = i;
		if (!json_is_integer(u) || e < 0 || (size_t)e >= r->p->nevents || c->nattrs == PL_MAX_EVENT_ATTRS)
			return rd_bad(r, "fp_events holds something that is not an event id");
		c->attrs[c->nattrs++] = (struct pl_event_attr){r->p->events[e].name, true};
	}
	c->records_unchecked = (uint64_t)unchecked;
	c->unknown_modules_more = (uint64_t)more;
	json_array_foreach(unknown, i, u) {
		int64_t dso, why;
		r->index = i;
		if (!json_is_array(u) || json_array_size(u) != 2 ||
		    !opt_int(json_array_get(u, 0), (json_int_t)r->p->strs.count, &dso) ||
		    !opt_int(json_array_get(u, 1), PL_UW_COUNT, &why) || why < 0)
			return rd_bad(r, "an unknown module is not [dso string id or null, reason code]");
		c->unknown[c->nunknown++] = (struct pl_unknown_module){
			dso < 0 ? PL_NOID : (uint32_t)dso, (uint32_t)why};
	}
	if ((rc = read_records(r, marks, "marks", read_mark)))
		return rc;
	return read_records(r, marked, "marked", read_marked);
}

/* "DT:STACK[:PERIOD]" (write_timed_event). */
static enum pl_err read_timed_sample(struct rd *r, struct cur *c)
{
	struct pl_profile *p = r->p;
	uint64_t dt, period = r->timed_period;
	uint32_t stack;

	if (!cur_u64(c, &dt) || !cur_eat(c, ':') || !cur_id(c, pl_nstacks(p), &stack) ||
	    (cur_eat(c, ':') ? !cur_u64(c, &period) : !r->timed_any))
		return rd_bad(r, "not DT:STACK[:PERIOD] (a period first)");
	if (dt > (uint64_t)INT64_MAX - r->timed_prev)
		return rd_bad(r, "time past 2^63 ns");
	if (!pl_stack_weight(p, stack, r->timed_event))
		return rd_bad(r, "a stack without weight under its event");
	if (p->timed.n == PL_MAX_TIMED)
		return rd_bad(r, "more samples than the timeline keeps");
	r->timed_prev += dt;
	r->timed_period = period;
	r->timed_any = true;
	pl_add_timed(p, stack, r->timed_event, r->timed_prev, period);
	return PL_OK;
}

/* "timed": {first_ns, past_cap, untimed, events: [{event, samples}]},
 * events ascending. */
static enum pl_err read_timed(struct rd *r, json_t *timed)
{
	struct pl_timed_table *t = &r->p->timed;
	json_int_t first, past, untimed, ev, last = -1;
	json_t *events, *e, *samples;
	enum pl_err rc;
	size_t i;

	r->table = "timed";
	r->index = 0;
	if (!timed)
		return PL_OK;
	if (json_unpack(timed, "{s:I,s:I,s:I,s:o!}", "first_ns", &first, "past_cap", &past,
			"untimed", &untimed, "events", &events) || first < 0 || past < 0 ||
	    untimed < 0 || !json_is_array(events))
		return rd_bad(r, "not {first_ns, past_cap, untimed, events}");
	t->past_cap = (uint64_t)past;
	t->untimed = (uint64_t)untimed;
	if (!r->p->want_timed)
		return PL_OK;
	json_array_foreach(events, i, e) {
		r->table = "timed";
		r->index = i;
		if (json_unpack(e, "{s:I,s:o!}", "event", &ev, "samples", &samples) || ev <= last ||
		    (size_t)ev >= r->p->nevents || !json_is_array(samples))
			return rd_bad(r, "not {event, samples}, events ascending");
		last = ev;
		r->timed_event = (uint32_t)ev;
		r->timed_prev = (uint64_t)first;
		r->timed_any = false;
		if ((rc = read_records(r, samples, "timed samples", read_timed_sample)))
			return rc;
	}
	return PL_OK;
}

static enum pl_err read_strings(struct rd *r, json_t *strings)
{
	size_t i;
	json_t *v;

	r->table = "strings";
	json_array_foreach(strings, i, v) {
		r->index = i;
		if (!json_is_string(v))
			return rd_bad(r, "not a string");
		if (pl_intern_text(r->p, json_string_value(v), json_string_length(v)) != i)
			return rd_bad(r, "repeats an earlier string");
	}
	return PL_OK;
}

static enum pl_err read_events(struct rd *r, json_t *events)
{
	struct pl_profile *p = r->p;
	size_t i;
	json_t *v;

	r->table = "events";
	json_array_foreach(events, i, v) {
		json_int_t name, without, unit = -1;
		r->index = i;
		if ((json_unpack(v, "[II!]", &name, &without) &&
		     json_unpack(v, "[III!]", &name, &without, &unit)) || name < 0 ||
		    (size_t)name >= p->strs.count || without < 0 ||
		    (json_array_size(v) == 3 && (unit < 0 || (size_t)unit >= p->strs.count)))
			return rd_bad(r, "not [name string id, records without period, unit string id (optional)]");
		if (pl_intern_event(p, pl_str(p, (uint32_t)name), p->strs.lens[name]) != i)
			return rd_bad(r, "repeats an earlier event");
		if (unit >= 0)
			p->events[i].unit1 = (uint32_t)unit + 1;
	}
	return PL_OK;
}

/* null or an integer >= 0 (-1 for null), or an id below `limit`. */
static bool opt_int(json_t *v, json_int_t limit, int64_t *out)
{
	if (json_is_null(v)) {
		*out = -1;
		return true;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= limit)
		return false;
	*out = json_integer_value(v);
	return true;
}

static enum pl_err read_threads(struct rd *r, json_t *threads)
{
	struct pl_profile *p = r->p;
	size_t i;
	json_t *v, *jpid, *jtid, *jcomm;

	r->table = "threads";
	json_array_foreach(threads, i, v) {
		int64_t pid, tid, comm;
		r->index = i;
		if (json_unpack(v, "[ooo!]", &jpid, &jtid, &jcomm) ||
		    !opt_int(jpid, INT64_MAX, &pid) || !opt_int(jtid, INT64_MAX, &tid) ||
		    !opt_int(jcomm, (json_int_t)p->strs.count, &comm))
			return rd_bad(r, "not [pid or null, tid or null, comm string id or null]");
		if (pl_intern_thread(p, pid, tid, comm < 0 ? PL_NOID : (uint32_t)comm) != i)
			return rd_bad(r, "repeats an earlier thread");
	}
	return PL_OK;
}

static enum pl_err read_tails(struct rd *r, json_t *tails)
{
	struct pl_profile *p = r->p;
	size_t i;
	json_t *v;

	r->table = "tails";
	json_array_foreach(tails, i, v) {
		json_int_t stack, event, period;
		r->index = i;
		if (json_unpack(v, "[III!]", &stack, &event, &period) || stack < 0 ||
		    (size_t)stack >= pl_nstacks(p) || event < 0 || (size_t)event >= p->nevents ||
		    period < 0)
			return rd_bad(r, "not [stack id, event id, period]");
		PL_GROW(p->tails, p->tails_cap, p->ntails + 1);
		p->tails[p->ntails++] = (struct pl_tail){(uint32_t)stack, (uint32_t)event,
							 (uint64_t)period};
	}
	return PL_OK;
}

/* Events count records without a period while parsing; the table stores
 * the final counts, restored once the weights are added. */
static void restore_without_period(struct pl_profile *p, json_t *events)
{
	for (size_t i = 0; i < p->nevents; i++)
		p->events[i].records_without_period =
			(uint64_t)json_integer_value(json_array_get(json_array_get(events, i), 1));
}

static enum pl_err read_event_attrs(struct rd *r, json_t *attrs)
{
	json_t *v;
	size_t i;

	r->table = "event_attrs";
	json_array_foreach(attrs, i, v) {
		json_int_t e, bytes, waits;
		r->index = i;
		if (json_unpack(v, "[III!]", &e, &bytes, &waits) || e < 0 || (size_t)e >= r->p->nevents ||
		    bytes < 0 || bytes > UINT32_MAX || (waits != 0 && waits != 1))
			return rd_bad(r, "not [event id, DWARF stack bytes, counts waits 0 or 1]");
		if (bytes)
			pl_set_event_dwarf_stack(r->p, r->p->events[e].name, (uint32_t)bytes);
		if (waits)
			pl_set_event_counts_waits(r->p, r->p->events[e].name);
	}
	return PL_OK;
}

enum pl_err pl_stack_table_read(struct pl_profile *p, json_t *doc,
				const char *id, struct pl_error *err)
{
	struct rd r = {p, id, err, "document", 0, NULL, 0, 0, 0, 0, false};
	json_t *strings, *events, *funcs, *threads, *frames, *stacks, *tails;
	json_t *cc = NULL, *marks = NULL, *marked = NULL, *timed = NULL, *attrs = NULL;
	json_error_t je;
	const char *schema;
	json_int_t version;
	enum pl_err rc;

	if (json_unpack_ex(doc, &je, JSON_STRICT, "{s:s,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s?o,s?o,s?o,s?o,s?o}",
			   "schema", &schema, "version", &version, "strings", &strings,
			   "events", &events, "functions", &funcs, "threads", &threads,
			   "frames", &frames, "stacks", &stacks, "tails", &tails,
			   "caller_check", &cc, "marks", &marks, "marked", &marked, "timed", &timed,
			   "event_attrs", &attrs))
		return pl_fail(err, PL_ERR_MALFORMED, "analyze the input again to rebuild the artifact",
			       "stack table of '%s' is malformed: %s", id, je.text);
	if (strcmp(schema, "perflens.stacks") != 0 || version != PL_STACKS_SCHEMA_VERSION)
		return pl_fail(err, PL_ERR_MALFORMED, "analyze the input again to rebuild the artifact",
			       "stack table of '%s' is '%s' version %lld; this perflens reads perflens.stacks version %d",
			       id, schema, (long long)version, PL_STACKS_SCHEMA_VERSION);
	if (!json_is_array(strings) || !json_is_array(events) || !json_is_array(funcs) ||
	    !json_is_array(threads) || !json_is_array(frames) || !json_is_array(stacks) ||
	    !json_is_array(tails))
		return rd_bad(&r, "a table is not an array");
	pl_profile_reserve(p, json_array_size(strings), json_array_size(funcs) * STACK_TABLE_CHUNK,
			   json_array_size(frames) * STACK_TABLE_CHUNK,
			   json_array_size(stacks) * STACK_TABLE_CHUNK);
	if (!(rc = read_strings(&r, strings)) && !(rc = read_events(&r, events)) &&
	    !(rc = read_records(&r, funcs, "functions", read_function)) &&
	    !(rc = read_threads(&r, threads)) &&
	    !(rc = read_records(&r, frames, "frames", read_frame)) &&
	    !(rc = read_records(&r, stacks, "stacks", read_stack)) &&
	    !(rc = read_tails(&r, tails)) && !(rc = read_caller_check(&r, cc, marks, marked)) &&
	    !(rc = read_timed(&r, timed)) && !(rc = read_event_attrs(&r, attrs)))
		restore_without_period(p, events);
	free(r.frames);
	return rc;
}
