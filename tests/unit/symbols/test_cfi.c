/* test_cfi.c - unit tests for the caller check (symbols/cfi.h): CFA rules
 * read from this test binary's own .eh_frame, checked against the CFI
 * directives of the two assembly functions below (the oracle: the
 * assembler emits exactly the rows they state), and a whole profile pass
 * over perf script text whose frames point into them.
 */
#include <check.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "profile/parse.h"
#include "symbols/cfi.h"
#include "symbols/symbolize.h"
#include "store/stack_table.h"
#include "testlib.h"

/* frameless: CFA rsp+8 throughout.  framed: push (CFA rsp+8 at +0, rsp+16
 * at +1), mov rsp,rbp (3 bytes; CFA rbp+16 from +4), nop, mov (3 bytes),
 * pop at +8 (CFA rsp+8 from +9), ret at +9. */
__asm__(".text\n"
	".globl cfi_test_frameless\n.type cfi_test_frameless,@function\n"
	"cfi_test_frameless:\n.cfi_startproc\n"
	"movq %rdi, %rax\nret\n"
	".cfi_endproc\n.size cfi_test_frameless, .-cfi_test_frameless\n"
	".globl cfi_test_framed\n.type cfi_test_framed,@function\n"
	"cfi_test_framed:\n.cfi_startproc\n"
	"pushq %rbp\n.cfi_def_cfa_offset 16\n.cfi_offset %rbp, -16\n"
	"movq %rsp, %rbp\n.cfi_def_cfa_register %rbp\n"
	"nop\nmovq %rdi, %rax\n"
	"popq %rbp\n.cfi_def_cfa %rsp, 8\n"
	"ret\n.cfi_endproc\n.size cfi_test_framed, .-cfi_test_framed\n");
void cfi_test_frameless(void);
void cfi_test_framed(void);

struct where {
	uintptr_t addr;
	uint64_t file_offset;
	uint64_t seg_start, seg_len, seg_offset;   /* its PT_LOAD, runtime start */
	bool found;
};

static int find_segment(struct dl_phdr_info *info, size_t size, void *data)
{
	struct where *w = data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD || w->addr < start || w->addr - start >= ph->p_memsz)
			continue;
		w->file_offset = w->addr - start + ph->p_offset;
		w->seg_start = start;
		w->seg_len = ph->p_memsz;
		w->seg_offset = ph->p_offset;
		w->found = true;
	}
	return 1;  /* the first object is the program itself */
}

/* The file offset of `fn` + `delta` in this binary. */
static struct where where_of(void (*fn)(void), uint64_t delta)
{
	struct where w = {(uintptr_t)fn + delta, 0, 0, 0, 0, false};

	dl_iterate_phdr(find_segment, &w);
	ck_assert(w.found);
	return w;
}

static const char *self_path(char *buf, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", buf, cap - 1);

	ck_assert(n > 0);
	buf[n] = '\0';
	return buf;
}

static enum pl_edge edge_at(struct pl_cfi *c, void (*fn)(void), uint64_t delta)
{
	char path[4096];
	enum pl_unknown_why why;
	enum pl_edge e = pl_cfi_edge(c, self_path(path, sizeof(path)), where_of(fn, delta).file_offset, &why);

	ck_assert(e != PL_EDGE_UNKNOWN);
	return e;
}

START_TEST(cfa_rules_follow_the_cfi_directives)
{
	struct pl_cfi *c = pl_cfi_new();
	static const struct { uint64_t at; enum pl_edge e; } framed[] = {
		{0, PL_EDGE_MAY_SKIP}, {1, PL_EDGE_MAY_SKIP}, {4, PL_EDGE_KEPT}, {5, PL_EDGE_KEPT},
		{8, PL_EDGE_KEPT}, {9, PL_EDGE_MAY_SKIP},
	};

	ck_assert_int_eq(edge_at(c, cfi_test_frameless, 0), PL_EDGE_MAY_SKIP);
	ck_assert_int_eq(edge_at(c, cfi_test_frameless, 3), PL_EDGE_MAY_SKIP);
	for (size_t i = 0; i < sizeof(framed) / sizeof(framed[0]); i++)
		ck_assert_msg(edge_at(c, cfi_test_framed, framed[i].at) == framed[i].e,
			      "cfi_test_framed+%llu", (unsigned long long)framed[i].at);
	/* Asked again: answered from the cached rows, the same. */
	ck_assert_int_eq(edge_at(c, cfi_test_framed, 4), PL_EDGE_KEPT);
	ck_assert_int_eq(edge_at(c, cfi_test_framed, 0), PL_EDGE_MAY_SKIP);
	pl_cfi_free(c);
	pl_cfi_free(NULL);
}
END_TEST

START_TEST(files_that_cannot_say_are_unknown_with_a_reason)
{
	struct pl_cfi *c = pl_cfi_new();
	char path[] = "/tmp/pl-cfi-XXXXXX", exe[4096];
	enum pl_unknown_why why = PL_UW_COUNT;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "not elf\n", 8), 8);
	close(fd);
	ck_assert_int_eq(pl_cfi_edge(c, "/nonexistent/pl-cfi", 0x1000, &why), PL_EDGE_UNKNOWN);
	ck_assert_int_eq(why, PL_UW_CANNOT_OPEN);
	ck_assert_int_eq(pl_cfi_edge(c, path, 0, &why), PL_EDGE_UNKNOWN);
	ck_assert_int_eq(why, PL_UW_NOT_ELF);
	ck_assert_int_eq(pl_cfi_edge(c, self_path(exe, sizeof(exe)), UINT64_C(1) << 40, &why),
			 PL_EDGE_UNKNOWN);
	ck_assert_int_eq(why, PL_UW_NO_SEGMENT);
	unlink(path);
	pl_cfi_free(c);
}
END_TEST

/* One record, frames leaf first: (function, file offset). */
static void add_record(struct pl_buf *b, const char *exe, const char *const *names,
		       const uint64_t *offsets, size_t n)
{
	pl_buf_addf(b, "app 4242/4242 1.000000: 1000 cycles:\n");
	for (size_t i = 0; i < n; i++)
		pl_buf_addf(b, "\t%llx %s+0x0 (%s)\n", (unsigned long long)offsets[i], names[i], exe);
	pl_buf_addf(b, "\n");
}

/* perf script text of three records in this binary: the frameless leaf,
 * the framed one past its prologue, and the framed one called from the
 * framed one's prologue (a caller frame judged at its return address
 * minus one). */
static void profile_text(struct pl_buf *b, const char *exe, const char *sample_type)
{
	struct where w = where_of(cfi_test_frameless, 0);
	const char *names1[] = {"cfi_test_frameless", "cfi_test_framed", "main"};
	const char *names2[] = {"cfi_test_framed", "cfi_test_framed", "main"};
	uint64_t off1[] = {w.file_offset, where_of(cfi_test_framed, 5).file_offset,
			   where_of(cfi_test_framed, 5).file_offset};
	uint64_t off2[] = {where_of(cfi_test_framed, 4).file_offset,
			   where_of(cfi_test_framed, 5).file_offset, off1[2]};
	uint64_t off3[] = {off2[0], where_of(cfi_test_framed, 1).file_offset, off1[2]};

	pl_buf_addf(b, "# event : name = cycles, , id = { 7 }, type = 0, size = 136, "
		    "sample_type = %s, read_format = ID\n", sample_type);
	pl_buf_addf(b, "app 4242/4242 0.500000: PERF_RECORD_MMAP2 4242/4242: [0x%llx(0x%llx) @ 0x%llx 00:00 0 0]: r-xp %s\n\n",
		    (unsigned long long)w.seg_start, (unsigned long long)w.seg_len,
		    (unsigned long long)w.seg_offset, exe);
	add_record(b, exe, names1, off1, 3);
	add_record(b, exe, names1, off1, 3);
	add_record(b, exe, names2, off2, 3);
	add_record(b, exe, names2, off3, 3);
}

static void add_build_id(struct pl_profile *p, const char *exe)
{
	struct pl_sym_cfg cfg = {0};
	struct pl_symbolizer *s = pl_symbolizer_new(&cfg, NULL);
	struct pl_sym_module *m;
	struct pl_error err;

	ck_assert_int_eq(pl_symbolizer_open(s, exe, &m, &err), PL_OK);
	ck_assert_ptr_nonnull(pl_sym_module_build_id(m));
	p->build_ids = pl_xcalloc(1, sizeof(*p->build_ids));
	p->nbuild_ids = p->build_ids_cap = 1;
	p->build_ids[0].dso = pl_intern_str(p, exe, strlen(exe));
	snprintf(p->build_ids[0].hex, sizeof(p->build_ids[0].hex), "%s", pl_sym_module_build_id(m));
	pl_symbolizer_free(s);
}

static int to_buf(const char *s, size_t n, void *data)
{
	pl_buf_add(data, s, n);
	return 0;
}

/* Marks and marked weights survive the stack table. */
static void check_round_trip(const struct pl_profile *p)
{
	struct pl_buf b = {0};
	struct pl_profile q;
	struct pl_error err;
	json_t *doc;

	ck_assert(pl_stack_table_write(p, to_buf, &b));
	doc = json_loadb(b.data, b.len, 0, NULL);
	ck_assert_ptr_nonnull(doc);
	pl_profile_init(&q, NULL);
	ck_assert_int_eq(pl_stack_table_read(&q, doc, "an-test", &err), PL_OK);
	ck_assert(q.caller_check.attempted);
	ck_assert_uint_eq(q.nmarked, p->nmarked);
	ck_assert_uint_eq(pl_nmarks(&q), pl_nmarks(p));
	for (size_t i = 0; i < p->nmarked; i++) {
		const struct pl_marked *a = &q.marked[i], *b2 = &p->marked[i];
		ck_assert(a->stack == b2->stack && a->event == b2->event && a->mark == b2->mark &&
			  a->samples == b2->samples && a->period == b2->period);
	}
	json_decref(doc);
	pl_profile_release(&q);
	pl_buf_release(&b);
}

START_TEST(a_profile_marks_frameless_leaves_and_prologue_callers)
{
	struct pl_profile p;
	struct pl_buf text = {0};
	struct pl_sym_cfg cfg = {0};
	struct pl_error err;
	char exe[4096];

	self_path(exe, sizeof(exe));
	profile_text(&text, exe, "IP|TID|TIME|CALLCHAIN|PERIOD");
	pl_profile_init(&p, NULL);
	ck_assert_int_eq(feed_script(&p, text.data), PL_OK);
	ck_assert_uint_eq(pl_nsites(&p), 3);
	add_build_id(&p, exe);
	ck_assert_int_eq(pl_cfi_check_callers(&p, &cfg, NULL, &err), PL_OK);
	ck_assert(p.caller_check.attempted);
	ck_assert_uint_eq(pl_nsites(&p), 0);
	/* Stack 0 (two records): the leaf (index 2) has no frame.  Stack 1,
	 * second site: its middle frame returns into the prologue. */
	ck_assert_uint_eq(p.nmarked, 2);
	ck_assert_uint_eq(p.marked[0].stack, 0);
	ck_assert_uint_eq(p.marked[0].samples, 2);
	ck_assert_uint_eq(p.marked[0].period, 2000);
	ck_assert_int_eq(pl_mark_edge(&p, p.marked[0].mark, 2), PL_EDGE_MAY_SKIP);
	ck_assert_int_eq(pl_mark_edge(&p, p.marked[0].mark, 1), PL_EDGE_KEPT);
	ck_assert_uint_eq(p.marked[1].stack, 1);
	ck_assert_uint_eq(p.marked[1].samples, 1);
	ck_assert_int_eq(pl_mark_edge(&p, p.marked[1].mark, 1), PL_EDGE_MAY_SKIP);
	ck_assert_int_eq(pl_mark_edge(&p, p.marked[1].mark, 2), PL_EDGE_KEPT);
	ck_assert_uint_eq(p.caller_check.nunknown, 0);
	check_round_trip(&p);
	pl_profile_release(&p);
	pl_buf_release(&text);
}
END_TEST

START_TEST(without_a_recorded_build_id_every_edge_is_unknown)
{
	struct pl_profile p;
	struct pl_buf text = {0};
	struct pl_sym_cfg cfg = {0};
	struct pl_error err;
	char exe[4096];

	self_path(exe, sizeof(exe));
	profile_text(&text, exe, "IP|TID|TIME|CALLCHAIN|PERIOD");
	pl_profile_init(&p, NULL);
	ck_assert_int_eq(feed_script(&p, text.data), PL_OK);
	ck_assert_int_eq(pl_cfi_check_callers(&p, &cfg, NULL, &err), PL_OK);
	ck_assert_uint_eq(p.nmarked, 2);
	ck_assert_int_eq(pl_mark_edge(&p, p.marked[0].mark, 1), PL_EDGE_UNKNOWN);
	ck_assert_int_eq(pl_mark_edge(&p, p.marked[0].mark, 2), PL_EDGE_UNKNOWN);
	ck_assert_uint_eq(p.caller_check.nunknown, 1);
	ck_assert_int_eq(p.caller_check.unknown[0].why, PL_UW_NO_BUILD_ID);
	ck_assert_str_eq(pl_unknown_why_text[PL_UW_NO_BUILD_ID], "no build-id recorded for the module");
	pl_profile_release(&p);
	pl_buf_release(&text);
}
END_TEST

START_TEST(events_unwound_by_dwarf_are_not_checked)
{
	struct pl_profile p;
	struct pl_buf text = {0};
	struct pl_sym_cfg cfg = {0};
	struct pl_error err;
	char exe[4096];

	self_path(exe, sizeof(exe));
	profile_text(&text, exe, "IP|TID|TIME|CALLCHAIN|PERIOD|REGS_USER|STACK_USER");
	pl_profile_init(&p, NULL);
	ck_assert_int_eq(feed_script(&p, text.data), PL_OK);
	add_build_id(&p, exe);
	ck_assert_int_eq(pl_cfi_check_callers(&p, &cfg, NULL, &err), PL_OK);
	ck_assert(!p.caller_check.attempted);
	ck_assert(!pl_caller_checked(&p, 0));
	ck_assert_uint_eq(p.nmarked, 0);
	pl_profile_release(&p);
	pl_buf_release(&text);
}
END_TEST

START_TEST(text_without_mmap_records_is_not_checked)
{
	struct pl_profile p;
	struct pl_sym_cfg cfg = {0};
	struct pl_error err;

	pl_profile_init(&p, NULL);
	ck_assert_int_eq(feed_script(&p, "app 1/1 1.0: 1 cycles:\n\t1139 leaf+0x0 (/bin/app)\n\t1200 main+0x9 (/bin/app)\n\n"),
			 PL_OK);
	ck_assert_uint_eq(pl_nsites(&p), 0);
	ck_assert_int_eq(pl_cfi_check_callers(&p, &cfg, NULL, &err), PL_OK);
	ck_assert(!p.caller_check.attempted);
	ck_assert_uint_eq(p.nmarked, 0);
	pl_profile_release(&p);
}
END_TEST

Suite *suite_cfi(void)
{
	Suite *s = suite_create("cfi");
	TCase *tc = tcase_create("cfi");

	tcase_add_test(tc, cfa_rules_follow_the_cfi_directives);
	tcase_add_test(tc, files_that_cannot_say_are_unknown_with_a_reason);
	tcase_add_test(tc, a_profile_marks_frameless_leaves_and_prologue_callers);
	tcase_add_test(tc, without_a_recorded_build_id_every_edge_is_unknown);
	tcase_add_test(tc, events_unwound_by_dwarf_are_not_checked);
	tcase_add_test(tc, text_without_mmap_records_is_not_checked);
	suite_add_tcase(s, tc);
	return s;
}
