/* fuzz_view.c - the view argument (tools/lib/view.h) and its stack transforms
 * (profile/transform.h).
 *
 * The first byte picks the mode.  Even: the rest is text, its first six
 * lines the patterns of ignore, focus, under, hide, show_from and merge
 * (an empty line: none; bit 1 of the mode byte: collapse_recursion), the
 * other lines stacks "a;b;c" of one sample each, root first.  The
 * transforms run over that profile; checked on every input: the kept and
 * dropped weights add up to what came in, the stacks left weigh what was
 * kept, every frame left names a function of the profile, and no function
 * was added.  Odd: the rest is a JSON view object, read by tool_view_init
 * (and applied to a small fixed profile when it is valid).
 */
// fuzz-flags: -max_len=4096
#include "fuzz.h"
#include "tools/lib/view.h"

#include <stdlib.h>
#include <string.h>

#define MAX_LINES 64
#define MAX_DEPTH 16

/* Line `n` of data into *line, *len; false past the end. */
static bool next_line(const uint8_t **data, size_t *size, const char **line, size_t *len)
{
	const uint8_t *nl;

	if (*size == 0)
		return false;
	nl = memchr(*data, '\n', *size);
	*line = (const char *)*data;
	*len = nl ? (size_t)(nl - *data) : *size;
	*data += *len + (nl != NULL);
	*size -= *len + (nl != NULL);
	return true;
}

static void feed(struct pl_profile *p, const char *s, size_t n)
{
	struct pl_error err;
	uint32_t ev = pl_intern_event(p, "cycles", 6), th = pl_intern_thread(p, 1, 1, PL_NOID);
	uint32_t ids[MAX_DEPTH], depth = 0;

	for (size_t i = 0; i < n && depth < MAX_DEPTH;) {
		const char *semi = memchr(s + i, ';', n - i);
		size_t k = semi ? (size_t)(semi - (s + i)) : n - i;
		uint32_t sym = pl_intern_str(p, s + i, k);
		ids[depth++] = pl_intern_frame(p, pl_intern_func(p, sym, PL_NOID), false, 0, PL_NOID, &err);
		i += k + 1;
	}
	pl_add_weight(p, pl_intern_stack(p, th, ids, depth, &err), ev, 1, 7, true);
}

static void check_applied(const struct pl_profile *p, size_t nfuncs, const struct pl_transform_stats *st)
{
	struct pl_amount left = {0, 0}, dropped = {0, 0};

	for (int f = 0; f < PL_TF_NFIELDS; f++) {
		dropped.samples += st->dropped[f].samples;
		dropped.period += st->dropped[f].period;
	}
	if (st->kept.samples + dropped.samples != st->before.samples ||
	    st->kept.period + dropped.period != st->before.period || pl_nfuncs(p) != nfuncs)
		abort();
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_weight *w = pl_stack_weight(p, s, 0);
		if (!w)
			continue;
		left.samples += w->samples;
		left.period += w->period;
		for (uint32_t d = 0; d < p->stacks[s].depth; d++)
			if (p->frames[p->stacks[s].frames[d]].func >= nfuncs)
				abort();
	}
	if (left.samples != st->kept.samples || left.period != st->kept.period)
		abort();
}

static void transforms(unsigned mode, const uint8_t *data, size_t size)
{
	struct pl_profile p;
	struct pl_transform tf;
	struct pl_transform_stats st;
	struct pl_error err;
	const char *line;
	size_t len, lines = 0;
	char pat[PL_TF_PATTERN_MAX + 2];

	pl_profile_init(&p, NULL);
	pl_transform_init(&tf);
	tf.collapse_recursion = mode & 2;
	for (int f = 0; f < PL_TF_NFIELDS && next_line(&data, &size, &line, &len); f++) {
		if (len == 0 || len > PL_TF_PATTERN_MAX + 1 || memchr(line, '\0', len))
			continue;
		memcpy(pat, line, len);
		pat[len] = '\0';
		(void)pl_transform_set(&tf, (enum pl_tf_field)f, pat, &err);
	}
	while (lines++ < MAX_LINES && next_line(&data, &size, &line, &len))
		feed(&p, line, len);
	if (p.nevents) {
		size_t nfuncs = pl_nfuncs(&p);
		if (pl_transform_apply(&tf, &p, 0, &st, &err) == PL_OK)
			check_applied(&p, nfuncs, &st);
	}
	pl_transform_release(&tf);
	pl_profile_release(&p);
}

static void json_view(const uint8_t *data, size_t size)
{
	json_t *view = json_loadb((const char *)data, size, 0, NULL), *args;
	struct tool_view v;
	struct pl_profile p;
	struct pl_error err;

	if (!view)
		return;
	args = json_pack("{s:o}", "view", view);
	pl_profile_init(&p, NULL);
	feed(&p, "main;parse;hash", 15);
	feed(&p, "main;render;walk;walk;fmt", 25);
	if (tool_view_init(&v, args, true, &err) == PL_OK) {
		json_t *j;
		(void)tool_view_apply(&v, &p, 0, &err);
		j = tool_view_json(&v);
		json_decref(j);
	}
	tool_view_release(&v);
	pl_profile_release(&p);
	json_decref(args);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned mode = fuzz_take_byte(&data, &size);

	if (mode & 1)
		json_view(data, size);
	else
		transforms(mode, data, size);
	return 0;
}
