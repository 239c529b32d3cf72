/* demangle.c - linker symbols made readable (see demangle.h).
 *
 * libiberty's cplus_demangle does the demangling, with perf's flags, so
 * a name is the one perf prints for the same symbol; it is bounded by
 * PL_DEMANGLE_MAX and by libiberty's own recursion limit.  The short form
 * is computed here from the full one by a bracket-matching scan that never
 * reads past `n` and never recurses deeper than the name's own nesting
 * (itself bounded by PL_DEMANGLE_MAX characters).
 */
#include "profile/demangle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "base/util.h"
#include "profile.h"

bool pl_demangle_looks_mangled(const char *s, size_t n)
{
	if (n >= 3 && s[0] == '_' && (s[1] == 'Z' || s[1] == 'R' || s[1] == 'D'))
		return true;
	return n >= 8 && memcmp(s, "_GLOBAL_", 8) == 0;
}

/* Does a Rust v0 name bind more lifetimes than any real one does?  A
 * binder is 'G', a base-62 count and '_', and follows only the 'F' of a
 * fn signature or the 'D' of dyn bounds; libiberty prints every bound
 * lifetime, so a count of three or more digits (3,844 and up) makes it
 * allocate gigabytes (fuzz_demangle found one of 2 GB).  Scanned over the
 * whole name: an "FG"/"DG" inside an identifier or a crate hash that
 * happens to match only leaves that name mangled (counted as such). */
static bool rust_binder_too_large(const char *s, size_t n)
{
	if (n < 2 || s[0] != '_' || s[1] != 'R')
		return false;
	for (size_t i = 2; i < n; i++) {
		if (s[i] != 'G' || (s[i - 1] != 'F' && s[i - 1] != 'D'))
			continue;
		size_t j = i + 1;
		while (j < n && ((s[j] >= '0' && s[j] <= '9') || (s[j] >= 'a' && s[j] <= 'z') ||
				 (s[j] >= 'A' && s[j] <= 'Z')))
			j++;
		if (j < n && s[j] == '_' && j - (i + 1) >= 3)
			return true;
	}
	return false;
}

char *pl_demangle(const char *s, size_t n, enum pl_demangle_form form)
{
	char buf[PL_DEMANGLE_MAX + 1];
	size_t m = n, slen;
	char *d, *out;

	if (!pl_demangle_looks_mangled(s, n) || n > PL_DEMANGLE_MAX || memchr(s, '\0', n))
		return NULL;
	/* perf demangles the symbol, then appends "@plt" */
	if (m > 4 && memcmp(s + m - 4, "@plt", 4) == 0)
		m -= 4;
	memcpy(buf, s, m);
	buf[m] = '\0';
	if (rust_binder_too_large(buf, m))
		return NULL;
	d = cplus_demangle(buf, form == PL_DM_FULL ? (DMGL_PARAMS | DMGL_ANSI) : DMGL_NO_OPTS);
	if (!d || m == n)
		return d;
	slen = strlen(d);
	out = pl_xmalloc(slen + 5);
	memcpy(out, d, slen);
	memcpy(out + slen, "@plt", 5);
	free(d);
	return out;
}

/* ------------------------------------------------------------------ */
/* The short form                                                      */
/* ------------------------------------------------------------------ */

/* The index just past the bracket that closes s[i] ('<', '(', '[' or
 * '{'), or n when it is not closed.  "->" closes nothing. */
static size_t skip_group(const char *s, size_t n, size_t i)
{
	size_t depth = 0;

	for (; i < n; i++) {
		char c = s[i];
		if (c == '<' || c == '(' || c == '[' || c == '{')
			depth++;
		else if ((c == '>' && !(i > 0 && s[i - 1] == '-')) || c == ')' || c == ']' || c == '}') {
			if (depth == 0 || --depth == 0)
				return i + 1;
		}
	}
	return n;
}

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '$' || c == '.' || (unsigned char)c >= 0x80;
}

/* Past the operator name that starts at s[i] ("operator" already seen at
 * i - 8): "()", "[]", a run of operator characters, or a word (new,
 * delete, a conversion's type up to its parameter list). */
static size_t skip_operator(const char *s, size_t n, size_t i)
{
	static const char ops[] = "+-*/%^&|~!=<>,";

	if (i + 1 < n && ((s[i] == '(' && s[i + 1] == ')') || (s[i] == '[' && s[i + 1] == ']')))
		return i + 2;
	if (i < n && s[i] && strchr(ops, s[i])) {
		while (i < n && s[i] && strchr(ops, s[i]))
			i++;
		return i;
	}
	/* operator new, operator delete[], operator""_x, operator int */
	while (i < n && s[i] != '(' && s[i] != '<')
		i++;
	return i;
}

/* Copy s[i..n) in short form onto `out`, returning where it stopped:
 * at the end of a top-level parameter list not followed by "::", or n. */
static size_t shorten_into(const char *s, size_t n, size_t i, struct pl_buf *out, bool top,
			   bool templates)
{
	bool seg_start = true;

	while (i < n) {
		char c = s[i];
		if (c == '{') {
			/* {lambda(long)#1}, {unnamed type#1}, {{closure}}: kept */
			size_t e = skip_group(s, n, i);
			pl_buf_add(out, s + i, e - i);
			i = e;
			seg_start = false;
		} else if (c == '<' && seg_start) {
			/* a qualified path: <T as Trait>::f */
			size_t e = skip_group(s, n, i);
			bool closed = e > i + 1 && s[e - 1] == '>';
			pl_buf_addc(out, '<');
			shorten_into(s, closed ? e - 1 : e, i + 1, out, false, templates);
			if (closed)
				pl_buf_addc(out, '>');
			i = e;
			seg_start = false;
		} else if (c == '<' && templates) {
			size_t e = skip_group(s, n, i);
			pl_buf_add(out, s + i, e - i);
			i = e;
			seg_start = false;
		} else if (c == '<') {
			i = skip_group(s, n, i);   /* template arguments */
		} else if (c == '(' && n - i >= 21 && memcmp(s + i, "(anonymous namespace)", 21) == 0) {
			pl_buf_add(out, s + i, 21);
			i += 21;
			seg_start = false;
		} else if (c == '(' && top) {
			i = skip_group(s, n, i);   /* parameters */
			if (i + 1 < n && s[i] == ':' && s[i + 1] == ':')
				continue;          /* of an enclosing function */
			return i;
		} else if (c == ' ' && top) {
			/* a template function's return type: "void f<int>(int)" */
			if (memchr(s + i, '(', n - i))
				out->len = 0;
			i++;
			seg_start = true;
		} else if (c == 'o' && (i == 0 || !ident_char(s[i - 1])) && n - i >= 8 &&
			   memcmp(s + i, "operator", 8) == 0 && (n - i == 8 || !ident_char(s[i + 8]))) {
			size_t e = skip_operator(s, n, i + 8);
			pl_buf_add(out, s + i, e - i);
			i = e;
			seg_start = false;
		} else {
			pl_buf_addc(out, c);
			seg_start = c == ':' || c == ' ' || c == ',';
			i++;
		}
	}
	return i;
}

static char *shorten(const char *full, size_t n, bool templates)
{
	struct pl_buf out = {0};
	bool plt = n > 4 && memcmp(full + n - 4, "@plt", 4) == 0;

	shorten_into(full, plt ? n - 4 : n, 0, &out, true, templates);
	if (out.len == 0)
		pl_buf_add(&out, full, plt ? n - 4 : n);
	if (plt)
		pl_buf_add(&out, "@plt", 4);
	pl_buf_addc(&out, '\0');
	return out.data;
}

char *pl_demangle_shorten(const char *full, size_t n)
{
	return shorten(full, n, false);
}

/* ------------------------------------------------------------------ */
/* Unique short names over a profile                                   */
/* ------------------------------------------------------------------ */

struct short_ref {
	const char *s;       /* the short form */
	uint32_t dso, symbol;
	size_t func;
};

static int short_cmp(const void *a, const void *b)
{
	const struct short_ref *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	if (c)
		return c;
	if (x->dso != y->dso)
		return x->dso < y->dso ? -1 : 1;
	if (x->symbol != y->symbol)
		return x->symbol < y->symbol ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

/* Template instances (kv::Box<int>::twice, kv::Box<double>::twice) that
 * shorten alike keep their template arguments when that tells them
 * apart: r[0..m) sorted, out[] the short names. */
static void keep_template_args(const struct pl_profile *p, struct short_ref *r, size_t m, char **out)
{
	for (size_t a = 0, b; a < m; a = b) {
		bool differ = false;
		for (b = a + 1; b < m && strcmp(r[b].s, r[a].s) == 0 && r[b].dso == r[a].dso; b++)
			differ |= r[b].symbol != r[a].symbol;
		if (!differ)
			continue;
		for (size_t k = a; k < b; k++)
			if (out[r[k].func]) {
				const char *sym = pl_str(p, r[k].symbol);
				free(out[r[k].func]);
				out[r[k].func] = shorten(sym, strlen(sym), true);
				r[k].s = out[r[k].func];
			}
	}
}

/* Every name shown once per DSO: a short name that is still another
 * function's (two overloads, or a plain symbol "f<int>") gives way to
 * the full name, until none does. */
static void drop_colliding_names(const struct pl_profile *p, struct short_ref *r, size_t m, char **out)
{
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t k = 0; k < m; k++)
			r[k].s = out[r[k].func] ? out[r[k].func] : pl_str(p, r[k].symbol);
		qsort(r, m, sizeof(*r), short_cmp);
		for (size_t k = 0; k + 1 < m; k++) {
			if (strcmp(r[k].s, r[k + 1].s) != 0 || r[k].dso != r[k + 1].dso ||
			    r[k].symbol == r[k + 1].symbol)
				continue;
			for (size_t j = k; j <= k + 1; j++)
				if (out[r[j].func]) {
					free(out[r[j].func]);
					out[r[j].func] = NULL;
					r[j].s = pl_str(p, r[j].symbol);
					changed = true;
				}
		}
	}
}

char **pl_profile_short_names(const struct pl_profile *p)
{
	size_t n = pl_nfuncs(p), m = 0;
	char **out = pl_xcalloc(n ? n : 1, sizeof(*out));
	struct short_ref *r = pl_xcalloc(n ? n : 1, sizeof(*r));

	for (size_t i = 0; i < n; i++) {
		const char *sym = pl_str(p, p->funcs[i].symbol);
		size_t len = sym ? strlen(sym) : 0;
		char *s;

		/* only a demangled name has templates or parameters to elide */
		if (!sym || p->funcs[i].linkage == PL_NOID)
			continue;
		s = pl_demangle_shorten(sym, len);
		if (strcmp(s, sym) == 0) {
			free(s);
			continue;
		}
		out[i] = s;
		r[m++] = (struct short_ref){s, p->funcs[i].dso, p->funcs[i].symbol, i};
	}
	/* A short name another function's plain symbol already has (a C
	 * function "f" beside C++ "f(int)") collides too. */
	for (size_t i = 0; i < n; i++)
		if (!out[i] && p->funcs[i].symbol != PL_NOID && pl_str(p, p->funcs[i].symbol))
			r[m++] = (struct short_ref){pl_str(p, p->funcs[i].symbol), p->funcs[i].dso,
						    p->funcs[i].symbol, i};
	qsort(r, m, sizeof(*r), short_cmp);
	keep_template_args(p, r, m, out);
	drop_colliding_names(p, r, m, out);
	for (size_t i = 0; i < n; i++)
		if (out[i] && strcmp(out[i], pl_str(p, p->funcs[i].symbol)) == 0) {
			free(out[i]);
			out[i] = NULL;
		}
	free(r);
	return out;
}

void pl_short_names_free(char **names, size_t n)
{
	if (!names)
		return;
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
