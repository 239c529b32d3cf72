/* fuzz_fleet.c - the fleet store's handling of outside bytes
 * (collectors/fleet/): a device chunk's text into rows, and the strings
 * flags and tool arguments give (a store URL, labels, SQL quoting).
 *
 * The first byte picks the mode.  Even: the rest is a chunk (perf script
 * text, as an agent sends it) parsed as analyze_profile parses one, then
 * turned into rows; checked on every input: every row is one JSON line
 * that parses back, and the sample rows hold every sample of the chunk's
 * profile.  Odd: the rest is a string given to fleet_parse_url,
 * fleet_label_ok and fleet_sql_quote; checked: a quoted string has every
 * quote and backslash of the input escaped, so no input leaves the
 * literal.
 */
#include "fuzz.h"
#include "collectors/fleet/rows.h"
#include "collectors/fleet/store.h"
#include "profile/parse.h"

#include <stdlib.h>
#include <string.h>

/* Every line of `b` is a JSON object; the sum of their "samples". */
static uint64_t check_lines(const struct pl_buf *b)
{
	uint64_t sum = 0;
	size_t at = 0;

	while (at < b->len) {
		const char *nl = memchr(b->data + at, '\n', b->len - at);
		size_t end = nl ? (size_t)(nl - b->data) : b->len;
		json_t *row = json_loadb(b->data + at, end - at, 0, NULL);
		if (!json_is_object(row))
			abort();
		sum += (uint64_t)json_integer_value(json_object_get(row, "samples"));
		json_decref(row);
		at = end + 1;
	}
	return sum;
}

static void chunk_rows(const uint8_t *data, size_t size)
{
	struct pl_parse_opts opts = {0};
	struct fleet_rows rows = {0};
	struct pl_limits lim;
	struct pl_profile p;
	struct pl_error err;
	json_t *labels = json_pack("[s]", "firmware=1");
	/* a session's clock (rows.c splits timed samples by their minute) */
	struct fleet_chunk_meta m = {"S/0", "dev", "S", 0, "srv", 1765098061, 1.0, labels, true,
				     1765098000000000000LL};
	uint64_t samples = 0;

	pl_limits_default(&lim);
	lim.max_stacks = 4096;
	pl_profile_init(&p, &lim);
	opts.format = PL_FMT_PERF_SCRIPT;
	if (pl_parse_path(&p, fuzz_file("chunk.txt", data, size), &opts, &err) == PL_OK &&
	    fleet_chunk_rows(&p, &m, &rows, &err) == PL_OK) {
		for (uint32_t s = 0; s < pl_nstacks(&p); s++)
			for (uint32_t w = p.stacks[s].first_weight; w != PL_NOID; w = p.weights[w].next)
				samples += p.weights[w].samples;
		if (check_lines(&rows.samples) != samples || rows.samples_total != samples)
			abort();
		check_lines(&rows.stacks);
		check_lines(&rows.frames);
		check_lines(&rows.chunks);
	}
	fleet_rows_release(&rows);
	pl_profile_release(&p);
	json_decref(labels);
}

static void strings(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), ep[512], db[128];
	struct pl_buf q = {0};
	struct pl_error err;

	memcpy(s, data, size);
	s[size] = '\0';
	fleet_parse_url(s, ep, sizeof(ep), db, sizeof(db), &err);
	fleet_label_ok(s);
	fleet_sql_quote(&q, s);
	/* inside the quotes, a quote or backslash is always escaped */
	for (size_t i = 1; i + 1 < q.len; i++) {
		if (q.data[i] == '\\')
			i++;
		else if (q.data[i] == '\'')
			abort();
	}
	pl_buf_release(&q);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned mode = fuzz_take_byte(&data, &size);

	if (mode % 2 == 0)
		chunk_rows(data, size);
	else
		strings(data, size);
	return 0;
}
