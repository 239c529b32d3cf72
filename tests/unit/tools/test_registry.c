/* test_registry.c - unit tests for tools/registry.c: the two lookups, the
 * table against schemas/tools/ (no row without its schema, no schema
 * without its row), and the JSON half of the error exit. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tools/registry.h"
#include "base/schemas.h"

#define TOOL_SCHEMAS "schemas/tools/"

START_TEST(tool_find_takes_exact_tool_names_only)
{
	ck_assert_str_eq(tool_find("list_hotspots")->name, "list_hotspots");
	ck_assert_str_eq(tool_find("analyze_profile")->name, "analyze_profile");
	ck_assert_ptr_null(tool_find("hotspots"));      /* a CLI name */
	ck_assert_ptr_null(tool_find("List_hotspots"));
	ck_assert_ptr_null(tool_find("list_hotspots "));
	ck_assert_ptr_null(tool_find(""));
	ck_assert_ptr_null(tool_find(NULL));
}
END_TEST

START_TEST(tool_find_cli_takes_cli_names_and_tool_names)
{
	ck_assert_str_eq(tool_find_cli("hotspots")->name, "list_hotspots");
	ck_assert_str_eq(tool_find_cli("analyze")->name, "analyze_profile");
	ck_assert_str_eq(tool_find_cli("list_hotspots")->name, "list_hotspots");
	ck_assert_ptr_null(tool_find_cli("frobnicate"));
	ck_assert_ptr_null(tool_find_cli(NULL));
}
END_TEST

START_TEST(every_row_has_its_schema_and_every_cli_name_is_unique)
{
	for (size_t i = 0; i < tool_count; i++) {
		const struct tool_def *t = &tool_table[i];
		json_t *d;
		ck_assert_msg(pl_schema_text(t->schema_path) != NULL, "'%s' has no schema '%s'",
			      t->name, t->schema_path);
		d = tool_definition(t);
		ck_assert_str_eq(json_string_value(json_object_get(d, "name")), t->name);
		ck_assert(json_is_object(json_object_get(d, "inputSchema")));
		ck_assert(json_is_object(json_object_get(d, "outputSchema")));
		ck_assert_msg(json_is_string(json_object_get(d, "cli")), "'%s' has no cli name", t->name);
		for (size_t k = 0; k < i; k++)
			ck_assert_str_ne(json_string_value(json_object_get(d, "cli")),
					 json_string_value(json_object_get(tool_definition(&tool_table[k]), "cli")));
	}
}
END_TEST

START_TEST(every_tool_schema_has_its_row)
{
	size_t schemas = 0;

	for (const struct pl_schema_file *f = pl_schema_files; f->path; f++) {
		char name[128];
		const struct tool_def *t;
		size_t n = strlen(f->path);
		if (strncmp(f->path, TOOL_SCHEMAS, strlen(TOOL_SCHEMAS)) != 0 || n < 5 ||
		    strcmp(f->path + n - 5, ".json") != 0)
			continue;
		schemas++;
		snprintf(name, sizeof(name), "%.*s", (int)(n - 5 - strlen(TOOL_SCHEMAS)),
			 f->path + strlen(TOOL_SCHEMAS));
		t = tool_find(name);
		ck_assert_msg(t != NULL, "'%s' has no row in tool_table", f->path);
		ck_assert_str_eq(t->schema_path, f->path);
	}
	ck_assert_uint_gt(schemas, 0);
#ifndef PL_TEST_HOOKS
	ck_assert_uint_eq(schemas, tool_count);
#endif
}
END_TEST

START_TEST(error_json_is_the_cli_object_and_escapes_bytes)
{
	struct pl_error e, back;
	json_t *j;

	pl_fail(&e, PL_ERR_LIMIT, "raise --max-depth", "stack in 'caf\xe9' deeper than %d", 5);
	j = tool_error_json_new(&e);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(j, "code")), "limit_exceeded");
	ck_assert_str_eq(json_string_value(json_object_get(j, "message")),
			 "stack in 'caf\\xe9' deeper than 5");
	ck_assert_str_eq(json_string_value(json_object_get(j, "hint")), "raise --max-depth");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "exit_code")), 4);
	ck_assert_uint_eq(json_object_size(j), 4);
	ck_assert_int_eq(tool_error_from_json(j, &back), PL_ERR_LIMIT);
	ck_assert_str_eq(back.text, "stack in 'caf\\xe9' deeper than 5");
	ck_assert_str_eq(back.hint, "raise --max-depth");
	json_decref(j);
}
END_TEST

START_TEST(error_json_that_cannot_be_read_is_internal)
{
	struct pl_error e;
	json_t *j = json_pack("{s:s}", "code", "ok");

	ck_assert_int_eq(tool_error_from_json(j, &e), PL_ERR_INTERNAL);
	ck_assert_int_eq(tool_error_from_json(NULL, &e), PL_ERR_INTERNAL);
	ck_assert_str_eq(e.text, "the error could not be read");
	json_decref(j);
}
END_TEST

Suite *suite_registry(void)
{
	Suite *s = suite_create("registry");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, tool_find_takes_exact_tool_names_only);
	tcase_add_test(tc, tool_find_cli_takes_cli_names_and_tool_names);
	tcase_add_test(tc, every_row_has_its_schema_and_every_cli_name_is_unique);
	tcase_add_test(tc, every_tool_schema_has_its_row);
	tcase_add_test(tc, error_json_is_the_cli_object_and_escapes_bytes);
	tcase_add_test(tc, error_json_that_cannot_be_read_is_internal);
	suite_add_tcase(s, tc);
	return s;
}
