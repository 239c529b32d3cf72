/* store.h - the fleet store: a ClickHouse server (or cluster) spoken to
 * over its HTTP interface with libcurl.
 *
 * The store is named by one URL, http(s)://HOST:PORT/DATABASE; the user
 * and password come from a file (USER:PASSWORD on its first line) or the
 * environment (PERFLENS_FLEET_USER, PERFLENS_FLEET_PASSWORD), never from
 * argv, and travel as HTTP basic authentication.  `cluster`, when set,
 * names a cluster of the servers' remote_servers configuration: the
 * tables are then created on each shard and read and written through
 * Distributed tables over them (docs/fleet.md).
 *
 * A statement is POSTed as the request body (an INSERT's rows follow it
 * in the same body); the answer is kept up to a cap.  ClickHouse answers
 * an error with HTTP 500 and its own text, which the error quotes.
 */
#ifndef PL_FLEET_STORE_H
#define PL_FLEET_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/util.h"

#define FLEET_MAX_LABELS 32
#define FLEET_MAX_ANSWER (64u << 20)   /* bytes of one answer kept */
/* Under the artifact root: present while the chunks waiting for the store
 * pass --fleet-spool-max-mb; it holds the sentence the link's gaps give. */
#define FLEET_FULL_FILE "fleet/FULL"

struct fleet_cfg {
	const char *url;          /* NULL: no fleet store */
	const char *cluster;      /* NULL: one server */
	const char *user;         /* NULL: ClickHouse's default user */
	const char *password;
	const char *server_name;  /* this ingest server, as rows name it */
	const char *labels[FLEET_MAX_LABELS];  /* KEY=VALUE, the operator's */
	size_t nlabels;
	uint32_t timeout_ms;      /* per statement; 0: 10 s */
	uint32_t publish_ms;      /* perflens-mcp publishes chunks this often
				   * (--fleet-publish-interval-ms; 0: never) */
	bool publish_set;         /* the flag was given */
	uint64_t max_pending_bytes; /* --fleet-spool-max-mb: chunks not yet in the
				     * store past this stop new ones (0: the disk's bound) */
	bool spool_max_set;
};

/* Split the URL into the endpoint (scheme, host, port) and the database:
 * PL_ERR_USAGE naming the form when it is not http(s)://HOST[:PORT]/DB
 * with DB of [A-Za-z0-9_]. */
enum pl_err fleet_parse_url(const char *url, char *endpoint, size_t ecap, char *db, size_t dbcap,
			    struct pl_error *err);

/* Read USER:PASSWORD from `path` (the first line; at most 255 bytes each)
 * into user/password (caller-owned, 256 bytes each). */
enum pl_err fleet_read_credentials(const char *path, char *user, char *password,
				   struct pl_error *err);

/* A KEY=VALUE label: KEY of [A-Za-z0-9_.-] (1..64 bytes), VALUE of
 * printable ASCII (0..128 bytes)? */
bool fleet_label_ok(const char *label);

/* Run `sql` (with `rows`, rows_len bytes, after it in the body, or NULL)
 * against the store; the answer's body goes to `answer` (may be NULL).
 * Errors: PL_ERR_UNSUPPORTED without libcurl or a store, PL_ERR_TIMEOUT,
 * PL_ERR_LIMIT (answer over FLEET_MAX_ANSWER), PL_ERR_EXTERNAL (the
 * store's refusal quoted, or the network's failure). */
enum pl_err fleet_exec(const struct fleet_cfg *cfg, const char *sql, const char *rows, size_t rows_len,
		       struct pl_buf *answer, struct pl_error *err);

/* `s` as a ClickHouse string literal ('...' with \\ and \' escaped). */
void fleet_sql_quote(struct pl_buf *b, const char *s);

/* The table to read or write for `base` ("samples"): base_local on one
 * server, base_all (Distributed) with a cluster. */
void fleet_table(const struct fleet_cfg *cfg, const char *base, char *out, size_t cap);

#endif
