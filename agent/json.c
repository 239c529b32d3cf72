/* json.c - the strict bounded JSON reader and the bounded writer (see
 * json.h for the rules).  The reader is recursive descent over the input
 * with a depth limit; every node and every decoded string lives in the two
 * arrays allocated once from the input's length. */
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* UTF-8                                                                */

size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t need;
	uint32_t cp, min;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) { need = 2; cp = c & 0x1f; min = 0x80; }
	else if (c >= 0xe0 && c <= 0xef) { need = 3; cp = c & 0x0f; min = 0x800; }
	else if (c >= 0xf0 && c <= 0xf4) { need = 4; cp = c & 0x07; min = 0x10000; }
	else return 0;
	if (n < need)
		return 0;
	for (size_t i = 1; i < need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return need;
}

/* ------------------------------------------------------------------ */
/* Reader                                                               */

struct parser {
	struct json_doc *doc;
	const unsigned char *p, *end;
	int flags;
};

static int fail(struct parser *ps, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ps->doc->err, sizeof ps->doc->err, fmt, ap);
	va_end(ap);
	return -1;
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static uint32_t new_node(struct parser *ps, enum aj_type t)
{
	struct json_doc *d = ps->doc;
	if (d->n_nodes >= d->cap_nodes)
		return 0;
	uint32_t i = d->n_nodes++;
	memset(&d->nodes[i], 0, sizeof d->nodes[i]);
	d->nodes[i].type = t;
	return i;
}

static int hex4(const unsigned char *p, uint32_t *out)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		unsigned c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9') v |= c - '0';
		else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
		else return -1;
	}
	*out = v;
	return 0;
}

static void put_utf8(char *o, size_t *n, uint32_t cp)
{
	if (cp < 0x80) {
		o[(*n)++] = (char)cp;
	} else if (cp < 0x800) {
		o[(*n)++] = (char)(0xc0 | cp >> 6);
		o[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		o[(*n)++] = (char)(0xe0 | cp >> 12);
		o[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		o[(*n)++] = (char)(0xf0 | cp >> 18);
		o[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		o[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[(*n)++] = (char)(0x80 | (cp & 0x3f));
	}
}

/* A string at ps->p (on the opening quote), decoded into the text arena. */
static int parse_string(struct parser *ps, const char **out, size_t *out_len)
{
	struct json_doc *d = ps->doc;
	char *o = d->text + d->text_len;
	size_t n = 0;
	ps->p++;
	for (;;) {
		if (ps->p >= ps->end)
			return fail(ps, "unterminated string");
		unsigned c = *ps->p;
		if (c == '"') {
			ps->p++;
			break;
		}
		if (c < 0x20)
			return fail(ps, "control character in string");
		if (c == '\\') {
			if (ps->end - ps->p < 2)
				return fail(ps, "unterminated escape");
			unsigned e = ps->p[1];
			ps->p += 2;
			switch (e) {
			case '"': o[n++] = '"'; break;
			case '\\': o[n++] = '\\'; break;
			case '/': o[n++] = '/'; break;
			case 'b': o[n++] = '\b'; break;
			case 'f': o[n++] = '\f'; break;
			case 'n': o[n++] = '\n'; break;
			case 'r': o[n++] = '\r'; break;
			case 't': o[n++] = '\t'; break;
			case 'u': {
				uint32_t cp, lo;
				if (ps->end - ps->p < 4 || hex4(ps->p, &cp) < 0)
					return fail(ps, "bad \\u escape");
				ps->p += 4;
				if (cp >= 0xdc00 && cp <= 0xdfff)
					return fail(ps, "lone low surrogate");
				if (cp >= 0xd800 && cp <= 0xdbff) {
					if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' ||
					    hex4(ps->p + 2, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
						return fail(ps, "lone high surrogate");
					ps->p += 6;
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				}
				if (cp == 0)
					return fail(ps, "\\u0000 is not allowed");
				put_utf8(o, &n, cp);
				break;
			}
			default:
				return fail(ps, "bad escape");
			}
			continue;
		}
		size_t k = utf8_seq(ps->p, (size_t)(ps->end - ps->p));
		if (k == 0)
			return fail(ps, "invalid UTF-8");
		memcpy(o + n, ps->p, k);
		n += k;
		ps->p += k;
	}
	o[n] = '\0';
	d->text_len += n + 1;
	*out = o;
	*out_len = n;
	return 0;
}

static int parse_number(struct parser *ps, struct json_node *node)
{
	const unsigned char *s = ps->p, *q = ps->p;
	int real = 0;
	if (q < ps->end && *q == '-')
		q++;
	if (q >= ps->end)
		return fail(ps, "bad number");
	if (*q == '0') {
		q++;
	} else if (*q >= '1' && *q <= '9') {
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	} else {
		return fail(ps, "bad number");
	}
	if (q < ps->end && *q == '.') {
		real = 1;
		q++;
		if (q >= ps->end || *q < '0' || *q > '9')
			return fail(ps, "bad number");
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < ps->end && (*q == 'e' || *q == 'E')) {
		real = 1;
		q++;
		if (q < ps->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= ps->end || *q < '0' || *q > '9')
			return fail(ps, "bad number");
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	}
	size_t len = (size_t)(q - s);
	char small[64], *tmp = len < sizeof small ? small : malloc(len + 1);
	if (!tmp)
		return fail(ps, "out of memory");
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	errno = 0;
	int rc = 0;
	if (!real) {
		char *endp;
		long long v = strtoll(tmp, &endp, 10);
		if (errno == ERANGE)
			rc = fail(ps, "integer out of range");
		node->type = AJ_INT;
		node->i = v;
		node->d = (double)v;
	} else {
		double v = strtod(tmp, NULL);
		if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL))
			rc = fail(ps, "real out of range");
		node->type = AJ_REAL;
		node->d = v;
	}
	if (tmp != small)
		free(tmp);
	ps->p = q;
	return rc;
}

static int literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
		return fail(ps, "unexpected character");
	ps->p += n;
	return 0;
}

static int parse_value(struct parser *ps, uint32_t *out, int depth);

static int parse_container(struct parser *ps, uint32_t idx, int depth, int object)
{
	struct json_doc *d = ps->doc;
	uint32_t last = 0;
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == (object ? '}' : ']')) {
		ps->p++;
		return 0;
	}
	for (;;) {
		const char *key = NULL;
		size_t key_len = 0;
		uint32_t child;
		skip_ws(ps);
		if (object) {
			if (ps->p >= ps->end || *ps->p != '"')
				return fail(ps, "expected a key");
			if (parse_string(ps, &key, &key_len) < 0)
				return -1;
			for (uint32_t c = d->nodes[idx].first; c; c = d->nodes[c].next)
				if (d->nodes[c].key_len == key_len && memcmp(d->nodes[c].key, key, key_len) == 0)
					return fail(ps, "duplicate key");
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':')
				return fail(ps, "expected ':'");
			ps->p++;
		}
		if (parse_value(ps, &child, depth + 1) < 0)
			return -1;
		d->nodes[child].key = key;
		d->nodes[child].key_len = key_len;
		if (last)
			d->nodes[last].next = child;
		else
			d->nodes[idx].first = child;
		last = child;
		d->nodes[idx].count++;
		skip_ws(ps);
		if (ps->p >= ps->end)
			return fail(ps, "unterminated %s", object ? "object" : "array");
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p == (object ? '}' : ']')) {
			ps->p++;
			return 0;
		}
		return fail(ps, "expected ',' or '%c'", object ? '}' : ']');
	}
}

static int parse_value(struct parser *ps, uint32_t *out, int depth)
{
	if (depth > AJ_MAX_DEPTH)
		return fail(ps, "nested too deeply");
	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail(ps, "unexpected end of input");
	uint32_t idx = new_node(ps, AJ_NULL);
	if (!idx)
		return fail(ps, "too many values");
	*out = idx;
	struct json_node *n = &ps->doc->nodes[idx];
	switch (*ps->p) {
	case '{':
		n->type = AJ_OBJECT;
		return parse_container(ps, idx, depth, 1);
	case '[':
		n->type = AJ_ARRAY;
		return parse_container(ps, idx, depth, 0);
	case '"':
		n->type = AJ_STRING;
		return parse_string(ps, &n->str, &n->len);
	case 't':
		n->type = AJ_TRUE;
		return literal(ps, "true");
	case 'f':
		n->type = AJ_FALSE;
		return literal(ps, "false");
	case 'n':
		return literal(ps, "null");
	default:
		if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
			return parse_number(ps, n);
		return fail(ps, "unexpected character");
	}
}

int aj_parse(struct json_doc *doc, const char *buf, size_t len, uint32_t max_nodes, int flags)
{
	struct parser ps = {doc, (const unsigned char *)buf, (const unsigned char *)buf + len, flags};
	uint32_t root;
	memset(doc, 0, sizeof *doc);
	/* Every value takes at least one input byte: len bounds the nodes. */
	size_t cap = len < max_nodes ? len : max_nodes;
	doc->cap_nodes = (uint32_t)cap + 1;
	doc->n_nodes = 1;
	doc->nodes = malloc(doc->cap_nodes * sizeof *doc->nodes);
	doc->text_cap = len + 1;
	doc->text = malloc(doc->text_cap);
	if (!doc->nodes || !doc->text)
		return fail(&ps, "out of memory");
	if (parse_value(&ps, &root, 1) < 0)
		return -1;
	skip_ws(&ps);
	if (ps.p != ps.end)
		return fail(&ps, "text after the value");
	if (!(flags & AJ_ANY_VALUE) && doc->nodes[root].type != AJ_OBJECT)
		return fail(&ps, "not an object");
	return 0;
}

void aj_free(struct json_doc *doc)
{
	free(doc->nodes);
	free(doc->text);
	doc->nodes = NULL;
	doc->text = NULL;
}

const struct json_node *aj_root(const struct json_doc *doc)
{
	return doc->n_nodes > 1 ? &doc->nodes[1] : NULL;
}

const struct json_node *aj_first(const struct json_doc *doc, const struct json_node *n)
{
	return n && n->first ? &doc->nodes[n->first] : NULL;
}

const struct json_node *aj_next(const struct json_doc *doc, const struct json_node *n)
{
	return n && n->next ? &doc->nodes[n->next] : NULL;
}

const struct json_node *aj_get(const struct json_doc *doc, const struct json_node *obj,
				 const char *key)
{
	if (!obj || obj->type != AJ_OBJECT)
		return NULL;
	size_t kl = strlen(key);
	for (const struct json_node *c = aj_first(doc, obj); c; c = aj_next(doc, c))
		if (c->key_len == kl && memcmp(c->key, key, kl) == 0)
			return c;
	return NULL;
}

int aj_get_int(const struct json_doc *doc, const struct json_node *obj, const char *key,
		 int64_t *out)
{
	const struct json_node *n = aj_get(doc, obj, key);
	if (!n)
		return 0;
	if (n->type != AJ_INT)
		return -1;
	*out = n->i;
	return 1;
}

int aj_get_bool(const struct json_doc *doc, const struct json_node *obj, const char *key,
		  int *out)
{
	const struct json_node *n = aj_get(doc, obj, key);
	if (!n)
		return 0;
	if (n->type != AJ_TRUE && n->type != AJ_FALSE)
		return -1;
	*out = n->type == AJ_TRUE;
	return 1;
}

int aj_get_str(const struct json_doc *doc, const struct json_node *obj, const char *key,
		 const char **out)
{
	const struct json_node *n = aj_get(doc, obj, key);
	if (!n)
		return 0;
	if (n->type != AJ_STRING)
		return -1;
	*out = n->str;
	return 1;
}

/* ------------------------------------------------------------------ */
/* Writer                                                               */

void jw_init(struct jw *w, size_t max)
{
	memset(w, 0, sizeof *w);
	w->max = max;
	w->first[0] = 1;
}

void jw_free(struct jw *w)
{
	free(w->buf);
	w->buf = NULL;
}

void jw_reset(struct jw *w)
{
	size_t max = w->max, cap = w->cap;
	char *buf = w->buf;
	jw_init(w, max);
	w->buf = buf;
	w->cap = cap;
	if (buf)
		buf[0] = '\0';
}

static void put(struct jw *w, const char *s, size_t n)
{
	if (w->overflow)
		return;
	if (w->len + n + 1 > w->max) {
		w->overflow = 1;
		return;
	}
	if (w->len + n + 1 > w->cap) {
		size_t cap = w->cap ? w->cap : 256;
		while (cap < w->len + n + 1)
			cap *= 2;
		if (cap > w->max)
			cap = w->max;
		char *nb = realloc(w->buf, cap);
		if (!nb) {
			w->overflow = 1;
			return;
		}
		w->buf = nb;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

/* Before a value or a key: the comma that separates it from the last. */
static void sep(struct jw *w)
{
	if (w->after_key) {
		w->after_key = 0;
		return;
	}
	if (!w->first[w->depth])
		put(w, ",", 1);
	w->first[w->depth] = 0;
}

static void open_c(struct jw *w, char c)
{
	sep(w);
	put(w, &c, 1);
	if (w->depth + 1 >= AJ_MAX_DEPTH) {
		w->overflow = 1;
		return;
	}
	w->first[++w->depth] = 1;
}

static void close_c(struct jw *w, char c)
{
	put(w, &c, 1);
	if (w->depth > 0)
		w->depth--;
}

void jw_obj(struct jw *w) { open_c(w, '{'); }
void jw_obj_end(struct jw *w) { close_c(w, '}'); }
void jw_arr(struct jw *w) { open_c(w, '['); }
void jw_arr_end(struct jw *w) { close_c(w, ']'); }

static void str_body(struct jw *w, const char *s, size_t len, int path)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[8];
	put(w, "\"", 1);
	for (size_t i = 0; i < len;) {
		unsigned c = p[i];
		if (c == '"' || c == '\\') {
			put(w, c == '"' ? "\\\"" : (path ? "\\\\\\\\" : "\\\\"), c == '"' ? 2 : (path ? 4 : 2));
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			if (c == 0) {
				put(w, "\\\\x00", 5);
			} else {
				snprintf(esc, sizeof esc, "\\u%04x", c);
				put(w, esc, 6);
			}
			i++;
		} else if (c < 0x80) {
			put(w, (const char *)p + i, 1);
			i++;
		} else {
			size_t k = utf8_seq(p + i, len - i);
			if (k) {
				put(w, (const char *)p + i, k);
				i += k;
			} else {
				snprintf(esc, sizeof esc, "\\\\x%02x", c);
				put(w, esc, 5);
				i++;
			}
		}
	}
	put(w, "\"", 1);
}

void jw_key(struct jw *w, const char *key)
{
	sep(w);
	str_body(w, key, strlen(key), 0);
	put(w, ":", 1);
	w->after_key = 1;
}

void jw_str(struct jw *w, const char *s, size_t len)
{
	sep(w);
	str_body(w, s, len, 0);
}

void jw_path(struct jw *w, const char *s, size_t len)
{
	sep(w);
	str_body(w, s, len, 1);
}

void jw_cstr(struct jw *w, const char *s)
{
	if (!s)
		jw_null(w);
	else
		jw_str(w, s, strlen(s));
}

void jw_int(struct jw *w, int64_t v)
{
	char b[24];
	int n = snprintf(b, sizeof b, "%lld", (long long)v);
	sep(w);
	put(w, b, (size_t)n);
}

void jw_real(struct jw *w, double v, int decimals)
{
	char b[64];
	if (!isfinite(v) || fabs(v) > 1e15) {
		jw_null(w);
		return;
	}
	int n = snprintf(b, sizeof b, "%.*f", decimals, v);
	if (decimals == 0 && n > 0 && n + 2 < (int)sizeof b) {
		b[n++] = '.';
		b[n++] = '0';
	}
	sep(w);
	put(w, b, (size_t)n);
}

void jw_bool(struct jw *w, int v)
{
	sep(w);
	put(w, v ? "true" : "false", v ? 4 : 5);
}

void jw_null(struct jw *w)
{
	sep(w);
	put(w, "null", 4);
}

void jw_kstr(struct jw *w, const char *key, const char *s) { jw_key(w, key); jw_cstr(w, s); }
void jw_kint(struct jw *w, const char *key, int64_t v) { jw_key(w, key); jw_int(w, v); }
void jw_kbool(struct jw *w, const char *key, int v) { jw_key(w, key); jw_bool(w, v); }
void jw_kreal(struct jw *w, const char *key, double v, int decimals)
{
	jw_key(w, key);
	jw_real(w, v, decimals);
}
