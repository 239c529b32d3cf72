/* fuzz_escape.c - the one escaped form of outside bytes (base/escape.h).
 * Properties checked on every input: the escaped form is valid UTF-8
 * without NUL and decodes back to the same bytes; the text form and the
 * message forms (cut to a small buffer) are valid UTF-8 too; decoding
 * arbitrary text (a path typed by hand) never reads or writes out of
 * bounds. */
#include "fuzz.h"
#include "base/escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Strict UTF-8 (RFC 3629: no overlong forms, surrogates or > U+10FFFF). */
static bool utf8_ok(const unsigned char *s, size_t n, bool nul_ok)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i], len, cp;

		if (c < 0x80) {
			if (c == 0 && !nul_ok)
				return false;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			len = 2, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4, cp = c & 0x07;
		else
			return false;
		if (i + len > n)
			return false;
		for (unsigned k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

static void fail(const char *what)
{
	fprintf(stderr, "fuzz: escape: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct pl_buf esc = {0}, back = {0}, text = {0}, raw = {0};
	char small[24], *cstr = malloc(size + 1), *out = malloc(size + 1);

	pl_esc_add(&esc, s, size);
	if (!utf8_ok((const unsigned char *)esc.data, esc.len, false))
		fail("escaped form is not UTF-8 without NUL");
	if (pl_esc_needed(s, size) != (esc.len != size || memcmp(esc.data, s, size) != 0))
		fail("pl_esc_needed disagrees with pl_esc_add");
	pl_esc_decode_add(&back, esc.data, esc.len);
	if (back.len != size || memcmp(back.data, s, size) != 0)
		fail("escaped form does not decode back");

	pl_esc_add_text(&text, s, size);
	if (!utf8_ok((const unsigned char *)text.data, text.len, true))
		fail("text form is not UTF-8");
	pl_esc_text_str(small, sizeof(small), s, size);
	if (!utf8_ok((const unsigned char *)small, strlen(small), false))
		fail("pl_esc_text_str is not UTF-8");

	memcpy(cstr, s, size);
	cstr[size] = 0;
	pl_esc_str(small, sizeof(small), cstr);
	if (!utf8_ok((const unsigned char *)small, strlen(small), false))
		fail("pl_esc_str is not UTF-8");
	free(pl_esc_dup(cstr));
	/* Decoding arbitrary text: into a buffer just big enough, and one too
	 * small. */
	pl_esc_decode(cstr, out, strlen(cstr) + 1);
	pl_esc_decode(cstr, out, strlen(cstr) / 2 + 1);
	pl_esc_decode_add(&raw, s, size);

	pl_buf_release(&esc);
	pl_buf_release(&back);
	pl_buf_release(&text);
	pl_buf_release(&raw);
	free(cstr);
	free(out);
	return 0;
}
