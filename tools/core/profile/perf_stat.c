/* perf_stat.c - a streaming parser for `perf stat` output (see perf_stat.h).
 *
 * Lines are classified one at a time and never buffered, so the working
 * memory is bounded by the longest line (over 1 MiB: PL_ERR_LIMIT, and the
 * parser goes on with the next line).  Anything not recognised (interval
 * `-I` and per-CPU `-A` lines, perf's warnings, JSON) is counted in
 * lines_skipped and never fails; blank lines are ignored but end the
 * counter above them, so a later `   # metric` line is skipped rather than
 * appended to it.  No global state: parsers may run in parallel threads.
 * Kept as printed: event names (`cpu_core/cycles/`, `cycles:u`), units and
 * comments.  The target drops a trailing " (N runs)" from -r headers.
 * Bounds: 1M counters per block (PL_ERR_LIMIT), comments and targets cut
 * to 4 KiB, event names over 1 KiB and units over 32 bytes are not read.
 *
 * IPC: instructions / cycles (or cpu-cycles), both COUNTED, cycles > 0,
 * with the same PMU prefix and the same modifiers (`instructions:u` pairs
 * only with `cycles:u`).  A plain pair wins, then an unqualified pair with
 * modifiers, then the first PMU-qualified pair in print order.
 *
 * CSV or human, decided per line:
 *   A line is tried as CSV only when it does not start with blank space and
 *   its leading value (`<not supported>`, `<not counted>` or digits) is
 *   followed *immediately* by a separator: a printable ASCII character that
 *   is not a letter, digit, space, `<`, `+` or `-`.  perf pads human values
 *   to 18 columns and always puts blanks between value, unit and event, so a
 *   human line never has that.  When the value has a `.` or `,` right after
 *   its first digits, both that character and the next non-digit are tried
 *   as the separator (`3.25,msec` with -x, and `3,25;msec` with -x; under a
 *   German locale).  A candidate is accepted only if it yields >= 3 fields
 *   `value,unit,event`, the value is a plain number (CSV is never grouped),
 *   the unit does not start with a digit and the event starts with a letter
 *   or `_`.  This also rejects `-I` interval lines (`1.001,1234,,cycles`),
 *   whose second field is a number.  A failed CSV candidate falls back to
 *   the human layout.  After the event come an optional variance field
 *   (`9.16%`, only with -r), run time, run percent, metric value and metric
 *   unit; `cpu/event=0x3c,umask=0x00/` split by a `,` separator is joined
 *   back while the event has only its first `/`.
 *
 * Numbers (pl_stat_parse_number, used for human counter values):
 *   Digit groups may be separated by `,` `.` `'` U+2019, or a space: ASCII
 *   space, U+00A0, U+202F, U+2009.  Spaces and apostrophes always group.
 *   If both `,` and `.` appear, the last mark is the decimal point and must
 *   appear once.  If only one of them appears more than once it groups
 *   (`24,673,883,923`, `1.234.567`).  A lone `,` or `.` is the decimal point
 *   when a space or apostrophe grouped before it (`7 829,39`); otherwise it
 *   groups only if it is followed by exactly 3 digits and preceded by 1-3
 *   digits not starting with 0, as perf prints integer counts: so `1.234`
 *   is 1234, but `0.105`, `1.23` and `1234.567` are decimals.  Groups must
 *   be 1-3 digits first, 2-3 in the middle (lakh style) and 3 last, all
 *   with the same mark.  Seconds, percentages and CSV fields are printed
 *   without grouping, so there a single `,` or `.` is always the decimal.
 *   In a human line an ASCII space belongs to the value only when exactly
 *   three digits follow it (`7 829,39 msec task-clock`).
 */
#include "perf_stat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define STAT_MAX_LINE ((size_t)1 << 20)      /* longer lines: PL_ERR_LIMIT */
#define STAT_MAX_COUNTERS ((size_t)1 << 20)  /* per block: PL_ERR_LIMIT */
#define STAT_MAX_TEXT ((size_t)4096)         /* comment and target, cut */
#define STAT_MAX_EVENT ((size_t)1024)        /* longer names are not events */
#define STAT_MAX_UNIT ((size_t)32)           /* longer units are not units */
#define NUM_MAX_GROUPS 64
#define CSV_MAX_FIELDS 32
#define IPC_MAX_CANDIDATES 64                /* counters tried per side */

static const char HEADER[] = "Performance counter stats for ";
static const char NOT_SUPPORTED[] = "<not supported>";
static const char NOT_COUNTED[] = "<not counted>";

struct pl_stat_parser {
	struct pl_stat_block *b;
	size_t cap;          /* slots allocated in b->counters */
	bool after_counter;  /* the last non-blank line added a counter */
};

/* A borrowed piece of the current line. */
struct span {
	const char *p;
	size_t n;
};

/* One counter line, before anything is copied. */
struct counter_text {
	enum pl_stat_status status;
	double value;
	bool is_integer;
	struct span unit, event;
	struct span comment, comment_more;  /* joined by a space when both set */
	double run_percent, variance_percent;
};

static const char *const status_names[] = {
	[PL_STAT_COUNTED] = "counted",
	[PL_STAT_NOT_SUPPORTED] = "not_supported",
	[PL_STAT_NOT_COUNTED] = "not_counted",
};

const char *pl_stat_status_name(enum pl_stat_status s)
{
	if ((unsigned)s >= PL_ARRAY_LEN(status_names))
		return "unknown";
	return status_names[s];
}

/* ------------------------------------------------------------------ */
/* Spans                                                              */
/* ------------------------------------------------------------------ */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static struct span span_skip(struct span s, size_t k)
{
	if (k > s.n)
		k = s.n;
	if (k == 0)
		return s;   /* an empty span may be {NULL, 0}: NULL + 0 is undefined */
	return (struct span){s.p + k, s.n - k};
}

static struct span span_ltrim(struct span s)
{
	size_t i = 0;

	while (i < s.n && is_blank(s.p[i]))
		i++;
	return span_skip(s, i);
}

static struct span span_rtrim(struct span s)
{
	while (s.n && is_blank(s.p[s.n - 1]))
		s.n--;
	return s;
}

static struct span span_trim(struct span s)
{
	return span_rtrim(span_ltrim(s));
}

static bool span_starts(struct span s, const char *lit)
{
	size_t k = strlen(lit);

	return s.n >= k && memcmp(s.p, lit, k) == 0;
}

static bool span_is(struct span s, const char *lit)
{
	return s.n == strlen(lit) && span_starts(s, lit);
}

/* The first run of non-blank bytes of `s` (which starts non-blank). */
static struct span span_word(struct span s)
{
	size_t i = 0;

	while (i < s.n && !is_blank(s.p[i]))
		i++;
	return (struct span){s.p, i};
}

/* Whether every byte is printable ASCII without spaces. */
static bool span_is_token(struct span s)
{
	for (size_t i = 0; i < s.n; i++) {
		unsigned char c = (unsigned char)s.p[i];
		if (c <= 0x20 || c >= 0x7f)
			return false;
	}
	return true;
}

/* `s` cut to at most `max` bytes without splitting a UTF-8 sequence. */
static struct span span_cut_utf8(struct span s, size_t max)
{
	if (s.n <= max)
		return s;
	s.n = max;
	while (s.n && ((unsigned char)s.p[s.n] & 0xc0) == 0x80)
		s.n--;
	return s;
}

/* ------------------------------------------------------------------ */
/* Numbers                                                            */
/* ------------------------------------------------------------------ */

enum mark { MARK_COMMA, MARK_DOT, MARK_APOS, MARK_SPACE };

/* Human counters guess grouping; seconds, percentages and CSV do not. */
enum num_mode { NUM_GUESS, NUM_PLAIN };

/* Digit groups of a number and the mark after each group but the last. */
struct numscan {
	const char *digits[NUM_MAX_GROUPS];
	size_t glen[NUM_MAX_GROUPS];
	enum mark mark[NUM_MAX_GROUPS];
	size_t ngroups;
	bool negative;
};

/* Length of the grouping or decimal mark at s[i], 0 when there is none. */
static size_t mark_at(const char *s, size_t n, size_t i, enum mark *kind)
{
	const unsigned char *u = (const unsigned char *)s + i;
	size_t left = n - i;

	switch (u[0]) {
	case ',':
		*kind = MARK_COMMA;
		return 1;
	case '.':
		*kind = MARK_DOT;
		return 1;
	case '\'':
		*kind = MARK_APOS;
		return 1;
	case ' ':
		*kind = MARK_SPACE;
		return 1;
	case 0xc2:  /* U+00A0 no-break space */
		*kind = MARK_SPACE;
		return left >= 2 && u[1] == 0xa0 ? 2 : 0;
	case 0xe2:  /* U+2009 thin, U+202F narrow no-break, U+2019 quote */
		if (left < 3 || u[1] != 0x80)
			return 0;
		*kind = u[2] == 0x99 ? MARK_APOS : MARK_SPACE;
		return u[2] == 0x89 || u[2] == 0xaf || u[2] == 0x99 ? 3 : 0;
	default:
		return 0;
	}
}

/* Split `s` into digit groups; false unless it is sign? digits (mark
 * digits)* with nothing else. */
static bool num_scan(struct span s, struct numscan *ns)
{
	size_t i = 0;

	ns->ngroups = 0;
	ns->negative = s.n && s.p[0] == '-';
	if (s.n && (s.p[0] == '-' || s.p[0] == '+'))
		i++;
	for (;;) {
		size_t start = i, mlen;
		enum mark kind;

		while (i < s.n && is_digit(s.p[i]))
			i++;
		if (i == start || ns->ngroups == NUM_MAX_GROUPS)
			return false;
		ns->digits[ns->ngroups] = s.p + start;
		ns->glen[ns->ngroups] = i - start;
		ns->ngroups++;
		if (i == s.n)
			return true;
		mlen = mark_at(s.p, s.n, i, &kind);
		if (!mlen)
			return false;
		ns->mark[ns->ngroups - 1] = kind;
		i += mlen;
	}
}

/* Index of the mark that is the decimal point; -1 when there is none and
 * -2 when the marks cannot be read as a number.  See the file comment. */
static int num_decimal_mark(const struct numscan *ns, enum num_mode mode)
{
	size_t nmarks = ns->ngroups - 1, last, same = 0, other = 0, spaced = 0;
	enum mark k;

	if (nmarks == 0)
		return -1;
	last = nmarks - 1;
	k = ns->mark[last];
	if (k == MARK_APOS || k == MARK_SPACE)
		return mode == NUM_PLAIN ? -2 : -1;
	if (mode == NUM_PLAIN)
		return nmarks == 1 ? (int)last : -2;
	for (size_t i = 0; i < nmarks; i++) {
		if (ns->mark[i] == k)
			same++;
		else if (ns->mark[i] == MARK_COMMA || ns->mark[i] == MARK_DOT)
			other++;
		else
			spaced++;
	}
	if (other)
		return same == 1 ? (int)last : -2;
	if (same >= 2)
		return -1;
	if (spaced)
		return (int)last;
	if (ns->glen[1] == 3 && ns->glen[0] <= 3 && ns->digits[0][0] != '0')
		return -1;
	return (int)last;
}

/* Whether the groups before the decimal point (all of them if dec < 0)
 * form a valid digit grouping. */
static bool num_grouping_ok(const struct numscan *ns, int dec)
{
	size_t nint = dec < 0 ? ns->ngroups : (size_t)dec + 1;

	if (nint == 1)
		return true;
	if (ns->glen[0] > 3 || ns->digits[0][0] == '0' ||
	    ns->glen[nint - 1] != 3)
		return false;
	for (size_t i = 1; i + 1 < nint; i++) {
		if (ns->mark[i] != ns->mark[0] ||
		    ns->glen[i] < 2 || ns->glen[i] > 3)
			return false;
	}
	return true;
}

/* 10^k, exact up to 10^22. */
static double pow10_of(size_t k)
{
	static const double exact[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
	};

	if (k < PL_ARRAY_LEN(exact))
		return exact[k];
	return pow(10.0, (double)k);
}

/* The value of the groups: one integer mantissa divided by a power of ten,
 * which is correctly rounded while the mantissa fits in 53 bits. */
static double num_value(const struct numscan *ns, int dec)
{
	uint64_t mant = 0;
	double big = 0;
	bool exact = true;
	size_t frac = 0;

	for (size_t g = 0; g < ns->ngroups; g++) {
		for (size_t j = 0; j < ns->glen[g]; j++) {
			unsigned d = (unsigned)(ns->digits[g][j] - '0');

			if (exact && mant <= (UINT64_MAX - d) / 10) {
				mant = mant * 10 + d;
			} else {
				if (exact)
					big = (double)mant;
				exact = false;
				big = big * 10 + d;
			}
			if (dec >= 0 && g > (size_t)dec)
				frac++;
		}
	}
	return (exact ? (double)mant : big) / pow10_of(frac);
}

static bool parse_number(struct span s, enum num_mode mode, double *out,
			 bool *is_integer)
{
	struct numscan ns;
	int dec;
	double v;

	s = span_trim(s);
	if (!num_scan(s, &ns))
		return false;
	dec = num_decimal_mark(&ns, mode);
	if (dec == -2 || !num_grouping_ok(&ns, dec))
		return false;
	v = num_value(&ns, dec);
	if (!isfinite(v))
		return false;
	if (out)
		*out = ns.negative ? -v : v;
	if (is_integer)
		*is_integer = dec < 0;
	return true;
}

bool pl_stat_parse_number(const char *s, size_t n, double *out,
			  bool *is_integer)
{
	if (!s)
		return false;
	return parse_number((struct span){s, n}, NUM_GUESS, out, is_integer);
}

/* Whether s[i..] is exactly three digits followed by a non-digit or end. */
static bool three_digits_at(struct span s, size_t i)
{
	if (i + 3 > s.n)
		return false;
	for (size_t k = i; k < i + 3; k++)
		if (!is_digit(s.p[k]))
			return false;
	return i + 3 == s.n || !is_digit(s.p[i + 3]);
}

/* Length of the number at the start of `s` in a human line: digits joined
 * by marks, where a plain ASCII space joins only a following 3-digit group
 * (so `7 829,39 msec` is one number).  0 when `s` does not start with one. */
static size_t num_extent(struct span s)
{
	size_t i = 0;

	if (s.n && (s.p[0] == '-' || s.p[0] == '+'))
		i++;
	if (i >= s.n || !is_digit(s.p[i]))
		return 0;
	while (i < s.n) {
		enum mark kind;
		size_t m;

		if (is_digit(s.p[i])) {
			i++;
			continue;
		}
		m = mark_at(s.p, s.n, i, &kind);
		if (!m || i + m >= s.n || !is_digit(s.p[i + m]))
			break;
		if (s.p[i] == ' ' && !three_digits_at(s, i + 1))
			break;
		i += m;
	}
	return i;
}

/* A "NN.NN%" span (blanks allowed before the `%`) as a number. */
static bool parse_percent(struct span s, double *out)
{
	s = span_trim(s);
	if (!s.n || s.p[s.n - 1] != '%')
		return false;
	s.n--;
	return parse_number(s, NUM_PLAIN, out, NULL);
}

/* ------------------------------------------------------------------ */
/* Pieces shared by both layouts                                      */
/* ------------------------------------------------------------------ */

/* If `s` starts with a status word, consume it. */
static bool take_status(struct span *s, enum pl_stat_status *st)
{
	if (span_starts(*s, NOT_SUPPORTED)) {
		*st = PL_STAT_NOT_SUPPORTED;
		*s = span_skip(*s, sizeof(NOT_SUPPORTED) - 1);
		return true;
	}
	if (span_starts(*s, NOT_COUNTED)) {
		*st = PL_STAT_NOT_COUNTED;
		*s = span_skip(*s, sizeof(NOT_COUNTED) - 1);
		return true;
	}
	return false;
}

/* Event names start with a letter or `_` and are printable ASCII. */
static bool valid_event(struct span e)
{
	return e.n && e.n <= STAT_MAX_EVENT &&
	       (is_alpha(e.p[0]) || e.p[0] == '_') && span_is_token(e);
}

/* Units are short tokens that do not look like numbers or statuses. */
static bool valid_unit(struct span u)
{
	if (!u.n)
		return true;
	if (u.n > STAT_MAX_UNIT || is_digit(u.p[0]) || u.p[0] == '<' ||
	    u.p[0] == '+' || u.p[0] == '-' || u.p[0] == '.' || u.p[0] == ',')
		return false;
	return span_is_token(u);
}

static void counter_text_init(struct counter_text *ct)
{
	memset(ct, 0, sizeof(*ct));
	ct->run_percent = -1;
	ct->variance_percent = -1;
}

/* A new string: `a` and `b` (each trimmed) joined by a space when both are
 * non-empty, cut to STAT_MAX_TEXT bytes. */
static char *join_text(struct span a, struct span b)
{
	struct pl_buf buf = {0};
	struct span all;
	char *out;

	a = span_trim(a);
	b = span_trim(b);
	pl_buf_add(&buf, a.n ? a.p : "", a.n);
	if (a.n && b.n)
		pl_buf_addc(&buf, ' ');
	pl_buf_add(&buf, b.n ? b.p : "", b.n);
	all = span_cut_utf8((struct span){buf.data ? buf.data : "", buf.len},
			    STAT_MAX_TEXT);
	out = pl_xstrndup(all.p, all.n);
	pl_buf_release(&buf);
	return out;
}

static enum pl_err add_counter(struct pl_stat_parser *sp,
			       const struct counter_text *ct,
			       struct pl_error *err)
{
	struct pl_stat_block *b = sp->b;
	struct pl_stat_counter *c;

	if (b->ncounters >= STAT_MAX_COUNTERS) {
		sp->after_counter = false;
		return pl_fail(err, PL_ERR_LIMIT,
			       "split the input into separate perf stat runs",
			       "perf stat input '%s' has more than %zu counters",
			       b->source, STAT_MAX_COUNTERS);
	}
	PL_GROW(b->counters, sp->cap, b->ncounters + 1);
	c = &b->counters[b->ncounters++];
	c->event = pl_xstrndup(ct->event.p, ct->event.n);
	c->status = ct->status;
	c->value = ct->status == PL_STAT_COUNTED ? ct->value : 0;
	c->is_integer = ct->status == PL_STAT_COUNTED && ct->is_integer;
	c->unit = pl_xstrndup(ct->unit.p ? ct->unit.p : "", ct->unit.n);
	c->run_percent = ct->run_percent;
	c->variance_percent = ct->variance_percent;
	c->comment = join_text(ct->comment, ct->comment_more);
	sp->after_counter = true;
	return PL_OK;
}

static enum pl_err skip_line(struct pl_stat_parser *sp)
{
	sp->b->lines_skipped++;
	sp->after_counter = false;
	return PL_OK;
}

/* ------------------------------------------------------------------ */
/* CSV layout                                                         */
/* ------------------------------------------------------------------ */

static bool csv_sep_ok(char c)
{
	unsigned char u = (unsigned char)c;

	return u > 0x20 && u < 0x7f && !is_alpha(c) && !is_digit(c) &&
	       c != '<' && c != '+' && c != '-';
}

/* Split `s` at `sep`; 0 when there are more than `max` fields. */
static size_t csv_split(struct span s, char sep, struct span *f, size_t max)
{
	size_t nf = 0, start = 0;

	for (size_t i = 0; i <= s.n; i++) {
		if (i < s.n && s.p[i] != sep)
			continue;
		if (nf == max)
			return 0;
		f[nf++] = (struct span){s.p + start, i - start};
		start = i + 1;
	}
	return nf;
}

static size_t count_char(struct span s, char c)
{
	size_t k = 0;

	for (size_t i = 0; i < s.n; i++)
		k += s.p[i] == c;
	return k;
}

static bool csv_value(struct span f, struct counter_text *ct)
{
	struct span rest = f;

	if (take_status(&rest, &ct->status))
		return rest.n == 0;
	ct->status = PL_STAT_COUNTED;
	return f.n && !is_blank(f.p[0]) &&
	       parse_number(f, NUM_PLAIN, &ct->value, &ct->is_integer);
}

/* Fields after the event: [variance%,] run time, run %, metric value,
 * metric unit.  All optional; unreadable ones are left absent. */
static void csv_tail(const struct span *f, size_t nf, size_t i,
		     struct counter_text *ct)
{
	double v;

	if (i < nf && f[i].n && f[i].p[f[i].n - 1] == '%' &&
	    parse_percent(f[i], &v)) {
		ct->variance_percent = v;
		i++;
	}
	i++;  /* run time in ns: not kept */
	if (i < nf && parse_number(f[i], NUM_PLAIN, &v, NULL))
		ct->run_percent = v;
	i++;
	if (i < nf)
		ct->comment = f[i];
	if (i + 1 < nf)
		ct->comment_more = f[i + 1];
}

/* Parse `s` as `value SEP unit SEP event [SEP ...]`. */
static bool csv_parse(struct span s, char sep, struct counter_text *ct)
{
	struct span f[CSV_MAX_FIELDS], event;
	size_t nf = csv_split(s, sep, f, CSV_MAX_FIELDS), e = 2;

	counter_text_init(ct);
	if (nf < 3 || !csv_value(f[0], ct) || !valid_unit(f[1]))
		return false;
	event = f[2];
	while (sep != '/' && count_char(event, '/') == 1 && e + 1 < nf) {
		e++;
		event.n = (size_t)(f[e].p + f[e].n - event.p);
	}
	if (!valid_event(event))
		return false;
	ct->unit = f[1];
	ct->event = event;
	csv_tail(f, nf, e + 1, ct);
	return true;
}

/* Try `s` as a CSV line: see "CSV or human" in the file comment. */
static bool csv_detect(struct span s, struct counter_text *ct)
{
	struct span rest = s;
	enum pl_stat_status st;
	char cand[2];
	size_t nc = 0, i = 0, start;

	if (!s.n || is_blank(s.p[0]))
		return false;
	if (take_status(&rest, &st)) {
		if (rest.n)
			cand[nc++] = rest.p[0];
	} else {
		if (s.p[0] == '-' || s.p[0] == '+')
			i++;
		start = i;
		while (i < s.n && is_digit(s.p[i]))
			i++;
		if (i == start || i == s.n)
			return false;
		cand[nc++] = s.p[i];
		if (s.p[i] == '.' || s.p[i] == ',') {
			size_t j = i + 1;

			while (j < s.n && is_digit(s.p[j]))
				j++;
			if (j > i + 1 && j < s.n)
				cand[nc++] = s.p[j];
		}
	}
	for (size_t k = 0; k < nc; k++)
		if (csv_sep_ok(cand[k]) && csv_parse(s, cand[k], ct))
			return true;
	return false;
}

bool pl_stat_line_is_csv(const char *line, size_t n)
{
	struct counter_text ct;

	return csv_detect((struct span){line, n}, &ct);
}

/* ------------------------------------------------------------------ */
/* Human layout                                                       */
/* ------------------------------------------------------------------ */

/* Read a "(84.16%)" or "( +-  0.52% )" group (or [..] from old perfs). */
static bool classify_group(struct span in, double *run, double *var)
{
	double v;
	double *slot = run;

	in = span_trim(in);
	if (span_starts(in, "+-")) {
		in = span_skip(in, 2);
		slot = var;
	}
	if (!parse_percent(in, &v))
		return false;
	if (*slot < 0)
		*slot = v;
	return true;
}

/* Strip up to two trailing percent groups from `s`, storing what they
 * say; returns the length of what is left. */
static size_t strip_groups(struct span s, double *run, double *var)
{
	for (int round = 0; round < 2; round++) {
		struct span t = span_rtrim(s);
		char close, open;
		size_t at;

		if (!t.n)
			break;
		close = t.p[t.n - 1];
		if (close != ')' && close != ']')
			break;
		open = close == ')' ? '(' : '[';
		at = t.n - 1;
		while (at && t.p[at - 1] != open)
			at--;
		if (!at || !classify_group((struct span){t.p + at, t.n - 1 - at},
					   run, var))
			break;
		s.n = at - 1;
	}
	return s.n;
}

/* An old perf's "task-clock (msec)": the word in parentheses is a unit. */
static bool old_unit(struct span w, struct span *unit)
{
	struct span in;

	if (w.n < 3 || w.p[0] != '(' || w.p[w.n - 1] != ')')
		return false;
	in = (struct span){w.p + 1, w.n - 2};
	if (!in.n || !is_alpha(in.p[0]) || !valid_unit(in))
		return false;
	*unit = in;
	return true;
}

/* After the value: "[unit] event [(unit)] [# comment] [groups]". */
static bool human_tail(struct span s, struct counter_text *ct)
{
	struct span tok[2], w;
	size_t ntok = 0;
	bool have_old_unit = false;

	s.n = strip_groups(s, &ct->run_percent, &ct->variance_percent);
	for (;;) {
		s = span_ltrim(s);
		if (!s.n || s.p[0] == '#')
			break;
		w = span_word(s);
		if (w.p[0] == '(' || w.p[0] == '[') {
			if (ntok != 1 || have_old_unit || !old_unit(w, &ct->unit))
				return false;
			have_old_unit = true;
		} else {
			if (ntok == 2 || have_old_unit)
				return false;
			tok[ntok++] = w;
		}
		s = span_skip(s, w.n);
	}
	if (ntok == 0)
		return false;
	if (ntok == 2) {
		if (have_old_unit)
			return false;
		ct->unit = tok[0];
	}
	ct->event = tok[ntok - 1];
	if (s.n)
		ct->comment = span_skip(s, 1);
	return valid_unit(ct->unit) && valid_event(ct->event);
}

/* The value at the start of `*s`; `*num` is its text (empty for a
 * status).  A blank must follow it. */
static bool human_value(struct span *s, struct counter_text *ct,
			struct span *num)
{
	size_t k;

	*num = (struct span){s->p, 0};
	if (take_status(s, &ct->status))
		return s->n && is_blank(s->p[0]);
	k = num_extent(*s);
	if (!k)
		return false;
	*num = (struct span){s->p, k};
	if (!parse_number(*num, NUM_GUESS, &ct->value, &ct->is_integer))
		return false;
	ct->status = PL_STAT_COUNTED;
	*s = span_skip(*s, k);
	return s->n && is_blank(s->p[0]);
}

/* "8.00 seconds time elapsed", "0.105 +- 0.001 seconds time elapsed
 * ( +- 1.22% )", "1.23 seconds user", "0.01 seconds sys".  Seconds are
 * never grouped, so `num` is re-read with a plain decimal mark.  Returns
 * 1 when stored, 0 when this is not such a line, -1 when it is one with an
 * unreadable value. */
static int seconds_line(struct pl_stat_block *b, struct span num,
			struct span rest)
{
	double v, *slot;

	rest = span_ltrim(rest);
	if (span_starts(rest, "+-")) {
		rest = span_ltrim(span_skip(rest, 2));
		rest = span_skip(rest, num_extent(rest));
		rest = span_ltrim(rest);
	}
	if (!span_starts(rest, "seconds "))
		return 0;
	rest = span_trim(span_skip(rest, 8));
	if (span_starts(rest, "time elapsed"))
		slot = &b->elapsed_seconds;
	else if (span_is(rest, "user"))
		slot = &b->user_seconds;
	else if (span_is(rest, "sys"))
		slot = &b->sys_seconds;
	else
		return 0;
	if (!num.n || !parse_number(num, NUM_PLAIN, &v, NULL))
		return -1;
	*slot = v;
	return 1;
}

/* " Performance counter stats for process id '44774':" -> the target,
 * without the final `:` and without a " (3 runs)" suffix. */
static void set_target(struct pl_stat_block *b, struct span s)
{
	s = span_rtrim(span_skip(s, sizeof(HEADER) - 1));
	if (s.n && s.p[s.n - 1] == ':')
		s = span_rtrim((struct span){s.p, s.n - 1});
	if (s.n > 6 && memcmp(s.p + s.n - 6, " runs)", 6) == 0) {
		size_t i = s.n - 6;

		while (i && is_digit(s.p[i - 1]))
			i--;
		if (i < s.n - 6 && i >= 2 && s.p[i - 1] == '(' &&
		    s.p[i - 2] == ' ')
			s = span_rtrim((struct span){s.p, i - 2});
	}
	s = span_cut_utf8(s, STAT_MAX_TEXT);
	free(b->target);
	b->target = pl_xstrndup(s.p, s.n);
}

/* A "   # 0.50 stalled cycles per insn" line continues the metric of the
 * counter just above; its text is appended to that counter's comment. */
static enum pl_err continuation(struct pl_stat_parser *sp, struct span s)
{
	struct pl_stat_block *b = sp->b;
	struct pl_stat_counter *c;
	double run = -1, var = -1;
	char *joined;

	if (!sp->after_counter || !b->ncounters)
		return skip_line(sp);
	s = span_skip(s, 1);
	s.n = strip_groups(s, &run, &var);
	s = span_trim(s);
	if (!s.n)
		return PL_OK;
	c = &b->counters[b->ncounters - 1];
	if (strlen(c->comment) + 2 + s.n > STAT_MAX_TEXT) {
		b->lines_skipped++;
		return PL_OK;
	}
	if (!c->comment[0]) {
		joined = pl_xstrndup(s.p, s.n);
	} else {
		struct pl_buf buf = {0};

		pl_buf_adds(&buf, c->comment);
		pl_buf_adds(&buf, "; ");
		pl_buf_add(&buf, s.p, s.n);
		joined = pl_xstrndup(buf.data, buf.len);
		pl_buf_release(&buf);
	}
	free(c->comment);
	c->comment = joined;
	return PL_OK;
}

static enum pl_err human_line(struct pl_stat_parser *sp, struct span line,
			      struct pl_error *err)
{
	struct span s = span_ltrim(line), num;
	struct counter_text ct;

	if (span_starts(s, HEADER)) {
		set_target(sp->b, s);
		sp->after_counter = false;
		return PL_OK;
	}
	if (s.p[0] == '#')
		return continuation(sp, s);
	counter_text_init(&ct);
	if (!human_value(&s, &ct, &num))
		return skip_line(sp);
	switch (seconds_line(sp->b, num, s)) {
	case 1:
		sp->after_counter = false;
		return PL_OK;
	case -1:
		return skip_line(sp);
	default:
		break;
	}
	if (!human_tail(s, &ct))
		return skip_line(sp);
	return add_counter(sp, &ct, err);
}

/* ------------------------------------------------------------------ */
/* Derived IPC                                                        */
/* ------------------------------------------------------------------ */

/* "cpu_core/cycles/u" -> pmu "cpu_core", base "cycles", mods "u";
 * "cycles:u" -> pmu "", base "cycles", mods "u". */
struct event_parts {
	struct span pmu, base, mods;
};

static void event_split(const char *ev, struct event_parts *p)
{
	struct span s = {ev, strlen(ev)};
	const char *first = memchr(s.p, '/', s.n);
	const char *last = first ? strrchr(ev, '/') : NULL;

	if (first && last > first) {
		p->pmu = (struct span){s.p, (size_t)(first - s.p)};
		p->base = (struct span){first + 1, (size_t)(last - first - 1)};
		p->mods = (struct span){last + 1, s.n - (size_t)(last + 1 - s.p)};
		if (p->mods.n && p->mods.p[0] == ':')
			p->mods = span_skip(p->mods, 1);
		return;
	}
	p->pmu = (struct span){s.p, 0};
	first = memchr(s.p, ':', s.n);
	p->base = (struct span){s.p, first ? (size_t)(first - s.p) : s.n};
	p->mods = first ? (struct span){first + 1, s.n - p->base.n - 1}
			: (struct span){s.p + s.n, 0};
}

static bool span_eq(struct span a, struct span b)
{
	return a.n == b.n && memcmp(a.p, b.p, a.n) == 0;
}

/* 0: plain "cycles"/"instructions"; 1: with modifiers; 2: PMU-qualified. */
static int ipc_rank(const struct event_parts *p)
{
	return p->pmu.n ? 2 : p->mods.n ? 1 : 0;
}

/* Indexes of counted counters whose base name is one of `names`. */
static size_t ipc_candidates(const struct pl_stat_block *b,
			     const char *const *names, size_t *idx,
			     struct event_parts *parts)
{
	size_t k = 0;

	for (size_t i = 0; i < b->ncounters && k < IPC_MAX_CANDIDATES; i++) {
		const struct pl_stat_counter *c = &b->counters[i];

		if (c->status != PL_STAT_COUNTED)
			continue;
		event_split(c->event, &parts[k]);
		for (const char *const *n = names; *n; n++) {
			if (span_is(parts[k].base, *n)) {
				idx[k++] = i;
				break;
			}
		}
	}
	return k;
}

/* instructions / cycles from counters of the same PMU and modifiers; the
 * plain pair wins, then unqualified with modifiers, then the first pair
 * in print order.  Never set when either side is missing or cycles is 0. */
static void compute_ipc(struct pl_stat_block *b)
{
	static const char *const ins_names[] = {"instructions", NULL};
	static const char *const cyc_names[] = {"cycles", "cpu-cycles", NULL};
	size_t ins[IPC_MAX_CANDIDATES], cyc[IPC_MAX_CANDIDATES], nins, ncyc;
	struct event_parts pins[IPC_MAX_CANDIDATES], pcyc[IPC_MAX_CANDIDATES];
	int best = 3;

	nins = ipc_candidates(b, ins_names, ins, pins);
	ncyc = ipc_candidates(b, cyc_names, cyc, pcyc);
	for (size_t i = 0; i < nins && best > 0; i++) {
		int rank = ipc_rank(&pins[i]);

		if (rank >= best)
			continue;
		for (size_t j = 0; j < ncyc; j++) {
			const struct pl_stat_counter *c = &b->counters[cyc[j]];

			if (!span_eq(pins[i].pmu, pcyc[j].pmu) ||
			    !span_eq(pins[i].mods, pcyc[j].mods) ||
			    !(c->value > 0))
				continue;
			b->has_ipc = true;
			b->ipc = b->counters[ins[i]].value / c->value;
			best = rank;
			break;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Public API                                                         */
/* ------------------------------------------------------------------ */

struct pl_stat_parser *pl_stat_parser_new(const char *source)
{
	struct pl_stat_parser *sp = pl_xcalloc(1, sizeof(*sp));
	struct pl_stat_block *b = pl_xcalloc(1, sizeof(*b));

	b->source = pl_xstrndup(source ? source : "",
				source ? strlen(source) : 0);
	b->target = pl_xstrndup("", 0);
	b->elapsed_seconds = -1;
	b->user_seconds = -1;
	b->sys_seconds = -1;
	sp->b = b;
	return sp;
}

enum pl_err pl_stat_parser_line(struct pl_stat_parser *sp, const char *line,
				size_t n, struct pl_error *err)
{
	struct span s;
	struct counter_text ct;

	if (!sp || (!line && n))
		return pl_fail(err, PL_ERR_USAGE, "pass a parser and a line",
			       "no perf stat parser or line given");
	if (n > STAT_MAX_LINE) {
		sp->after_counter = false;
		return pl_fail(err, PL_ERR_LIMIT,
			       "check that the input is perf stat output",
			       "line of %zu bytes in '%s' is over the %zu byte limit",
			       n, sp->b->source, STAT_MAX_LINE);
	}
	s = (struct span){line ? line : "", n};
	while (s.n && (s.p[s.n - 1] == '\r' || s.p[s.n - 1] == '\n'))
		s.n--;
	if (!span_trim(s).n) {
		sp->after_counter = false;  /* a metric line cannot follow */
		return PL_OK;
	}
	if (csv_detect(s, &ct))
		return add_counter(sp, &ct, err);
	return human_line(sp, s, err);
}

/* perf stat -x prints no "seconds time elapsed / user / sys" lines; its
 * tool events duration_time, user_time and system_time (in ns, which
 * collect_profile's stat mode always asks for) say the same, so they fill
 * whichever of the three the text did not give.  A tool event perf did not
 * count leaves its figure unknown. */
static void seconds_from_tool_events(struct pl_stat_block *b)
{
	static const char *const names[] = {"duration_time", "user_time", "system_time"};
	double *slots[] = {&b->elapsed_seconds, &b->user_seconds, &b->sys_seconds};

	for (size_t i = 0; i < b->ncounters; i++) {
		const struct pl_stat_counter *c = &b->counters[i];
		for (size_t k = 0; k < PL_ARRAY_LEN(names); k++)
			if (*slots[k] < 0 && c->status == PL_STAT_COUNTED &&
			    strcmp(c->event, names[k]) == 0 && strcmp(c->unit, "ns") == 0)
				*slots[k] = c->value / 1e9;
	}
}

struct pl_stat_block *pl_stat_parser_finish(struct pl_stat_parser *sp)
{
	struct pl_stat_block *b;

	if (!sp)
		return NULL;
	b = sp->b;
	compute_ipc(b);
	seconds_from_tool_events(b);
	free(sp);
	return b;
}

void pl_stat_block_free(struct pl_stat_block *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->ncounters; i++) {
		free(b->counters[i].event);
		free(b->counters[i].unit);
		free(b->counters[i].comment);
	}
	free(b->counters);
	free(b->source);
	free(b->target);
	free(b);
}
