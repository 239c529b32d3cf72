/* export.c - folding stacks by stackcollapse-perf.pl's rules, and turning
 * folded stacks into flame graphs (see export.h).
 *
 * Names are rendered once per frame (and per thread), not per stack: each
 * frame's folded names are interned and cached by frame id, and a stack
 * folds to the sequence of name ids its text would split into at ';'.
 * Lines are summed in a table keyed by that sequence (different stacks can
 * fold to the same line, e.g. when only an offset or a thread differs);
 * since names hold no ';' (only a process name may, and it is split), equal
 * sequences mean equal text.  The folded file is sorted by comparing the
 * sequences as the text would compare byte by byte, and the flame graph
 * takes the name ids as they are, so the SVG shows exactly the names the
 * folded file would.  pl_fold_stacks hands out the same names stack by
 * stack, each with the frame it came from, to the speedscope and pprof
 * writers (export_formats.h), which keep stacks apart.
 */
#include "export/fold.h"
#include "flamegraph.h"
#include "flamepng.h"
#include "base/escape.h"

#include <stdlib.h>
#include <string.h>

static bool has_prefix(const char *s, const char *pre)
{
	return strncmp(s, pre, strlen(pre)) == 0;
}

/* m:/tmp/perf-\d+\.map: anywhere in the DSO. */
static bool is_perf_map(const char *dso)
{
	for (const char *s = strstr(dso, "/tmp/perf-"); s; s = strstr(s + 1, "/tmp/perf-")) {
		const char *d = s + 10;
		if (*d < '0' || *d > '9')
			continue;
		while (*d >= '0' && *d <= '9')
			d++;
		if (has_prefix(d, ".map"))
			return true;
	}
	return false;
}

static bool is_kernel_dso(const char *dso)
{
	size_t n = strlen(dso);

	if (strstr(dso, "unknown"))
		return false;
	return dso[0] == '[' || (n >= 7 && strcmp(dso + n - 7, "vmlinux") == 0);
}

/* Go method names look like "net/http.(*Client).Do": keep their parens. */
static bool looks_like_go_method(const char *s, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		if (s[i] != '.' || s[i + 1] != '(')
			continue;
		for (size_t j = n; j > i + 2; j--)
			if (s[j - 2] == ')' && s[j - 1] == '.')
				return true;
	}
	return false;
}

/* Append one tidied function name (stackcollapse's tidy_generic and
 * tidy_java rules).  `keep_args`: a name PerfLens demangled keeps its
 * parameters, which tell overloads apart (not under compat, where the
 * name is perf's own and is cut as stackcollapse cuts it). */
static void add_tidy(struct pl_buf *b, const char *s, size_t n, bool java, bool keep_args)
{
	size_t start = b->len, cut = n;

	if (!keep_args && !looks_like_go_method(s, n)) {
		for (size_t i = 0; i < n; i++) {
			if (s[i] != '(')
				continue;
			if (n - i >= 21 && memcmp(s + i, "(anonymous namespace)", 21) == 0)
				continue;
			cut = i;
			break;
		}
	}
	for (size_t i = 0; i < cut; i++) {
		char c = s[i];
		if (c == '"' || c == '\'')
			continue;
		pl_buf_addc(b, c == ';' ? ':' : c);
	}
	if (java && memchr(b->data + start, '/', b->len - start) && b->data[start] == 'L') {
		memmove(b->data + start, b->data + start + 1, b->len - start);
		b->len--;
	}
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* The fold's scratch state: display names, and each frame's and each
 * thread's names, rendered once and reused by every stack. */
struct fold_ctx {
	const struct pl_profile *p;
	const struct pl_fold_opts *o;
	struct pl_folded *out;
	struct pl_buf tmp;        /* one name being rendered */
	struct pl_buf raw_sym, raw_dso;  /* decoded names (raw_bytes) */
	uint32_t *parts;          /* name ids, in runs */
	size_t nparts, parts_cap;
	uint32_t *frame_run;      /* [2 * nframes]: run start per (frame, java), PL_NOID unset */
	uint32_t *frame_len;      /* [2 * nframes]: names in the run */
	uint32_t *thread_run;     /* [nthreads]: run start of the name's pieces */
	uint32_t *thread_len;     /* [nthreads]: pieces, 0 for no name */
	uint8_t *thread_java;     /* [nthreads]: the name is exactly "java" */
	uint32_t *seq;            /* the stack being folded */
	size_t seq_cap;
	struct pl_fold_src *src;  /* where each name of seq came from, when track_src */
	size_t src_cap;
	bool track_src;
};

/* The bytes the profile's name `s` stands for (profile.h keeps names
 * that are not UTF-8 escaped): the folded text is bytes, as the peer's.
 * `s` itself when it holds no escape, else decoded into `b`. */
static const char *raw_bytes(struct pl_buf *b, const char *s)
{
	if (!strchr(s, '\\'))
		return s;
	pl_buf_reset(b);
	pl_esc_decode_add(b, s, strlen(s));
	return b->data;
}

static uint32_t name_id(struct fold_ctx *c, const char *s, size_t n)
{
	return pl_strtab_intern(&c->out->names, s, n);
}

static void push_part(struct fold_ctx *c, uint32_t id)
{
	PL_GROW(c->parts, c->parts_cap, c->nparts + 1);
	c->parts[c->nparts++] = id;
}

/* Render one "->" part of a frame's symbol into c->tmp. */
static void render_part(struct fold_ctx *c, const struct pl_frame *fr, const char *dso,
			const char *s, size_t n, size_t part, bool java, bool keep_args)
{
	const struct pl_fold_opts *o = c->o;
	struct pl_buf *b = &c->tmp;

	pl_buf_reset(b);
	if (n == 9 && memcmp(s, "[unknown]", 9) == 0) {
		const char *name = strcmp(dso, "[unknown]") ? basename_of(dso) : "unknown";
		struct pl_buf t = {0};
		if (o->addrs)
			pl_buf_addf(&t, "[%s <%llx>]", name, (unsigned long long)fr->addr);
		else
			pl_buf_addf(&t, "[%s]", name);
		/* The bracketed name still goes through tidying. */
		add_tidy(b, t.data, t.len, java, false);
		pl_buf_release(&t);
	} else {
		add_tidy(b, s, n, java, keep_args);
	}
	if (part > 0)
		pl_buf_adds(b, "_[i]");
	else if (o->kernel && is_kernel_dso(dso))
		pl_buf_adds(b, "_[k]");
	else if (o->jit && is_perf_map(dso))
		pl_buf_adds(b, "_[j]");
}

/* The names of frame `f` (none for a symbol in parentheses, several for
 * an "outer->inner" chain), rendered on first use. */
static const uint32_t *frame_names(struct fold_ctx *c, uint32_t f, bool java,
				   uint32_t *count)
{
	size_t slot = (size_t)f * 2 + java;

	if (c->frame_run[slot] == PL_NOID) {
		const struct pl_profile *p = c->p;
		const struct pl_frame *fr = &p->frames[f];
		const struct pl_func *fn = &p->funcs[fr->func];
		const char *sym = raw_bytes(&c->raw_sym, pl_str(p, fn->symbol));
		const char *dso = fn->dso == PL_NOID ? "[unknown]" : raw_bytes(&c->raw_dso, pl_str(p, fn->dso));

		c->frame_run[slot] = (uint32_t)c->nparts;
		/* The peer reads an empty symbol ("ADDR  (DSO)") as one space. */
		if (sym[0] == '\0')
			sym = " ";
		/* Old perfs print inlined chains as "outer->inner". */
		bool demangled = fn->linkage != PL_NOID && !c->o->peer_compat;
		for (size_t part = 0; sym[0] != '(' || part > 0 || demangled; part++) {
			/* a demangled name is one function ("operator->" included) */
			const char *arrow = demangled ? NULL : strstr(sym, "->");
			size_t n = arrow ? (size_t)(arrow - sym) : strlen(sym);
			render_part(c, fr, dso, sym, n, part, java, demangled);
			push_part(c, name_id(c, c->tmp.data, c->tmp.len));
			if (!arrow)
				break;
			sym = arrow + 2;
		}
		c->frame_len[slot] = (uint32_t)(c->nparts - c->frame_run[slot]);
	}
	*count = c->frame_len[slot];
	return c->parts + c->frame_run[slot];
}

static void add_pname(struct pl_buf *b, const struct pl_profile *p,
		      const struct pl_thread *t, const struct pl_fold_opts *o)
{
	const char *comm = pl_str(p, t->comm);
	size_t start = b->len;

	if (comm)
		pl_esc_decode_add(b, comm, strlen(comm));
	if (o->tid || o->pid) {
		if (t->pid < 0)
			pl_buf_adds(b, "-?");
		else
			pl_buf_addf(b, "-%lld", (long long)t->pid);
		if (o->tid)
			pl_buf_addf(b, "/%lld", (long long)t->tid);
	}
	for (size_t i = start; i < b->len; i++)
		if (b->data[i] == ' ')
			b->data[i] = '_';
}

static uint64_t tail_period(const struct pl_profile *p, uint32_t stack,
			    uint32_t event)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < p->ntails; i++)
		if (p->tails[i].stack == stack && p->tails[i].event == event)
			sum += p->tails[i].period;
	return sum;
}

static uint64_t tail_records(const struct pl_profile *p, uint32_t stack,
			     uint32_t event)
{
	uint64_t n = 0;

	for (size_t i = 0; i < p->ntails; i++)
		n += p->tails[i].stack == stack && p->tails[i].event == event;
	return n;
}

/* The process name's pieces (split at ';', as the flame graph splits the
 * folded text), and whether it is exactly "java"; rendered on first use.
 * No pieces when the thread has no name or it renders empty. */
static const uint32_t *thread_names(struct fold_ctx *c, uint32_t t, uint32_t *count,
				    bool *java)
{
	if (c->thread_run[t] == PL_NOID) {
		const struct pl_thread *th = &c->p->threads[t];
		struct pl_buf *b = &c->tmp;

		c->thread_run[t] = (uint32_t)c->nparts;
		pl_buf_reset(b);
		if (th->comm != PL_NOID || th->tid >= 0)
			add_pname(b, c->p, th, c->o);
		/* The peer's expected outputs condense Java names only when
		 * the process is named exactly "java" (not "java-PID"). */
		c->thread_java[t] = b->len == 4 && memcmp(b->data, "java", 4) == 0;
		for (size_t i = 0, start = 0; b->len && i <= b->len; i++) {
			if (i < b->len && b->data[i] != ';')
				continue;
			push_part(c, name_id(c, b->data + start, i - start));
			start = i + 1;
		}
		c->thread_len[t] = (uint32_t)(c->nparts - c->thread_run[t]);
	}
	*count = c->thread_len[t];
	*java = c->thread_java[t];
	/* No part yet (every thread name so far empty): parts is NULL, and
	 * NULL + 0 is undefined. */
	return c->parts ? c->parts + c->thread_run[t] : NULL;
}

/* Append a name to the stack being folded; `frame` is the frame it came
 * from (PL_NOID: the process name), `part` its place in that frame's
 * "outer->inner" chain of `nparts` names. */
static void seq_push(struct fold_ctx *c, size_t *len, uint32_t id, uint32_t frame,
		     uint32_t part, uint32_t nparts)
{
	PL_GROW(c->seq, c->seq_cap, *len + 1);
	if (c->track_src) {
		PL_GROW(c->src, c->src_cap, *len + 1);
		c->src[*len] = (struct pl_fold_src){frame, part, nparts};
	}
	c->seq[(*len)++] = id;
}

/* The name ids stack `s`'s folded text would split into, in c->seq; their
 * count.  Like the text, which adds a ';' only after something, names add
 * nothing while the text is still empty. */
static size_t fold_names(struct fold_ctx *c, uint32_t s)
{
	const struct pl_stack *st = &c->p->stacks[s];
	uint32_t n;
	bool java;
	const uint32_t *names = thread_names(c, st->thread, &n, &java);
	size_t len = 0;

	for (uint32_t k = 0; k < n; k++)
		seq_push(c, &len, names[k], PL_NOID, k, n);
	for (uint32_t d = 0; d < st->depth; d++) {
		names = frame_names(c, st->frames[d], java, &n);
		for (uint32_t k = 0; k < n; k++)
			if (len || c->out->names.lens[names[k]])
				seq_push(c, &len, names[k], st->frames[d], k, n);
	}
	if (!len)
		seq_push(c, &len, name_id(c, "", 0), PL_NOID, 0, 1);
	return len;
}

/* Fold one stack into its line and add its weight there. */
static void fold_stack(struct fold_ctx *c, uint32_t s, uint64_t weight)
{
	struct pl_folded *out = c->out;
	size_t len = fold_names(c, s);
	uint32_t id;

	id = pl_strtab_intern(&out->lines, (const char *)c->seq, len * sizeof(uint32_t));
	PL_GROW(out->weights, out->weights_cap, out->lines.count);
	if (id == out->n)
		out->weights[out->n++] = 0;
	out->weights[id] += weight;
}

static void fold_ctx_init(struct fold_ctx *c, const struct pl_profile *p,
			  const struct pl_fold_opts *o, struct pl_folded *out)
{
	size_t nframes = pl_nframes(p), nthreads = pl_nthreads(p);

	memset(c, 0, sizeof(*c));
	c->p = p;
	c->o = o;
	c->out = out;
	c->frame_run = pl_xmalloc((2 * nframes + 1) * sizeof(uint32_t));
	memset(c->frame_run, 0xff, (2 * nframes + 1) * sizeof(uint32_t));
	c->frame_len = pl_xcalloc(2 * nframes + 1, sizeof(uint32_t));
	c->thread_run = pl_xmalloc((nthreads + 1) * sizeof(uint32_t));
	memset(c->thread_run, 0xff, (nthreads + 1) * sizeof(uint32_t));
	c->thread_len = pl_xcalloc(nthreads + 1, sizeof(uint32_t));
	c->thread_java = pl_xcalloc(nthreads + 1, 1);
	pl_buf_add(&c->tmp, "", 0);  /* add_tidy reads its data even when empty */
}

static void fold_ctx_release(struct fold_ctx *c)
{
	pl_buf_release(&c->tmp);
	pl_buf_release(&c->raw_sym);
	pl_buf_release(&c->raw_dso);
	free(c->parts);
	free(c->frame_run);
	free(c->frame_len);
	free(c->thread_run);
	free(c->thread_len);
	free(c->thread_java);
	free(c->seq);
	free(c->src);
}

enum pl_err pl_fold(struct pl_folded *out, const struct pl_profile *p,
		    const struct pl_fold_opts *o, struct pl_error *err)
{
	struct fold_ctx c;

	(void)err;
	memset(out, 0, sizeof(*out));
	pl_strtab_init(&out->names);
	pl_strtab_init(&out->lines);
	fold_ctx_init(&c, p, o, out);
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		uint64_t samples, weight;

		if (pl_fold_weight(p, s, o, &samples, &weight))
			fold_stack(&c, s, weight);
	}
	fold_ctx_release(&c);
	return PL_OK;
}

bool pl_fold_weight(const struct pl_profile *p, uint32_t stack,
		    const struct pl_fold_opts *o, uint64_t *samples, uint64_t *period)
{
	const struct pl_weight *w = pl_stack_weight(p, stack, o->event);

	*samples = *period = 0;
	if (!w)
		return false;
	*samples = w->samples;
	*period = w->period;
	if (o->peer_compat) {
		*samples -= tail_records(p, stack, o->event);
		*period -= tail_period(p, stack, o->event);
	}
	return *period != 0;
}

/* Stack by stack: a fold context that tracks where names come from and
 * interns them into a pl_folded whose lines stay empty. */
struct pl_fold_stacks {
	struct fold_ctx c;
	struct pl_folded names;
};

struct pl_fold_stacks *pl_fold_stacks_new(const struct pl_profile *p,
					  const struct pl_fold_opts *o)
{
	struct pl_fold_stacks *fs = pl_xcalloc(1, sizeof(*fs));

	pl_strtab_init(&fs->names.names);
	pl_strtab_init(&fs->names.lines);
	fold_ctx_init(&fs->c, p, o, &fs->names);
	fs->c.track_src = true;
	return fs;
}

size_t pl_fold_stack_names(struct pl_fold_stacks *fs, uint32_t stack,
			   const uint32_t **names, const struct pl_fold_src **src)
{
	size_t len = fold_names(&fs->c, stack);

	*names = fs->c.seq;
	*src = fs->c.src;
	return len;
}

const struct pl_strtab *pl_fold_stacks_names(const struct pl_fold_stacks *fs)
{
	return &fs->names.names;
}

void pl_fold_stacks_free(struct pl_fold_stacks *fs)
{
	if (!fs)
		return;
	fold_ctx_release(&fs->c);
	pl_folded_release(&fs->names);
	free(fs);
}

void pl_folded_release(struct pl_folded *f)
{
	pl_strtab_release(&f->names);
	pl_strtab_release(&f->lines);
	free(f->weights);
	memset(f, 0, sizeof(*f));
}

const uint32_t *pl_folded_names(const struct pl_folded *f, uint32_t id, uint32_t *depth)
{
	*depth = f->lines.lens[id] / sizeof(uint32_t);
	return (const uint32_t *)f->lines.strs[id];
}

/* Byte order of two different names as they stand in their lines: each
 * followed by ';' when more names come, else by the end of the line. */
static int cmp_names(const struct pl_strtab *names, uint32_t a, bool a_more,
		     uint32_t b, bool b_more)
{
	size_t la = names->lens[a], lb = names->lens[b], m = la < lb ? la : lb;
	int c = memcmp(names->strs[a], names->strs[b], m), ca, cb;

	if (c)
		return c;
	ca = la > m ? (unsigned char)names->strs[a][m] : a_more ? ';' : -1;
	cb = lb > m ? (unsigned char)names->strs[b][m] : b_more ? ';' : -1;
	return (ca > cb) - (ca < cb);
}

int pl_folded_cmp_lines(const void *pa, const void *pb, void *folded)
{
	const struct pl_folded *f = folded;
	uint32_t na, nb, i;
	const uint32_t *a = pl_folded_names(f, *(const uint32_t *)pa, &na);
	const uint32_t *b = pl_folded_names(f, *(const uint32_t *)pb, &nb);

	for (i = 0; i < na && i < nb && a[i] == b[i]; i++)
		;
	if (i == na || i == nb)
		return (na > nb) - (na < nb);
	return cmp_names(&f->names, a[i], i + 1 < na, b[i], i + 1 < nb);
}

enum pl_err pl_write_folded(FILE *out, const struct pl_folded *f,
			    struct pl_error *err)
{
	uint32_t *order = pl_xmalloc((f->n + 1) * sizeof(uint32_t));
	char num[24];

	for (uint32_t i = 0; i < f->n; i++)
		order[i] = i;
	qsort_r(order, f->n, sizeof(uint32_t), pl_folded_cmp_lines, (void *)f);
	for (size_t i = 0; i < f->n; i++) {
		uint32_t depth;
		const uint32_t *names = pl_folded_names(f, order[i], &depth);
		for (uint32_t d = 0; d < depth; d++) {
			if (d)
				putc(';', out);
			fwrite(f->names.strs[names[d]], 1, f->names.lens[names[d]], out);
		}
		num[0] = ' ';
		fwrite(num, 1, pl_fmt_u64(num + 1, f->weights[order[i]]) + 1, out);
		putc('\n', out);
	}
	free(order);
	if (ferror(out))
		return pl_fail(err, PL_ERR_OUTPUT, "check free space on the output's disk",
			       "cannot write folded output");
	return PL_OK;
}

enum pl_err pl_write_flamegraph(FILE *out, const struct pl_folded *f,
				const struct pl_svg_opts *o, struct pl_error *err)
{
	struct pl_flame_stack *stacks = pl_xcalloc(f->n + 1, sizeof(*stacks));
	struct pl_flame_opts fo = {0};
	enum pl_err rc;

	for (uint32_t i = 0; i < f->n; i++) {
		stacks[i].names = pl_folded_names(f, i, &stacks[i].depth);
		stacks[i].weight = f->weights[i];
	}
	fo.title = o->title;
	fo.subtitle = o->subtitle;
	fo.unit = o->unit;
	fo.width = o->width;
	rc = pl_flamegraph_write(out, stacks, f->n, f->names.strs, f->names.count, &fo, err);
	free(stacks);
	return rc;
}

enum pl_err pl_write_flamegraph_png(struct pl_buf *out, const struct pl_folded *f,
				    const struct pl_png_opts *o, struct pl_png_stats *st,
				    struct pl_error *err)
{
	struct pl_flame_stack *stacks = pl_xcalloc(f->n + 1, sizeof(*stacks));
	enum pl_err rc;

	for (uint32_t i = 0; i < f->n; i++) {
		stacks[i].names = pl_folded_names(f, i, &stacks[i].depth);
		stacks[i].weight = f->weights[i];
	}
	rc = pl_flamegraph_png(out, stacks, f->n, f->names.strs, f->names.count, o, st, err);
	free(stacks);
	return rc;
}
