/* recover.c - naming "[unknown]" user frames (see recover.h).
 *
 * One pass over the stacks finds, per unknown frame, its module offset
 * from the mappings of the stack's process: an address inside a mapping
 * is a runtime address (offset = addr - start + pgoff); an address inside
 * [pgoff, pgoff + len) of a mapping of that module is what perf 6.1
 * prints, already relative to the file.  A frame seen in two processes
 * must come out the same, or it is a conflict.  Then per frame: the
 * module by build-id through the symbolizer, the file offset turned into
 * an ELF virtual address by the PT_LOAD that holds it, one lookup, and the
 * agreement check.  Renaming points the frame at a (symbol, module)
 * function; nothing else of the profile changes.
 */
#include <fcntl.h>
#include <limits.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recover.h"
#include "symbolize.h"
#include "base/escape.h"
#include "base/util.h"

const char *const pl_recover_reason_names[PL_RR_COUNT] = {
	[PL_RR_NO_BASE] = "no_verified_load_base",
	[PL_RR_NO_BUILD_ID] = "no_build_id_recorded",
	[PL_RR_NO_BINARY] = "no_local_binary_with_that_build_id",
	[PL_RR_NO_SYMBOL] = "no_symbol_at_offset",
	[PL_RR_NO_LINE] = "no_line_table_row",
	[PL_RR_DISAGREE] = "symbol_and_dwarf_disagree",
	[PL_RR_CONFLICT] = "differs_between_processes",
};

enum state { ST_NONE, ST_OFFSET, ST_NO_BASE, ST_CONFLICT };

struct cand {
	uint8_t state;
	bool leaf;               /* a stack's leaf somewhere: looked up at its address */
	uint64_t offset;         /* file offset, with ST_OFFSET */
};

static bool candidate(const struct pl_profile *p, const struct pl_frame *f)
{
	const struct pl_func *fn = &p->funcs[f->func];

	return f->has_addr && fn->unknown && fn->kind == PL_KIND_USER && fn->dso != PL_NOID &&
	       pl_str(p, fn->dso)[0] == '/';
}

bool pl_module_file_offset(const struct pl_profile *p, int64_t pid, uint32_t dso, uint64_t addr,
			uint64_t *off)
{
	bool relative = false;
	uint64_t rel = 0;

	for (size_t i = 0; i < p->nmappings; i++) {
		const struct pl_mapping *m = &p->mappings[i];
		if (m->path != dso)
			continue;
		if (m->pid == pid && addr >= m->start && addr - m->start < m->len) {
			*off = addr - m->start + m->pgoff;
			return true;
		}
		if (!relative && addr >= m->pgoff && addr - m->pgoff < m->len) {
			relative = true;
			rel = addr;
		}
	}
	*off = rel;
	return relative;
}

static void note(struct cand *c, enum state st, uint64_t off)
{
	if (c->state == ST_CONFLICT)
		return;
	if (c->state == ST_NONE) {
		c->state = (uint8_t)st;
		c->offset = off;
	} else if (c->state != st || (st == ST_OFFSET && c->offset != off)) {
		c->state = ST_CONFLICT;
	}
}

static const char *build_id_of(const struct pl_profile *p, uint32_t dso)
{
	for (size_t i = 0; i < p->nbuild_ids; i++)
		if (p->build_ids[i].dso == dso)
			return p->build_ids[i].hex;
	return NULL;
}

/* File offset to ELF virtual address through the PT_LOAD holding it. */
static bool offset_to_vaddr(const char *path, uint64_t off, uint64_t *vaddr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	size_t n = 0;
	bool ok = false;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_getphdrnum(e, &n) == 0) {
		for (size_t i = 0; i < n && !ok; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    off >= ph.p_offset && off - ph.p_offset < ph.p_filesz) {
				*vaddr = off - ph.p_offset + ph.p_vaddr;
				ok = true;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return ok;
}

/* "foo.constprop.0" and "foo" name the same function. */
static bool names_agree(const char *sym, const char *dwarf)
{
	size_t n = strcspn(sym, ".");

	if (strncmp(sym, "_Z", 2) == 0)
		return true; /* mangled: the DWARF name is the plain one */
	return strlen(dwarf) == n && strncmp(sym, dwarf, n) == 0;
}

/* Name frame `f` at file offset `off`, or say why not.  A frame that is
 * only ever a caller holds a return address: it is named by the call
 * before it (the address minus one), which may be the last instruction of
 * a function whose return address is already the next one's. */
static int name_frame(struct pl_profile *p, struct pl_symbolizer *s, uint32_t f,
		      const struct cand *c, struct pl_error *err)
{
	uint64_t off = c->offset;
	uint32_t dso = p->funcs[p->frames[f].func].dso;
	const char *hex = build_id_of(p, dso);
	const struct pl_sym_answer *a;
	struct pl_sym_module *m;
	struct pl_error ignored;
	char path[PATH_MAX];
	uint64_t vaddr;
	uint32_t sym;

	/* The profile keeps a path that is not UTF-8 escaped (profile.h). */
	if (!hex || !pl_esc_decode(pl_str(p, dso), path, sizeof(path)) ||
	    pl_symbolizer_open_dso(s, path, hex, &m, &ignored) ||
	    !offset_to_vaddr(pl_sym_module_path(m), off, &vaddr)) {
		struct pl_missing_module *mm = pl_recovery_missing(p, dso, hex);
		if (mm)
			mm->unknown_frames++;
		return hex ? PL_RR_NO_BINARY : PL_RR_NO_BUILD_ID;
	}
	if (!c->leaf && vaddr > 0)
		vaddr--;
	if (pl_sym_lookup(s, m, vaddr, false, &a, err))
		return -1;
	if (!a->resolved || !a->function)
		return PL_RR_NO_SYMBOL;
	if (!a->file || !a->line)
		return PL_RR_NO_LINE;
	if (a->dwarf_subprogram && !names_agree(a->function, a->dwarf_subprogram))
		return PL_RR_DISAGREE;
	sym = pl_intern_text(p, a->function, strlen(a->function));  /* escaped already */
	p->frames[f].func = pl_intern_func(p, sym, dso);
	return PL_RR_COUNT;
}

/* How many frames each module (by DSO string id) has to name. */
static uint32_t *frames_per_module(const struct pl_profile *p, const struct cand *c)
{
	uint32_t *n = pl_xcalloc(p->strs.count + 1, sizeof(*n));

	for (uint32_t f = 0; f < pl_nframes(p); f++) {
		uint32_t dso = p->funcs[p->frames[f].func].dso;
		if (c[f].state == ST_OFFSET && dso < p->strs.count)
			n[dso]++;
	}
	return n;
}

/* Every [unknown] user frame of the stacks into c[] (by frame id): its
 * module file offset (or why there is none), and whether it is a leaf
 * somewhere. */
static void find_candidates(const struct pl_profile *p, struct cand *c)
{
	for (uint32_t i = 0; i < pl_nstacks(p); i++) {
		const struct pl_stack *st = &p->stacks[i];
		int64_t pid = p->threads[st->thread].pid;
		uint32_t leaf = pl_stack_leaf_index(p, st);
		for (uint32_t d = 0; d < st->depth; d++) {
			const struct pl_frame *f = &p->frames[st->frames[d]];
			uint64_t off;
			if (!candidate(p, f))
				continue;
			if (d == leaf)
				c[st->frames[d]].leaf = true;
			if (pl_module_file_offset(p, pid, p->funcs[f->func].dso, f->addr, &off))
				note(&c[st->frames[d]], ST_OFFSET, off);
			else
				note(&c[st->frames[d]], ST_NO_BASE, 0);
		}
	}
}

enum pl_err pl_recover_frames(struct pl_profile *p, const struct pl_sym_cfg *cfg,
			      const struct pl_debuginfod *dbg, const char *index_dir,
			      struct pl_error *err)
{
	struct cand *c = pl_xcalloc(pl_nframes(p) + 1, sizeof(*c));
	struct pl_symbolizer *s = NULL;
	struct pl_recovery *r = &p->recovery;
	enum pl_err rc = PL_OK;

	memset(r, 0, sizeof(*r));
	r->attempted = true;
	find_candidates(p, c);
	uint32_t *per_dso = frames_per_module(p, c);
	for (uint32_t f = 0; f < pl_nframes(p) && rc == PL_OK; f++) {
		int why;
		if (c[f].state == ST_NONE)
			continue;
		r->user_frames_unknown++;
		if (c[f].state == ST_NO_BASE || c[f].state == ST_CONFLICT) {
			r->not_recovered[c[f].state == ST_NO_BASE ? PL_RR_NO_BASE : PL_RR_CONFLICT]++;
			continue;
		}
		if (!s) {
			s = pl_symbolizer_new(cfg, dbg);
			if (index_dir)
				pl_symbolizer_set_index(s, PL_SYM_INDEX_AUTO, index_dir);
		}
		/* before the module's first lookup, which builds or not: a
		 * size of 1 byte builds none (an index already there is used) */
		if (index_dir)
			pl_symbolizer_set_index_max_source(s, per_dso[p->funcs[p->frames[f].func].dso] <
				PL_RECOVER_INDEX_MIN_FRAMES ? 1 : PL_RECOVER_INDEX_MAX_SOURCE);
		why = name_frame(p, s, f, &c[f], err);
		if (why < 0)
			rc = err->code;
		else if (why == PL_RR_COUNT)
			r->recovered++;
		else
			r->not_recovered[why]++;
	}
	pl_symbolizer_free(s);
	free(per_dso);
	free(c);
	return rc;
}
