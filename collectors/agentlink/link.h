/* link.h - the server's agent link: device agents (perflens-agent, or the
 * seed's 0.10+ agent) that dial in to --agent-listen or that a tool
 * connects out to, their sessions spooled under the artifact root.
 *
 * What runs where (see docs/agent-link.md):
 *   - the link runs in the perflens-mcp process, in threads of its own: a
 *     listener, one reader per connected agent, one servicer of control
 *     requests.  It only frames, checks and spools bytes (a zstd chunk is
 *     decompressed to count and validate it, never parsed); chunks are
 *     parsed where every profile is, in sandboxed workers (analyze_profile
 *     on perflens://artifacts/sessions/ID).
 *   - it publishes its state as files under the artifact root, written
 *     atomically: devices/ID.json per device, sessions/ID/ per session
 *     (channel.h names them).  Read-only tools read those files.
 *   - control tools, in their sandboxed workers, drop a request file into
 *     devices/requests/ and wait for the answer in devices/responses/
 *     (channel.h); the link's servicer takes it, checks it again against
 *     its own flags, talks to the device and answers.  So a worker never
 *     opens a socket and never touches the link's memory.
 *
 * Threads: coll_link_start() starts them (call it after the sandbox's
 * zygote was forked: see sandbox.h); coll_link_stop() ends them, closes
 * every agent link and finalizes every live session.
 */
#ifndef COLL_AGENTLINK_H
#define COLL_AGENTLINK_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

#define COLL_LINK_MAX_LEGACY 16

struct coll_link_cfg {
	const char *artifact_root;   /* resolved; sessions/ and devices/ go here */
	const char *listen_addr;     /* IPv4 to listen on; NULL: no listener */
	unsigned listen_port;
	char pairing_code[256];      /* for agents that dial in; "" = none */
	bool allow_control;          /* --allow-device-control */
	bool legacy_loopback;        /* --agent-allow-legacy loopback */
	bool text_chunks;            /* --agent-text-chunks: never negotiate perf_data */
	char legacy_addrs[COLL_LINK_MAX_LEGACY][48];
	size_t nlegacy;
	unsigned send_timeout_ms;    /* the send bound (default 30000) */
	unsigned ping_interval_ms;   /* how often an idle link is pinged (10000) */
};

/* Defaults (no listener, no control, 30 s send bound). */
void coll_link_cfg_init(struct coll_link_cfg *cfg);

/* --agent-allow-legacy's value: "loopback" and/or IPv4 addresses,
 * comma-separated. */
enum pl_err coll_link_parse_legacy(struct coll_link_cfg *cfg, const char *spec,
				   struct pl_error *err);

/* The pairing code from FILE (its first line, at most 255 bytes), or from
 * $PERFLENS_AGENT_CODE when `file` is NULL (the variable is then removed
 * from the environment, so children never inherit it). */
enum pl_err coll_link_load_code(struct coll_link_cfg *cfg, const char *file,
				struct pl_error *err);

/* Sweep the sessions of an earlier server, bind the listener (when
 * listen_addr is set) and start the threads.  `cfg` is copied. */
enum pl_err coll_link_start(const struct coll_link_cfg *cfg, struct pl_error *err);

/* The port the listener got (for --agent-listen ADDR:0); 0 when none. */
unsigned coll_link_port(void);

/* Stop everything started; live sessions are finalized.  Harmless when
 * nothing runs. */
void coll_link_stop(void);

#endif
