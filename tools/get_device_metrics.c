/* get_device_metrics.c - the get_device_metrics tool: one type of health
 * metrics frames of a session (or of a device's current session), oldest
 * first, after `since`, paged.  Frames come from the session's
 * metrics.jsonl (one frame per line as the link received it; a torn last
 * line of a live session is skipped) or, for a seed session, its
 * metrics.json.  CPU comes in one unit (DEV_CPU_UNIT): a threads frame's
 * cumulative ticks become each thread's cpu_pct since the frame before. */
#include "registry.h"
#include "tools/lib/device_common.h"
#include "collectors/agentlink/channel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define METRICS_FILE_MAX (256u << 20)

static json_t *read_frames_raw(const char *dir, const char *type, double since);

/* A threads frame's cumulative ticks become rates: each thread's cpu_pct
 * (DEV_CPU_UNIT) over the time since the frame before, `prev` (NULL for
 * the first frame: no rate, null). */
static void thread_rates(json_t *frame, json_t *prev)
{
	double dt = json_number_value(json_object_get(frame, "ts")) - json_number_value(json_object_get(prev, "ts"));
	double hz = (double)json_integer_value(json_object_get(frame, "clk_tck"));
	json_t *t, *p;
	size_t i, j;

	json_array_foreach(json_object_get(frame, "threads"), i, t) {
		json_t *rate = json_null();
		if (!json_is_object(t))
			continue;
		json_array_foreach(json_object_get(prev, "threads"), j, p)
			if (json_is_integer(json_object_get(t, "tid")) &&
			    json_equal(json_object_get(p, "tid"), json_object_get(t, "tid")) &&
			    json_is_integer(json_object_get(p, "ticks")) && json_is_integer(json_object_get(t, "ticks")) &&
			    dt > 0 && hz > 0) {
				json_int_t d = json_integer_value(json_object_get(t, "ticks")) -
					       json_integer_value(json_object_get(p, "ticks"));
				if (d >= 0) {
					json_decref(rate);
					rate = json_real(round(1000.0 * (double)d / hz / dt) / 10);
				}
				break;
			}
		json_object_set_new(t, "cpu_pct", rate);
	}
}

/* Frames of `type` after `since` from the session folder (new array);
 * threads frames with their rates. */
static json_t *read_frames(const char *dir, const char *type, double since)
{
	json_t *out = read_frames_raw(dir, type, strcmp(type, "threads") == 0 ? 0 : since), *kept, *f, *prev = NULL;
	size_t i;

	if (strcmp(type, "threads") != 0)
		return out;
	kept = json_array();
	json_array_foreach(out, i, f) {
		thread_rates(f, prev);
		prev = f;
		if (json_number_value(json_object_get(f, "ts")) > since)
			json_array_append(kept, f);
	}
	json_decref(out);
	return kept;
}

/* Frames of `type` after `since` from the session folder (new array). */
static json_t *read_frames_raw(const char *dir, const char *type, double since)
{
	char path[4500];
	json_t *out = json_array();
	char *line = NULL;
	size_t cap = 0;
	struct stat sb;
	FILE *f;

	snprintf(path, sizeof(path), "%s/metrics.jsonl", dir);
	if (stat(path, &sb) == 0 && (size_t)sb.st_size <= METRICS_FILE_MAX && (f = fopen(path, "re"))) {
		while (getline(&line, &cap, f) > 0) {
			json_t *fr = json_loads(line, 0, NULL);
			const char *t = json_string_value(json_object_get(fr, "type"));
			if (t && strcmp(t, type) == 0 && json_is_number(json_object_get(fr, "ts")) &&
			    json_number_value(json_object_get(fr, "ts")) > since)
				json_array_append(out, fr);
			json_decref(fr);
		}
		fclose(f);
		free(line);
		return out;
	}
	snprintf(path, sizeof(path), "%s/metrics.json", dir);
	if (stat(path, &sb) == 0 && (size_t)sb.st_size <= METRICS_FILE_MAX) {
		json_t *all = json_load_file(path, 0, NULL), *fr;
		size_t i;
		json_array_foreach(json_object_get(all, type), i, fr)
			if (json_is_number(json_object_get(fr, "ts")) && json_number_value(json_object_get(fr, "ts")) > since)
				json_array_append(out, fr);
		json_decref(all);
	}
	return out;
}

enum pl_err tool_get_device_metrics(const struct tool_ctx *ctx, json_t *args, json_t **result,
				    struct pl_error *err)
{
	const char *device = json_string_value(json_object_get(args, "device"));
	const char *session = json_string_value(json_object_get(args, "session"));
	const char *type = json_string_value(json_object_get(args, "type"));
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	double since = json_number_value(json_object_get(args, "since"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	json_t *dev = NULL, *meta, *frames, *page;
	struct pl_buf query = {0};
	struct tool_page pg;
	char dir[4400], sid[160];
	enum pl_err rc;

	if (!device == !session)
		return pl_fail(err, PL_ERR_USAGE, "pass device (from list_devices) or session (from list_sessions)",
			       "get_device_metrics needs exactly one of device and session");
	if (device) {
		if ((rc = dev_load_device(ctx, device, &dev, err)))
			return rc;
		session = json_string_value(json_object_get(dev, "session"));
		if (!session) {
			json_decref(dev);
			return pl_fail(err, PL_ERR_INPUT, "wait for the device's first metrics frame, or pass a session from list_sessions",
				       "device '%s' has no session yet", device);
		}
	}
	snprintf(sid, sizeof(sid), "%s", session);
	json_decref(dev);
	if (!(meta = dev_load_session(ctx, sid)))
		return pl_fail(err, PL_ERR_INPUT, "call list_sessions for the sessions on disk", "no session '%s'", sid);
	pl_buf_addf(&query, "metrics|%s|%s|%.17g", sid, type, since);
	if ((rc = tool_page_open(&pg, query.data, cursor, 0, limit, err))) {
		json_decref(meta);
		pl_buf_release(&query);
		return rc;
	}
	snprintf(dir, sizeof(dir), "%s/%s/%s", ctx->artifact_root, COLL_SESSIONS_DIR, sid);
	frames = read_frames(dir, type, since);
	page = dev_page_slice(frames, &pg);
	*result = json_pack("{s:s,s:s,s:b,s:o,s:s,s:o}", "session", sid, "type", type,
			    "live", json_is_true(json_object_get(meta, "live")), "frames", page,
			    "cpu_unit", DEV_CPU_UNIT,
			    "page", tool_page_json(&pg, tool_page_call(&pg, "get_device_metrics", args, NULL)));
	json_decref(frames);
	json_decref(meta);
	pl_buf_release(&query);
	return PL_OK;
}
