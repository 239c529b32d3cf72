/* fleet_pump.c - publish device chunks to the fleet store in the
 * background (see fleet_pump.h).
 *
 * One detached thread: every --fleet-publish-interval-ms it sends the job
 * {"tool": "fleet_publish", "args": {"max_chunks": 256}} to a worker,
 * waits for its answer and logs on stderr only what changed: the first
 * failure (the store down), the return to success with the chunks it
 * then sent.  A store that stays down costs one failed request per
 * interval; the chunks wait in the spool.
 */
#include "fleet_pump.h"
#include "background.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct mcp_config *pump_cfg;

/* Run fleet_publish once; its answer (new) or NULL. */
static json_t *publish_once(void)
{
	json_t *args = json_pack("{s:i}", "max_chunks", 256);
	json_t *answer = mcp_background_call(pump_cfg, "fleet_publish", args);

	json_decref(args);
	return answer;
}

static void log_change(json_t *answer, bool *was_failing)
{
	json_t *ok = json_object_get(answer, "ok");
	const char *why = json_string_value(json_object_get(json_object_get(answer, "error"), "message"));

	if (!ok && !*was_failing)
		fprintf(stderr, "perflens-mcp: fleet store: publishing failed, chunks wait in the spool: %s\n",
			why ? why : "the worker gave no answer");
	else if (ok && *was_failing)
		fprintf(stderr, "perflens-mcp: fleet store: publishing again (%lld chunk(s) sent)\n",
			(long long)json_integer_value(json_object_get(ok, "published_chunks")));
	*was_failing = !ok;
}

static void *pump_main(void *arg)
{
	bool failing = false;

	(void)arg;
	for (;;) {
		json_t *answer = publish_once();
		log_change(answer, &failing);
		json_decref(answer);
		usleep(pump_cfg->ctx.fleet.publish_ms * 1000u);
	}
	return NULL;
}

void mcp_fleet_pump_start(const struct mcp_config *cfg)
{
	const struct tool_def *t = tool_find("fleet_publish");
	pthread_attr_t attr;
	pthread_t th;

	if (!cfg->ctx.fleet.url || !cfg->ctx.fleet.publish_ms || !cfg->ctx.device_link || !cfg->ctx.allow_writes || !t || cfg->no_sandbox)
		return;
	pump_cfg = cfg;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, pump_main, (void *)t) != 0)
		fprintf(stderr, "perflens-mcp: fleet store: cannot start the publishing thread\n");
	pthread_attr_destroy(&attr);
}
