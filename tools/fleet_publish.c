/* fleet_publish.c - the fleet_publish tool: write the device chunks that
 * arrived since the last publish to the fleet store.
 *
 * The session spool (collectors/agentlink/spool.c) is the queue: a chunk
 * is a file renamed into sessions/ID/ once whole, in index order.  Per
 * session, fleet/published/ID.json keeps the highest chunk index the
 * store took; a publish sends the chunks above it, oldest session first,
 * each as one batch of rows (frames, stacks, samples, then its chunks row
 * last), and moves the mark (an atomic write) after the store said yes.
 * A store that is down leaves the mark, and the next publish sends the
 * same chunk again; a server killed between the store's yes and the mark
 * sends it twice, and the store's ReplacingMergeTree keeps it once (every
 * row's key holds the chunk id).  perflens-mcp runs this tool every few
 * seconds in a sandboxed worker (mcp-server/fleet_pump.c), so the agent
 * link never waits on the store.
 */
#include "registry.h"
#include "tools/lib/device_common.h"
#include "tools/lib/fleet_common.h"
#include "tools/lib/perf_data_read.h"
#include "collectors/agentlink/channel.h"
#include "collectors/fleet/rows.h"
#include "profile/parse.h"
#include "base/fsatomic.h"
#include "collectors/fleet/fleetcfg.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SESSIONS 4096
#define MAX_CHUNKS_SEEN 100000
#define BATCH_CHUNKS 256            /* chunks in one insert per table */
#define BATCH_BYTES (32u << 20)     /* ...or this many bytes of rows */

/* The session's clock: unix ns = a sample's time (perf's clock) +
 * offset_ns, when known. */
struct session_clock {
	bool known;
	int64_t offset_ns;
};

/* A session whose mark moves when the batch holding its chunks is in. */
struct batch_mark {
	char session[128];
	long through;
	struct session_clock clock;
};

struct publish {
	const struct tool_ctx *ctx;
	size_t budget;          /* chunks this call may still send */
	size_t published, pending, sessions, skipped;
	uint64_t samples;
	char skip_reason[400];  /* the first chunk skipped, and why */
	json_t *labels_base;    /* the operator's labels */
	struct fleet_rows batch;   /* rows of the chunks not yet sent */
	size_t batch_chunks;
	uint64_t batch_samples;
	struct batch_mark *marks;  /* the sessions in the batch, each once */
	size_t nmarks, marks_cap;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of `dir`'s entries `keep` accepts, sorted (new array of new
 * strings; *n their count). */
static char **names_in(const char *dir, bool (*keep)(const char *), size_t max, size_t *n)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t cap = 0;
	struct dirent *de;

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d)) && *n < max)
		if (keep(de->d_name)) {
			PL_GROW(names, cap, *n + 1);
			names[(*n)++] = pl_xstrdup(de->d_name);
		}
	closedir(d);
	if (*n)
		qsort(names, *n, sizeof(*names), by_name);
	return names;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* A whole chunk: chunk_NNNNN.zst or .txt (a writer's temp starts with '.'
 * or holds ".tmp-"). */
static bool is_chunk(const char *name)
{
	return strncmp(name, "chunk_", 6) == 0 && !strstr(name, ".tmp-") &&
	       (strstr(name, ".zst") || strstr(name, ".txt"));
}

static bool is_session(const char *name)
{
	return coll_id_ok(name);
}

static long chunk_index(const char *name)
{
	return strtol(name + 6, NULL, 10);
}

static void mark_path(const struct tool_ctx *ctx, const char *session, char *out, size_t cap)
{
	snprintf(out, cap, "%s/fleet/published/%s.json", ctx->artifact_root, session);
}

/* The session's mark: the last chunk the store took (-1: none), and the
 * session's clock when it was known then (`clock` may be NULL). */
static long published_through(const struct tool_ctx *ctx, const char *session, struct session_clock *clock)
{
	char path[4400];
	json_t *j, *offset;
	long through = -1;

	mark_path(ctx, session, path, sizeof(path));
	if (clock)
		*clock = (struct session_clock){0};
	if ((j = json_load_file(path, 0, NULL))) {
		if (json_is_integer(json_object_get(j, "through")))
			through = (long)json_integer_value(json_object_get(j, "through"));
		if (clock && json_is_integer(offset = json_object_get(j, "clock_offset_ns")))
			*clock = (struct session_clock){true, (int64_t)json_integer_value(offset)};
		json_decref(j);
	}
	return through;
}

static enum pl_err set_published(const struct tool_ctx *ctx, const struct batch_mark *m, struct pl_error *err)
{
	char path[4400], dir[4400];
	char text[128];
	enum pl_err e;

	snprintf(dir, sizeof(dir), "%s/fleet/published", ctx->artifact_root);
	if ((e = pl_make_dirs(dir, err)))
		return e;
	mark_path(ctx, m->session, path, sizeof(path));
	if (m->clock.known)
		snprintf(text, sizeof(text), "{\"through\": %ld, \"clock_offset_ns\": %lld}\n", m->through,
			 (long long)m->clock.offset_ns);
	else
		snprintf(text, sizeof(text), "{\"through\": %ld}\n", m->through);
	return pl_write_file_atomic(path, text, strlen(text), err);
}

/* The session's clock, anchored on its first chunk: that chunk arrived
 * no earlier than its last sample was taken, so unix ns = perf's time +
 * (the chunk file's mtime - its latest sample's time), to within the
 * delivery of the first chunk.  Every later chunk, however late it
 * arrives (a link that stalled, a spool replayed), keeps its samples'
 * own times; and a replay computes the same offset, so its rows are the
 * same rows.  Unknown when the first chunk holds no timed sample. */
static struct session_clock anchor_clock(const struct tool_ctx *ctx, const char *dir, const char *first)
{
	char path[4700];
	struct pl_parse_opts opts = {0};
	struct pl_profile p;
	struct pl_error err;
	struct session_clock c = {0};
	struct stat sb;
	uint64_t latest = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, first);
	if (stat(path, &sb) != 0)
		return c;
	pl_profile_init(&p, &ctx->limits);
	if (pl_parse_path(&p, path, &opts, &err) == PL_OK)
		for (size_t i = 0; i < p.timed.n; i++)
			if (p.timed.v[i].time_ns > latest)
				latest = p.timed.v[i].time_ns;
	pl_profile_release(&p);
	if (latest)
		c = (struct session_clock){true, (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec -
					   (int64_t)latest};
	return c;
}

/* The labels of a session's chunks: the operator's, the platform's
 * (arch, kernel) and the agent's own (its hello's labels), sorted. */
static json_t *session_labels(const struct publish *pb, json_t *meta)
{
	json_t *labels = json_deep_copy(pb->labels_base), *platform = json_object_get(meta, "platform");
	const char *keys[] = {"arch", "kernel", "hostname"};
	const char *k;
	json_t *v;
	char label[300];

	for (size_t i = 0; i < PL_ARRAY_LEN(keys); i++)
		if (json_is_string(json_object_get(platform, keys[i]))) {
			snprintf(label, sizeof(label), "%s=%s", keys[i],
				 json_string_value(json_object_get(platform, keys[i])));
			if (fleet_label_ok(label))
				json_array_append_new(labels, json_string(label));
		}
	json_object_foreach(json_object_get(meta, "labels"), k, v) {
		snprintf(label, sizeof(label), "%s=%s", k, json_string_value(v) ? json_string_value(v) : "");
		if (json_is_string(v) && fleet_label_ok(label) && json_array_size(labels) < FLEET_MAX_LABELS * 2)
			json_array_append_new(labels, json_string(label));
	}
	return labels;
}

static enum pl_err insert(const struct tool_ctx *ctx, const char *table, const struct pl_buf *rows,
			  struct pl_error *err)
{
	char name[64], sql[128];

	if (!rows->len)
		return PL_OK;
	fleet_table(&ctx->fleet, table, name, sizeof(name));
	snprintf(sql, sizeof(sql), "INSERT INTO %s FORMAT JSONEachRow", name);
	return fleet_exec(&ctx->fleet, sql, rows->data, rows->len, NULL, err);
}

/* ------------------------------------------------- build-ids as labels
 *
 * Our agent sends the profiled process's executable mappings with their
 * build-ids (docs/agent-protocol.md, extension 2), kept as
 * maps_NNNNN.json from chunk NNNNN on.  A chunk's rows are labelled with
 * the build-id of each module it sampled (build_id.NAME=HEX, NAME the
 * file's name), so the fleet can select and compare builds. */

#define MAX_BUILD_ID_LABELS 16

struct maps_file {
	long from_chunk;
	json_t *doc;
};

static bool is_maps(const char *name)
{
	return strncmp(name, "maps_", 5) == 0 && strstr(name, ".json") && !strstr(name, ".tmp-");
}

/* The session's maps files, in chunk order (new; *n their count). */
static struct maps_file *load_maps(const char *dir, size_t *n)
{
	size_t count, k = 0;
	char **names = names_in(dir, is_maps, 4096, &count), path[4700];
	struct maps_file *m = pl_xcalloc(count ? count : 1, sizeof(*m));

	for (size_t i = 0; i < count; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if ((m[k].doc = json_load_file(path, 0, NULL)))
			m[k++].from_chunk = strtol(names[i] + 5, NULL, 10);
	}
	free_names(names, count);
	*n = k;
	return m;
}

static void free_maps(struct maps_file *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_decref(m[i].doc);
	free(m);
}

/* "build_id.NAME=HEX" for `path`'s mapping, NAME its file name with
 * what a label key may not hold made '_'. */
static bool build_id_label(const char *path, const char *hex, char *out, size_t cap)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = (size_t)snprintf(out, cap, "build_id.%.48s", base);
	for (size_t i = 9; i < n && i < cap; i++)
		if (!isalnum((unsigned char)out[i]) && !strchr("_.-", out[i]))
			out[i] = '_';
	if (n + 1 + strlen(hex) >= cap)
		return false;
	snprintf(out + n, cap - n, "=%s", hex);
	return fleet_label_ok(out);
}

/* The chunk's labels: the session's, and a build-id label for each module
 * the chunk sampled that the maps in force at chunk `idx` name (new). */
static json_t *chunk_labels(json_t *session_labels, const struct maps_file *maps, size_t nmaps, long idx,
			    const struct pl_profile *p)
{
	json_t *labels = json_deep_copy(session_labels), *doc = NULL, *m;
	size_t i, added = 0;
	char label[300];

	for (i = 0; i < nmaps; i++)
		if (maps[i].from_chunk <= idx)
			doc = maps[i].doc;
	json_array_foreach(json_object_get(doc, "maps"), i, m) {
		const char *path = json_string_value(json_object_get(m, "path"));
		const char *hex = json_string_value(json_object_get(m, "build_id"));
		if (!path || !hex || added >= MAX_BUILD_ID_LABELS)
			continue;
		bool sampled = false;
		for (uint32_t f = 0; f < pl_nfuncs(p) && !sampled; f++)
			sampled = p->funcs[f].dso != PL_NOID && strcmp(pl_str(p, p->funcs[f].dso), path) == 0;
		if (sampled && build_id_label(path, hex, label, sizeof(label))) {
			json_array_append_new(labels, json_string(label));
			added++;
		}
	}
	return labels;
}

/* The device a session's rows name, the same however often the board
 * reconnects: the `device` label of the agent's hello (an agent given a
 * name), else its platform's hostname, else the link's id (address and
 * port: an inbound agent's port changes on each connection, so such a
 * board is a new device each time it reconnects; docs/fleet.md). */
static const char *session_device(json_t *meta)
{
	const char *named = json_string_value(json_object_get(json_object_get(meta, "labels"), "device"));
	const char *host = json_string_value(json_object_get(json_object_get(meta, "platform"), "hostname"));
	const char *link = json_string_value(json_object_get(meta, "agent"));

	if (named && *named)
		return named;
	if (host && *host && strlen(host) <= 128)
		return host;
	return link ? link : "unknown";
}

/* The seconds a chunk of the session covers: its capture's interval
 * (the agent's answer to start says it as "duration": start_capture's
 * interval_seconds, a chunk a round), 0 unknown. */
static double chunk_seconds(json_t *meta)
{
	json_t *v = json_object_get(json_object_get(meta, "capture"), "duration");

	return json_is_number(v) && json_number_value(v) > 0 ? json_number_value(v) : 0;
}

/* Parse one chunk and write its rows; the chunks row goes last, so a
 * chunk the store lists is a chunk whose samples it holds. */
static enum pl_err publish_chunk(struct publish *pb, const char *session, const char *file, json_t *meta,
				 json_t *labels, const struct maps_file *maps, size_t nmaps,
				 const struct session_clock *clock, struct pl_error *err)
{
	const struct tool_ctx *ctx = pb->ctx;
	char path[4400], chunk_id[400];
	struct pl_parse_opts opts = {0};
	struct fleet_rows rows = {0};
	struct pl_profile p;
	struct stat sb;
	enum pl_err e;

	snprintf(path, sizeof(path), "%s/%s/%s/%s", ctx->artifact_root, COLL_SESSIONS_DIR, session, file);
	snprintf(chunk_id, sizeof(chunk_id), "%s/%ld", session, chunk_index(file));
	if (stat(path, &sb) != 0)
		return pl_fail(err, PL_ERR_INPUT, NULL, "chunk %s is gone", chunk_id);
	struct fleet_chunk_meta m = {chunk_id, session_device(meta), session,
				     (uint32_t)chunk_index(file), ctx->fleet.server_name, sb.st_mtime,
				     chunk_seconds(meta), labels, clock->known, clock->offset_ns};
	/* A perf.data chunk (extension 4) is read natively, as analyze_profile
	 * reads a session's: the server's kernel symbols and binaries. */
	opts.perf_data.read = tool_perf_data_read;
	opts.perf_data.kallsyms = ctx->perf.kallsyms_path ? ctx->perf.kallsyms_path : "/proc/kallsyms";
	opts.perf_data.allowed_roots = ctx->allowed_roots;
	opts.perf_data.nallowed_roots = ctx->nroots;
	opts.perf_data.sym = &ctx->sym;
	pl_profile_init(&p, &ctx->limits);
	e = pl_parse_path(&p, path, &opts, err);
	if (!e) {
		m.labels = chunk_labels(labels, maps, nmaps, chunk_index(file), &p);
		e = fleet_chunk_rows(&p, &m, &rows, err);
		json_decref(m.labels);
	}
	pl_profile_release(&p);
	if (!e) {
		pl_buf_add(&pb->batch.frames, rows.frames.data, rows.frames.len);
		pl_buf_add(&pb->batch.stacks, rows.stacks.data, rows.stacks.len);
		pl_buf_add(&pb->batch.samples, rows.samples.data, rows.samples.len);
		pl_buf_add(&pb->batch.chunks, rows.chunks.data, rows.chunks.len);
		pb->batch_samples += rows.samples_total;
	}
	fleet_rows_release(&rows);
	return e;
}

/* The session's mark in the batch moves to `idx` (a chunk sent or skipped). */
static void batch_mark(struct publish *pb, const char *session, long idx, const struct session_clock *clock)
{
	for (size_t i = 0; i < pb->nmarks; i++)
		if (strcmp(pb->marks[i].session, session) == 0) {
			pb->marks[i].through = idx;
			return;
		}
	PL_GROW(pb->marks, pb->marks_cap, pb->nmarks + 1);
	snprintf(pb->marks[pb->nmarks].session, sizeof(pb->marks[0].session), "%s", session);
	pb->marks[pb->nmarks].clock = *clock;
	pb->marks[pb->nmarks++].through = idx;
}

/* Send the batch: frames and stacks first, then samples, the chunks rows
 * last (a chunk the store lists is one whose samples it holds); then move
 * the marks of its sessions.  A failure keeps every mark where it was. */
static enum pl_err flush_batch(struct publish *pb, struct pl_error *err)
{
	const struct tool_ctx *ctx = pb->ctx;
	enum pl_err e = PL_OK;

	if (pb->batch_chunks && (!(e = insert(ctx, "frames", &pb->batch.frames, err)) &&
				 !(e = insert(ctx, "stacks", &pb->batch.stacks, err)) &&
				 !(e = insert(ctx, "samples", &pb->batch.samples, err))))
		e = insert(ctx, "chunks", &pb->batch.chunks, err);
	for (size_t i = 0; !e && i < pb->nmarks; i++)
		e = set_published(ctx, &pb->marks[i], err);
	if (!e) {
		pb->published += pb->batch_chunks;
		pb->samples += pb->batch_samples;
	}
	pl_buf_reset(&pb->batch.frames);
	pl_buf_reset(&pb->batch.stacks);
	pl_buf_reset(&pb->batch.samples);
	pl_buf_reset(&pb->batch.chunks);
	pb->batch_chunks = 0;
	pb->batch_samples = 0;
	pb->nmarks = 0;
	return e;
}

static size_t batch_bytes(const struct publish *pb)
{
	return pb->batch.frames.len + pb->batch.stacks.len + pb->batch.samples.len + pb->batch.chunks.len;
}

/* Send the session's chunks above its mark, while the budget lasts. */
static enum pl_err publish_session(struct publish *pb, const char *session, struct pl_error *err)
{
	const struct tool_ctx *ctx = pb->ctx;
	char dir[4400];
	size_t n, i;
	struct session_clock clock;
	long through = published_through(ctx, session, &clock);
	json_t *meta = dev_load_session(ctx, session), *labels;
	struct maps_file *maps;
	size_t nmaps;
	char **chunks;
	enum pl_err e = PL_OK;

	if (!json_is_object(meta)) {
		json_decref(meta);
		return PL_OK;  /* no metadata yet: the session's first chunk is being written */
	}
	snprintf(dir, sizeof(dir), "%s/%s/%s", ctx->artifact_root, COLL_SESSIONS_DIR, session);
	chunks = names_in(dir, is_chunk, MAX_CHUNKS_SEEN, &n);
	maps = load_maps(dir, &nmaps);
	labels = session_labels(pb, meta);
	pb->sessions++;
	if (!clock.known && n && chunk_index(chunks[n - 1]) > through)
		clock = anchor_clock(ctx, dir, chunks[0]);
	for (i = 0; i < n && !e; i++) {
		long idx = chunk_index(chunks[i]);
		if (idx <= through)
			continue;
		if (!pb->budget) {
			pb->pending++;
			continue;
		}
		e = publish_chunk(pb, session, chunks[i], meta, labels, maps, nmaps, &clock, err);
		if (e) {
			/* the chunk itself cannot be read: skipped, said, never retried */
			if (!pb->skipped++)
				snprintf(pb->skip_reason, sizeof(pb->skip_reason), "%s/%s: %s", session,
					 chunks[i], err->text);
			e = PL_OK;
		} else {
			pb->batch_chunks++;
		}
		batch_mark(pb, session, idx, &clock);
		pb->budget--;
		if (pb->batch_chunks >= BATCH_CHUNKS || batch_bytes(pb) >= BATCH_BYTES)
			e = flush_batch(pb, err);
	}
	for (; i < n; i++)
		if (chunk_index(chunks[i]) > through)
			pb->pending++;
	free_names(chunks, n);
	free_maps(maps, nmaps);
	json_decref(labels);
	json_decref(meta);
	return e;
}

/* ----------------------------------------------------------- the bound
 *
 * Chunks wait in the session spool while the store is away.  The spool
 * is bounded (--fleet-spool-max-mb): after each publish, the bytes of the
 * chunks not yet in the store are summed, and past the bound the file
 * FLEET_FULL_FILE says so; the agent link then writes no new chunk and
 * records a gap naming the reason instead (spool.c), until a publish
 * brings the backlog back under the bound and removes the file. */

/* The bytes of the chunks above each session's mark. */
static uint64_t backlog_bytes(const struct tool_ctx *ctx, char **sessions, size_t n)
{
	uint64_t total = 0;
	char dir[4400], path[4700];

	for (size_t i = 0; i < n; i++) {
		long through = published_through(ctx, sessions[i], NULL);
		size_t nc;
		char **chunks;
		snprintf(dir, sizeof(dir), "%s/%s/%s", ctx->artifact_root, COLL_SESSIONS_DIR, sessions[i]);
		chunks = names_in(dir, is_chunk, MAX_CHUNKS_SEEN, &nc);
		for (size_t c = 0; c < nc; c++) {
			struct stat sb;
			snprintf(path, sizeof(path), "%s/%s", dir, chunks[c]);
			if (chunk_index(chunks[c]) > through && stat(path, &sb) == 0)
				total += (uint64_t)sb.st_size;
		}
		free_names(chunks, nc);
	}
	return total;
}

/* Say, or stop saying, that the spool is full; the backlog in *bytes. */
static void mark_fullness(const struct tool_ctx *ctx, uint64_t *bytes, struct pl_error *err_unused)
{
	char dir[4200], path[4300], text[300];
	char **sessions;
	size_t n;
	struct pl_error err;

	(void)err_unused;
	snprintf(dir, sizeof(dir), "%s/%s", ctx->artifact_root, COLL_SESSIONS_DIR);
	sessions = names_in(dir, is_session, MAX_SESSIONS, &n);
	*bytes = backlog_bytes(ctx, sessions, n);
	free_names(sessions, n);
	snprintf(path, sizeof(path), "%s/%s", ctx->artifact_root, FLEET_FULL_FILE);
	if (!ctx->fleet.max_pending_bytes || *bytes <= ctx->fleet.max_pending_bytes) {
		unlink(path);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/fleet", ctx->artifact_root);
	snprintf(text, sizeof(text), "the fleet spool is full: %llu MB of chunks wait for the fleet store "
		 "(--fleet-spool-max-mb %llu)", (unsigned long long)(*bytes >> 20),
		 (unsigned long long)(ctx->fleet.max_pending_bytes >> 20));
	if (pl_make_dirs(dir, &err) == PL_OK)
		pl_write_file_atomic(path, text, strlen(text), &err);
}

static json_t *operator_labels(const struct tool_ctx *ctx)
{
	json_t *labels = json_array();

	for (size_t i = 0; i < ctx->fleet.nlabels; i++)
		json_array_append_new(labels, json_string(ctx->fleet.labels[i]));
	return labels;
}

enum pl_err tool_fleet_publish(const struct tool_ctx *ctx, json_t *args, json_t **result,
			       struct pl_error *err)
{
	struct publish pb = {.ctx = ctx, .budget = (size_t)json_integer_value(json_object_get(args, "max_chunks")),
			     .labels_base = operator_labels(ctx)};
	char dir[4200];
	char **sessions;
	size_t n;
	uint64_t backlog;
	enum pl_err e;

	if ((e = tool_require_writes(ctx, err)))  {
		json_decref(pb.labels_base);
		return e;
	}
	if ((e = fleet_ready(ctx, err))) {
		mark_fullness(ctx, &backlog, err);  /* the store away: the backlog grows */
		json_decref(pb.labels_base);
		return e;
	}
	snprintf(dir, sizeof(dir), "%s/%s", ctx->artifact_root, COLL_SESSIONS_DIR);
	sessions = names_in(dir, is_session, MAX_SESSIONS, &n);
	for (size_t i = 0; i < n && !e; i++)
		e = publish_session(&pb, sessions[i], err);
	if (!e)
		e = flush_batch(&pb, err);
	free_names(sessions, n);
	json_decref(pb.labels_base);
	fleet_rows_release(&pb.batch);
	free(pb.marks);
	mark_fullness(ctx, &backlog, err);
	if (e)
		return e;
	*result = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o}", "published_chunks", (json_int_t)pb.published,
			    "published_samples", (json_int_t)pb.samples, "pending_chunks", (json_int_t)pb.pending,
			    "pending_bytes", (json_int_t)backlog,
			    "sessions", (json_int_t)pb.sessions, "skipped_chunks", (json_int_t)pb.skipped,
			    "first_skipped", pb.skipped ? json_string(pb.skip_reason) : json_null(),
			    "next_steps", json_array());
	if (pb.published)
		json_array_append_new(json_object_get(*result, "next_steps"),
				      tool_next_step("fleet_hotspots", json_object(),
						     "the fleet's top functions, these chunks included"));
	return PL_OK;
}
