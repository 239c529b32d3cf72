/* fuzz_launch.c - libFuzzer harness for the collection launcher's reading
 * and checking of a worker's request (collectors/launch.c).  The launcher
 * runs unconfined and a worker is where hostile inputs are parsed, so a
 * request is outside bytes: any message must decode or be refused, never
 * crash, and a request the check lets run must keep every rule the
 * launcher promises (launch.h): perf is the allowlisted one, the working
 * directory and the program are under the allowed root, stdout and stderr
 * go to the staging folder or /dev/null, no LD_* or PERF_* variable.
 *
 * The allowed root and artifact root are this process's private folder
 * (fuzz_dir()), which holds a staging folder and an executable "prog";
 * a string of the message that starts with "@/" starts with that folder
 * instead, so the corpus can name paths that pass.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collectors/launch.h"
#include "fuzz.h"

#define HEAD_BYTES 24   /* struct launch_head: six 32-bit fields */

static char root[4096];
static struct coll_launcher_cfg cfg;
static const char *roots[1];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!realpath(fuzz_dir(), root))
		abort();
	fuzz_file("collections/.staging-f/keep", "", 0);
	chmod(fuzz_file("prog", "#!/bin/sh\n", 10), 0755);
	roots[0] = root;
	cfg = (struct coll_launcher_cfg){"/usr/bin/perf", root, roots, 1, false};
	return 0;
}

/* The message with each "@/" at a string's start made the private folder. */
static size_t expand(const uint8_t *data, size_t size, char *out, size_t cap)
{
	size_t n = 0, rl = strlen(root);
	bool start = false;

	for (size_t i = 0; i < size; i++) {
		if (i >= HEAD_BYTES && (i == HEAD_BYTES || start) && i + 1 < size && data[i] == '@' &&
		    data[i + 1] == '/') {
			if (n + rl > cap)
				break;
			memcpy(out + n, root, rl);
			n += rl;
			start = false;
			continue;
		}
		if (n == cap)
			break;
		out[n++] = (char)data[i];
		start = data[i] == '\0';
	}
	return n;
}

static bool beneath_root(const char *path)
{
	char real[4096];
	size_t n = strlen(root);

	return realpath(path, real) && strncmp(real, root, n) == 0 && (real[n] == '/' || !real[n]);
}

/* /dev/null, or a file whose folder really is a staging folder. */
static bool staging_or_null(const char *path)
{
	char prefix[4200], dir[4096], real[4096];
	const char *slash = strrchr(path, '/');

	if (strcmp(path, "/dev/null") == 0)
		return true;
	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return false;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	snprintf(prefix, sizeof(prefix), "%s/collections/.staging-", root);
	return realpath(dir, real) && strncmp(real, prefix, strlen(prefix)) == 0 &&
	       !strchr(real + strlen(prefix), '/');
}

/* What a request that passed must be. */
static void must_keep_the_rules(const struct coll_launch_request *q)
{
	if (q->kind == COLL_LAUNCH_PERF && strcmp(q->argv[0], cfg.perf_path) != 0)
		abort();
	if (q->kind == COLL_LAUNCH_PROGRAM && !beneath_root(q->argv[0]))
		abort();
	if (q->kind != COLL_LAUNCH_PERF && q->kind != COLL_LAUNCH_PROGRAM)
		abort();
	if (!beneath_root(q->cwd) || !staging_or_null(q->stdout_path) || !staging_or_null(q->stderr_path))
		abort();
	for (size_t i = 0; q->env[i]; i++)
		if (strncmp(q->env[i], "LD_", 3) == 0 || strncmp(q->env[i], "PERF_", 5) == 0)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char scratch[COLL_LAUNCH_MAX_REQUEST];
	struct coll_launch_request q;
	size_t n = expand(data, size, scratch, sizeof(scratch));
	/* an exact-size copy, so that a read past the message is caught */
	char *buf = malloc(n ? n : 1);

	if (!buf)
		return 0;
	memcpy(buf, scratch, n);
	if (coll_launch_decode(buf, n, &q) && !coll_launch_check_request(&cfg, &q))
		must_keep_the_rules(&q);
	free(buf);
	return 0;
}
