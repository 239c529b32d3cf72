/* jsonstr.h - JSON strings of outside bytes and of prose that quotes
 * them, in the escaped forms of base/escape.h (jansson refuses strings
 * that are not UTF-8).  Below the artifact writer and the summary, which
 * both make them.
 */
#ifndef PL_JSONSTR_H
#define PL_JSONSTR_H

#include <stddef.h>

#include <jansson.h>

/* A new JSON string of outside bytes `s` (a path, a line of the input,
 * perf's words) in the escaped form of base/escape.h, which jansson always
 * takes (json_string refuses bytes that are not UTF-8); null for NULL.
 * Text already in that form (the profile's strings) goes to json_string. */
json_t *pl_json_bytes(const char *s);
/* The same for `n` bytes at `s` (a folded name may hold NUL). */
json_t *pl_json_bytesn(const char *s, size_t n);
/* A new JSON string of prose that may quote outside bytes, in the text
 * form of base/escape.h (backslashes stay); null for NULL. */
json_t *pl_json_text(const char *s);

#endif
