/* fuzz.h - what the harnesses of tests/fuzz/ share.
 *
 * Every harness defines LLVMFuzzerTestOneInput (libFuzzer's entry) and may
 * define LLVMFuzzerInitialize; the same object links either with libFuzzer
 * (`make fuzz`, clang) or with replay.c (`make test`, any compiler), which
 * runs every file of the harness's corpus once.  Entry points that read
 * files get the input through fuzz_file(): one file per process under a
 * private temporary folder, rewritten for each input (the parsers' own
 * open/peek/decompress path is then fuzzed too).
 */
#ifndef PL_FUZZ_H
#define PL_FUZZ_H

#include "base/error.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The private folder of this process (made on first use, removed at exit). */
const char *fuzz_dir(void);

/* Write `n` bytes to fuzz_dir()/name (folders on the way made) and return
 * its path (static storage, until the next call); aborts on failure, which
 * is the harness's, not the code's. */
const char *fuzz_file(const char *name, const void *data, size_t n);

/* Remove everything under fuzz_dir()/sub (or all of fuzz_dir() for ""). */
void fuzz_clean(const char *sub);

/* Take the first byte off an input (0 when empty): for a harness with
 * modes, it picks the mode and the rest is the data. */
static inline unsigned fuzz_take_byte(const uint8_t **data, size_t *size)
{
	unsigned b = 0;

	if (*size) {
		b = **data;
		(*data)++;
		(*size)--;
	}
	return b;
}

/* A json_dump_callback_t that appends to a struct pl_buf. */
int fuzz_emit_buf(const char *buffer, size_t size, void *data);

/* Parse the profile file at `path` as `format` (an enum pl_format), with
 * small limits; when it parses, write its summary and stack table as the
 * analysis writer does and read the stack table back, which must succeed:
 * an analysis PerfLens wrote that it cannot reload is a defect (abort). */
void fuzz_profile_path(const char *path, int format);

struct pl_profile;

/* A reader of a whole profile in memory (pl_parse_pprof and its kind). */
typedef enum pl_err fuzz_buffer_reader(struct pl_profile *p, const void *data, size_t n,
				       const char *name, struct pl_error *err);

/* Read `n` bytes with `reader` into a profile with small limits (so that
 * limits are reached too) and release it; the harness of such a reader is
 * this one call. */
void fuzz_profile_buffer(fuzz_buffer_reader *reader, const uint8_t *data, size_t n);

#endif
