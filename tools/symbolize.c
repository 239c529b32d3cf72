/* symbolize.c - the symbolize tool: one page of answers for module offsets
 * (function, source line, inline chain), from the libdw symbolizer.
 *
 * Only the page asked for is looked up, so a 10,000-offset request costs
 * the same per page as a short one.  A page ends at `limit` answers or
 * once its answers pass PAGE_BYTES of JSON (at least one answer always),
 * and each answer is bounded too (inline entries, string lengths), so a
 * page stays well under 10k tokens.  Cursors are bound to the module,
 * the inline flag and a hash of the offsets list.
 */
#include "registry.h"
#include "profile/demangle.h"
#include "store/artifact.h"
#include "symbols/debuginfod.h"
#include "symbols/symbolize.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_BYTES 20000       /* compact JSON bytes of answers per page */
#define INLINES_SHOWN 32       /* inline entries per answer */
#define STRING_SHOWN 1024      /* bytes of a name or path per answer */

/* ------------------------------------------------------------ offsets */

static bool parse_hex(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;

	if (n < 3 || n > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return false;
	for (size_t i = 2; i < n; i++) {
		char c = s[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
			   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			   : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
		if (d == 16)
			return false;
		x = x << 4 | d;
	}
	*v = x;
	return true;
}

static enum pl_err too_many(struct pl_error *err)
{
	return pl_fail(err, PL_ERR_USAGE, "split the offsets into several calls",
		       "at most %d offsets per call", PL_SYM_MAX_BATCH);
}

static enum pl_err bad_offset(struct pl_error *err, size_t i, const char *what, int len)
{
	return pl_fail(err, PL_ERR_USAGE,
		       "give hex strings with 0x (\"0x1139\") or non-negative integers",
		       "offsets[%zu] '%.*s' is not a module offset", i, len, what);
}

/* "0x1 0x2,0x3": hex offsets separated by spaces or commas. */
static enum pl_err parse_offset_string(const char *s, uint64_t *out, size_t *n,
				       struct pl_error *err)
{
	*n = 0;
	while (*s) {
		size_t len;
		while (*s == ' ' || *s == ',' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		len = strcspn(s, " ,\t\n");
		if (*n == PL_SYM_MAX_BATCH)
			return too_many(err);
		if (!parse_hex(s, len, &out[*n]))
			return bad_offset(err, *n, s, (int)(len > 40 ? 40 : len));
		(*n)++;
		s += len;
	}
	if (*n == 0)
		return pl_fail(err, PL_ERR_USAGE, "pass at least one offset", "no offsets given");
	return PL_OK;
}

static enum pl_err parse_offsets(json_t *j, uint64_t *out, size_t *n, struct pl_error *err)
{
	json_t *v;
	size_t i;

	if (json_is_string(j))
		return parse_offset_string(json_string_value(j), out, n, err);
	if (!json_is_array(j))
		return pl_fail(err, PL_ERR_USAGE, "pass a list such as [\"0x1139\", 4432]",
			       "'offsets' must be an array or a string");
	if (json_array_size(j) > PL_SYM_MAX_BATCH)
		return too_many(err);
	if (json_array_size(j) == 0)
		return pl_fail(err, PL_ERR_USAGE, "pass at least one offset", "no offsets given");
	json_array_foreach(j, i, v) {
		if (json_is_integer(v) && json_integer_value(v) >= 0) {
			out[i] = (uint64_t)json_integer_value(v);
		} else if (json_is_string(v)) {
			const char *s = json_string_value(v);
			size_t len = json_string_length(v);
			if (!parse_hex(s, len, &out[i]))
				return bad_offset(err, i, s, (int)(len > 40 ? 40 : len));
		} else {
			return bad_offset(err, i, json_is_number(v) ? "a negative or fractional number"
								   : "not a string or integer", 31);
		}
	}
	*n = json_array_size(j);
	return PL_OK;
}

/* ------------------------------------------------------------ answers */

/* A string kept under STRING_SHOWN bytes (cut at a UTF-8 boundary). */
static json_t *bounded(const char *s, bool *cut)
{
	size_t n = strlen(s);

	if (n <= STRING_SHOWN)
		return json_string(s);
	n = STRING_SHOWN;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	*cut = true;
	return json_stringn(s, n);
}

static void set_str(json_t *o, const char *key, const char *s, bool *cut)
{
	if (s)
		json_object_set_new(o, key, bounded(s, cut));
}

/* A name under `key`, demangled (profile/demangle.h) with the linker's
 * name under `linkage_key` when it was mangled: what `nm` lists. */
static void set_name(json_t *o, const char *key, const char *linkage_key, const char *s, bool *cut)
{
	char *d;

	if (!s)
		return;
	d = pl_demangle(s, strlen(s), PL_DM_FULL);
	json_object_set_new(o, key, bounded(d ? d : s, cut));
	if (d)
		json_object_set_new(o, linkage_key, bounded(s, cut));
	free(d);
}

static json_t *inline_json(const struct pl_sym_inline *in, bool *cut)
{
	json_t *o = json_object();

	set_name(o, "function", "linkage_name", in->function, cut);
	json_object_set_new(o, "call_file", in->call_file ? bounded(in->call_file, cut) : json_null());
	json_object_set_new(o, "call_line", json_integer(in->call_line));
	json_object_set_new(o, "call_column", json_integer(in->call_column));
	return o;
}

static json_t *answer_json(const struct pl_sym_answer *a, bool with_inlines)
{
	json_t *o = json_object(), *inl;
	char hex[24];
	bool cut = a->names_truncated;
	size_t shown;

	snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)a->offset);
	json_object_set_new(o, "offset", json_string(hex));
	json_object_set_new(o, "resolved", json_boolean(a->resolved));
	if (a->function) {
		set_name(o, "function", "linkage_name", a->function, &cut);
		json_object_set_new(o, "function_offset", json_integer((json_int_t)a->function_offset));
	}
	if (a->file) {
		set_str(o, "file", a->file, &cut);
		json_object_set_new(o, "line", json_integer(a->line));
		json_object_set_new(o, "column", json_integer(a->column));
		set_str(o, "comp_dir", a->comp_dir, &cut);
	}
	if (with_inlines && (a->dwarf_subprogram || a->ninlines)) {
		set_name(o, "subprogram", "subprogram_linkage_name", a->dwarf_subprogram, &cut);
		shown = a->ninlines < INLINES_SHOWN ? a->ninlines : INLINES_SHOWN;
		inl = json_array();
		for (size_t i = 0; i < shown; i++)
			json_array_append_new(inl, inline_json(&a->inlines[i], &cut));
		json_object_set_new(o, "inlines", inl);
		if (a->ninlines > shown || a->inlines_truncated)
			json_object_set_new(o, "inlines_omitted",
					    json_integer((json_int_t)(a->ninlines - shown)));
	}
	if (cut)
		json_object_set_new(o, "truncated", json_true());
	if (!a->resolved && a->reason)
		set_str(o, "reason", a->reason, &cut);
	return o;
}

static json_t *module_json(struct pl_sym_module *m)
{
	const char *note;
	json_t *lookup = json_pack("{s:s}", "method", pl_sym_module_lookup_method(m, &note));

	if (note)
		json_object_set_new(lookup, "note", json_string(note));
	/* The module's paths are bytes: escaped (docs/paths.md). */
	return json_pack("{s:o,s:s?,s:o,s:s,s:I,s:o}", "path", pl_json_bytes(pl_sym_module_path(m)),
			 "build_id", pl_sym_module_build_id(m), "debug_file",
			 pl_json_bytes(pl_sym_module_debug_file(m)), "debug_source",
			 pl_debug_source_name(pl_sym_module_debug_source(m)), "symbols",
			 (json_int_t)pl_sym_module_symbol_count(m), "lookup", lookup);
}

/* What to call after this page: when an offset did not resolve, or
 * resolved without a source line, inspect_elf of the module says which
 * symbols and debug information it has and where a debug file could come
 * from (the fix is there, not in calling symbolize again).  A page whose
 * every answer has its line needs nothing next. */
static json_t *next_steps_json(json_t *module, json_t *answers)
{
	size_t i, unnamed = 0, lineless = 0;
	json_t *a, *steps = json_array();
	char why[256];

	json_array_foreach(answers, i, a) {
		if (!json_is_true(json_object_get(a, "resolved")))
			unnamed++;
		else if (!json_object_get(a, "file"))
			lineless++;
	}
	if (!unnamed && !lineless)
		return steps;
	snprintf(why, sizeof(why),
		 "%zu of %zu offsets on this page %s: inspect_elf says which symbols and debug "
		 "information the file has and where a debug file could come from",
		 unnamed + lineless, json_array_size(answers),
		 unnamed ? "did not resolve" : "have no source line");
	json_array_append_new(steps, tool_next_step("inspect_elf",
						    json_pack("{s:O}", "path", json_object_get(module, "path")),
						    why));
	return steps;
}

/* ---------------------------------------------------------------- tool */

struct request {
	const char *binary, *build_id, *cursor;
	bool inlines;
	size_t limit, n, start;
	uint64_t *offsets;
	char resolved[PATH_MAX];
	struct pl_buf query;
	struct tool_page pg;
};

static enum pl_err read_request(const struct tool_ctx *ctx, json_t *args, struct request *r,
				struct pl_error *err)
{
	enum pl_err rc;

	r->binary = json_string_value(json_object_get(args, "binary"));
	r->build_id = json_string_value(json_object_get(args, "build_id"));
	r->cursor = json_string_value(json_object_get(args, "cursor"));
	r->inlines = json_is_true(json_object_get(args, "inline"));
	r->limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	if (!r->binary == !r->build_id)
		return pl_fail(err, PL_ERR_USAGE, "pass binary=PATH or build_id=HEX",
			       "symbolize needs exactly one of 'binary' and 'build_id'");
	if (r->binary && (rc = tool_resolve_input(ctx, r->binary, r->resolved, sizeof(r->resolved), err)))
		return rc;
	r->offsets = pl_xmalloc(PL_SYM_MAX_BATCH * sizeof(*r->offsets));
	if ((rc = parse_offsets(json_object_get(args, "offsets"), r->offsets, &r->n, err)))
		return rc;
	pl_buf_addf(&r->query, "symbolize|%s|%s|%d|%zu|%016llx", r->binary ? r->resolved : "",
		    r->build_id ? r->build_id : "", r->inlines, r->n,
		    (unsigned long long)pl_hash(r->offsets, r->n * sizeof(*r->offsets), 11));
	if ((rc = tool_page_open(&r->pg, r->query.data, r->cursor, 0, r->limit, err)))
		return rc;
	tool_page_bound(&r->pg, r->n);
	r->start = r->pg.start;
	return PL_OK;
}

static enum pl_err answer_page(struct pl_symbolizer *s, struct pl_sym_module *m,
			       const struct request *r, json_t *answers, size_t *end,
			       size_t *nresolved, struct pl_error *err)
{
	size_t bytes = 0;
	enum pl_err rc;

	for (*end = r->start; *end < r->n && *end - r->start < r->limit; (*end)++) {
		const struct pl_sym_answer *a;
		json_t *o;
		if ((rc = pl_sym_lookup(s, m, r->offsets[*end], r->inlines, &a, err)))
			return rc;
		o = answer_json(a, r->inlines);
		bytes += json_dumpb(o, NULL, 0, JSON_COMPACT);
		if (bytes > PAGE_BYTES && *end > r->start) {
			json_decref(o);
			break;
		}
		*nresolved += a->resolved;
		json_array_append_new(answers, o);
	}
	return PL_OK;
}

/* The symbolizer, with its symbol indexes kept where the artifacts are
 * when writes are allowed (as the debuginfod cache): a module with no
 * index yet is answered by libdw at once (never slower than addr2line),
 * and its index is built by the follow-up of this call, after the
 * answer.  Without writes libdw answers (one page per call is too few
 * lookups for an in-memory index to pay). */
static struct pl_symbolizer *symbolizer_for(const struct tool_ctx *ctx, const struct pl_debuginfod *dbg,
					    char *index_dir, size_t cap)
{
	struct pl_symbolizer *s = pl_symbolizer_new(&ctx->sym, dbg);

	if (ctx->allow_writes && ctx->artifact_root &&
	    snprintf(index_dir, cap, "%s/cache/symindex", ctx->artifact_root) < (int)cap)
		pl_symbolizer_set_index(s, tool_followup_running() ? PL_SYM_INDEX_AUTO : PL_SYM_INDEX_DEFER,
					index_dir);
	return s;
}

enum pl_err tool_symbolize(const struct tool_ctx *ctx, json_t *args, json_t **result,
			   struct pl_error *err)
{
	struct pl_debuginfod dbg = {
		.urls = ctx->sym.debuginfod_urls,
		.timeout_ms = ctx->sym.debuginfod_timeout_ms,
	};
	struct request r = {0};
	struct pl_symbolizer *s = NULL;
	char index_dir[PATH_MAX];
	struct pl_sym_module *m;
	json_t *answers = NULL, *module = NULL;
	size_t end = 0, nresolved = 0;
	enum pl_err rc;

	if ((rc = read_request(ctx, args, &r, err)))
		goto out;
	s = symbolizer_for(ctx, &dbg, index_dir, sizeof(index_dir));
	rc = r.binary ? pl_symbolizer_open(s, r.resolved, &m, err)
		      : pl_symbolizer_open_build_id(s, r.build_id, &m, err);
	if (rc)
		goto out;
	if (tool_followup_running()) {
		/* The follow-up: the index only (AUTO builds it at the first
		 * use); nobody reads this result. */
		pl_sym_module_symbol_count(m);
		*result = json_object();
		goto out;
	}
	answers = json_array();
	if ((rc = answer_page(s, m, &r, answers, &end, &nresolved, err)))
		goto out;
	if (pl_symbolizer_indexes_wanted(s))
		tool_followup_request();
	tool_page_stop(&r.pg, end);
	/* Not a call: the offsets (up to PL_SYM_MAX_BATCH) would make it
	 * bigger than the answers. */
	module = module_json(m);
	*result = json_pack("{s:O,s:O,s:I,s:o,s:o}", "module", module, "answers", answers,
			    "resolved", (json_int_t)nresolved, "page",
			    tool_page_json(&r.pg, json_sprintf(
				"symbolize with the same binary/build_id, offsets and inline, and cursor=\"%s\"",
				r.pg.next)),
			    "next_steps", next_steps_json(module, answers));
	if (!*result)
		rc = pl_fail(err, PL_ERR_INTERNAL, "report this as a bug",
			     "the module's answers could not be encoded");
out:
	json_decref(answers);
	json_decref(module);
	pl_symbolizer_free(s);
	free(r.offsets);
	pl_buf_release(&r.query);
	return rc;
}
