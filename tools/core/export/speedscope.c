/* export_speedscope.c - one event as a speedscope file (see
 * export_formats.h), and the size bound both new exports share
 * (srclines are read by profile/srcline.h).
 *
 * The file is one jansson tree dumped with sorted keys.  Every profile
 * stack is one sample: the indexes of its frames root to leaf, a frame
 * being a folded name with the file and line of its srcline (only the
 * innermost name of an "outer->inner" chain has them: perf's srcline is
 * that of the address).  A frame index is one json_integer shared by every
 * sample that uses it (jansson counts references), so a reference costs a
 * pointer, not an allocation; the size bound is checked first.
 */
#include "export/formats.h"
#include "base/escape.h"
#include "profile/srcline.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

/* ------------------------------------------------ shared with pprof */

/* The frame references an export of `fo->event` would hold (a frame per
 * stack level, and one for the process name), checked against the bound
 * before anything is built. */
enum pl_err pl_export_check_size(const struct pl_profile *p, const struct pl_fold_opts *fo,
				 const struct pl_export_opts *eo, struct pl_error *err)
{
	uint64_t max = eo->max_refs ? eo->max_refs : PL_EXPORT_MAX_REFS, refs = 0;

	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		uint64_t samples, period;
		if (pl_fold_weight(p, s, fo, &samples, &period))
			refs += (uint64_t)p->stacks[s].depth + 1;
	}
	if (refs > max)
		return pl_fail(err, PL_ERR_LIMIT,
			       "export format=folded or svg (identical stacks merge there), or analyze fewer samples",
			       "the export would hold %llu frame references, more than the limit of %llu",
			       (unsigned long long)refs, (unsigned long long)max);
	return PL_OK;
}

/* ------------------------------------------------------- speedscope */

struct ss_ctx {
	const struct pl_profile *p;
	const struct pl_strtab *names;  /* folded names */
	struct pl_strtab keys;          /* (name, file, line) -> frame index */
	struct pl_strtab files;         /* source file names */
	struct pl_strtab seen;          /* (name, frame with a srcline) -> cache slot */
	uint32_t *seen_index;           /* cache slot -> frame index */
	size_t seen_cap;
	json_t *frames;                 /* shared.frames */
	json_t **index;                 /* frame index -> its json_integer */
	size_t nindex, index_cap;
};

/* The srcline of the frame a name came from, when the name is the one
 * perf's srcline describes: *file is an id in c->files or PL_NOID. */
static void name_source(struct ss_ctx *c, const struct pl_fold_src *src,
			uint32_t *file, uint32_t *line)
{
	const struct pl_frame *fr;
	const char *sl;
	size_t flen;

	*file = PL_NOID;
	*line = 0;
	if (src->frame == PL_NOID || src->part + 1 != src->nparts)
		return;
	fr = &c->p->frames[src->frame];
	if (fr->srcline == PL_NOID)
		return;
	sl = pl_str(c->p, fr->srcline);
	if (pl_srcline_split(sl, &flen, line))
		*file = pl_strtab_intern(&c->files, sl, flen);
}

static enum pl_err new_frame(struct ss_ctx *c, uint32_t name, uint32_t file, uint32_t line,
			     size_t index, struct pl_error *err)
{
	struct pl_buf escaped = {0};
	json_t *f = json_object(), *s;

	/* A folded name is bytes (fold.h): the document holds bytes that are
	 * not UTF-8 as \xHH (base/escape.h's text form). */
	pl_esc_add_text(&escaped, c->names->strs[name], c->names->lens[name]);
	s = json_stringn(escaped.data ? escaped.data : "", escaped.len);
	pl_buf_release(&escaped);
	if (!s) {
		json_decref(f);
		return pl_fail(err, PL_ERR_INTERNAL, "report this as a bug",
			       "a frame name is not UTF-8");
	}
	json_object_set_new(f, "name", s);
	if (file != PL_NOID) {
		json_object_set_new(f, "file", json_stringn(c->files.strs[file], c->files.lens[file]));
		if (line)
			json_object_set_new(f, "line", json_integer(line));
	}
	json_array_append_new(c->frames, f);
	PL_GROW(c->index, c->index_cap, index + 1);
	c->index[index] = json_integer((json_int_t)index);
	c->nindex = index + 1;
	return PL_OK;
}

/* The index of the frame for one name of a stack, added on first use.
 * A cache keyed by the name and the frame it comes from (when it is the
 * name a srcline describes) saves reading the srcline again. */
static enum pl_err frame_index(struct ss_ctx *c, uint32_t name, const struct pl_fold_src *src,
			       uint32_t *index, struct pl_error *err)
{
	bool sourced = src->frame != PL_NOID && src->part + 1 == src->nparts &&
		       c->p->frames[src->frame].srcline != PL_NOID;
	uint32_t seen[2] = {name, sourced ? src->frame : PL_NOID}, key[3], file, line, slot;
	size_t before = c->seen.count;
	enum pl_err rc;

	slot = pl_strtab_intern(&c->seen, (const char *)seen, sizeof(seen));
	if (c->seen.count == before) {
		*index = c->seen_index[slot];
		return PL_OK;
	}
	name_source(c, src, &file, &line);
	key[0] = name;
	key[1] = file;
	key[2] = line;
	before = c->keys.count;
	*index = pl_strtab_intern(&c->keys, (const char *)key, sizeof(key));
	if (c->keys.count > before && (rc = new_frame(c, name, file, line, *index, err)))
		return rc;
	PL_GROW(c->seen_index, c->seen_cap, slot + 1);
	c->seen_index[slot] = *index;
	return PL_OK;
}

static const char *speedscope_unit(const char *unit)
{
	static const char *const kept[] = {"nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"};

	for (size_t i = 0; i < PL_ARRAY_LEN(kept); i++)
		if (strcmp(unit, kept[i]) == 0)
			return kept[i];
	return strcmp(unit, "ns") == 0 ? "nanoseconds" : "none";
}

/* samples[] and weights[]: one entry per exported stack. */
static enum pl_err add_samples(struct ss_ctx *c, struct pl_fold_stacks *fs,
			       const struct pl_fold_opts *fo, json_t *samples, json_t *weights,
			       struct pl_export_stats *st, struct pl_error *err)
{
	for (uint32_t s = 0; s < pl_nstacks(c->p); s++) {
		const uint32_t *names;
		const struct pl_fold_src *src;
		uint64_t n, period;
		json_t *sample;
		size_t len;

		if (!pl_fold_weight(c->p, s, fo, &n, &period))
			continue;
		len = pl_fold_stack_names(fs, s, &names, &src);
		sample = json_array();
		for (size_t i = 0; i < len; i++) {
			uint32_t idx;
			enum pl_err rc = frame_index(c, names[i], &src[i], &idx, err);
			if (rc) {
				json_decref(sample);
				return rc;
			}
			json_array_append(sample, c->index[idx]);
		}
		json_array_append_new(samples, sample);
		json_array_append_new(weights, json_integer((json_int_t)period));
		st->samples += n;
		st->weight += period;
		st->stacks++;
	}
	return PL_OK;
}

enum pl_err pl_write_speedscope(FILE *out, const struct pl_profile *p,
				const struct pl_fold_opts *fo,
				const struct pl_export_opts *eo,
				struct pl_export_stats *st, struct pl_error *err)
{
	struct ss_ctx c = {0};
	struct pl_fold_stacks *fs;
	json_t *samples, *weights, *doc = NULL;
	const char *unit = speedscope_unit(pl_event_unit(p, fo->event));
	enum pl_err rc;

	memset(st, 0, sizeof(*st));
	st->file_unit = unit;
	if ((rc = pl_export_check_size(p, fo, eo, err)))
		return rc;
	fs = pl_fold_stacks_new(p, fo);
	c.p = p;
	c.names = pl_fold_stacks_names(fs);
	pl_strtab_init(&c.keys);
	pl_strtab_init(&c.files);
	pl_strtab_init(&c.seen);
	c.frames = json_array();
	samples = json_array();
	weights = json_array();
	rc = add_samples(&c, fs, fo, samples, weights, st, err);
	st->frames = c.keys.count;
	if (!rc) {
		doc = json_pack("{s:s,s:s,s:s,s:i,s:{s:o},s:[{s:s,s:s,s:s,s:i,s:I,s:o,s:o}]}",
			"$schema", SPEEDSCOPE_SCHEMA, "exporter", eo->exporter, "name", eo->name,
			"activeProfileIndex", 0, "shared", "frames", c.frames,
			"profiles", "type", "sampled", "name", pl_str(p, p->events[fo->event].name),
			"unit", unit, "startValue", 0, "endValue", (json_int_t)st->weight,
			"samples", samples, "weights", weights);
		c.frames = samples = weights = NULL;
		if (!doc)
			rc = pl_fail(err, PL_ERR_INTERNAL, "report this as a bug",
				     "cannot build the speedscope document");
	}
	if (!rc && (json_dumpf(doc, out, JSON_COMPACT | JSON_SORT_KEYS) || ferror(out)))
		rc = pl_fail(err, PL_ERR_OUTPUT, "check free space on the output's disk",
			     "cannot write the speedscope file");
	json_decref(doc);
	json_decref(c.frames);
	json_decref(samples);
	json_decref(weights);
	for (size_t i = 0; i < c.nindex; i++)
		json_decref(c.index[i]);
	free(c.index);
	pl_strtab_release(&c.keys);
	pl_strtab_release(&c.files);
	pl_strtab_release(&c.seen);
	free(c.seen_index);
	pl_fold_stacks_free(fs);
	return rc;
}
