/* testlib.h - helpers the unit tests share: a TCP listener on 127.0.0.1
 * (a port the kernel picks) whose accept loop, the test's own, runs in a
 * thread; writing a whole test file; removing a test folder; and the
 * SHA-256 of a file as coreutils' sha256sum gives it (an oracle that
 * shares no code with the project's); feeding perf script text to a
 * profile line by line.
 * Header-only: each test file that includes it gets its own copy. */
#ifndef PL_TESTLIB_H
#define PL_TESTLIB_H

#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/parse.h"

struct loopback {
	int lfd;
	int port;
	pthread_t thread;
};

/* Listen (with `backlog`) and start `loop(l)`, which accepts on l->lfd
 * until accept fails (loopback_stop shuts the listener down). */
static inline void loopback_start(struct loopback *l, int backlog, void *(*loop)(void *))
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(l->lfd, 0);
	ck_assert_int_eq(bind(l->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(l->lfd, backlog), 0);
	ck_assert_int_eq(getsockname(l->lfd, (struct sockaddr *)&a, &len), 0);
	l->port = ntohs(a.sin_port);
	ck_assert_int_eq(pthread_create(&l->thread, NULL, loop, l), 0);
}

static inline void loopback_stop(struct loopback *l)
{
	shutdown(l->lfd, SHUT_RDWR);
	pthread_join(l->thread, NULL);
	close(l->lfd);
}

/* Write `n` bytes of `p` as the whole file `path`. */
static inline void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

/* Remove a test folder and everything in it (not following links). */
static inline void remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	char path[PATH_MAX];

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
			continue;  /* cannot be ours: test folders are short */
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			remove_tree(path);
		else
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* The hex SHA-256 of the file at `path` (a test's own temporary file,
 * whose name needs no quoting), by sha256sum; returns `out`. */
static inline const char *sha256sum_of(const char *path, char out[65])
{
	char cmd[PATH_MAX + 32];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "sha256sum -- '%s'", path);
	ck_assert_ptr_nonnull(p = popen(cmd, "r"));
	ck_assert_int_eq(fscanf(p, "%64s", out), 1);
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_uint_eq(strlen(out), 64);
	return out;
}

/* Feed a whole perf script text to `p` line by line, as a file would
 * come, through the public parser API. */
static inline enum pl_err feed_script(struct pl_profile *p, const char *text)
{
	struct pl_ps_parser *ps = pl_ps_new(p, "test");
	struct pl_error err;
	uint64_t line_no = 0;
	enum pl_err rc = PL_OK;

	while (*text && rc == PL_OK) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text);
		rc = pl_ps_line(ps, text, n, ++line_no, &err);
		text += n + (nl ? 1 : 0);
	}
	if (rc) {
		pl_ps_finish(ps, &err);
		return rc;
	}
	return pl_ps_finish(ps, &err);
}

#endif
