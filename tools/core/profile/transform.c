/* transform.c - the stack transforms of a view (transform.h).
 *
 * Applying takes two passes over the stacks of the event.  The first
 * decides each stack from its frames (patterns matched once per function,
 * cached by function id): kept as it is, dropped, or rewritten, whose new
 * frames go to a scratch list while its weight is unlinked.  The second
 * interns each rewritten stack (equal ones become one) and adds the
 * weight back, so no stack is read after it was changed.
 */
#include "transform.h"

#include <stdlib.h>
#include <string.h>

const char *const pl_tf_field_names[PL_TF_NFIELDS] = {
	"ignore", "focus", "under", "hide", "show_from", "merge"
};

void pl_transform_init(struct pl_transform *t)
{
	memset(t, 0, sizeof(*t));
}

void pl_transform_release(struct pl_transform *t)
{
	for (int f = 0; f < PL_TF_NFIELDS; f++)
		if (t->given[f])
			regfree(&t->re[f]);
	memset(t, 0, sizeof(*t));
}

bool pl_transform_active(const struct pl_transform *t)
{
	for (int f = 0; f < PL_TF_NFIELDS; f++)
		if (t->given[f])
			return true;
	return t->collapse_recursion;
}

/* ------------------------------------------------------------ patterns */

#define VALID_FORM "a POSIX extended regular expression (e.g. \"^memcpy$\" or \"alloc|free\") of at most 256 " \
		   "bytes, without back-references; escape a literal ( [ { * + ? . | ^ $ with a backslash"

/* regcomp's error for the first `n` bytes of `pattern`. */
static int compile_prefix(const char *pattern, size_t n)
{
	char buf[PL_TF_PATTERN_MAX + 1];
	regex_t re;
	int rc;

	memcpy(buf, pattern, n);
	buf[n] = '\0';
	rc = regcomp(&re, buf, REG_EXTENDED | REG_NOSUB);
	if (rc == 0)
		regfree(&re);
	return rc;
}

/* The byte where `pattern` goes wrong: the one after its longest prefix
 * that regcomp takes (every longer one fails: an unclosed "(" or "[" is
 * where the failing begins). */
static size_t error_position(const char *pattern)
{
	size_t n = strlen(pattern);

	while (n > 0 && compile_prefix(pattern, n - 1) != 0)
		n--;
	return n ? n - 1 : 0;
}

/* ---------------------------------------------- what regcomp would build
 *
 * glibc's regcomp copies the operand of "+" once more and that of
 * "{m,n}" about n times, so nested repetitions multiply: "((a+)+)+..." or
 * "a++++..." (stacked quantifiers, which POSIX leaves undefined) take
 * memory exponential in the pattern's length.  A pattern is read here
 * first: stacked quantifiers are refused, and so is a pattern whose
 * estimated node count passes MAX_NODES. */
#define MAX_NODES 20000.0
#define MAX_GROUPS 64

/* The end of the bracket expression opening at p[i] ('['), or 0 when
 * it does not close (regcomp then says so). */
static size_t bracket_end(const char *p, size_t i)
{
	size_t j = i + 1;

	if (p[j] == '^')
		j++;
	if (p[j] == ']')
		j++;
	for (; p[j]; j++) {
		if (p[j] == '[' && (p[j + 1] == ':' || p[j + 1] == '.' || p[j + 1] == '=')) {
			const char *close = strchr(p + j + 2, p[j + 1]);
			if (!close || close[1] != ']')
				return 0;
			j = (size_t)(close - p) + 1;
		} else if (p[j] == ']') {
			return j;
		}
	}
	return 0;
}

/* The factor of the quantifier at p[*i] (1 for none), *i past it. */
static double quantifier(const char *p, size_t *i)
{
	char *end;
	unsigned long m, n;

	switch (p[*i]) {
	case '*': case '?':
		(*i)++;
		return 1.0;
	case '+':
		(*i)++;
		return 2.0;
	case '{':
		m = strtoul(p + *i + 1, &end, 10);
		n = *end == ',' ? (end[1] == '}' ? m + 1 : strtoul(end + 1, &end, 10)) : m;
		while (*end && *end != '}')
			end++;
		*i = (size_t)(end - p) + (*end == '}');
		return (double)(n > m ? n : m) + 1.0;
	default:
		return 1.0;
	}
}

static bool is_quantifier(const char *p, size_t i)
{
	return p[i] == '*' || p[i] == '+' || p[i] == '?' || (p[i] == '{' && p[i + 1] >= '0' && p[i + 1] <= '9');
}

/* The byte of a quantifier that follows another, or of the atom whose
 * repetitions pass MAX_NODES; -1 when the pattern is fine (or malformed
 * in a way regcomp reports itself).  *stacked says which. */
static long repetition_problem(const char *p, bool *stacked)
{
	double cost[MAX_GROUPS + 1] = {0}, atom;
	size_t depth = 0, i = 0, start, close;

	while (p[i]) {
		start = i;
		if (p[i] == '(') {
			if (depth == MAX_GROUPS)
				return -1;
			cost[++depth] = 0;
			i++;
			continue;
		}
		if (p[i] == ')' && depth > 0) {
			atom = cost[depth--] + 1;
			i++;
		} else if (p[i] == '[') {
			if (!(close = bracket_end(p, i)))
				return -1;
			atom = 1;
			i = close + 1;
		} else {
			atom = 1;
			i += p[i] == '\\' && p[i + 1] ? 2 : 1;
		}
		if (is_quantifier(p, i)) {
			atom *= quantifier(p, &i);
			if (is_quantifier(p, i)) {
				*stacked = true;
				return (long)i;
			}
		}
		cost[depth] += atom;
		if (cost[depth] > MAX_NODES) {
			*stacked = false;
			return (long)start;
		}
	}
	return -1;
}

/* The position of a back-reference (\1 to \9), or -1. */
static long back_reference(const char *pattern)
{
	for (size_t i = 0; pattern[i]; i++) {
		if (pattern[i] != '\\' || !pattern[i + 1])
			continue;
		if (pattern[i + 1] >= '1' && pattern[i + 1] <= '9')
			return (long)i;
		i++;   /* an escaped backslash does not start one */
	}
	return -1;
}

enum pl_err pl_transform_set(struct pl_transform *t, enum pl_tf_field field, const char *pattern,
			     struct pl_error *err)
{
	const char *name = pl_tf_field_names[field];
	size_t len = strlen(pattern);
	char why[128];
	bool stacked = false;
	long at;
	int rc;

	if (t->given[field])
		regfree(&t->re[field]);
	t->given[field] = false;
	if (len == 0 || len > PL_TF_PATTERN_MAX)
		return pl_fail(err, PL_ERR_USAGE, "pass " VALID_FORM,
			       "view.%s is %s (%zu bytes)", name, len ? "too long" : "empty", len);
	if ((at = back_reference(pattern)) >= 0)
		return pl_fail(err, PL_ERR_USAGE, "pass " VALID_FORM,
			       "view.%s has a back-reference at byte %ld (0-based): '%s'", name, at, pattern);
	if ((at = repetition_problem(pattern, &stacked)) >= 0)
		return pl_fail(err, PL_ERR_USAGE, "pass " VALID_FORM ", with one quantifier per atom and "
			       "repetitions not nested deep",
			       stacked ? "view.%s has a quantifier after a quantifier at byte %ld (0-based): '%s'"
				       : "view.%s repeats too much from byte %ld (0-based) on: '%s'", name, at, pattern);
	if ((rc = regcomp(&t->re[field], pattern, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, &t->re[field], why, sizeof(why));
		regfree(&t->re[field]);
		return pl_fail(err, PL_ERR_USAGE, "pass " VALID_FORM,
			       "view.%s is not a valid regular expression at byte %zu (0-based: %s): '%s'", name,
			       error_position(pattern), why, pattern);
	}
	t->given[field] = true;
	return PL_OK;
}

/* ------------------------------------------------------------ matching */

/* Per-function answers of each pattern: 0 not asked yet, 1 no, 2 yes. */
struct matcher {
	const struct pl_transform *t;
	const struct pl_profile *p;
	uint8_t *hit[PL_TF_NFIELDS];
};

static bool matches(struct matcher *m, enum pl_tf_field f, uint32_t frame)
{
	uint32_t func = m->p->frames[frame].func;
	uint8_t *h = &m->hit[f][func];

	if (!*h)
		*h = regexec(&m->t->re[f], pl_str(m->p, m->p->funcs[func].symbol), 0, NULL, 0) == 0 ? 2 : 1;
	return *h == 2;
}

/* The first frame index from `from` matching `f`, or depth. */
static uint32_t first_match(struct matcher *m, enum pl_tf_field f, const uint32_t *fr, uint32_t from,
			    uint32_t depth)
{
	for (uint32_t i = from; i < depth; i++)
		if (matches(m, f, fr[i]))
			return i;
	return depth;
}

/* ------------------------------------------------------------ one stack */

/* Why a stack is dropped, as the step that dropped it. */
#define KEEP PL_TF_NFIELDS

/* ignore, then focus (with under) on the frames as recorded. */
static enum pl_tf_field select_stack(struct matcher *m, const uint32_t *fr, uint32_t depth,
				     struct pl_transform_stats *st)
{
	const struct pl_transform *t = m->t;
	uint32_t u, f;

	if (t->given[PL_TF_IGNORE] && first_match(m, PL_TF_IGNORE, fr, 0, depth) < depth) {
		st->matched[PL_TF_IGNORE] = true;
		return PL_TF_IGNORE;
	}
	if (!t->given[PL_TF_FOCUS])
		return KEEP;
	if ((f = first_match(m, PL_TF_FOCUS, fr, 0, depth)) == depth)
		return PL_TF_FOCUS;
	st->matched[PL_TF_FOCUS] = true;
	if (!t->given[PL_TF_UNDER])
		return KEEP;
	/* A focus frame below the root-most under frame. */
	if ((u = first_match(m, PL_TF_UNDER, fr, 0, depth)) == depth)
		return PL_TF_FOCUS;
	st->matched[PL_TF_UNDER] = true;
	return first_match(m, PL_TF_FOCUS, fr, u + 1, depth) < depth ? KEEP : PL_TF_FOCUS;
}

/* hide, show_from, merge and collapse_recursion from fr[depth] into
 * out[] (room for depth); returns the new depth, or 0 with *why the step
 * that left nothing. */
static uint32_t rewrite_stack(struct matcher *m, const uint32_t *fr, uint32_t depth, uint32_t *out,
			      enum pl_tf_field *why, struct pl_transform_stats *st)
{
	const struct pl_transform *t = m->t;
	uint32_t n = 0, k = 0, from;

	for (uint32_t i = 0; i < depth; i++) {
		if (t->given[PL_TF_HIDE] && matches(m, PL_TF_HIDE, fr[i]))
			st->matched[PL_TF_HIDE] = true;
		else
			out[n++] = fr[i];
	}
	if (n == 0 && depth > 0) {
		*why = PL_TF_HIDE;
		return 0;
	}
	if (t->given[PL_TF_SHOW_FROM]) {
		if ((from = first_match(m, PL_TF_SHOW_FROM, out, 0, n)) == n) {
			*why = PL_TF_SHOW_FROM;
			return 0;
		}
		st->matched[PL_TF_SHOW_FROM] = true;
		memmove(out, out + from, (size_t)(n - from) * sizeof(*out));
		n -= from;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (i > 0 && t->given[PL_TF_MERGE] && matches(m, PL_TF_MERGE, out[i])) {
			st->matched[PL_TF_MERGE] = true;
			continue;
		}
		/* the run's last frame replaces the one before it */
		if (k > 0 && t->collapse_recursion && m->p->frames[out[k - 1]].func == m->p->frames[out[i]].func)
			k--;
		out[k++] = out[i];
	}
	return k;
}

/* ------------------------------------------------------------ applying */

/* The rewritten stacks, waiting for the second pass. */
struct pending {
	uint32_t *frames;          /* every stack's frames, one after the other */
	size_t nframes, frames_cap;
	struct moved { uint32_t thread, depth; size_t at; uint64_t samples, period; } *stacks;
	size_t n, cap;
};

static void pending_add(struct pending *pd, uint32_t thread, const uint32_t *fr, uint32_t depth,
			const struct pl_weight *w)
{
	PL_GROW(pd->frames, pd->frames_cap, pd->nframes + depth);
	PL_GROW(pd->stacks, pd->cap, pd->n + 1);
	memcpy(pd->frames + pd->nframes, fr, (size_t)depth * sizeof(*fr));
	pd->stacks[pd->n++] = (struct moved){thread, depth, pd->nframes, w->samples, w->period};
	pd->nframes += depth;
}

static void amount_add(struct pl_amount *a, const struct pl_weight *w)
{
	a->samples += w->samples;
	a->period += w->period;
}

/* The second pass: each rewritten stack interned, its weight added back.
 * The event's totals stay those of the input (pl_add_weight counts). */
static enum pl_err add_pending(struct pl_profile *p, uint32_t event, const struct pending *pd,
			       struct pl_error *err)
{
	struct pl_event saved = p->events[event];
	size_t most = pl_nstacks(p) + pd->n;

	/* Each rewritten stack adds at most one: the analysis was within the
	 * limit, so its view is, at twice its stacks at most. */
	if (most > p->limits.max_stacks && most <= UINT32_MAX)
		p->limits.max_stacks = (uint32_t)most;

	for (size_t i = 0; i < pd->n; i++) {
		const struct moved *mv = &pd->stacks[i];
		uint32_t id = pl_intern_stack(p, mv->thread, pd->frames + mv->at, mv->depth, err);
		if (id == PL_NOID)
			return err ? err->code : PL_ERR_LIMIT;
		pl_add_weight(p, id, event, mv->samples, mv->period, true);
	}
	p->events[event] = saved;
	return PL_OK;
}

/* Caller-check marks index frames of the stacks as recorded; true when
 * there were some. */
static bool drop_caller_checks(struct pl_profile *p)
{
	bool had = p->caller_check.attempted;

	p->nmarked = 0;
	p->caller_check.attempted = false;
	return had;
}

enum pl_err pl_transform_apply(const struct pl_transform *t, struct pl_profile *p, uint32_t event,
			       struct pl_transform_stats *st, struct pl_error *err)
{
	struct matcher m = {.t = t, .p = p};
	struct pending pd = {0};
	size_t nstacks = pl_nstacks(p);
	uint32_t *out = NULL;
	size_t out_cap = 0;
	enum pl_err rc = PL_OK;

	memset(st, 0, sizeof(*st));
	if (t->given[PL_TF_UNDER] && !t->given[PL_TF_FOCUS])
		return pl_fail(err, PL_ERR_USAGE, "pass view.focus with view.under: under names the callers of the "
			       "focused function", "view.under is given without view.focus");
	for (int f = 0; f < PL_TF_NFIELDS; f++)
		m.hit[f] = t->given[f] ? pl_xcalloc(pl_nfuncs(p) + 1, 1) : NULL;
	for (uint32_t s = 0; s < nstacks; s++) {
		struct pl_stack *sk = &p->stacks[s];
		const struct pl_weight *w = pl_stack_weight(p, s, event);
		enum pl_tf_field why;
		uint32_t depth = 0;

		if (!w)
			continue;
		amount_add(&st->before, w);
		if ((why = select_stack(&m, sk->frames, sk->depth, st)) == KEEP) {
			PL_GROW(out, out_cap, (size_t)sk->depth + 1);
			depth = rewrite_stack(&m, sk->frames, sk->depth, out, &why, st);
		}
		if (why != KEEP) {
			amount_add(&st->dropped[why], w);
		} else if (depth != sk->depth || memcmp(out, sk->frames, (size_t)depth * sizeof(*out)) != 0) {
			pending_add(&pd, sk->thread, out, depth, w);
			st->stacks_rewritten++;
		} else {
			amount_add(&st->kept, w);
			continue;
		}
		sk->first_weight = PL_NOID;
	}
	if (pd.n) {
		for (size_t i = 0; i < pd.n; i++)
			st->kept.samples += pd.stacks[i].samples, st->kept.period += pd.stacks[i].period;
		rc = add_pending(p, event, &pd, err);
		st->caller_checks_dropped = drop_caller_checks(p);
	}
	for (int f = 0; f < PL_TF_NFIELDS; f++)
		free(m.hit[f]);
	free(out);
	free(pd.frames);
	free(pd.stacks);
	return rc;
}
