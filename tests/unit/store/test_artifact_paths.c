/* test_artifact_paths.c - which artifact names read_artifact_page and
 * resources/read accept: one folder level (analyses, exports, benchmarks)
 * or collections/ID/FILE, plain names only, nothing that climbs out. */
#include <check.h>

#include "store/artifact.h"

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

Suite *suite_artifact_paths(void)
{
	Suite *s = suite_create("artifact_paths");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, artifact_paths_accept_known_folders);
	tcase_add_test(tc, artifact_paths_refuse_escapes_and_depth);
	suite_add_tcase(s, tc);
	return s;
}
