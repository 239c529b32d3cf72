/* fuzz_sniff.c - libFuzzer harness for the content sniffer
 * (tools/core/profile/sniff.c): any head of bytes, as any codec, gives a
 * NUL-terminated description without reading past the head; and format
 * detection (parse.c's pl_detect_format, with the CSV stat line test)
 * reads the same head within its bounds and names a format.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Itools/core -I. \
 *     tests/fuzz/fuzz_sniff.c tools/core/profile/sniff.c ... (libperflens)
 */
#include "profile/parse.h"
#include "profile/sniff.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const codecs[] = {"none", "gzip", "zstd"};
	struct pl_buf out = {0};
	unsigned char *copy;

	if (size == 0)
		return 0;
	/* An exact-size copy, so that a read past the head is caught. */
	copy = malloc(size - 1 ? size - 1 : 1);
	memcpy(copy, data + 1, size - 1);
	pl_sniff_describe(copy, size - 1, codecs[data[0] % 3], &out);
	if (!out.data || strlen(out.data) != out.len)
		abort();
	pl_buf_release(&out);
	if (pl_detect_format((const char *)copy, size - 1) > PL_FMT_CPUPROFILE)
		abort();
	free(copy);
	return 0;
}
