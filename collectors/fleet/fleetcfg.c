/* fleetcfg.c - the fleet store's flags (see fleetcfg.h).
 *
 * The credentials and names are kept in static buffers: one fleet store
 * per process, fixed before any worker is forked (workers inherit it).
 */
#include "fleetcfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char user_buf[256], password_buf[256], server_buf[256];
static const char *credentials_path;

static enum pl_err set_url(void *target, const struct pl_option *o, const char *v, struct pl_error *err)
{
	char endpoint[512], db[128];
	enum pl_err e = fleet_parse_url(v, endpoint, sizeof(endpoint), db, sizeof(db), err);

	(void)o;
	if (!e)
		((struct fleet_cfg *)target)->url = v;
	return e;
}

static enum pl_err set_cluster(void *target, const struct pl_option *o, const char *v,
			       struct pl_error *err)
{
	for (const char *c = v; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '_'))
			return pl_fail(err, PL_ERR_USAGE, "name the cluster as remote_servers does",
				       "--%s takes letters, digits and '_'; got '%.100s'", o->name, v);
	((struct fleet_cfg *)target)->cluster = *v ? v : NULL;
	return PL_OK;
}

static enum pl_err set_credentials(void *target, const struct pl_option *o, const char *v,
				   struct pl_error *err)
{
	(void)target;
	(void)o;
	(void)err;
	credentials_path = v;
	return PL_OK;
}

static enum pl_err set_label(void *target, const struct pl_option *o, const char *v, struct pl_error *err)
{
	struct fleet_cfg *cfg = target;

	if (!fleet_label_ok(v))
		return pl_fail(err, PL_ERR_USAGE, "e.g. --fleet-label rack=B",
			       "--%s takes KEY=VALUE (KEY of letters, digits, '_.-'); got '%.100s'", o->name, v);
	if (cfg->nlabels >= FLEET_MAX_LABELS)
		return pl_fail(err, PL_ERR_USAGE, NULL, "at most %d --%s", FLEET_MAX_LABELS, o->name);
	cfg->labels[cfg->nlabels++] = v;
	return PL_OK;
}

static enum pl_err set_server_name(void *target, const struct pl_option *o, const char *v,
				   struct pl_error *err)
{
	(void)o;
	(void)err;
	((struct fleet_cfg *)target)->server_name = v;
	return PL_OK;
}

static enum pl_err set_interval(void *target, const struct pl_option *o, const char *v,
				struct pl_error *err)
{
	uint64_t ms;

	if (!pl_parse_u64(v, strlen(v), &ms) || ms > 3600000)
		return pl_fail(err, PL_ERR_USAGE, "e.g. --fleet-publish-interval-ms 2000",
			       "--%s takes 0 to 3600000 ms; got '%.40s'", o->name, v);
	((struct fleet_cfg *)target)->publish_ms = (uint32_t)ms;
	((struct fleet_cfg *)target)->publish_set = true;
	return PL_OK;
}

static enum pl_err set_spool_max(void *target, const struct pl_option *o, const char *v,
				 struct pl_error *err)
{
	uint64_t mb;

	if (!pl_parse_u64(v, strlen(v), &mb) || mb > (1u << 24))
		return pl_fail(err, PL_ERR_USAGE, "e.g. --fleet-spool-max-mb 1024",
			       "--%s takes 0 (the disk's bound) to 16777216 MB; got '%.40s'", o->name, v);
	((struct fleet_cfg *)target)->max_pending_bytes = mb << 20;
	((struct fleet_cfg *)target)->spool_max_set = true;
	return PL_OK;
}

const struct pl_option fleet_options[] = {
	{"fleet-store", "URL", "write device chunks to and read fleet tools from ClickHouse at "
	 "http(s)://HOST:PORT/DATABASE", set_url},
	{"fleet-cluster", "NAME", "the store is a ClickHouse cluster: use its Distributed tables", set_cluster},
	{"fleet-credentials", "FILE", "USER:PASSWORD for the store (default: $PERFLENS_FLEET_USER, "
	 "$PERFLENS_FLEET_PASSWORD)", set_credentials},
	{"fleet-label", "KEY=VALUE", "a label on every chunk this server ingests (repeatable)", set_label},
	{"fleet-publish-interval-ms", "MS", "publish device chunks this often (default 2000; 0: only "
	 "when fleet_publish is called)", set_interval},
	{"fleet-spool-max-mb", "MB", "chunks waiting for the store past this stop new ones, said as gaps "
	 "(default 1024; 0: the disk's bound)", set_spool_max},
	{"fleet-server-name", "NAME", "this ingest server's name in the store (default: the hostname)",
	 set_server_name},
	{NULL},
};

enum pl_err fleet_cfg_finish(struct fleet_cfg *cfg, struct pl_error *err)
{
	enum pl_err e;

	if (!cfg->url)
		return PL_OK;
	if (!cfg->publish_set)
		cfg->publish_ms = 2000;
	if (!cfg->spool_max_set)
		cfg->max_pending_bytes = 1024ull << 20;
	if (credentials_path) {
		if ((e = fleet_read_credentials(credentials_path, user_buf, password_buf, err)))
			return e;
		cfg->user = user_buf;
		cfg->password = password_buf;
	} else if (getenv("PERFLENS_FLEET_USER")) {
		snprintf(user_buf, sizeof(user_buf), "%s", getenv("PERFLENS_FLEET_USER"));
		snprintf(password_buf, sizeof(password_buf), "%s",
			 getenv("PERFLENS_FLEET_PASSWORD") ? getenv("PERFLENS_FLEET_PASSWORD") : "");
		cfg->user = user_buf;
		cfg->password = password_buf;
	}
	if (!cfg->server_name) {
		if (gethostname(server_buf, sizeof(server_buf) - 1) != 0)
			snprintf(server_buf, sizeof(server_buf), "unknown");
		cfg->server_name = server_buf;
	}
	return PL_OK;
}
