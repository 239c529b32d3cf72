/* json.h - the agent's small strict JSON reader and bounded writer.
 *
 * Reader: aj_parse() turns one buffer into a tree of nodes held in two
 * allocations sized from the input (a node per value, at most max_nodes;
 * decoded strings never outgrow their source), so a peer cannot make it
 * allocate more than a small multiple of the frame it sent.  It is strict
 * RFC 8259 with jansson's choices where the RFC leaves room (checked
 * against jansson in tests/unit/agent/): UTF-8 is validated, \u0000 and
 * lone surrogates are refused, duplicate keys are refused, integers beyond
 * int64 and reals beyond double are refused, nothing may follow the value.
 * Lookups are scoped to one object (no substring search, unlike the seed).
 *
 * Writer: struct jw appends to a heap buffer that never grows past its
 * max; a write past it sets jw.overflow and the caller drops the frame.
 * Strings are escaped once: valid UTF-8 is kept, control characters are
 * JSON escapes, and bytes that are not UTF-8 become the text \xHH (the
 * escaped form of docs/paths.md; jw_path also doubles backslashes). */
#ifndef AGENT_JSON_H
#define AGENT_JSON_H

#include <stddef.h>
#include <stdint.h>

enum aj_type { AJ_NULL, AJ_FALSE, AJ_TRUE, AJ_INT, AJ_REAL, AJ_STRING,
		 AJ_ARRAY, AJ_OBJECT };

struct json_node {
	enum aj_type type;
	uint32_t count;       /* members of an array or object */
	uint32_t first;       /* index of the first member, 0 = none */
	uint32_t next;        /* index of the next sibling, 0 = none */
	const char *key;      /* NUL-terminated member name (objects only) */
	size_t key_len;
	const char *str;      /* NUL-terminated decoded string */
	size_t len;
	int64_t i;            /* AJ_INT */
	double d;             /* AJ_REAL, and AJ_INT as a double */
};

struct json_doc {
	struct json_node *nodes;  /* nodes[0] is unused so that 0 means none */
	uint32_t n_nodes, cap_nodes;
	char *text;               /* decoded strings */
	size_t text_len, text_cap;
	char err[96];             /* why the parse failed */
};

#define AJ_MAX_DEPTH 64
#define AJ_ANY_VALUE 1  /* aj_parse flag: any value at top level (default: object) */

/* Parse len bytes.  0 on success; -1 with doc->err set.  Always call
 * aj_free() afterwards. */
int aj_parse(struct json_doc *doc, const char *buf, size_t len, uint32_t max_nodes, int flags);
void aj_free(struct json_doc *doc);

const struct json_node *aj_root(const struct json_doc *doc);
const struct json_node *aj_first(const struct json_doc *doc, const struct json_node *n);
const struct json_node *aj_next(const struct json_doc *doc, const struct json_node *n);
/* The member KEY of object OBJ, or NULL (also when OBJ is not an object). */
const struct json_node *aj_get(const struct json_doc *doc, const struct json_node *obj,
				 const char *key);
/* Typed member lookups: 1 and *out set when KEY is there with that type,
 * 0 when absent, -1 when present with another type. */
int aj_get_int(const struct json_doc *doc, const struct json_node *obj, const char *key,
		 int64_t *out);
int aj_get_bool(const struct json_doc *doc, const struct json_node *obj, const char *key,
		  int *out);
int aj_get_str(const struct json_doc *doc, const struct json_node *obj, const char *key,
		 const char **out);

struct jw {
	char *buf;
	size_t len, cap, max;
	int overflow;         /* a write did not fit: the text is incomplete */
	int depth;
	uint8_t first[AJ_MAX_DEPTH]; /* no member written yet at this depth */
	int after_key;
};

void jw_init(struct jw *w, size_t max);
void jw_free(struct jw *w);
void jw_reset(struct jw *w);
void jw_obj(struct jw *w);
void jw_obj_end(struct jw *w);
void jw_arr(struct jw *w);
void jw_arr_end(struct jw *w);
void jw_key(struct jw *w, const char *key);
void jw_str(struct jw *w, const char *s, size_t len);
void jw_cstr(struct jw *w, const char *s);   /* NULL writes null */
void jw_path(struct jw *w, const char *s, size_t len);
void jw_int(struct jw *w, int64_t v);
void jw_real(struct jw *w, double v, int decimals); /* not finite: null */
void jw_bool(struct jw *w, int v);
void jw_null(struct jw *w);
/* Shorthands for one member. */
void jw_kstr(struct jw *w, const char *key, const char *s);
void jw_kint(struct jw *w, const char *key, int64_t v);
void jw_kbool(struct jw *w, const char *key, int v);
void jw_kreal(struct jw *w, const char *key, double v, int decimals);

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if none. */
size_t utf8_seq(const unsigned char *s, size_t n);

#endif
