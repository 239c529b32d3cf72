/* test_formats.c - unit tests for the whole-file readers' edges
 * (profile/parse_pprof.c, parse_json.c): format sniffing, an event's unit
 * kept and never merged with another unit, V8 ticks timed by the next
 * delta, and speedscope time units in nanoseconds.  The producers' own
 * files are checked by the integration tests against go tool pprof and
 * recomputations (test_pprof_input.sh, test_json_inputs.sh).
 */
#include <check.h>
#include <string.h>

#include "testlib.h"

#include "profile/parse_pprof.h"

static struct pl_profile prof;

static void setup(void)
{
	pl_profile_init(&prof, NULL);
}

static void teardown(void)
{
	pl_profile_release(&prof);
}

START_TEST(sniffs_pprof_by_its_fields_not_text)
{
	/* time_nanos first (as Go writes), then sample_type {type 1, unit 2}. */
	static const unsigned char go[] = {0x48, 0x8b, 0xb9, 0x01, 0x0a, 0x04, 0x08, 0x01, 0x10, 0x02,
					   0x0a, 0x04, 0x08, 0x03, 0x10, 0x04};
	ck_assert(pl_pprof_sniff(go, sizeof(go)));
	ck_assert(!pl_pprof_sniff((const unsigned char *)"main;foo 12\n", 12));
	ck_assert(!pl_pprof_sniff((const unsigned char *)"\n\n\n\n\n\n", 6));
	ck_assert(!pl_pprof_sniff((const unsigned char *)"Hello world\n", 12));
	/* Letters that read as three protobuf fields ('h' field 13 varint,
	 * 'a' its value): perf script text of a program so named, never a
	 * pprof (test_perf_report_oracle's jit_map once read so). */
	static const char haha[] = "hahaha 1234/1234  31.5:    1001001 cpu-clock: \n\t  401136 spin+0x16 (/tmp/spin)\n";
	ck_assert(!pl_pprof_sniff((const unsigned char *)haha, sizeof(haha) - 1));
	ck_assert_int_eq(pl_detect_format(haha, sizeof(haha) - 1), PL_FMT_PERF_SCRIPT);
}
END_TEST

START_TEST(sniffs_json_profiles_by_their_keys)
{
	const char *ss = "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"shared\":{}}";
	const char *v8 = "  {\"nodes\":[{\"id\":1,\"callFrame\":{}}]}";

	ck_assert_int_eq(pl_json_profile_sniff(ss, strlen(ss)), PL_FMT_SPEEDSCOPE);
	ck_assert_int_eq(pl_json_profile_sniff(v8, strlen(v8)), PL_FMT_CPUPROFILE);
	ck_assert_int_eq(pl_json_profile_sniff("{\"a\":1}", 7), PL_FMT_AUTO);
	ck_assert_int_eq(pl_json_profile_sniff("nodes", 5), PL_FMT_AUTO);
}
END_TEST

START_TEST(event_units_are_never_merged)
{
	struct pl_error err;
	uint32_t a = pl_intern_event_unit(&prof, "time", 4, "microseconds", &err);

	ck_assert_uint_eq(pl_intern_event_unit(&prof, "time", 4, "microseconds", &err), a);
	ck_assert_str_eq(pl_event_unit(&prof, a), "microseconds");
	ck_assert_uint_eq(pl_intern_event_unit(&prof, "time", 4, "nanoseconds", &err), PL_NOID);
	ck_assert_int_eq(err.code, PL_ERR_MALFORMED);
}
END_TEST

START_TEST(v8_tick_lasts_until_the_next)
{
	struct pl_error err;
	const char *j = "{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\",\"url\":\"\"},\"children\":[2]},"
			"{\"id\":2,\"callFrame\":{\"functionName\":\"f\",\"url\":\"file:///a.js\",\"lineNumber\":2}}],"
			"\"startTime\":0,\"endTime\":100,\"samples\":[2,2],\"timeDeltas\":[10,30]}";
	uint32_t t;

	ck_assert_int_eq(pl_parse_cpuprofile(&prof, j, strlen(j), "t", &err), PL_OK);
	t = pl_find_event(&prof, "time");
	/* tick 1: 30 us (the next delta); tick 2: endTime 100 - its time 40. */
	ck_assert_uint_eq(prof.events[t].period, 90);
	ck_assert_uint_eq(prof.events[pl_find_event(&prof, "samples")].samples, 2);
	ck_assert_str_eq(pl_str(&prof, prof.frames[0].srcline), "file:///a.js:3");
}
END_TEST

START_TEST(speedscope_milliseconds_become_nanoseconds)
{
	struct pl_error err;
	const char *j = "{\"shared\":{\"frames\":[{\"name\":\"a\"}]},\"profiles\":[{\"type\":\"sampled\","
			"\"unit\":\"milliseconds\",\"name\":\"t\",\"samples\":[[0],[0]],\"weights\":[0.25,1.5]}]}";

	ck_assert_int_eq(pl_parse_speedscope(&prof, j, strlen(j), "t", &err), PL_OK);
	ck_assert_uint_eq(prof.events[pl_find_event(&prof, "time")].period, 1750000);
	ck_assert_str_eq(pl_event_unit(&prof, pl_find_event(&prof, "time")), "nanoseconds");
}
END_TEST

Suite *suite_formats(void)
{
	Suite *s = suite_create("formats");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sniffs_pprof_by_its_fields_not_text);
	tcase_add_test(tc, sniffs_json_profiles_by_their_keys);
	tcase_add_test(tc, event_units_are_never_merged);
	tcase_add_test(tc, v8_tick_lasts_until_the_next);
	tcase_add_test(tc, speedscope_milliseconds_become_nanoseconds);
	suite_add_tcase(s, tc);
	return s;
}
