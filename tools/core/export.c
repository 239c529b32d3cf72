/* export.c - folding stacks by stackcollapse-perf.pl's rules, and turning
 * folded stacks into flame graphs (see export.h).
 *
 * Each unique stack is rendered to its folded text once, then summed into
 * a table keyed by that text (different stacks can fold to the same line,
 * e.g. when only an offset or a thread differs).  The flame graph splits
 * the folded lines back into interned names, so the SVG shows exactly the
 * names the folded file would.
 */
#include "export.h"
#include "flamegraph.h"

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
 * tidy_java rules). */
static void add_tidy(struct pl_buf *b, const char *s, size_t n, bool java)
{
	size_t start = b->len, cut = n;

	if (!looks_like_go_method(s, n)) {
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

static void add_frame(struct pl_buf *b, const struct pl_profile *p,
		      const struct pl_frame *fr, const struct pl_fold_opts *o,
		      bool java)
{
	const struct pl_func *fn = &p->funcs[fr->func];
	const char *sym = pl_str(p, fn->symbol);
	const char *dso = fn->dso == PL_NOID ? "[unknown]" : pl_str(p, fn->dso);
	size_t part = 0;

	if (sym[0] == '(')
		return;
	/* The peer reads an empty symbol ("ADDR  (DSO)") as one space. */
	if (sym[0] == '\0')
		sym = " ";
	/* Old perfs print inlined chains as "outer->inner". */
	for (const char *s = sym;; part++) {
		const char *arrow = strstr(s, "->");
		size_t n = arrow ? (size_t)(arrow - s) : strlen(s);
		size_t start;

		if (b->len)
			pl_buf_addc(b, ';');
		start = b->len;
		if (n == 9 && memcmp(s, "[unknown]", 9) == 0) {
			const char *name = strcmp(dso, "[unknown]") ? basename_of(dso) : "unknown";
			if (o->addrs)
				pl_buf_addf(b, "[%s <%llx>]", name, (unsigned long long)fr->addr);
			else
				pl_buf_addf(b, "[%s]", name);
			/* The bracketed name still goes through tidying. */
			{
				struct pl_buf t = {0};
				add_tidy(&t, b->data + start, b->len - start, java);
				b->len = start;
				pl_buf_add(b, t.data ? t.data : "", t.len);
				pl_buf_release(&t);
			}
		} else {
			add_tidy(b, s, n, java);
		}
		if (part > 0)
			pl_buf_adds(b, "_[i]");
		else if (o->kernel && is_kernel_dso(dso))
			pl_buf_adds(b, "_[k]");
		else if (o->jit && is_perf_map(dso))
			pl_buf_adds(b, "_[j]");
		if (!arrow)
			break;
		s = arrow + 2;
	}
}

static void add_pname(struct pl_buf *b, const struct pl_profile *p,
		      const struct pl_thread *t, const struct pl_fold_opts *o)
{
	const char *comm = pl_str(p, t->comm);
	size_t start = b->len;

	pl_buf_adds(b, comm ? comm : "");
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

static const struct pl_folded *cmp_folded;

static int cmp_line(const void *a, const void *b)
{
	const struct pl_strtab *t = &cmp_folded->lines;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	size_t nx = t->lens[x], ny = t->lens[y];
	int c = memcmp(t->strs[x], t->strs[y], nx < ny ? nx : ny);

	return c ? c : (nx < ny ? -1 : (nx > ny));
}

enum pl_err pl_fold(struct pl_folded *out, const struct pl_profile *p,
		    const struct pl_fold_opts *o, struct pl_error *err)
{
	struct pl_buf b = {0};

	(void)err;
	memset(out, 0, sizeof(*out));
	pl_strtab_init(&out->lines);
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_stack *st = &p->stacks[s];
		const struct pl_weight *w = pl_stack_weight(p, s, o->event);
		const struct pl_thread *t = &p->threads[st->thread];
		uint64_t weight;
		bool java;
		uint32_t id;

		if (!w)
			continue;
		weight = w->period;
		if (o->peer_compat)
			weight -= tail_period(p, s, o->event);
		if (weight == 0)
			continue;
		pl_buf_reset(&b);
		if (t->comm != PL_NOID || t->tid >= 0)
			add_pname(&b, p, t, o);
		/* The peer's expected outputs condense Java names only when
		 * the process is named exactly "java" (not "java-PID"). */
		java = b.len == 4 && memcmp(b.data, "java", 4) == 0;
		for (uint32_t d = 0; d < st->depth; d++)
			add_frame(&b, p, &p->frames[st->frames[d]], o, java);
		id = pl_strtab_intern(&out->lines, b.data ? b.data : "", b.len);
		PL_GROW(out->weights, out->weights_cap, out->lines.count);
		if (id == out->n)
			out->weights[out->n++] = 0;
		out->weights[id] += weight;
	}
	pl_buf_release(&b);
	out->order = pl_xmalloc((out->n + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < out->n; i++)
		out->order[i] = i;
	cmp_folded = out;
	qsort(out->order, out->n, sizeof(uint32_t), cmp_line);
	cmp_folded = NULL;
	return PL_OK;
}

void pl_folded_release(struct pl_folded *f)
{
	pl_strtab_release(&f->lines);
	free(f->weights);
	free(f->order);
	memset(f, 0, sizeof(*f));
}

enum pl_err pl_write_folded(FILE *out, const struct pl_folded *f,
			    struct pl_error *err)
{
	for (size_t i = 0; i < f->n; i++) {
		uint32_t id = f->order[i];
		fwrite(f->lines.strs[id], 1, f->lines.lens[id], out);
		fprintf(out, " %llu\n", (unsigned long long)f->weights[id]);
	}
	if (ferror(out))
		return pl_fail(err, PL_ERR_OUTPUT, "check free space on the output's disk",
			       "cannot write folded output");
	return PL_OK;
}

enum pl_err pl_write_flamegraph(FILE *out, const struct pl_folded *f,
				const struct pl_svg_opts *o, struct pl_error *err)
{
	struct pl_strtab names;
	struct pl_flame_stack *stacks = pl_xcalloc(f->n + 1, sizeof(*stacks));
	uint32_t *ids = NULL;
	size_t nids = 0, ids_cap = 0;
	size_t *offs = pl_xcalloc(f->n + 1, sizeof(size_t));
	struct pl_flame_opts fo = {0};
	enum pl_err rc;

	pl_strtab_init(&names);
	for (size_t i = 0; i < f->n; i++) {
		uint32_t id = f->order[i];
		const char *s = f->lines.strs[id];
		size_t n = f->lines.lens[id], start = 0;

		offs[i] = nids;
		for (size_t k = 0; k <= n; k++) {
			if (k < n && s[k] != ';')
				continue;
			PL_GROW(ids, ids_cap, nids + 1);
			ids[nids++] = pl_strtab_intern(&names, s + start, k - start);
			start = k + 1;
		}
		stacks[i].depth = (uint32_t)(nids - offs[i]);
		stacks[i].weight = f->weights[id];
	}
	for (size_t i = 0; i < f->n; i++)
		stacks[i].names = ids + offs[i];
	fo.title = o->title;
	fo.subtitle = o->subtitle;
	fo.unit = o->unit;
	fo.width = o->width;
	rc = pl_flamegraph_write(out, stacks, f->n, names.strs, names.count, &fo, err);
	free(stacks);
	free(ids);
	free(offs);
	pl_strtab_release(&names);
	return rc;
}
