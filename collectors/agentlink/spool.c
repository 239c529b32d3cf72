/* spool.c - one session on disk, in the seed's layout (see
 * docs/agent-protocol.md, "Sessions on disk"):
 *
 *   sessions/ID/chunk_NNNNN.zst   a flag-1 payload exactly as received
 *   sessions/ID/chunk_NNNNN.txt   a flag-0 payload
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

void spool_open(struct spool *s, const char *artifact_root, const char *device, json_t *platform)
{
	static unsigned serial;
	struct timespec t;
	struct tm tm;
	char stamp[32];

	memset(s, 0, sizeof(*s));
	snprintf(spool_root, sizeof(spool_root), "%s", artifact_root);
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
	s->platform = platform ? json_deep_copy(platform) : json_null();
	spool_now_iso(s->started, sizeof(s->started));
	s->live = true;
}

static bool make_dir(struct spool *s)
{
	struct pl_error err;

	if (s->dir_made)
		return true;
	if (pl_make_dirs(s->dir, &err))
		return false;
	s->dir_made = true;
	spool_write_metadata(s);
	return true;
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
	if (recovered)
		json_object_set_new(m, "recovered", json_true());
	return m;
}

static void rewrite_in_place(const char *dir, json_t *m)
{
	char path[4400];
	char *text = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
	int fd;

	snprintf(path, sizeof(path), "%s/metadata.json", dir);
	if (text && (fd = open(path, O_WRONLY | O_CLOEXEC)) >= 0) {
		size_t n = strlen(text);
		if (pwrite(fd, text, n, 0) == (ssize_t)n)
			(void)ftruncate(fd, (off_t)n);
		close(fd);
	}
	free(text);
}

void spool_write_metadata(struct spool *s)
{
	char rel[300];
	json_t *m;

	if (!s->dir_made)
		return;
	m = metadata_json(s, false);
	snprintf(rel, sizeof(rel), "%s/%s/metadata.json", COLL_SESSIONS_DIR, s->id);
	/* On a full disk the temp file cannot be made: the gap must still be
	 * recorded, so the file is rewritten in place (its pages are there
	 * already; not atomic, which only a full disk costs). */
	if (coll_write_json(spool_root, rel, m) == ENOSPC)
		rewrite_in_place(s->dir, m);
	json_decref(m);
}

bool spool_chunk(struct spool *s, const void *p, size_t n, bool zstd, long long text_bytes,
		 char *why, size_t why_cap)
{
	char name[64], path[4300];
	unsigned index = s->next_chunk++;
	int e;

	snprintf(name, sizeof(name), "chunk_%05u.%s", index, zstd ? "zst" : "txt");
	snprintf(path, sizeof(path), "%s/%s", s->dir, name);
	e = make_dir(s) ? coll_write_file_atomic(path, p, n, 0644, true) : (errno ? errno : EIO);
	if (e) {
		snprintf(why, why_cap, "%s could not be written: %s", name, strerror(e));
		json_array_append_new(s->gaps, json_pack("{s:i,s:s}", "chunk", (int)index,
							 "reason", strerror(e)));
	} else {
		s->chunks++;
		s->wire_bytes += n;
		s->text_bytes += (unsigned long long)text_bytes;
		spool_now_iso(s->last_chunk, sizeof(s->last_chunk));
	}
	spool_write_metadata(s);
	return e == 0;
}

void spool_gap(struct spool *s, const char *reason)
{
	json_array_append_new(s->gaps, json_pack("{s:i,s:s}", "chunk", (int)s->next_chunk++,
						 "reason", reason));
	if (make_dir(s))
		spool_write_metadata(s);
}

void spool_metrics(struct spool *s, json_t *frame)
{
	const char *type = json_string_value(json_object_get(frame, "type"));
	char path[4300];
	char *text;
	FILE *f;

	if (!type || !make_dir(s))
		return;
	text = json_dumps(frame, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
	snprintf(path, sizeof(path), "%s/metrics.jsonl", s->dir);
	/* One write(2) per line with O_APPEND: lines never interleave. */
	if (text && (f = fopen(path, "ae"))) {
		size_t n = strlen(text);
		text[n] = '\n';
		if (fwrite(text, 1, n + 1, f) == n + 1 && fflush(f) == 0) {
			s->metrics++;
			json_object_set_new(s->metrics_counts, type,
				json_integer(json_integer_value(json_object_get(s->metrics_counts, type)) + 1));
		}
		fclose(f);
	}
	free(text);
}

void spool_maps(struct spool *s, json_t *maps)
{
	char rel[300];

	if (!make_dir(s))
		return;
	snprintf(rel, sizeof(rel), "%s/%s/maps_%05u.json", COLL_SESSIONS_DIR, s->id, s->next_chunk);
	if (coll_write_json(spool_root, rel, maps) == 0)
		s->maps++;
	spool_write_metadata(s);
}

/* metrics.json, the seed's {type: [frames]}, from metrics.jsonl. */
static void write_metrics_json(const char *dir, const char *rel_dir)
{
	char path[4300], rel[400];
	char *line = NULL;
	size_t cap = 0;
	json_t *all = json_object();
	FILE *f;

	snprintf(path, sizeof(path), "%s/metrics.jsonl", dir);
	if (!(f = fopen(path, "re"))) {
		json_decref(all);
		return;
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
	(void)coll_write_json(spool_root, rel, all);
	json_decref(all);
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

void spool_close(struct spool *s)
{
	char rel[300];

	if (s->live && s->dir_made) {
		s->live = false;
		snprintf(rel, sizeof(rel), "%s/%s", COLL_SESSIONS_DIR, s->id);
		if (s->chunks == 0 && s->metrics == 0 && json_array_size(s->gaps) == 0)
			remove_empty(s->dir);
		else {
			write_metrics_json(s->dir, rel);
			spool_write_metadata(s);
		}
	}
	s->live = false;
	json_decref(s->gaps);
	json_decref(s->metrics_counts);
	json_decref(s->platform);
	json_decref(s->counters);
	json_decref(s->capture);
	s->gaps = s->metrics_counts = s->platform = s->counters = s->capture = NULL;
}

/* ------------------------------------------------------------ the sweep */

/* Rebuild and finalize one session folder a killed server left. */
static void recover(const char *root, const char *id)
{
	char dir[4400], path[4800], rel[400];
	unsigned chunks = 0, maps = 0, last = 0;
	unsigned long long bytes = 0;
	bool any = false, has_metrics = false;
	json_t *old, *m;
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s/%s", root, COLL_SESSIONS_DIR, id);
	snprintf(rel, sizeof(rel), "%s/%s/metadata.json", COLL_SESSIONS_DIR, id);
	old = coll_read_json(root, rel, 16u << 20);
	if (old && json_is_false(json_object_get(old, "live"))) {
		json_decref(old);
		return;  /* finalized, by us or by the seed */
	}
	if (!(d = opendir(dir))) {
		json_decref(old);
		return;
	}
	while ((de = readdir(d))) {
		unsigned idx;
		struct stat sb;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_name[0] == '.') {
			/* Only temps start with '.' here: a chunk or metadata the
			 * killed server was writing. */
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				unlink(path);
			continue;
		}
		if (sscanf(de->d_name, "chunk_%u.", &idx) == 1 && stat(path, &sb) == 0) {
			chunks++;
			bytes += (unsigned long long)sb.st_size;
			if (!any || idx + 1 > last)
				last = idx + 1;
			any = true;
		} else if (strncmp(de->d_name, "maps_", 5) == 0)
			maps++;
		else if (strncmp(de->d_name, "metrics.json", 12) == 0)
			has_metrics = true;
	}
	closedir(d);
	if (chunks == 0 && !has_metrics) {
		json_decref(old);
		remove_empty(dir);
		return;
	}
	m = old && json_is_object(old) ? json_incref(old) : json_object();
	json_object_set_new(m, "session_id", json_string(id));
	json_object_set_new(m, "live", json_false());
	json_object_set_new(m, "recovered", json_true());
	json_object_set_new(m, "chunks", json_integer(chunks));
	json_object_set_new(m, "wire_bytes", json_integer((json_int_t)bytes));
	json_object_set_new(m, "maps_files", json_integer(maps));
	if (!json_object_get(m, "next_chunk") || json_integer_value(json_object_get(m, "next_chunk")) < last)
		json_object_set_new(m, "next_chunk", json_integer(last));
	if (!json_object_get(m, "gaps"))
		json_object_set_new(m, "gaps", json_array());
	if (!json_object_get(m, "version"))
		json_object_set_new(m, "version", json_string(PL_VERSION));
	snprintf(spool_root, sizeof(spool_root), "%s", root);
	snprintf(path, sizeof(path), "%s/%s", COLL_SESSIONS_DIR, id);
	write_metrics_json(dir, path);
	(void)coll_write_json(root, rel, m);
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
