/* fuzz_schema_pattern.c - tool_pattern_match (tools/schema_pattern.c), the
 * schema patterns' matcher of argument values, against glibc's regexec.
 * The input is a pattern, a NUL, then a value (no NUL: the value is
 * empty).  Whenever the matcher answers (it leaves anything but a plain
 * anchored run to regcomp, and says so with -1), the pattern must compile
 * and regexec must say the same. */
#include "fuzz.h"
#include "tools/registry.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *pattern = malloc(size + 2), *value;
	const char *nul = memchr(data, '\0', size);
	regex_t re;
	int mine;

	memcpy(pattern, data, size);
	pattern[size] = pattern[size + 1] = '\0';
	value = nul ? pattern + (nul - (const char *)data) + 1 : pattern + size + 1;
	mine = tool_pattern_match(pattern, value);
	if (mine >= 0) {
		if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0) {
			fprintf(stderr, "fuzz: schema_pattern: '%s' matched here, regcomp refuses it\n", pattern);
			abort();
		}
		if ((regexec(&re, value, 0, NULL, 0) == 0) != mine) {
			fprintf(stderr, "fuzz: schema_pattern: '%s' on '%s': %d here, regexec %d\n", pattern,
				value, mine, !mine);
			abort();
		}
		regfree(&re);
	}
	free(pattern);
	return 0;
}
