/* cfi.c - frame-pointer chains that may skip a caller (see cfi.h).
 *
 * Per module file: its PT_LOAD segments (file offsets to virtual
 * addresses), libdw's CFI of .eh_frame (dwarf_getcfi_elf) and, when the
 * file has DWARF, of .debug_frame, and the CFI rows met so far as sorted
 * address ranges with their verdict, so most pcs are answered by a binary
 * search without libdw.  The profile pass walks each site's frames from
 * the leaf, finds each module once by build-id through a symbolizer (the
 * file it opens is the one judged), and remembers the verdict of every
 * (process, module, address, leaf) it met, since return addresses repeat
 * across sites.  Sites are visited in id order, so marks get the same ids
 * and the same input the same output.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfi.h"
#include "recover.h"
#include "symbolize.h"
#include "base/util.h"

#define X86_64_RBP 6       /* DWARF register number of rbp */
#define MAX_SEGMENTS 16

struct range {
	uint64_t lo, hi;       /* [lo, hi) virtual addresses of one CFI row */
	uint8_t edge;
};

struct cfi_module {
	char *path;
	int fail;              /* enum pl_unknown_why: nothing can be said; -1 */
	int fd;
	Elf *elf;
	Dwarf *dw;
	Dwarf_CFI *eh, *dbg;   /* eh is ours to end; dbg belongs to dw */
	GElf_Phdr seg[MAX_SEGMENTS];
	size_t nseg;
	struct range *ranges;  /* sorted by lo, disjoint */
	size_t nranges, ranges_cap;
};

struct pl_cfi {
	struct cfi_module mods[PL_CFI_MAX_MODULES];
	size_t nmods;
};

struct pl_cfi *pl_cfi_new(void)
{
	return pl_xcalloc(1, sizeof(struct pl_cfi));
}

static void module_release(struct cfi_module *m)
{
	if (m->eh)
		dwarf_cfi_end(m->eh);
	if (m->dw)
		dwarf_end(m->dw);
	if (m->elf)
		elf_end(m->elf);
	if (m->fd >= 0)
		close(m->fd);
	free(m->ranges);
	free(m->path);
}

void pl_cfi_free(struct pl_cfi *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nmods; i++)
		module_release(&c->mods[i]);
	free(c);
}

static void module_load_segments(struct cfi_module *m)
{
	size_t n = 0;

	if (elf_getphdrnum(m->elf, &n) != 0)
		return;
	for (size_t i = 0; i < n && m->nseg < MAX_SEGMENTS; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(m->elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			m->seg[m->nseg++] = ph;
	}
}

static void module_open(struct cfi_module *m, const char *path)
{
	GElf_Ehdr eh;

	m->path = pl_xstrdup(path);
	m->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (m->fd < 0) {
		m->fail = PL_UW_CANNOT_OPEN;
		return;
	}
	elf_version(EV_CURRENT);
	m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
	if (!m->elf || !gelf_getehdr(m->elf, &eh)) {
		m->fail = PL_UW_NOT_ELF;
		return;
	}
	if (eh.e_machine != EM_X86_64) {
		m->fail = PL_UW_NOT_X86_64;
		return;
	}
	module_load_segments(m);
	m->eh = dwarf_getcfi_elf(m->elf);
	m->dw = dwarf_begin_elf(m->elf, DWARF_C_READ, NULL);
	m->dbg = m->dw ? dwarf_getcfi(m->dw) : NULL;
	if (!m->eh && !m->dbg)
		m->fail = PL_UW_NO_CFI;
}

static struct cfi_module *module_of(struct pl_cfi *c, const char *path)
{
	for (size_t i = 0; i < c->nmods; i++)
		if (strcmp(c->mods[i].path, path) == 0)
			return &c->mods[i];
	if (c->nmods == PL_CFI_MAX_MODULES)
		return NULL;
	memset(&c->mods[c->nmods], 0, sizeof(c->mods[0]));
	c->mods[c->nmods].fd = -1;
	c->mods[c->nmods].fail = -1;
	module_open(&c->mods[c->nmods], path);
	return &c->mods[c->nmods++];
}

static bool segment_vaddr(const struct cfi_module *m, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < m->nseg; i++)
		if (off >= m->seg[i].p_offset && off - m->seg[i].p_offset < m->seg[i].p_filesz) {
			*vaddr = off - m->seg[i].p_offset + m->seg[i].p_vaddr;
			return true;
		}
	return false;
}

/* The first cached range whose end lies past `a`. */
static size_t range_search(const struct cfi_module *m, uint64_t a)
{
	size_t lo = 0, hi = m->nranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->ranges[mid].hi <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void range_add(struct cfi_module *m, uint64_t lo, uint64_t hi, enum pl_edge edge)
{
	size_t at = range_search(m, lo);

	if (m->nranges >= PL_CFI_MAX_RANGES || hi <= lo ||
	    (at < m->nranges && m->ranges[at].lo < hi))
		return;
	PL_GROW(m->ranges, m->ranges_cap, m->nranges + 1);
	memmove(&m->ranges[at + 1], &m->ranges[at], (m->nranges - at) * sizeof(*m->ranges));
	m->ranges[at] = (struct range){lo, hi, (uint8_t)edge};
	m->nranges++;
}

/* rbp + offset, as libdw states a register rule (DW_OP_bregx), or the
 * short form. */
static bool cfa_is_rbp(const Dwarf_Op *ops, size_t nops)
{
	if (nops != 1)
		return false;
	return (ops[0].atom == DW_OP_bregx && ops[0].number == X86_64_RBP) ||
	       ops[0].atom == DW_OP_breg0 + X86_64_RBP;
}

/* The row of `cfi` holding `vaddr`: its verdict, cached. */
static bool row_edge(struct cfi_module *m, Dwarf_CFI *cfi, uint64_t vaddr, enum pl_edge *edge)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Addr start, end;
	Dwarf_Op *ops;
	size_t nops;

	if (!cfi || dwarf_cfi_addrframe(cfi, vaddr, &fr) != 0)
		return false;
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0) {
		free(fr);
		return false;
	}
	*edge = cfa_is_rbp(ops, nops) ? PL_EDGE_KEPT : PL_EDGE_MAY_SKIP;
	if (dwarf_frame_info(fr, &start, &end, NULL) >= 0)
		range_add(m, start, end, *edge);
	free(fr);
	return true;
}

enum pl_edge pl_cfi_edge(struct pl_cfi *c, const char *path, uint64_t offset,
			 enum pl_unknown_why *why)
{
	struct cfi_module *m = module_of(c, path);
	uint64_t vaddr;
	enum pl_edge edge;
	size_t at;

	if (!m) {
		*why = PL_UW_TOO_MANY_MODULES;
		return PL_EDGE_UNKNOWN;
	}
	if (m->fail >= 0) {
		*why = (enum pl_unknown_why)m->fail;
		return PL_EDGE_UNKNOWN;
	}
	if (!segment_vaddr(m, offset, &vaddr)) {
		*why = PL_UW_NO_SEGMENT;
		return PL_EDGE_UNKNOWN;
	}
	at = range_search(m, vaddr);
	if (at < m->nranges && m->ranges[at].lo <= vaddr)
		return (enum pl_edge)m->ranges[at].edge;
	if (row_edge(m, m->eh, vaddr, &edge) || row_edge(m, m->dbg, vaddr, &edge))
		return edge;
	*why = PL_UW_NO_ROW;
	return PL_EDGE_UNKNOWN;
}

/* ------------------------------------------------------- profile pass */

/* What the pass knows of a module named by the profile (by string id). */
struct dso_state {
	uint8_t state;         /* 0 not looked up, 1 found, 2 not found */
	char *path;            /* the local file, when found */
};

/* One verdict of the memo.  The key is three words, so the table holds
 * them inline and probes on a mixed hash: interning them as strings cost
 * ~170 instructions a frame, the most of the pass (6M frames for a 115 MB
 * recording). */
struct memo_slot {
	uint64_t pid, dso_leaf, pc;
	uint8_t used, edge;
};

struct pass {
	struct pl_profile *p;
	struct pl_cfi *cfi;
	struct pl_symbolizer *sym;
	const struct pl_sym_cfg *cfg;
	const struct pl_debuginfod *dbg;
	struct dso_state *dsos;          /* [ndsos]: the string ids before the pass */
	size_t ndsos;
	struct memo_slot *memo;          /* (pid, dso, pc, leaf) -> edge, open addressing */
	size_t memo_mask, memo_count;
	uint32_t *words;
	size_t words_cap;
	uint64_t *pcs;                   /* one site's, judge_site's */
	size_t pcs_cap;
	uint64_t skipped_records;        /* of events not unwound by frame pointers */
};

static const char *build_id_of(const struct pl_profile *p, uint32_t dso)
{
	for (size_t i = 0; i < p->nbuild_ids; i++)
		if (p->build_ids[i].dso == dso)
			return p->build_ids[i].hex;
	return NULL;
}

/* The local file of module `dso`, found by its recorded build-id, or
 * NULL after noting why not. */
static const char *dso_path(struct pass *ps, uint32_t dso)
{
	struct dso_state *d = &ps->dsos[dso];
	const char *hex;
	struct pl_sym_module *m;
	struct pl_error ignored;

	if (d->state)
		return d->path;
	d->state = 2;
	if (!(hex = build_id_of(ps->p, dso))) {
		pl_note_unknown_module(ps->p, dso, PL_UW_NO_BUILD_ID);
		return NULL;
	}
	if (!ps->sym)
		ps->sym = pl_symbolizer_new(ps->cfg, ps->dbg);
	if (pl_symbolizer_open_dso(ps->sym, pl_str(ps->p, dso), hex, &m, &ignored)) {
		pl_note_unknown_module(ps->p, dso, PL_UW_NO_LOCAL_FILE);
		return NULL;
	}
	d->state = 1;
	d->path = pl_xstrdup(pl_sym_module_path(m));
	return d->path;
}

/* The edge above one user frame, before the memo. */
static enum pl_edge judge(struct pass *ps, int64_t pid, uint32_t dso, uint64_t pc, bool leaf)
{
	enum pl_unknown_why why = PL_UW_NO_ROW;
	const char *path;
	uint64_t off;
	enum pl_edge edge;

	if (dso == PL_NOID || dso >= ps->ndsos || pl_str(ps->p, dso)[0] != '/') {
		pl_note_unknown_module(ps->p, dso, PL_UW_NOT_A_FILE);
		return PL_EDGE_UNKNOWN;
	}
	if (!(path = dso_path(ps, dso)))
		return PL_EDGE_UNKNOWN;
	if (!pl_module_file_offset(ps->p, pid, dso, pc, &off)) {
		pl_note_unknown_module(ps->p, dso, PL_UW_NO_LOAD_BASE);
		return PL_EDGE_UNKNOWN;
	}
	/* A caller frame's address is where its call returns to: the call
	 * itself is the byte before. */
	if (!leaf && off > 0)
		off--;
	edge = pl_cfi_edge(ps->cfi, path, off, &why);
	if (edge == PL_EDGE_UNKNOWN)
		pl_note_unknown_module(ps->p, dso, why);
	return edge;
}

static size_t memo_slot_of(const struct pass *ps, uint64_t pid, uint64_t dso_leaf, uint64_t pc)
{
	size_t j = (size_t)pl_mix_u64(pc ^ pl_mix_u64(dso_leaf ^ (pid << 33))) & ps->memo_mask;

	while (ps->memo[j].used &&
	       (ps->memo[j].pc != pc || ps->memo[j].dso_leaf != dso_leaf || ps->memo[j].pid != pid))
		j = (j + 1) & ps->memo_mask;
	return j;
}

/* Twice the size, kept at load <= 1/2. */
static void memo_grow(struct pass *ps)
{
	struct memo_slot *old = ps->memo;
	size_t old_n = old ? ps->memo_mask + 1 : 0;

	ps->memo_mask = old_n ? old_n * 2 - 1 : 4095;
	ps->memo = pl_xcalloc_hot(ps->memo_mask + 1, sizeof(*ps->memo));
	for (size_t i = 0; i < old_n; i++)
		if (old[i].used)
			ps->memo[memo_slot_of(ps, old[i].pid, old[i].dso_leaf, old[i].pc)] = old[i];
	free(old);
}

static enum pl_edge judge_memo(struct pass *ps, int64_t pid, uint32_t dso, uint64_t pc, bool leaf)
{
	uint64_t dso_leaf = (uint64_t)dso << 1 | leaf;
	size_t j;

	if ((ps->memo_count + 1) * 2 > ps->memo_mask + 1 || !ps->memo)
		memo_grow(ps);
	j = memo_slot_of(ps, (uint64_t)pid, dso_leaf, pc);
	if (!ps->memo[j].used) {
		uint8_t edge = (uint8_t)judge(ps, pid, dso, pc, leaf);
		ps->memo[j] = (struct memo_slot){(uint64_t)pid, dso_leaf, pc, 1, edge};
		ps->memo_count++;
	}
	return (enum pl_edge)ps->memo[j].edge;
}

/* The mark of one site: every user frame but the root, from the leaf.
 * Kernel frames are left alone (the kernel's unwinder is not this one);
 * the first user frame below them is where the thread entered the kernel,
 * judged at its pc like a leaf.  A frame with the same address as the one
 * above it is an inline frame of that one, which the outer frame judges. */
static size_t site_words(struct pass *ps, const struct pl_stack *st, const uint64_t *pcs)
{
	const struct pl_profile *p = ps->p;
	int64_t pid = p->threads[st->thread].pid;
	bool leaf = true;
	size_t n = 0;

	/* The verdict of the frame before: a recursion repeats one return
	 * address down the stack, and the memo's probe is then skipped. */
	uint64_t last_pc = 0;
	uint32_t last_dso = PL_NOID;
	enum pl_edge last_edge = PL_EDGE_UNKNOWN;
	bool have_last = false;

	PL_GROW(ps->words, ps->words_cap, st->depth + 1);
	for (uint32_t d = st->depth; d-- > 1;) {
		const struct pl_func *fn = &p->funcs[p->frames[st->frames[d]].func];
		enum pl_edge edge;
		if (fn->kind == PL_KIND_KERNEL)
			continue;
		if (pcs[d - 1] == pcs[d] && fn->inlined)
			continue;
		if (have_last && !leaf && pcs[d] == last_pc && fn->dso == last_dso) {
			edge = last_edge;
		} else {
			edge = judge_memo(ps, pid, fn->dso, pcs[d], leaf);
			/* Only a caller's verdict stands for the next caller (a
			 * leaf is judged at its pc, a caller at the byte before). */
			have_last = !leaf;
			last_pc = pcs[d];
			last_dso = fn->dso;
			last_edge = edge;
		}
		leaf = false;
		if (edge != PL_EDGE_KEPT)
			ps->words[n++] = d << 2 | (uint32_t)edge;
	}
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t t = ps->words[i];
		ps->words[i] = ps->words[n - 1 - i];
		ps->words[n - 1 - i] = t;
	}
	return n;
}

static void judge_site(struct pass *ps, uint32_t site)
{
	struct pl_profile *p = ps->p;
	uint32_t stack, event;
	size_t n;

	if (!pl_site_read(p, site, &stack, &event, ps->pcs, (uint32_t)ps->pcs_cap))
		return;
	if (!pl_event_fp_chain(p, event)) {
		ps->skipped_records += p->site_samples[site];
		return;
	}
	n = site_words(ps, &p->stacks[stack], ps->pcs);
	if (n)
		pl_add_marked(p, stack, event, pl_intern_mark(p, ps->words, n),
			      p->site_samples[site], p->site_period[site]);
}

enum pl_err pl_cfi_check_callers(struct pl_profile *p, const struct pl_sym_cfg *cfg,
				 const struct pl_debuginfod *dbg, struct pl_error *err)
{
	struct pass ps = {.p = p, .cfi = pl_cfi_new(), .cfg = cfg, .dbg = dbg};

	(void)err;
	if (!pl_nsites(p) && !p->caller_check.records_unchecked) {
		pl_cfi_free(ps.cfi);
		return PL_OK;
	}
	/* Reasons are interned as the pass goes: DSOs are the ids before. */
	ps.ndsos = p->strs.count;
	ps.dsos = pl_xcalloc(ps.ndsos + 1, sizeof(*ps.dsos));
	for (size_t s = 0; s < pl_nstacks(p); s++)
		if (p->stacks[s].depth > ps.pcs_cap)
			ps.pcs_cap = p->stacks[s].depth;
	ps.pcs = pl_xmalloc((ps.pcs_cap + 1) * sizeof(*ps.pcs));
	for (uint32_t s = 0; s < pl_nsites(p); s++)
		judge_site(&ps, s);
	/* The sites are done with: dropped before the marks' sort makes its
	 * copy, so the two never sit in memory together. */
	pl_drop_sites(p);
	pl_marked_finish(p);
	/* Only frame-pointer chains are judged: DWARF, LBR or unsaid ones
	 * leave the profile unchecked. */
	p->caller_check.attempted = ps.skipped_records < p->records_parsed;
	for (size_t i = 0; i < ps.ndsos; i++)
		free(ps.dsos[i].path);
	free(ps.dsos);
	free(ps.memo);
	free(ps.words);
	free(ps.pcs);
	pl_symbolizer_free(ps.sym);
	pl_cfi_free(ps.cfi);
	return PL_OK;
}
