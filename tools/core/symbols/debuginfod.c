/* debuginfod.c - a debuginfod client on libcurl (see debuginfod.h).
 *
 * libcurl is not linked: base/curl.h loads it on first need (or by
 * pl_debuginfod_preload()).  When the library cannot be loaded, a fetch
 * fails with PL_ERR_UNSUPPORTED naming the package.
 *
 * One fetch: check the arguments (lowercase hex build-id, a known kind,
 * http(s) server URLs only), look for an earlier answer in the cache
 * folder, then ask each server in turn for URL/buildid/HEX/KIND until one
 * answers 200.  Each server gets an equal share of the time still left,
 * so a dead first server cannot starve the others, and the whole fetch
 * never outlasts its timeout (connecting included).  The body goes
 * straight into the answer's descriptor - a temporary file beside its
 * cache place, renamed into place on success, or a sealed memfd - through
 * a write callback that stops at max_bytes.
 *
 * libcurl is kept on a short leash: http and https only, for redirects
 * too (no file://), at most MAX_REDIRECTS hops, no signals (the caller
 * may be threaded or sandboxed), proxies as the environment says
 * (libcurl's default).
 *
 * Outcomes: 404 from every server is PL_ERR_INPUT "not found"; otherwise
 * the first real failure decides: a timeout is PL_ERR_TIMEOUT, an answer
 * over max_bytes PL_ERR_LIMIT, anything else PL_ERR_EXTERNAL with curl's
 * own words; each names the server.
 */
#include "debuginfod.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/curl.h"
#include "base/fsatomic.h"
#include "base/util.h"
#include "base/version.h"

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U  /* Linux 6.3 */
#endif

#define DEFAULT_MAX_BYTES (1ull << 30)
#define DEFAULT_TIMEOUT_MS 10000u
#define MAX_SERVERS 16
#define MAX_URL 1024
#define MAX_BUILD_ID_HEX 128
#define MAX_REDIRECTS 3
#define SERVERS_TEXT 200  /* how much of the server list an error quotes */

/* Where the body of one answer goes. */
struct sink {
	int fd;
	uint64_t written;
	uint64_t max;
	bool too_big;
	int write_errno;
};

/* What one server said. */
enum answer { ANS_OK, ANS_NOT_FOUND, ANS_TIMEOUT, ANS_TOO_BIG, ANS_FAILED };

struct attempt {
	enum answer ans;
	char server[MAX_URL];  /* as configured, without trailing slashes */
	char url[MAX_URL + 160];  /* server/buildid/HEX/KIND */
	char why[CURL_ERROR_SIZE + 64];
	uint32_t share_ms;
};

/* ---------------------------------------------------------- arguments */

static bool valid_build_id(const char *hex)
{
	size_t n = hex ? strlen(hex) : 0;

	if (n < 2 || n > MAX_BUILD_ID_HEX || n % 2)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
			return false;
	return true;
}

static bool valid_kind(const char *kind)
{
	return kind && (strcmp(kind, "debuginfo") == 0 || strcmp(kind, "executable") == 0);
}

/* The servers of `urls`, each a [start, start+len) slice without its
 * trailing slashes; the count, or -1 with `err` set for a bad one. */
struct server {
	const char *s;
	size_t len;
};

static int split_servers(const char *urls, struct server *out, struct pl_error *err)
{
	const char *p = urls;
	int n = 0;

	while (*p) {
		size_t len;

		p += strspn(p, " \t\n");
		len = strcspn(p, " \t\n");
		if (!len)
			break;
		if (n == MAX_SERVERS) {
			pl_fail(err, PL_ERR_USAGE, "list at most 16 servers in --debuginfod",
				"too many debuginfod servers (more than %d)", MAX_SERVERS);
			return -1;
		}
		if (!(strncasecmp(p, "http://", 7) == 0 && len > 7) &&
		    !(strncasecmp(p, "https://", 8) == 0 && len > 8)) {
			pl_fail(err, PL_ERR_USAGE, "give http:// or https:// server URLs in --debuginfod "
				"or DEBUGINFOD_URLS", "debuginfod server '%.*s' is not an http or https URL",
				(int)(len > 200 ? 200 : len), p);
			return -1;
		}
		if (len > MAX_URL - MAX_BUILD_ID_HEX - 32) {
			pl_fail(err, PL_ERR_USAGE, "use a shorter server URL",
				"debuginfod server URL '%.60s...' is too long", p);
			return -1;
		}
		out[n].s = p;
		out[n].len = len;
		while (out[n].len > 0 && p[out[n].len - 1] == '/')
			out[n].len--;
		n++;
		p += len;
	}
	return n;
}

static enum pl_err check_args(const struct pl_debuginfod *d, const char *hex, const char *kind,
			      int *fd, struct pl_error *err)
{
	if (!d || !fd)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "pl_debuginfod_fetch without %s",
			       d ? "a descriptor to fill" : "a configuration");
	if (!valid_build_id(hex))
		return pl_fail(err, PL_ERR_USAGE, "give the build-id as 2 to 128 lowercase hex digits "
			       "(an even count), as inspect_elf reports it",
			       "'%.140s' is not a build-id", hex ? hex : "(null)");
	if (!valid_kind(kind))
		return pl_fail(err, PL_ERR_USAGE, "ask for \"debuginfo\" or \"executable\"",
			       "unknown debuginfod kind '%.40s'", kind ? kind : "(null)");
	if (d->cache_dir && (!*d->cache_dir || strlen(d->cache_dir) > 3000))
		return pl_fail(err, PL_ERR_USAGE, "give an absolute folder of at most 3000 bytes",
			       "bad debuginfod cache folder '%.60s'", d->cache_dir);
	return PL_OK;
}

/* -------------------------------------------------------------- cache */

static void set_source(char *source, size_t cap, const char *what)
{
	if (source && cap)
		snprintf(source, cap, "%s", what);
}

/* An earlier answer at `path`: a regular, non-empty file within the cap
 * (not a symlink).  Its descriptor, or -1. */
static int cache_lookup(const char *path, uint64_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > max) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The descriptor a body is written to: a temporary file in the cache
 * folder (its name in `tmp`), or a memfd when there is no cache. */
static enum pl_err open_sink(const struct pl_debuginfod *d, const char *hex, const char *kind,
			     char *tmp, size_t cap, int *fd, struct pl_error *err)
{
	char dir[3300];  /* check_args keeps cache_dir to 3000 bytes */

	tmp[0] = '\0';
	if (!d->cache_dir) {
		/* Not executable where the kernel can say so (a sandbox that
		 * may exec allows no other memfd). */
		*fd = memfd_create("perflens-debuginfod",
				   MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
		if (*fd < 0 && errno == EINVAL)  /* a kernel before 6.3 */
			*fd = memfd_create("perflens-debuginfod", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		if (*fd < 0)
			return pl_fail(err, PL_ERR_LIMIT, "close descriptors or give a cache folder",
				       "cannot create a memory file for build-id %s: %s", hex,
				       strerror(errno));
		return PL_OK;
	}
	snprintf(dir, sizeof(dir), "%s/%s", d->cache_dir, hex);
	if (pl_make_dirs(dir, err))
		return err->code;
	if ((size_t)snprintf(tmp, cap, "%s/.%s.tmp-XXXXXX", dir, kind) >= cap)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "cache path too long");
	*fd = mkostemp(tmp, O_CLOEXEC);
	if (*fd < 0) {
		int e = errno;
		tmp[0] = '\0';
		return pl_fail(err, PL_ERR_OUTPUT, "check that the debuginfod cache folder is writable",
			       "cannot create a file in '%s': %s", dir, strerror(e));
	}
	return PL_OK;
}

/* Turn the written sink into the read-only answer in *fd: rename the
 * temporary file into the cache and reopen it, or seal the memfd. */
static enum pl_err close_sink(int wfd, const char *tmp, const char *final, int *fd,
			      struct pl_error *err)
{
	int e;

	if (!tmp[0]) {
		if (fcntl(wfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0 ||
		    lseek(wfd, 0, SEEK_SET) < 0) {
			e = errno;
			close(wfd);
			return pl_fail(err, PL_ERR_INTERNAL, NULL, "cannot seal the answer: %s",
				       strerror(e));
		}
		*fd = wfd;
		return PL_OK;
	}
	fchmod(wfd, 0644);
	if (fsync(wfd) < 0 || close(wfd) < 0 || rename(tmp, final) < 0) {
		e = errno;
		unlink(tmp);
		return pl_fail(err, PL_ERR_OUTPUT, "check free space in the debuginfod cache folder",
			       "cannot write '%s': %s", final, strerror(e));
	}
	*fd = open(final, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (*fd < 0)
		return pl_fail(err, PL_ERR_OUTPUT, "check the debuginfod cache folder",
			       "cannot reopen '%s': %s", final, strerror(errno));
	return PL_OK;
}

/* ----------------------------------------------------------------- curl */

/* libcurl's functions (base/curl.h), set by curl_ready. */
static const struct pl_curl_api *curl_api;

/* libcurl loaded and initialised, or the error naming the fix. */
static enum pl_err curl_ready(struct pl_error *err)
{
	return pl_curl_ready("debuginfod", &curl_api, err);
}

bool pl_debuginfod_preload(void)
{
	return pl_curl_preload();
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct sink *s = arg;
	size_t n = size * nmemb, done = 0;

	if (s->written + n > s->max) {
		s->too_big = true;
		return 0;  /* curl stops with CURLE_WRITE_ERROR */
	}
	while (done < n) {
		ssize_t w = write(s->fd, data + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			s->write_errno = w < 0 ? errno : EIO;
			return 0;
		}
		done += (size_t)w;
	}
	s->written += n;
	return n;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The options that make every request bounded and http(s)-only. */
static CURLcode set_options(CURL *c, const struct attempt *a, struct sink *s, char *errbuf)
{
	CURLcode rc = CURLE_OK;

#define OPT(o, v) if (rc == CURLE_OK) rc = curl_api->easy_setopt(c, o, v)
	OPT(CURLOPT_URL, a->url);
	OPT(CURLOPT_PROTOCOLS_STR, "http,https");
	OPT(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	OPT(CURLOPT_FOLLOWLOCATION, 1L);
	OPT(CURLOPT_MAXREDIRS, (long)MAX_REDIRECTS);
	OPT(CURLOPT_NOSIGNAL, 1L);
	OPT(CURLOPT_TIMEOUT_MS, (long)a->share_ms);
	OPT(CURLOPT_CONNECTTIMEOUT_MS, (long)a->share_ms);
	OPT(CURLOPT_FAILONERROR, 1L);
	OPT(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)s->max);
	OPT(CURLOPT_WRITEFUNCTION, on_body);
	OPT(CURLOPT_WRITEDATA, s);
	OPT(CURLOPT_ERRORBUFFER, errbuf);
	OPT(CURLOPT_USERAGENT, "perflens/" PL_VERSION);
#undef OPT
	return rc;
}

/* Ask one server; the body lands in s->fd (emptied first). */
static void ask(struct attempt *a, struct sink *s)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	CURL *c = curl_api->easy_init();
	long status = 0;
	CURLcode rc;

	a->why[0] = '\0';
	s->written = 0;
	s->too_big = false;
	s->write_errno = 0;
	if (ftruncate(s->fd, 0) < 0 || lseek(s->fd, 0, SEEK_SET) < 0) {
		a->ans = ANS_FAILED;
		snprintf(a->why, sizeof(a->why), "cannot empty the answer file: %s", strerror(errno));
		if (c)
			curl_api->easy_cleanup(c);
		return;
	}
	if (!c) {
		a->ans = ANS_FAILED;
		snprintf(a->why, sizeof(a->why), "libcurl cannot start a request");
		return;
	}
	rc = set_options(c, a, s, errbuf);
	if (rc == CURLE_OK)
		rc = curl_api->easy_perform(c);
	curl_api->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_api->easy_cleanup(c);
	if (rc == CURLE_OK && status == 200 && s->written > 0) {
		a->ans = ANS_OK;
	} else if (rc == CURLE_HTTP_RETURNED_ERROR && status == 404) {
		a->ans = ANS_NOT_FOUND;
	} else if (rc == CURLE_OPERATION_TIMEDOUT) {
		a->ans = ANS_TIMEOUT;
	} else if (s->too_big || rc == CURLE_FILESIZE_EXCEEDED) {
		a->ans = ANS_TOO_BIG;
	} else {
		a->ans = ANS_FAILED;
		if (s->write_errno)
			snprintf(a->why, sizeof(a->why), "cannot store the answer: %s",
				 strerror(s->write_errno));
		else if (rc == CURLE_OK)
			snprintf(a->why, sizeof(a->why), "HTTP %ld with %s body", status,
				 s->written ? "a" : "an empty");
		else
			snprintf(a->why, sizeof(a->why), "%s", errbuf[0] ? errbuf : curl_api->easy_strerror(rc));
	}
}

/* -------------------------------------------------------------- report */

/* The error for a fetch that no server answered; `first` is the first
 * failure that was not a 404, or NULL when every server said 404. */
static enum pl_err report(const struct attempt *first, const char *urls, const char *hex,
			  const char *kind, uint64_t max, struct pl_error *err)
{
	if (!first)
		return pl_fail(err, PL_ERR_INPUT, "the servers do not index this binary: check the "
			       "build-id, or add a server that has it (--debuginfod URL)",
			       "build-id %s not found on %.*s%s", hex, SERVERS_TEXT, urls,
			       strlen(urls) > SERVERS_TEXT ? "..." : "");
	switch (first->ans) {
	case ANS_TIMEOUT:
		return pl_fail(err, PL_ERR_TIMEOUT, "check that the server is up and reachable, or "
			       "raise --debuginfod-timeout",
			       "debuginfod server %s did not answer within %u ms (the %s of build-id %s)",
			       first->server, first->share_ms, kind, hex);
	case ANS_TOO_BIG:
		return pl_fail(err, PL_ERR_LIMIT, "this %s is too large to fetch here; install it "
			       "locally instead", "the %s of build-id %s from %s is larger than %llu bytes",
			       kind, hex, first->server, (unsigned long long)max);
	default:
		return pl_fail(err, PL_ERR_EXTERNAL, "check the server URL (--debuginfod) and that "
			       "the server runs", "debuginfod server %s failed: %s (%s)", first->server,
			       first->why, first->url);
	}
}

/* --------------------------------------------------------------- fetch */

/* Try the servers in turn until one answers: true with that attempt in
 * `a`; else false, with the first failure other than a 404 in `bad`
 * (*have_bad false when every server said 404). */
static bool try_servers(const struct server *sv, int n, const char *hex, const char *kind,
			uint32_t timeout_ms, struct sink *s, struct attempt *a,
			struct attempt *bad, bool *have_bad)
{
	int64_t deadline = now_ms() + timeout_ms;

	*have_bad = false;
	for (int i = 0; i < n; i++) {
		int64_t left = deadline - now_ms();

		snprintf(a->server, sizeof(a->server), "%.*s", (int)sv[i].len, sv[i].s);
		snprintf(a->url, sizeof(a->url), "%s/buildid/%s/%s", a->server, hex, kind);
		if (left <= 0) {
			a->ans = ANS_TIMEOUT;
			a->share_ms = 0;
		} else {
			a->share_ms = (uint32_t)(left / (n - i));
			if (a->share_ms == 0)
				a->share_ms = 1;
			ask(a, s);
		}
		if (a->ans == ANS_OK)
			return true;
		if (a->ans != ANS_NOT_FOUND && !*have_bad) {
			*bad = *a;
			*have_bad = true;
		}
	}
	return false;
}

enum pl_err pl_debuginfod_fetch(const struct pl_debuginfod *d, const char *build_id_hex,
				const char *kind, int *fd, char *source, size_t source_cap,
				struct pl_error *err)
{
	struct pl_error local;
	struct server sv[MAX_SERVERS];
	struct attempt a, bad;
	struct sink s = {.fd = -1};
	char final[4096], tmp[4096];
	uint64_t max;
	bool have_bad;
	enum pl_err rc;
	int n;

	if (!err)
		err = &local;  /* helpers below read err->code */
	if ((rc = check_args(d, build_id_hex, kind, fd, err)))
		return rc;
	*fd = -1;
	max = d->max_bytes ? d->max_bytes : DEFAULT_MAX_BYTES;
	if (d->cache_dir) {
		snprintf(final, sizeof(final), "%s/%s/%s", d->cache_dir, build_id_hex, kind);
		if ((*fd = cache_lookup(final, max)) >= 0) {
			set_source(source, source_cap, final);
			return PL_OK;
		}
	}
	if (!d->urls || (n = split_servers(d->urls, sv, err)) == 0)
		return pl_fail(err, PL_ERR_UNSUPPORTED, "pass --debuginfod URL or set DEBUGINFOD_URLS",
			       "no debuginfod server is configured to fetch build-id %s", build_id_hex);
	if (n < 0)
		return err->code;
	if ((rc = curl_ready(err)))
		return rc;
	if ((rc = open_sink(d, build_id_hex, kind, tmp, sizeof(tmp), &s.fd, err)))
		return rc;
	s.max = max;
	if (!try_servers(sv, n, build_id_hex, kind, d->timeout_ms ? d->timeout_ms : DEFAULT_TIMEOUT_MS,
			 &s, &a, &bad, &have_bad)) {
		close(s.fd);
		if (tmp[0])
			unlink(tmp);
		return report(have_bad ? &bad : NULL, d->urls, build_id_hex, kind, max, err);
	}
	if ((rc = close_sink(s.fd, tmp, final, fd, err)))
		return rc;
	set_source(source, source_cap, a.url);
	return PL_OK;
}
