/* live_pump.c - analyze live device sessions as their chunks land (see
 * live_pump.h).
 *
 * One detached thread: every interval it asks list_sessions for the
 * newest sessions, and runs analyze_profile on each one that is live, or
 * was live when last seen, and holds more chunks than when it was last
 * analyzed: a tenth more while live (worth_analyzing), any more after its
 * stop (so a session's final chunks are analyzed once).  What it saw is
 * a small table of session ids and chunk counts, the oldest entry
 * replaced when full: bounded, whatever the spool holds.
 * Only JSON fields of the tools' answers are read here; the protocol
 * layer knows nothing of profiles.
 */
#include "live_pump.h"
#include "background.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SEEN_MAX 64
#define SESSIONS_LISTED 50

struct seen {
	char session[160];
	json_int_t chunks;    /* chunks when last analyzed */
	bool live;            /* live when last seen */
	unsigned long age;   /* tick of its last use, for replacement */
};

static const struct mcp_config *pump_cfg;
static struct seen seen[SEEN_MAX];
static unsigned long tick;

/* The entry of `session`, or the one to reuse for it (empty or oldest). */
static struct seen *entry_of(const char *session)
{
	struct seen *oldest = &seen[0];

	for (size_t i = 0; i < SEEN_MAX; i++) {
		if (strcmp(seen[i].session, session) == 0)
			return &seen[i];
		if (seen[i].age < oldest->age)
			oldest = &seen[i];
	}
	memset(oldest, 0, sizeof(*oldest));
	snprintf(oldest->session, sizeof(oldest->session), "%s", session);
	return oldest;
}

static void analyze(const char *session)
{
	char path[256];
	json_t *args, *answer;

	snprintf(path, sizeof(path), "perflens://artifacts/sessions/%s", session);
	args = json_pack("{s:s}", "path", path);
	answer = mcp_background_call(pump_cfg, "analyze_profile", args);
	if (!json_object_get(answer, "ok"))
		fprintf(stderr, "perflens-mcp: live analysis of %s failed: %s\n", session,
			json_string_value(json_object_get(json_object_get(answer, "error"), "message"))
				?: "the worker gave no answer");
	json_decref(answer);
	json_decref(args);
}

/* Whether a session of `chunks` chunks, analyzed last at `last`, is
 * analyzed again: while live, once it grew by a tenth (at least one
 * chunk), so a capture of N chunks costs about 10 ln N analyses, each
 * reading every chunk, rather than N of them (quadratic work and disk for
 * a long capture); once it stopped, its final chunks always. */
static bool worth_analyzing(json_int_t chunks, json_int_t last, bool live, bool was_live)
{
	if (chunks <= last || !(live || was_live))
		return false;
	return !live || chunks - last >= (last / 10 > 1 ? last / 10 : 1);
}

/* One look at the sessions: each that grew enough while live is analyzed. */
static void pump_once(void)
{
	json_t *args = json_pack("{s:i}", "limit", SESSIONS_LISTED);
	json_t *answer = mcp_background_call(pump_cfg, "list_sessions", args), *s;
	size_t i;

	tick++;
	json_array_foreach(json_object_get(json_object_get(answer, "ok"), "sessions"), i, s) {
		const char *id = json_string_value(json_object_get(s, "session"));
		json_int_t chunks = json_integer_value(json_object_get(s, "chunks"));
		bool live = json_is_true(json_object_get(s, "live"));
		if (!id || strlen(id) >= sizeof(seen[0].session))
			continue;
		struct seen *e = entry_of(id);
		bool grew = worth_analyzing(chunks, e->chunks, live, e->live);
		e->age = tick;
		e->live = live;
		if (grew) {
			analyze(id);
			e->chunks = chunks;
		}
	}
	json_decref(answer);
	json_decref(args);
}

static void *pump_main(void *arg)
{
	(void)arg;
	for (;;) {
		pump_once();
		usleep(pump_cfg->live_analysis_ms * 1000u);
	}
	return NULL;
}

void mcp_live_pump_start(const struct mcp_config *cfg)
{
	pthread_attr_t attr;
	pthread_t th;

	if (!cfg->live_analysis_ms || !cfg->ctx.device_link || !cfg->ctx.allow_writes || cfg->no_sandbox)
		return;
	pump_cfg = cfg;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, pump_main, NULL) != 0)
		fprintf(stderr, "perflens-mcp: live analysis: cannot start its thread\n");
	pthread_attr_destroy(&attr);
}
