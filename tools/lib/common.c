/* common.c - helpers every tool handler shares: path checks, event
 * choice and page cursors (see registry.h).
 *
 * Paths are resolved with realpath() before the root check, so ".." and
 * symlinks are judged by where they really lead.  A path argument is in
 * the escaped form of docs/paths.md and is decoded to its bytes first;
 * messages quote it as given, and a resolved path escaped.  Cursors are
 * "OFFSET.CHECK" where CHECK hashes the query that made them: a cursor
 * replayed against another query is refused instead of paging wrongly.
 */
#include "tools/registry.h"
#include "base/escape.h"
#include "profile/demangle.h"
#include "store/artifact.h"
#include "export/flamepng.h"
#include "collectors/capabilities.h"
#include "evidence/classify.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nettle/base64.h>

static bool under_root(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (strcmp(root, "/") == 0)
		return true;
	return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* `path` as the argument gave it (the escaped form of docs/paths.md) in
 * bytes: what a result printed, passed back, names the same file. */
static enum pl_err decode_path(const char *path, char *bytes, size_t cap, struct pl_error *err)
{
	if (pl_esc_decode(path, bytes, cap))
		return PL_OK;
	return pl_fail(err, PL_ERR_PATH,
		       "pass the path as a result printed it; \\x00 cannot be part of a path",
		       "path too long or holding NUL: '%s'", path);
}

enum pl_err tool_resolve_input(const struct tool_ctx *ctx, const char *path,
			       char *resolved, size_t cap, struct pl_error *err)
{
	char bytes[PATH_MAX], real[PATH_MAX], shown[PATH_MAX];
	struct stat sb;
	enum pl_err rc;

	if (strncmp(path, "perflens://artifacts/", 21) == 0)
		return tool_resolve_collection(ctx, path, resolved, cap, err);
	if ((rc = decode_path(path, bytes, sizeof(bytes), err)))
		return rc;
	if (!realpath(bytes, real))
		return pl_fail(err, PL_ERR_INPUT, "check the path; it must exist under an allowed root",
			       "cannot resolve '%s': %s", path, strerror(errno));
	for (size_t i = 0; i < ctx->nroots; i++) {
		if (!under_root(real, ctx->allowed_roots[i]))
			continue;
		if (stat(real, &sb) < 0 || !(S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode)))
			return pl_fail(err, PL_ERR_PATH, "pass a regular file or a session folder",
				       "'%s' is not a regular file or folder", path);
		if (strlen(real) >= cap)
			return pl_fail(err, PL_ERR_PATH, "use a shorter path", "path too long: '%s'", path);
		memcpy(resolved, real, strlen(real) + 1);
		return PL_OK;
	}
	return pl_fail(err, PL_ERR_PATH,
		       ctx->nroots ? "pass a path under an allowed root (the server's --allowed-root)"
				   : "start the server with --allowed-root DIR",
		       "'%s' resolves to '%s', outside the allowed roots", path,
		       pl_esc_str(shown, sizeof(shown), real));
}

enum pl_err tool_require_writes(const struct tool_ctx *ctx, struct pl_error *err)
{
	if (!ctx->allow_writes || !ctx->artifact_root)
		return pl_fail(err, PL_ERR_OUTPUT,
			       "restart the server with --allow-writes and --artifact-root DIR",
			       "writing is not allowed in this session");
	return PL_OK;
}

/* ------------------------------------------------------------ events */

enum pl_err tool_pick_name(const char *const *names, size_t n, const char *name, bool first_ok,
			   const char *holder, size_t *index, struct pl_error *err)
{
	struct pl_buf choices = {0};
	enum pl_err rc;

	if (n == 0)
		return pl_fail(err, PL_ERR_MALFORMED, "check that the input holds samples",
			       "the %s holds no samples", holder);
	for (size_t i = 0; name && i < n; i++)
		if (names[i] && strcmp(names[i], name) == 0) {
			*index = i;
			return PL_OK;
		}
	if (!name && (n == 1 || first_ok)) {
		*index = 0;
		return PL_OK;
	}
	for (size_t i = 0; i < n; i++)
		pl_buf_addf(&choices, "%s%s", i ? ", " : "", names[i] ? names[i] : "?");
	if (name)
		rc = pl_fail(err, PL_ERR_USAGE, "pass one of the listed events",
			     "event '%s' is not in this profile; choices: %s", name, choices.data);
	else
		rc = pl_fail(err, PL_ERR_USAGE, "pass event=NAME with one of the listed events; events are never merged",
			     "this profile holds several events; choices: %s", choices.data);
	pl_buf_release(&choices);
	return rc;
}

enum pl_err tool_pick_event(const struct pl_profile *p, const char *name,
			    bool first_ok, uint32_t *event, struct pl_error *err)
{
	const char **names = pl_xmalloc((p->nevents + 1) * sizeof(*names));
	size_t i = 0;
	enum pl_err rc;

	for (size_t e = 0; e < p->nevents; e++)
		names[e] = pl_str(p, p->events[e].name);
	rc = tool_pick_name(names, p->nevents, name, first_ok, "profile", &i, err);
	free(names);
	*event = (uint32_t)i;
	return rc;
}

enum pl_err tool_pick_summary_event(json_t *summary, const char *name,
				    size_t *index, struct pl_error *err)
{
	json_t *events = json_object_get(summary, "events");
	size_t n = json_array_size(events);
	const char **names = pl_xmalloc((n + 1) * sizeof(*names));
	enum pl_err rc;

	for (size_t i = 0; i < n; i++)
		names[i] = json_string_value(json_object_get(json_array_get(events, i), "name"));
	rc = tool_pick_name(names, n, name, false, "analysis", index, err);
	free(names);
	return rc;
}

/* ------------------------------------------------------------- pages */

static unsigned query_check(const char *query)
{
	return (unsigned)(pl_hash(query, strlen(query), 7) & 0xffffffu);
}

void tool_cursor_make(char *out, size_t cap, size_t offset, const char *query)
{
	snprintf(out, cap, "%zu.%06x", offset, query_check(query));
}

enum pl_err tool_cursor_parse(const char *cursor, const char *query,
			      size_t *offset, struct pl_error *err)
{
	const char *dot = strchr(cursor, '.');
	uint64_t off;
	char *end;
	unsigned long check;

	if (!dot || !pl_parse_u64(cursor, (size_t)(dot - cursor), &off))
		goto bad;
	check = strtoul(dot + 1, &end, 16);
	if (*end || end - dot != 7 || check != query_check(query))
		goto bad;
	*offset = (size_t)off;
	return PL_OK;
bad:
	return pl_fail(err, PL_ERR_USAGE,
		       "pass next_cursor exactly as the previous page returned it, with the same other arguments; omit it to start over",
		       "invalid cursor '%s'", cursor);
}

enum pl_err tool_page_open(struct tool_page *pg, const char *query, const char *cursor,
			  size_t offset, size_t limit, struct pl_error *err)
{
	memset(pg, 0, sizeof(*pg));
	pg->query = query;
	pg->cursor_key = "cursor";
	pg->limit = limit;
	pg->start = pg->end = offset;
	return cursor ? tool_cursor_parse(cursor, query, &pg->start, err) : PL_OK;
}

void tool_page_bound(struct tool_page *pg, size_t total)
{
	pg->total = total;
	if (pg->start > total)
		pg->start = total;
	pg->end = total - pg->start > pg->limit ? pg->start + pg->limit : total;
	tool_cursor_make(pg->next, sizeof(pg->next), pg->end, pg->query);
}

void tool_page_stop(struct tool_page *pg, size_t end)
{
	assert(pg->start <= end && end <= pg->end);
	pg->end = end;
	tool_cursor_make(pg->next, sizeof(pg->next), pg->end, pg->query);
}

json_t *tool_page_json(const struct tool_page *pg, json_t *next_call_new)
{
	bool more = pg->end < pg->total;
	json_t *page;

	assert(pg->start <= pg->end && pg->end <= pg->total);
	page = json_pack("{s:I,s:I,s:I,s:o,s:o}", "offset", (json_int_t)pg->start,
			 "returned", (json_int_t)(pg->end - pg->start), "total_items", (json_int_t)pg->total,
			 "next_cursor", more ? json_string(pg->next) : json_null(),
			 "next_call", more && next_call_new ? json_incref(next_call_new) : json_null());
	json_decref(next_call_new);
	return page;
}

/* A real as the shortest text that reads back as the same double. */
static char *real_text(double d)
{
	char buf[40];
	double back;

	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		back = strtod(buf, NULL);
		if (back == d)
			break;
	}
	if (!strpbrk(buf, ".eEn"))
		strcat(buf, ".0");
	return pl_xstrdup(buf);
}

json_t *tool_call_text(const char *tool, json_t *args)
{
	struct pl_buf b = {0};
	const char *key;
	json_t *v, *out;
	bool first = true;

	pl_buf_addf(&b, "%s(", tool);
	json_object_foreach(args, key, v) {
		char *text = json_is_real(v) && isfinite(json_real_value(v)) ? real_text(json_real_value(v)) :
			json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(17));
		pl_buf_addf(&b, "%s%s=%s", first ? "" : ", ", key, text ? text : "null");
		free(text);
		first = false;
	}
	pl_buf_adds(&b, ")");
	out = json_stringn(b.data, b.len);
	pl_buf_release(&b);
	return out;
}

json_t *tool_page_call(const struct tool_page *pg, const char *tool, json_t *args, json_t *set_new)
{
	json_t *call, *v, *text;
	const char *key;

	if (pg->end >= pg->total) {
		json_decref(set_new);
		return NULL;
	}
	call = json_copy(args);
	json_object_del(call, "offset");
	json_object_del(call, pg->cursor_key);
	json_object_foreach(set_new, key, v) {
		if (json_is_null(v))
			json_object_del(call, key);
		else
			json_object_set(call, key, v);
	}
	json_object_set_new(call, pg->cursor_key, json_string(pg->next));
	text = tool_call_text(tool, call);
	json_decref(call);
	json_decref(set_new);
	return text;
}

json_t *tool_page_step(const struct tool_page *pg, const char *tool, json_t *args, const char *event,
		       const char *why)
{
	json_t *next;

	if (pg->end >= pg->total)
		return NULL;
	next = json_copy(args);
	json_object_del(next, "offset");
	json_object_set_new(next, "event", json_string(event));
	json_object_set_new(next, pg->cursor_key, json_string(pg->next));
	return tool_next_step(tool, next, why);
}

enum pl_err tool_parse_hotspot_id(const struct pl_profile *p, const char *id, uint32_t *func,
				  struct pl_error *err)
{
	uint64_t f;

	if (strncmp(id, "fn", 2) != 0 || !pl_parse_u64(id + 2, strlen(id + 2), &f) ||
	    f >= pl_nfuncs(p))
		return pl_fail(err, PL_ERR_USAGE, "pass a hotspot_id exactly as list_hotspots returned it",
			       "no hotspot '%s' in this analysis", id);
	*func = (uint32_t)f;
	return PL_OK;
}

enum pl_err tool_find_symbol(const struct pl_profile *p, const char *symbol,
			    uint32_t *func, struct pl_error *err)
{
	uint32_t sid = pl_strtab_find(&p->strs, symbol, strlen(symbol));
	char **shorts;

	*func = PL_NOID;
	for (uint32_t f = 0; sid != PL_NOID && f < pl_nfuncs(p); f++)
		if (p->funcs[f].symbol == sid) {
			*func = f;
			return PL_OK;
		}
	/* a demangled function by its linkage_name or its short_name */
	for (uint32_t f = 0; sid != PL_NOID && f < pl_nfuncs(p); f++)
		if (p->funcs[f].linkage == sid) {
			*func = f;
			return PL_OK;
		}
	shorts = pl_profile_short_names(p);
	for (uint32_t f = 0; f < pl_nfuncs(p) && *func == PL_NOID; f++)
		if (shorts[f] && strcmp(shorts[f], symbol) == 0)
			*func = f;
	pl_short_names_free(shorts, pl_nfuncs(p));
	if (*func != PL_NOID)
		return PL_OK;
	return pl_fail(err, PL_ERR_USAGE, "pass a symbol exactly as list_hotspots shows it (symbol, short_name or linkage_name)",
		       "no function named '%s' in this analysis", symbol);
}

enum pl_err tool_resolve_collection(const struct tool_ctx *ctx, const char *uri, char *resolved,
				    size_t cap, struct pl_error *err)
{
	char rel[1024], joined[PATH_MAX + 1100], real[PATH_MAX];
	struct stat sb;

	if (ctx->artifact_root && pl_artifact_rel_path(uri, rel, sizeof(rel)) &&
	    strncmp(rel, "sessions/", 9) == 0) {
		snprintf(joined, sizeof(joined), "%s/%s", ctx->artifact_root, rel);
		/* A device session the agent link spools: a folder, or one file
		 * of it (a chunk). */
		if (!realpath(joined, real) || !under_root(real, ctx->artifact_root) || stat(real, &sb) < 0 ||
		    !(S_ISDIR(sb.st_mode) || (S_ISREG(sb.st_mode) && strchr(rel + 9, '/'))) ||
		    strlen(real) >= cap)
			return pl_fail(err, PL_ERR_INPUT, "call list_sessions for the sessions on disk",
				       "no session '%s'", rel + 9);
		memcpy(resolved, real, strlen(real) + 1);
		return PL_OK;
	}
	/* A collection's file, or a fleet selection fleet_analyze wrote. */
	if (!ctx->artifact_root || !pl_artifact_rel_path(uri, rel, sizeof(rel)) ||
	    (strncmp(rel, "collections/", 12) != 0 && strncmp(rel, "fleet/selections/", 17) != 0))
		return pl_fail(err, PL_ERR_PATH,
			       "pass perflens://artifacts/collections/ID/FILE as collect_profile's next_steps give it",
			       "'%s' names no collection file", uri);
	snprintf(joined, sizeof(joined), "%s/%s", ctx->artifact_root, rel);
	if (!realpath(joined, real) || !under_root(real, ctx->artifact_root) || stat(real, &sb) < 0 ||
	    !S_ISREG(sb.st_mode) || strlen(real) >= cap)
		return pl_fail(err, PL_ERR_INPUT, "call collect_profile again, or list what exists",
			       "no collection file '%s'", rel);
	memcpy(resolved, real, strlen(real) + 1);
	return PL_OK;
}

json_t *tool_next_step(const char *tool, json_t *arguments_new, const char *why)
{
	return json_pack("{s:s,s:o,s:s}", "tool", tool, "arguments", arguments_new, "why", why);
}

bool tool_add_picture(json_t *result, const void *png, size_t n)
{
	json_t *blocks = json_object_get(result, TOOL_BLOCKS_KEY);
	char *b64;

	if (n > TOOL_MAX_PICTURE)
		return false;
	b64 = pl_xmalloc(BASE64_ENCODE_RAW_LENGTH(n) + 1);
	base64_encode_raw(b64, n, png);
	b64[BASE64_ENCODE_RAW_LENGTH(n)] = '\0';
	if (!blocks) {
		blocks = json_array();
		json_object_set_new(result, TOOL_BLOCKS_KEY, blocks);
	}
	json_array_append_new(blocks, json_pack("{s:s,s:s,s:s}", "type", "image", "mimeType", "image/png",
						"data", b64));
	free(b64);
	return true;
}

/* ---------------------------------------------------------- follow-ups */

/* One call per process (registry.h), so plain flags suffice. */
static bool followup_asked, followup_running;

void tool_followup_request(void)
{
	followup_asked = true;
}

bool tool_followup_requested(void)
{
	return followup_asked;
}

void tool_followup_set_running(bool running)
{
	followup_running = running;
	followup_asked = false;
}

bool tool_followup_running(void)
{
	return followup_running;
}

bool tool_call_draws(const struct tool_def *t, json_t *args)
{
	const char *format = json_string_value(json_object_get(args, "format"));

	if (strcmp(t->name, "export_profile") == 0)
		return format && strcmp(format, "png") == 0;
	if (strcmp(t->name, "get_hotspot") == 0 || strcmp(t->name, "get_timeline") == 0)
		return json_is_true(json_object_get(args, "picture"));
	return false;
}

void tool_load_picture_library(void)
{
	/* A server without libcairo still serves; its pictures say why not. */
	(void)pl_flamepng_preload();
}

void tool_preload_for_workers(void)
{
	/* Workers cannot read /proc: the boot id the step check compares the
	 * capability cache with is taken now (collectors/capabilities.h). */
	(void)coll_boot_id();
	/* list_hotspots asks "off_cpu" on every call: compiled here once
	 * (about 17 kB), not in each worker. */
	(void)pl_rules_builtin_event_in_set("off_cpu", "");
}
