/* export_profile.c - the export_profile tool: folded stacks or an SVG
 * flame graph of one event, written atomically under the artifact root as
 * exports/ID.EVENT[.OPTIONS].folded|svg.
 */
#include "registry.h"
#include "artifact.h"
#include "export.h"

#include <stdlib.h>
#include <string.h>

static bool flag(json_t *args, const char *key)
{
	return json_is_true(json_object_get(args, key));
}

/* A file-name-safe copy of an event name ("cpu_core/cycles/" has '/'). */
static void safe_name(char *out, size_t cap, const char *s)
{
	size_t i = 0;

	for (; *s && i + 1 < cap; s++)
		out[i++] = (*s == '/' || *s == ' ' || *s == ':') ? '_' : *s;
	out[i] = '\0';
}

static void options_suffix(struct pl_buf *b, const struct pl_fold_opts *o)
{
	if (o->peer_compat)
		pl_buf_adds(b, ".compat");
	if (o->tid)
		pl_buf_adds(b, ".tid");
	else if (o->pid)
		pl_buf_adds(b, ".pid");
	if (o->kernel)
		pl_buf_adds(b, ".k");
	if (o->jit)
		pl_buf_adds(b, ".j");
	if (o->addrs)
		pl_buf_adds(b, ".addrs");
}

static enum pl_err write_export(const char *path, const struct pl_folded *f,
				bool svg, const struct pl_svg_opts *so, long *bytes,
				struct pl_error *err)
{
	struct pl_atomic_file af;
	enum pl_err rc;

	if ((rc = pl_atomic_open(&af, path, err)))
		return rc;
	rc = svg ? pl_write_flamegraph(af.fp, f, so, err) : pl_write_folded(af.fp, f, err);
	if (rc) {
		pl_atomic_abort(&af);
		return rc;
	}
	fflush(af.fp);
	*bytes = ftell(af.fp);
	return pl_atomic_commit(&af, err);
}

enum pl_err tool_export_profile(const struct tool_ctx *ctx, json_t *args,
				json_t **result, struct pl_error *err)
{
	const char *id = json_string_value(json_object_get(args, "analysis_id"));
	const char *format = json_string_value(json_object_get(args, "format"));
	const char *event_name = json_string_value(json_object_get(args, "event"));
	const char *compat = json_string_value(json_object_get(args, "compat"));
	const char *title = json_string_value(json_object_get(args, "title"));
	bool svg = strcmp(format, "svg") == 0;
	struct pl_fold_opts fo = {0};
	struct pl_svg_opts so = {0};
	struct pl_folded folded = {0};
	struct pl_profile p;
	struct pl_buf path = {0}, subtitle = {0};
	char ev_safe[128];
	uint64_t total = 0;
	long bytes = 0;
	enum pl_err rc;

	if ((rc = tool_require_writes(ctx, err)))
		return rc;
	pl_profile_init(&p, &ctx->limits);
	fo.peer_compat = strcmp(compat, "stackcollapse") == 0;
	if ((rc = pl_artifact_load_profile(ctx->artifact_root, id, &p, err)) ||
	    (rc = tool_pick_event(&p, event_name, fo.peer_compat, &fo.event, err)))
		goto out;
	fo.pid = flag(args, "pid");
	fo.tid = flag(args, "tid");
	fo.kernel = flag(args, "kernel") || flag(args, "all");
	fo.jit = flag(args, "jit") || flag(args, "all");
	fo.addrs = flag(args, "addrs");
	if ((rc = pl_fold(&folded, &p, &fo, err)))
		goto out;
	for (size_t i = 0; i < folded.n; i++)
		total += folded.weights[i];
	safe_name(ev_safe, sizeof(ev_safe), pl_str(&p, p.events[fo.event].name));
	pl_buf_addf(&path, "%s/exports/%s.%s", ctx->artifact_root, id, ev_safe);
	options_suffix(&path, &fo);
	pl_buf_adds(&path, svg ? ".svg" : ".folded");
	pl_buf_addf(&subtitle, "event %s, %llu samples, weight in %s",
		    pl_str(&p, p.events[fo.event].name),
		    (unsigned long long)p.events[fo.event].samples, pl_event_unit(&p, fo.event));
	so.title = title ? title : "Flame Graph";
	so.subtitle = subtitle.data;
	so.unit = pl_event_unit(&p, fo.event);
	if ((rc = write_export(path.data, &folded, svg, &so, &bytes, err)))
		goto out;
	*result = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:s}", "analysis_id", id,
		"format", format, "event", pl_str(&p, p.events[fo.event].name), "path", path.data,
		"bytes", (json_int_t)bytes, "stacks", (json_int_t)folded.n,
		"total_weight", (json_int_t)total, "unit", so.unit);
out:
	pl_buf_release(&path);
	pl_buf_release(&subtitle);
	pl_folded_release(&folded);
	pl_profile_release(&p);
	return rc;
}
