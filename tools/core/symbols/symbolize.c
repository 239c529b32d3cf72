/* symbolize.c - the libdw symbolizer (see symbolize.h).
 *
 * Each module is its own Dwfl session holding one file reported with
 * dwfl_report_elf(..., base 0, add_p_vaddr true), so the bias is 0 for
 * every ELF type and module offsets are the file's virtual addresses.
 * Debug files are found by our own find_debuginfo callback (elfinfo.c's
 * verified search, then our debuginfod client), never by libdwfl's
 * standard one, so a lookup reads only what the configuration allows.
 *
 * Function names: at the first lookup a module's symbols (what
 * dwfl_module_getsym_info lists) are copied into a table sorted by
 * address, with running maxima of symbol ends so that the symbols
 * covering an offset are found by a short backward scan.  Among them
 * dwfl_module_addrinfo's own preference is replayed (globals first, then
 * the closest start, then binding and size, in symbol-table order), so
 * answers equal `eu-addr2line -S`.  The rare cases that depend on sizeless
 * labels are left to dwfl_module_addrinfo itself (linear, exact).
 * Source lines come from dwfl_module_getsrc; inline chains from the
 * concrete DIE scopes holding the offset (dwscopes.c), named as
 * eu-addr2line -f -i names them.
 *
 * Answers live in fixed blocks that never move, keyed by (module,
 * offset) in an open-addressing table; names are interned, bounded at
 * PL_SYM_MAX_NAME bytes.
 */
#include "symbolize.h"
#include "base/escape.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dwscopes.h"
#include "symindex.h"
#include "base/util.h"

_Static_assert(PL_SYMINDEX_NAME_KEEP == PL_SYM_MAX_NAME + 1, "an index keeps what intern reads");
_Static_assert(PL_SYMINDEX_MAX_INLINES == PL_SYM_MAX_INLINE_DEPTH, "chains are kept alike");

#define SCAN_MAX 4096          /* symbols looked at per lookup before falling back */
#define CANDIDATES_MAX 64      /* covering symbols replayed per lookup */
#define ANSWER_BLOCK 1024
#define INLINE_BLOCK 4096
#define SCOPE_DEPTH_MAX 256    /* DIE nesting followed below a CU */

struct sym_entry {
	uint64_t value, size;
	const char *name;          /* in the ELF's string table (lives with the module) */
	int index;                 /* dwfl symbol index: libdwfl's tie order */
	uint8_t bind;              /* binding_value(): 3 global, 2 weak, 1 local, 0 other */
	bool global;               /* in libdwfl's first (global) search phase */
};

struct exec_range {
	uint64_t start, end;
};

struct pl_sym_module {
	struct pl_symbolizer *owner;
	uint32_t id;
	char *path;                    /* real path, or where a fetched file came from */
	char build_id[PL_BUILD_ID_HEX_MAX];
	bool debug_only;               /* the file is itself a separate debug file */
	enum pl_debug_source opened_via; /* how a build-id open found it */
	Dwfl *dwfl;
	Dwfl_Module *mod;

	bool prepared;
	bool debug_searched;           /* find_debuginfo ran once */
	bool has_dwarf;
	enum pl_debug_source debug_source;
	char *debug_path;
	struct pl_buf tried;           /* debug candidates refused, for reasons */
	char *debuginfod_error;

	struct sym_entry *syms;        /* sorted by value, then index */
	size_t nsyms;
	uint64_t *maxend;              /* max(value + size) over syms[0..i] */
	uint64_t *last_sizeless;       /* value of the last sizeless sym in [0..i], or
					* UINT64_MAX when none */
	struct exec_range *exec;
	size_t nexec;
	struct pl_dw_scopes *scopes;   /* CU scope index, for inline chains */

	/* The debug search as libdwfl asked for it, kept for the index. */
	bool search_has_link, search_unrecorded;
	char search_link[PL_DEBUGLINK_MAX];
	uint32_t search_crc;
	struct pl_symindex *idx;       /* when set, it answers every lookup */
	char *index_note;              /* why lookups use libdw (NULL: not decided yet) */
	bool index_built_tried;
	bool index_wanted;          /* DEFER: answered by libdw, index to build later */
	uint64_t direct_lookups;
};

struct answer_rec {
	struct pl_sym_answer pub;
	bool dwarf_done;               /* DWARF scopes looked at (want_inlines) */
};

struct cache_slot {
	uint64_t offset;
	uint32_t module;
	uint32_t answer1;              /* answer index + 1; 0 = empty */
};

struct binary_id {
	bool read;
	char build_id[PL_BUILD_ID_HEX_MAX];
};

struct pl_symbolizer {
	const struct pl_sym_cfg *cfg;
	const struct pl_debuginfod *dbg;
	struct pl_sym_module *modules[PL_SYM_MAX_MODULES];
	size_t nmodules;
	struct binary_id binaries[PL_SYM_MAX_PATHS];

	struct answer_rec **ablocks;
	size_t nablocks, ablocks_cap, nanswers;
	struct pl_sym_inline **iblocks;
	size_t niblocks, iblocks_cap, iused;  /* iused: slots used in the last block */

	struct cache_slot *slots;
	size_t nslots;                 /* power of two; load <= 1/2 */
	struct pl_strtab strings;
	struct pl_sym_stats stats;
	enum pl_sym_index_mode index_mode;
	char *index_dir;               /* NULL: indexes live in memory only */
	uint64_t index_max_source;     /* AUTO with index_dir: build only for
					* modules whose files take at most this
					* many bytes (0: any) */
};

/* ------------------------------------------------------------ strings */

/* The length of `str` (n bytes, cut by the size bound) without a
 * character the cut split: the bytes after n complete it. */
static size_t uncut_length(const unsigned char *u, size_t n)
{
	for (size_t back = 1; back <= 3 && back <= n; back++) {
		size_t lead = n - back;
		if ((u[lead] & 0xc0) == 0x80)
			continue;
		if (u[lead] >= 0xc2 && pl_utf8_len(u + lead, strnlen((const char *)u + lead, 4)) > back)
			return lead;
		break;
	}
	return n;
}

/* Interned copy of `str`, cut at PL_SYM_MAX_NAME bytes (*cut set then);
 * a name with bytes that are not UTF-8 (ELF names and DWARF paths are
 * bytes, answers end up in JSON), or a backslash, is kept in the escaped
 * form of base/escape.h and counted. */
static const char *intern(struct pl_symbolizer *s, const char *str, bool *cut)
{
	const unsigned char *u = (const unsigned char *)str;
	struct pl_buf b = {0};
	const char *r;
	size_t n, i;

	if (!str)
		return NULL;
	n = strnlen(str, PL_SYM_MAX_NAME + 1);
	if (n > PL_SYM_MAX_NAME) {
		n = uncut_length(u, PL_SYM_MAX_NAME);
		*cut = true;
	}
	for (i = 0; i < n && u[i] < 0x80 && u[i] != '\\'; i++)
		;
	if (i == n || !pl_esc_needed(str + i, n - i))
		return pl_strtab_get(&s->strings, pl_strtab_intern(&s->strings, str, n));
	pl_esc_add(&b, str, n);
	s->stats.names_escaped++;
	r = pl_strtab_get(&s->strings, pl_strtab_intern(&s->strings, b.data, b.len));
	pl_buf_release(&b);
	return r;
}

static const char *internf(struct pl_symbolizer *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static const char *internf(struct pl_symbolizer *s, const char *fmt, ...)
{
	char buf[PL_SYM_MAX_NAME + 1];
	bool cut = false;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return intern(s, buf, &cut);
}

/* ------------------------------------------------------ debug files */

static void set_debug(struct pl_sym_module *m, enum pl_debug_source src, const char *path)
{
	m->debug_source = src;
	free(m->debug_path);
	m->debug_path = path ? pl_xstrdup(path) : NULL;
}

/* Ask debuginfod for `kind` of `build_id`; the descriptor or -1 (the
 * error is kept in *why). */
static int fetch_debuginfod(const struct pl_symbolizer *s, const char *build_id, const char *kind,
			    char *source, size_t cap, char **why)
{
	struct pl_elf_facts f;
	struct pl_error e;
	int fd = -1;

	if (!s->dbg || !s->dbg->urls || !*s->dbg->urls || !*build_id)
		return -1;
	if (pl_debuginfod_fetch(s->dbg, build_id, kind, &fd, source, cap, &e) != PL_OK) {
		if (why) {
			free(*why);
			*why = pl_xstrdup(e.text);
		}
		return -1;
	}
	/* A server's answer is checked like a local candidate. */
	if (pl_elf_read_facts_fd(fd, source, &f, &e) || strcmp(f.build_id, build_id) != 0) {
		close(fd);
		if (why) {
			free(*why);
			*why = pl_xstrdup("the debuginfod answer is not an ELF file with that build-id");
		}
		return -1;
	}
	return fd;
}

/* libdwfl asks this when the main file lacks DWARF or a symbol table. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct pl_sym_module *m = *userdata;
	struct pl_symbolizer *s = m->owner;
	char found[PATH_MAX];
	enum pl_debug_source src;
	int fd;

	(void)mod, (void)modname, (void)base;
	/* libdwfl asks again for the symbol table after a failed DWARF search:
	 * one search (and one debuginfod fetch) per module is enough. */
	if (m->debug_only || !file_name || m->debug_searched)
		return -1;
	m->debug_searched = true;
	m->search_has_link = debuglink_file != NULL;
	m->search_crc = debuglink_crc;
	if (debuglink_file && strlen(debuglink_file) < sizeof(m->search_link))
		memcpy(m->search_link, debuglink_file, strlen(debuglink_file) + 1);
	else if (debuglink_file)
		m->search_unrecorded = true;   /* no index on disk for this one */
	src = pl_elf_find_debug_file(file_name, m->build_id, debuglink_file, debuglink_crc,
				     s->cfg ? s->cfg->sysroot : NULL, found, sizeof(found),
				     &m->tried);
	if (src != PL_DEBUG_NONE) {
		fd = open(found, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			set_debug(m, src, found);
			*debuginfo_file_name = pl_xstrdup(found);
			return fd;
		}
	}
	fd = fetch_debuginfod(s, m->build_id, "debuginfo", found, sizeof(found), &m->debuginfod_error);
	if (fd >= 0) {
		set_debug(m, PL_DEBUG_DEBUGINFOD, found);
		*debuginfo_file_name = pl_xstrdup(found);
	}
	return fd;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,  /* never called: files are reported open */
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* ------------------------------------------------------ symbol table */

static uint8_t binding_value(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

/* The symbols dwfl_module_addrinfo would consider (same filter). */
static void build_symbols(struct pl_sym_module *m)
{
	int n = dwfl_module_getsymtab(m->mod);
	int first_global = dwfl_module_getsymtab_first_global(m->mod);
	size_t cap = 0;
	uint64_t end = 0, sizeless = UINT64_MAX;

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &value, NULL, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		PL_GROW(m->syms, cap, m->nsyms + 1);
		m->syms[m->nsyms++] = (struct sym_entry){
			.value = value, .size = sym.st_size, .name = name, .index = i,
			.bind = binding_value(&sym),
			.global = first_global <= 0 || i >= first_global,
		};
	}
	if (m->nsyms)
		qsort(m->syms, m->nsyms, sizeof(*m->syms), cmp_sym);
	m->maxend = pl_xmalloc((m->nsyms + 1) * sizeof(*m->maxend));
	m->last_sizeless = pl_xmalloc((m->nsyms + 1) * sizeof(*m->last_sizeless));
	for (size_t i = 0; i < m->nsyms; i++) {
		const struct sym_entry *e = &m->syms[i];
		uint64_t e_end = e->value + e->size < e->value ? UINT64_MAX : e->value + e->size;
		if (e_end > end)
			end = e_end;
		if (e->size == 0)
			sizeless = e->value;
		m->maxend[i] = end;
		m->last_sizeless[i] = sizeless;
	}
}

/* libdwfl's replacement rule, replayed over covering sized symbols in
 * symbol-table order (try_sym_value in dwfl_module_addrsym.c). */
static const struct sym_entry *dwfl_choice(const struct sym_entry **c, size_t n)
{
	const struct sym_entry *best = NULL;

	for (size_t k = 0; k < n; k++) {
		const struct sym_entry *e = c[k];
		if (!best || best->value < e->value || best->bind < e->bind)
			best = e;
		else if (best->value == e->value &&
			 ((best->size > e->size && best->bind <= e->bind) ||
			  (best->size >= e->size && best->bind < e->bind)))
			best = e;
	}
	return best;
}

static int cmp_index(const void *a, const void *b)
{
	const struct sym_entry *x = *(const struct sym_entry *const *)a;
	const struct sym_entry *y = *(const struct sym_entry *const *)b;

	return (x->index > y->index) - (x->index < y->index);
}

/* Number of symbols whose value is <= addr. */
static size_t upper_bound(const struct pl_sym_module *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->syms[mid].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

enum sym_result { SYM_FOUND, SYM_NONE, SYM_ASK_DWFL };

/* The covering sized symbols of `addr`, split by search phase; SYM_ASK_DWFL
 * when the table is too tangled to scan briefly. */
static enum sym_result covering(const struct pl_sym_module *m, uint64_t addr, size_t hi,
				const struct sym_entry **g, size_t *ng,
				const struct sym_entry **l, size_t *nl)
{
	size_t steps = 0;

	*ng = *nl = 0;
	for (size_t j = hi; j-- > 0;) {
		const struct sym_entry *e = &m->syms[j];
		if (m->maxend[j] <= addr)
			break;
		if (++steps > SCAN_MAX)
			return SYM_ASK_DWFL;
		if (e->size == 0 || addr - e->value >= e->size)
			continue;
		if (*ng == CANDIDATES_MAX || *nl == CANDIDATES_MAX)
			return SYM_ASK_DWFL;
		if (e->global)
			g[(*ng)++] = e;
		else
			l[(*nl)++] = e;
	}
	return SYM_FOUND;
}

/* A sizeless global symbol exactly at addr stops libdwfl from looking at
 * the locals. */
static bool sizeless_global_at(const struct pl_sym_module *m, uint64_t addr, size_t hi)
{
	for (size_t j = hi; j-- > 0 && m->syms[j].value == addr;)
		if (m->syms[j].size == 0 && m->syms[j].global)
			return true;
	return false;
}

static enum sym_result table_symbol(const struct pl_sym_module *m, uint64_t addr,
				    const struct sym_entry **out)
{
	const struct sym_entry *g[CANDIDATES_MAX], *l[CANDIDATES_MAX];
	size_t hi = upper_bound(m, addr), ng, nl;

	if (hi == 0)
		return SYM_NONE;
	if (covering(m, addr, hi, g, &ng, l, &nl) != SYM_FOUND)
		return SYM_ASK_DWFL;
	if (ng) {
		qsort(g, ng, sizeof(*g), cmp_index);
		*out = dwfl_choice(g, ng);
		return SYM_FOUND;
	}
	if (sizeless_global_at(m, addr, hi))
		return SYM_ASK_DWFL;
	if (nl) {
		qsort(l, nl, sizeof(*l), cmp_index);
		*out = dwfl_choice(l, nl);
		return SYM_FOUND;
	}
	/* Only a sizeless label could still name it, and only one that no
	 * symbol's end lies beyond (libdwfl's min_label): with no sized
	 * symbol covering addr and no sizeless global exactly at it, libdwfl
	 * searches the locals too, so every symbol at or below addr raises
	 * min_label, locals included. */
	if (m->last_sizeless[hi - 1] != UINT64_MAX && m->last_sizeless[hi - 1] >= m->maxend[hi - 1])
		return SYM_ASK_DWFL;
	return SYM_NONE;
}

/* ------------------------------------------------------ module set-up */

static void add_exec_range(struct pl_sym_module *m, size_t *cap, uint64_t start, uint64_t size)
{
	if (size == 0 || start + size < start)
		return;
	PL_GROW(m->exec, *cap, m->nexec + 1);
	m->exec[m->nexec++] = (struct exec_range){start, start + size};
}

/* Executable sections (NOBITS ones too: a debug file keeps their
 * addresses); executable PT_LOAD segments when there are no sections. */
static void build_exec_ranges(struct pl_sym_module *m)
{
	Dwarf_Addr bias;
	Elf *e = dwfl_module_getelf(m->mod, &bias);
	Elf_Scn *scn = NULL;
	size_t cap = 0, phnum;
	GElf_Shdr sh;
	GElf_Phdr ph;

	if (!e)
		return;
	while ((scn = elf_nextscn(e, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) && (sh.sh_flags & SHF_EXECINSTR))
			add_exec_range(m, &cap, sh.sh_addr, sh.sh_size);
	if (m->nexec == 0 && elf_getphdrnum(e, &phnum) == 0)
		for (size_t i = 0; i < phnum; i++)
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
				add_exec_range(m, &cap, ph.p_vaddr, ph.p_memsz);
}

static bool in_exec(const struct pl_sym_module *m, uint64_t addr)
{
	for (size_t i = 0; i < m->nexec; i++)
		if (addr >= m->exec[i].start && addr < m->exec[i].end)
			return true;
	return false;
}

static bool index_load(struct pl_sym_module *m);
static void index_build(struct pl_sym_module *m);
static void set_note(struct pl_sym_module *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Load DWARF (searching for a debug file), then the tables. */
static void prepare_dwfl(struct pl_sym_module *m)
{
	Dwarf_Addr bias;

	m->has_dwarf = dwfl_module_getdwarf(m->mod, &bias) != NULL;
	if (m->has_dwarf && m->debug_source == PL_DEBUG_NONE)
		set_debug(m, m->debug_only ? m->opened_via : PL_DEBUG_EMBEDDED,
			  m->debug_only ? m->path : NULL);
	build_exec_ranges(m);
	build_symbols(m);
}

/* A valid index from the cache folder, else libdw (and an index built
 * from it when there is a folder to keep it in, or when asked to). */
/* Do the module's file and its separate debug file take at most `max`
 * bytes together (0: no bound)? */
static bool source_within(const struct pl_sym_module *m, uint64_t max)
{
	struct stat st;
	uint64_t total = 0;

	if (!max)
		return true;
	if (m->path && stat(m->path, &st) == 0)
		total += (uint64_t)st.st_size;
	if (m->debug_path && stat(m->debug_path, &st) == 0)
		total += (uint64_t)st.st_size;
	return total <= max;
}

static void prepare(struct pl_sym_module *m)
{
	const struct pl_symbolizer *s = m->owner;

	if (m->prepared)
		return;
	m->prepared = true;
	if (index_load(m))
		return;
	prepare_dwfl(m);
	if (s->index_mode == PL_SYM_INDEX_ALWAYS ||
	    (s->index_mode == PL_SYM_INDEX_AUTO && s->index_dir && source_within(m, s->index_max_source)))
		index_build(m);
	else if (s->index_mode == PL_SYM_INDEX_DEFER && s->index_dir && (m->nsyms || m->has_dwarf)) {
		m->index_wanted = true;
		if (m->index_note)  /* a refused index: say why, and what happens now */
			set_note(m, "%s; libdw answered, and the index is built again after this answer",
				 m->index_note);
		else
			set_note(m, "no symbol index yet: libdw answered; the index is built after this answer, for the next call");
	}
}

static void module_free(struct pl_sym_module *m)
{
	if (!m)
		return;
	if (m->dwfl)
		dwfl_end(m->dwfl);
	free(m->path);
	free(m->debug_path);
	free(m->debuginfod_error);
	pl_buf_release(&m->tried);
	free(m->syms);
	free(m->maxend);
	free(m->last_sizeless);
	free(m->exec);
	pl_dw_scopes_free(m->scopes);
	pl_symindex_free(m->idx);
	free(m->index_note);
	free(m);
}

static struct pl_sym_module *find_by_build_id(struct pl_symbolizer *s, const char *id)
{
	for (size_t i = 0; i < s->nmodules && *id; i++)
		if (strcmp(s->modules[i]->build_id, id) == 0)
			return s->modules[i];
	return NULL;
}

static struct pl_sym_module *find_by_path(struct pl_symbolizer *s, const char *path)
{
	for (size_t i = 0; i < s->nmodules; i++)
		if (strcmp(s->modules[i]->path, path) == 0)
			return s->modules[i];
	return NULL;
}

/* Report the ELF on `fd` (stolen, closed on every path) as a new module. */
static enum pl_err add_module(struct pl_symbolizer *s, const char *name, int fd,
			      const struct pl_elf_facts *f, enum pl_debug_source via,
			      struct pl_sym_module **out, struct pl_error *err)
{
	struct pl_sym_module *m;
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	Dwarf_Addr bias = 0;
	void **ud;

	if (f->type == ET_REL || f->type == ET_CORE) {
		close(fd);
		return pl_fail(err, PL_ERR_UNSUPPORTED,
			       "pass the linked executable or shared library (or its debug file)",
			       "'%s' is an ELF %s file, which has no load addresses to symbolize", name,
			       f->type == ET_REL ? "relocatable (.o/.ko)" : "core");
	}
	if (s->nmodules == PL_SYM_MAX_MODULES) {
		close(fd);
		return pl_fail(err, PL_ERR_LIMIT, "symbolize fewer modules per call",
			       "more than %d modules in one symbolizer", PL_SYM_MAX_MODULES);
	}
	m = pl_xcalloc(1, sizeof(*m));
	m->owner = s;
	m->id = (uint32_t)s->nmodules;
	m->path = pl_xstrdup(name);
	memcpy(m->build_id, f->build_id, sizeof(m->build_id));
	m->debug_only = f->text_nobits;
	m->opened_via = via;
	m->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!m->dwfl) {
		close(fd);
		module_free(m);
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "dwfl_begin: %s", dwfl_errmsg(-1));
	}
	dwfl_report_begin(m->dwfl);
	/* add_p_vaddr: the bias is the base (0) even when the first PT_LOAD
	 * of a shared object is not at 0. */
	m->mod = dwfl_report_elf(m->dwfl, base, name, fd, 0, true);
	if (!m->mod)
		close(fd);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod || (dwfl_module_getelf(m->mod, &bias), bias != 0)) {
		pl_fail(err, PL_ERR_UNSUPPORTED, "pass an executable, shared library or debug file",
			"libdwfl cannot report '%s': %s", name,
			m->mod ? "its load bias is not 0" : dwfl_errmsg(-1));
		module_free(m);
		return err->code;
	}
	dwfl_module_info(m->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = m;
	s->modules[s->nmodules++] = m;
	*out = m;
	return PL_OK;
}

/* Open `fd` (stolen) as a module unless one with its build-id exists. */
static enum pl_err open_fd(struct pl_symbolizer *s, const char *name, int fd,
			   enum pl_debug_source via, struct pl_sym_module **m,
			   struct pl_error *err)
{
	struct pl_elf_facts f;
	enum pl_err rc;

	if ((rc = pl_elf_read_facts_fd(fd, name, &f, err))) {
		close(fd);
		return rc;
	}
	if ((*m = find_by_build_id(s, f.build_id)) != NULL) {
		close(fd);
		return PL_OK;
	}
	return add_module(s, name, fd, &f, via, m, err);
}

static enum pl_err open_path(struct pl_symbolizer *s, const char *path, enum pl_debug_source via,
			     struct pl_sym_module **m, struct pl_error *err)
{
	char real[PATH_MAX];
	int fd;

	if (!realpath(path, real))
		return pl_fail(err, PL_ERR_INPUT, "check the path", "cannot open '%s': %s", path,
			       strerror(errno));
	if ((*m = find_by_path(s, real)) != NULL)
		return PL_OK;
	fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pl_fail(err, PL_ERR_INPUT, "check the path and its permissions",
			       "cannot open '%s': %s", path, strerror(errno));
	return open_fd(s, real, fd, via, m, err);
}

enum pl_err pl_symbolizer_open(struct pl_symbolizer *s, const char *path,
			       struct pl_sym_module **m, struct pl_error *err)
{
	return open_path(s, path, PL_DEBUG_NONE, m, err);
}

/* ------------------------------------------------------- by build-id */

static const char *binary_build_id(struct pl_symbolizer *s, size_t i)
{
	struct pl_elf_facts f;
	struct pl_error e;

	if (!s->binaries[i].read) {
		s->binaries[i].read = true;
		if (pl_elf_read_facts(s->cfg->binaries[i], &f, &e) == PL_OK)
			memcpy(s->binaries[i].build_id, f.build_id, sizeof(f.build_id));
	}
	return s->binaries[i].build_id;
}

/* The local places, in order: PL_OK, PL_ERR_INPUT (none; `tried` filled,
 * *m NULL) or PL_ERR_LIMIT. */
static enum pl_err open_build_id_local(struct pl_symbolizer *s, const char *id,
				       struct pl_sym_module **m, struct pl_buf *tried,
				       struct pl_error *err)
{
	const char *roots[2] = {s->cfg ? s->cfg->sysroot : NULL, ""};
	static const char *const suffixes[2] = {"", ".debug"};
	char cand[PATH_MAX];
	enum pl_err rc;

	*m = NULL;
	for (size_t i = 0; s->cfg && i < s->cfg->nbinaries; i++)
		if (strcmp(binary_build_id(s, i), id) == 0)
			return open_path(s, s->cfg->binaries[i], PL_DEBUG_NONE, m, err);
	pl_buf_addf(tried, "%s%zu --binary file(s)", tried->len ? "; " : "",
		    s->cfg ? s->cfg->nbinaries : 0);
	for (size_t r = 0; r < 2; r++) {
		for (size_t k = 0; roots[r] && k < 2; k++) {
			if (!pl_build_id_path(roots[r], id, suffixes[k], cand, sizeof(cand)) ||
			    access(cand, R_OK) != 0) {
				pl_buf_addf(tried, "; %s", cand);
				continue;
			}
			rc = open_path(s, cand, PL_DEBUG_BUILD_ID, m, err);
			if (rc == PL_ERR_LIMIT)
				return rc;
			if (rc == PL_OK && strcmp((*m)->build_id, id) == 0)
				return PL_OK;
			pl_buf_addf(tried, "; %s (%s)", cand, rc ? err->text : "different build-id");
			*m = NULL;
		}
	}
	return PL_ERR_INPUT;
}

/* debuginfod "executable", then "debuginfo"; same results as above. */
static enum pl_err open_build_id_remote(struct pl_symbolizer *s, const char *id,
					struct pl_sym_module **m, struct pl_buf *tried,
					struct pl_error *err)
{
	static const char *const kinds[2] = {"executable", "debuginfo"};
	char source[PATH_MAX], *why = NULL;
	enum pl_err rc;

	*m = NULL;
	if (!s->dbg || !s->dbg->urls || !*s->dbg->urls) {
		pl_buf_adds(tried, "; debuginfod (off: no DEBUGINFOD_URLS or --debuginfod)");
		return PL_ERR_INPUT;
	}
	for (size_t k = 0; k < 2; k++) {
		int fd = fetch_debuginfod(s, id, kinds[k], source, sizeof(source), &why);
		if (fd < 0)
			continue;
		rc = open_fd(s, source, fd, PL_DEBUG_DEBUGINFOD, m, err);
		if (rc == PL_OK || rc == PL_ERR_LIMIT) {
			free(why);
			return rc;
		}
		free(why);
		why = pl_xstrdup(err->text);
		*m = NULL;
	}
	pl_buf_addf(tried, "; debuginfod %s (%s)", s->dbg->urls, why ? why : "no answer");
	free(why);
	return PL_ERR_INPUT;
}

static enum pl_err not_found(const char *id, struct pl_buf *tried, struct pl_error *err)
{
	pl_fail(err, PL_ERR_INPUT,
		"pass the binary with --binary FILE, install its debug package, or set DEBUGINFOD_URLS",
		"no file with build-id %s found; tried: %s", id, tried->data ? tried->data : "nothing");
	pl_buf_release(tried);
	return PL_ERR_INPUT;
}

/* Local places, then debuginfod; "not found" names all of them. */
static enum pl_err open_by_id(struct pl_symbolizer *s, const char *id, struct pl_sym_module **m,
			      struct pl_buf *tried, struct pl_error *err)
{
	enum pl_err rc = open_build_id_local(s, id, m, tried, err);

	if (rc == PL_ERR_INPUT)
		rc = open_build_id_remote(s, id, m, tried, err);
	if (rc == PL_ERR_INPUT)
		return not_found(id, tried, err);
	pl_buf_release(tried);
	return rc;
}

enum pl_err pl_symbolizer_open_build_id(struct pl_symbolizer *s, const char *build_id_hex,
					struct pl_sym_module **m, struct pl_error *err)
{
	char id[PL_BUILD_ID_HEX_MAX];
	struct pl_buf tried = {0};

	if (!build_id_hex || !pl_build_id_normalize(build_id_hex, id))
		return pl_fail(err, PL_ERR_USAGE, "pass the build-id as hex digits (eu-readelf -n shows it)",
			       "'%s' is not a build-id", build_id_hex ? build_id_hex : "");
	if ((*m = find_by_build_id(s, id)) != NULL)
		return PL_OK;
	return open_by_id(s, id, m, &tried, err);
}

enum pl_err pl_symbolizer_open_dso(struct pl_symbolizer *s, const char *dso_path,
				   const char *build_id_hex, struct pl_sym_module **m,
				   struct pl_error *err)
{
	char id[PL_BUILD_ID_HEX_MAX] = "", cands[3][PATH_MAX];
	struct pl_buf tried = {0};
	size_t n = 0;
	struct pl_error e;

	if (build_id_hex && *build_id_hex && !pl_build_id_normalize(build_id_hex, id))
		return pl_fail(err, PL_ERR_USAGE, "pass the build-id as hex digits",
			       "'%s' is not a build-id", build_id_hex);
	if (*id && (*m = find_by_build_id(s, id)) != NULL)
		return PL_OK;
	if (s->cfg && pl_path_map_apply(s->cfg->module_maps, s->cfg->nmodule_maps, dso_path,
					cands[n], sizeof(cands[n])))
		n++;
	if (s->cfg && s->cfg->sysroot && dso_path[0] == '/' &&
	    (size_t)snprintf(cands[n], sizeof(cands[n]), "%s%s", s->cfg->sysroot, dso_path) <
		    sizeof(cands[n]))
		n++;
	if (strlen(dso_path) < PATH_MAX)
		memcpy(cands[n++], dso_path, strlen(dso_path) + 1);
	for (size_t i = 0; i < n; i++) {
		if (open_path(s, cands[i], PL_DEBUG_NONE, m, &e) != PL_OK) {
			pl_buf_addf(&tried, "%s%s (%s)", tried.len ? "; " : "", cands[i], e.text);
			continue;
		}
		if (!*id || strcmp((*m)->build_id, id) == 0) {
			pl_buf_release(&tried);
			return PL_OK;
		}
		pl_buf_addf(&tried, "%s%s (build-id %s, not %s)", tried.len ? "; " : "", cands[i],
			    *(*m)->build_id ? (*m)->build_id : "none", id);
	}
	*m = NULL;
	if (*id)
		return open_by_id(s, id, m, &tried, err);
	pl_fail(err, PL_ERR_INPUT, "pass --binary, --sysroot or --module-map DEVICE=LOCAL",
		"no local file for '%s'; tried: %s", dso_path, tried.data ? tried.data : "nothing");
	pl_buf_release(&tried);
	return PL_ERR_INPUT;
}

/* ------------------------------------------------------------ queries */

const char *pl_sym_module_build_id(const struct pl_sym_module *m)
{
	return *m->build_id ? m->build_id : NULL;
}

const char *pl_sym_module_path(const struct pl_sym_module *m)
{
	return m->path;
}

enum pl_debug_source pl_sym_module_debug_source(struct pl_sym_module *m)
{
	prepare(m);
	return m->debug_source;
}

const char *pl_sym_module_debug_file(struct pl_sym_module *m)
{
	prepare(m);
	return m->debug_path ? m->debug_path : (m->debug_source == PL_DEBUG_EMBEDDED ? m->path : NULL);
}

size_t pl_sym_module_symbol_count(struct pl_sym_module *m)
{
	prepare(m);
	return m->nsyms;
}

const char *pl_sym_module_lookup_method(const struct pl_sym_module *m, const char **note)
{
	const struct pl_symbolizer *s = m->owner;
	const char *why = NULL;

	if (!m->idx)
		why = m->index_note ? m->index_note
		    : s->index_mode == PL_SYM_INDEX_OFF ? "the symbol index is switched off"
		    : "no symbol index: no writable cache folder, and fewer lookups than an "
		      "in-memory index pays for";
	if (note)
		*note = why;
	return m->idx ? "index" : "libdw";
}

/* ------------------------------------------------------------ storage */

static struct answer_rec *new_answer(struct pl_symbolizer *s)
{
	size_t b = s->nanswers / ANSWER_BLOCK;

	if (b == s->nablocks) {
		PL_GROW(s->ablocks, s->ablocks_cap, s->nablocks + 1);
		s->ablocks[s->nablocks++] = pl_xmalloc(ANSWER_BLOCK * sizeof(struct answer_rec));
	}
	return &s->ablocks[b][s->nanswers++ % ANSWER_BLOCK];
}

static struct answer_rec *answer_at(const struct pl_symbolizer *s, size_t i)
{
	return &s->ablocks[i / ANSWER_BLOCK][i % ANSWER_BLOCK];
}

/* `n` contiguous inline slots (n <= PL_SYM_MAX_INLINE_DEPTH). */
static struct pl_sym_inline *new_inlines(struct pl_symbolizer *s, size_t n)
{
	if (s->niblocks == 0 || s->iused + n > INLINE_BLOCK) {
		PL_GROW(s->iblocks, s->iblocks_cap, s->niblocks + 1);
		s->iblocks[s->niblocks++] = pl_xmalloc(INLINE_BLOCK * sizeof(struct pl_sym_inline));
		s->iused = 0;
	}
	s->iused += n;
	return &s->iblocks[s->niblocks - 1][s->iused - n];
}

static size_t slot_of(const struct pl_symbolizer *s, uint32_t module, uint64_t offset)
{
	uint64_t h = (offset ^ ((uint64_t)module << 48)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 17) & (s->nslots - 1);
}

static struct cache_slot *cache_find(const struct pl_symbolizer *s, uint32_t module,
				     uint64_t offset)
{
	for (size_t i = slot_of(s, module, offset);; i = (i + 1) & (s->nslots - 1)) {
		struct cache_slot *c = &s->slots[i];
		if (!c->answer1 || (c->offset == offset && c->module == module))
			return c;
	}
}

static void cache_grow(struct pl_symbolizer *s)
{
	struct cache_slot *old = s->slots;
	size_t n = s->nslots;

	s->nslots *= 2;
	s->slots = pl_xcalloc(s->nslots, sizeof(*s->slots));
	for (size_t i = 0; i < n; i++)
		if (old[i].answer1)
			*cache_find(s, old[i].module, old[i].offset) = old[i];
	free(old);
}

/* ------------------------------------------------------------- lookup */

/* eu-addr2line's get_diename: the linkage name when there is one (through
 * DW_AT_abstract_origin/specification), else the name. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr)
						    ?: dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));

	return name ? name : (dwarf_diename(die) ?: "??");
}

static uint32_t die_udata(Dwarf_Die *die, unsigned attr_name)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	if (dwarf_formudata(dwarf_attr(die, attr_name, &attr), &v) != 0 || v > UINT32_MAX)
		return 0;
	return (uint32_t)v;
}

static const char *call_file(Dwarf_Files *files, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	if (!files || dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &v) != 0)
		return NULL;
	return dwarf_filesrc(files, v, NULL, NULL);
}

/* ------------------------------------------------------ raw answers */

/* The answers below are computed "raw" (names as libdw gives them, valid
 * while the module's Dwfl lives) and then interned into an answer.  The
 * index builder evaluates the same raw functions, so an index holds
 * exactly what a direct lookup would answer. */

/* The concrete scopes holding `addr`, innermost first: names, call sites
 * and the outer subprogram (as eu-addr2line -f -i prints them). */
static void eval_scopes(struct pl_sym_module *m, uint64_t addr, struct pl_symindex_scope *sc)
{
	Dwarf_Die path[SCOPE_DEPTH_MAX], *cudie;
	Dwarf_Files *files = NULL;
	Dwarf_Addr bias = 0;
	int np;

	sc->dwarf_function = sc->dwarf_subprogram = NULL;
	sc->ninl = 0;
	sc->truncated = sc->hidden_cut = false;
	cudie = dwfl_module_addrdie(m->mod, addr, &bias);
	if (!cudie)
		return;
	if (!m->scopes)
		m->scopes = pl_dw_scopes_new();
	np = pl_dw_scopes_find(m->scopes, cudie, addr - bias, path, SCOPE_DEPTH_MAX, &sc->truncated);
	if (dwarf_getsrcfiles(cudie, &files, NULL) != 0)
		files = NULL;
	for (int i = np - 1; i >= 0; i--) {
		int tag = dwarf_tag(&path[i]);
		const char *name;
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram &&
		    tag != DW_TAG_entry_point)
			continue;
		name = die_name(&path[i]);
		if (!sc->dwarf_function)
			sc->dwarf_function = name;
		if (tag != DW_TAG_inlined_subroutine) {
			sc->dwarf_subprogram = name;
			break;
		}
		if (sc->ninl == PL_SYM_MAX_INLINE_DEPTH) {
			sc->truncated = true;
			sc->hidden_cut |= strnlen(name, PL_SYM_MAX_NAME + 1) > PL_SYM_MAX_NAME;
			continue;
		}
		sc->inl[sc->ninl++] = (struct pl_symindex_inline){
			.function = name,
			.call_file = call_file(files, &path[i]),
			.call_line = die_udata(&path[i], DW_AT_call_line),
			.call_column = die_udata(&path[i], DW_AT_call_column),
		};
	}
}

/* The ELF symbol naming `addr` and its value; false when none does. */
static bool eval_symbol(struct pl_symbolizer *s, struct pl_sym_module *m, uint64_t addr,
			const char **name, uint64_t *value)
{
	const struct sym_entry *e = NULL;
	enum sym_result r = table_symbol(m, addr, &e);

	*name = NULL;
	*value = 0;
	if (r == SYM_FOUND) {
		s->stats.table_hits++;
		*name = e->name;
		*value = e->value;
	} else if (r == SYM_ASK_DWFL) {
		GElf_Off off = 0;
		GElf_Sym sym;
		s->stats.linear_fallbacks++;
		*name = dwfl_module_addrinfo(m->mod, addr, &off, &sym, NULL, NULL, NULL);
		*value = addr - off;
	}
	return *name != NULL;
}

/* The line-table answer at `addr` (file NULL when none). */
static void eval_line(struct pl_sym_module *m, uint64_t addr, const char **file,
		      const char **comp_dir, uint32_t *line_no, uint32_t *column)
{
	Dwfl_Line *line = m->has_dwarf ? dwfl_module_getsrc(m->mod, addr) : NULL;
	Dwarf_Addr la;
	int lineno = 0, col = 0;
	const char *src = line ? dwfl_lineinfo(line, &la, &lineno, &col, NULL, NULL) : NULL;
	Dwarf_Attribute attr;
	Dwarf_Die *cu;

	*file = src;
	*comp_dir = NULL;
	*line_no = *column = 0;
	if (!src)
		return;
	if (src[0] != '/' && (cu = dwfl_linecu(line)) != NULL)
		*comp_dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	*line_no = lineno > 0 ? (uint32_t)lineno : 0;
	*column = col > 0 ? (uint32_t)col : 0;
}

/* ------------------------------------------------- raw -> answer */

static void apply_scopes(struct pl_symbolizer *s, const struct pl_symindex_scope *sc,
			 struct pl_sym_answer *a)
{
	struct pl_sym_inline *dst;

	a->dwarf_function = intern(s, sc->dwarf_function, &a->names_truncated);
	a->inlines_truncated |= sc->truncated;
	a->names_truncated |= sc->hidden_cut;
	if (sc->ninl) {
		dst = new_inlines(s, sc->ninl);
		for (size_t i = 0; i < sc->ninl; i++)
			dst[i] = (struct pl_sym_inline){
				.function = intern(s, sc->inl[i].function, &a->names_truncated),
				.call_file = intern(s, sc->inl[i].call_file, &a->names_truncated),
				.call_line = sc->inl[i].call_line,
				.call_column = sc->inl[i].call_column,
			};
		a->inlines = dst;
		a->ninlines = sc->ninl;
	}
	a->dwarf_subprogram = intern(s, sc->dwarf_subprogram, &a->names_truncated);
}

static void apply_symbol(struct pl_symbolizer *s, const char *name, uint64_t value, uint64_t addr,
			 struct pl_sym_answer *a)
{
	if (!name)
		return;
	a->function = intern(s, name, &a->names_truncated);
	a->function_offset = addr - value;
}

static void apply_line(struct pl_symbolizer *s, const char *file, const char *comp_dir,
		       uint32_t line, uint32_t column, struct pl_sym_answer *a)
{
	if (!file)
		return;
	a->file = intern(s, file, &a->names_truncated);
	a->comp_dir = intern(s, comp_dir, &a->names_truncated);
	a->line = line;
	a->column = column;
}

/* The three parts of an answer, from the index when the module has one,
 * else from libdw. */
static void fill_symbol(struct pl_symbolizer *s, struct pl_sym_module *m, uint64_t addr,
			struct pl_sym_answer *a)
{
	const char *name;
	uint64_t value;

	if (m->idx)
		pl_symindex_func(m->idx, addr, &name, &value);
	else
		eval_symbol(s, m, addr, &name, &value);
	apply_symbol(s, name, value, addr, a);
}

static void fill_line(struct pl_symbolizer *s, struct pl_sym_module *m, uint64_t addr,
		      struct pl_sym_answer *a)
{
	const char *file, *comp_dir;
	uint32_t line, column;

	if (m->idx)
		pl_symindex_line(m->idx, addr, &file, &comp_dir, &line, &column);
	else
		eval_line(m, addr, &file, &comp_dir, &line, &column);
	apply_line(s, file, comp_dir, line, column, a);
}

static void fill_scopes(struct pl_symbolizer *s, struct pl_sym_module *m, uint64_t addr,
			struct pl_sym_answer *a)
{
	struct pl_symindex_scope sc;

	if (m->idx)
		pl_symindex_scope(m->idx, addr, &sc);
	else
		eval_scopes(m, addr, &sc);
	apply_scopes(s, &sc, a);
}

static const char *unresolved_reason(struct pl_symbolizer *s, struct pl_sym_module *m,
				     uint64_t addr)
{
	if (m->nsyms == 0 && !m->has_dwarf)
		return internf(s, "'%s' has no symbol table and no DWARF: it is stripped and no debug "
			       "file was found (tried: %s%s%s)", m->path,
			       m->tried.data ? m->tried.data : "no .gnu_debuglink or build-id to look by",
			       m->debuginfod_error ? "; debuginfod: " : "",
			       m->debuginfod_error ? m->debuginfod_error : "");
	(void)addr;
	return "no symbol or DWARF function covers the offset (padding between functions, or code "
	       "without symbols)";
}

static void fill_answer(struct pl_symbolizer *s, struct pl_sym_module *m, uint64_t addr,
			bool want_inlines, struct answer_rec *r)
{
	struct pl_sym_answer *a = &r->pub;

	memset(r, 0, sizeof(*r));
	a->offset = addr;
	if (!in_exec(m, addr)) {
		r->dwarf_done = true;
		a->reason = m->nexec
			? internf(s, "offset 0x%llx is outside the executable sections of '%s' "
				  "(code spans 0x%llx-0x%llx); pass a module offset, not a runtime address",
				  (unsigned long long)addr, m->path,
				  (unsigned long long)m->exec[0].start,
				  (unsigned long long)m->exec[m->nexec - 1].end)
			: internf(s, "'%s' has no executable sections", m->path);
		return;
	}
	if (m->idx)
		s->stats.index_hits++;
	else
		m->direct_lookups++;
	fill_symbol(s, m, addr, a);
	fill_line(s, m, addr, a);
	if (want_inlines && m->has_dwarf)
		fill_scopes(s, m, addr, a);
	r->dwarf_done = want_inlines || !m->has_dwarf;
	a->resolved = a->function || a->dwarf_function;
	if (!a->resolved)
		a->reason = unresolved_reason(s, m, addr);
}

/* ------------------------------------------------------- index: identity */

static void stat_identity(const struct stat *st, uint64_t *size, int64_t *s, int64_t *ns)
{
	*size = (uint64_t)st->st_size;
	*s = (int64_t)st->st_mtim.tv_sec;
	*ns = (int64_t)st->st_mtim.tv_nsec;
}

static bool same_identity(const char *path, uint64_t size, int64_t s, int64_t ns)
{
	struct stat st;
	uint64_t z;
	int64_t a, b;

	if (!path || path[0] != '/' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	stat_identity(&st, &z, &a, &b);
	return z == size && a == s && b == ns;
}

static bool debuginfod_on(const struct pl_symbolizer *s)
{
	return s->dbg && s->dbg->urls && *s->dbg->urls;
}

/* The identity of what the module's answers came from, after
 * prepare_dwfl; false when it cannot be pinned down (then no index file
 * is written: it could not be checked when read back). */
static bool current_source(const struct pl_sym_module *m, struct pl_symindex_source *src)
{
	struct stat st;

	memset(src, 0, sizeof(*src));
	snprintf(src->build_id, sizeof(src->build_id), "%s", m->build_id);
	src->has_dwarf = m->has_dwarf;
	src->nsyms = m->nsyms;
	if (!*m->build_id || m->search_unrecorded || m->path[0] != '/' || stat(m->path, &st) != 0)
		return false;
	stat_identity(&st, &src->main_size, &src->main_mtime_s, &src->main_mtime_ns);
	src->debug_searched = m->debug_searched;
	if (!m->debug_searched)
		return true;
	src->has_debuglink = m->search_has_link;
	snprintf(src->debuglink, sizeof(src->debuglink), "%s", m->search_link);
	src->debuglink_crc = m->search_crc;
	/* The search found nothing: only while debuginfod is off is that
	 * the answer next time too. */
	if (m->debug_source == PL_DEBUG_NONE || !m->debug_path)
		return !debuginfod_on(m->owner) && m->debug_source == PL_DEBUG_NONE;
	if (strlen(m->debug_path) >= sizeof(src->debug_path) || m->debug_path[0] != '/' ||
	    stat(m->debug_path, &st) != 0)
		return false;
	src->debug_source = (uint32_t)m->debug_source;
	memcpy(src->debug_path, m->debug_path, strlen(m->debug_path) + 1);
	stat_identity(&st, &src->debug_size, &src->debug_mtime_s, &src->debug_mtime_ns);
	return true;
}

/* Would libdw reach the same files now?  The module file must be the
 * same (size, mtime; the build-id matched already), and a debug search
 * run again with the arguments libdwfl gave must find the same file,
 * unchanged.  Fills the module's debug fields as find_debuginfo would. */
static bool source_matches(struct pl_sym_module *m, const struct pl_symindex_source *src,
			   const char **why)
{
	const struct pl_symbolizer *s = m->owner;
	char found[PATH_MAX];
	enum pl_debug_source got;

	*why = "the module file changed since the index was built";
	if (!same_identity(m->path, src->main_size, src->main_mtime_s, src->main_mtime_ns))
		return false;
	if (!src->debug_searched)
		return true;
	*why = "the debug file found now is not the one the index was built from";
	got = pl_elf_find_debug_file(m->path, m->build_id, src->has_debuglink ? src->debuglink : NULL,
				     src->debuglink_crc, s->cfg ? s->cfg->sysroot : NULL, found,
				     sizeof(found), &m->tried);
	switch (src->debug_source) {
	case PL_DEBUG_DEBUGLINK:
	case PL_DEBUG_BUILD_ID:
		if (got != src->debug_source || strcmp(found, src->debug_path) != 0)
			return false;
		break;
	case PL_DEBUG_DEBUGINFOD:
		if (got != PL_DEBUG_NONE || !debuginfod_on(s))
			return false;
		break;
	case PL_DEBUG_NONE:
		return got == PL_DEBUG_NONE && !debuginfod_on(s);
	default:
		return false;
	}
	if (!same_identity(src->debug_path, src->debug_size, src->debug_mtime_s, src->debug_mtime_ns))
		return false;
	set_debug(m, (enum pl_debug_source)src->debug_source, src->debug_path);
	return true;
}

/* ------------------------------------------------------- index: use */

static void set_note(struct pl_sym_module *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_note(struct pl_sym_module *m, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(m->index_note);
	m->index_note = pl_xstrdup(buf);
}

/* DIR/<build-id>.idx, or DIR/<build-id>.debug.idx for a module that is
 * itself a separate debug file (opened by build-id): the two are other
 * files with the same build-id, and one name for both would have each
 * open refuse and rewrite the other's index. */
static bool index_path(const struct pl_sym_module *m, char *out, size_t cap)
{
	const char *dir = m->owner->index_dir;

	return dir && *m->build_id &&
	       (size_t)snprintf(out, cap, "%s/%s%s.idx", dir, m->build_id,
				m->debug_only ? ".debug" : "") < cap;
}

/* The module's tables from a checked index: what prepare_dwfl would
 * have found, without libdw. */
static void adopt_index(struct pl_sym_module *m, struct pl_symindex *x)
{
	const struct pl_symindex_source *src = pl_symindex_source(x);
	size_t cap = 0;

	m->idx = x;
	m->has_dwarf = src->has_dwarf;
	m->debug_searched = src->debug_searched;
	m->nsyms = (size_t)src->nsyms;
	if (m->has_dwarf && m->debug_source == PL_DEBUG_NONE)
		set_debug(m, m->debug_only ? m->opened_via : PL_DEBUG_EMBEDDED,
			  m->debug_only ? m->path : NULL);
	free(m->exec);
	m->exec = NULL;
	m->nexec = 0;
	for (size_t i = 0; i < pl_symindex_exec_count(x); i++) {
		uint64_t a, b;
		pl_symindex_exec_range(x, i, &a, &b);
		PL_GROW(m->exec, cap, m->nexec + 1);
		m->exec[m->nexec++] = (struct exec_range){a, b};
	}
	free(m->index_note);
	m->index_note = NULL;
}

/* A valid index file for this module from the same files: true when it
 * now answers the module's lookups. */
static bool index_load(struct pl_sym_module *m)
{
	struct pl_symbolizer *s = m->owner;
	struct pl_symindex *x;
	struct pl_error e;
	char path[PATH_MAX];
	const char *why;

	if (s->index_mode == PL_SYM_INDEX_OFF || !index_path(m, path, sizeof(path)))
		return false;
	if (pl_symindex_open(path, m->build_id, &x, &e) != PL_OK) {
		if (e.code != PL_ERR_INPUT) {
			s->stats.indexes_refused++;
			set_note(m, "%s", e.text);
		}
		return false;
	}
	if (!source_matches(m, pl_symindex_source(x), &why)) {
		s->stats.indexes_refused++;
		set_note(m, "symbol index refused: %s", why);
		pl_symindex_free(x);
		set_debug(m, PL_DEBUG_NONE, NULL);
		pl_buf_release(&m->tried);
		return false;
	}
	s->stats.indexes_loaded++;
	adopt_index(m, x);
	return true;
}

/* ------------------------------------------------------ index: build */

/* Addresses where an answer may change.  libdw only compares addresses
 * (<, <=, >, ==) with fixed values: symbol starts and ends, line-table
 * rows, arange and DIE range bounds, section bounds.  Its answer is thus
 * constant from one of these points (or the address after one) up to the
 * next, and one evaluation per point gives the answer everywhere. */
struct points {
	uint64_t *v;
	size_t n, cap;
};

static void add_point(void *ctx, uint64_t v)
{
	struct points *p = ctx;

	PL_GROW(p->v, p->cap, p->n + 1);
	p->v[p->n++] = v;
}

/* v and v + 1 (for comparisons with <= and ==). */
static void add_bound(struct points *p, uint64_t v)
{
	add_point(p, v);
	if (v != UINT64_MAX)
		add_point(p, v + 1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Sorted, unique, and only those inside the executable ranges (whose
 * bounds are added first): the only addresses lookups reach. */
static void settle(const struct pl_sym_module *m, struct points *p)
{
	size_t k = 0;

	for (size_t i = 0; i < m->nexec; i++) {
		add_bound(p, m->exec[i].start);
		add_bound(p, m->exec[i].end);
	}
	qsort(p->v, p->n, sizeof(*p->v), cmp_u64);
	for (size_t i = 0; i < p->n; i++)
		if ((i == 0 || p->v[i] != p->v[i - 1]) && in_exec(m, p->v[i]))
			p->v[k++] = p->v[i];
	p->n = k;
}

struct build_ctx {
	struct pl_symbolizer *s;
	struct pl_sym_module *m;
	struct pl_symindex_builder *b;
	Dwarf *dw;
	uint64_t deadline_ms, steps;
	const char *why;               /* why the build was given up */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool over_budget(struct build_ctx *c)
{
	if ((++c->steps & 1023) != 0)
		return false;
	if (pl_symindex_builder_bytes(c->b) > PL_SYMINDEX_MAX_BYTES)
		c->why = "it would pass the index size bound";
	else if (now_ms() > c->deadline_ms)
		c->why = "it took longer than the build time bound";
	return c->why != NULL;
}

static bool build_funcs(struct build_ctx *c)
{
	struct pl_sym_module *m = c->m;
	struct points p = {0};
	bool ok = true;

	for (size_t i = 0; i < m->nsyms; i++) {
		add_bound(&p, m->syms[i].value);
		if (m->syms[i].value + m->syms[i].size > m->syms[i].value)
			add_bound(&p, m->syms[i].value + m->syms[i].size);
	}
	settle(m, &p);
	for (size_t i = 0; ok && i < p.n; i++) {
		const char *name;
		uint64_t value;
		eval_symbol(c->s, m, p.v[i], &name, &value);
		pl_symindex_add_func(c->b, p.v[i], name, value);
		ok = !over_budget(c);
	}
	free(p.v);
	return ok;
}

static void add_arange_points(Dwarf *dw, struct points *p)
{
	Dwarf_Aranges *ar;
	size_t n;

	if (dwarf_getaranges(dw, &ar, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Addr start;
		Dwarf_Word len;
		Dwarf_Off off;
		if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &start, &len, &off) == 0) {
			add_bound(p, start);
			add_bound(p, start + len);
		}
	}
}

static bool build_lines(struct build_ctx *c)
{
	struct points p = {0};
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t type;
	bool ok = true;

	add_arange_points(c->dw, &p);
	while (dwarf_get_units(c->dw, cu, &cu, NULL, &type, &cudie, NULL) == 0) {
		Dwarf_Lines *lines;
		size_t n;
		if (dwarf_getsrclines(&cudie, &lines, &n) != 0)
			continue;
		for (size_t i = 0; i < n; i++) {
			Dwarf_Addr a;
			if (dwarf_lineaddr(dwarf_onesrcline(lines, i), &a) == 0)
				add_bound(&p, a);
		}
	}
	settle(c->m, &p);
	for (size_t i = 0; ok && i < p.n; i++) {
		const char *file, *comp_dir;
		uint32_t line, column;
		eval_line(c->m, p.v[i], &file, &comp_dir, &line, &column);
		pl_symindex_add_line(c->b, p.v[i], file, comp_dir, line, column);
		ok = !over_budget(c);
	}
	free(p.v);
	return ok;
}

static bool build_scopes(struct build_ctx *c)
{
	struct points p = {0};
	bool ok = true;

	add_arange_points(c->dw, &p);
	if (!pl_dw_scopes_bounds(c->dw, add_point, &p)) {
		free(p.v);
		c->why = "its DWARF has more DIEs than the walk bound";
		return false;
	}
	settle(c->m, &p);
	for (size_t i = 0; ok && i < p.n; i++) {
		struct pl_symindex_scope sc;
		eval_scopes(c->m, p.v[i], &sc);
		pl_symindex_add_scope(c->b, p.v[i], &sc);
		ok = !over_budget(c);
	}
	free(p.v);
	return ok;
}

/* Build the module's index from libdw (prepare_dwfl ran), write it to the
 * cache folder when there is one and the sources can be checked later,
 * and answer from it.  Any failure leaves the module on libdw, noted. */
static void index_build(struct pl_sym_module *m)
{
	struct pl_symbolizer *s = m->owner;
	struct pl_sym_stats saved = s->stats;   /* the build's own lookups do not count */
	struct build_ctx c = {.s = s, .m = m, .deadline_ms = now_ms() + PL_SYM_INDEX_BUILD_MAX_MS};
	struct pl_symindex_source src;
	struct pl_symindex *x;
	struct pl_error e;
	Dwarf_Addr bias;
	char path[PATH_MAX];
	void *blob;
	size_t len;
	bool ok, persist;

	m->index_built_tried = true;
	if (m->nsyms == 0 && !m->has_dwarf) {
		set_note(m, "no symbol index: the module has no symbols or DWARF to index");
		return;
	}
	c.dw = m->has_dwarf ? dwfl_module_getdwarf(m->mod, &bias) : NULL;
	c.b = pl_symindex_builder_new();
	for (size_t i = 0; i < m->nexec; i++)
		pl_symindex_add_exec(c.b, m->exec[i].start, m->exec[i].end);
	ok = build_funcs(&c) && (!c.dw || (build_lines(&c) && build_scopes(&c)));
	s->stats = saved;
	if (!ok) {
		pl_symindex_builder_free(c.b);
		set_note(m, "no symbol index: %s (%llu MiB, %d s); lookups use libdw", c.why,
			 (unsigned long long)(PL_SYMINDEX_MAX_BYTES >> 20), PL_SYM_INDEX_BUILD_MAX_MS / 1000);
		return;
	}
	persist = current_source(m, &src);
	if (pl_symindex_finish(c.b, &src, &blob, &len, &e) != PL_OK) {
		set_note(m, "no symbol index: %s; lookups use libdw", e.text);
		return;
	}
	if (persist && index_path(m, path, sizeof(path)))
		pl_symindex_save(blob, len, path, &e);   /* a cache: failing to write is no error */
	if (pl_symindex_from_blob(blob, len, m->build_id, &x, &e) != PL_OK) {
		set_note(m, "no symbol index: %s", e.text);
		return;
	}
	s->stats.indexes_built++;
	m->idx = x;
	free(m->index_note);
	m->index_note = NULL;
}

enum pl_err pl_sym_lookup(struct pl_symbolizer *s, struct pl_sym_module *m, uint64_t offset,
			  bool want_inlines, const struct pl_sym_answer **ans,
			  struct pl_error *err)
{
	struct cache_slot *c;
	struct answer_rec *r;

	if (!s || !m || m->owner != s)
		return pl_fail(err, PL_ERR_USAGE, NULL, "module from another symbolizer");
	s->stats.lookups++;
	c = cache_find(s, m->id, offset);
	if (c->answer1) {
		r = answer_at(s, c->answer1 - 1);
		if (!want_inlines || r->dwarf_done) {
			s->stats.cache_hits++;
			*ans = &r->pub;
			return PL_OK;
		}
		fill_answer(s, m, offset, true, r);  /* in place: the pointer stays valid */
		*ans = &r->pub;
		return PL_OK;
	}
	if (s->nanswers >= PL_SYM_MAX_ANSWERS)
		return pl_fail(err, PL_ERR_LIMIT, "symbolize fewer distinct offsets per session",
			       "more than %u distinct offsets symbolized", PL_SYM_MAX_ANSWERS);
	prepare(m);
	if (!m->idx && !m->index_built_tried && s->index_mode == PL_SYM_INDEX_AUTO && !s->index_dir &&
	    m->direct_lookups >= PL_SYM_INDEX_MEMORY_AFTER)
		index_build(m);
	r = new_answer(s);
	fill_answer(s, m, offset, want_inlines, r);
	*c = (struct cache_slot){offset, m->id, (uint32_t)s->nanswers};
	if (2 * s->nanswers > s->nslots)
		cache_grow(s);
	*ans = &r->pub;
	return PL_OK;
}

/* ---------------------------------------------------------- lifecycle */

struct pl_symbolizer *pl_symbolizer_new(const struct pl_sym_cfg *cfg,
					const struct pl_debuginfod *dbg)
{
	struct pl_symbolizer *s = pl_xcalloc(1, sizeof(*s));

	elf_version(EV_CURRENT);
	s->cfg = cfg;
	s->dbg = dbg;
	s->nslots = 1024;
	s->slots = pl_xcalloc(s->nslots, sizeof(*s->slots));
	pl_strtab_init(&s->strings);
	return s;
}

void pl_symbolizer_free(struct pl_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nmodules; i++)
		module_free(s->modules[i]);
	for (size_t i = 0; i < s->nablocks; i++)
		free(s->ablocks[i]);
	free(s->ablocks);
	for (size_t i = 0; i < s->niblocks; i++)
		free(s->iblocks[i]);
	free(s->iblocks);
	free(s->slots);
	pl_strtab_release(&s->strings);
	free(s->index_dir);
	free(s);
}

void pl_symbolizer_set_index_max_source(struct pl_symbolizer *s, uint64_t max_bytes)
{
	s->index_max_source = max_bytes;
}

void pl_symbolizer_set_index(struct pl_symbolizer *s, enum pl_sym_index_mode mode,
			     const char *dir)
{
	s->index_mode = mode;
	free(s->index_dir);
	s->index_dir = dir && *dir ? pl_xstrdup(dir) : NULL;
}

size_t pl_symbolizer_indexes_wanted(const struct pl_symbolizer *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nmodules; i++)
		n += s->modules[i]->index_wanted && !s->modules[i]->idx;
	return n;
}

size_t pl_symbolizer_build_indexes(struct pl_symbolizer *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nmodules; i++) {
		struct pl_sym_module *m = s->modules[i];
		if (!m->index_wanted || m->idx || m->index_built_tried)
			continue;
		index_build(m);
		m->index_wanted = false;
		n += m->idx != NULL;
	}
	return n;
}

void pl_symbolizer_stats(const struct pl_symbolizer *s, struct pl_sym_stats *st)
{
	*st = s->stats;
	st->modules = s->nmodules;
	st->answers = s->nanswers;
}
