/* device_common.h - what the device tools share (list_devices,
 * start_capture, ...): the gates, the files the agent link publishes and
 * the request channel to it (collectors/agentlink/channel.h), paging of a
 * JSON array.  The tools run in sandboxed workers: they never see the
 * link's memory nor open a socket; they read the link's state files under
 * the artifact root and drop control requests there.
 */
#ifndef PL_DEVICE_COMMON_H
#define PL_DEVICE_COMMON_H

#include "tools/registry.h"

/* The control gate: --allow-device-control (and an artifact root the
 * link serves).  Nothing reaches a device while it is closed. */
enum pl_err dev_require_control(const struct tool_ctx *ctx, struct pl_error *err);

/* The collection phrase (and, with `pid`, the pid-attach phrase), exactly
 * as collect_profile checks them. */
enum pl_err dev_require_phrases(json_t *args, bool pid, struct pl_error *err);

/* Send {op, device, args} to the link and wait; *answer (new) is the
 * link's answer when it says ok; an answer that is not ok becomes the
 * error (the device's or the link's words, and its hint). */
enum pl_err dev_request(const struct tool_ctx *ctx, const char *op, const char *device,
			json_t *args_new, unsigned timeout_ms, json_t **answer, struct pl_error *err);

/* Every devices/ID.json, by device id (new array; empty without a link). */
json_t *dev_list_devices(const struct tool_ctx *ctx);

/* One device's state (new) or NULL with an error naming list_devices. */
enum pl_err dev_load_device(const struct tool_ctx *ctx, const char *device, json_t **out,
			    struct pl_error *err);

/* sessions/ID/metadata.json (new) or NULL. */
json_t *dev_load_session(const struct tool_ctx *ctx, const char *session);

/* "perflens://artifacts/sessions/ID" */
void dev_session_uri(const char *session, char *out, size_t cap);

/* The analyze_profile step for a session (new), or NULL while the
 * session holds no chunk yet (analyze_profile could only refuse it). */
json_t *dev_analyze_step(const struct tool_ctx *ctx, const char *session, const char *why);
/* Append `step_new` (stolen) to `steps` unless it is NULL. */
static inline void dev_steps_add(json_t *steps, json_t *step_new)
{
	if (step_new)
		json_array_append_new(steps, step_new);
}

/* The JSON kinds of the device tools' outputSchemas. */
enum dev_kind { DEV_STRING, DEV_INT, DEV_NUMBER, DEV_BOOL, DEV_OBJECT, DEV_ARRAY, DEV_STRINGS };

/* `key` of `obj` when it is of `kind` (borrowed), else NULL: state files,
 * session metadata and whatever an agent sent may hold anything, and a
 * result that breaks its outputSchema is thrown away by the client. */
json_t *dev_typed(json_t *obj, const char *key, enum dev_kind kind);

/* The same, a new reference, JSON null where the kind does not match. */
json_t *dev_typed_or_null(json_t *obj, const char *key, enum dev_kind kind);

/* The one unit of CPU the device tools give (cpu_pct everywhere): a
 * process's or thread's CPU time per second of wall time, as top shows
 * it; the system frame's cpu.overall_pct is the machine's busy share. */
#define DEV_CPU_UNIT "cpu_pct: percent of one CPU (100 = one core busy all the time); " \
	"a system frame's cpu.overall_pct: percent of all CPUs"

/* A device as every device tool shows it (new): the fields a model needs
 * of the link's state (devices/ID.json or a control answer's device),
 * each of its schema's kind or null ($defs/device of list_devices). */
json_t *dev_brief(json_t *state);

/* The device's state as dev_brief has it (a known state or null, new). */
json_t *dev_state(json_t *state);

/* Items [page] of `all` (borrowed) into a new array, with `pg` bound. */
json_t *dev_page_slice(json_t *all, struct tool_page *pg);

#endif
