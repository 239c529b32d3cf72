/* srclines.c - lines and inline frames from libdw (see srclines.h).
 *
 * One restack of the profile: each frame of each stack is mapped to the
 * frames that replace it.  The answer for a (frame, role, process) is
 * computed once and kept in a table keyed by those three (a frame's
 * address is the same text in every stack, its role - leaf or caller -
 * decides the lookup address, its process the load base).  Per module
 * (a DSO string id) the symbolizer module and its PT_LOAD headers are
 * opened once; a module that cannot be opened is remembered as such.
 */
#include "srclines.h"

#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "symbolize.h"
#include "base/escape.h"
#include "base/util.h"

#define MAX_LOADS 16

enum mod_state { MOD_UNTRIED = 0, MOD_OPEN, MOD_MISSING };

struct module {
	uint8_t state;
	struct pl_sym_module *m;
	size_t nloads;
	GElf_Phdr loads[MAX_LOADS];   /* PT_LOAD headers, for offset -> vaddr */
};

struct answer_seq {
	uint32_t start, n;            /* frame ids in ctx.seq */
};

struct ctx {
	struct pl_symbolizer *s;
	struct module *mods;          /* per string id of a DSO */
	size_t nmods;
	struct pl_strtab keys;        /* (old frame, role, pid) -> answer index */
	struct answer_seq *answers;
	size_t answers_cap;
	uint32_t *seq;                /* answers' frames back to back */
	size_t nseq, seq_cap;
	struct pl_buf path;           /* scratch for srcline text */
};

/* ------------------------------------------------------------- modules */

static const char *build_id_of(const struct pl_profile *p, uint32_t dso)
{
	for (size_t i = 0; i < p->nbuild_ids; i++)
		if (p->build_ids[i].dso == dso)
			return p->build_ids[i].hex;
	return NULL;
}

static void read_loads(struct module *mod)
{
	int fd = open(pl_sym_module_path(mod->m), O_RDONLY | O_CLOEXEC);
	Elf *e;
	size_t n = 0;

	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_getphdrnum(e, &n) == 0)
		for (size_t i = 0; i < n && mod->nloads < MAX_LOADS; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD)
				mod->loads[mod->nloads++] = ph;
		}
	if (e)
		elf_end(e);
	close(fd);
}

/* Without a recorded build-id (perf records them only for modules that
 * samples hit, not for callers), the file at the recorded path stands for
 * the module only when it is the very file mapped: the device and inode
 * of an MMAP2 record of that path (so, on the machine that recorded). */
static bool same_file_mapped(const struct pl_profile *p, uint32_t dso, const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return false;
	for (size_t i = 0; i < p->nmappings; i++) {
		const struct pl_mapping *m = &p->mappings[i];
		if (m->path == dso && m->has_file_id)
			return m->ino == (uint64_t)st.st_ino && m->dev_major == major(st.st_dev) &&
			       m->dev_minor == minor(st.st_dev);
	}
	return false;
}

static bool open_module(struct ctx *c, struct pl_profile *p, uint32_t dso, struct module *mod)
{
	const char *hex = build_id_of(p, dso);
	struct pl_error ignored;
	char path[PATH_MAX];

	/* The profile keeps a path that is not UTF-8 escaped (profile.h). */
	if (!pl_esc_decode(pl_str(p, dso), path, sizeof(path)))
		return false;
	if (hex)
		return pl_symbolizer_open_dso(c->s, path, hex, &mod->m, &ignored) == PL_OK;
	/* Nothing else proves a local file is the one profiled: no lines
	 * rather than wrong ones. */
	return same_file_mapped(p, dso, path) &&
	       pl_symbolizer_open(c->s, path, &mod->m, &ignored) == PL_OK;
}

/* The module of DSO `dso`, or NULL (then counted in the profile's
 * missing list). */
static struct module *module_of(struct ctx *c, struct pl_profile *p, uint32_t dso)
{
	struct module *mod;

	if (dso >= c->nmods) {
		size_t n = c->nmods;
		PL_GROW(c->mods, c->nmods, (size_t)dso + 1);
		memset(c->mods + n, 0, (c->nmods - n) * sizeof(*c->mods));
	}
	mod = &c->mods[dso];
	if (mod->state == MOD_UNTRIED) {
		if (open_module(c, p, dso, mod))
			read_loads(mod);
		mod->state = mod->nloads ? MOD_OPEN : MOD_MISSING;
	}
	return mod->state == MOD_OPEN ? mod : NULL;
}

static bool offset_to_vaddr(const struct module *mod, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < mod->nloads; i++) {
		const GElf_Phdr *ph = &mod->loads[i];
		if (off >= ph->p_offset && off - ph->p_offset < ph->p_filesz) {
			*vaddr = off - ph->p_offset + ph->p_vaddr;
			return true;
		}
	}
	return false;
}

/* The file offset of runtime `addr` in module `dso` for process `pid`
 * (an address already inside [pgoff, pgoff + len) of one of its
 * mappings is what perf 6.1 prints for some frames: taken as is). */
static bool file_offset(const struct pl_profile *p, int64_t pid, uint32_t dso, uint64_t addr,
			uint64_t *off)
{
	bool relative = false;

	for (size_t i = 0; i < p->nmappings; i++) {
		const struct pl_mapping *m = &p->mappings[i];
		if (m->path != dso)
			continue;
		if (m->pid == pid && addr >= m->start && addr - m->start < m->len) {
			*off = addr - m->start + m->pgoff;
			return true;
		}
		relative = relative || (addr >= m->pgoff && addr - m->pgoff < m->len);
	}
	*off = addr;
	return relative;
}

/* ------------------------------------------------------------- answers */

/* "DIR/FILE:LINE".  libdw already joins the line table's directories
 * (and the comp_dir for directory 0); a name still relative is put under
 * an absolute comp_dir, else kept as the debug info says (a relative
 * comp_dir, as Debian's glibc has, tells no full path). */
static uint32_t srcline_id(struct ctx *c, struct pl_profile *p, const char *file,
			   const char *comp_dir, uint32_t line)
{
	if (!file || !line)
		return PL_NOID;
	pl_buf_reset(&c->path);
	if (file[0] != '/' && comp_dir && comp_dir[0] == '/')
		pl_buf_addf(&c->path, "%s/", comp_dir);
	pl_buf_addf(&c->path, "%s:%u", file, line);
	/* The symbolizer's names are in the escaped form already. */
	return pl_intern_text(p, c->path.data, c->path.len);
}

static enum pl_err push(struct ctx *c, struct pl_profile *p, uint32_t func, bool has_addr,
			uint64_t addr, uint32_t srcline, struct pl_error *err)
{
	uint32_t id = pl_intern_frame(p, func, has_addr, addr, srcline, err);

	if (id == PL_NOID)
		return err->code;
	PL_GROW(c->seq, c->seq_cap, c->nseq + 1);
	c->seq[c->nseq++] = id;
	return PL_OK;
}

/* The frames of answer `a` for frame `old`: its function on the line of
 * the outermost location, then each inlined call, innermost last.  A
 * leaf's innermost frame keeps the module offset sampled (`leaf_offset`,
 * else 0: none), which symbolize takes; an unknown function keeps the
 * address perf printed. */
static enum pl_err push_answer(struct ctx *c, struct pl_profile *p, const struct pl_frame *old,
			       const struct pl_sym_answer *a, uint64_t leaf_offset,
			       struct pl_error *err)
{
	uint32_t dso = p->funcs[old->func].dso, unknown = p->funcs[old->func].unknown;
	size_t n = a->ninlines;
	uint32_t line = n ? srcline_id(c, p, a->inlines[n - 1].call_file, a->comp_dir,
				       a->inlines[n - 1].call_line)
			  : srcline_id(c, p, a->file, a->comp_dir, a->line);
	bool keep = unknown || (leaf_offset && !n);
	enum pl_err rc = push(c, p, old->func, keep, unknown ? old->addr : leaf_offset, line, err);

	for (size_t k = n; k-- > 0 && rc == PL_OK;) {
		const char *name = a->inlines[k].function ? a->inlines[k].function : "[unknown]";
		uint32_t sym = pl_intern_text(p, name, strlen(name));
		line = k ? srcline_id(c, p, a->inlines[k - 1].call_file, a->comp_dir,
				      a->inlines[k - 1].call_line)
			 : srcline_id(c, p, a->file, a->comp_dir, a->line);
		rc = push(c, p, pl_intern_func_inlined(p, sym, dso), k == 0 && leaf_offset,
			  leaf_offset, line, err);
	}
	if (rc == PL_OK && line != PL_NOID)
		p->srclines++;
	return rc;
}

static void note_missing(struct pl_profile *p, uint32_t dso)
{
	struct pl_missing_module *mm = pl_recovery_missing(p, dso, build_id_of(p, dso));

	if (mm)
		mm->frames_without_lines++;
}

/* Compute the frames that replace `old` in `role` for process `pid`. */
static enum pl_err answer(struct ctx *c, struct pl_profile *p, const struct pl_frame *old,
			  bool leaf, int64_t pid, struct pl_error *err)
{
	const struct pl_func *fn = &p->funcs[old->func];
	const struct pl_sym_answer *a;
	struct module *mod;
	uint64_t off, vaddr;
	enum pl_err rc;

	if (fn->kind != PL_KIND_USER || fn->dso == PL_NOID || pl_str(p, fn->dso)[0] != '/')
		return push(c, p, old->func, fn->unknown, old->addr, old->srcline, err);
	if (!(mod = module_of(c, p, fn->dso))) {
		note_missing(p, fn->dso);
		return push(c, p, old->func, fn->unknown, old->addr, old->srcline, err);
	}
	if (!file_offset(p, pid, fn->dso, old->addr, &off) || !offset_to_vaddr(mod, off, &vaddr))
		return push(c, p, old->func, fn->unknown, old->addr, old->srcline, err);
	/* A caller's address is where its call returns to: the call is the
	 * instruction before it. */
	if ((rc = pl_sym_lookup(c->s, mod->m, leaf || vaddr == 0 ? vaddr : vaddr - 1, true, &a,
				err)))
		return rc;
	if (!a->resolved || !a->file || !a->line)
		return push(c, p, old->func, fn->unknown, old->addr, old->srcline, err);
	return push_answer(c, p, old, a, leaf ? vaddr : 0, err);
}

/* The restack callback: answers through the (frame, role, pid) table. */
static enum pl_err map_frame(void *arg, struct pl_profile *p, const struct pl_frame *old,
			     bool leaf, int64_t pid, uint32_t *out, size_t cap, size_t *n,
			     struct pl_error *err)
{
	struct ctx *c = arg;
	struct {
		uint32_t func, srcline;
		uint64_t addr;
		int64_t pid;
		uint32_t leaf, has_addr;
	} key = {old->func, old->srcline, old->addr, old->has_addr ? pid : -1, leaf, old->has_addr};
	size_t before = c->keys.count;
	uint32_t idx = pl_strtab_intern(&c->keys, (const char *)&key, sizeof(key));
	struct answer_seq *as;
	enum pl_err rc;

	PL_GROW(c->answers, c->answers_cap, c->keys.count);
	as = &c->answers[idx];
	if (c->keys.count != before) {
		as->start = (uint32_t)c->nseq;
		rc = old->has_addr ? answer(c, p, old, leaf, pid, err)
				   : push(c, p, old->func, false, 0, old->srcline, err);
		if (rc)
			return rc;
		as->n = (uint32_t)(c->nseq - as->start);
	}
	*n = as->n < cap ? as->n : cap;
	memcpy(out, c->seq + as->start, *n * sizeof(*out));
	return PL_OK;
}

enum pl_err pl_srclines_apply(struct pl_profile *p, const struct pl_sym_cfg *cfg,
			      const struct pl_debuginfod *dbg, struct pl_error *err)
{
	struct ctx c = {0};
	enum pl_err rc;

	c.s = pl_symbolizer_new(cfg, dbg);
	pl_strtab_init(&c.keys);
	p->srclines = 0;
	rc = pl_profile_restack(p, map_frame, &c, err);
	p->keep_addrs = false;
	pl_strtab_release(&c.keys);
	pl_symbolizer_free(c.s);
	pl_buf_release(&c.path);
	free(c.mods);
	free(c.answers);
	free(c.seq);
	return rc;
}
