/* fleetcfg.h - the fleet store's command-line flags, shared by
 * perflens-mcp and perflens (base/options.h's groups).
 *
 *   --fleet-store URL          http(s)://HOST:PORT/DATABASE (ClickHouse HTTP)
 *   --fleet-cluster NAME       read and write through Distributed tables
 *   --fleet-credentials FILE   USER:PASSWORD (else $PERFLENS_FLEET_USER and
 *                              $PERFLENS_FLEET_PASSWORD; never argv)
 *   --fleet-label KEY=VALUE    a label on every chunk this server ingests
 *   --fleet-publish-interval-ms MS  how often perflens-mcp publishes
 *                              (default 2000; 0: only when asked)
 *   --fleet-spool-max-mb MB   chunks waiting for the store past this stop
 *                              new ones, said as gaps (default 1024)
 *   --fleet-server-name NAME   this ingest server's name (default: hostname)
 */
#ifndef PL_FLEET_FLEETCFG_H
#define PL_FLEET_FLEETCFG_H

#include "base/options.h"
#include "store.h"

extern const struct pl_option fleet_options[];

/* After parsing: the credentials (file or environment), the server
 * name; PL_ERR_USAGE for a malformed URL or credentials file. */
enum pl_err fleet_cfg_finish(struct fleet_cfg *cfg, struct pl_error *err);

#endif
