/* fuzz_symindex.c - the symbol index loader (symbols/symindex.h): a
 * damaged or hostile DIR/<build-id>.idx must be refused or answer within
 * its bounds, never read outside the blob.  The harness seals each input
 * (pl_symindex_seal: file size and checksum made right, so the fuzzer gets
 * past them to the section and reference checks), loads it for the
 * build-id its header names, and looks up the starts, middles and ends of
 * its executable ranges, and addresses 0 and ~0. */
#include "fuzz.h"
#include "symbols/symindex.h"

#include <stdlib.h>
#include <string.h>

static void lookup(const struct pl_symindex *x, uint64_t addr)
{
	struct pl_symindex_scope sc;
	const char *name, *file, *dir;
	uint64_t value;
	uint32_t line, col;

	if (pl_symindex_func(x, addr, &name, &value))
		(void)strlen(name);
	if (pl_symindex_line(x, addr, &file, &dir, &line, &col) && file)
		(void)strlen(file);
	pl_symindex_scope(x, addr, &sc);
	for (size_t i = 0; i < sc.ninl; i++)
		if (sc.inl[i].function)
			(void)strlen(sc.inl[i].function);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char build_id[PL_BUILD_ID_HEX_MAX];
	struct pl_symindex *x;
	struct pl_error err;
	void *blob = malloc(size ? size : 1);

	memcpy(blob, data, size);
	if (!pl_symindex_seal(blob, size, build_id)) {
		free(blob);
		return 0;
	}
	if (pl_symindex_from_blob(blob, size, build_id, &x, &err) != PL_OK)
		return 0;   /* blob freed by the refusal */
	(void)pl_symindex_source(x)->nsyms;
	for (size_t i = 0; i < pl_symindex_exec_count(x) && i < 16; i++) {
		uint64_t start, end;

		pl_symindex_exec_range(x, i, &start, &end);
		lookup(x, start);
		lookup(x, start + (end - start) / 2);
		lookup(x, end - 1);
	}
	lookup(x, 0);
	lookup(x, UINT64_MAX);
	pl_symindex_free(x);
	return 0;
}
