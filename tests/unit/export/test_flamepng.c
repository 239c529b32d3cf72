/* test_flamepng.c - unit tests for the PNG pictures (export/flamepng.c):
 * a PNG signature and the IHDR size the stats give, the same bytes for
 * the same stacks in another order, levels past max_height cut and
 * counted, and the sandwich picture (callers above, callees below; not
 * yet reachable through get_hotspot's schema, so tested here).  The MCP
 * path and a full PNG decode are tests/integration/test_pictures.sh.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "export/flamepng.h"

static const char *const names[] = {"main", "parse", "lex", "render", "deep"};

static uint32_t be32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;
	return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

static void check_png(const struct pl_buf *b, const struct pl_png_stats *st)
{
	ck_assert_uint_gt(b->len, 33);
	ck_assert(memcmp(b->data, "\x89PNG\r\n\x1a\n", 8) == 0);
	ck_assert(memcmp(b->data + 12, "IHDR", 4) == 0);
	ck_assert_uint_eq(be32(b->data + 16), st->width);
	ck_assert_uint_eq(be32(b->data + 20), st->height);
}

START_TEST(flame_png_is_deterministic_and_sized)
{
	uint32_t a[] = {0, 1, 2}, c[] = {0, 3};
	struct pl_flame_stack s1[] = {{a, 3, 5, 0}, {c, 2, 3, 0}}, s2[] = {{c, 2, 3, 0}, {a, 3, 5, 0}};
	struct pl_png_opts o = {.title = "cpu in ns", .unit = "ns"};
	struct pl_png_stats st1, st2;
	struct pl_buf b1 = {0}, b2 = {0};
	struct pl_error err;

	ck_assert_int_eq(pl_flamegraph_png(&b1, s1, 2, names, 5, &o, &st1, &err), PL_OK);
	ck_assert_int_eq(pl_flamegraph_png(&b2, s2, 2, names, 5, &o, &st2, &err), PL_OK);
	check_png(&b1, &st1);
	ck_assert_uint_eq(st1.width, 1200);
	ck_assert_uint_eq(st1.levels, 4);          /* all, main, parse|render, lex */
	ck_assert_uint_eq(st1.height, 36 + 10 + 4 * 16);
	ck_assert_uint_eq(b1.len, b2.len);
	ck_assert(memcmp(b1.data, b2.data, b1.len) == 0);
	pl_buf_release(&b1);
	pl_buf_release(&b2);
}
END_TEST

START_TEST(deep_levels_are_cut_and_counted)
{
	uint32_t deep[200];
	struct pl_flame_stack s = {deep, 200, 7, 0};
	struct pl_png_opts o = {.max_height = 400};
	struct pl_png_stats st;
	struct pl_buf b = {0};
	struct pl_error err;

	for (int i = 0; i < 200; i++)
		deep[i] = 4;
	ck_assert_int_eq(pl_flamegraph_png(&b, &s, 1, names, 5, &o, &st, &err), PL_OK);
	check_png(&b, &st);
	ck_assert_uint_le(st.height, 400);
	ck_assert_uint_eq(st.levels + st.levels_cut, 201);
	pl_buf_release(&b);
}
END_TEST

START_TEST(sandwich_has_callers_and_callees)
{
	/* parse, called from main, calls lex (5) and itself ends (3). */
	uint32_t up1[] = {1, 0}, dn1[] = {1, 2}, up2[] = {1, 0}, dn2[] = {1};
	struct pl_flame_stack up[] = {{up1, 2, 5, 0}, {up2, 2, 3, 0}};
	struct pl_flame_stack down[] = {{dn1, 2, 5, 0}, {dn2, 1, 3, 0}};
	struct pl_png_opts o = {.title = "parse: callers and callees"};
	struct pl_png_stats st;
	struct pl_buf b = {0};
	struct pl_error err;

	ck_assert_int_eq(pl_sandwich_png(&b, up, 2, down, 2, names, 5, &o, &st, &err), PL_OK);
	check_png(&b, &st);
	ck_assert_uint_eq(st.levels, 3);           /* main above, parse, lex below */
	ck_assert_uint_eq(st.levels_cut, 0);
	pl_buf_release(&b);
}
END_TEST

START_TEST(bad_width_is_a_usage_error)
{
	struct pl_png_opts o = {.width = 50};
	struct pl_png_stats st;
	struct pl_buf b = {0};
	struct pl_error err;

	ck_assert_int_eq(pl_flamegraph_png(&b, NULL, 0, names, 5, &o, &st, &err), PL_ERR_USAGE);
	pl_buf_release(&b);
}
END_TEST

Suite *suite_flamepng(void)
{
	Suite *s = suite_create("flamepng");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, flame_png_is_deterministic_and_sized);
	tcase_add_test(tc, deep_levels_are_cut_and_counted);
	tcase_add_test(tc, sandwich_has_callers_and_callees);
	tcase_add_test(tc, bad_width_is_a_usage_error);
	suite_add_tcase(s, tc);
	return s;
}
