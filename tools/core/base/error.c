/* error.c - the table behind error.h: names, exit codes, JSON-RPC codes.
 *
 * The table is indexed by `enum pl_err`; a static assertion keeps it the
 * same length as the enum so that adding a code without a row fails to
 * build.
 */
#include "error.h"

#include <stdio.h>
#include <string.h>

struct err_row {
	const char *name;
	int exit_code;
	int jsonrpc_code;
};

static const struct err_row err_table[] = {
	[PL_OK] = {"ok", 0, 0},
	[PL_ERR_USAGE] = {"usage", 2, -32602},
	[PL_ERR_INPUT] = {"input", 2, -32602},
	[PL_ERR_UNSUPPORTED] = {"unsupported", 3, -32602},
	[PL_ERR_MALFORMED] = {"malformed_profile", 3, -32602},
	[PL_ERR_LIMIT] = {"limit_exceeded", 4, -32603},
	[PL_ERR_PATH] = {"path_refused", 5, -32602},
	[PL_ERR_OUTPUT] = {"output_refused", 5, -32603},
	[PL_ERR_EXTERNAL] = {"external_tool_failed", 6, -32603},
	[PL_ERR_TIMEOUT] = {"timeout", 6, -32603},
	[PL_ERR_INTERNAL] = {"internal", 70, -32603},
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

int pl_err_jsonrpc_code(enum pl_err code)
{
	return row_of(code)->jsonrpc_code;
}
