/* test_debuginfod.c - unit tests for the debuginfod client (debuginfod.c).
 *
 * No outside network: argument checks fail before any request, the cache
 * is a temporary folder, and the servers are a tiny HTTP responder that
 * the test runs on 127.0.0.1 (one thread per connection).  Its routes are
 * path prefixes, so that one responder plays several servers:
 *   /buildid/HEX/KIND        200 with body_of(HEX, KIND) for KNOWN_ID, else 404
 *   /big/...                 200 announcing more than the cap (Content-Length)
 *   /stream/...              200 without Content-Length, 64 KiB, until close
 *   /hang/...                accepts, reads, never answers (until the client goes)
 *   /redir/...               302 to file:///etc/passwd
 *   /fail/...                500
 * The real debuginfod server is exercised by tests/integration/
 * test_debuginfod.sh; here the cases a real server cannot be made to
 * show (oversize, redirects to other protocols, 5xx) are checked, and the
 * client is run inside a sandboxed worker with and without allow_network.
 * libcurl is dlopen()ed: it is mapped only once a fetch needs it (or on
 * pl_debuginfod_preload(), which sandboxed workers call before confinement).
 */
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "symbols/debuginfod.h"
#include "base/error.h"
#include "sandbox/sandbox.h"
#include "base/util.h"

#define KNOWN_ID "0123456789abcdef0123456789abcdef01234567"
#define BODY_LEN 70000u  /* more than one curl write callback */

/* ------------------------------------------------------------ helpers */

static unsigned char body_byte(const char *kind, size_t i)
{
	return (unsigned char)((i * 131u + (kind[0] == 'd' ? 7u : 11u)) & 0xff);
}

static long long ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void send_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		c += w;
		n -= (size_t)w;
	}
}

/* ---------------------------------------------------- the responder */

static void answer_body(int fd, const char *kind, size_t len)
{
	char head[200], buf[4096];
	size_t done = 0;

	snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n"
		 "Connection: close\r\n\r\n", len);
	send_all(fd, head, strlen(head));
	while (done < len) {
		size_t n = len - done < sizeof(buf) ? len - done : sizeof(buf);
		for (size_t i = 0; i < n; i++)
			buf[i] = (char)body_byte(kind, done + i);
		send_all(fd, buf, n);
		done += n;
	}
}

static void answer_status(int fd, const char *status, const char *extra)
{
	char head[300];

	snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nContent-Length: 9\r\n%s"
		 "Connection: close\r\n\r\nnot here\n", status, extra);
	send_all(fd, head, strlen(head));
}

/* Wait (at most 10 s) until the client closes the connection. */
static void hang(int fd)
{
	struct pollfd p = {fd, POLLIN, 0};
	char buf[256];

	for (int i = 0; i < 100 && poll(&p, 1, 100) >= 0; i++)
		if ((p.revents & (POLLIN | POLLHUP)) && recv(fd, buf, sizeof(buf), 0) <= 0)
			return;
}

static void *serve_one(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char req[4096], path[1024], hex[200], kind[64];
	size_t n = 0;

	while (n < sizeof(req) - 1 && !memmem(req, n, "\r\n\r\n", 4)) {
		ssize_t r = recv(fd, req + n, sizeof(req) - 1 - n, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	req[n] = '\0';
	if (sscanf(req, "GET %1023s", path) != 1)
		path[0] = '\0';
	if (!strncmp(path, "/hang/", 6))
		hang(fd);
	else if (!strncmp(path, "/redir/", 7))
		answer_status(fd, "302 Found", "Location: file:///etc/passwd\r\n");
	else if (!strncmp(path, "/fail/", 6))
		answer_status(fd, "500 Internal Server Error", "");
	else if (!strncmp(path, "/stream/", 8)) {
		const char *head = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n";
		char buf[4096] = {0};
		send_all(fd, head, strlen(head));
		for (int i = 0; i < 16; i++)
			send_all(fd, buf, sizeof(buf));
	} else if (sscanf(path, "/buildid/%199[^/]/%63s", hex, kind) == 2 &&
		   !strcmp(hex, KNOWN_ID))
		answer_body(fd, kind, BODY_LEN);
	else
		answer_status(fd, "404 Not Found", "");
	close(fd);
	return NULL;
}

/* A connection: /big/ announces 5 MB and then sends nothing; the other
 * routes are serve_one's. */
static void *serve_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char peek[64];
	ssize_t r = recv(fd, peek, sizeof(peek) - 1, MSG_PEEK);

	if (r > 9 && !strncmp(peek, "GET /big/", 9)) {
		const char *head = "HTTP/1.1 200 OK\r\nContent-Length: 5000000\r\n"
				   "Connection: close\r\n\r\n";
		char req[4096];
		recv(fd, req, sizeof(req), 0);
		send_all(fd, head, strlen(head));
		hang(fd);
		close(fd);
		return NULL;
	}
	return serve_one(arg);
}

static void *accept_loop(void *arg)
{
	struct loopback *r = arg;

	for (;;) {
		int fd = accept(r->lfd, NULL, NULL);
		pthread_t t;
		if (fd < 0)
			return NULL;  /* the listener was shut down */
		if (pthread_create(&t, NULL, serve_conn, (void *)(intptr_t)fd) == 0)
			pthread_detach(t);
		else
			close(fd);
	}
}



/* ------------------------------------------------------- the checks */

static enum pl_err fetch(const char *urls, const char *hex, const char *kind, uint32_t timeout_ms,
			 const char *cache, uint64_t max, int *fd, char *source,
			 struct pl_error *err)
{
	struct pl_debuginfod d = {urls, timeout_ms, cache, max};

	pl_error_clear(err);
	*fd = -1;
	return pl_debuginfod_fetch(&d, hex, kind, fd, source, 512, err);
}

/* True when `fd` holds exactly the responder's body for `kind`. */
static bool holds_body(int fd, const char *kind)
{
	unsigned char buf[8192];
	size_t off = 0;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != body_byte(kind, off + (size_t)i))
				return false;
		off += (size_t)n;
	}
	return n == 0 && off == BODY_LEN;
}

static void make_tmpdir(char *out, size_t cap)
{
	snprintf(out, cap, "/tmp/dfd-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(out));
}


/* Entries of `dir` other than . and .. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	if (d)
		closedir(d);
	return n;
}

START_TEST(bad_arguments_fail_before_any_request)
{
	static const char *const bad_ids[] = {
		"ABCD", "abc", "", "a", "zz", "0x12", "12 4", "aabbccdd-e",
	};
	char long_id[140];
	struct pl_debuginfod d = {"http://127.0.0.1:1", 1000, NULL, 0};
	struct pl_error err;
	char src[512];
	int fd = -1;

	for (size_t i = 0; i < PL_ARRAY_LEN(bad_ids); i++) {
		ck_assert_int_eq(fetch("http://127.0.0.1:1", bad_ids[i], "debuginfo", 1000, NULL, 0,
				       &fd, src, &err), PL_ERR_USAGE);
		ck_assert_msg(strstr(err.text, "is not a build-id"), "%s", err.text);
		ck_assert_int_eq(fd, -1);
	}
	memset(long_id, 'a', 130);
	long_id[130] = '\0';
	ck_assert_int_eq(fetch("http://x", long_id, "debuginfo", 1000, NULL, 0, &fd, src, &err),
			 PL_ERR_USAGE);
	long_id[128] = '\0';  /* 128 digits is the most a build-id may have */
	ck_assert_int_eq(fetch("ftp://x", long_id, "debuginfo", 1000, NULL, 0, &fd, src, &err),
			 PL_ERR_USAGE);
	ck_assert_msg(strstr(err.text, "'ftp://x' is not an http or https URL"), "%s", err.text);
	ck_assert_int_eq(pl_debuginfod_fetch(&d, NULL, "debuginfo", &fd, NULL, 0, &err), PL_ERR_USAGE);
	ck_assert_int_eq(pl_debuginfod_fetch(&d, "abcd", "source", &fd, NULL, 0, &err), PL_ERR_USAGE);
	ck_assert_msg(strstr(err.hint, "\"debuginfo\" or \"executable\""), "%s", err.hint);
	ck_assert_int_eq(pl_debuginfod_fetch(&d, "abcd", NULL, &fd, NULL, 0, &err), PL_ERR_USAGE);
	ck_assert_int_eq(pl_debuginfod_fetch(NULL, "abcd", "debuginfo", &fd, NULL, 0, &err),
			 PL_ERR_INTERNAL);
	ck_assert_int_eq(pl_debuginfod_fetch(&d, "abcd", "debuginfo", NULL, NULL, 0, &err),
			 PL_ERR_INTERNAL);
	/* Server lists: only http(s), at most 16, none means "off". */
	ck_assert_int_eq(fetch("file:///etc", "abcd", "debuginfo", 1000, NULL, 0, &fd, src, &err),
			 PL_ERR_USAGE);
	ck_assert_int_eq(fetch("http://127.0.0.1:1 https:// x", "abcd", "executable", 1000, NULL, 0,
			       &fd, src, &err), PL_ERR_USAGE);
	ck_assert_msg(strstr(err.text, "'https://'"), "%s", err.text);
	ck_assert_int_eq(fetch(NULL, "abcd", "debuginfo", 1000, NULL, 0, &fd, src, &err),
			 PL_ERR_UNSUPPORTED);
	ck_assert_int_eq(fetch(" \t ", "abcd", "debuginfo", 1000, NULL, 0, &fd, src, &err),
			 PL_ERR_UNSUPPORTED);
	ck_assert_msg(strstr(err.hint, "--debuginfod"), "%s", err.hint);
	{
		char many[17 * 12 + 1] = "";
		for (int i = 0; i < 17; i++)
			strcat(many, "http://a.b ");
		ck_assert_int_eq(fetch(many, "abcd", "debuginfo", 1000, NULL, 0, &fd, src, &err),
				 PL_ERR_USAGE);
	}
	ck_assert_int_eq(fetch("http://x", "abcd", "debuginfo", 1000, "", 0, &fd, src, &err),
			 PL_ERR_USAGE);
	ck_assert_int_eq(fd, -1);
	/* No error structure: the code alone. */
	d.urls = "file:///etc";
	ck_assert_int_eq(pl_debuginfod_fetch(&d, "abcd", "debuginfo", &fd, NULL, 0, NULL), PL_ERR_USAGE);
	d.urls = NULL;
	ck_assert_int_eq(pl_debuginfod_fetch(&d, "abcd", "debuginfo", &fd, NULL, 0, NULL),
			 PL_ERR_UNSUPPORTED);
}
END_TEST

START_TEST(cache_answers_without_a_server)
{
	char dir[64], path[PATH_MAX], src[512];
	struct pl_error err;
	int fd;

	make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, KNOWN_ID);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	/* An empty file is no answer; nor is a symlink. */
	snprintf(path, sizeof(path), "%s/%s/debuginfo", dir, KNOWN_ID);
	close(open(path, O_CREAT | O_WRONLY, 0644));
	ck_assert_int_eq(fetch(NULL, KNOWN_ID, "debuginfo", 1000, dir, 0, &fd, src, &err),
			 PL_ERR_UNSUPPORTED);
	unlink(path);
	ck_assert_int_eq(symlink("/etc/hostname", path), 0);
	ck_assert_int_eq(fetch(NULL, KNOWN_ID, "debuginfo", 1000, dir, 0, &fd, src, &err),
			 PL_ERR_UNSUPPORTED);
	unlink(path);
	{
		FILE *f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs("cached", f);
		fclose(f);
	}
	ck_assert_int_eq(fetch(NULL, KNOWN_ID, "debuginfo", 1000, dir, 0, &fd, src, &err), PL_OK);
	ck_assert_str_eq(src, path);
	{
		char buf[16] = "";
		ck_assert_int_eq(read(fd, buf, sizeof(buf)), 6);
		ck_assert_str_eq(buf, "cached");
	}
	close(fd);
	/* The other kind is not there; a cap below its size skips it too. */
	ck_assert_int_eq(fetch(NULL, KNOWN_ID, "executable", 1000, dir, 0, &fd, src, &err),
			 PL_ERR_UNSUPPORTED);
	ck_assert_int_eq(fetch(NULL, KNOWN_ID, "debuginfo", 1000, dir, 5, &fd, src, &err),
			 PL_ERR_UNSUPPORTED);
	remove_tree(dir);
}
END_TEST

/* libcurl is mapped in this process (/proc/self/maps names it). */
static bool libcurl_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	bool found = false;

	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libcurl.so.4") != NULL;
	fclose(f);
	return found;
}

START_TEST(libcurl_is_loaded_only_when_a_fetch_needs_it)
{
	struct pl_error err;
	char dir[64], path[200], src[512];
	int fd;
	FILE *f;

	if (libcurl_mapped()) {
		/* CK_FORK=no: an earlier test of this process fetched. */
		printf("note: libcurl already mapped (tests not forked); only preload is checked\n");
	} else {
		/* A bad argument, a cache hit and no server never need it. */
		ck_assert_int_eq(fetch("http://127.0.0.1:1", "XYZ", "debuginfo", 1000, NULL, 0, &fd,
				       src, &err), PL_ERR_USAGE);
		make_tmpdir(dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/%s", dir, KNOWN_ID);
		ck_assert_int_eq(mkdir(path, 0700), 0);
		snprintf(path, sizeof(path), "%s/%s/debuginfo", dir, KNOWN_ID);
		ck_assert_ptr_nonnull(f = fopen(path, "w"));
		fputs("cached", f);
		fclose(f);
		ck_assert_int_eq(fetch("http://127.0.0.1:1", KNOWN_ID, "debuginfo", 1000, dir, 0, &fd,
				       src, &err), PL_OK);
		close(fd);
		ck_assert_int_eq(fetch(NULL, KNOWN_ID, "executable", 1000, dir, 0, &fd, src, &err),
				 PL_ERR_UNSUPPORTED);
		remove_tree(dir);
		ck_assert_msg(!libcurl_mapped(), "libcurl was loaded without a request");
	}
	ck_assert(pl_debuginfod_preload());
	ck_assert(libcurl_mapped());
	ck_assert(pl_debuginfod_preload());  /* idempotent */
}
END_TEST

START_TEST(fetch_without_cache_gives_a_sealed_memory_file)
{
	struct loopback r;
	struct pl_error err;
	char urls[200], src[512], want[300];
	int fd;

	loopback_start(&r, 64, accept_loop);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d/", r.port);  /* trailing slash */
	ck_assert_msg(fetch(urls, KNOWN_ID, "debuginfo", 5000, NULL, 0, &fd, src, &err) == PL_OK,
		      "%s", err.text);
	snprintf(want, sizeof(want), "http://127.0.0.1:%d/buildid/%s/debuginfo", r.port, KNOWN_ID);
	ck_assert_str_eq(src, want);
	ck_assert(holds_body(fd, "debuginfo"));
	ck_assert_int_eq(write(fd, "x", 1), -1);  /* sealed: read-only */
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(fd);
	ck_assert_int_eq(fetch(urls, KNOWN_ID, "executable", 5000, NULL, 0, &fd, src, &err), PL_OK);
	ck_assert(holds_body(fd, "executable"));
	close(fd);
	loopback_stop(&r);
}
END_TEST

START_TEST(fetch_fills_the_cache_atomically)
{
	struct loopback r;
	struct pl_error err;
	char dir[64], sub[128], urls[200], src[512], path[PATH_MAX];
	struct stat st;
	int fd;

	loopback_start(&r, 64, accept_loop);
	make_tmpdir(dir, sizeof(dir));
	snprintf(sub, sizeof(sub), "%s/nested/cache", dir);  /* made on demand */
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", r.port);
	ck_assert_msg(fetch(urls, KNOWN_ID, "debuginfo", 5000, sub, 0, &fd, src, &err) == PL_OK,
		      "%s", err.text);
	ck_assert(strncmp(src, "http://", 7) == 0);
	ck_assert(holds_body(fd, "debuginfo"));
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	close(fd);
	snprintf(path, sizeof(path), "%s/%s/debuginfo", sub, KNOWN_ID);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq((uint64_t)st.st_size, BODY_LEN);
	snprintf(path, sizeof(path), "%s/%s", sub, KNOWN_ID);
	ck_assert_int_eq(count_entries(path), 1);  /* no temporary file left */
	/* A second fetch is answered from the cache, the servers unused. */
	ck_assert_int_eq(fetch("http://127.0.0.1:1", KNOWN_ID, "debuginfo", 5000, sub, 0, &fd, src,
			       &err), PL_OK);
	ck_assert(strstr(src, sub) == src);
	ck_assert(holds_body(fd, "debuginfo"));
	close(fd);
	/* A failed fetch leaves nothing behind. */
	ck_assert_int_eq(fetch(urls, "ffff", "debuginfo", 5000, sub, 0, &fd, src, &err),
			 PL_ERR_INPUT);
	snprintf(path, sizeof(path), "%s/ffff", sub);
	ck_assert_int_eq(count_entries(path), 0);
	remove_tree(dir);
	loopback_stop(&r);
}
END_TEST

START_TEST(unknown_build_id_is_not_found_on_every_server)
{
	struct loopback r;
	struct pl_error err;
	char urls[200], src[512];
	long long t0;
	int fd;

	loopback_start(&r, 64, accept_loop);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d http://127.0.0.1:%d/x", r.port, r.port);
	t0 = ms_now();
	ck_assert_int_eq(fetch(urls, "deadbeef", "debuginfo", 5000, NULL, 0, &fd, src, &err),
			 PL_ERR_INPUT);
	ck_assert_int_lt(ms_now() - t0, 2000);
	ck_assert_msg(strstr(err.text, "build-id deadbeef not found on http://127.0.0.1:"), "%s",
		      err.text);
	ck_assert_int_eq(fd, -1);
	/* One server has it: the 404 of the other does not matter. */
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d/x http://127.0.0.1:%d", r.port, r.port);
	ck_assert_int_eq(fetch(urls, KNOWN_ID, "debuginfo", 5000, NULL, 0, &fd, src, &err), PL_OK);
	close(fd);
	loopback_stop(&r);
}
END_TEST

START_TEST(silent_server_times_out_on_time)
{
	struct loopback r;
	struct pl_error err;
	char urls[200], src[512], want[100];
	long long t0, took;
	int fd;

	loopback_start(&r, 64, accept_loop);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d/hang", r.port);
	t0 = ms_now();
	ck_assert_int_eq(fetch(urls, KNOWN_ID, "debuginfo", 600, NULL, 0, &fd, src, &err),
			 PL_ERR_TIMEOUT);
	took = ms_now() - t0;
	ck_assert_msg(took >= 550 && took < 1500, "took %lld ms", took);
	snprintf(want, sizeof(want), "debuginfod server http://127.0.0.1:%d/hang did not answer",
		 r.port);
	ck_assert_msg(strstr(err.text, want), "%s", err.text);
	/* A silent first server gets its share; the second still answers. */
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d/hang http://127.0.0.1:%d", r.port, r.port);
	t0 = ms_now();
	ck_assert_msg(fetch(urls, KNOWN_ID, "debuginfo", 1000, NULL, 0, &fd, src, &err) == PL_OK,
		      "%s", err.text);
	took = ms_now() - t0;
	ck_assert_msg(took >= 450 && took < 1500, "took %lld ms", took);
	ck_assert(holds_body(fd, "debuginfo"));
	close(fd);
	/* A timeout outranks a 404 in the report. */
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d/hang http://127.0.0.1:%d", r.port, r.port);
	ck_assert_int_eq(fetch(urls, "abcd", "debuginfo", 400, NULL, 0, &fd, src, &err),
			 PL_ERR_TIMEOUT);
	loopback_stop(&r);
}
END_TEST

START_TEST(oversize_answers_stop_at_the_cap)
{
	struct loopback r;
	struct pl_error err;
	char urls[200], src[512], dir[64];
	long long t0;
	int fd;

	loopback_start(&r, 64, accept_loop);
	make_tmpdir(dir, sizeof(dir));
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d/big", r.port);
	t0 = ms_now();
	ck_assert_int_eq(fetch(urls, KNOWN_ID, "debuginfo", 5000, dir, 1000, &fd, src, &err),
			 PL_ERR_LIMIT);
	ck_assert_int_lt(ms_now() - t0, 2000);  /* refused on the header */
	ck_assert_msg(strstr(err.text, "is larger than 1000 bytes"), "%s", err.text);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d/stream", r.port);
	ck_assert_int_eq(fetch(urls, KNOWN_ID, "debuginfo", 5000, dir, 1000, &fd, src, &err),
			 PL_ERR_LIMIT);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", r.port);
	ck_assert_int_eq(fetch(urls, KNOWN_ID, "debuginfo", 5000, dir, BODY_LEN - 1, &fd, src, &err),
			 PL_ERR_LIMIT);
	ck_assert_int_eq(fetch(urls, KNOWN_ID, "debuginfo", 5000, dir, BODY_LEN, &fd, src, &err),
			 PL_OK);
	close(fd);
	snprintf(src, sizeof(src), "%s/%s", dir, KNOWN_ID);
	ck_assert_int_eq(count_entries(src), 1);  /* the answer, no leftovers */
	remove_tree(dir);
	loopback_stop(&r);
}
END_TEST

START_TEST(server_failures_name_the_server)
{
	struct loopback r;
	struct pl_error err;
	char urls[200], src[512];
	int fd;

	loopback_start(&r, 64, accept_loop);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d/redir", r.port);
	ck_assert_int_eq(fetch(urls, KNOWN_ID, "debuginfo", 5000, NULL, 0, &fd, src, &err),
			 PL_ERR_EXTERNAL);
	ck_assert_msg(strstr(err.text, "/redir failed: "), "%s", err.text);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d/fail", r.port);
	ck_assert_int_eq(fetch(urls, KNOWN_ID, "debuginfo", 5000, NULL, 0, &fd, src, &err),
			 PL_ERR_EXTERNAL);
	ck_assert_msg(strstr(err.text, "500"), "%s", err.text);
	ck_assert_int_eq(fetch("http://127.0.0.1:1", KNOWN_ID, "debuginfo", 5000, NULL, 0, &fd, src,
			       &err), PL_ERR_EXTERNAL);
	ck_assert_msg(strstr(err.text, "debuginfod server http://127.0.0.1:1 failed: "), "%s",
		      err.text);
	loopback_stop(&r);
}
END_TEST

/* ------------------------------------------------ inside the sandbox */

struct sandboxed {
	const char *urls;
	const char *cache;
};

static int w_fetch(void *arg, int out)
{
	const struct sandboxed *s = arg;
	struct pl_error err;
	char src[512], line[700];
	int fd;
	enum pl_err rc = fetch(s->urls, KNOWN_ID, "debuginfo", 5000, s->cache, 0, &fd, src, &err);

	if (rc)
		snprintf(line, sizeof(line), "%s: %s", pl_err_name(rc), err.text);
	else
		snprintf(line, sizeof(line), "%s", holds_body(fd, "debuginfo") ? "same bytes" : "differ");
	return write(out, line, strlen(line)) > 0 ? 0 : 3;
}

static void run_fetch(const struct sandboxed *s, bool network, struct sbx_result *res)
{
	struct sbx_policy pol = {0};
	struct pl_error err;

	pol.timeout_ms = 20000;
	pol.max_result_bytes = 4096;
	pol.allow_network = network;
	pol.write_root = s->cache;
	pl_error_clear(&err);
	ck_assert_msg(sbx_run(&pol, w_fetch, (void *)s, res, &err) == PL_OK, "%s", err.text);
}

/* As perflens-mcp registers it (mcp-server/main.c): a worker that may
 * use the network loads libcurl before it is confined. */
static void preload_for_worker(const struct sbx_policy *pol)
{
	if (pol->allow_network)
		pl_debuginfod_preload();
}

START_TEST(sandboxed_worker_fetches_only_with_allow_network)
{
	struct loopback r;
	struct sbx_result res;
	char urls[3][300], host[256] = "", dir[64];
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	size_t nurls = 2;

#ifdef __SANITIZE_THREAD__
	/* TSan loses track of threads across the zygote's fork, and libcurl
	 * starts its resolver thread in the forked worker ("dup thread"). */
	printf("skip sandboxed_worker_fetches_only_with_allow_network: TSan cannot follow it\n");
	return;
#endif

	loopback_start(&r, 64, accept_loop);
	sbx_set_preconfine(preload_for_worker);
	make_tmpdir(dir, sizeof(dir));
	snprintf(urls[0], sizeof(urls[0]), "http://127.0.0.1:%d", r.port);
	snprintf(urls[1], sizeof(urls[1]), "http://localhost:%d", r.port);
	/* A host name from /etc/hosts that libcurl resolves in its resolver
	 * thread (it answers "localhost" itself), when there is one. */
	if (gethostname(host, sizeof(host)) == 0 && strcmp(host, "localhost") &&
	    getaddrinfo(host, NULL, &hints, &ai) == 0 &&
	    ((struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr == htonl(INADDR_LOOPBACK))
		snprintf(urls[nurls++], sizeof(urls[0]), "http://%s:%d", host, r.port);
	else
		printf("note: host name '%s' is not loopback in /etc/hosts; the resolver thread "
		       "is not exercised in the sandbox\n", host);
	if (ai)
		freeaddrinfo(ai);
	for (size_t i = 0; i < nurls; i++) {
		struct sandboxed s = {urls[i], NULL};
		run_fetch(&s, true, &res);
		ck_assert_msg(res.outcome == SBX_OK && !strcmp(res.data, "same bytes"),
			      "%s: %s %s (%s)", urls[i], sbx_outcome_name(res.outcome), res.data,
			      res.detail);
		sbx_result_release(&res);
		s.cache = dir;  /* through the cache folder, the write root */
		run_fetch(&s, true, &res);
		ck_assert_msg(res.outcome == SBX_OK && !strcmp(res.data, "same bytes"),
			      "%s cached: %s %s (%s)", urls[i], sbx_outcome_name(res.outcome),
			      res.data, res.detail);
		sbx_result_release(&res);
		remove_tree(dir);
		ck_assert_int_eq(mkdir(dir, 0700), 0);
	}
	{
		struct sandboxed s = {urls[0], NULL};
		/* No preload without allow_network: the confined worker cannot
		 * load libcurl and says so, without a crash. */
		if (!libcurl_mapped()) {
			run_fetch(&s, false, &res);
			ck_assert_msg(res.outcome == SBX_OK && strstr(res.data, "unsupported: ") &&
				      strstr(res.data, "apt-get install libcurl4"), "%s %s",
				      sbx_outcome_name(res.outcome), res.data);
			sbx_result_release(&res);
		}
		/* With libcurl already mapped (inherited), seccomp still stops
		 * the request. */
		ck_assert(pl_debuginfod_preload());
		run_fetch(&s, false, &res);
		ck_assert_msg(res.outcome == SBX_SECCOMP_KILLED, "%s %s",
			      sbx_outcome_name(res.outcome), res.data);
		sbx_result_release(&res);
	}
	sbx_set_preconfine(NULL);
	remove_tree(dir);
	loopback_stop(&r);
}
END_TEST

Suite *suite_debuginfod(void)
{
	Suite *s = suite_create("debuginfod");
	TCase *args = tcase_create("arguments");
	TCase *http = tcase_create("loopback");

	tcase_add_test(args, bad_arguments_fail_before_any_request);
	tcase_add_test(args, cache_answers_without_a_server);
	tcase_add_test(args, libcurl_is_loaded_only_when_a_fetch_needs_it);
	suite_add_tcase(s, args);
	tcase_add_test(http, fetch_without_cache_gives_a_sealed_memory_file);
	tcase_add_test(http, fetch_fills_the_cache_atomically);
	tcase_add_test(http, unknown_build_id_is_not_found_on_every_server);
	tcase_add_test(http, silent_server_times_out_on_time);
	tcase_add_test(http, oversize_answers_stop_at_the_cap);
	tcase_add_test(http, server_failures_name_the_server);
	tcase_add_test(http, sandboxed_worker_fetches_only_with_allow_network);
	tcase_set_timeout(http, 60);
	suite_add_tcase(s, http);
	return s;
}
