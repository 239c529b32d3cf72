/* collect_chains.c - the user part of a collected perf.data's DWARF call
 * chains, unwound by PerfLens's own reader (collect.h's user_chains_*).
 *
 * perf script stops at the first user frame of every blocked task in some
 * system-wide DWARF recordings (collectors/offcpu.c says when).  Here the
 * native reader reads the same perf.data once, tracepoints as plain
 * samples, with a sample hook: each sample's user frames (leaf first, the
 * frames not of kernel kind) are kept as the text perf script prints
 * ("\tADDR SYM (DSO)\n", the linker name where the input had one, as
 * perf script --no-demangle prints it), indexed by (tid, time) and sorted
 * once, so the off-CPU folding finds a sample's chain by binary search.
 * Bounded: past MAX_SAMPLES samples or MAX_TEXT bytes nothing more is
 * kept, and those samples keep perf's chains.
 */
#include "collect_chains.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "base/util.h"
#include "perfdata/pdread.h"
#include "profile/profile.h"

#define MAX_SAMPLES (4u << 20)
#define MAX_TEXT (512u << 20)

struct chain_ref {
	int64_t tid;
	uint64_t time;
	uint32_t off, len, nframes;
};

struct pl_user_chains {
	struct chain_ref *refs;
	size_t nrefs, cap;
	struct pl_buf text;
	const struct pl_profile *p;
};

/* One frame as perf script prints it. */
static void frame_text(struct pl_buf *b, const struct pl_profile *p, uint32_t frame, uint64_t pc)
{
	const struct pl_func *f = &p->funcs[p->frames[frame].func];
	uint32_t name = f->linkage != PL_NOID ? f->linkage : f->symbol;

	pl_buf_addf(b, "\t%llx %s (%s)\n", (unsigned long long)pc, pl_str(p, name),
		    f->dso != PL_NOID ? pl_str(p, f->dso) : "[unknown]");
}

static void on_sample(void *arg, int32_t pid, int32_t tid, uint64_t time, const uint32_t *frames,
		      const uint64_t *pcs, size_t n)
{
	struct pl_user_chains *c = arg;
	size_t start = c->text.len, k = 0;

	(void)pid;
	if (c->nrefs == MAX_SAMPLES || c->text.len > MAX_TEXT)
		return;
	for (size_t i = 0; i < n; i++) {
		if (c->p->funcs[c->p->frames[frames[i]].func].kind == PL_KIND_KERNEL)
			continue;
		frame_text(&c->text, c->p, frames[i], pcs[i]);
		k++;
	}
	if (!k)
		return;
	PL_GROW(c->refs, c->cap, c->nrefs + 1);
	c->refs[c->nrefs++] = (struct chain_ref){tid, time, (uint32_t)start,
						 (uint32_t)(c->text.len - start), (uint32_t)k};
}

static int cmp_ref(const void *a, const void *b)
{
	const struct chain_ref *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->time < y->time ? -1 : x->time > y->time;
}

struct pl_user_chains *tool_user_chains_open(const char *data, const char *kallsyms)
{
	struct pl_user_chains *c = pl_xcalloc(1, sizeof(*c));
	struct pl_profile p;
	struct pl_limits lim;
	struct pl_error err;
	enum pl_err rc;

	pl_limits_default(&lim);
	pl_profile_init(&p, &lim);
	c->p = &p;
	pd_read_set_sample_hook(on_sample, c);
	rc = pd_read_profile(&p, data, kallsyms, NULL, &err);
	pd_read_set_sample_hook(NULL, NULL);
	c->p = NULL;
	pl_profile_release(&p);
	if (rc != PL_OK || !c->nrefs) {
		tool_user_chains_close(c);
		return NULL;
	}
	qsort(c->refs, c->nrefs, sizeof(*c->refs), cmp_ref);
	return c;
}

size_t tool_user_chain(const struct pl_user_chains *c, int64_t tid, uint64_t time_ns, struct pl_buf *out)
{
	struct chain_ref key = {tid, time_ns, 0, 0, 0};
	const struct chain_ref *r = bsearch(&key, c->refs, c->nrefs, sizeof(*c->refs), cmp_ref);

	if (!r)
		return 0;
	pl_buf_add(out, c->text.data + r->off, r->len);
	return r->nframes;
}

void tool_user_chains_close(struct pl_user_chains *c)
{
	if (!c)
		return;
	free(c->refs);
	pl_buf_release(&c->text);
	free(c);
}
