/* jsonstr.c - JSON strings of outside bytes (see jsonstr.h): the bytes
 * as they are when they need no escape, else their escaped form. */
#include "jsonstr.h"
#include "base/escape.h"
#include "base/util.h"

#include <string.h>

json_t *pl_json_bytesn(const char *s, size_t n)
{
	struct pl_buf b = {0};
	json_t *j;

	if (!pl_esc_needed(s, n))
		return json_stringn(s, n);
	pl_esc_add(&b, s, n);
	j = json_stringn(b.data, b.len);
	pl_buf_release(&b);
	return j;
}

json_t *pl_json_text(const char *s)
{
	struct pl_buf b = {0};
	json_t *j;

	if (!s)
		return json_null();
	if (!pl_esc_needed(s, strlen(s)))
		return json_string(s);
	pl_esc_add_text(&b, s, strlen(s));
	j = json_string(b.data);
	pl_buf_release(&b);
	return j;
}

json_t *pl_json_bytes(const char *s)
{
	return s ? pl_json_bytesn(s, strlen(s)) : json_null();
}
