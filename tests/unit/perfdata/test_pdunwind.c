/* test_pdunwind.c - the DWARF unwinder of the perf.data reader on a known
 * aarch64 chain (fixtures/dwarf-aarch64/chain: _start > chain_main >
 * chain_mid > chain_leaf, each frame a 16-byte stp x29, x30 pair under
 * CFI), read on whatever host runs the tests.
 *
 * The sample stands at chain_leaf+8 with the stack words an aarch64 CPU
 * would hold there; the chain must be the pcs perf hands to its symbol
 * lookup (the sampled pc, then each return address minus one), each
 * stop counted with its reason: the outermost frame, a stack copy too
 * short (read only within its size, minus perf's last word: the copy is
 * a heap buffer of exactly that size, for ASan), a return address in no
 * module, missing registers, the frame cap.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdata/pdunwind.h"

#define CHAIN "fixtures/dwarf-aarch64/chain"
#define LEAF 0x4000d4ull
#define MID 0x4000e8ull
#define MAIN 0x4000fcull
#define START 0x400110ull
#define SP 0x7ffffff000ull

struct a64 {
	struct pd_unwind_space *s;
	uint64_t regs[64];
	uint64_t words[8];
	uint8_t *stack;
	struct pd_unwind_sample smp;
};

/* The space with the fixture mapped at 0x400000, the sample's registers
 * and its first `nwords` stack words in a buffer of exactly that size. */
static void setup(struct a64 *c, size_t nwords, uint64_t saved_lr)
{
	const uint64_t words[] = {SP + 16, saved_lr, SP + 32, MAIN + 12, 0, START + 8, 0};
	struct pd_unwind_module m = {CHAIN, "", 0x400000, 0x410000, 0};

	memset(c, 0, sizeof(*c));
	/* Without the file the chain would be libdw's frame-pointer guess. */
	ck_assert_msg(access(CHAIN, R_OK) == 0, "'%s' not found: run from the repository root", CHAIN);
	c->s = pd_unwind_space_new(PD_UW_ARCH_AARCH64);
	ck_assert_ptr_nonnull(c->s);
	pd_unwind_space_set_modules(c->s, &m, 1, 1);
	for (int i = 0; i < 29; i++)
		c->regs[i] = 0x1000 + (uint64_t)i;
	c->regs[29] = SP;
	c->regs[30] = MID + 12;
	c->regs[31] = SP;
	c->regs[32] = LEAF + 8;
	c->stack = malloc(nwords ? nwords * 8 : 1);
	memcpy(c->stack, words, nwords * 8);
	c->smp = (struct pd_unwind_sample){100, 100, c->regs, (1ull << 33) - 1, c->stack, nwords * 8, false};
}

static void teardown(struct a64 *c)
{
	pd_unwind_space_free(c->s);
	free(c->stack);
}

START_TEST(known_aarch64_chain_unwinds_to_start)
{
	struct a64 c;
	uint64_t pcs[127];
	enum pd_unwind_stop stop;

	setup(&c, 7, MID + 12);
	size_t n = pd_unwind_sample(c.s, &c.smp, pcs, 127, &stop);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(pcs[0], LEAF + 8);
	ck_assert_uint_eq(pcs[1], MID + 11);
	ck_assert_uint_eq(pcs[2], MAIN + 11);
	ck_assert_uint_eq(pcs[3], START + 7);
	ck_assert_int_eq(stop, PD_UW_END);
	/* The same space again: the Dwfl is reused, the answer the same. */
	n = pd_unwind_sample(c.s, &c.smp, pcs, 127, &stop);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(stop, PD_UW_END);
	teardown(&c);
}
END_TEST

START_TEST(short_stack_copy_ends_the_chain_counted)
{
	struct a64 c;
	uint64_t pcs[127];
	enum pd_unwind_stop stop;

	/* The leaf's pair and one word: the word at SP+16 is the copy's
	 * last, which perf reads from the files, not the copy. */
	setup(&c, 3, MID + 12);
	size_t n = pd_unwind_sample(c.s, &c.smp, pcs, 127, &stop);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(pcs[1], MID + 11);
	ck_assert_int_eq(stop, PD_UW_MEMORY);
	teardown(&c);
	/* No stack at all: the leaf from its registers, then x30's caller. */
	setup(&c, 0, MID + 12);
	n = pd_unwind_sample(c.s, &c.smp, pcs, 127, &stop);
	ck_assert_uint_ge(n, 1);
	ck_assert_uint_eq(pcs[0], LEAF + 8);
	ck_assert_int_eq(stop, PD_UW_MEMORY);
	teardown(&c);
}
END_TEST

START_TEST(return_address_in_no_module_is_counted)
{
	struct a64 c;
	uint64_t pcs[127];
	enum pd_unwind_stop stop;

	setup(&c, 7, 0xdead0000);
	size_t n = pd_unwind_sample(c.s, &c.smp, pcs, 127, &stop);
	ck_assert_uint_ge(n, 2);
	ck_assert_uint_eq(pcs[1], 0xdead0000 - 1);
	ck_assert_int_eq(stop, PD_UW_NO_MODULE);
	teardown(&c);
}
END_TEST

START_TEST(missing_registers_and_the_cap_stop_it)
{
	struct a64 c;
	uint64_t pcs[127];
	enum pd_unwind_stop stop;

	setup(&c, 7, MID + 12);
	c.smp.have &= ~(1ull << 32);   /* no pc */
	ck_assert_uint_eq(pd_unwind_sample(c.s, &c.smp, pcs, 127, &stop), 0);
	ck_assert_int_eq(stop, PD_UW_NO_REGS);
	c.smp.have |= 1ull << 32;
	ck_assert_uint_eq(pd_unwind_sample(c.s, &c.smp, pcs, 2, &stop), 2);
	ck_assert_int_eq(stop, PD_UW_MAX);
	teardown(&c);
}
END_TEST

START_TEST(architecture_comes_from_the_recording)
{
	ck_assert_int_eq(pd_unwind_arch_of("x86_64"), PD_UW_ARCH_X86_64);
	ck_assert_int_eq(pd_unwind_arch_of("aarch64"), PD_UW_ARCH_AARCH64);
	ck_assert_int_eq(pd_unwind_arch_of("arm64"), PD_UW_ARCH_AARCH64);
	ck_assert_int_eq(pd_unwind_arch_of("riscv64"), PD_UW_ARCH_NONE);
	ck_assert_int_eq(pd_unwind_arch_of(NULL), PD_UW_ARCH_NONE);
	ck_assert_ptr_null(pd_unwind_space_new(PD_UW_ARCH_NONE));
	ck_assert_str_eq(pd_unwind_stop_name(PD_UW_MEMORY), "memory_outside_copy");
}
END_TEST

Suite *suite_pdunwind(void)
{
	Suite *s = suite_create("pdunwind");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, known_aarch64_chain_unwinds_to_start);
	tcase_add_test(tc, short_stack_copy_ends_the_chain_counted);
	tcase_add_test(tc, return_address_in_no_module_is_counted);
	tcase_add_test(tc, missing_registers_and_the_cap_stop_it);
	tcase_add_test(tc, architecture_comes_from_the_recording);
	suite_add_tcase(s, tc);
	return s;
}
