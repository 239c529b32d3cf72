/* error.c - the table behind error.h: names and exit codes; the text form.
 *
 * The table is indexed by `enum pl_err`; a static assertion keeps it the
 * same length as the enum so that adding a code without a row fails to
 * build.
 */
#include "error.h"
#include "escape.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct err_row {
	const char *name;
	int exit_code;
};

static const struct err_row err_table[] = {
	[PL_OK] = {"ok", 0},
	[PL_ERR_USAGE] = {"usage", 2},
	[PL_ERR_INPUT] = {"input", 2},
	[PL_ERR_UNSUPPORTED] = {"unsupported", 3},
	[PL_ERR_MALFORMED] = {"malformed_profile", 3},
	[PL_ERR_LIMIT] = {"limit_exceeded", 4},
	[PL_ERR_PATH] = {"path_refused", 5},
	[PL_ERR_OUTPUT] = {"output_refused", 5},
	[PL_ERR_EXTERNAL] = {"external_tool_failed", 6},
	[PL_ERR_TIMEOUT] = {"timeout", 6},
	[PL_ERR_INTERNAL] = {"internal", 70},
};

_Static_assert(sizeof(err_table) / sizeof(err_table[0]) == PL_ERR_LAST,
	       "every enum pl_err needs a row in err_table");

static const struct err_row *row_of(enum pl_err code)
{
	if ((unsigned)code >= PL_ERR_LAST)
		code = PL_ERR_INTERNAL;
	return &err_table[code];
}

enum pl_err pl_fail(struct pl_error *err, enum pl_err code, const char *hint,
		    const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	snprintf(err->hint, sizeof(err->hint), "%s", hint ? hint : "");
	return code;
}

void pl_error_clear(struct pl_error *err)
{
	if (!err)
		return;
	err->code = PL_OK;
	err->text[0] = '\0';
	err->hint[0] = '\0';
}

const char *pl_err_name(enum pl_err code)
{
	return row_of(code)->name;
}

int pl_err_exit_code(enum pl_err code)
{
	return row_of(code)->exit_code;
}

enum pl_err pl_err_from_name(const char *name)
{
	for (size_t i = 0; name && i < PL_ERR_LAST; i++)
		if (strcmp(err_table[i].name, name) == 0)
			return (enum pl_err)i;
	return PL_ERR_INTERNAL;
}

char *pl_err_text_safe(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), len;

	for (size_t i = 0; i < n; i += len)
		if (!(len = pl_utf8_len(u + i, n - i)))
			return pl_esc_dup(s);
	return pl_xstrdup(s);
}

char *pl_error_text(const struct pl_error *e)
{
	char *message = pl_err_text_safe(e->text), *hint = pl_err_text_safe(e->hint);
	struct pl_buf out = {0};

	pl_buf_addf(&out, "error (%s): %s", pl_err_name(e->code), message);
	if (*hint)
		pl_buf_addf(&out, "\nhint: %s", hint);
	free(message);
	free(hint);
	return out.data;
}
