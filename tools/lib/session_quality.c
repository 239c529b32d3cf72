/* session_quality.c - do a device session's numbers add up (see
 * session_quality.h)?
 *
 * Each chunk is one source of the profile: its samples are its records
 * less the counters of the perf stat blocks read from it.  The agent's
 * perf samples with -F, so a sample stands for 1/F s of a thread's CPU
 * time, whatever the event: the samples of the busiest event over F are
 * the CPU seconds they saw, and perf stat's task-clock counts the same
 * CPU seconds.  perf stat's rounds do not cover the chunks one to one (a
 * round rides the chunk after it ends; the one running at a stop is cut),
 * so the two are compared as rates: CPUs busy while sampled (CPU seconds
 * over the capture's length, start answer to stop answer) against CPUs
 * busy while counted (task-clock over the rounds' elapsed time).  Only a
 * continuous capture samples all of its length (rounds mode does not
 * sample while perf script runs), so only there is the rate compared.
 */
#include "tools/registry.h"
#include "session_quality.h"
#include "profile/perf_stat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNKS_SHOWN 100
#define RATE_TOLERANCE 0.15      /* sampled vs counted CPUs busy, relative */
#define ZERO_CHUNK_EXPECTED 20   /* samples a chunk's task-clock must stand for */
#define MIN_SAMPLES_COMPARED 50

/* task-clock in seconds of a block, or < 0 when it did not count it. */
static double task_clock_s(const struct pl_stat_block *b)
{
	for (size_t i = 0; i < b->ncounters; i++) {
		const struct pl_stat_counter *c = &b->counters[i];
		if (strncmp(c->event, "task-clock", 10) == 0 && c->status == PL_STAT_COUNTED)
			return strcmp(c->unit, "msec") == 0 || !c->unit[0] ? c->value / 1000.0 : c->value;
	}
	return -1;
}

/* The samples chunk `src` holds, and its task-clock (seconds, < 0 none). */
static uint64_t chunk_samples(const struct pl_profile *p, const struct pl_source *src, double *tc)
{
	uint64_t counters = 0;

	*tc = -1;
	for (size_t i = 0; i < p->nstats; i++)
		if (p->stats[i]->source && strcmp(p->stats[i]->source, src->path) == 0) {
			double t = task_clock_s(p->stats[i]);
			counters += p->stats[i]->ncounters;
			if (t >= 0)
				*tc = (*tc < 0 ? 0 : *tc) + t;
		}
	return src->records > counters ? src->records - counters : 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The gaps the link recorded, each a note with its size: a gap of
 * seconds in samples at the rate of the time the chunks cover (the
 * capture's time less every gap's, or what the gap says was covered
 * before it when the capture's time is not known yet). */
static void gap_notes(struct pl_profile *p, json_t *meta, uint64_t total)
{
	double capture = json_number_value(json_object_get(meta, "capture_seconds")), gapped = 0;
	json_t *g;
	size_t i;
	char note[600];

	json_array_foreach(json_object_get(meta, "gaps"), i, g)
		gapped += json_number_value(json_object_get(g, "seconds"));
	json_array_foreach(json_object_get(meta, "gaps"), i, g) {
		const char *reason = json_string_value(json_object_get(g, "reason"));
		double secs = json_number_value(json_object_get(g, "seconds"));
		double covered = capture - gapped >= 0.5 ? capture - gapped
							  : json_number_value(json_object_get(g, "covered_seconds"));
		json_int_t missing = json_integer_value(json_object_get(g, "chunks_missing"));
		int n = snprintf(note, sizeof(note), "session gap at chunk %lld: %s",
				 (long long)json_integer_value(json_object_get(g, "chunk")),
				 reason ? reason : "no reason recorded");
		if (secs > 0 && covered > 0 && n > 0 && (size_t)n < sizeof(note))
			snprintf(note + n, sizeof(note) - (size_t)n,
				 " (%.2f s, about %.0f samples at the rate of the %.2f s the chunks cover)",
				 secs, (double)total * secs / covered, covered);
		else if (secs > 0 && n > 0 && (size_t)n < sizeof(note))
			snprintf(note + n, sizeof(note) - (size_t)n, " (%.2f s)", secs);
		else if (missing > 0 && n > 0 && (size_t)n < sizeof(note))
			snprintf(note + n, sizeof(note) - (size_t)n, " (%lld chunk(s))", (long long)missing);
		pl_profile_add_note(p, note);
	}
}

/* The busiest event's samples: the CPU time they stand for at -F. */
static uint64_t busiest_event_samples(const struct pl_profile *p)
{
	uint64_t most = 0;

	for (size_t i = 0; i < p->nevents; i++)
		if (p->events[i].samples > most)
			most = p->events[i].samples;
	return most;
}

/* What the samples stand for against what perf stat counted
 * (continuous captures), each way by the bound that holds.  perf stat
 * runs in rounds inside the capture, so its task-clock is CPU time of
 * part of the sampled window: fewer sampled CPU seconds than it counted
 * means samples are missing, whatever the window's edges were.  More
 * sampled is judged by the rates (CPUs busy), which the time between
 * rounds can only bring closer.  The capture's seconds run from the
 * start's answer to the stop's, so perf's start-up and the drain at the
 * end inflate them on a loaded device: a rate comparison of the missing
 * side said 0.18 against 0.24 CPUs for a CI session that lost nothing. */
static void rate_note(struct pl_profile *p, json_t *meta, double freq, double tc_total,
		      double elapsed_total)
{
	json_t *capture = json_object_get(meta, "capture");
	const char *mode = json_string_value(json_object_get(capture, "mode"));
	double secs = json_number_value(json_object_get(meta, "capture_seconds"));
	uint64_t samples = busiest_event_samples(p);
	char note[400];

	if (!mode || strcmp(mode, "continuous") != 0 || secs < 1 || elapsed_total < 1 ||
	    samples < MIN_SAMPLES_COMPARED || freq <= 0)
		return;
	double cpu_sampled = (double)samples / freq;
	double sampled = cpu_sampled / secs, counted = tc_total / elapsed_total;
	/* The bound holds only while the rounds fit inside the capture. */
	if (elapsed_total <= secs * (1 + RATE_TOLERANCE) &&
	    cpu_sampled < tc_total * (1 - RATE_TOLERANCE) - 0.02 * elapsed_total)
		snprintf(note, sizeof(note), "the samples stand for %.2f s of CPU time (%llu at %.0f Hz), "
			 "but perf stat's task-clock counted %.2f s within its rounds, which cover %.1f s of "
			 "the capture's %.1f s: samples are missing (lost or not sent)",
			 cpu_sampled, (unsigned long long)samples, freq, tc_total, elapsed_total, secs);
	else if (sampled > counted * (1 + RATE_TOLERANCE) + 0.02)
		snprintf(note, sizeof(note), "the samples stand for %.2f CPUs busy over the capture's %.1f s "
			 "(%llu at %.0f Hz), perf stat's task-clock counted %.2f CPUs busy: more sampled than "
			 "counted (samples counted twice, or the stat rounds missed busy time)",
			 sampled, secs, (unsigned long long)samples, freq, counted);
	else
		return;
	pl_profile_add_note(p, note);
}

/* Whether chunk `i`, which holds no sample, had its samples arrive in
 * other chunks: the session as a whole is not short of what its
 * task-clock stands for by half of what this chunk's does.  perf script
 * prints an interval late when perf record's output is buffered (-m 16)
 * or the machine is loaded, and the agent cuts its chunks by time, so a
 * chunk can be empty with nothing lost: CI under ASan gave chunks of
 * [0, 1800, 711] and [0, 992, 716] samples at 999 Hz whose totals matched
 * task-clock, the first chunk's samples landing in the second and the
 * last, which may carry no perf stat block.  The session's samples are
 * every chunk's; its task-clock is that of the chunks that counted it. */
static int samples_came_late(const uint64_t *n, const double *tc, size_t count, size_t i, double freq)
{
	double expected = 0, samples = 0;

	for (size_t j = 0; j < count; j++) {
		samples += (double)n[j];
		if (tc[j] >= 0)
			expected += tc[j] * freq;
	}
	return expected - samples < 0.5 * tc[i] * freq;
}

/* A note for each chunk with no sample whose task-clock says it should
 * hold some, unless the other chunks hold them. */
static void empty_chunk_notes(struct pl_profile *p, const uint64_t *n, const double *tc, double freq)
{
	char note[400];

	for (size_t i = 0; i < p->nsources; i++) {
		if (n[i] != 0 || tc[i] <= 0 || freq <= 0 || tc[i] * freq < ZERO_CHUNK_EXPECTED ||
		    samples_came_late(n, tc, p->nsources, i, freq))
			continue;
		snprintf(note, sizeof(note), "%s holds no sample, but its perf stat counted %.2f s of "
			 "task-clock (about %.0f samples at %.0f Hz): samples of that time are missing",
			 base_name(p->sources[i].path), tc[i], tc[i] * freq, freq);
		pl_profile_add_note(p, note);
	}
}

/* What the device's agent said went wrong in the capture (the link keeps
 * it in the capture's record: collectors/agentlink/problems.c), each a
 * note with the agent's own fix. */
static void agent_problem_notes(struct pl_profile *p, json_t *meta)
{
	json_t *v;
	size_t i;
	char note[1200];

	json_array_foreach(json_object_get(json_object_get(meta, "capture"), "problems"), i, v)
		if (json_is_string(v)) {
			snprintf(note, sizeof(note), "the device's agent says: %s", json_string_value(v));
			pl_profile_add_note(p, note);
		}
}

void tool_session_quality(struct pl_profile *p, json_t *meta, json_t *out)
{
	json_t *counts = json_array(), *sent;
	double freq = (double)json_integer_value(json_object_get(json_object_get(meta, "capture"), "frequency"));
	double tc_total = 0, elapsed_total = 0;
	uint64_t total = 0;
	uint64_t *n = calloc(p->nsources ? p->nsources : 1, sizeof(*n));
	double *tc = calloc(p->nsources ? p->nsources : 1, sizeof(*tc));
	char note[400];

	if (!n || !tc) {
		free(n);
		free(tc);
		json_decref(counts);
		return;
	}
	for (size_t i = 0; i < p->nsources; i++) {
		n[i] = chunk_samples(p, &p->sources[i], &tc[i]);
		total += n[i];
		if (i < CHUNKS_SHOWN)
			json_array_append_new(counts, json_integer((json_int_t)n[i]));
	}
	/* A counting capture (start_capture's counting) samples nothing on
	 * purpose: its chunks are perf stat only. */
	const char *mode = json_string_value(json_object_get(json_object_get(meta, "capture"), "mode"));
	if (!mode || strcmp(mode, "counting") != 0)
		empty_chunk_notes(p, n, tc, freq);
	free(n);
	free(tc);
	for (size_t i = 0; i < p->nstats; i++) {
		double block_tc = task_clock_s(p->stats[i]);
		if (block_tc >= 0 && p->stats[i]->elapsed_seconds > 0) {
			tc_total += block_tc;
			elapsed_total += p->stats[i]->elapsed_seconds;
		}
	}
	json_object_set_new(out, "chunk_samples", counts);
	if (p->nsources > CHUNKS_SHOWN)
		json_object_set_new(out, "chunk_samples_shown", json_integer(CHUNKS_SHOWN));
	json_object_set_new(out, "samples", json_integer((json_int_t)total));
	agent_problem_notes(p, meta);
	gap_notes(p, meta, total);
	sent = json_object_get(json_object_get(meta, "capture_counters"), "samples_sent");
	if (json_is_integer(sent) && (uint64_t)json_integer_value(sent) != total) {
		json_int_t s = json_integer_value(sent);
		snprintf(note, sizeof(note), "the agent counted %lld samples sent for this capture; its chunks "
			 "hold %llu (%lld %s)", (long long)s, (unsigned long long)total,
			 (long long)(s > (json_int_t)total ? s - (json_int_t)total : (json_int_t)total - s),
			 s > (json_int_t)total ? "missing" : "more than sent");
		pl_profile_add_note(p, note);
	}
	rate_note(p, meta, freq, tc_total, elapsed_total);
}
