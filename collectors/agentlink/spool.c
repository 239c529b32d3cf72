/* spool.c - one session on disk, in the seed's layout (see
 * docs/agent-protocol.md, "Sessions on disk"):
 *
 *   sessions/ID/chunk_NNNNN.zst   a flag-1 payload exactly as received
 *   sessions/ID/chunk_NNNNN.txt   a flag-0 payload
 *   sessions/ID/chunk_NNNNN.perf.zst  a flag-5 payload (extension 4: a
 *                                 pipe-mode perf.data, zstd-compressed)
 *   sessions/ID/maps_NNNNN.json   extension 2, applying from chunk NNNNN
 *   sessions/ID/metadata.json     written at the first data and after every
 *                                 chunk; live:true until finalized
 *   sessions/ID/metrics.jsonl     every metrics frame, one per line, as it
 *                                 comes (a torn last line is skipped by
 *                                 readers); metrics.json, the seed's
 *                                 {type: [frames]}, is written at the end
 *
 * A chunk is written to a '.'-prefixed temp and renamed, so a reader
 * (analyze_profile, which takes chunk_* names) never sees half of one; a
 * write that fails (ENOSPC) removes the temp and records a gap with that
 * index, which is never reused: no chunk is partial or overwritten.  The
 * startup sweep finalizes what a killed server left live (recovered:true)
 * and removes sessions that hold nothing.
 */
#include "link_int.h"
#include "channel.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fsatomic.h"
#include "base/version.h"
#include "collectors/fleet/store.h"

void spool_now_iso(char *out, size_t cap)
{
	struct timespec t;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &t);
	gmtime_r(&t.tv_sec, &tm);
	snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, t.tv_nsec / 1000000);
}

static char spool_root[4096];
static pthread_mutex_t spool_root_mu = PTHREAD_MUTEX_INITIALIZER;

/* spool_root is the artifact root, the same for the whole process: set
 * it once, under a lock, so device threads opening spools at once do not
 * race on it and every reader (which opened its spool first) sees it. */
static void set_spool_root(const char *root)
{
	pthread_mutex_lock(&spool_root_mu);
	if (strcmp(spool_root, root) != 0)
		snprintf(spool_root, sizeof(spool_root), "%s", root);
	pthread_mutex_unlock(&spool_root_mu);
}

bool coll_note_write_error(json_t *errors, const char *owner, const char *what, int e)
{
	json_t *rec = json_object_get(errors, what);
	const char *msg = strerror(e);
	char now[40];

	if (rec) {
		json_object_set_new(rec, "count", json_integer(json_integer_value(json_object_get(rec, "count")) + 1));
		if (strcmp(json_string_value(json_object_get(rec, "error")), msg) == 0)
			return false;
		json_object_set_new(rec, "error", json_string(msg));  /* the latest kind */
	} else {
		spool_now_iso(now, sizeof(now));
		json_object_set_new(errors, what, json_pack("{s:s,s:i,s:s}", "error", msg, "count", 1, "first", now));
	}
	coll_link_log("%s: cannot write %s: %s (kept going; counted in its write_errors)", owner, what, msg);
	return true;
}

/* The hello's labels worth keeping: at most 32, each a short key of
 * [A-Za-z0-9_.-] with a printable string value (the fleet store's rows
 * carry them as KEY=VALUE); NULL when none. */
static json_t *labels_copy(json_t *labels)
{
	json_t *out = json_object(), *v;
	const char *k;

	json_object_foreach(labels, k, v) {
		const char *val = json_string_value(v);
		bool ok = val && strlen(k) >= 1 && strlen(k) <= 64 && strlen(val) <= 128 &&
			  json_object_size(out) < 32;
		for (const char *c = k; ok && *c; c++)
			ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			     *c == '_' || *c == '.' || *c == '-';
		for (const char *c = val; ok && *c; c++)
			ok = *c >= 0x20 && *c <= 0x7e;
		if (ok)
			json_object_set(out, k, v);
	}
	if (!json_object_size(out)) {
		json_decref(out);
		return NULL;
	}
	return out;
}

void spool_open(struct spool *s, const char *artifact_root, const char *device, json_t *platform,
		json_t *labels)
{
	static unsigned serial;
	struct timespec t;
	struct tm tm;
	char stamp[32];

	memset(s, 0, sizeof(*s));
	set_spool_root(artifact_root);
	clock_gettime(CLOCK_REALTIME, &t);
	gmtime_r(&t.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d_%H%M%S", &tm);
	/* The seed's name (time and agent), plus a serial: two sessions of
	 * one device within a second stay apart. */
	snprintf(s->id, sizeof(s->id), "%s_%s_%u", stamp, device,
		 __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED));
	snprintf(s->dir, sizeof(s->dir), "%s/%s/%s", artifact_root, COLL_SESSIONS_DIR, s->id);
	snprintf(s->device, sizeof(s->device), "%s", device);
	s->gaps = json_array();
	s->metrics_counts = json_object();
	s->write_errors = json_object();
	s->platform = platform ? json_deep_copy(platform) : json_null();
	s->labels = labels_copy(labels);
	s->capture_seconds = -1;
	spool_now_iso(s->started, sizeof(s->started));
	s->live = true;
}

static bool make_dir_err(struct spool *s, struct pl_error *err)
{
	if (s->dir_made)
		return true;
	if (pl_make_dirs(s->dir, err))
		return false;
	s->dir_made = true;
	spool_write_metadata(s);
	return true;
}

static bool make_dir(struct spool *s)
{
	struct pl_error err;

	return make_dir_err(s, &err);
}

enum pl_err spool_make_dir_now(struct spool *s, struct pl_error *err)
{
	struct pl_error made = {0};

	if (make_dir_err(s, &made))
		return PL_OK;
	return pl_fail(err, PL_ERR_OUTPUT, "make the artifact root's sessions folder writable (or free space there)",
		       "cannot make the session folder %s/%s: %s", COLL_SESSIONS_DIR, s->id, made.text);
}

static json_t *metadata_json(const struct spool *s, bool recovered)
{
	json_t *m = json_pack("{s:s,s:s,s:s,s:s,s:b,s:i,s:I,s:I,s:I,s:O,s:O,s:O,s:i,s:i}",
		"version", PL_VERSION, "session_id", s->id, "agent", s->device, "started", s->started,
		"live", s->live, "chunks", (int)s->chunks, "next_chunk", (json_int_t)s->next_chunk,
		"wire_bytes", (json_int_t)s->wire_bytes, "text_bytes", (json_int_t)s->text_bytes,
		"platform", s->platform, "gaps", s->gaps, "metrics_counts", s->metrics_counts,
		"metrics_frames", (int)s->metrics, "maps_files", (int)s->maps);
	char now[40];

	spool_now_iso(now, sizeof(now));
	json_object_set_new(m, "timestamp", json_string(now));
	json_object_set_new(m, "last_chunk_time", s->last_chunk[0] ? json_string(s->last_chunk) : json_null());
	if (s->counters)
		json_object_set(m, "agent_counters", s->counters);
	if (s->capture)
		json_object_set(m, "capture", s->capture);
	if (s->ended[0])
		json_object_set_new(m, "ended", json_string(s->ended));
	if (s->capture_counters)
		json_object_set(m, "capture_counters", s->capture_counters);
	if (s->capture_seconds >= 0)
		json_object_set_new(m, "capture_seconds", json_real((double)(long long)(s->capture_seconds * 1000) / 1000));
	if (json_object_size(s->write_errors))
		json_object_set(m, "write_errors", s->write_errors);
	if (s->labels)
		json_object_set(m, "labels", s->labels);
	if (recovered)
		json_object_set_new(m, "recovered", json_true());
	return m;
}

void spool_write_metadata(struct spool *s)
{
	char rel[300];
	json_t *m;
	bool landed;
	int e;

	if (!s->dir_made)
		return;
	m = metadata_json(s, false);
	snprintf(rel, sizeof(rel), "%s/%s/metadata.json", COLL_SESSIONS_DIR, s->id);
	/* On a full disk the gap must still be recorded: coll_write_state
	 * rewrites the file in the pages it holds. */
	if ((e = coll_write_state(spool_root, rel, m, &landed)) && !landed)
		coll_note_write_error(s->write_errors, s->id, "metadata.json", e);
	json_decref(m);
}

/* Is the fleet spool full (the fleet store's publisher says so in
 * FLEET_FULL_FILE under the artifact root, collectors/fleet/store.h)?
 * PL_ERR_LIMIT with its sentence then. */
static enum pl_err fleet_full(struct pl_error *err)
{
	char path[4300], said[300];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", spool_root, FLEET_FULL_FILE);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return PL_OK;
	n = read(fd, said, sizeof(said) - 1);
	close(fd);
	said[n > 0 ? n : 0] = '\0';
	return pl_fail(err, PL_ERR_LIMIT, NULL, "%s", n > 0 ? said : "the fleet spool is full");
}

enum pl_err spool_chunk(struct spool *s, const void *p, size_t n, const char *suffix,
			unsigned long long text_bytes, struct pl_error *err)
{
	char name[64], path[4300];
	unsigned index;
	enum pl_err rc;
	int e;

	if ((rc = fleet_full(err))) {
		/* Not written: the chunks already waiting for the fleet store
		 * keep their place; this one is a gap that says why. */
		spool_gap(s, err->text);
		return rc;
	}
	index = s->next_chunk++;
	snprintf(name, sizeof(name), "chunk_%05u.%s", index, suffix);
	snprintf(path, sizeof(path), "%s/%s", s->dir, name);
	e = make_dir(s) ? coll_write_file_atomic(path, p, n, 0644, true) : (errno ? errno : EIO);
	if (e) {
		rc = pl_fail(err, PL_ERR_OUTPUT, NULL, "%s could not be written: %s", name, strerror(e));
		json_array_append_new(s->gaps, json_pack("{s:i,s:s}", "chunk", (int)index,
							 "reason", strerror(e)));
	} else {
		s->chunks++;
		s->wire_bytes += n;
		s->text_bytes += text_bytes;
		spool_now_iso(s->last_chunk, sizeof(s->last_chunk));
	}
	spool_write_metadata(s);
	return rc;
}

void spool_gap(struct spool *s, const char *reason)
{
	spool_gap_sized(s, reason, json_object());
}

void spool_gap_sized(struct spool *s, const char *reason, json_t *gap)
{
	json_object_set_new(gap, "chunk", json_integer((json_int_t)s->next_chunk++));
	json_object_set_new(gap, "reason", json_string(reason));
	json_array_append_new(s->gaps, gap);
	if (make_dir(s))
		spool_write_metadata(s);
}

/* `line` (its NUL replaced by a newline) appended to `path` by one
 * write(2) with O_APPEND, so lines never interleave; a short write is cut
 * back off, so a reader never meets half a line before a whole one.
 * 0 or an errno value. */
static int append_line(const char *path, char *line)
{
	size_t n = strlen(line);
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644), e = 0;
	struct stat sb;
	ssize_t w;

	if (fd < 0)
		return errno;
	line[n] = '\n';
	if (fstat(fd, &sb) < 0)
		e = errno;
	else if ((w = write(fd, line, n + 1)) != (ssize_t)(n + 1)) {
		e = w < 0 ? errno : ENOSPC;  /* a short write: the disk filled */
		if (w > 0)
			(void)ftruncate(fd, sb.st_size);
	}
	line[n] = '\0';
	if (close(fd) < 0 && !e)
		e = errno;
	return e;
}

bool spool_metrics(struct spool *s, json_t *frame)
{
	const char *type = json_string_value(json_object_get(frame, "type"));
	char path[4300];
	char *text;
	int e;

	if (!type)
		return false;
	if (!make_dir(s))
		return coll_note_write_error(s->write_errors, s->id, "metrics.jsonl", errno ? errno : EIO);
	text = json_dumps(frame, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
	snprintf(path, sizeof(path), "%s/metrics.jsonl", s->dir);
	if (!text)
		e = ENOMEM;
	else if (!(e = append_line(path, text))) {
		s->metrics++;
		json_object_set_new(s->metrics_counts, type,
			json_integer(json_integer_value(json_object_get(s->metrics_counts, type)) + 1));
	}
	free(text);
	if (e && coll_note_write_error(s->write_errors, s->id, "metrics.jsonl", e)) {
		spool_write_metadata(s);  /* the new kind of loss shows at once */
		return true;
	}
	return false;
}

void spool_maps(struct spool *s, json_t *maps)
{
	char rel[300];
	int e;

	if (!make_dir(s)) {
		coll_note_write_error(s->write_errors, s->id, "maps", errno ? errno : EIO);
		return;
	}
	snprintf(rel, sizeof(rel), "%s/%s/maps_%05u.json", COLL_SESSIONS_DIR, s->id, s->next_chunk);
	if (!(e = coll_write_json(spool_root, rel, maps)))
		s->maps++;
	else
		coll_note_write_error(s->write_errors, s->id, "maps", e);
	spool_write_metadata(s);
}

/* metrics.json, the seed's {type: [frames]}, from metrics.jsonl; 0 or
 * the errno of its write. */
static int write_metrics_json(const char *dir, const char *rel_dir)
{
	char path[4300], rel[400];
	char *line = NULL;
	size_t cap = 0;
	json_t *all = json_object();
	FILE *f;
	int e;

	snprintf(path, sizeof(path), "%s/metrics.jsonl", dir);
	if (!(f = fopen(path, "re"))) {
		json_decref(all);
		return 0;
	}
	while (getline(&line, &cap, f) > 0) {
		json_t *frame = json_loads(line, 0, NULL);
		const char *type = json_string_value(json_object_get(frame, "type"));
		if (type) {
			json_t *list = json_object_get(all, type);
			if (!list)
				json_object_set_new(all, type, list = json_array());
			json_array_append(list, frame);
		}
		json_decref(frame);
	}
	fclose(f);
	free(line);
	snprintf(rel, sizeof(rel), "%s/metrics.json", rel_dir);
	e = coll_write_json(spool_root, rel, all);
	json_decref(all);
	return e;
}

/* Remove a session folder that holds no chunk and no metrics. */
static void remove_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[4400];

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

bool spool_close(struct spool *s)
{
	char rel[300];
	bool kept = false;
	int e;

	if (s->live && s->dir_made) {
		s->live = false;
		snprintf(rel, sizeof(rel), "%s/%s", COLL_SESSIONS_DIR, s->id);
		if (s->chunks == 0 && s->metrics == 0 && json_array_size(s->gaps) == 0 &&
		    json_object_size(s->write_errors) == 0)
			remove_empty(s->dir);
		else {
			kept = true;
			if ((e = write_metrics_json(s->dir, rel)))
				coll_note_write_error(s->write_errors, s->id, "metrics.json", e);
			spool_write_metadata(s);
		}
	}
	s->live = false;
	json_decref(s->gaps);
	json_decref(s->metrics_counts);
	json_decref(s->platform);
	json_decref(s->labels);
	json_decref(s->counters);
	json_decref(s->capture);
	json_decref(s->write_errors);
	json_decref(s->counters_at_start);
	json_decref(s->capture_counters);
	s->gaps = s->metrics_counts = s->platform = s->counters = s->capture = s->write_errors = NULL;
	s->labels = NULL;
	s->counters_at_start = s->capture_counters = NULL;
	return kept;
}

/* ------------------------------------------------------------ the sweep */

/* What a killed server's session folder holds. */
struct found {
	unsigned chunks, maps, next;   /* next: one past the highest chunk index */
	unsigned long long bytes;
	bool metrics;
};

/* Count the folder's chunks, maps and metrics; the temps a killed writer
 * left (only they start with '.' here) are removed.  False when the
 * folder cannot be read. */
static bool scan_session(const char *dir, struct found *f)
{
	char path[4800];
	struct dirent *de;
	DIR *d = opendir(dir);

	memset(f, 0, sizeof(*f));
	if (!d)
		return false;
	while ((de = readdir(d))) {
		unsigned idx;
		struct stat sb;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_name[0] == '.') {
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				unlink(path);
			continue;
		}
		if (sscanf(de->d_name, "chunk_%u.", &idx) == 1 && stat(path, &sb) == 0) {
			f->chunks++;
			f->bytes += (unsigned long long)sb.st_size;
			if (idx + 1 > f->next)
				f->next = idx + 1;
		} else if (strncmp(de->d_name, "maps_", 5) == 0)
			f->maps++;
		else if (strncmp(de->d_name, "metrics.json", 12) == 0)
			f->metrics = true;
	}
	closedir(d);
	return true;
}

/* The recovered session's metadata: the old one (`old`, borrowed, or
 * NULL) with what the folder holds, finalized (new). */
static json_t *recovered_metadata(json_t *old, const char *id, const struct found *f)
{
	json_t *m = json_is_object(old) ? json_incref(old) : json_object();

	json_object_set_new(m, "session_id", json_string(id));
	json_object_set_new(m, "live", json_false());
	json_object_set_new(m, "recovered", json_true());
	json_object_set_new(m, "chunks", json_integer(f->chunks));
	json_object_set_new(m, "wire_bytes", json_integer((json_int_t)f->bytes));
	json_object_set_new(m, "maps_files", json_integer(f->maps));
	if (!json_object_get(m, "next_chunk") || json_integer_value(json_object_get(m, "next_chunk")) < f->next)
		json_object_set_new(m, "next_chunk", json_integer(f->next));
	if (!json_object_get(m, "gaps"))
		json_object_set_new(m, "gaps", json_array());
	if (!json_object_get(m, "version"))
		json_object_set_new(m, "version", json_string(PL_VERSION));
	return m;
}

/* Rebuild and finalize one session folder a killed server left. */
static void recover(const char *root, const char *id)
{
	char dir[4400], rel[400], rel_dir[300];
	struct found f;
	json_t *old, *m;

	snprintf(dir, sizeof(dir), "%s/%s/%s", root, COLL_SESSIONS_DIR, id);
	snprintf(rel, sizeof(rel), "%s/%s/metadata.json", COLL_SESSIONS_DIR, id);
	old = coll_read_json(root, rel, 16u << 20);
	if ((old && json_is_false(json_object_get(old, "live"))) || !scan_session(dir, &f)) {
		json_decref(old);
		return;  /* finalized (by us or by the seed), or unreadable */
	}
	if (f.chunks == 0 && !f.metrics) {
		json_decref(old);
		remove_empty(dir);
		return;
	}
	m = recovered_metadata(old, id, &f);
	set_spool_root(root);
	snprintf(rel_dir, sizeof(rel_dir), "%s/%s", COLL_SESSIONS_DIR, id);
	if (write_metrics_json(dir, rel_dir))
		coll_link_log("%s: recovered, but its metrics.json could not be written", id);
	if (coll_write_json(root, rel, m))
		coll_link_log("%s: recovered, but its metadata.json could not be written", id);
	json_decref(m);
	json_decref(old);
}

void spool_sweep(const char *artifact_root)
{
	char dir[4200];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", artifact_root, COLL_SESSIONS_DIR);
	if (!(d = opendir(dir)))
		return;
	while ((de = readdir(d)))
		if (coll_id_ok(de->d_name) && de->d_type == DT_DIR)
			recover(artifact_root, de->d_name);
	closedir(d);
}
