/* channel.h - the files through which the agent link and the device tools
 * meet: where the link publishes state, and the control request channel.
 *
 * Under the artifact root:
 *   devices/ID.json           one device's state (the link writes it
 *                             atomically on every change; read-only tools
 *                             read it): {"device", "address", "state", ...}
 *   devices/requests/R.json   a control request a tool's worker dropped:
 *                             {"request_id": R, "op", "device", "args"}
 *                             (mode 0600, renamed into place whole)
 *   devices/responses/R.json  the link's answer: {"ok": true, ...} or
 *                             {"ok": false, "error", "hint", "code"?}
 *                             (code: a pl_err_name, where the failure
 *                             is the link's; none: the device refused)
 *   sessions/ID/              one session (see docs/agent-protocol.md)
 *
 * The worker writes the request, then polls for its response until its
 * deadline; the link's servicer polls the requests folder, removes each
 * request as it takes it (so a pairing code in a connect request lives on
 * disk only until then), checks it against its own flags, and answers.
 * A request that nobody takes (no link runs on this artifact root) times
 * out, and the tool says how to start one.  Request ids are
 * [A-Za-z0-9_-]{1,40}.
 */
#ifndef COLL_CHANNEL_H
#define COLL_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "base/error.h"

#define COLL_DEVICES_DIR "devices"
#define COLL_REQUESTS_DIR "devices/requests"
#define COLL_RESPONSES_DIR "devices/responses"
#define COLL_SESSIONS_DIR "sessions"
#define COLL_LINK_STATE "devices/link.json"   /* the link's own: pid, listen, control */

/* Device and session ids: [A-Za-z0-9_.-]{1,96}, no leading dot. */
bool coll_id_ok(const char *id);

/* Send `request` (borrowed: {"op", "device"?, "args"}) and wait up to
 * `timeout_ms` for the answer; on PL_OK *answer is a new reference (an
 * object whose "ok" says whether the device did it).  PL_ERR_TIMEOUT when
 * no link took the request (it is removed again). */
enum pl_err coll_channel_call(const char *artifact_root, json_t *request, unsigned timeout_ms,
			      json_t **answer, struct pl_error *err);

/* The link's side: the oldest pending request, taken (its file removed);
 * NULL when none.  *id gets its request id. */
json_t *coll_channel_take(const char *artifact_root, char *id, size_t cap);

/* The link's side: answer request `id` with `answer` (borrowed). */
void coll_channel_answer(const char *artifact_root, const char *id, json_t *answer);

/* Write `len` bytes to `path` through a '.'-prefixed temp in its folder
 * (".NAME.tmp-XXXXXX"), with `mode`, fdatasync'ed first when `sync`, then
 * renamed over `path`: a reader sees the old file or the whole new one.
 * 0 or an errno value (the temp is removed on failure: ENOSPC leaves
 * nothing behind). */
int coll_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode, bool sync);

/* Write `doc` (borrowed) to artifact_root/rel atomically (temp + rename,
 * the temp file starting with '.' so no folder reader takes it); 0 or an
 * errno value. */
int coll_write_json(const char *artifact_root, const char *rel, json_t *doc);

/* A state file that must keep up even on a full disk (a session's
 * metadata.json, devices/ID.json): coll_write_json, and when that fails
 * for space (ENOSPC, EDQUOT) the file is rewritten in place if the new
 * text fits in the blocks it holds (not atomic: only a full disk costs
 * that).  Returns 0 or the errno of the atomic write; *landed says whether
 * the new content is on disk either way. */
int coll_write_state(const char *artifact_root, const char *rel, json_t *doc, bool *landed);

/* Read artifact_root/rel as JSON (new reference) or NULL; files over
 * `max_bytes` are refused. */
json_t *coll_read_json(const char *artifact_root, const char *rel, size_t max_bytes);

#endif
