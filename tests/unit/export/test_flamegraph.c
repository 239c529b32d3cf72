/* test_flamegraph.c - unit tests for the SVG flame graph writer.
 *
 * Each test renders into memory with open_memstream and reads facts back
 * from the text: a frame is found by its <title> and its geometry by the
 * attributes of the <rect> that follows it.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "export/flamegraph.h"

/* Render `n` stacks; returns the SVG (caller frees) or NULL on error. */
static char *render(const struct pl_flame_stack *stacks, size_t n,
		    const char *const *names, size_t nnames,
		    const struct pl_flame_opts *opts, enum pl_err *rc,
		    struct pl_error *err)
{
	char *svg = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&svg, &len);

	ck_assert_ptr_nonnull(f);
	*rc = pl_flamegraph_write(f, stacks, n, names, nnames, opts, err);
	fclose(f);
	if (*rc != PL_OK) {
		free(svg);
		return NULL;
	}
	return svg;
}

/* Value of attribute `attr` (e.g. "width=\"") of the first <rect> after the
 * frame whose title starts with `title_prefix`; -1 when absent. */
static double frame_attr(const char *svg, const char *title_prefix,
			 const char *attr)
{
	char key[256];
	const char *p, *r;

	snprintf(key, sizeof(key), "<title>%s", title_prefix);
	p = strstr(svg, key);
	if (!p || !(r = strstr(p, "<rect ")) || !(r = strstr(r, attr)))
		return -1;
	return strtod(r + strlen(attr), NULL);
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;

	for (s = strstr(s, needle); s; s = strstr(s + 1, needle))
		n++;
	return n;
}

static const char *const abc[] = {"a", "b", "c", "d"};
static const uint32_t path_ab[] = {0, 1}, path_ac[] = {0, 2}, path_ad[] = {0, 3};

START_TEST(flamegraph_escapes_xml_in_names_and_titles)
{
	static const char *const names[] = {"a<b>&\"c\""};
	static const uint32_t path[] = {0};
	struct pl_flame_stack s = {path, 1, 5};
	struct pl_flame_opts o = {.title = "T&<x>", .subtitle = "s\"q\"", .unit = "n<s>"};
	struct pl_error e;
	enum pl_err rc;
	char *svg = render(&s, 1, names, 1, &o, &rc, &e);

	ck_assert_int_eq(rc, PL_OK);
	ck_assert_ptr_nonnull(strstr(svg, "<title>a&lt;b&gt;&amp;&quot;c&quot; (5 n&lt;s&gt;, 100.00%)</title>"));
	ck_assert_ptr_nonnull(strstr(svg, ">T&amp;&lt;x&gt;</text>"));
	ck_assert_ptr_nonnull(strstr(svg, ">s&quot;q&quot;</text>"));
	ck_assert_ptr_null(strstr(svg, "a<b"));
	ck_assert_ptr_nonnull(strstr(svg, "<script type=\"text/ecmascript\"><![CDATA["));
	free(svg);
}
END_TEST

START_TEST(flamegraph_escapes_invalid_utf8_and_replaces_control_bytes)
{
	/* Bytes that are not UTF-8 read \xHH (docs/paths.md); a backslash stays. */
	static const char *const names[] = {"x\x01y\xff\xc3\xa9\\"};
	static const uint32_t path[] = {0};
	struct pl_flame_stack s = {path, 1, 1};
	struct pl_error e;
	enum pl_err rc;
	char *svg = render(&s, 1, names, 1, NULL, &rc, &e);

	ck_assert_int_eq(rc, PL_OK);
	ck_assert_ptr_nonnull(strstr(svg, "<title>x?y\\xff\xc3\xa9\\ (1 samples"));
	free(svg);
}
END_TEST

START_TEST(flamegraph_is_identical_for_shuffled_stacks)
{
	enum { N = 200 };
	static const char *const names[] = {"main", "run", "parse", "lex", "emit", "zz", "alloc"};
	uint32_t paths[N][6];
	struct pl_flame_stack fwd[N], rev[N];
	struct pl_error e;
	enum pl_err rc;
	char *a, *b;
	unsigned seed = 7;

	for (int i = 0; i < N; i++) {
		uint32_t depth = 1 + (uint32_t)(i % 6);

		for (uint32_t d = 0; d < depth; d++) {
			seed = seed * 1103515245u + 12345u;
			paths[i][d] = (seed >> 16) % 7;
		}
		fwd[i] = (struct pl_flame_stack){paths[i], depth, 1 + (uint64_t)(i % 13)};
	}
	/* the same stacks, reversed and then rotated */
	for (int i = 0; i < N; i++)
		rev[i] = fwd[(N - 1 - i + 37) % N];
	a = render(fwd, N, names, 7, NULL, &rc, &e);
	ck_assert_int_eq(rc, PL_OK);
	b = render(rev, N, names, 7, NULL, &rc, &e);
	ck_assert_int_eq(rc, PL_OK);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
}
END_TEST

START_TEST(flamegraph_merges_prefixes_and_sizes_by_weight)
{
	struct pl_flame_stack s[] = {{path_ac, 2, 1}, {path_ab, 2, 2}, {path_ab, 2, 1}};
	struct pl_error e;
	enum pl_err rc;
	char *svg = render(s, 3, abc, 4, NULL, &rc, &e);
	double wa, wb, wc;

	ck_assert_int_eq(rc, PL_OK);
	ck_assert_uint_eq(count(svg, "<title>a ("), 1);
	ck_assert_uint_eq(count(svg, "<title>b ("), 1);
	ck_assert_ptr_nonnull(strstr(svg, "<title>all (4 samples, 100.00%)</title>"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>b (3 samples, 75.00%)</title>"));
	wa = frame_attr(svg, "a (", "width=\"");
	wb = frame_attr(svg, "b (", "width=\"");
	wc = frame_attr(svg, "c (", "width=\"");
	ck_assert_double_eq_tol(wa, 1180.0, 0.001);
	ck_assert_double_eq_tol(wb, wa * 3 / 4, 0.01);
	ck_assert_double_eq_tol(wb + wc, wa, 0.001);
	/* siblings by name: b left of c, both on the level above a */
	ck_assert_double_lt(frame_attr(svg, "b (", "x=\""), frame_attr(svg, "c (", "x=\""));
	ck_assert_double_eq(frame_attr(svg, "b (", "y=\""), frame_attr(svg, "c (", "y=\""));
	ck_assert_double_eq_tol(frame_attr(svg, "a (", "y=\"") - frame_attr(svg, "b (", "y=\""), 16, 0.001);
	free(svg);
}
END_TEST

START_TEST(flamegraph_merges_ids_with_equal_names)
{
	static const char *const names[] = {"f", "g", "f"};
	static const uint32_t p1[] = {0, 1}, p2[] = {2, 1};
	struct pl_flame_stack s[] = {{p1, 2, 1}, {p2, 2, 1}};
	struct pl_error e;
	enum pl_err rc;
	char *svg = render(s, 2, names, 3, NULL, &rc, &e);

	ck_assert_int_eq(rc, PL_OK);
	ck_assert_ptr_nonnull(strstr(svg, "<title>f (2 samples, 100.00%)</title>"));
	ck_assert_uint_eq(count(svg, "<title>g ("), 1);
	free(svg);
}
END_TEST

START_TEST(flamegraph_omits_narrow_frames_but_keeps_their_weight)
{
	struct pl_flame_stack s[] = {{path_ab, 2, 1000}, {path_ac, 2, 1}};
	struct pl_flame_opts o = {.min_width_px = 5};
	struct pl_error e;
	enum pl_err rc;
	char *svg = render(s, 2, abc, 4, &o, &rc, &e);

	ck_assert_int_eq(rc, PL_OK);
	ck_assert_ptr_null(strstr(svg, "<title>c ("));
	ck_assert_ptr_nonnull(strstr(svg, "<title>a (1,001 samples"));
	ck_assert_double_eq_tol(frame_attr(svg, "a (", "width=\""), 1180.0, 0.001);
	ck_assert_double_lt(frame_attr(svg, "b (", "width=\""), 1180.0 - 1.0);
	free(svg);
}
END_TEST

START_TEST(flamegraph_sizes_image_to_the_deepest_drawn_level)
{
	static const uint32_t deep[] = {0, 1, 2, 3, 0, 1, 2, 3};
	struct pl_flame_stack s[] = {{path_ab, 2, 100000}, {deep, 8, 1}};
	struct pl_flame_opts o = {.min_width_px = 1};
	struct pl_error e;
	enum pl_err rc;
	char *shallow = render(s, 2, abc, 4, &o, &rc, &e), *all;

	ck_assert_int_eq(rc, PL_OK);
	o.min_width_px = 1e-9;
	all = render(s, 2, abc, 4, &o, &rc, &e);
	ck_assert_int_eq(rc, PL_OK);
	/* 3 levels (all, a, b) vs 9 levels of 16 px */
	ck_assert_double_eq_tol(strtod(strstr(all, "height=\"") + 8, NULL) -
				strtod(strstr(shallow, "height=\"") + 8, NULL), 6 * 16, 0.001);
	free(shallow);
	free(all);
}
END_TEST

START_TEST(flamegraph_adds_huge_weights_without_overflow)
{
	struct pl_flame_stack s[] = {{path_ab, 2, 1ULL << 63}, {path_ac, 2, 1ULL << 63},
				     {path_ad, 2, UINT64_MAX}};
	struct pl_error e;
	enum pl_err rc;
	char *svg = render(s, 3, abc, 4, NULL, &rc, &e);

	ck_assert_int_eq(rc, PL_OK);
	/* 2^64 + 2^64 - 1 */
	ck_assert_ptr_nonnull(strstr(svg, "<title>all (36,893,488,147,419,103,231 samples, 100.00%)"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>b (9,223,372,036,854,775,808 samples, 25.00%)"));
	free(svg);
}
END_TEST

START_TEST(flamegraph_truncates_labels_to_fit)
{
	static const char *const names[] = {"short", "a_rather_long_function_name_that_cannot_fit"};
	static const uint32_t p1[] = {0}, p2[] = {1};
	struct pl_flame_stack s[] = {{p1, 1, 10}, {p2, 1, 1}};
	struct pl_error e;
	enum pl_err rc;
	char *svg = render(s, 2, names, 2, NULL, &rc, &e);

	ck_assert_int_eq(rc, PL_OK);
	ck_assert_ptr_nonnull(strstr(svg, ">short</text>"));
	ck_assert_ptr_nonnull(strstr(svg, ">a_rather_lon..</text>"));
	free(svg);
}
END_TEST

START_TEST(flamegraph_says_no_samples_for_empty_input)
{
	struct pl_error e;
	enum pl_err rc;
	char *svg = render(NULL, 0, NULL, 0, NULL, &rc, &e);

	ck_assert_int_eq(rc, PL_OK);
	ck_assert_ptr_nonnull(strstr(svg, ">no samples</text>"));
	ck_assert_ptr_null(strstr(svg, "class=\"frame\""));
	ck_assert_ptr_nonnull(strstr(svg, "</svg>\n"));
	free(svg);
}
END_TEST

START_TEST(flamegraph_rejects_unknown_name_id)
{
	static const uint32_t bad[] = {0, 4};
	struct pl_flame_stack s[] = {{path_ab, 2, 1}, {bad, 2, 1}};
	struct pl_error e;
	enum pl_err rc;
	char *svg = render(s, 2, abc, 4, NULL, &rc, &e);

	ck_assert_ptr_null(svg);
	ck_assert_int_eq(rc, PL_ERR_INPUT);
	ck_assert_str_eq(e.text, "flame graph stack 1 uses name id 4, but only 4 names exist");
}
END_TEST

START_TEST(flamegraph_rejects_bad_arguments)
{
	struct pl_flame_stack zero = {path_ab, 2, 0}, ok = {path_ab, 2, 1};
	struct pl_flame_opts narrow = {.width = 10};
	struct pl_error e;
	enum pl_err rc;
	FILE *sink;

	ck_assert_int_eq(pl_flamegraph_write(NULL, &ok, 1, abc, 4, NULL, &e), PL_ERR_INTERNAL);
	ck_assert_str_eq(e.text, "flame graph output stream is NULL");
	ck_assert_ptr_null(render(NULL, 3, abc, 4, NULL, &rc, &e));
	ck_assert_int_eq(rc, PL_ERR_INTERNAL);
	ck_assert_ptr_null(render(&ok, 1, NULL, 0, NULL, &rc, &e));
	ck_assert_int_eq(rc, PL_ERR_INTERNAL);
	ck_assert_ptr_null(render(&zero, 1, abc, 4, NULL, &rc, &e));
	ck_assert_int_eq(rc, PL_ERR_INPUT);
	ck_assert_str_eq(e.text, "flame graph stack 0 has weight 0");
	ck_assert_ptr_null(render(&ok, 1, abc, 4, &narrow, &rc, &e));
	ck_assert_int_eq(rc, PL_ERR_USAGE);
	ck_assert_ptr_nonnull(sink = fopen("/dev/null", "w"));
	ck_assert_int_eq(pl_flamegraph_write(sink, &ok, 1, abc, 4, NULL, NULL), PL_OK);
	fclose(sink);
}
END_TEST

Suite *suite_flamegraph(void)
{
	Suite *s = suite_create("flamegraph");
	TCase *tc = tcase_create("svg");

	tcase_add_test(tc, flamegraph_escapes_xml_in_names_and_titles);
	tcase_add_test(tc, flamegraph_escapes_invalid_utf8_and_replaces_control_bytes);
	tcase_add_test(tc, flamegraph_is_identical_for_shuffled_stacks);
	tcase_add_test(tc, flamegraph_merges_prefixes_and_sizes_by_weight);
	tcase_add_test(tc, flamegraph_merges_ids_with_equal_names);
	tcase_add_test(tc, flamegraph_omits_narrow_frames_but_keeps_their_weight);
	tcase_add_test(tc, flamegraph_sizes_image_to_the_deepest_drawn_level);
	tcase_add_test(tc, flamegraph_adds_huge_weights_without_overflow);
	tcase_add_test(tc, flamegraph_truncates_labels_to_fit);
	tcase_add_test(tc, flamegraph_says_no_samples_for_empty_input);
	tcase_add_test(tc, flamegraph_rejects_unknown_name_id);
	tcase_add_test(tc, flamegraph_rejects_bad_arguments);
	suite_add_tcase(s, tc);
	return s;
}
