/* escape.h - the one escaped form of outside bytes (paths, frame names,
 * comm names, perf's stderr) in results, artifacts and messages.
 *
 * Linux paths and names are bytes; JSON strings must be UTF-8.  The form
 * (docs/paths.md) is reversible: valid UTF-8 is kept as it is, a backslash
 * becomes `\\`, and every other byte (one that is not part of valid UTF-8,
 * or NUL) becomes `\xHH` (lower-case hex).  Its result is always valid
 * UTF-8 without NUL, and decoding it gives back the same bytes.
 *
 * Decoding, where a path comes back in, turns `\\` into a backslash and
 * `\xHH` (either case) into that byte; any other backslash is taken as it
 * is, so a path typed by hand needs no escaping unless it holds `\\` or
 * `\x`.  The text form (pl_esc_add_text) escapes only the bytes that are
 * not UTF-8: for words that are read rather than passed back.  Prefix
 * `pl_esc_`; no jansson here (the device agent links base).
 */
#ifndef PL_ESCAPE_H
#define PL_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/* True when the escaped form of these `n` bytes differs from them (they
 * hold a backslash, NUL or bytes that are not UTF-8). */
bool pl_esc_needed(const char *s, size_t n);

/* Append the escaped form of `n` bytes at `s` to `out`. */
void pl_esc_add(struct pl_buf *out, const char *s, size_t n);

/* The escaped form of the C string `s`: a new string the caller frees. */
char *pl_esc_dup(const char *s);

/* The escaped form of `s` into `out` (`cap` > 0 bytes, always
 * NUL-terminated), cut before a sequence that would not fit, so the text
 * stays valid UTF-8.  For messages: "cannot open '%s'".  Returns `out`. */
const char *pl_esc_str(char *out, size_t cap, const char *s);

/* The escaped form of `s` for a '%s' of a message: cut to fit 256 bytes,
 * in storage (a compound literal) that lives until the end of the
 * enclosing block:  pl_fail(err, ..., "cannot open '%s'", PL_ESC_MSG(path)). */
#define PL_ESC_MSG(s) pl_esc_str((char[256]){0}, 256, (s))

/* The text form: bytes that are not UTF-8 are escaped (`\xHH`) while
 * backslashes stay as they are.  For a command-line argument (a Latin-1
 * file name typed in a shell; an escaped path copied from a result keeps
 * its meaning), for a message that may quote both kinds, and for exports
 * meant to be read (SVG, speedscope, pprof), where a JIT frame such as
 * "RegExp:\bFoo" should read as perf printed it.  Escaped text goes
 * through unchanged.  Appends to `out`. */
void pl_esc_add_text(struct pl_buf *out, const char *s, size_t n);

/* The text form of `n` bytes at `s` into `out` (`cap` > 0 bytes), cut as
 * pl_esc_str cuts: for another program's words (perf's stderr) quoted in
 * a message.  Returns `out`. */
const char *pl_esc_text_str(char *out, size_t cap, const char *s, size_t n);

/* Decode the escaped form `s` into `out` (`cap` bytes): the original bytes
 * and a NUL.  False (out unspecified) when the result does not fit or
 * would hold NUL, which no path or C string can. */
bool pl_esc_decode(const char *s, char *out, size_t cap);

/* Decode the escaped form of `n` bytes at `s`, appending the bytes to
 * `out` (a `\x00` gives a NUL byte: for data, not for paths). */
void pl_esc_decode_add(struct pl_buf *out, const char *s, size_t n);

#endif
