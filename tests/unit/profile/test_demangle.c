/* test_demangle.c - linker names made readable (profile/demangle.h) and
 * kept beside the demangled one in the profile (pl_intern_func).
 *
 * Expectations are what perf 6.1 prints for the same symbols: `perf
 * report -v` for the full form (c++filt's, without its DMGL_VERBOSE
 * expansions), `perf report` for the perf form.  Kernel names are never
 * demangled; names over PL_DEMANGLE_MAX and garbage stay as given.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "profile/demangle.h"
#include "profile/profile.h"

static void expect(const char *mangled, enum pl_demangle_form form, const char *want)
{
	char *d = pl_demangle(mangled, strlen(mangled), form);

	ck_assert_msg(d != NULL, "'%s' did not demangle", mangled);
	ck_assert_str_eq(d, want);
	free(d);
}

static void expect_short(const char *full, const char *want)
{
	char *s = pl_demangle_shorten(full, strlen(full));

	ck_assert_str_eq(s, want);
	free(s);
}

START_TEST(cxx_names_demangle_as_perf_prints_them)
{
	expect("_ZN2kv5Store3getERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE", PL_DM_FULL,
	       "kv::Store::get(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)");
	expect("_ZN2kv5Store3getERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE", PL_DM_PERF,
	       "kv::Store::get");
	expect("_ZN2kv3VecplERKS0_.isra.0", PL_DM_FULL, "kv::Vec::operator+(kv::Vec const&) [clone .isra.0]");
	expect("_Z1fSs", PL_DM_FULL, "f(std::string)");
	expect("_ZN12_GLOBAL__N_13fooEv", PL_DM_FULL, "(anonymous namespace)::foo()");
}
END_TEST

START_TEST(plt_entries_demangle_before_their_suffix)
{
	expect("_Znwm@plt", PL_DM_FULL, "operator new(unsigned long)@plt");
	expect("_Znwm@plt", PL_DM_PERF, "operator new@plt");
}
END_TEST

START_TEST(rust_legacy_and_v0_names_demangle)
{
	expect("_ZN4core3fmt5write17h0123456789abcdefE", PL_DM_FULL, "core::fmt::write");
	expect("_RNvCs1234_7mycrate3foo", PL_DM_FULL, "mycrate::foo");
}
END_TEST

START_TEST(plain_garbage_and_huge_names_stay_as_given)
{
	size_t n = 65536;
	char *big = malloc(n + 1);

	ck_assert_ptr_null(pl_demangle("main", 4, PL_DM_FULL));
	ck_assert_ptr_null(pl_demangle("_Zx", 3, PL_DM_FULL));
	ck_assert_ptr_null(pl_demangle("_ZN", 3, PL_DM_FULL));
	memset(big, 'A', n);
	memcpy(big, "_ZN", 3);
	big[n] = '\0';
	ck_assert_ptr_null(pl_demangle(big, n, PL_DM_FULL));
	free(big);
}
END_TEST

START_TEST(short_names_elide_templates_and_parameters)
{
	expect_short("kv::Store::get(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)",
		     "kv::Store::get");
	expect_short("void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>("
		     "__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, int const&)",
		     "std::vector::_M_realloc_insert");
	expect_short("main::{lambda(long)#1}::operator()(long) const [clone .constprop.0]",
		     "main::{lambda(long)#1}::operator()");
	expect_short("kv::Vec::operator<<(kv::Vec const&)", "kv::Vec::operator<<");
	expect_short("kv::Vec::operator<(kv::Vec const&)", "kv::Vec::operator<");
	expect_short("kv::S::operator new(unsigned long)", "kv::S::operator new");
	expect_short("(anonymous namespace)::foo()", "(anonymous namespace)::foo");
	expect_short("f(int)::local::g()", "f::local::g");
	expect_short("<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop",
		     "<alloc::vec::Vec as core::ops::drop::Drop>::drop");
	expect_short("operator new(unsigned long)@plt", "operator new@plt");
	expect_short("memcpy", "memcpy");
}
END_TEST

START_TEST(profile_keeps_the_linkage_name_beside_the_demangled_one)
{
	struct pl_profile p;
	const char *m = "_ZN2kv5Store3getEl";
	uint32_t dso, kdso, f, g, k;

	pl_profile_init(&p, NULL);
	dso = pl_intern_str(&p, "/bin/kv", 7);
	kdso = pl_intern_str(&p, "[kernel.kallsyms]", 17);
	f = pl_intern_func(&p, pl_intern_str(&p, m, strlen(m)), dso);
	g = pl_intern_func(&p, pl_intern_str(&p, "main", 4), dso);
	k = pl_intern_func(&p, pl_intern_str(&p, m, strlen(m)), kdso);
	ck_assert_str_eq(pl_str(&p, p.funcs[f].symbol), "kv::Store::get(long)");
	ck_assert_str_eq(pl_str(&p, p.funcs[f].linkage), m);
	ck_assert_uint_eq(p.funcs[g].linkage, PL_NOID);
	ck_assert_str_eq(pl_str(&p, p.funcs[k].symbol), m);   /* the kernel's: as given */
	ck_assert_uint_eq(p.funcs[k].linkage, PL_NOID);
	/* interned again by its linker name: the same function */
	ck_assert_uint_eq(pl_intern_func(&p, pl_intern_str(&p, m, strlen(m)), dso), f);
	pl_profile_release(&p);
}
END_TEST

START_TEST(short_names_never_merge_two_functions)
{
	struct pl_profile p;
	static const char *const syms[] = {
		"_ZN2kv5Store3getEl",                 /* kv::Store::get(long) */
		"_ZN2kv5Store3getEPKc",               /* kv::Store::get(char const*) */
		"_ZNK2kv3BoxIiE5twiceEv",             /* kv::Box<int>::twice() const */
		"_ZN2kv3putEv",                       /* kv::put() */
		"_Z4mainv",                           /* main(), beside C's main */
		"main",
		"_ZNK2kv3BoxIdE5twiceEv",             /* kv::Box<double>::twice() const */
		"_ZNK2kv4Box2IiE5twiceEv",            /* kv::Box2<int>::twice() const */
	};
	uint32_t dso, f[8];
	char **sn;

	pl_profile_init(&p, NULL);
	dso = pl_intern_str(&p, "/bin/kv", 7);
	for (size_t i = 0; i < 8; i++)
		f[i] = pl_intern_func(&p, pl_intern_str(&p, syms[i], strlen(syms[i])), dso);
	sn = pl_profile_short_names(&p);
	ck_assert_ptr_null(sn[f[0]]);   /* overloads keep their full names */
	ck_assert_ptr_null(sn[f[1]]);
	/* two instances of one template keep their arguments, a lone one not */
	ck_assert_str_eq(sn[f[2]], "kv::Box<int>::twice");
	ck_assert_str_eq(sn[f[6]], "kv::Box<double>::twice");
	ck_assert_str_eq(sn[f[7]], "kv::Box2::twice");
	ck_assert_str_eq(sn[f[3]], "kv::put");
	ck_assert_ptr_null(sn[f[4]]);   /* "main" is another function's */
	ck_assert_ptr_null(sn[f[5]]);   /* not demangled: no short form */
	pl_short_names_free(sn, pl_nfuncs(&p));
	pl_profile_release(&p);
}
END_TEST

Suite *suite_demangle(void)
{
	Suite *s = suite_create("demangle");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, cxx_names_demangle_as_perf_prints_them);
	tcase_add_test(tc, plt_entries_demangle_before_their_suffix);
	tcase_add_test(tc, rust_legacy_and_v0_names_demangle);
	tcase_add_test(tc, plain_garbage_and_huge_names_stay_as_given);
	tcase_add_test(tc, short_names_elide_templates_and_parameters);
	tcase_add_test(tc, profile_keeps_the_linkage_name_beside_the_demangled_one);
	tcase_add_test(tc, short_names_never_merge_two_functions);
	suite_add_tcase(s, tc);
	return s;
}
