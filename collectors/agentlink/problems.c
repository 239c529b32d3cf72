/* problems.c - what our agent says went wrong in a capture
 * (`capture_problems` of its status and stop answers, an extension of
 * docs/agent-protocol.md: perf record gave no perf.data header, ...),
 * kept in the capture's record (the start answer the device and its
 * session hold) as `problems`, so list_devices, list_sessions,
 * stop_capture and analyze_profile's data quality say it.
 *
 * The agent's strings are outside bytes: only strings of printable
 * characters within PROBLEM_MAX are kept, at most PROBLEMS_MAX of them,
 * and what is not kept is counted in one more problem (never dropped
 * silently).  The agent keeps its list for the whole capture, so each
 * answer replaces the record's list; the same list is no change.  (The
 * agent logs each on the device; list_devices shows them here.)
 */
#include "link_int.h"

#include <stdio.h>
#include <string.h>

#define PROBLEMS_MAX 8
#define PROBLEM_MAX 1024

static bool printable(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

bool coll_capture_problems(json_t *capture, json_t *answer)
{
	json_t *got = json_object_get(answer, "capture_problems"), *kept, *p;
	size_t i, refused = 0;
	char why[160];

	if (!json_is_object(capture) || !json_is_array(got))
		return false;
	kept = json_array();
	json_array_foreach(got, i, p) {
		if (json_array_size(kept) < PROBLEMS_MAX && json_is_string(p) &&
		    json_string_length(p) <= PROBLEM_MAX && printable(json_string_value(p)))
			json_array_append(kept, p);
		else
			refused++;
	}
	if (refused) {
		snprintf(why, sizeof(why), "the agent said %zu more problem(s) the server did not keep (past %d, "
			 "or not a string of at most %d printable characters)", refused, PROBLEMS_MAX, PROBLEM_MAX);
		json_array_append_new(kept, json_string(why));
	}
	if (json_equal(kept, json_object_get(capture, "problems"))) {
		json_decref(kept);
		return false;
	}
	json_object_set_new(capture, "problems", kept);
	return true;
}
