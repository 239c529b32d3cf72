/* classify.h - rule-based candidate labels for the hotspots of an event.
 *
 * The rules are data, not code: schemas/rules/classify-rules.json
 * (validated by schemas/classify-rules.schema.json, versioned by its
 * "version" field) is embedded at build time and compiled once per
 * process.  A rule either matches functions (POSIX extended regexes on the
 * symbol and DSO, frame kinds) and sums their self or inclusive weight, or
 * reads a profile-wide metric computed here (samples, truncated stacks,
 * unknown frames).  Each event is classified on its own: events are never
 * merged.  Whatever fires is a "candidate", never a finding: it carries the
 * matched hotspots with their figures, the evidence level, the missing
 * evidence, next steps and the conclusions it does not support.
 *
 * Ownership: compiled rules own their regexes and hold a reference to the
 * document; pl_rules_builtin's rules live for the process.  A classifier
 * borrows its rules and profile.
 */
#ifndef PL_CLASSIFY_H
#define PL_CLASSIFY_H

#include <jansson.h>

#include "profile/aggregate.h"
#include "base/error.h"
#include "profile/profile.h"

#define PL_RULES_PATH "schemas/rules/classify-rules.json"
#define PL_RULES_MAX 64          /* rules in one document (a bit each) */
#define PL_CLASSIFY_TOP 10       /* matched hotspots listed per candidate */

struct pl_rules;

/* Compile a rules document (borrowed; a reference is kept).  A bad
 * document or pattern is PL_ERR_INTERNAL naming the rule and field. */
enum pl_err pl_rules_compile(json_t *doc, struct pl_rules **out,
			     struct pl_error *err);
void pl_rules_free(struct pl_rules *r);

/* The embedded rules, compiled on first use (thread-safe); borrowed. */
enum pl_err pl_rules_builtin(const struct pl_rules **out, struct pl_error *err);

int pl_rules_version(const struct pl_rules *r);
size_t pl_rules_count(const struct pl_rules *r);
/* The document's global forbidden conclusions (borrowed array). */
json_t *pl_rules_forbidden(const struct pl_rules *r);

/* Whether `event` belongs to the document's event set `set` (e.g.
 * "cpu_time"); false when the set is not defined. */
bool pl_rules_event_in_set(const struct pl_rules *r, const char *set, const char *event);

/* Whether `event` belongs to the embedded rules' event set `set`, from
 * those sets alone (thread-safe): the sets read once (or ahead, by
 * pl_rules_builtin_sets_prepare()), each set's pattern compiled when it
 * is first asked, without the rules' own patterns, whose regcomp a tool
 * that only asks this (list_hotspots) should not pay.  False when the set
 * is not defined or the document cannot be read (the tools that classify
 * report that). */
bool pl_rules_builtin_event_in_set(const char *set, const char *event);
void pl_rules_builtin_sets_prepare(void);

/* Whether `symbol` is a stack's entry point (_start, main, start_thread,
 * clone...) as the truncated-stack rule's roots define them. */
bool pl_rules_entry_point(const struct pl_rules *r, const char *symbol);

/* Rule i when it is a hotspot-group function rule that applies to `event`
 * through its event sets (not as a whole-event rule): its id and label
 * (borrowed) and whether it weighs inclusively; false otherwise. */
bool pl_rules_function_rule(const struct pl_rules *r, size_t i, const char *event,
			    const char **id, const char **label, bool *inclusive);

/* The rules a stack keeps, from the OR of its frames' rule masks: a rule
 * whose "unless" names a rule the stack also matches (as matched, before
 * any exclusion) loses the stack, so a wait counts as one kind (a thread
 * preempted inside write() is CPU contention, not I/O). */
uint64_t pl_rules_stack_mask(const struct pl_rules *r, uint64_t any);

/* Per-profile matching state: which rules match which function, and
 * (computed per event when first asked) which threads pass the rules'
 * thread gates. */
struct thread_gate;
struct pl_classifier {
	const struct pl_rules *rules;
	const struct pl_profile *p;
	const char *analysis_id;
	uint64_t *func_mask;     /* [nfuncs] bit i: rule i matches */
	struct thread_gate *gate;
};

/* The rules stack `stack` keeps under `event`, from the OR of its frames'
 * rule masks `any`: a rule with a thread gate ("thread" in its match)
 * whose gate the stack's thread fails is dropped, then "unless" applies
 * (pl_rules_stack_mask).  Every per-stack figure goes through this. */
uint64_t pl_classifier_stack_rules(const struct pl_classifier *c, uint32_t event, uint32_t stack,
				   uint64_t any);

void pl_classifier_init(struct pl_classifier *c, const struct pl_rules *r,
			const struct pl_profile *p, const char *analysis_id);
void pl_classifier_release(struct pl_classifier *c);

/* Classify the event of view `v` (built on c->p).  Returns a new object:
 *   {"event", "unit", "quality": {...}, "candidates": [...],
 *    "quiet": [...]}
 * candidates ordered data-quality rules first (rule order), then by their
 * figure, largest first (ties by rule order); quiet lists every rule that
 * did not fire, with its outcome (below_threshold or not_applicable). */
json_t *pl_classify_event(struct pl_classifier *c, const struct pl_view *v);

#endif
