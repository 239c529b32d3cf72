/* report.c - the Markdown evidence report of an analysis (see report.h).
 *
 * Sections, in order: Problem, Data quality, Observations, Top hotspots,
 * Candidates, Missing evidence, A/B validation plan, Conclusion.  Numbers
 * come from the analysis and from the classification rules
 * (classify.h); nothing is inferred beyond them, and the conclusion
 * leaves every candidate unconfirmed and says what A/B evidence would
 * settle it.  Caller text and names from the profile are escaped: prose
 * with backslashes before Markdown punctuation, names as code spans;
 * control characters become spaces and long names are cut (and marked).
 */
#include "report.h"
#include "classify.h"
#include "threads.h"
#include "profile/aggregate.h"
#include "base/util.h"
#include "base/version.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_EVENTS_MAX 16     /* events given a full section each */
#define REPORT_TOP 10            /* hotspots per event */
#define REPORT_MATCHED 5         /* matched hotspots per candidate */
#define NAME_MAX_BYTES 200       /* longer symbols and paths are cut */

const char *const pl_report_sections[PL_REPORT_NSECTIONS] = {
	"Problem", "Data quality", "Observations", "Top hotspots", "Threads", "Candidates",
	"Missing evidence", "A/B validation plan", "Conclusion",
};

/* ------------------------------------------------------ Markdown escaping */

/* Bytes of `s` to keep so that at most `max` bytes remain and no UTF-8
 * sequence is split. */
static size_t cut_len(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max)
		return n;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

static bool alnum_at(const char *s, size_t i, size_t n)
{
	return i < n && ((unsigned char)s[i] >= 0x80 || isalnum((unsigned char)s[i]));
}

/* Where the text, taken to start a line, holds what would open a block
 * (heading, quote, list item, thematic break, setext underline, link
 * reference definition; an ordered list's '.' or ')'): that byte's
 * index, or n when nothing there does. */
static size_t block_marker(const char *s, size_t n)
{
	size_t i = 0, d;

	while (i < n && i < 3 && s[i] == ' ')
		i++;
	if (i < n && strchr("#>-+=_[*", s[i]))
		return i;
	for (d = i; d < n && isdigit((unsigned char)s[d]); d++)
		;
	return d > i && d < n && (s[d] == '.' || s[d] == ')') ? d : n;
}

/* Whether s[i] opens inline markup wherever it stands: code, emphasis,
 * HTML, tables, strikethrough, entities, the ']' of a link. */
static bool inline_markup(const char *s, size_t i, size_t n)
{
	char ch = s[i];

	if (strchr("\\`*<|~", ch))
		return true;
	if (ch == '_')
		return !(i > 0 && alnum_at(s, i - 1, n) && alnum_at(s, i + 1, n));
	if (ch == '&')
		return alnum_at(s, i + 1, n) || (i + 1 < n && s[i + 1] == '#');
	if (ch == ']')
		return i + 1 < n && strchr("([:", s[i + 1]);
	return false;
}

/* Prose that reads well as raw text: control characters become spaces and
 * a backslash goes only before what CommonMark (with GitHub's tables and
 * strikethrough) would take as markup, so `--call-graph` or `fn12.c` stay
 * as they are. */
static void md_text(struct pl_buf *b, const char *s, size_t max)
{
	size_t n = cut_len(s, max), marker = block_marker(s, n);

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch < 0x20 || ch == 0x7f)
			ch = ' ';
		else if (i == marker || inline_markup(s, i, n))
			pl_buf_addc(b, '\\');
		pl_buf_addc(b, (char)ch);
	}
	if (n < strlen(s))
		pl_buf_addf(b, " \\[cut: %zu more bytes\\]", strlen(s) - n);
}

/* A name as a code span: a fence longer than any backtick run inside,
 * padded when the name starts or ends with a backtick; '|' escaped for
 * tables (GitHub tables honour \| inside code spans). */
static void md_code(struct pl_buf *b, const char *s)
{
	size_t n = cut_len(s ? s : "", NAME_MAX_BYTES), run = 0, longest = 0;
	bool pad;

	if (!s || !*s) {
		pl_buf_adds(b, "(none)");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		run = s[i] == '`' ? run + 1 : 0;
		longest = run > longest ? run : longest;
	}
	pad = s[0] == '`' || s[n - 1] == '`' || s[0] == ' ';
	for (size_t i = 0; i <= longest; i++)
		pl_buf_addc(b, '`');
	if (pad)
		pl_buf_addc(b, ' ');
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '|')
			pl_buf_addc(b, '\\');
		pl_buf_addc(b, (char)(ch < 0x20 || ch == 0x7f ? ' ' : ch));
	}
	if (pad)
		pl_buf_addc(b, ' ');
	for (size_t i = 0; i <= longest; i++)
		pl_buf_addc(b, '`');
	if (n < strlen(s))
		pl_buf_adds(b, " (cut)");
}

/* Texts from our own rules: trusted, but still escaped the same way. */
static void md_rule_text(struct pl_buf *b, json_t *s)
{
	md_text(b, json_string_value(s) ? json_string_value(s) : "", 4096);
}

static void heading(struct pl_buf *b, size_t section)
{
	pl_buf_addf(b, "\n## %s\n\n", pl_report_sections[section]);
}

static const char *str_of(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static double num_of(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* ------------------------------------------------------------- sections */

struct report {
	struct pl_buf md;
	const char *problem, *metric;
	const struct pl_report_in *in;
	struct pl_report_part parts[1 + PL_REPORT_MORE_MAX];  /* the first is the main one */
	size_t nparts;
	json_t *classified;      /* array of pl_classify_event objects */
	struct pl_view *views;   /* parallel to classified */
	size_t *view_part;       /* parallel to views: index into parts */
	size_t nviews;
	size_t events_left_out;
};

/* An event's name as a code span, with its analysis when the report
 * covers several. */
static void event_label(struct report *r, size_t view, const char *event)
{
	md_code(&r->md, event);
	if (r->nparts > 1) {
		pl_buf_adds(&r->md, " of ");
		md_code(&r->md, r->parts[r->view_part[view]].analysis_id);
	}
}

static void problem_section(struct report *r)
{
	const char *s = r->problem;

	heading(&r->md, 0);
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		char *line = pl_xstrndup(s, n);
		pl_buf_adds(&r->md, "> ");
		md_text(&r->md, line, 2000);
		pl_buf_adds(&r->md, "\n");
		free(line);
		s += n + (nl != NULL);
	}
	pl_buf_adds(&r->md, "\nMetric that decides success: ");
	md_text(&r->md, r->metric, 200);
	pl_buf_adds(&r->md, "\n");
	if (r->in->view_key) {
		pl_buf_adds(&r->md, "\nRead under the view ");
		md_code(&r->md, r->in->view_key);
		pl_buf_addf(&r->md, ": %.2f%% of the event's samples, %.2f%% of its period; shares below are of "
			    "what it kept.\n", r->in->view_samples_percent, r->in->view_period_percent);
	}
}

static void time_text(struct pl_buf *b, const char *unit, uint64_t period)
{
	if (strcmp(unit, "ns") == 0)
		pl_buf_addf(b, "%.3f s", (double)period / 1e9);
	else
		pl_buf_adds(b, "n/a (not a time event)");
}

static void inputs_list(struct report *r, json_t *summary)
{
	json_t *prov = json_object_get(summary, "provenance"), *in, *counts, *w;
	size_t i;

	json_array_foreach(json_object_get(prov, "inputs"), i, in) {
		pl_buf_adds(&r->md, "- Input: ");
		md_code(&r->md, str_of(in, "path"));
		pl_buf_addf(&r->md, " (%s, %s, sha256 %s)\n", str_of(in, "format"),
			    str_of(in, "compression"), str_of(in, "sha256"));
	}
	counts = json_object_get(prov, "counts");
	pl_buf_addf(&r->md, "- Records: %" JSON_INTEGER_FORMAT " parsed, %" JSON_INTEGER_FORMAT
		    " skipped, %" JSON_INTEGER_FORMAT " malformed\n",
		    json_integer_value(json_object_get(counts, "records_parsed")),
		    json_integer_value(json_object_get(counts, "records_skipped")),
		    json_integer_value(json_object_get(counts, "records_malformed")));
	pl_buf_adds(&r->md, "- Wall-clock duration: not recorded in the analysis; the sampled time below is "
			    "the sum of sample periods (for cpu-clock and task-clock, CPU time across all CPUs)\n");
	json_array_foreach(json_object_get(json_object_get(summary, "quality"), "warnings"), i, w) {
		pl_buf_adds(&r->md, "- Warning: ");
		md_rule_text(&r->md, w);
		pl_buf_adds(&r->md, "\n");
	}
}

/* A data-quality candidate whose samples stand for the paths they
 * interrupted (vm_irq_enable's "interrupted"): those paths' shares, said
 * next to the flag; no figure of the report moves them. */
static void interrupted_note(struct report *r, size_t i, json_t *ev)
{
	json_t *c, *x, *it;
	size_t k, n;

	json_array_foreach(json_object_get(ev, "candidates"), k, c) {
		json_t *fig = json_object_get(c, "figure");
		if (!(it = json_object_get(c, "interrupted")))
			continue;
		pl_buf_adds(&r->md, "\n- ");
		event_label(r, i, str_of(ev, "event"));
		pl_buf_addf(&r->md, ": %" JSON_INTEGER_FORMAT " samples (%.2f%%) end on ",
			    json_integer_value(json_object_get(fig, "samples")), num_of(fig, "value"));
		md_code(&r->md, str_of(json_array_get(json_object_get(c, "hotspots"), 0), "symbol"));
		pl_buf_adds(&r->md, " (");
		md_rule_text(&r->md, json_object_get(json_object_get(c, "rule"), "label"));
		pl_buf_adds(&r->md, "): they stand for the path that ran with interrupts off. Of them, by the "
				    "caller they interrupted:");
		json_array_foreach(json_object_get(it, "callers"), n, x) {
			pl_buf_adds(&r->md, n ? ", " : " ");
			md_code(&r->md, str_of(x, "symbol"));
			pl_buf_addf(&r->md, " %.2f%%", num_of(x, "of_candidate_percent"));
		}
		pl_buf_adds(&r->md, json_array_size(json_object_get(it, "callers")) ? ";" : " none;");
		json_array_foreach(json_object_get(it, "rules"), n, x) {
			pl_buf_adds(&r->md, n ? ", " : " by rule: ");
			md_code(&r->md, str_of(x, "rule"));
			pl_buf_addf(&r->md, " %.2f%%", num_of(x, "of_candidate_percent"));
		}
		pl_buf_addf(&r->md, "%s %.2f%% have no caller on the stack. Every figure here keeps them where they "
			    "were measured.\n", json_array_size(json_object_get(it, "rules")) ? ";" : "",
			    num_of(it, "without_caller_percent"));
	}
}

static void data_quality_section(struct report *r)
{
	json_t *ev;
	size_t i;

	heading(&r->md, 1);
	for (size_t k = 0; k < r->nparts; k++) {
		if (r->nparts > 1) {
			pl_buf_adds(&r->md, k ? "\nAnalysis " : "Analysis ");
			md_code(&r->md, r->parts[k].analysis_id);
			pl_buf_adds(&r->md, ":\n\n");
		}
		inputs_list(r, r->parts[k].summary);
	}
	pl_buf_adds(&r->md, "\n| Event | Unit | Samples | Total weight | Sampled time | Call graph | "
			    "Source lines | Unknown leaf | Stacks with unknown frames | Truncated stacks |\n"
			    "| --- | --- | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |\n");
	json_array_foreach(r->classified, i, ev) {
		json_t *q = json_object_get(ev, "quality"), *t = json_object_get(q, "truncated_stack_percent");
		pl_buf_adds(&r->md, "| ");
		event_label(r, i, str_of(ev, "event"));
		pl_buf_addf(&r->md, " | %s | %" JSON_INTEGER_FORMAT " | %" JSON_INTEGER_FORMAT " | ",
			    str_of(ev, "unit"), json_integer_value(json_object_get(q, "samples")),
			    json_integer_value(json_object_get(q, "period")));
		time_text(&r->md, str_of(ev, "unit"), (uint64_t)json_integer_value(json_object_get(q, "period")));
		pl_buf_addf(&r->md, " | %s (%.2f%% of weight) | %s | %.2f%% | %.2f%% | ",
			    json_is_true(json_object_get(q, "call_graph")) ? "yes" : "no",
			    num_of(q, "call_graph_percent"),
			    json_is_true(json_object_get(q, "source_lines")) ? "yes" : "no",
			    num_of(q, "unknown_leaf_percent"), num_of(q, "unknown_frame_percent"));
		if (json_is_number(t))
			pl_buf_addf(&r->md, "%.2f%% |\n", json_number_value(t));
		else
			pl_buf_adds(&r->md, "n/a |\n");
	}
	json_array_foreach(r->classified, i, ev)
		interrupted_note(r, i, ev);
	if (r->events_left_out)
		pl_buf_addf(&r->md, "\n%zu more event(s) are in the analyses but not in this report.\n",
			    r->events_left_out);
	pl_buf_adds(&r->md, "\nEvents are never added together: each row is its own profile with its own total.\n");
}

static void kind_shares(const struct pl_view *v, double share[PL_KIND_UNKNOWN + 1])
{
	uint64_t w[PL_KIND_UNKNOWN + 1] = {0};

	for (uint32_t f = 0; f < pl_nfuncs(v->p); f++)
		w[v->p->funcs[f].kind] += v->funcs[f].self.period;
	for (int k = 0; k <= PL_KIND_UNKNOWN; k++)
		share[k] = pl_percent(v, w[k]);
}

static void observations_section(struct report *r)
{
	heading(&r->md, 2);
	pl_buf_adds(&r->md, "Measured figures only; none of them is a cause.\n\n");
	for (size_t i = 0; i < r->nviews; i++) {
		const struct pl_view *v = &r->views[i];
		const struct pl_profile *p = v->p;
		const char *event = pl_str(p, p->events[v->event].name);
		double share[PL_KIND_UNKNOWN + 1];
		size_t best_dso = SIZE_MAX;

		kind_shares(v, share);
		pl_buf_adds(&r->md, "- ");
		event_label(r, i, event);
		pl_buf_addf(&r->md, ": %" PRIu64 " samples; self weight by where the code lives: user space %.2f%%, "
			    "kernel %.2f%%, JIT %.2f%%, no known mapping %.2f%%.", v->total.samples, share[PL_KIND_USER],
			    share[PL_KIND_KERNEL], share[PL_KIND_JIT], share[PL_KIND_UNKNOWN]);
		if (v->nhot) {
			uint32_t f = v->hot_order[0];
			pl_buf_adds(&r->md, " Heaviest function by self weight: ");
			md_code(&r->md, pl_str(p, p->funcs[f].symbol));
			pl_buf_adds(&r->md, " in ");
			md_code(&r->md, pl_str(p, p->funcs[f].dso));
			pl_buf_addf(&r->md, ", %.2f%% self, %.2f%% inclusive.", pl_percent(v, v->funcs[f].self.period),
				    pl_percent(v, v->funcs[f].incl.period));
		}
		for (size_t d = 0; d < v->ndsos; d++)
			if (v->dsos[d].self.period && (best_dso == SIZE_MAX ||
			    v->dsos[d].self.period > v->dsos[best_dso].self.period))
				best_dso = d;
		if (best_dso != SIZE_MAX) {
			pl_buf_adds(&r->md, " Heaviest DSO by self weight: ");
			md_code(&r->md, pl_str(p, v->dso_ids[best_dso]));
			pl_buf_addf(&r->md, ", %.2f%%.", pl_percent(v, v->dsos[best_dso].self.period));
		}
		pl_buf_adds(&r->md, "\n");
	}
}

#define REPORT_STAT_COUNTERS 8   /* counters listed per perf stat block */

/* One perf stat block (a summary's "perf_stat" entry) of analysis
 * `part`, as counted: its times, IPC and first counters (a counter that
 * was not counted says so). */
static void stat_block(struct report *r, size_t part, json_t *b)
{
	json_t *counters = json_object_get(b, "counters"), *c;
	size_t i;

	pl_buf_adds(&r->md, "- perf stat of ");
	md_code(&r->md, str_of(b, "source"));
	if (r->nparts > 1) {
		pl_buf_adds(&r->md, " in ");
		md_code(&r->md, r->parts[part].analysis_id);
	}
	pl_buf_adds(&r->md, ":");
	if (json_is_number(json_object_get(b, "elapsed_seconds")))
		pl_buf_addf(&r->md, " %.3f s elapsed;", num_of(b, "elapsed_seconds"));
	if (json_is_number(json_object_get(b, "user_seconds")) && json_is_number(json_object_get(b, "sys_seconds")))
		pl_buf_addf(&r->md, " %.3f s user, %.3f s system;", num_of(b, "user_seconds"), num_of(b, "sys_seconds"));
	if (json_is_number(json_object_get(b, "ipc")))
		pl_buf_addf(&r->md, " %.2f instructions per cycle;", num_of(b, "ipc"));
	json_array_foreach(counters, i, c) {
		json_t *v = json_object_get(c, "value");
		if (i == REPORT_STAT_COUNTERS)
			break;
		pl_buf_adds(&r->md, i ? ", " : " ");
		md_code(&r->md, str_of(c, "event"));
		if (json_is_integer(v))
			pl_buf_addf(&r->md, " %" JSON_INTEGER_FORMAT, json_integer_value(v));
		else if (json_is_number(v))
			pl_buf_addf(&r->md, " %.3f", json_number_value(v));
		else
			pl_buf_addf(&r->md, " %s", str_of(c, "status"));
		if (json_is_number(v) && *str_of(c, "unit")) {
			pl_buf_adds(&r->md, " ");
			md_text(&r->md, str_of(c, "unit"), 40);
		}
	}
	if (json_array_size(counters) > REPORT_STAT_COUNTERS)
		pl_buf_addf(&r->md, " and %zu more counters", json_array_size(counters) - REPORT_STAT_COUNTERS);
	pl_buf_adds(&r->md, "\n");
}

static void stat_observations(struct report *r)
{
	json_t *b;
	size_t i;

	for (size_t k = 0; k < r->nparts; k++)
		json_array_foreach(json_object_get(r->parts[k].summary, "perf_stat"), i, b)
			stat_block(r, k, b);
}

static void hotspots_section(struct report *r)
{
	heading(&r->md, 3);
	for (size_t i = 0; i < r->nviews; i++) {
		const struct pl_view *v = &r->views[i];
		const struct pl_profile *p = v->p;

		pl_buf_adds(&r->md, "### Event ");
		event_label(r, i, pl_str(p, p->events[v->event].name));
		pl_buf_addf(&r->md, " (by self weight, top %d of %zu)\n\n"
				    "| Rank | Hotspot | Symbol | DSO | Kind | Self | Inclusive | Samples (self) |\n"
				    "| ---: | --- | --- | --- | --- | ---: | ---: | ---: |\n",
			    v->nhot < REPORT_TOP ? (int)v->nhot : REPORT_TOP, v->nhot);
		for (size_t k = 0; k < v->nhot && k < REPORT_TOP; k++) {
			uint32_t f = v->hot_order[k];
			pl_buf_addf(&r->md, "| %zu | fn%u | ", k + 1, f);
			md_code(&r->md, pl_str(p, p->funcs[f].symbol));
			pl_buf_adds(&r->md, " | ");
			md_code(&r->md, pl_str(p, p->funcs[f].dso));
			pl_buf_addf(&r->md, " | %s | %.2f%% | %.2f%% | %" PRIu64 " |\n",
				    pl_kind_name((enum pl_kind)p->funcs[f].kind),
				    pl_percent(v, v->funcs[f].self.period), pl_percent(v, v->funcs[f].incl.period),
				    v->funcs[f].self.samples);
		}
		pl_buf_adds(&r->md, "\n");
	}
}

#define REPORT_THREADS 6         /* threads listed per event */

/* Whether the view's weight is on more than one tid (a thread renamed
 * while sampled is one thread under two comms). */
static bool several_threads(const struct pl_view *v)
{
	const struct pl_profile *p = v->p;

	for (size_t i = 1; i < v->nthread_order; i++)
		if (p->threads[v->thread_order[i]].tid != p->threads[v->thread_order[0]].tid)
			return true;
	return false;
}

/* One thread's row: its share, leading rules and functions. */
static void thread_row(struct report *r, const struct pl_view *v, uint32_t t, json_t *d)
{
	const struct pl_profile *p = v->p;
	const struct pl_thread *th = &p->threads[t];
	json_t *x;
	size_t i;

	pl_buf_addf(&r->md, "| %" PRId64 " | ", th->tid);
	md_code(&r->md, th->comm != PL_NOID ? pl_str(p, th->comm) : "?");
	pl_buf_addf(&r->md, " | %.2f%% | ", pl_percent(v, v->threads[t].period));
	json_array_foreach(json_object_get(d, "rule_shares"), i, x)
		pl_buf_addf(&r->md, "%s%s %.1f%%", i ? ", " : "", str_of(x, "rule"), num_of(x, "percent"));
	pl_buf_adds(&r->md, " | ");
	json_array_foreach(json_object_get(d, "top_functions"), i, x) {
		if (i)
			pl_buf_adds(&r->md, ", ");
		md_code(&r->md, str_of(x, "symbol"));
		pl_buf_addf(&r->md, " %.1f%%", num_of(x, "inclusive_percent"));
	}
	pl_buf_adds(&r->md, " |\n");
}

/* What each thread does, per event of several threads: one thread's
 * causes are not averaged with another's (a writer's syncs, the
 * workers' CPU).  An event of one thread says so and lists nothing. */
static void threads_section(struct report *r, const struct pl_rules *rules)
{
	heading(&r->md, 4);
	for (size_t i = 0; i < r->nviews; i++) {
		const struct pl_view *v = &r->views[i];
		const struct pl_profile *p = v->p;
		struct pl_classifier c;
		uint32_t ids[REPORT_THREADS];
		size_t n = 0;
		json_t *described;

		pl_buf_adds(&r->md, "### Event ");
		event_label(r, i, pl_str(p, p->events[v->event].name));
		if (!several_threads(v)) {
			pl_buf_adds(&r->md, "\n\nOne thread: its time is the event's (Top hotspots).\n\n");
			continue;
		}
		for (; n < v->nthread_order && n < REPORT_THREADS; n++)
			ids[n] = v->thread_order[n];
		pl_classifier_init(&c, rules, p, r->parts[r->view_part[i]].analysis_id);
		described = pl_threads_describe(&c, v, ids, n);
		pl_classifier_release(&c);
		pl_buf_addf(&r->md, " (the %zu heaviest of %zu threads; classify_hotspots with tid gives one "
				    "thread's candidates)\n\n"
				    "| Tid | Comm | Share | Leading rules (share of the thread) | Top functions (inclusive) |\n"
				    "| ---: | --- | ---: | --- | --- |\n", n, v->nthread_order);
		for (size_t k = 0; k < n; k++)
			thread_row(r, v, ids[k], json_array_get(described, k));
		pl_buf_adds(&r->md, "\n");
		json_decref(described);
	}
}

static void figure_text(struct pl_buf *b, json_t *fig)
{
	const char *name = str_of(fig, "name");

	if (strcmp(name, "samples") == 0)
		pl_buf_addf(b, "%.0f samples (rule: below %.0f)", num_of(fig, "value"), num_of(fig, "threshold"));
	else
		pl_buf_addf(b, "%s %.2f%% (rule: %s %.2f%%)", name, num_of(fig, "value"),
			    strcmp(str_of(fig, "op"), "below") == 0 ? "below" : "at least", num_of(fig, "threshold"));
}

/* The candidate's status: confirmed or refuted only by an experiment
 * (experiments.h), with its figure; else a hypothesis. */
static void status_line(struct report *r, json_t *c, size_t view)
{
	json_t *e = json_object_get(r->parts[r->view_part[view]].experiments, str_of(c, "candidate_id"));
	const char *status = str_of(e, "status");

	if (!e) {
		pl_buf_adds(&r->md, "\n\n- Status: candidate (unconfirmed hypothesis)\n");
		return;
	}
	if (strcmp(status, "inconclusive") == 0)
		pl_buf_adds(&r->md, "\n\n- Status: candidate (unconfirmed: an experiment was inconclusive)\n");
	else
		pl_buf_addf(&r->md, "\n\n- Status: %s by experiment ", status);
	if (strcmp(status, "inconclusive") != 0) {
		md_code(&r->md, str_of(e, "experiment_id"));
		pl_buf_adds(&r->md, "\n");
	}
	pl_buf_adds(&r->md, "- Experiment: ");
	md_text(&r->md, str_of(e, "figure"), 400);
	pl_buf_adds(&r->md, "\n");
}

static void candidate_block(struct report *r, json_t *c, size_t n, size_t view)
{
	json_t *rule = json_object_get(c, "rule"), *h, *s;
	size_t i;

	pl_buf_addf(&r->md, "### %zu. ", n);
	md_rule_text(&r->md, json_object_get(rule, "label"));
	pl_buf_adds(&r->md, " on ");
	event_label(r, view, str_of(c, "event"));
	status_line(r, c, view);
	pl_buf_adds(&r->md, "- Rule: ");
	md_code(&r->md, str_of(rule, "id"));
	pl_buf_adds(&r->md, ": ");
	md_rule_text(&r->md, json_object_get(rule, "description"));
	pl_buf_adds(&r->md, "\n- Figure: ");
	figure_text(&r->md, json_object_get(c, "figure"));
	pl_buf_addf(&r->md, "\n- Evidence level: %s\n", str_of(json_object_get(c, "evidence"), "level"));
	if (json_array_size(json_object_get(c, "hotspots")))
		pl_buf_addf(&r->md, "- Matched hotspots (%" JSON_INTEGER_FORMAT " in all):\n",
			    json_integer_value(json_object_get(c, "hotspots_total")));
	json_array_foreach(json_object_get(c, "hotspots"), i, h) {
		if (i >= REPORT_MATCHED)
			break;
		pl_buf_addf(&r->md, "  - %s ", str_of(h, "hotspot_id"));
		md_code(&r->md, str_of(h, "symbol"));
		pl_buf_adds(&r->md, " in ");
		md_code(&r->md, str_of(h, "dso"));
		pl_buf_addf(&r->md, ": matched %.2f%%, self %.2f%%, inclusive %.2f%%\n",
			    num_of(json_object_get(h, "matched"), "percent"), num_of(json_object_get(h, "self"), "percent"),
			    num_of(json_object_get(h, "inclusive"), "percent"));
	}
	if (json_array_size(json_object_get(c, "next_steps")))
		pl_buf_adds(&r->md, "- Next steps:\n");
	json_array_foreach(json_object_get(c, "next_steps"), i, s) {
		pl_buf_adds(&r->md, "  - ");
		md_code(&r->md, json_object_get(s, "call") ? str_of(s, "call") : str_of(s, "command"));
		pl_buf_adds(&r->md, ": ");
		md_rule_text(&r->md, json_object_get(s, "why"));
		pl_buf_adds(&r->md, "\n");
	}
	pl_buf_adds(&r->md, "- Does not support:\n");
	json_array_foreach(json_object_get(c, "forbidden_conclusions"), i, s) {
		pl_buf_adds(&r->md, "  - ");
		md_rule_text(&r->md, s);
		pl_buf_adds(&r->md, "\n");
	}
	pl_buf_adds(&r->md, "\n");
}

static size_t candidates_section(struct report *r)
{
	json_t *ev, *c;
	size_t i, k, n = 0;

	heading(&r->md, 5);
	pl_buf_adds(&r->md, "Each candidate is a rule of the versioned classification rules that matched "
			    "this profile: a hypothesis to test, not a finding.\n\n");
	json_array_foreach(r->classified, i, ev)
		json_array_foreach(json_object_get(ev, "candidates"), k, c)
			candidate_block(r, c, ++n, i);
	if (n == 0)
		pl_buf_adds(&r->md, "No rule fired. That is not evidence of no problem: see the rules that could "
				    "not be evaluated under Missing evidence.\n");
	return n;
}

/* Append `s` to `seen` unless it is there already; true when added. */
static bool add_once(json_t *seen, json_t *s)
{
	json_t *x;
	size_t i;

	json_array_foreach(seen, i, x)
		if (json_equal(x, s))
			return false;
	json_array_append(seen, s);
	return true;
}

static size_t missing_section(struct report *r)
{
	json_t *seen = json_array(), *ev, *c, *m, *q;
	size_t i, k, j, n;

	heading(&r->md, 6);
	json_array_foreach(r->classified, i, ev) {
		json_array_foreach(json_object_get(ev, "candidates"), k, c)
			json_array_foreach(json_object_get(c, "missing_evidence"), j, m)
				if (add_once(seen, m)) {
					pl_buf_adds(&r->md, "- ");
					md_rule_text(&r->md, m);
					pl_buf_adds(&r->md, "\n");
				}
	}
	json_array_foreach(r->classified, i, ev) {
		json_array_foreach(json_object_get(ev, "quiet"), k, q) {
			json_t *key;
			if (strcmp(str_of(q, "outcome"), "not_applicable") != 0)
				continue;
			key = json_sprintf("%s|%s", str_of(q, "rule"), str_of(q, "reason"));
			if (add_once(seen, key)) {
				pl_buf_adds(&r->md, "- Rule ");
				md_code(&r->md, str_of(q, "rule"));
				pl_buf_adds(&r->md, " could not be evaluated on ");
				event_label(r, i, str_of(ev, "event"));
				pl_buf_adds(&r->md, ": ");
				md_rule_text(&r->md, json_object_get(q, "reason"));
				pl_buf_adds(&r->md, "\n");
			}
			json_decref(key);
		}
	}
	pl_buf_adds(&r->md, "- A baseline measurement of the metric (");
	md_text(&r->md, r->metric, 200);
	pl_buf_adds(&r->md, ") with repeated runs: without it no change can be judged\n");
	n = json_array_size(seen) + 1;
	json_decref(seen);
	return n;
}

static void plan_section(struct report *r)
{
	json_t *seen = json_array(), *ev, *c;
	size_t i, k;

	heading(&r->md, 7);
	pl_buf_adds(&r->md, "1. Fix the measurement: the metric is ");
	md_text(&r->md, r->metric, 200);
	pl_buf_adds(&r->md, ". Measure it on the unchanged program (A) at least 10 times on the same machine, "
			    "input and build flags, e.g. `hyperfine --warmup 3 --runs 10 --export-json a.json '<command>'` "
			    "or Google Benchmark with `--benchmark_repetitions=10 --benchmark_format=json`.\n"
			    "2. Make one change aimed at one candidate (B); keep everything else equal.\n"
			    "3. Measure B the same way, interleaving A and B runs so that drift hits both.\n"
			    "4. Compare with `normalize_benchmark` and `compare_benchmarks` (a Mann-Whitney test and a "
			    "confidence interval for the ratio of medians); a difference smaller than the run-to-run "
			    "spread is no difference.\n"
			    "5. Re-profile B with the same event and compare the two analyses (`compare_profiles`) to check "
			    "that the matched hotspots moved as the candidate predicts.\n\n"
			    "Experiments per candidate:\n\n");
	json_array_foreach(r->classified, i, ev)
		json_array_foreach(json_object_get(ev, "candidates"), k, c) {
			json_t *rule = json_object_get(c, "rule");
			if (!add_once(seen, json_object_get(rule, "id")))
				continue;
			pl_buf_adds(&r->md, "- ");
			md_rule_text(&r->md, json_object_get(rule, "label"));
			pl_buf_adds(&r->md, ": ");
			md_rule_text(&r->md, json_object_get(c, "experiment"));
			pl_buf_adds(&r->md, "\n");
		}
	if (json_array_size(seen) == 0)
		pl_buf_adds(&r->md, "- No candidate to test; collect the missing evidence first.\n");
	json_decref(seen);
}

static void conclusion_section(struct report *r, size_t ncand, json_t *forbidden)
{
	json_t *s;
	size_t i;

	heading(&r->md, 8);
	if (ncand)
		pl_buf_addf(&r->md, "This report establishes no cause. Its %zu candidate(s) are unconfirmed "
				    "hypotheses drawn from where samples land; none of them shows what would change "
				    "the metric (", ncand);
	else
		pl_buf_adds(&r->md, "This report establishes no cause, and no rule produced a candidate; the "
				    "observations above say where samples land, not what would change the metric (");
	md_text(&r->md, r->metric, 200);
	pl_buf_adds(&r->md, "). A candidate becomes a supported explanation only when the A/B plan above shows "
			    "a change aimed at it moving the metric by more than the run-to-run spread, and a "
			    "second profile shows its hotspots moving as predicted.\n\nNot concluded here:\n\n");
	json_array_foreach(forbidden, i, s) {
		pl_buf_adds(&r->md, "- ");
		md_rule_text(&r->md, s);
		pl_buf_adds(&r->md, "\n");
	}
}

/* ------------------------------------------------------------ the report */

/* The collection an analysis' first input came from ("co-" and 20 hex
 * digits in its path), copied into `out`; false when none. */
static bool collection_of(json_t *summary, char out[24])
{
	json_t *inputs = json_object_get(json_object_get(summary, "provenance"), "inputs");
	const char *path = json_string_value(json_object_get(json_array_get(inputs, 0), "path"));
	const char *c = path;

	while (c && (c = strstr(c, "co-"))) {
		size_t n = strspn(c + 3, "0123456789abcdef");
		if (n == 20 && (c == path || c[-1] == '/')) {
			memcpy(out, c, 23);
			out[23] = '\0';
			return true;
		}
		c += 3;
	}
	return false;
}

/* The analyses, and whether the others come from the first one's
 * collection (the same run) or not: what was measured together is said,
 * never assumed. */
static void header(struct report *r, int rules_version)
{
	char first[24], other[24];
	bool has_first;

	pl_buf_adds(&r->md, "# PerfLens evidence report\n\n");
	pl_buf_addf(&r->md, "- Analysis: `%s`\n", r->parts[0].analysis_id);
	has_first = collection_of(r->parts[0].summary, first);
	for (size_t k = 1; k < r->nparts; k++) {
		pl_buf_addf(&r->md, "- With analysis: `%s`", r->parts[k].analysis_id);
		if (has_first && collection_of(r->parts[k].summary, other) && strcmp(first, other) == 0)
			pl_buf_addf(&r->md, " (the same run: collection `%s`)\n", first);
		else if (has_first && collection_of(r->parts[k].summary, other))
			pl_buf_addf(&r->md, " (another run: collection `%s`; the first is of `%s`)\n", other, first);
		else
			pl_buf_adds(&r->md, " (whether it is the same run is not known: its inputs are listed below)\n");
	}
	pl_buf_addf(&r->md, "- Written by: PerfLens %s, classification rules version %d\n"
			    "- Status of every candidate below: unconfirmed\n", PL_VERSION, rules_version);
}

/* Every event of every analysis (only `only` of the first when given),
 * at most REPORT_EVENTS_MAX in all, viewed and classified. */
static void classify_events(struct report *r, const struct pl_rules *rules, uint32_t only)
{
	size_t total = 0, n = 0;

	for (size_t k = 0; k < r->nparts; k++)
		total += r->parts[k].p->nevents;
	r->views = pl_xcalloc(total + 1, sizeof(struct pl_view));
	r->view_part = pl_xcalloc(total + 1, sizeof(size_t));
	r->classified = json_array();
	for (size_t k = 0; k < r->nparts; k++) {
		const struct pl_report_part *pt = &r->parts[k];
		struct pl_classifier c;
		pl_classifier_init(&c, rules, pt->p, pt->analysis_id);
		for (uint32_t e = 0; e < pt->p->nevents; e++) {
			if (k == 0 && only != PL_NOID && e != only)
				continue;
			if (n == REPORT_EVENTS_MAX) {
				r->events_left_out++;
				continue;
			}
			pl_view_build(&r->views[n], pt->p, e);
			r->view_part[n] = k;
			json_array_append_new(r->classified, pl_classify_event(&c, &r->views[n]));
			n++;
		}
		pl_classifier_release(&c);
	}
	r->nviews = n;
}

static json_t *summary_json(struct report *r, size_t nmissing)
{
	json_t *cands = json_array(), *dq = json_array(), *ev, *c;
	size_t i, k;

	json_array_foreach(r->classified, i, ev)
		json_array_foreach(json_object_get(ev, "candidates"), k, c) {
			/* another analysis' candidates carry its id: the same rule and
			 * event may fire in two of them */
			json_t *id = r->view_part[i] ? json_sprintf("%s:%s", r->parts[r->view_part[i]].analysis_id,
								     str_of(c, "candidate_id"))
						     : json_incref(json_object_get(c, "candidate_id"));
			json_array_append(cands, id);
			if (strcmp(str_of(json_object_get(c, "rule"), "group"), "data_quality") == 0)
				json_array_append(dq, id);
			json_decref(id);
		}
	return json_pack("{s:I,s:I,s:o,s:o,s:I}", "events", (json_int_t)r->nviews,
			 "events_left_out", (json_int_t)r->events_left_out, "candidates", cands,
			 "data_quality_flags", dq, "missing_evidence", (json_int_t)nmissing);
}

enum pl_err pl_report_build(const struct pl_report_in *in, struct pl_buf *md, json_t **summary,
			    struct pl_error *err)
{
	struct report r = {
		.problem = in->problem, .metric = in->metric, .in = in,
		.parts = {{in->analysis_id, in->p, in->summary, in->experiments}},
		.nparts = 1,
	};
	size_t ncand, nmissing;

	for (size_t k = 0; k < in->nmore && k < PL_REPORT_MORE_MAX; k++)
		r.parts[r.nparts++] = in->more[k];

	if (in->p->nevents == 0)
		return pl_fail(err, PL_ERR_MALFORMED, "check that the input holds samples",
			       "the analysis holds no samples");
	classify_events(&r, in->rules, in->only_event);
	header(&r, pl_rules_version(in->rules));
	problem_section(&r);
	data_quality_section(&r);
	observations_section(&r);
	stat_observations(&r);
	hotspots_section(&r);
	threads_section(&r, in->rules);
	ncand = candidates_section(&r);
	nmissing = missing_section(&r);
	plan_section(&r);
	conclusion_section(&r, ncand, pl_rules_forbidden(in->rules));
	*summary = summary_json(&r, nmissing);
	for (size_t i = 0; i < r.nviews; i++)
		pl_view_release(&r.views[i]);
	free(r.views);
	free(r.view_part);
	json_decref(r.classified);
	*md = r.md;
	return PL_OK;
}
