/* log.c - the agent link's one log line: "perflens-mcp: agent link: ..."
 * on stderr.  A module of its own, below link.c and spool.c, so that the
 * spool can say what it could not write without calling up into the
 * devices' file (tools/build/check-cycles.sh refuses files that need each
 * other).
 */
#include "link_int.h"

#include <stdarg.h>
#include <stdio.h>

void coll_link_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "perflens-mcp: agent link: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
