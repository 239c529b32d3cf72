/* test_artifact_paths.c - which artifact names read_artifact_page and
 * resources/read accept: one folder level (analyses, exports, benchmarks)
 * or collections/ID/FILE, plain names only, nothing that climbs out. */
#include <check.h>

#include "store/artifact.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static bool accepted(const char *p)
{
	char rel[256];

	return pl_artifact_rel_path(p, rel, sizeof(rel));
}

START_TEST(artifact_paths_accept_known_folders)
{
	ck_assert(accepted("analyses/an-0123.json"));
	ck_assert(accepted("exports/an-1.cpu-clock.svg"));
	ck_assert(accepted("benchmarks/bm-1.json"));
	ck_assert(accepted("collections/co-0123456789abcdef0123/timehist.txt"));
	ck_assert(accepted("perflens://artifacts/collections/co-1/metadata.json"));
}
END_TEST

START_TEST(artifact_paths_refuse_escapes_and_depth)
{
	ck_assert(!accepted("collections/../x"));
	ck_assert(!accepted("collections/co-1/../../etc/passwd"));
	ck_assert(!accepted("collections/co-1/a/b"));
	ck_assert(!accepted("collections/.staging-x/perf.data"));
	ck_assert(!accepted("collections/co-1"));
	ck_assert(!accepted("collections//perf.data"));
	ck_assert(!accepted("analyses/../x"));
	ck_assert(!accepted("elsewhere/x"));
	ck_assert(!accepted("/etc/passwd"));
}
END_TEST

/* list_artifacts reads two keys of a summary without parsing the rest:
 * the same values as a whole parse, refusals where a whole parse fails. */
static json_t *keys_of(const char *dir, const char *text, enum pl_err *rc)
{
	static const char *const keys[] = {"events", "provenance"};
	char path[512];
	struct pl_error err;
	json_t *out = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/analyses/an-0123456789abcdef0123.json", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	*rc = pl_artifact_load_summary_keys(dir, "an-0123456789abcdef0123", keys, 2, &out, &err);
	return out;
}

START_TEST(summary_keys_are_the_values_a_whole_parse_gives)
{
	char dir[] = "/tmp/pl-keys-XXXXXX", sub[64];
	static const char *const good[] = {
		"{\"schema\":\"x\",\"events\":[{\"name\":\"a,}]\\\"\",\"samples\":3}],\"views\":{\"x\":[1,{\"y\":\"}\"}]},"
		"\"provenance\":{\"inputs\":[{\"path\":\"/p\"}]},\"n\":-1.5e3,\"t\":true}",
		" { \"events\" : [ ] , \"other\" : null } \n",
		"{}",
		"{\"events\":[{\"name\":\"b\\\\\"},\"\\\\\\\"]\"],\"provenance\":\"\\\\\"}",
	};
	static const char *const bad[] = {
		"{\"events\":[1,2}", "{\"events\":[1],\"events\":[2]}", "[1]", "{\"events\":[1]} x",
		"{\"events\":[1],}", "{\"provenance\":{\"a\":1,\"a\":2}}", "",
	};
	enum pl_err rc;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/analyses", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	for (size_t i = 0; i < PL_ARRAY_LEN(good); i++) {
		json_t *whole = json_loads(good[i], 0, NULL), *got = keys_of(dir, good[i], &rc);
		ck_assert_int_eq(rc, PL_OK);
		ck_assert_ptr_nonnull(whole);
		ck_assert(json_equal(json_object_get(got, "events"), json_object_get(whole, "events")) ||
			  (!json_object_get(got, "events") && !json_object_get(whole, "events")));
		ck_assert(json_equal(json_object_get(got, "provenance"), json_object_get(whole, "provenance")) ||
			  (!json_object_get(got, "provenance") && !json_object_get(whole, "provenance")));
		ck_assert_uint_le(json_object_size(got), 2);
		json_decref(got);
		json_decref(whole);
	}
	for (size_t i = 0; i < PL_ARRAY_LEN(bad); i++) {
		json_t *got = keys_of(dir, bad[i], &rc);
		ck_assert_msg(rc == PL_ERR_MALFORMED && !got, "accepted: %s", bad[i]);
	}
	snprintf(sub, sizeof(sub), "%s/analyses/an-0123456789abcdef0123.json", dir);
	unlink(sub);
	snprintf(sub, sizeof(sub), "%s/analyses", dir);
	rmdir(sub);
	rmdir(dir);
}
END_TEST

Suite *suite_artifact_paths(void)
{
	Suite *s = suite_create("artifact_paths");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, artifact_paths_accept_known_folders);
	tcase_add_test(tc, artifact_paths_refuse_escapes_and_depth);
	tcase_add_test(tc, summary_keys_are_the_values_a_whole_parse_gives);
	suite_add_tcase(s, tc);
	return s;
}
