/* test_srcline.c - the one srcline reader (profile/srcline.h) and the
 * restack that rebuilds a profile's stacks frame by frame (profile.h).
 *
 * The srcline cases are the forms perf prints (notes after the line, a
 * file name with " (...)" of its own, "??:0") and PerfLens's own full
 * paths.  The restack cases check by hand-counted expectations: stacks
 * that become equal merge with their weights summed, event totals stay,
 * inline expansions lengthen a stack, and the leaf index skips kernel
 * frames above the user-mode pc.  perf's "(inlined)" frames take the
 * module of the frame they were inlined into as their DSO.
 */
#include <check.h>
#include <string.h>

#include "profile/parse.h"
#include "profile/profile.h"
#include "profile/srcline.h"

START_TEST(srclines_split_into_file_and_line)
{
	size_t n;
	uint32_t line;

	ck_assert(pl_srcline_split("rtld.c:566", &n, &line));
	ck_assert_uint_eq(n, 6);
	ck_assert_uint_eq(line, 566);
	ck_assert(pl_srcline_split("get-dynamic-info.h:85 (inlined)", &n, &line));
	ck_assert_uint_eq(n, 18);
	ck_assert_uint_eq(line, 85);
	ck_assert(pl_srcline_split("/src/a (b).c:12 (discriminator 3)", &n, &line));
	ck_assert_uint_eq(n, 12);
	ck_assert_uint_eq(line, 12);
	ck_assert(pl_srcline_split("x.c:0", &n, &line));
	ck_assert_uint_eq(line, 0);
	ck_assert(!pl_srcline_split("??:0", &n, &line));
	ck_assert(!pl_srcline_split(":0", &n, &line));
	ck_assert(!pl_srcline_split("[kernel.kallsyms][ffffffff8225fd19]", &n, &line));
	ck_assert(!pl_srcline_split("", &n, &line));
}
END_TEST

START_TEST(srcline_with_discriminator_names_its_line)
{
	size_t n;
	uint32_t line;

	/* source_context read "12 (discriminator 2)" as no line before. */
	ck_assert(pl_srcline_split("/build/app.c:12 (discriminator 2)", &n, &line));
	ck_assert_uint_eq(n, 12);
	ck_assert_uint_eq(line, 12);
	ck_assert(pl_srcline_split("/their/build/app.c:27", &n, &line));
	ck_assert_uint_eq(n, 18);
	ck_assert_uint_eq(line, 27);
}
END_TEST

/* Two stacks a -> b@1 and a -> b@2 of thread 0; the map drops b's
 * address and, for the leaf, adds an inlined frame "c". */
struct fixture {
	struct pl_profile p;
	uint32_t a, b, k;
};

static void build(struct fixture *f)
{
	struct pl_error err;
	uint32_t th, ev, fa, fb1, fb2, fk, s1, s2, s3;

	pl_profile_init(&f->p, NULL);
	th = pl_intern_thread(&f->p, 10, 10, PL_NOID);
	ev = pl_intern_event(&f->p, "cycles", 6);
	f->a = pl_intern_func(&f->p, pl_intern_str(&f->p, "a", 1), pl_intern_str(&f->p, "/bin/x", 6));
	f->b = pl_intern_func(&f->p, pl_intern_str(&f->p, "b", 1), pl_intern_str(&f->p, "/bin/x", 6));
	f->k = pl_intern_func(&f->p, pl_intern_str(&f->p, "k", 1),
			      pl_intern_str(&f->p, "[kernel.kallsyms]", 17));
	fa = pl_intern_frame(&f->p, f->a, true, 0x10, PL_NOID, &err);
	fb1 = pl_intern_frame(&f->p, f->b, true, 0x21, PL_NOID, &err);
	fb2 = pl_intern_frame(&f->p, f->b, true, 0x22, PL_NOID, &err);
	fk = pl_intern_frame(&f->p, f->k, false, 0, PL_NOID, &err);
	s1 = pl_intern_stack(&f->p, th, (uint32_t[]){fa, fb1}, 2, &err);
	s2 = pl_intern_stack(&f->p, th, (uint32_t[]){fa, fb2}, 2, &err);
	s3 = pl_intern_stack(&f->p, th, (uint32_t[]){fa, fb1, fk}, 3, &err);
	pl_add_weight(&f->p, s1, ev, 3, 300, true);
	pl_add_weight(&f->p, s2, ev, 2, 200, true);
	pl_add_weight(&f->p, s3, ev, 1, 100, true);
}

static enum pl_err map(void *arg, struct pl_profile *p, const struct pl_frame *old, bool leaf,
		       int64_t pid, uint32_t *out, size_t cap, size_t *n, struct pl_error *err)
{
	struct fixture *f = arg;

	ck_assert_int_eq(pid, 10);
	ck_assert_uint_ge(cap, 2);
	*n = 0;
	out[(*n)++] = pl_intern_frame(p, old->func, false, 0, PL_NOID, err);
	if (leaf && old->func == f->b) {
		uint32_t c = pl_intern_func_inlined(p, pl_intern_str(p, "c", 1), p->funcs[f->b].dso);
		out[(*n)++] = pl_intern_frame(p, c, false, 0, PL_NOID, err);
	}
	return PL_OK;
}

START_TEST(restack_merges_equal_stacks_and_keeps_totals)
{
	struct fixture f;
	struct pl_error err;

	build(&f);
	ck_assert_uint_eq(pl_stack_leaf_index(&f.p, &f.p.stacks[2]), 1);
	ck_assert_int_eq(pl_profile_restack(&f.p, map, &f, &err), PL_OK);
	/* a -> b -> c (3 + 2 samples) and a -> b -> c -> k: b@0x21 under the
	 * kernel frame is the user-mode pc, a leaf too. */
	ck_assert_uint_eq(pl_nstacks(&f.p), 2);
	ck_assert_uint_eq(f.p.stacks[0].depth, 3);
	ck_assert_uint_eq(f.p.stacks[1].depth, 4);
	ck_assert_uint_eq(pl_stack_weight(&f.p, 0, 0)->samples, 5);
	ck_assert_uint_eq(pl_stack_weight(&f.p, 0, 0)->period, 500);
	ck_assert_uint_eq(pl_stack_weight(&f.p, 1, 0)->samples, 1);
	ck_assert_uint_eq(f.p.events[0].samples, 6);
	ck_assert_uint_eq(f.p.events[0].period, 600);
	/* The inlined c keeps the module as its DSO, apart from any out-of-line c. */
	const struct pl_func *c = &f.p.funcs[f.p.frames[f.p.stacks[0].frames[2]].func];
	ck_assert(c->inlined);
	ck_assert_str_eq(pl_str(&f.p, c->dso), "/bin/x");
	ck_assert_uint_ne(f.p.frames[f.p.stacks[0].frames[2]].func,
			  pl_intern_func(&f.p, pl_intern_str(&f.p, "c", 1), c->dso));
	pl_profile_release(&f.p);
}
END_TEST

/* perf 6.1 with DWARF call graphs: inlined calls first, "(inlined)" where
 * the DSO goes, then the frame they were inlined into. */
static const char inlined_record[] =
	"app 10/10 1.000000: 1 cycles:\n"
	"\t    1139 helper (inlined)\n"
	"\t    1139 work+0x9 (/bin/app)\n"
	"\t    1160 main+0x10 (/bin/app)\n"
	"\n";

START_TEST(perf_inlined_frames_keep_their_module)
{
	struct pl_profile p;
	struct pl_ps_parser *ps;
	struct pl_error err;
	const char *t = inlined_record;
	uint64_t no = 0;

	pl_profile_init(&p, NULL);
	ps = pl_ps_new(&p, "test");
	while (*t) {
		const char *nl = strchr(t, '\n');
		ck_assert_int_eq(pl_ps_line(ps, t, (size_t)(nl - t), ++no, &err), PL_OK);
		t = nl + 1;
	}
	ck_assert_int_eq(pl_ps_finish(ps, &err), PL_OK);
	ck_assert_uint_eq(pl_nstacks(&p), 1);
	ck_assert_uint_eq(p.stacks[0].depth, 3);
	const struct pl_func *h = &p.funcs[p.frames[p.stacks[0].frames[2]].func];
	ck_assert_str_eq(pl_str(&p, h->symbol), "helper");
	ck_assert(h->inlined);
	ck_assert_str_eq(pl_str(&p, h->dso), "/bin/app");
	ck_assert_int_eq(h->kind, PL_KIND_USER);
	pl_profile_release(&p);
}
END_TEST

Suite *suite_srcline(void)
{
	Suite *s = suite_create("srcline");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, srclines_split_into_file_and_line);
	tcase_add_test(tc, srcline_with_discriminator_names_its_line);
	tcase_add_test(tc, restack_merges_equal_stacks_and_keeps_totals);
	tcase_add_test(tc, perf_inlined_frames_keep_their_module);
	suite_add_tcase(s, tc);
	return s;
}
