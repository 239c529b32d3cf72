/* common.c - the helpers of fuzz.h, linked into every harness.
 *
 * Inputs are written under one folder per process, made with mkdtemp in
 * $TMPDIR (else /dev/shm, else /tmp) and removed at exit, so parallel
 * fuzzers and replays never meet.  /dev/shm first because the harnesses
 * rewrite their files for every input: on ext4 a file truncated and
 * rewritten is flushed to disk at close (auto_da_alloc), which made the
 * file-reading harnesses 10 times slower than the code they fuzz.
 */
#include "fuzz.h"
#include "base/limits.h"
#include "base/util.h"
#include "profile/parse.h"
#include "profile/profile.h"
#include "store/stack_table.h"
#include "store/summary.h"

#include <jansson.h>

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag;
	if (ftw->level > 0 || getenv("FUZZ_KEEP_DIR") == NULL)
		remove(path);
	return 0;
}

static void remove_dir(void)
{
	if (dir[0])
		nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Where the private folder goes: $TMPDIR, else a memory file system. */
static const char *scratch_parent(void)
{
	const char *tmp = getenv("TMPDIR");

	if (tmp && *tmp)
		return tmp;
	return access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
}

const char *fuzz_dir(void)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/perflens-fuzz-XXXXXX", scratch_parent());
		if (!mkdtemp(dir)) {
			perror("fuzz: mkdtemp");
			abort();
		}
		atexit(remove_dir);
	}
	return dir;
}

static void make_parents(char *path)
{
	for (char *s = path + strlen(fuzz_dir()) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		mkdir(path, 0700);
		*s = '/';
	}
}

const char *fuzz_file(const char *name, const void *data, size_t n)
{
	static char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", fuzz_dir(), name);
	make_parents(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (n && write(fd, data, n) != (ssize_t)n) || close(fd) < 0) {
		perror(path);
		abort();
	}
	return path;
}

void fuzz_clean(const char *sub)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", fuzz_dir(), sub);
	nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	mkdir(path, 0700);
}

int fuzz_emit_buf(const char *buffer, size_t size, void *data)
{
	pl_buf_add(data, buffer, size);
	return 0;
}

/* ------------------------------------------------------------ profiles */

static void limits_small(struct pl_limits *lim)
{
	/* Small enough that the limit paths are reached, large enough for
	 * every seed. */
	pl_limits_default(lim);
	lim->max_input_bytes = 4u << 20;
	lim->max_records = 20000;
	lim->max_line = 64u << 10;
	lim->max_depth = 256;
	lim->max_frames = 20000;
	lim->max_stacks = 20000;
}

static void reload_stack_table(const struct pl_buf *stacks, const struct pl_limits *lim)
{
	struct pl_profile back;
	struct pl_error err;
	json_error_t jerr;
	json_t *doc = json_loadb(stacks->data, stacks->len, 0, &jerr);

	if (!doc) {
		fprintf(stderr, "fuzz: the stack table written is not JSON: %s\n", jerr.text);
		abort();
	}
	pl_profile_init(&back, lim);
	if (pl_stack_table_read(&back, doc, PL_SUMMARY_ID_PLACEHOLDER, &err) != PL_OK) {
		fprintf(stderr, "fuzz: the stack table written does not reload: %s\n", err.text);
		abort();
	}
	pl_profile_release(&back);
	json_decref(doc);
}

void fuzz_profile_path(const char *path, int format)
{
	struct pl_parse_opts opts = {.format = (enum pl_format)format};
	struct pl_buf summary = {0}, stacks = {0};
	struct pl_limits lim;
	struct pl_profile p;
	struct pl_error err;
	json_t *brief = json_object();

	limits_small(&lim);
	pl_profile_init(&p, &lim);
	opts.perf_data.refusal = "the fuzzer runs no perf";
	if (pl_parse_path(&p, path, &opts, &err) == PL_OK &&
	    pl_summary_write(&p, fuzz_emit_buf, &summary, NULL, brief, &err) == PL_OK) {
		if (!pl_stack_table_write(&p, fuzz_emit_buf, &stacks)) {
			fprintf(stderr, "fuzz: the stack table writer failed\n");
			abort();
		}
		reload_stack_table(&stacks, &lim);
	}
	json_decref(brief);
	pl_buf_release(&summary);
	pl_buf_release(&stacks);
	pl_profile_release(&p);
}

void fuzz_profile_buffer(fuzz_buffer_reader *reader, const uint8_t *data, size_t n)
{
	struct pl_limits lim;
	struct pl_profile p;
	struct pl_error err;

	pl_limits_default(&lim);
	lim.max_depth = 64;
	lim.max_frames = 4096;
	lim.max_stacks = 4096;
	lim.max_records = 100000;
	pl_profile_init(&p, &lim);
	reader(&p, data, n, "fuzz", &err);
	pl_profile_release(&p);
}
