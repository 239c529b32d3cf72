/* test_pdlbr.c - LBR call stacks walked as perf 6.1 walks them.
 *
 * Samples are built here as pd_parse_sample leaves them (a callchain of
 * u64s, a branch stack of {from, to, flags}) inside one buffer that
 * stands for the file image, and the frames pd_lbr_next gives are
 * checked against what perf's resolve_lbr_callchain_sample adds, counted
 * by hand: the kernel part up to PERF_CONTEXT_USER, entries[0].to, each
 * entries[k].from, all user mode; no PERF_CONTEXT_USER in reach and an
 * unknown marker anywhere perf looks send the sample to the -g walk; an
 * empty branch stack has its leaf read past it, in the record or the
 * image, and is unreadable outside the image.
 */
#include <check.h>
#include <string.h>

#include "perfdata/pdlbr.h"

#define KERNEL ((uint64_t)-128)
#define USER ((uint64_t)-512)
#define BAD ((uint64_t)-1000)

struct lbr_case {
	uint64_t words[64];     /* the "image": chain, then branch entries, then what follows */
	struct pd_file f;
	struct pd_sample s;
	struct pd_attr a;
};

/* chain[n], then nbr entries {from, to, 0}; `after` words follow. */
static void build(struct lbr_case *c, const uint64_t *chain, size_t n, const uint64_t (*br)[2], size_t nbr,
		  const uint64_t *after, size_t nafter)
{
	size_t w = 0;

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < n; i++)
		c->words[w++] = chain[i];
	size_t b = w;
	for (size_t k = 0; k < nbr; k++) {
		c->words[w++] = br[k][0];
		c->words[w++] = br[k][1];
		c->words[w++] = 0;
	}
	for (size_t i = 0; i < nafter; i++)
		c->words[w++] = after[i];
	c->f.base = (const uint8_t *)c->words;
	c->f.size = w * 8;
	c->a.sample_type = PD_S_CALLCHAIN | PD_S_BRANCH_STACK;
	c->a.branch_sample_type = PD_BR_CALL_STACK | PD_BR_HW_INDEX;
	c->s.attr = &c->a;
	c->s.nchain = n;
	c->s.chain = (const uint8_t *)c->words;
	c->s.nbranch = nbr;
	c->s.branch = (const uint8_t *)(c->words + b);
}

/* The frames as "mode:ip" words, for one comparison. */
static size_t frames(struct pd_lbr_iter *it, uint64_t *out, uint8_t *modes)
{
	size_t n = 0;
	uint8_t mode;
	uint64_t ip;

	while (n < 32 && pd_lbr_next(it, &mode, &ip)) {
		modes[n] = mode;
		out[n++] = ip;
	}
	return n;
}

START_TEST(kernel_part_then_leaf_then_each_from)
{
	static const uint64_t chain[] = {KERNEL, 0xffffffff81000001, 0xffffffff81000002, USER, 0x4000};
	static const uint64_t br[][2] = {{0x3005, 0x3800}, {0x2005, 0x3000}};
	struct lbr_case c;
	struct pd_lbr_iter it;
	uint64_t ips[32];
	uint8_t modes[32];

	build(&c, chain, 5, br, 2, NULL, 0);
	ck_assert(pd_lbr_applies(&c.a));
	ck_assert_int_eq(pd_lbr_begin(&it, &c.f, &c.s, c.f.base, c.f.size, 127), PD_LBR_FRAMES);
	size_t n = frames(&it, ips, modes);
	ck_assert_uint_eq(n, 5);
	const uint64_t want[] = {0xffffffff81000001, 0xffffffff81000002, 0x3800, 0x3005, 0x2005};
	const uint8_t want_mode[] = {1, 1, 2, 2, 2};
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(ips[i], want[i]);
		ck_assert_uint_eq(modes[i], want_mode[i]);
	}
}
END_TEST

START_TEST(no_user_context_or_a_bad_marker_walks_the_callchain)
{
	static const uint64_t kernel_only[] = {KERNEL, 0xffffffff81000001};
	static const uint64_t bad_kernel[] = {KERNEL, BAD, USER, 0x4000};
	static const uint64_t chain[] = {USER, 0x4000};
	static const uint64_t bad_from[][2] = {{BAD, 0x3800}};
	static const uint64_t far_user[] = {KERNEL, 1, 2, USER, 0x4000};
	struct lbr_case c;
	struct pd_lbr_iter it;

	build(&c, kernel_only, 2, NULL, 0, NULL, 0);
	ck_assert_int_eq(pd_lbr_begin(&it, &c.f, &c.s, c.f.base, c.f.size, 127), PD_LBR_FP_CHAIN);
	build(&c, bad_kernel, 4, bad_from, 0, NULL, 0);
	ck_assert_int_eq(pd_lbr_begin(&it, &c.f, &c.s, c.f.base, c.f.size, 127), PD_LBR_FP_CHAIN);
	build(&c, chain, 2, bad_from, 1, NULL, 0);
	ck_assert_int_eq(pd_lbr_begin(&it, &c.f, &c.s, c.f.base, c.f.size, 127), PD_LBR_FP_CHAIN);
	/* PERF_CONTEXT_USER past max_stack entries (markers counted) */
	build(&c, far_user, 5, NULL, 0, NULL, 0);
	ck_assert_int_eq(pd_lbr_begin(&it, &c.f, &c.s, c.f.base, c.f.size, 3), PD_LBR_FP_CHAIN);
}
END_TEST

START_TEST(empty_branch_stack_reads_the_leaf_past_it)
{
	static const uint64_t chain[] = {USER, 0x4000};
	static const uint64_t next[] = {0x0030000000000009ull, 0x5555, 0x6666};
	struct lbr_case c;
	struct pd_lbr_iter it;
	uint64_t ips[32];
	uint8_t modes[32];

	/* the record ends at the branch stack; the image goes on */
	build(&c, chain, 2, NULL, 0, next, 3);
	ck_assert_int_eq(pd_lbr_begin(&it, &c.f, &c.s, c.f.base, 16, 127), PD_LBR_FRAMES);
	ck_assert_uint_eq(frames(&it, ips, modes), 1);
	ck_assert_uint_eq(ips[0], 0x5555);
	/* the image ends too soon */
	build(&c, chain, 2, NULL, 0, next, 1);
	ck_assert_int_eq(pd_lbr_begin(&it, &c.f, &c.s, c.f.base, 16, 127), PD_LBR_UNREADABLE);
	/* a copy outside the image (a zstd record), and pipe mode */
	build(&c, chain, 2, NULL, 0, next, 3);
	c.f.size = 8;
	ck_assert_int_eq(pd_lbr_begin(&it, &c.f, &c.s, (const uint8_t *)(c.words + 1), 8, 127), PD_LBR_UNREADABLE);
	build(&c, chain, 2, NULL, 0, next, 3);
	c.f.pipe = true;
	ck_assert_int_eq(pd_lbr_begin(&it, &c.f, &c.s, c.f.base, 16, 127), PD_LBR_UNREADABLE);
	ck_assert_ptr_nonnull(strstr(it.why, "empty LBR call stack"));
	/* a field after the branch stack inside the record is read in any mode */
	ck_assert_int_eq(pd_lbr_begin(&it, &c.f, &c.s, c.f.base, 40, 127), PD_LBR_FRAMES);
	ck_assert_uint_eq(frames(&it, ips, modes), 1);
	ck_assert_uint_eq(ips[0], 0x5555);
}
END_TEST

START_TEST(markers_in_the_branch_stack_switch_the_mode)
{
	static const uint64_t chain[] = {USER, 0x4000};
	static const uint64_t br[][2] = {{KERNEL, 0x3800}, {0xffffffff81000005, 0x3000}};
	struct lbr_case c;
	struct pd_lbr_iter it;
	uint64_t ips[32];
	uint8_t modes[32];

	build(&c, chain, 2, br, 2, NULL, 0);
	ck_assert_int_eq(pd_lbr_begin(&it, &c.f, &c.s, c.f.base, c.f.size, 127), PD_LBR_FRAMES);
	ck_assert_uint_eq(frames(&it, ips, modes), 2);
	ck_assert_uint_eq(ips[0], 0x3800);
	ck_assert_uint_eq(modes[0], 2);
	ck_assert_uint_eq(ips[1], 0xffffffff81000005);
	ck_assert_uint_eq(modes[1], 1);
}
END_TEST

Suite *suite_pdlbr(void)
{
	Suite *s = suite_create("pdlbr");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, kernel_part_then_leaf_then_each_from);
	tcase_add_test(tc, no_user_context_or_a_bad_marker_walks_the_callchain);
	tcase_add_test(tc, empty_branch_stack_reads_the_leaf_past_it);
	tcase_add_test(tc, markers_in_the_branch_stack_switch_the_mode);
	suite_add_tcase(s, tc);
	return s;
}
