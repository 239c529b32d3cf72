/* srcline.c - "FILE:LINE (note)" read from the right (see srcline.h):
 * trailing " (...)" groups are notes, then the digits after the last
 * ':' are the line, and everything before that colon is the file (which
 * may hold colons, spaces and parentheses of its own).
 */
#include "srcline.h"

#include <string.h>

#include "base/util.h"

static bool ends_with_paren_group(const char *s, size_t n, size_t *open)
{
	if (n < 3 || s[n - 1] != ')')
		return false;
	for (size_t i = n - 1; i-- > 0;)
		if (s[i] == '(') {
			if (i == 0 || s[i - 1] != ' ')
				return false;
			*open = i - 1;
			return true;
		}
	return false;
}

bool pl_srcline_split(const char *srcline, size_t *file_len, uint32_t *line)
{
	size_t n = strlen(srcline), open, colon, i;
	uint64_t v = 0;

	*file_len = 0;
	*line = 0;
	/* " (inlined)", " (discriminator 3)": notes after the line number. */
	while (ends_with_paren_group(srcline, n, &open))
		n = open;
	while (n && srcline[n - 1] == ' ')
		n--;
	for (colon = n; colon > 0 && srcline[colon - 1] >= '0' && srcline[colon - 1] <= '9'; colon--)
		;
	if (colon == n || colon < 2 || srcline[colon - 1] != ':')
		return false;
	i = colon - 1;
	if (i == 2 && memcmp(srcline, "??", 2) == 0)
		return false;
	if (pl_parse_u64(srcline + colon, n - colon, &v) && v <= UINT32_MAX)
		*line = (uint32_t)v;
	*file_len = i;
	return true;
}
