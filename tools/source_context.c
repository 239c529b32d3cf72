/* source_context.c - the source_context tool: source lines around the hot
 * lines of a hotspot or a file, with the samples of each line.
 *
 * Counting walks the stack table once.  A frame's srcline ("fib.c:12")
 * names a file and a line; per (file, line) the tool sums self samples
 * (the leaf frame is on it), total samples (the line is somewhere in the
 * stack, once per stack) and inlined samples (the line is the call site
 * of inlined code the leaf is in: an optimized build's hot loop inlined
 * from a header or a library is credited to the program's own line that
 * calls it, from the inline chain the srclines give, DW_AT_call_file and
 * DW_AT_call_line).  Then the hottest lines of each file get a
 * window of context, read from the file: a recorded absolute path is
 * mapped with --path-map; a base name (what perf prints) is looked up in
 * the module's DWARF file tables (srcfile.c), then under each allowed
 * root.  Every read goes through tool_resolve_input, so nothing outside
 * the allowed roots is opened, and every path tried is reported; without
 * any text the hot lines still stand.  For a hotspot, the module offsets
 * its samples landed on (kept by PerfLens's srclines) are listed with the
 * symbolize call that names them.  A view (view.h) applies first: only
 * the samples it keeps count, on the frames it leaves.
 */
#include "registry.h"
#include "tools/lib/view.h"
#include "base/escape.h"
#include "profile/aggregate.h"
#include "profile/srcline.h"
#include "store/artifact.h"
#include "symbols/srcfile.h"
#include "base/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILES 8
#define MAX_TRIED 16
#define MAX_TEXT 240
#define MAX_SOURCE_BYTES (16u << 20)

struct line_count {
	uint32_t file, line;
	uint64_t self, total;
	uint64_t inlined;        /* leaf in code inlined at this line */
	uint32_t stamp;          /* last stack counted in total, + 1 */
	uint32_t istamp;         /* last stack counted in inlined, + 1 */
};

struct src_file {
	const char *recorded;    /* borrowed from the profile */
	uint32_t dso;            /* string id of a module that names it */
	uint64_t self, total;    /* total: samples with a selected frame on it */
	uint32_t stamp;          /* last stack counted in total, + 1 */
};

struct counts {
	struct line_count *slots; /* open addressing by (file, line) */
	size_t cap, used;
	struct src_file *files;
	size_t nfiles, files_cap;
	int32_t *src_file;        /* per string id: file index, -1 none, -2 unparsed */
	uint32_t *src_line;
	uint64_t with_lines, without_lines;
	struct pl_strtab offsets; /* a hotspot's sampled module offsets -> index */
	uint64_t *offset_samples; /* index -> self samples */
	size_t offset_cap;
};

#define MAX_HOT_OFFSETS 16

/* ------------------------------------------------------------ counting */

static int32_t file_index(struct counts *c, const struct pl_profile *p, const char *name,
			  size_t n, uint32_t dso)
{
	for (size_t i = 0; i < c->nfiles; i++)
		if (strlen(c->files[i].recorded) == n && memcmp(c->files[i].recorded, name, n) == 0)
			return (int32_t)i;
	PL_GROW(c->files, c->files_cap, c->nfiles + 1);
	c->files[c->nfiles] = (struct src_file){pl_xstrndup(name, n), dso, 0, 0, 0};
	(void)p;
	return (int32_t)c->nfiles++;
}

/* "path:LINE", perhaps with notes after it, read as every srcline is
 * (profile/srcline.h; perf also prints "??:0" and ":0" for none). */
static bool srcline_of(struct counts *c, const struct pl_profile *p, const struct pl_frame *f,
		       int32_t *file, uint32_t *line)
{
	size_t flen;
	uint32_t n;

	if (f->srcline == PL_NOID)
		return false;
	if (c->src_file[f->srcline] == -2) {
		c->src_file[f->srcline] = -1;
		if (pl_srcline_split(pl_str(p, f->srcline), &flen, &n) && n > 0 && n < UINT32_MAX) {
			c->src_file[f->srcline] = file_index(c, p, pl_str(p, f->srcline), flen,
							     p->funcs[f->func].dso);
			c->src_line[f->srcline] = n;
		}
	}
	*file = c->src_file[f->srcline];
	*line = c->src_line[f->srcline];
	return *file >= 0;
}

static struct line_count *slot_for(struct counts *c, uint32_t file, uint32_t line)
{
	size_t i;

	if (2 * (c->used + 1) > c->cap) {
		struct line_count *old = c->slots;
		size_t old_cap = c->cap;
		c->cap = old_cap ? 2 * old_cap : 1024;
		c->slots = pl_xcalloc(c->cap, sizeof(*c->slots));
		c->used = 0;
		for (size_t k = 0; k < old_cap; k++)
			if (old[k].line) {
				*slot_for(c, old[k].file, old[k].line) = old[k];
			}
		free(old);
	}
	i = (size_t)(((uint64_t)file * 0x9E3779B97F4A7C15ULL) ^ (line * 0xC2B2AE3D27D4EB4FULL)) & (c->cap - 1);
	while (c->slots[i].line && !(c->slots[i].file == file && c->slots[i].line == line))
		i = (i + 1) & (c->cap - 1);
	if (!c->slots[i].line) {
		c->slots[i] = (struct line_count){file, line, 0, 0, 0, 0, 0};
		c->used++;
	}
	return &c->slots[i];
}

/* Does a recorded name and the caller's `want` name the same file? One
 * may be a trailing part of the other ("fib.c" and "src/fib.c"). */
static bool same_file(const char *recorded, const char *want)
{
	size_t a = strlen(recorded), b = strlen(want);
	const char *longer = a >= b ? recorded : want, *shorter = a >= b ? want : recorded;
	size_t ll = a >= b ? a : b, ls = a >= b ? b : a;

	if (ll == ls)
		return strcmp(recorded, want) == 0;
	return longer[ll - ls - 1] == '/' && strcmp(longer + ll - ls, shorter) == 0;
}

/* Is frame `f` selected: of the hotspot's function, or on the file? */
static bool selected(struct counts *c, const struct pl_profile *p, const struct pl_frame *f,
		     uint32_t func, const char *want_file)
{
	int32_t file;
	uint32_t line;

	if (!want_file)
		return f->func == func;
	return srcline_of(c, p, f, &file, &line) && same_file(c->files[file].recorded, want_file);
}

/* The module offset a stack's leaf was sampled at (srclines keep it),
 * for the hotspot at depth `deepest` when only its inlined calls lie
 * below it. */
static void count_offset(struct counts *c, const struct pl_profile *p, const struct pl_stack *st,
			 uint32_t deepest, uint64_t samples)
{
	const struct pl_frame *leaf = &p->frames[st->frames[st->depth - 1]];
	size_t before = c->offsets.count;
	uint32_t idx;

	if (!leaf->has_addr || p->funcs[leaf->func].unknown)
		return;
	for (uint32_t d = deepest + 1; d < st->depth; d++)
		if (!p->funcs[p->frames[st->frames[d]].func].inlined)
			return;
	idx = pl_strtab_intern(&c->offsets, (const char *)&leaf->addr, sizeof(leaf->addr));
	if (c->offsets.count != before) {
		PL_GROW(c->offset_samples, c->offset_cap, c->offsets.count);
		c->offset_samples[idx] = 0;
	}
	c->offset_samples[idx] += samples;
}

/* Up the leaf's inline chain: each frame above an inlined one is at the
 * line that called it (its srcline is the call site), and the sample's
 * leaf is in code inlined there. */
static void count_inlined(struct counts *c, const struct pl_profile *p, uint32_t s, uint64_t samples,
			  uint32_t func, const char *want_file)
{
	const struct pl_stack *st = &p->stacks[s];
	int32_t file;
	uint32_t line;

	for (uint32_t d = st->depth - 1; d > 0; d--) {
		const struct pl_frame *callee = &p->frames[st->frames[d]];
		const struct pl_frame *site = &p->frames[st->frames[d - 1]];
		struct line_count *lc;
		if (!p->funcs[callee->func].inlined)
			break;
		if (!selected(c, p, site, func, want_file) || !srcline_of(c, p, site, &file, &line))
			continue;
		lc = slot_for(c, (uint32_t)file, line);
		if (lc->istamp != s + 1) {
			lc->istamp = s + 1;
			lc->inlined += samples;
		}
	}
}

static void count_stack(struct counts *c, const struct pl_profile *p, uint32_t s, uint64_t samples,
			uint32_t func, const char *want_file)
{
	const struct pl_stack *st = &p->stacks[s];
	const struct pl_frame *leaf = &p->frames[st->frames[st->depth - 1]];
	int32_t file;
	uint32_t line, deepest = UINT32_MAX;

	for (uint32_t d = 0; d < st->depth; d++) {
		const struct pl_frame *f = &p->frames[st->frames[d]];
		struct line_count *lc;
		if (!selected(c, p, f, func, want_file))
			continue;
		deepest = d;
		if (!srcline_of(c, p, f, &file, &line))
			continue;
		if (c->files[file].stamp != s + 1) {
			c->files[file].stamp = s + 1;
			c->files[file].total += samples;
		}
		lc = slot_for(c, (uint32_t)file, line);
		if (lc->stamp != s + 1) {
			lc->stamp = s + 1;
			lc->total += samples;
		}
	}
	if (deepest == UINT32_MAX && !want_file)
		return;
	/* With a file asked for, every sample's leaf tells whether the
	 * profile had a line for it; with a hotspot, its deepest frame. */
	const struct pl_frame *probe = want_file ? leaf : &p->frames[st->frames[deepest]];
	if (srcline_of(c, p, probe, &file, &line))
		c->with_lines += samples;
	else
		c->without_lines += samples;
	if (deepest == st->depth - 1 && srcline_of(c, p, leaf, &file, &line))
		slot_for(c, (uint32_t)file, line)->self += samples;
	count_inlined(c, p, s, samples, func, want_file);
	if (!want_file)
		count_offset(c, p, st, deepest, samples);
}

/* ------------------------------------------------------------- reading */

struct found {
	char path[PATH_MAX];
	json_t *tried;
	const char *reason;
};

static bool try_path(const struct tool_ctx *ctx, const char *path, struct found *fd)
{
	char mapped[PATH_MAX];
	struct pl_error ignored;
	const char *cands[2];
	size_t n = 0;

	if (pl_path_map_apply(ctx->sym.path_maps, ctx->sym.npath_maps, path, mapped, sizeof(mapped)))
		cands[n++] = mapped;
	cands[n++] = path;
	for (size_t i = 0; i < n; i++) {
		if (json_array_size(fd->tried) < MAX_TRIED)
			json_array_append_new(fd->tried, json_string(cands[i]));
		if (tool_resolve_input(ctx, cands[i], fd->path, sizeof(fd->path), &ignored) == PL_OK)
			return true;
	}
	return false;
}

/* Find the file a srcline names; fills fd (tried paths, or the reason). */
static bool locate(const struct tool_ctx *ctx, const struct pl_profile *p, const struct src_file *sf,
		   struct found *fd)
{
	char dso[PATH_MAX], *cands[PL_SRCFILE_MAX_MATCHES], root_path[PATH_MAX];
	struct pl_error ignored;
	size_t n = 0;
	bool ok = false;

	if (sf->recorded[0] == '/')
		return try_path(ctx, sf->recorded, fd);
	/* A base name: the module's DWARF knows the directory. */
	if (sf->dso != PL_NOID && pl_str(p, sf->dso)[0] == '/' &&
	    tool_resolve_input(ctx, pl_str(p, sf->dso), dso, sizeof(dso), &ignored) == PL_OK)
		n = pl_srcfile_candidates(dso, sf->recorded, cands, PL_SRCFILE_MAX_MATCHES);
	for (size_t i = 0; i < n; i++) {
		if (!ok)
			ok = try_path(ctx, cands[i], fd);
		free(cands[i]);
	}
	for (size_t i = 0; !ok && i < ctx->nroots; i++) {
		snprintf(root_path, sizeof(root_path), "%s/%s", ctx->allowed_roots[i], sf->recorded);
		ok = try_path(ctx, root_path, fd);
	}
	return ok;
}

/* A line of source as JSON text: at most MAX_TEXT bytes, cut on a UTF-8
 * boundary, bytes that are not UTF-8 (a Latin-1 comment) as \xHH, the
 * text form of base/escape.h, so nothing of the line is lost. */
static json_t *text_json(const char *s, size_t n)
{
	struct pl_buf b = {0};
	json_t *j;

	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	if (n > MAX_TEXT) {
		n = MAX_TEXT;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	pl_esc_add_text(&b, s, n);
	j = json_stringn(b.data ? b.data : "", b.len);
	pl_buf_release(&b);
	return j;
}

static int cmp_hot(const void *a, const void *b)
{
	const struct line_count *x = *(const struct line_count *const *)a;
	const struct line_count *y = *(const struct line_count *const *)b;

	/* a line's own samples and those of what was inlined at it */
	if (x->self + x->inlined != y->self + y->inlined)
		return x->self + x->inlined < y->self + y->inlined ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The source lines in the windows around the `shown` hot lines `wanted`
 * (sorted) into `lines`; returns how many hot lines lie past the end of
 * the file (then the source is not the profiled one). */
static size_t read_windows(FILE *in, struct counts *c, uint32_t fi, const uint32_t *wanted,
			   size_t shown, uint32_t before, uint32_t after, json_t *lines)
{
	char *line = NULL;
	size_t cap = 0, read_bytes = 0, w = 0, past = 0;
	ssize_t len;
	uint32_t no = 0, last_wanted = shown ? wanted[shown - 1] : 0;

	while (shown && (len = getline(&line, &cap, in)) >= 0 &&
	       (read_bytes += (size_t)len) <= MAX_SOURCE_BYTES) {
		no++;
		while (w < shown && (uint64_t)wanted[w] + after < no)
			w++;
		if (w == shown && no > last_wanted + after)
			break;
		if (w < shown && (uint64_t)no + before >= wanted[w]) {
			struct line_count *lc = slot_for(c, fi, no);
			json_array_append_new(lines, json_pack("{s:I,s:o,s:I,s:I,s:I}", "line", (json_int_t)no,
				"text", text_json(line, (size_t)len), "self_samples", (json_int_t)lc->self,
				"inlined_samples", (json_int_t)lc->inlined, "total_samples", (json_int_t)lc->total));
		}
	}
	for (size_t i = 0; i < shown; i++)
		if (wanted[i] > no)
			past++;
	free(line);
	return past;
}

/* The lines of one file: its hot lines, and the source in their windows. */
static json_t *file_json(const struct tool_ctx *ctx, const struct pl_profile *p,
			 struct counts *c, uint32_t fi, size_t hot_limit, uint32_t before,
			 uint32_t after)
{
	const struct src_file *sf = &c->files[fi];
	struct line_count **hot = NULL;
	size_t nhot = 0, shown;
	struct found fd = {.tried = json_array()};
	json_t *jhot = json_array(), *lines = json_array();
	uint32_t *wanted;
	size_t omitted = 0;

	for (size_t i = 0; i < c->cap; i++)
		if (c->slots[i].line && c->slots[i].file == fi) {
			hot = pl_xrealloc(hot, (nhot + 1) * sizeof(*hot));
			hot[nhot++] = &c->slots[i];
		}
	qsort(hot, nhot, sizeof(*hot), cmp_hot);
	shown = nhot < hot_limit ? nhot : hot_limit;
	omitted = nhot - shown;
	wanted = pl_xcalloc(shown ? shown : 1, sizeof(*wanted));
	for (size_t i = 0; i < shown; i++) {
		json_array_append_new(jhot, json_pack("{s:I,s:I,s:I,s:I}", "line", (json_int_t)hot[i]->line,
			"self_samples", (json_int_t)hot[i]->self, "inlined_samples", (json_int_t)hot[i]->inlined,
			"total_samples", (json_int_t)hot[i]->total));
		wanted[i] = hot[i]->line;
	}
	qsort(wanted, shown, sizeof(*wanted), cmp_u32);
	if (locate(ctx, p, sf, &fd)) {
		FILE *in = fopen(fd.path, "r");
		if (in) {
			omitted += read_windows(in, c, fi, wanted, shown, before, after, lines);
			fclose(in);
		} else {
			fd.reason = "found but could not be opened";
		}
	} else {
		fd.reason = "not found under the allowed roots: pass --path-map FROM=TO to the server, or add the source folder with --allowed-root";
	}
	free(hot);
	free(wanted);
	return json_pack("{s:s,s:o,s:o,s:o,s:I,s:I,s:o,s:o,s:I}", "recorded_path", sf->recorded,
		"read_path", fd.reason ? json_null() : pl_json_bytes(fd.path), "tried", fd.tried,
		"not_read_reason", fd.reason ? json_string(fd.reason) : json_null(),
		"self_samples", (json_int_t)sf->self, "total_samples", (json_int_t)sf->total,
		"hot_lines", jhot, "lines", lines, "lines_omitted", (json_int_t)omitted);
}

/* ---------------------------------------------------------------- tool */

static int cmp_files(const void *a, const void *b, void *arg)
{
	const struct src_file *f = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (f[x].total != f[y].total)
		return f[x].total < f[y].total ? 1 : -1;
	if (f[x].self != f[y].self)
		return f[x].self < f[y].self ? 1 : -1;
	return strcmp(f[x].recorded, f[y].recorded);
}

static int cmp_offsets(const void *a, const void *b, void *arg)
{
	const struct counts *c = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t ox, oy;

	if (c->offset_samples[x] != c->offset_samples[y])
		return c->offset_samples[x] < c->offset_samples[y] ? 1 : -1;
	memcpy(&ox, pl_strtab_get(&c->offsets, x), sizeof(ox));
	memcpy(&oy, pl_strtab_get(&c->offsets, y), sizeof(oy));
	return ox < oy ? -1 : ox > oy;
}

/* The hotspot's hottest sampled module offsets, and the symbolize call
 * that names them instruction by instruction (null without any). */
static json_t *hot_offsets(const struct pl_profile *p, struct counts *c, uint32_t func,
			   json_t *steps)
{
	size_t n = c->offsets.count, shown = n < MAX_HOT_OFFSETS ? n : MAX_HOT_OFFSETS;
	uint32_t *order = pl_xcalloc(n + 1, sizeof(*order));
	json_t *list = json_array(), *hexes = json_array();
	const char *dso = pl_str(p, p->funcs[func].dso);
	char hex[24];

	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), cmp_offsets, c);
	for (size_t i = 0; i < shown; i++) {
		uint64_t off;
		memcpy(&off, pl_strtab_get(&c->offsets, order[i]), sizeof(off));
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)off);
		json_array_append_new(list, json_pack("{s:s,s:I}", "offset", hex, "self_samples",
						      (json_int_t)c->offset_samples[order[i]]));
		json_array_append_new(hexes, json_string(hex));
	}
	free(order);
	if (!shown || !dso) {
		json_decref(list);
		json_decref(hexes);
		return json_null();
	}
	json_array_append_new(steps, tool_next_step("symbolize",
		json_pack("{s:s,s:O}", "binary", dso, "offsets", hexes),
		"each hot instruction's function, line and inline chain"));
	json_decref(hexes);
	return json_pack("{s:s,s:o,s:I}", "module", dso, "offsets", list,
			 "offsets_omitted", (json_int_t)(n - shown));
}

static void counts_release(struct counts *c)
{
	for (size_t i = 0; i < c->nfiles; i++)
		free((char *)c->files[i].recorded);
	free(c->files);
	free(c->slots);
	free(c->src_file);
	free(c->src_line);
	pl_strtab_release(&c->offsets);
	free(c->offset_samples);
}

/* Callers and callees of the function (when one was asked for), then the
 * candidate causes: tool calls with this analysis' values. */
static json_t *source_next_steps(const char *id, const char *event, const char *hid)
{
	json_t *out = json_array();

	if (hid)
		json_array_append_new(out, tool_next_step("get_hotspot",
			json_pack("{s:s,s:s,s:s}", "analysis_id", id, "hotspot_id", hid, "event", event),
			"who calls this function and what it calls"));
	json_array_append_new(out, tool_next_step("classify_hotspots", json_pack("{s:s}", "analysis_id", id),
		"candidate causes with their missing evidence"));
	return out;
}

/* Without any source text the hot lines (file:line with samples) still
 * stand: how to let the server read the text, naming the paths tried. */
static json_t *text_fix(bool missing, json_t *tried)
{
	char *list;
	json_t *out;

	if (!missing)
		return json_null();
	list = json_dumps(tried, JSON_COMPACT);
	out = json_sprintf("the source text was not found (tried %s): restart the server with "
			   "--path-map FROM=TO (FROM the recorded build directory, TO where the source "
			   "is here) or --allowed-root SOURCE_DIR, then call source_context again", list);
	free(list);
	return out;
}

/* The hotspot has no source lines in this analysis: what gives them. */
static json_t *no_lines_fix(const char *hid, size_t without_lines)
{
	return json_sprintf("the analysis has no source lines for hotspot '%s' (%zu samples without "
			    "lines): analyze perf script text recorded with -F +srcline, or the perf.data "
			    "or device session with analyze_profile(srcline=true) (a device's binaries: "
			    "the server's --binary, --sysroot or debuginfod), then call source_context again; "
			    "hot_offsets, where present, still name the hot instructions (symbolize)",
			    hid, without_lines);
}

/* The files with samples, most first, up to MAX_FILES (only `want`, when
 * asked), each with its hot lines, into `files`; what was tried to read
 * their text into `tried`.  *nread counts those whose text was read; the
 * files shown are returned. */
static size_t files_shown(const struct tool_ctx *ctx, const struct pl_profile *p, struct counts *c, json_t *args,
			  json_t *files, json_t *tried, size_t *nread)
{
	const char *want = json_string_value(json_object_get(args, "file"));
	size_t hot = (size_t)json_integer_value(json_object_get(args, "hot_lines"));
	uint32_t before = (uint32_t)json_integer_value(json_object_get(args, "before"));
	uint32_t after = (uint32_t)json_integer_value(json_object_get(args, "after"));
	uint32_t *order;
	size_t nshown = 0;

	for (size_t i = 0; i < c->cap; i++)
		if (c->slots[i].line)
			c->files[c->slots[i].file].self += c->slots[i].self;
	order = pl_xcalloc(c->nfiles + 1, sizeof(*order));
	for (size_t i = 0; i < c->nfiles; i++)
		order[nshown++] = (uint32_t)i;
	qsort_r(order, nshown, sizeof(*order), cmp_files, c->files);
	nshown = 0;
	for (size_t i = 0; i < c->nfiles && nshown < MAX_FILES; i++) {
		const struct src_file *sf = &c->files[order[i]];
		json_t *fj;
		if (!sf->total && !sf->self)
			continue;
		if (want && !same_file(sf->recorded, want))
			continue;
		fj = file_json(ctx, p, c, order[i], hot, before, after);
		*nread += json_is_string(json_object_get(fj, "read_path"));
		json_array_extend(tried, json_object_get(fj, "tried"));
		json_array_append_new(files, fj);
		nshown++;
	}
	free(order);
	return nshown;
}

static enum pl_err build_result(const struct tool_ctx *ctx, const struct pl_profile *p,
				struct counts *c, json_t *args, uint32_t event, json_t **result,
				struct pl_error *err)
{
	const char *id = json_string_value(json_object_get(args, "analysis_id"));
	const char *hid = json_string_value(json_object_get(args, "hotspot_id"));
	const char *want = json_string_value(json_object_get(args, "file"));
	uint32_t func = 0;
	json_t *files = json_array(), *tried = json_array(), *steps, *offsets;
	size_t nread = 0, nshown = files_shown(ctx, p, c, args, files, tried, &nread);

	if (nshown == 0 && want) {
		json_decref(files);
		json_decref(tried);
		return pl_fail(err, PL_ERR_UNSUPPORTED,
			       "analyze text with srclines (perf script -F +srcline) or a perf.data with analyze_profile(srcline=true), or pass a hotspot_id",
			       "the analysis has no source lines for file '%s'", want);
	}
	if (hid)
		tool_parse_hotspot_id(p, hid, &func, err);
	steps = source_next_steps(id, pl_str(p, p->events[event].name), hid);
	offsets = hid ? hot_offsets(p, c, func, steps) : json_null();
	if (nshown == 0) {
		/* A hotspot without lines is still an answer (classify names this
		 * call for program code whatever the input held): its sampled
		 * offsets, where the input kept them, and how to get lines. */
		json_decref(tried);
		tried = NULL;
	}
	*result = json_pack("{s:s,s:s,s:o,s:o,s:I,s:I,s:o,s:I,s:b,s:o,s:o,s:o}", "analysis_id", id, "event",
		pl_str(p, p->events[event].name), "hotspot_id", hid ? json_string(hid) : json_null(),
		"symbol", hid ? json_string(pl_str(p, p->funcs[func].symbol)) : json_null(),
		"samples_with_lines", (json_int_t)c->with_lines,
		"samples_without_lines", (json_int_t)c->without_lines, "files", files,
		"files_omitted", (json_int_t)(c->nfiles > nshown ? c->nfiles - nshown : 0),
		"source_text_missing", nread == 0,
		"source_text_fix", tried ? text_fix(nread == 0, tried) : no_lines_fix(hid, c->without_lines),
		"hot_offsets", offsets, "next_steps", steps);
	json_decref(tried);
	return PL_OK;
}

enum pl_err tool_source_context(const struct tool_ctx *ctx, json_t *args, json_t **result,
				struct pl_error *err)
{
	const char *id = json_string_value(json_object_get(args, "analysis_id"));
	const char *hid = json_string_value(json_object_get(args, "hotspot_id"));
	const char *want = json_string_value(json_object_get(args, "file"));
	struct counts c = {0};
	struct pl_profile p;
	struct tool_view view;
	uint32_t event = 0, func = 0;
	enum pl_err rc;

	if (!hid == !want)
		return pl_fail(err, PL_ERR_USAGE, "pass hotspot_id (from list_hotspots) or file",
			       "source_context takes exactly one of hotspot_id and file");
	pl_profile_init(&p, &ctx->limits);
	if ((rc = tool_view_init(&view, args, false, err)) ||
	    (tool_view_prepare(&view, &p), (rc = pl_artifact_load_profile(ctx->artifact_root, id, &p, err))) ||
	    (rc = tool_pick_event(&p, json_string_value(json_object_get(args, "event")), false,
				  &event, err)) ||
	    (hid && (rc = tool_parse_hotspot_id(&p, hid, &func, err))) ||
	    (rc = tool_view_apply(&view, &p, event, err)))
		goto out;
	pl_strtab_init(&c.offsets);
	c.src_file = pl_xmalloc((p.strs.count + 1) * sizeof(*c.src_file));
	c.src_line = pl_xcalloc(p.strs.count + 1, sizeof(*c.src_line));
	for (size_t i = 0; i <= p.strs.count; i++)
		c.src_file[i] = -2;
	for (uint32_t s = 0; s < pl_nstacks(&p); s++) {
		const struct pl_weight *w = pl_stack_weight(&p, s, event);
		if (w && p.stacks[s].depth)
			count_stack(&c, &p, s, w->samples, func, want);
	}
	if (!(rc = build_result(ctx, &p, &c, args, event, result, err))) {
		tool_view_describe(&view, *result);
		tool_view_steps(&view, json_object_get(*result, "next_steps"), id);
	}
out:
	tool_view_release(&view);
	counts_release(&c);
	pl_profile_release(&p);
	return rc;
}
