/* escape.c - the reversible escaped form of escape.h (docs/paths.md).
 *
 * Encoding walks the bytes with pl_utf8_len: a valid sequence is copied
 * (a backslash doubled), anything else is written `\xHH`.  Decoding is
 * lenient about a backslash that starts no escape (it stays), so that
 * what a person types and what a result printed both name the same file.
 */
#include "escape.h"

#include <string.h>

static const char hex_digits[] = "0123456789abcdef";

bool pl_esc_needed(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		size_t len;

		if (u[i] == '\\')
			return true;
		if (u[i] && u[i] < 0x80) {
			i++;
			continue;
		}
		len = pl_utf8_len(u + i, n - i);
		if (!len)
			return true;
		i += len;
	}
	return false;
}

/* The escaped text of the sequence at `u` (n > 0 bytes left) into `seq`
 * (at least 5 bytes); returns how many input bytes it stands for and sets
 * *seq_len.  `keep_backslash` leaves a backslash as it is (arguments). */
static size_t esc_step(const unsigned char *u, size_t n, bool keep_backslash, char *seq,
		       size_t *seq_len)
{
	size_t len = pl_utf8_len(u, n);

	if (len && u[0] == '\\' && !keep_backslash) {
		memcpy(seq, "\\\\", 2);
		*seq_len = 2;
		return 1;
	}
	if (len) {
		memcpy(seq, u, len);
		*seq_len = len;
		return len;
	}
	seq[0] = '\\';
	seq[1] = 'x';
	seq[2] = hex_digits[u[0] >> 4];
	seq[3] = hex_digits[u[0] & 15];
	*seq_len = 4;
	return 1;
}

static void esc_add(struct pl_buf *out, const char *s, size_t n, bool keep_backslash)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t start = 0, i = 0;

	while (i < n) {
		char seq[8];
		size_t seq_len, used;

		if (u[i] && u[i] < 0x80 && u[i] != '\\') {
			i++;  /* plain ASCII: copied in runs below */
			continue;
		}
		used = esc_step(u + i, n - i, keep_backslash, seq, &seq_len);
		if (seq_len == used && memcmp(seq, u + i, used) == 0) {
			i += used;  /* valid UTF-8 kept as it is */
			continue;
		}
		pl_buf_add(out, s + start, i - start);
		pl_buf_add(out, seq, seq_len);
		i += used;
		start = i;
	}
	pl_buf_add(out, s + start, n - start);
}

void pl_esc_add(struct pl_buf *out, const char *s, size_t n)
{
	esc_add(out, s, n, false);
}

void pl_esc_add_text(struct pl_buf *out, const char *s, size_t n)
{
	esc_add(out, s, n, true);
}

char *pl_esc_dup(const char *s)
{
	struct pl_buf b = {0};

	pl_esc_add(&b, s, strlen(s));
	if (!b.data)
		return pl_xstrdup("");
	return b.data;
}

static const char *esc_str(char *out, size_t cap, const char *s, size_t n, bool keep_backslash)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t used = 0;

	for (size_t i = 0; i < n;) {
		char seq[8];
		size_t seq_len, step = esc_step(u + i, n - i, keep_backslash, seq, &seq_len);

		if (used + seq_len + 1 > cap)
			break;
		memcpy(out + used, seq, seq_len);
		used += seq_len;
		i += step;
	}
	out[used] = '\0';
	return out;
}

const char *pl_esc_str(char *out, size_t cap, const char *s)
{
	return esc_str(out, cap, s, strlen(s), false);
}

const char *pl_esc_text_str(char *out, size_t cap, const char *s, size_t n)
{
	return esc_str(out, cap, s, n, true);
}

static int hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The byte the text at `s` (n > 0 bytes left) stands for; *used is how
 * many bytes of text that took. */
static unsigned char unesc_step(const unsigned char *s, size_t n, size_t *used)
{
	*used = 1;
	if (s[0] != '\\' || n < 2)
		return s[0];
	if (s[1] == '\\') {
		*used = 2;
		return '\\';
	}
	if (s[1] == 'x' && n >= 4 && hex_value(s[2]) >= 0 && hex_value(s[3]) >= 0) {
		*used = 4;
		return (unsigned char)(hex_value(s[2]) << 4 | hex_value(s[3]));
	}
	return '\\';
}

bool pl_esc_decode(const char *s, char *out, size_t cap)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), len = 0;

	for (size_t i = 0; i < n;) {
		size_t used;
		unsigned char c = unesc_step(u + i, n - i, &used);

		if (c == 0 || len + 1 >= cap)
			return false;
		out[len++] = (char)c;
		i += used;
	}
	if (cap == 0)
		return false;
	out[len] = '\0';
	return true;
}

void pl_esc_decode_add(struct pl_buf *out, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t start = 0, i = 0;

	while (i < n) {
		size_t used;
		unsigned char c;

		if (u[i] != '\\') {
			i++;
			continue;
		}
		c = unesc_step(u + i, n - i, &used);
		pl_buf_add(out, s + start, i - start);
		pl_buf_addc(out, (char)c);
		i += used;
		start = i;
	}
	pl_buf_add(out, s + start, n - start);
}
