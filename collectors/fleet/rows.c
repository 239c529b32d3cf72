/* rows.c - a chunk's profile as fleet store rows (see rows.h).
 *
 * Frames and stacks are deduplicated within the chunk (a bitmap over the
 * profile's ids); across chunks and servers the store's
 * ReplacingMergeTree does it.  Each timed sample (the profile's timed
 * table) is summed into the minute of its own time on the session's
 * clock; a weight's samples without a time go to the chunk's arrival
 * minute, so the rows always sum to the chunk's samples.
 */
#include "rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"

uint64_t fleet_id(const void *data, size_t n)
{
	unsigned char d[PL_SHA256_SIZE];
	struct pl_sha256 s;
	uint64_t v = 0;

	pl_sha256_init(&s);
	pl_sha256_update(&s, data, n);
	pl_sha256_final(&s, d);
	for (int i = 0; i < 8; i++)
		v = v << 8 | d[i];
	return v >> 1;
}

static void add_row(struct pl_buf *b, json_t *row_new)
{
	char *text = json_dumps(row_new, JSON_COMPACT | JSON_SORT_KEYS);

	if (text) {
		pl_buf_adds(b, text);
		pl_buf_addc(b, '\n');
		free(text);
	}
	json_decref(row_new);
}

static const char *str_or(const struct pl_profile *p, uint32_t id, const char *none)
{
	return id == PL_NOID ? none : pl_str(p, id);
}

/* The id of frame `f` (function and DSO: addresses and lines differ
 * between builds, the function is what a fleet compares). */
static uint64_t frame_id(const struct pl_profile *p, uint32_t f)
{
	const struct pl_func *fn = &p->funcs[p->frames[f].func];
	struct pl_buf key = {0};
	uint64_t id;

	pl_buf_adds(&key, pl_str(p, fn->symbol));
	pl_buf_addc(&key, '\0');
	pl_buf_adds(&key, str_or(p, fn->dso, ""));
	id = fleet_id(key.data, key.len);
	pl_buf_release(&key);
	return id;
}

static void frame_row(const struct pl_profile *p, uint32_t f, uint64_t id, struct fleet_rows *out)
{
	const struct pl_func *fn = &p->funcs[p->frames[f].func];

	add_row(&out->frames, json_pack("{s:I,s:s,s:s}", "frame_id", (json_int_t)id,
					"function", pl_str(p, fn->symbol), "dso", str_or(p, fn->dso, "")));
}

/* The stack's id and, the first time, its row and its frames' rows. */
static uint64_t stack_id(const struct pl_profile *p, uint32_t s, uint64_t *fids, uint8_t *frame_seen,
			 uint8_t *stack_seen, struct fleet_rows *out)
{
	const struct pl_stack *st = &p->stacks[s];
	size_t n = st->depth;  /* at most the profile's max_depth: every frame is kept */
	unsigned char *key = pl_xcalloc(n ? n * 8 : 1, 1);
	uint64_t id;

	for (size_t i = 0; i < n; i++) {
		uint32_t f = st->frames[i];
		if (!frame_seen[f]) {
			frame_seen[f] = 1;
			fids[f] = frame_id(p, f);
			frame_row(p, f, fids[f], out);
		}
		for (int b = 0; b < 8; b++)
			key[i * 8 + (size_t)b] = (unsigned char)(fids[f] >> (56 - 8 * b));
	}
	id = fleet_id(key, n * 8);
	free(key);
	if (!stack_seen[s]) {
		json_t *frames = json_array();
		stack_seen[s] = 1;
		for (size_t i = 0; i < n; i++)
			json_array_append_new(frames, json_integer((json_int_t)fids[st->frames[i]]));
		add_row(&out->stacks, json_pack("{s:I,s:o}", "stack_id", (json_int_t)id, "frames", frames));
	}
	return id;
}

/* One (event, thread name, stack) sum: several of the profile's stacks
 * can be one fleet stack (they differ in addresses or thread ids only),
 * and the store keeps one row per key, so they are summed first. */
struct sample_sum {
	int64_t minute;
	uint32_t event, comm;
	uint64_t sid, samples, period;
};

static int by_key(const void *x, const void *y)
{
	const struct sample_sum *a = x, *b = y;

	if (a->minute != b->minute)
		return a->minute < b->minute ? -1 : 1;
	if (a->event != b->event)
		return a->event < b->event ? -1 : 1;
	if (a->comm != b->comm)
		return a->comm < b->comm ? -1 : 1;
	return a->sid < b->sid ? -1 : a->sid > b->sid;
}

static void sample_row(const struct pl_profile *p, const struct fleet_chunk_meta *m,
		       const struct sample_sum *sum, struct fleet_rows *out)
{
	char day[16];
	time_t minute = (time_t)sum->minute;
	struct tm tm;

	gmtime_r(&minute, &tm);
	strftime(day, sizeof(day), "%Y-%m-%d", &tm);
	add_row(&out->samples, json_pack("{s:s,s:I,s:s,s:s,s:s,s:O,s:s,s:s,s:s,s:I,s:I,s:I}",
		"day", day, "minute", (json_int_t)sum->minute, "device", m->device,
		"session", m->session, "chunk_id", m->chunk_id, "labels", m->labels,
		"event", pl_str(p, p->events[sum->event].name), "unit", pl_event_unit(p, sum->event),
		"thread", str_or(p, sum->comm, ""), "stack_id", (json_int_t)sum->sid,
		"samples", (json_int_t)sum->samples, "period", (json_int_t)sum->period));
	out->samples_total += sum->samples;
}

/* The sums sorted and merged, one row each. */
static void sample_rows(const struct pl_profile *p, const struct fleet_chunk_meta *m,
			struct sample_sum *sums, size_t n, struct fleet_rows *out)
{
	size_t i = 0;

	if (n)
		qsort(sums, n, sizeof(*sums), by_key);
	while (i < n) {
		struct sample_sum total = sums[i];
		size_t j = i + 1;
		for (; j < n && by_key(&sums[j], &sums[i]) == 0; j++) {
			total.samples += sums[j].samples;
			total.period += sums[j].period;
		}
		sample_row(p, m, &total, out);
		if (!out->first_minute || total.minute < out->first_minute)
			out->first_minute = total.minute;
		i = j;
	}
}

static void chunk_row(const struct pl_profile *p, const struct fleet_chunk_meta *m, struct fleet_rows *out)
{
	json_t *events = json_array();

	for (size_t e = 0; e < p->nevents; e++)
		if (p->events[e].samples)
			json_array_append_new(events, json_string(pl_str(p, p->events[e].name)));
	add_row(&out->chunks, json_pack("{s:s,s:s,s:s,s:i,s:s,s:I,s:I,s:f,s:O,s:o,s:I}", "chunk_id", m->chunk_id,
		"device", m->device, "session", m->session, "chunk", (int)m->chunk, "server", m->server,
		"arrived", (json_int_t)m->arrived, "minute", (json_int_t)(out->first_minute ? out->first_minute
		: (int64_t)(m->arrived - m->arrived % 60)), "seconds", m->seconds, "labels", m->labels,
		"events", events, "samples", (json_int_t)out->samples_total));
}

/* The weight of (stack, event), its index in p->weights, or PL_NOID. */
static uint32_t weight_of(const struct pl_profile *p, uint32_t stack, uint32_t event)
{
	for (uint32_t w = p->stacks[stack].first_weight; w != PL_NOID; w = p->weights[w].next)
		if (p->weights[w].event == event)
			return w;
	return PL_NOID;
}

/* The unix minute of a sample at `time_ns` on the session's clock; false
 * when that is no time a DateTime holds (1970 to 2106: a crafted time, a
 * wrong clock), and the sample counts as one without a time. */
static bool sample_minute(const struct fleet_chunk_meta *m, uint64_t time_ns, int64_t *minute)
{
	__int128 unix_s = ((__int128)time_ns + m->clock_offset_ns) / 1000000000;

	if (!m->clock_known || unix_s < 0 || unix_s > (__int128)UINT32_MAX)
		return false;
	*minute = (int64_t)unix_s - (int64_t)unix_s % 60;
	return true;
}

struct sums {
	struct sample_sum *v;
	size_t n, cap;
};

static void add_sum(struct sums *s, struct sample_sum sum)
{
	PL_GROW(s->v, s->cap, s->n + 1);
	s->v[s->n++] = sum;
}

/* Which weights the timed samples account for in full: each such
 * weight's samples are summed by their minutes, the others' at arrival
 * (a weight with more timed entries than samples cannot be split, and
 * is not). */
static uint8_t *timed_weights(const struct pl_profile *p, const struct fleet_chunk_meta *m)
{
	size_t nw = p->nweights;
	uint64_t *count = pl_xcalloc(nw ? nw : 1, sizeof(*count));
	uint8_t *split = pl_xcalloc(nw ? nw : 1, 1);

	for (size_t i = 0; i < p->timed.n; i++) {
		uint32_t w = weight_of(p, p->timed.v[i].stack, p->timed.v[i].event);
		int64_t minute;
		if (w != PL_NOID && sample_minute(m, p->timed.v[i].time_ns, &minute))
			count[w]++;
	}
	for (size_t w = 0; w < nw; w++)
		split[w] = count[w] && count[w] <= p->weights[w].samples;
	free(count);
	return split;
}

enum pl_err fleet_chunk_rows(const struct pl_profile *p, const struct fleet_chunk_meta *m,
			     struct fleet_rows *out, struct pl_error *err)
{
	size_t nframes = pl_nframes(p), nstacks = pl_nstacks(p);
	uint64_t *fids = pl_xcalloc(nframes ? nframes : 1, sizeof(*fids));
	uint64_t *sids = pl_xcalloc(nstacks ? nstacks : 1, sizeof(*sids));
	uint8_t *frame_seen = pl_xcalloc(nframes ? nframes : 1, 1);
	uint8_t *stack_seen = pl_xcalloc(nstacks ? nstacks : 1, 1);
	uint8_t *split = timed_weights(p, m);
	uint64_t *split_samples = pl_xcalloc(p->nweights ? p->nweights : 1, sizeof(uint64_t));
	uint64_t *split_period = pl_xcalloc(p->nweights ? p->nweights : 1, sizeof(uint64_t));
	int64_t arrival_minute = (int64_t)(m->arrived - m->arrived % 60);
	struct sums sums = {0};

	(void)err;
	for (uint32_t s = 0; s < nstacks; s++)
		for (uint32_t w = p->stacks[s].first_weight; w != PL_NOID; w = p->weights[w].next)
			if (p->weights[w].samples && !stack_seen[s])
				sids[s] = stack_id(p, s, fids, frame_seen, stack_seen, out);
	for (size_t i = 0; i < p->timed.n; i++) {
		const struct pl_timed *t = &p->timed.v[i];
		uint32_t w = weight_of(p, t->stack, t->event);
		int64_t minute;
		if (w == PL_NOID || !split[w] || !sample_minute(m, t->time_ns, &minute))
			continue;
		split_samples[w]++;
		split_period[w] += t->period;
		add_sum(&sums, (struct sample_sum){minute, t->event,
			p->threads[p->stacks[t->stack].thread].comm, sids[t->stack], 1, t->period});
	}
	for (uint32_t s = 0; s < nstacks; s++)
		for (uint32_t w = p->stacks[s].first_weight; w != PL_NOID; w = p->weights[w].next) {
			const struct pl_weight *pw = &p->weights[w];
			uint64_t left = pw->samples - split_samples[w];
			if (!left)
				continue;
			/* the period the timed samples did not carry (never below 0) */
			add_sum(&sums, (struct sample_sum){arrival_minute, pw->event, p->threads[p->stacks[s].thread].comm,
				sids[s], left, pw->period > split_period[w] ? pw->period - split_period[w] : 0});
		}
	sample_rows(p, m, sums.v, sums.n, out);
	free(sums.v);
	chunk_row(p, m, out);
	free(fids);
	free(sids);
	free(frame_seen);
	free(stack_seen);
	free(split);
	free(split_samples);
	free(split_period);
	return PL_OK;
}

void fleet_rows_release(struct fleet_rows *r)
{
	pl_buf_release(&r->chunks);
	pl_buf_release(&r->samples);
	pl_buf_release(&r->stacks);
	pl_buf_release(&r->frames);
}
