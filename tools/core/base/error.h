/* error.h - the one error type of PerfLens.
 *
 * Every fallible function returns an `enum pl_err` and fills a caller-owned
 * `struct pl_error` (like jansson's json_error_t): a stable code, a message
 * that says what is wrong first (git style: lower case, no full stop, the
 * subject in quotes) and a hint that names the fix.  One table in error.c
 * maps each code to its stable name and its CLI exit code; nothing else in
 * the tree decides those numbers.  (JSON-RPC codes are the protocol's, not
 * an error's: mcp-server/server.h names them.)
 *
 * An error leaves the program one way: pl_error_text() here for text, and
 * tool_error_json_new() (tools/registry.h: base/ links no jansson) for the
 * JSON object {code, message, hint, exit_code}; both escape bytes that are
 * not UTF-8 in the one form of base/escape.h.
 */
#ifndef PL_ERROR_H
#define PL_ERROR_H

#include <stdarg.h>

enum pl_err {
	PL_OK = 0,
	PL_ERR_USAGE,        /* bad flags or arguments (exit 2) */
	PL_ERR_INPUT,        /* unreadable or missing input (exit 2) */
	PL_ERR_UNSUPPORTED,  /* a format or feature we do not handle (exit 3) */
	PL_ERR_MALFORMED,    /* a profile we cannot make sense of (exit 3) */
	PL_ERR_LIMIT,        /* a resource limit was reached (exit 4) */
	PL_ERR_PATH,         /* a path outside the allowed roots (exit 5) */
	PL_ERR_OUTPUT,       /* writing is not allowed or failed safely (exit 5) */
	PL_ERR_EXTERNAL,     /* an external tool failed (exit 6) */
	PL_ERR_TIMEOUT,      /* an external tool or worker timed out (exit 6) */
	PL_ERR_INTERNAL,     /* a bug or an impossible state (exit 70) */
	PL_ERR_LAST          /* never use: the number of codes */
};

struct pl_error {
	enum pl_err code;
	char text[320];
	char hint[320];
};

/* Fill `err` (which may be NULL) and return `code`, so that a caller can
 * report and return in one statement: `return pl_fail(err, ...);` */
enum pl_err pl_fail(struct pl_error *err, enum pl_err code, const char *hint,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Reset `err` to PL_OK with empty texts. */
void pl_error_clear(struct pl_error *err);

/* Stable snake_case name of a code, e.g. "limit_exceeded". */
const char *pl_err_name(enum pl_err code);

/* Process exit code for the CLI (0, 2, 3, 4, 5, 6 or 70). */
int pl_err_exit_code(enum pl_err code);

/* The code of a stable name (pl_err_name's inverse), so that a code can
 * cross a pipe as its name; PL_ERR_INTERNAL for NULL or an unknown name. */
enum pl_err pl_err_from_name(const char *name);

/* `s` for an error's text or JSON: a copy when it is valid UTF-8 (a
 * message may already hold a path in the escaped form), else its escaped
 * form (escape.h).  New: free() it. */
char *pl_err_text_safe(const char *s);

/* `e` as text: "error (CODE): MESSAGE", then "\nhint: HINT" when there is
 * a hint; a message or hint that is not valid UTF-8 is escaped
 * (pl_err_text_safe).  New: free() it. */
char *pl_error_text(const struct pl_error *e);

#endif
