/* replay.c - runs a harness over files without libFuzzer: the regression
 * run of every corpus in `make test` (any compiler, no instrumentation).
 *
 * Usage: replay-NAME FILE_OR_DIR...  Each regular file is read whole and
 * given once to LLVMFuzzerTestOneInput, in name order within a folder, so
 * a crash names the file printed just before it.  Prints one summary line.
 */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static unsigned long nrun;

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0) {
		perror(path);
		return 1;
	}
	buf = malloc(n ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		perror(path);
		return 1;
	}
	fclose(f);
	if (getenv("FUZZ_REPLAY_VERBOSE"))
		fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	nrun++;
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int run_path(const char *path)
{
	struct dirent **names;
	struct stat st;
	int n, bad = 0;

	if (stat(path, &st) < 0) {
		perror(path);
		return 1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path);
	if ((n = scandir(path, &names, NULL, by_name)) < 0) {
		perror(path);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		char sub[4096];

		if (names[i]->d_name[0] != '.') {
			snprintf(sub, sizeof(sub), "%s/%s", path, names[i]->d_name);
			bad |= run_path(sub);
		}
		free(names[i]);
	}
	free(names);
	return bad;
}

int main(int argc, char **argv)
{
	int bad = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++)
		bad |= run_path(argv[i]);
	printf("%s: replayed %lu inputs\n", argv[0], nrun);
	return bad;
}
