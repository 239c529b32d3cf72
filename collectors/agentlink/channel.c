/* channel.c - the state files and the control request channel shared by
 * the agent link and the device tools (see channel.h).
 *
 * Both sides only create files by writing a temporary name that starts
 * with '.' and renaming it, so a reader sees a whole file or none.  The
 * worker side polls for its answer with short sleeps (its seccomp filter
 * allows nanosleep, not inotify); the link side lists the requests folder
 * and takes the oldest file by modification time, then by name.
 */
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
#include "base/util.h"

#define POLL_NS 10000000L  /* 10 ms between looks at the answer */

bool coll_id_ok(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	if (n == 0 || n > 96 || id[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = id[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

int coll_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode, bool sync)
{
	char tmp[4200];
	const char *slash = strrchr(path, '/');
	size_t off = 0;
	int fd, e = 0;

	if (!slash || strlen(path) > 4000)
		return ENAMETOOLONG;
	snprintf(tmp, sizeof(tmp), "%.*s/.%s.tmp-XXXXXX", (int)(slash - path), path, slash + 1);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return errno;
	fchmod(fd, mode);
	while (off < len && !e) {
		ssize_t w = write(fd, (const char *)data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			e = w < 0 ? errno : EIO;
		else
			off += (size_t)w;
	}
	if (!e && sync && fdatasync(fd) < 0)
		e = errno;
	if (close(fd) < 0 && !e)
		e = errno;
	if (!e && rename(tmp, path) < 0)
		e = errno;
	if (e)
		unlink(tmp);
	return e;
}

static int write_json_mode(const char *artifact_root, const char *rel, json_t *doc, mode_t mode)
{
	char path[4096], dir[4096];
	char *text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
	const char *slash = strrchr(rel, '/');
	struct pl_error err;
	int e;

	if (!text)
		return ENOMEM;
	snprintf(path, sizeof(path), "%s/%s", artifact_root, rel);
	if (slash) {
		snprintf(dir, sizeof(dir), "%s/%.*s", artifact_root, (int)(slash - rel), rel);
		if (pl_make_dirs(dir, &err)) {
			free(text);
			return errno ? errno : EIO;
		}
	}
	e = coll_write_file_atomic(path, text, strlen(text), mode, false);
	free(text);
	return e;
}

int coll_write_json(const char *artifact_root, const char *rel, json_t *doc)
{
	return write_json_mode(artifact_root, rel, doc, 0644);
}

/* Overwrite the file at `path` with `text` in the blocks it holds already,
 * which a full disk still lets us write; false when it does not fit. */
static bool rewrite_in_place(const char *path, const char *text)
{
	size_t n = strlen(text);
	struct stat sb;
	bool ok = false;
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return false;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && n <= (size_t)sb.st_blocks * 512 &&
	    pwrite(fd, text, n, 0) == (ssize_t)n && ftruncate(fd, (off_t)n) == 0)
		ok = true;
	close(fd);
	return ok;
}

int coll_write_state(const char *artifact_root, const char *rel, json_t *doc, bool *landed)
{
	int e = coll_write_json(artifact_root, rel, doc);
	char path[4096], *text;

	*landed = e == 0;
	if (e != ENOSPC && e != EDQUOT)
		return e;
	snprintf(path, sizeof(path), "%s/%s", artifact_root, rel);
	if ((text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(12)))) {
		*landed = rewrite_in_place(path, text);
		free(text);
	}
	return e;
}

json_t *coll_read_json(const char *artifact_root, const char *rel, size_t max_bytes)
{
	char path[4096];
	struct stat sb;
	json_error_t je;

	snprintf(path, sizeof(path), "%s/%s", artifact_root, rel);
	if (stat(path, &sb) < 0 || !S_ISREG(sb.st_mode) || (size_t)sb.st_size > max_bytes)
		return NULL;
	return json_load_file(path, JSON_REJECT_DUPLICATES, &je);
}

/* A request id nobody else has: time, pid and a counter. */
static void new_request_id(char *out, size_t cap)
{
	static unsigned counter;
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	snprintf(out, cap, "r%lld%09ld-%d-%u", (long long)t.tv_sec, t.tv_nsec, (int)getpid(),
		 __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
}

static long long mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

enum pl_err coll_channel_call(const char *artifact_root, json_t *request, unsigned timeout_ms,
			      json_t **answer, struct pl_error *err)
{
	char id[64], rel[160], path[4096];
	json_t *req = json_deep_copy(request);
	long long deadline = mono_ms() + timeout_ms;
	int e;

	*answer = NULL;
	new_request_id(id, sizeof(id));
	json_object_set_new(req, "request_id", json_string(id));
	snprintf(rel, sizeof(rel), "%s/%s.json", COLL_REQUESTS_DIR, id);
	e = write_json_mode(artifact_root, rel, req, 0600);
	json_decref(req);
	if (e)
		return pl_fail(err, PL_ERR_OUTPUT, "check that the artifact root is writable",
			       "cannot write the device request: %s", strerror(e));
	snprintf(rel, sizeof(rel), "%s/%s.json", COLL_RESPONSES_DIR, id);
	snprintf(path, sizeof(path), "%s/%s", artifact_root, rel);
	while (mono_ms() < deadline) {
		struct timespec nap = {0, POLL_NS};
		if ((*answer = coll_read_json(artifact_root, rel, 4u << 20))) {
			unlink(path);
			return PL_OK;
		}
		nanosleep(&nap, NULL);
	}
	/* Nobody took it: take it back, so that no later link runs it. */
	snprintf(path, sizeof(path), "%s/%s/%s.json", artifact_root, COLL_REQUESTS_DIR, id);
	if (unlink(path) == 0)
		return pl_fail(err, PL_ERR_UNSUPPORTED,
			       "start perflens-mcp with --agent-listen ADDR:PORT or --allow-device-control "
			       "on this artifact root",
			       "no agent link answered: none runs on this artifact root");
	return pl_fail(err, PL_ERR_TIMEOUT, "call list_devices to see the device's state, then retry",
		       "the agent link took the request but did not answer within %u s", timeout_ms / 1000);
}

/* Requests by age: modification time, then name. */
struct pending {
	char name[128];
	struct timespec mtime;
};

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

json_t *coll_channel_take(const char *artifact_root, char *id, size_t cap)
{
	char dir[4096], path[4400];
	struct pending best = {{0}}, cur;
	struct dirent *de;
	bool have = false;
	DIR *d;
	json_t *req;

	snprintf(dir, sizeof(dir), "%s/%s", artifact_root, COLL_REQUESTS_DIR);
	if (!(d = opendir(dir)))
		return NULL;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		struct stat sb;
		if (de->d_name[0] == '.' || n < 6 || n >= sizeof(cur.name) ||
		    strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
			continue;
		memcpy(cur.name, de->d_name, n + 1);
		cur.mtime = sb.st_mtim;
		if (!have || cmp_pending(&cur, &best) < 0) {
			best = cur;
			have = true;
		}
	}
	closedir(d);
	if (!have)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, best.name);
	req = coll_read_json(artifact_root, path + strlen(artifact_root) + 1, 1u << 20);
	unlink(path);
	best.name[strlen(best.name) - 5] = '\0';
	snprintf(id, cap, "%s", best.name);
	if (!req || !coll_id_ok(id) ||
	    !json_is_string(json_object_get(req, "request_id")) ||
	    strcmp(json_string_value(json_object_get(req, "request_id")), id) != 0) {
		/* Unreadable or renamed: answered as such, once. */
		json_t *bad = json_pack("{s:b,s:s,s:s}", "ok", 0, "error", "the request could not be read",
					"hint", "call the tool again");
		if (coll_id_ok(id))
			coll_channel_answer(artifact_root, id, bad);
		json_decref(bad);
		json_decref(req);
		return NULL;
	}
	return req;
}

void coll_channel_answer(const char *artifact_root, const char *id, json_t *answer)
{
	char rel[200];

	snprintf(rel, sizeof(rel), "%s/%s.json", COLL_RESPONSES_DIR, id);
	(void)write_json_mode(artifact_root, rel, answer, 0600);
}
