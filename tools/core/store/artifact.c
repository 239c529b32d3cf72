/* artifact.c - writing and reading analysis artifacts (see artifact.h).
 *
 * Each document goes through a buffered writer that feeds every byte to a
 * SHA-256; the id hashes the two digests.  The stack table is streamed by
 * stack_table.c, for a big profile on a thread of its own while the
 * summary is written.  The summary is streamed too, by summary.c: its
 * values are made and encoded by jansson a piece at a time, so memory is
 * bounded by the largest piece rather than by the number of functions,
 * and it is written straight to its file, with a placeholder id of the
 * same length that is overwritten in place once the hash is known.  Its
 * provenance comes last, so the SHA-256 of a big input, which a thread of
 * input.c may still be computing, is waited for only then.  Every list is
 * in id order or a total order, and reals are printed with 10 significant
 * digits, which makes the output byte-identical for the same input.
 * Artifacts are read whole into memory and parsed by jansson from the
 * buffer.
 */
#include "artifact.h"
#include "base/escape.h"
#include "base/progress.h"
#include "base/sha256.h"
#include "stack_table.h"
#include "summary.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------- hashed output */

#define HASHED_FLUSH (64 * 1024)
#define HEAD_KEEP 512

/* A file written through a buffer, every byte also fed to the SHA-256 that
 * makes the analysis id; the first HEAD_KEEP bytes are kept so the id
 * placeholder can be found in them afterwards. */
struct hashed_out {
	FILE *fp;
	struct pl_sha256 sha;
	bool failed;
	char *buf;            /* HASHED_FLUSH bytes */
	size_t len;
	char head[HEAD_KEEP];
	size_t head_len;
};

static void hashed_bytes(struct hashed_out *o, const char *s, size_t n)
{
	pl_sha256_update(&o->sha, s, n);
	if (n && fwrite(s, 1, n, o->fp) != n)
		o->failed = true;
}

static void hashed_flush(struct hashed_out *o)
{
	hashed_bytes(o, o->buf, o->len);
	o->len = 0;
}

/* A json_dump_callback_t (and the stack table's emit function).  jansson
 * calls it for every token, so the common case is one short memcpy. */
static int hashed_write(const char *s, size_t n, void *data)
{
	struct hashed_out *o = data;

	if (o->head_len < HEAD_KEEP) {
		size_t k = n < HEAD_KEEP - o->head_len ? n : HEAD_KEEP - o->head_len;
		memcpy(o->head + o->head_len, s, k);
		o->head_len += k;
	}
	if (n > HASHED_FLUSH - o->len) {
		hashed_flush(o);
		if (n >= HASHED_FLUSH) {
			hashed_bytes(o, s, n);
			return o->failed ? -1 : 0;
		}
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	return o->failed ? -1 : 0;
}

/* Start writing `fp` through `o` (zeroed), with a hash of its own. */
static void hashed_start(struct hashed_out *o, FILE *fp)
{
	o->fp = fp;
	o->buf = pl_xmalloc(HASHED_FLUSH);
	pl_sha256_init(&o->sha);
}

/* Write out what is buffered; the hash stays for the id. */
static void hashed_end(struct hashed_out *o)
{
	hashed_flush(o);
	free(o->buf);
	o->buf = NULL;
}

/* ------------------------------------------------------------- writing */

bool pl_artifact_id_valid(const char *id)
{
	if (strlen(id) != 23 || strncmp(id, "an-", 3) != 0)
		return false;
	for (size_t i = 3; i < 23; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	return true;
}

/* Put the id over its placeholder in the file, at the offset where it
 * was written (found in the kept head). */
static enum pl_err patch_id(struct hashed_out *o, const char *id, struct pl_error *err)
{
	static const char needle[] = "\"id\":\"" PL_SUMMARY_ID_PLACEHOLDER "\"";
	const char *at = memmem(o->head, o->head_len, needle, sizeof(needle) - 1);
	off_t off;

	if (!at)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "summary id placeholder not found");
	off = (off_t)(at - o->head) + 6;
	if (fflush(o->fp) != 0 || pwrite(fileno(o->fp), id, strlen(id), off) != (ssize_t)strlen(id))
		return pl_fail(err, PL_ERR_OUTPUT, "check free space at the artifact root",
			       "cannot write the analysis id: %s", strerror(errno));
	return PL_OK;
}

/* From this many unique stacks on, the stack table is written on a
 * thread of its own while the summary is written: below, starting
 * the thread costs about what it saves. */
#define STACKS_THREAD_FROM 10000

/* The stack table, written through its own hashed output to its own
 * file, which it also syncs to disk. */
struct stacks_out {
	const struct pl_profile *p;
	struct pl_atomic_file *file;
	struct hashed_out o;
	pthread_t thread;
	bool threaded;
};

static void *stacks_write(void *arg)
{
	struct stacks_out *s = arg;

	if (!pl_stack_table_write(s->p, hashed_write, &s->o))
		s->o.failed = true;
	hashed_end(&s->o);
	if (pl_atomic_sync(s->file) != 0)
		s->o.failed = true;
	return NULL;
}

static void stacks_start(struct stacks_out *s, const struct pl_profile *p,
			 struct pl_atomic_file *file)
{
	s->p = p;
	s->file = file;
	hashed_start(&s->o, file->fp);
	s->threaded = p->stack_keys.count >= STACKS_THREAD_FROM &&
		      pthread_create(&s->thread, NULL, stacks_write, s) == 0;
	if (!s->threaded)
		stacks_write(s);
}

static void stacks_finish(struct stacks_out *s)
{
	if (s->threaded)
		pthread_join(s->thread, NULL);
}

/* The analysis id: the SHA-256 of the two documents' SHA-256s (stack
 * table, then summary as written, with the placeholder id). */
static void analysis_id(struct hashed_out *stacks, struct hashed_out *summary, char id[32])
{
	unsigned char both[2 * PL_SHA256_SIZE];
	char hex[65];

	pl_sha256_final(&stacks->sha, both);
	pl_sha256_final(&summary->sha, both + PL_SHA256_SIZE);
	pl_sha256_hex(both, sizeof(both), hex);
	snprintf(id, 32, "an-%.20s", hex);
}

/* Everything but the summary's last lines is written: put it on disk
 * while a big input's hash finishes, so that the fsync at commit has
 * only those lines and the id to write (a 15 MB summary takes about
 * 20 ms to sync on the project's VM). */
static void summary_to_disk(void *data)
{
	struct hashed_out *o = data;

	hashed_flush(o);
	if (fflush(o->fp) != 0 || fdatasync(fileno(o->fp)) != 0)
		o->failed = true;
}

/* Both documents written: name them by the id and move them into place. */
static enum pl_err commit_both(struct pl_atomic_file *stacks_file,
			       struct pl_atomic_file *summary_file,
			       struct pl_artifact_ref *ref, const char *root,
			       struct pl_error *err)
{
	enum pl_err rc;

	snprintf(ref->summary_path, sizeof(ref->summary_path), "%s/analyses/%s.json", root, ref->id);
	snprintf(ref->stacks_path, sizeof(ref->stacks_path), "%s/analyses/%s.stacks.json", root, ref->id);
	snprintf(stacks_file->path, sizeof(stacks_file->path), "%s", ref->stacks_path);
	snprintf(summary_file->path, sizeof(summary_file->path), "%s", ref->summary_path);
	if ((rc = pl_atomic_commit(stacks_file, err))) {
		pl_atomic_abort(summary_file);
		return rc;
	}
	return pl_atomic_commit(summary_file, err);
}

/* The two documents are written side by side (see STACKS_THREAD_FROM);
 * the summary is streamed straight to its file (summary.c), and its
 * id patched in once both are hashed. */
enum pl_err pl_artifact_write(struct pl_profile *p, const char *root,
			      struct pl_artifact_ref *ref, json_t **summary_out,
			      struct pl_error *err)
{
	struct pl_atomic_file stacks_file, summary_file;
	struct stacks_out stacks = {0};
	struct hashed_out o = {0};
	json_t *brief = json_object();
	char tmp_path[4096];
	enum pl_err rc;

	memset(ref, 0, sizeof(*ref));
	snprintf(tmp_path, sizeof(tmp_path), "%s/analyses/pending.stacks.json", root);
	if ((rc = pl_atomic_open(&stacks_file, tmp_path, err)))
		goto out;
	snprintf(tmp_path, sizeof(tmp_path), "%s/analyses/pending.json", root);
	if ((rc = pl_atomic_open(&summary_file, tmp_path, err))) {
		pl_atomic_abort(&stacks_file);
		goto out;
	}
	stacks_start(&stacks, p, &stacks_file);
	hashed_start(&o, summary_file.fp);
	rc = pl_summary_write(p, hashed_write, &o, summary_to_disk, brief, err);
	hashed_end(&o);
	stacks_finish(&stacks);
	o.failed |= stacks.o.failed;
	if (rc == PL_OK && o.failed)
		rc = pl_fail(err, PL_ERR_OUTPUT, "check free space at the artifact root",
			     "cannot write the analysis under '%s'", root);
	if (rc == PL_OK) {
		analysis_id(&stacks.o, &o, ref->id);
		rc = patch_id(&o, ref->id, err);
	}
	if (rc == PL_OK) {
		rc = commit_both(&stacks_file, &summary_file, ref, root, err);
	} else {
		pl_atomic_abort(&stacks_file);
		pl_atomic_abort(&summary_file);
	}
out:
	if (rc == PL_OK && summary_out)
		*summary_out = brief;
	else
		json_decref(brief);
	return rc;
}

/* ------------------------------------------------------------- reading */

/* The whole file in memory (jansson then parses from a buffer, which is
 * several times faster than from a FILE). */
static char *read_all(const char *path, size_t *len)
{
	struct stat sb;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return NULL;
	}
	buf = pl_xmalloc((size_t)sb.st_size + 1);
	pl_prefault(buf, (size_t)sb.st_size);
	/* Loading big artifacts (a compare of two large profiles) is work a
	 * caller waits for: each file counts as an input (progress.h). */
	pl_progress_input_start((uint64_t)sb.st_size);
	*len = pl_read_full(fd, buf, (size_t)sb.st_size);
	pl_progress_input(*len);
	close(fd);
	return buf;
}

static enum pl_err load_json(const char *path, json_t **out, struct pl_error *err)
{
	json_error_t je;
	size_t len = 0;
	char *text = read_all(path, &len);

	if (!text) {
		*out = NULL;
		if (access(path, F_OK) != 0)
			return pl_fail(err, PL_ERR_INPUT, "call analyze first, or list the artifacts to find a valid id",
				       "no analysis at '%s'", path);
		return pl_fail(err, PL_ERR_MALFORMED, "analyze the input again to rebuild the artifact",
			       "cannot read artifact '%s': %s", path, strerror(errno));
	}
	/* Parsed, the summary takes about 3.6 times its text. */
	pl_heap_reserve(len * 4);
	*out = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!*out)
		return pl_fail(err, PL_ERR_MALFORMED, "analyze the input again to rebuild the artifact",
			       "artifact '%s' is not valid JSON: %s (line %d)", path, je.text, je.line);
	return PL_OK;
}

static enum pl_err check_id(const char *id, struct pl_error *err)
{
	if (!pl_artifact_id_valid(id))
		return pl_fail(err, PL_ERR_USAGE, "pass the analysis_id printed by analyze (an- and 20 hex digits)",
			       "'%s' is not an analysis id", id);
	return PL_OK;
}

enum pl_err pl_artifact_load_summary(const char *root, const char *id,
				     json_t **summary, struct pl_error *err)
{
	char path[4096];

	if (check_id(id, err))
		return err->code;
	snprintf(path, sizeof(path), "%s/analyses/%s.json", root, id);
	return load_json(path, summary, err);
}

/* Past the JSON string opening at `p` (its '"'); NULL if it never ends.
 * A quote ends it unless an odd number of backslashes stands before it. */
static const char *skip_string(const char *p, const char *end)
{
	const char *q = p;

	while ((q = memchr(q + 1, '"', (size_t)(end - q - 1)))) {
		const char *b = q;
		while (b - 1 > p && b[-1] == '\\')
			b--;
		if ((q - b) % 2 == 0)
			return q + 1;
	}
	return NULL;
}

static const char *skip_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
		p++;
	return p;
}

/* The bytes skip_value stops at inside a container. */
static const bool structural[256] = {['"'] = true, ['{'] = true, ['['] = true, ['}'] = true,
				     [']'] = true, [','] = true};

/* Past the JSON value at `p`, brackets and strings followed (not checked
 * otherwise: the wanted values are parsed); NULL if it never ends. */
static const char *skip_value(const char *p, const char *end)
{
	size_t depth = 0;

	while (p < end) {
		if (depth && !structural[(unsigned char)*p]) {
			p++;
			continue;
		}
		if (*p == '"') {
			if (!(p = skip_string(p, end)))
				return NULL;
			if (!depth)
				return p;
			continue;
		}
		if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			if (!depth)
				return p;  /* a scalar's end: the enclosing object's */
			if (!--depth)
				return p + 1;
		} else if (!depth && *p == ',') {
			return p;
		}
		p++;
	}
	return NULL;
}

static enum pl_err pick_keys(const char *text, size_t len, const char *const *keys, size_t n,
			     json_t *out)
{
	const char *p = text, *end = text + len;

	p = skip_space(p, end);
	if (p == end || *p++ != '{')
		return PL_ERR_MALFORMED;
	p = skip_space(p, end);
	if (p < end && *p == '}')
		return skip_space(p + 1, end) == end ? PL_OK : PL_ERR_MALFORMED;
	for (;;) {
		const char *k, *ke, *v, *ve;
		p = skip_space(p, end);
		if (p == end || *p != '"' || !(ke = skip_string(p, end)))
			return PL_ERR_MALFORMED;
		k = p + 1;
		p = skip_space(ke, end);
		if (p == end || *p++ != ':')
			return PL_ERR_MALFORMED;
		v = skip_space(p, end);
		if (!(ve = skip_value(v, end)) || ve == v)
			return PL_ERR_MALFORMED;
		for (size_t i = 0; i < n; i++) {
			size_t kl = strlen(keys[i]);
			json_t *val;
			if ((size_t)(ke - 1 - k) != kl || memcmp(k, keys[i], kl) != 0)
				continue;
			if (json_object_get(out, keys[i]) ||
			    !(val = json_loadb(v, (size_t)(ve - v), JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL)))
				return PL_ERR_MALFORMED;
			json_object_set_new(out, keys[i], val);
		}
		p = skip_space(ve, end);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p == end || *p != '}')
			return PL_ERR_MALFORMED;
		p++;
		break;
	}
	return skip_space(p, end) == end ? PL_OK : PL_ERR_MALFORMED;
}

enum pl_err pl_artifact_load_summary_keys(const char *root, const char *id, const char *const *keys,
					  size_t n, json_t **summary, struct pl_error *err)
{
	char path[4096];
	size_t len = 0;
	char *text;

	*summary = NULL;
	if (check_id(id, err))
		return err->code;
	snprintf(path, sizeof(path), "%s/analyses/%s.json", root, id);
	if (!(text = read_all(path, &len)))
		return load_json(path, summary, err);  /* says why, as a full load */
	*summary = json_object();
	if (pick_keys(text, len, keys, n, *summary) != PL_OK) {
		free(text);
		json_decref(*summary);
		*summary = NULL;
		return pl_fail(err, PL_ERR_MALFORMED, "analyze the input again to rebuild the artifact",
			       "artifact '%s' is not a valid summary", path);
	}
	free(text);
	return PL_OK;
}

enum pl_err pl_artifact_load_profile(const char *root, const char *id,
				     struct pl_profile *p, struct pl_error *err)
{
	char path[4096];
	json_t *doc;
	enum pl_err rc;

	if (check_id(id, err))
		return err->code;
	snprintf(path, sizeof(path), "%s/analyses/%s.stacks.json", root, id);
	if ((rc = load_json(path, &doc, err)))
		return rc;
	rc = pl_stack_table_read(p, doc, id, err);
	json_decref(doc);
	return rc;
}

/* ------------------------------------------------------------ listing */

static bool safe_name(const char *s)
{
	if (!*s || *s == '.')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
			return false;
	return true;
}

static const char *mime_of(const char *name)
{
	if (strlen(name) > 3 && strcmp(name + strlen(name) - 3, ".md") == 0)
		return "text/markdown";
	size_t n = strlen(name);

	if (n > 5 && strcmp(name + n - 5, ".json") == 0)
		return "application/json";
	if (n > 4 && strcmp(name + n - 4, ".svg") == 0)
		return "image/svg+xml";
	if (n > 3 && strcmp(name + n - 3, ".gz") == 0)
		return "application/gzip";  /* pprof exports (.pb.gz) */
	return "text/plain";
}

static const char *kind_of(const char *dir, const char *name)
{
	size_t n = strlen(name);

	if (strcmp(dir, "exports") == 0)
		return "export";
	if (strcmp(dir, "benchmarks") == 0)
		return "benchmark";
	if (n > 12 && strcmp(name + n - 12, ".stacks.json") == 0)
		return "stacks";
	return "analysis";
}

static int cmp_path_field(const void *a, const void *b)
{
	return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "path")),
		      json_string_value(json_object_get(*(json_t *const *)b, "path")));
}

/* An analysis is complete once its summary is there: commit_both renames
 * the stack table first and the summary last, so a stack table alone is
 * what a write that died in between (a SIGKILLed server) leaves. */
static bool orphan_stacks(const char *path, const char *dir, const char *name)
{
	size_t n = strlen(name), suffix = strlen(".stacks.json");
	char summary[4096 + 512];
	struct stat sb;

	if (strcmp(dir, "analyses") != 0 || n <= suffix || strcmp(name + n - suffix, ".stacks.json") != 0)
		return false;
	snprintf(summary, sizeof(summary), "%s/%.*s.json", path, (int)(n - suffix), name);
	return lstat(summary, &sb) < 0;
}

static void list_dir(const char *root, const char *dir, json_t *out)
{
	char path[4096];
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "%s/%s", root, dir);
	if (!(d = opendir(path)))
		return;
	while ((de = readdir(d))) {
		struct stat sb;
		char full[4096 + 512], rel[600];
		if (!safe_name(de->d_name) || strstr(de->d_name, ".tmp-") ||
		    strncmp(de->d_name, "pending.", 8) == 0 || orphan_stacks(path, dir, de->d_name))
			continue;
		snprintf(full, sizeof(full), "%s/%s", path, de->d_name);
		if (lstat(full, &sb) < 0 || !S_ISREG(sb.st_mode))
			continue;
		snprintf(rel, sizeof(rel), "%s/%s", dir, de->d_name);
		json_array_append_new(out, json_pack("{s:s,s:s,s:s,s:I,s:s}", "path", rel,
			"kind", kind_of(dir, de->d_name), "uri", "", "bytes", (json_int_t)sb.st_size,
			"mime_type", mime_of(de->d_name)));
	}
	closedir(d);
}

json_t *pl_artifact_list(const char *root)
{
	json_t *all = json_array(), *sorted = json_array(), *v;
	json_t **items;
	size_t n, i;

	list_dir(root, "analyses", all);
	list_dir(root, "exports", all);
	list_dir(root, "benchmarks", all);
	n = json_array_size(all);
	items = pl_xmalloc((n + 1) * sizeof(*items));
	json_array_foreach(all, i, v)
		items[i] = v;
	qsort(items, n, sizeof(*items), cmp_path_field);
	for (i = 0; i < n; i++) {
		char uri[700];
		snprintf(uri, sizeof(uri), "perflens://artifacts/%s",
			 json_string_value(json_object_get(items[i], "path")));
		json_object_set_new(items[i], "uri", json_string(uri));
		json_array_append(sorted, items[i]);
	}
	free(items);
	json_decref(all);
	return sorted;
}

bool pl_artifact_rel_path(const char *p, char *rel, size_t cap)
{
	static const char scheme[] = "perflens://artifacts/";
	const char *slash;

	if (!p)
		return false;
	if (strncmp(p, scheme, sizeof(scheme) - 1) == 0)
		p += sizeof(scheme) - 1;
	slash = strchr(p, '/');
	/* collections/co-ID/FILE: what collect_profile wrote; sessions/ID/FILE:
	 * a device session's chunk_NNNNN.zst, metadata.json...;
	 * fleet/selections/FILE: a fleet selection fleet_analyze wrote. */
	if (slash && ((slash - p == 11 && strncmp(p, "collections", 11) == 0) ||
		      (slash - p == 5 && strncmp(p, "fleet", 5) == 0 && strncmp(slash, "/selections/", 12) == 0) ||
		      (slash - p == 8 && strncmp(p, "sessions", 8) == 0 && strchr(slash + 1, '/')))) {
		const char *second = strchr(slash + 1, '/');
		char id[64];
		if (!second || second - slash - 1 >= (long)sizeof(id) || strchr(second + 1, '/') ||
		    !safe_name(second + 1) || strlen(p) >= cap)
			return false;
		memcpy(id, slash + 1, (size_t)(second - slash - 1));
		id[second - slash - 1] = '\0';
		if (!safe_name(id))
			return false;
		memcpy(rel, p, strlen(p) + 1);
		return true;
	}
	if (!slash || strchr(slash + 1, '/') || !safe_name(slash + 1))
		return false;
	/* sessions/ID: a device session folder the agent link spools. */
	if (slash - p == 8 && strncmp(p, "sessions", 8) == 0 && strlen(p) < cap) {
		memcpy(rel, p, strlen(p) + 1);
		return true;
	}
	if (!((slash - p == 8 && strncmp(p, "analyses", 8) == 0) ||
	      (slash - p == 7 && strncmp(p, "exports", 7) == 0) ||
	      (slash - p == 10 && strncmp(p, "benchmarks", 10) == 0)))
		return false;
	if (strlen(p) >= cap)
		return false;
	memcpy(rel, p, strlen(p) + 1);
	return true;
}

/* ROOT/REL for reading, following no symbolic link below ROOT: each
 * folder of REL is opened O_PATH | O_NOFOLLOW from the one before (O_PATH,
 * so that Landlock in a worker asks nothing of it), then the file
 * O_NOFOLLOW.  The server itself (resources/read, the viewer) opens
 * artifacts with no Landlock behind it: an "exports" link to / must not
 * make exports/passwd readable.  -1 with errno set when it cannot. */
static int open_beneath(const char *root, const char *rel)
{
	int dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC), fd;
	char part[256];

	while (dir >= 0) {
		size_t n = strcspn(rel, "/");

		if (!rel[n]) {
			fd = openat(dir, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
			close(dir);
			return fd;
		}
		if (n == 0 || n >= sizeof(part)) {
			close(dir);
			errno = ENOENT;
			return -1;
		}
		memcpy(part, rel, n);
		part[n] = '\0';
		fd = openat(dir, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(dir);
		dir = fd;
		rel += n + 1;
	}
	return -1;
}

int pl_artifact_open(const char *root, const char *rel, uint64_t *size,
		     struct pl_error *err)
{
	struct stat sb;
	int fd = open_beneath(root, rel);

	if (fd < 0) {
		pl_fail(err, PL_ERR_INPUT, "call list_artifacts to see what exists",
			"no artifact '%s'", rel);
		return -1;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		pl_fail(err, PL_ERR_PATH, "call list_artifacts to see what exists",
			"artifact '%s' is not a regular file", rel);
		return -1;
	}
	*size = (uint64_t)sb.st_size;
	return fd;
}
