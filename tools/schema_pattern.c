/* schema_pattern.c - the "pattern" of a schema property, matched without
 * regcomp when it is a plain anchored run (registry.h,
 * tool_pattern_match).
 *
 * Why: the schemas' patterns are runs of characters and bracket classes
 * with counts ("^an-[0-9a-f]{20}$", "^[A-Za-z0-9_.-]{1,96}$").  glibc's
 * regcomp copies a counted class that many times and regexec builds its
 * DFA on the first match: 40 to 80 us a pattern in a process that has not
 * matched it yet, which every forked worker is when it checks the next
 * steps of its answer (steps.c).  Such a pattern is read here into atoms
 * (a set of bytes with a minimum and maximum count) and matched by
 * backtracking over the counts, within a step budget.  Anything else - an
 * unanchored pattern, '.', alternation, groups, escapes, negated or named
 * classes, a byte outside printable ASCII, a budget spent - says so, and
 * the caller uses regcomp as before.  Printable ASCII only, so a multibyte
 * character matches no atom here, as it matches none there in any locale.
 * test_check_args compares both on every pattern of the schemas.
 */
#include "registry.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ATOMS 24
#define MATCH_BUDGET 20000   /* backtracking steps before regexec decides */

struct atom {
	unsigned char set[32];   /* a bit per byte */
	unsigned min, max;       /* max UINT_MAX: unbounded */
};

struct plain {
	struct atom atoms[MAX_ATOMS];
	size_t n;
	bool to_end;             /* ends with '$' */
};

static bool printable(unsigned char c)
{
	return c >= 0x20 && c <= 0x7e;
}

static void set_add(struct atom *a, unsigned char c)
{
	a->set[c >> 3] |= (unsigned char)(1u << (c & 7));
}

static bool set_has(const struct atom *a, unsigned char c)
{
	return a->set[c >> 3] & (1u << (c & 7));
}

/* A bracket class from just after '['; the byte after its ']', or NULL. */
static const char *read_class(const char *p, struct atom *a)
{
	bool first = true;

	if (*p == '^' || *p == ']')
		return NULL;  /* negation, or ']' as a member: regcomp's */
	while (*p && *p != ']') {
		unsigned char lo = (unsigned char)*p, hi = lo;
		if (!printable(lo) || lo == '[' || lo == '\\')
			return NULL;  /* [:name:], [=x=], escapes: regcomp's */
		/* '-' is a member when first or last, else it makes a range;
		 * a range from or to '-' ("[0-9--f]") is regcomp's to judge. */
		if (lo == '-' && !first && p[1] != ']')
			return NULL;
		if (p[1] == '-' && p[2] && p[2] != ']') {
			hi = (unsigned char)p[2];
			if (!printable(hi) || hi == '[' || hi == '\\' || hi == '-' || lo == '-' || hi < lo)
				return NULL;
			p += 3;
		} else {
			p++;
		}
		for (unsigned c = lo; c <= hi; c++)
			set_add(a, (unsigned char)c);
		first = false;
	}
	return *p == ']' ? p + 1 : NULL;
}

/* A count after an atom ("{m}", "{m,}", "{m,n}", '+', '*', '?'), or none;
 * the byte after it, or NULL when malformed. */
static const char *read_count(const char *p, struct atom *a)
{
	char *end;
	unsigned long m, n;

	a->min = a->max = 1;
	if (*p == '+' || *p == '*' || *p == '?') {
		a->min = *p == '+' ? 1 : 0;
		a->max = *p == '?' ? 1 : UINT_MAX;
		return p + 1;
	}
	if (*p != '{')
		return p;
	if (p[1] < '0' || p[1] > '9' || (m = strtoul(p + 1, &end, 10)) > 1000)
		return NULL;
	n = m;
	if (*end == ',') {
		end++;
		if (*end == '}')
			n = UINT_MAX;
		else if (*end < '0' || *end > '9' || (n = strtoul(end, &end, 10)) > 1000 || n < m)
			return NULL;
	}
	if (*end != '}')
		return NULL;
	a->min = (unsigned)m;
	a->max = (unsigned)n;
	return end + 1;
}

/* `pattern` as atoms; false when it is not a plain anchored run. */
static bool read_plain(const char *pattern, struct plain *pl)
{
	const char *p = pattern;

	memset(pl, 0, sizeof(*pl));
	if (*p++ != '^')
		return false;
	while (*p && !(p[0] == '$' && p[1] == '\0')) {
		struct atom *a;
		if (pl->n == MAX_ATOMS)
			return false;
		a = &pl->atoms[pl->n++];
		if (*p == '[') {
			p = read_class(p + 1, a);
		} else if (printable((unsigned char)*p) && !strchr(".[]()*+?{}|^$\\", *p)) {
			set_add(a, (unsigned char)*p);
			p++;
		} else {
			return false;
		}
		if (!p || !(p = read_count(p, a)))
			return false;
	}
	pl->to_end = *p == '$';
	return true;
}

/* Do atoms [i, n) match at `s`?  1, 0, or -1 when the budget is spent. */
static int match_from(const struct plain *pl, size_t i, const char *s, long *budget)
{
	const struct atom *a;
	size_t run = 0;

	if (--*budget < 0)
		return -1;
	if (i == pl->n)
		return !pl->to_end || *s == '\0';
	a = &pl->atoms[i];
	while (run < a->max && s[run] && set_has(a, (unsigned char)s[run]))
		run++;
	for (size_t k = run + 1; k-- > a->min;) {
		int r = match_from(pl, i + 1, s + k, budget);
		if (r != 0)
			return r;
	}
	return 0;
}

int tool_pattern_match(const char *pattern, const char *s)
{
	struct plain pl;
	long budget = MATCH_BUDGET;

	if (!read_plain(pattern, &pl))
		return -1;
	return match_from(&pl, 0, s, &budget);
}
