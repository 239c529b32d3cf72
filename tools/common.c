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
#include "registry.h"
#include "base/escape.h"
#include "store/artifact.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static enum pl_err no_such_event(const char *name, const char *choices, bool named,
				 struct pl_error *err)
{
	if (named)
		return pl_fail(err, PL_ERR_USAGE, "pass one of the listed events",
			       "event '%s' is not in this profile; choices: %s", name, choices);
	return pl_fail(err, PL_ERR_USAGE, "pass event=NAME with one of the listed events; events are never merged",
		       "this profile holds several events; choices: %s", choices);
}

enum pl_err tool_pick_event(const struct pl_profile *p, const char *name,
			    bool first_ok, uint32_t *event, struct pl_error *err)
{
	struct pl_buf choices = {0};
	enum pl_err rc;

	if (p->nevents == 0)
		return pl_fail(err, PL_ERR_MALFORMED, "check that the input holds samples",
			       "the profile holds no samples");
	if (name) {
		*event = pl_find_event(p, name);
		if (*event != PL_NOID)
			return PL_OK;
	} else if (p->nevents == 1 || first_ok) {
		*event = 0;
		return PL_OK;
	}
	for (size_t i = 0; i < p->nevents; i++)
		pl_buf_addf(&choices, "%s%s", i ? ", " : "", pl_str(p, p->events[i].name));
	rc = no_such_event(name, choices.data, name != NULL, err);
	pl_buf_release(&choices);
	return rc;
}

enum pl_err tool_pick_summary_event(json_t *summary, const char *name,
				    size_t *index, struct pl_error *err)
{
	json_t *events = json_object_get(summary, "events"), *e;
	struct pl_buf choices = {0};
	enum pl_err rc;
	size_t i;

	if (json_array_size(events) == 0)
		return pl_fail(err, PL_ERR_MALFORMED, "check that the input holds samples",
			       "the analysis holds no samples");
	json_array_foreach(events, i, e) {
		const char *n = json_string_value(json_object_get(e, "name"));
		if (name && n && strcmp(n, name) == 0) {
			pl_buf_release(&choices);
			*index = i;
			return PL_OK;
		}
		pl_buf_addf(&choices, "%s%s", i ? ", " : "", n ? n : "?");
	}
	if (!name && json_array_size(events) == 1) {
		pl_buf_release(&choices);
		*index = 0;
		return PL_OK;
	}
	rc = no_such_event(name, choices.data, name != NULL, err);
	pl_buf_release(&choices);
	return rc;
}

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

json_t *tool_page_new(size_t offset, size_t end, size_t total, const char *next_cursor,
		      json_t *next_call_new)
{
	bool more = end < total;
	json_t *page = json_pack("{s:I,s:I,s:I,s:o,s:o}", "offset", (json_int_t)offset,
				 "returned", (json_int_t)(end - offset), "total_items", (json_int_t)total,
				 "next_cursor", more ? json_string(next_cursor) : json_null(),
				 "next_call", more && next_call_new ? json_incref(next_call_new) : json_null());

	json_decref(next_call_new);
	return page;
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

enum pl_err tool_resolve_collection(const struct tool_ctx *ctx, const char *uri, char *resolved,
				    size_t cap, struct pl_error *err)
{
	char rel[1024], joined[PATH_MAX + 1100], real[PATH_MAX];
	struct stat sb;

	if (!ctx->artifact_root || !pl_artifact_rel_path(uri, rel, sizeof(rel)) ||
	    strncmp(rel, "collections/", 12) != 0)
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
