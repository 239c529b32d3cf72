/* pdsyms.c - perf 6.1's symbol tables (see pdsyms.h).
 *
 * Follows util/symbol.c (dso__load, symbols__fixup_end,
 * symbols__fixup_duplicate, choose_best_symbol, symbols__find) and
 * util/symbol-elf.c (dso__load_sym, dso__synthesize_plt_symbols as in
 * 6.1, before .plt.sec support).  Symbols live
 * in perf's own red-black tree (pdtree.c), so that overlapping symbols
 * resolve as perf's tree walk resolves them.  A kallsyms table whose
 * fixed-up ranges are disjoint (the usual case) skips the tree: any tree
 * gives the one symbol holding an address, so a binary search over the
 * sorted survivors answers the same (fixup_flat, find_flat).
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pdsyms.h"
#include "base/util.h"

/* ------------------------------------------------------------ table */

static void add_sym(struct pd_symtab *t, uint64_t start, uint64_t size, uint8_t bind, uint8_t type,
		    const char *name, size_t nlen)
{
	PL_GROW(t->v, t->cap, t->n + 1);
	if (t->names_len + nlen + 1 > t->names_cap) {
		t->names_cap = (t->names_len + nlen + 1) * 2;
		t->names = pl_xrealloc(t->names, t->names_cap);
	}
	memcpy(t->names + t->names_len, name, nlen);
	t->names[t->names_len + nlen] = '\0';
	t->v[t->n++] = (struct pd_sym){start, size ? start + size : start, (uint32_t)t->names_len, bind,
				       type, 0, 0};
	t->names_len += nlen + 1;
}

/* Every symbol added since `from` goes into the tree, in order. */
static void tree_add_new(struct pd_symtab *t, size_t from)
{
	for (size_t i = from; i < t->n; i++)
		pd_tree_insert(t, (uint32_t)i);
}

static int underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* perf's choose_best_symbol: true when `a` wins. */
static bool a_is_best(const struct pd_symtab *t, const struct pd_sym *a, const struct pd_sym *b)
{
	uint64_t la = a->end - a->start, lb = b->end - b->start;
	const char *na = pd_sym_name(t, a), *nb = pd_sym_name(t, b);

	if (lb == 0 && la > 0)
		return true;
	if (la == 0 && lb > 0)
		return false;
	if ((b->binding == STB_WEAK) != (a->binding == STB_WEAK))
		return b->binding == STB_WEAK;
	if ((a->binding == STB_GLOBAL) != (b->binding == STB_GLOBAL))
		return a->binding == STB_GLOBAL;
	if (underscores(na) != underscores(nb))
		return underscores(nb) > underscores(na);
	return strlen(na) >= strlen(nb);
}

#define N(i) (t->v[i])

/* symbols__fixup_end then symbols__fixup_duplicate, over the tree. */
static void fixup(struct pd_symtab *t, bool kallsyms)
{
	uint32_t prev = pd_tree_first(t), curr, next;

	if (prev == PD_NIL)
		return;
	for (curr = pd_tree_next(t, prev); curr != PD_NIL; prev = curr, curr = pd_tree_next(t, curr)) {
		if (N(prev).end == N(prev).start) {
			if (kallsyms && (!strchr(pd_sym_name(t, &N(prev)), '[') !=
					 !strchr(pd_sym_name(t, &N(curr)), '[')))
				N(prev).end = ((N(prev).end + 4096) + 4095) / 4096 * 4096;
			else
				N(prev).end = N(curr).start;
		}
	}
	if (N(prev).end == N(prev).start)
		N(prev).end = (N(prev).start + 4095) / 4096 * 4096 + 4096;
	for (curr = pd_tree_first(t); curr != PD_NIL;) {
		next = pd_tree_next(t, curr);
		if (next == PD_NIL)
			break;
		if (N(curr).start != N(next).start) {
			curr = next;
			continue;
		}
		if (a_is_best(t, &N(curr), &N(next))) {
			pd_tree_erase(t, next);   /* and compare curr with its new next */
			continue;
		}
		pd_tree_erase(t, curr);
		curr = next;
	}
}

/* Index order of v by start, equal starts in insertion order: the
 * tree's in-order sequence.  kallsyms comes sorted, so one pass checks. */
static uint32_t *order_by_start(const struct pd_symtab *t)
{
	uint32_t *o = pl_xmalloc((t->n + 1) * sizeof(*o));
	bool sorted = true;

	for (size_t i = 0; i < t->n; i++) {
		o[i] = (uint32_t)i;
		if (i && t->v[i - 1].start > t->v[i].start)
			sorted = false;
	}
	if (!sorted) {
		/* Insertion into runs is too slow for a shuffled table: a
		 * merge sort keyed on (start, index) keeps equal starts stable. */
		uint32_t *tmp = pl_xmalloc((t->n + 1) * sizeof(*tmp));
		for (size_t w = 1; w < t->n; w *= 2) {
			for (size_t lo = 0; lo < t->n; lo += 2 * w) {
				size_t mid = lo + w < t->n ? lo + w : t->n;
				size_t hi = lo + 2 * w < t->n ? lo + 2 * w : t->n, a = lo, b = mid, k = lo;
				while (a < mid && b < hi)
					tmp[k++] = t->v[o[b]].start < t->v[o[a]].start ? o[b++] : o[a++];
				while (a < mid)
					tmp[k++] = o[a++];
				while (b < hi)
					tmp[k++] = o[b++];
			}
			uint32_t *x = o;
			o = tmp;
			tmp = x;
		}
		free(tmp);
	}
	return o;
}

/* fixup() over the sorted order instead of the tree: the same ends and
 * the same survivors (its in-order walk is this order, and an erase
 * keeps the order of the rest).  Leaves the survivors in t->flat when
 * their ranges are disjoint; otherwise restores v and returns false. */
static bool fixup_flat(struct pd_symtab *t, bool kallsyms)
{
	uint32_t *o = order_by_start(t);
	size_t n = t->n, out = 0;

	for (size_t k = 0; k + 1 < n; k++) {
		struct pd_sym *prev = &N(o[k]), *curr = &N(o[k + 1]);
		if (prev->end != prev->start)
			continue;
		if (kallsyms && (!strchr(pd_sym_name(t, prev), '[') != !strchr(pd_sym_name(t, curr), '[')))
			prev->end = ((prev->end + 4096) + 4095) / 4096 * 4096;
		else
			prev->end = curr->start;
	}
	if (n && N(o[n - 1]).end == N(o[n - 1]).start)
		N(o[n - 1]).end = (N(o[n - 1]).start + 4095) / 4096 * 4096 + 4096;
	for (size_t k = 0; k < n; k++) {
		uint32_t i = o[k];
		if (out && N(o[out - 1]).start == N(i).start) {
			if (a_is_best(t, &N(o[out - 1]), &N(i))) {
				N(i).erased = 1;
			} else {
				N(o[out - 1]).erased = 1;
				o[out - 1] = i;
			}
			continue;
		}
		o[out++] = i;
	}
	/* Disjoint: each survivor ends by the next one's start, so exactly
	 * one holds an address, and perf's walk down any tree finds it. */
	for (size_t k = 0; k + 1 < out; k++)
		if (N(o[k]).end > N(o[k + 1]).start) {
			free(o);
			return false;
		}
	t->flat = o;
	t->nflat = out;
	return true;
}

/* The last survivor starting at or before ip, if it holds ip (as
 * symbols__find's test: start <= ip < end, or ip at a zero-size one; an
 * end that wrapped past 2^64 holds nothing). */
static const struct pd_sym *find_flat(const struct pd_symtab *t, uint64_t ip)
{
	size_t lo = 0, hi = t->nflat;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[t->flat_all ? mid : t->flat[mid]].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct pd_sym *s = &t->v[t->flat_all ? lo - 1 : t->flat[lo - 1]];
	return ip < s->end || (ip == s->end && ip == s->start) ? s : NULL;
}

const struct pd_sym *pd_symtab_find(const struct pd_symtab *t, uint64_t ip)
{
	if (t->flat || t->flat_all)
		return find_flat(t, ip);
	uint32_t n = t->n ? t->root : PD_NIL;

	while (n != PD_NIL) {
		const struct pd_sym *s = &t->v[n];
		if (ip < s->start)
			n = t->nodes[n].left;
		else if (ip > s->end || (ip == s->end && ip != s->start))
			n = t->nodes[n].right;
		else
			return s;
	}
	return NULL;
}

void pd_symtab_release(struct pd_symtab *t)
{
	if (t->map)
		munmap(t->map, t->map_len);
	if (!t->external) {
		free(t->v);
		free(t->names);
	}
	free(t->flat);
	free(t->nodes);
	memset(t, 0, sizeof(*t));
	t->root = PD_NIL;
}

/* ------------------------------------------------------------ ELF */

struct src {
	int fd;
	Elf *elf;
	GElf_Ehdr eh;
	Elf_Scn *symtab, *dynsym;
	GElf_Shdr symshdr, dynshdr;
	size_t dynsym_idx;
	char path[4096];
};

static void src_close(struct src *s)
{
	if (s->elf)
		elf_end(s->elf);
	if (s->fd >= 0)
		close(s->fd);
	s->elf = NULL;
	s->fd = -1;
}

static Elf_Scn *section_by_name(Elf *elf, const GElf_Ehdr *eh, const char *name, GElf_Shdr *sh,
				size_t *idx)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	(void)eh;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;
		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && strcmp(n, name) == 0) {
			if (idx)
				*idx = elf_ndxscn(scn);
			return scn;
		}
	}
	return NULL;
}

/* The GNU build-id note of an ELF, in hex; false when none. */
static bool elf_build_id(Elf *elf, char *hex)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)d->d_buf + noff, "GNU", 4) == 0 && nh.n_descsz > 0 &&
			    nh.n_descsz <= 20) {
				pl_hex((const unsigned char *)d->d_buf + doff, nh.n_descsz, hex);
				return true;
			}
		}
	}
	return false;
}

/* Open a candidate; false when it is not a usable ELF of that build-id. */
static bool src_open(struct src *s, const char *path, const char *build_id)
{
	char hex[41];

	memset(s, 0, sizeof(*s));
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0)
		return false;
	s->elf = elf_begin(s->fd, ELF_C_READ_MMAP, NULL);
	if (!s->elf || elf_kind(s->elf) != ELF_K_ELF || !gelf_getehdr(s->elf, &s->eh)) {
		src_close(s);
		return false;
	}
	if (build_id[0] && (!elf_build_id(s->elf, hex) || strcmp(hex, build_id) != 0)) {
		src_close(s);
		return false;
	}
	s->symtab = section_by_name(s->elf, &s->eh, ".symtab", &s->symshdr, NULL);
	if (s->symtab && s->symshdr.sh_type != SHT_SYMTAB)
		s->symtab = NULL;
	s->dynsym = section_by_name(s->elf, &s->eh, ".dynsym", &s->dynshdr, &s->dynsym_idx);
	if (s->dynsym && s->dynshdr.sh_type != SHT_DYNSYM)
		s->dynsym = NULL;
	snprintf(s->path, sizeof(s->path), "%s", path);
	return true;
}

static bool phdr_of(Elf *elf, uint64_t vaddr, GElf_Phdr *ph)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, ph) || ph->p_type != PT_LOAD)
			continue;
		uint64_t sz = ph->p_memsz > ph->p_filesz ? ph->p_memsz : ph->p_filesz;
		if (sz && vaddr >= ph->p_vaddr && vaddr < ph->p_vaddr + sz)
			return true;
	}
	return false;
}

static bool sec_name_has(Elf *elf, const GElf_Shdr *sh, const char *what)
{
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	n = elf_strptr(elf, shstrndx, sh->sh_name);
	return n && strstr(n, what);
}

/* dso__load_sym: the symbols of `syms` (its .symtab, else .dynsym).
 * A symbol whose section index names no section (SHN_ABS objects such
 * as libc's GLIBC_2.x version symbols) is left out. */
static bool load_sym(struct pd_symtab *t, struct src *syms, struct src *run)
{
	Elf_Scn *sec = syms->symtab ? syms->symtab : syms->dynsym;
	GElf_Shdr sh = syms->symtab ? syms->symshdr : syms->dynshdr;
	Elf_Data *data = elf_getdata(sec, NULL);
	Elf_Scn *strsec;
	size_t nsyms;

	if (!data || !sh.sh_entsize || !(strsec = elf_getscn(syms->elf, sh.sh_link)))
		return false;
	nsyms = sh.sh_size / sh.sh_entsize;
	for (size_t i = 0; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Shdr ssh;
		GElf_Phdr ph;
		const char *name;
		int type, vis;
		bool label, func;
		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		vis = GELF_ST_VISIBILITY(sym.st_other);
		func = (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_OBJECT) &&
		       sym.st_name != 0 && sym.st_shndx != SHN_UNDEF;
		label = type == STT_NOTYPE && sym.st_name != 0 && sym.st_shndx != SHN_UNDEF &&
			sym.st_shndx != SHN_ABS && vis != STV_HIDDEN && vis != STV_INTERNAL;
		if (!func && !label)
			continue;
		Elf_Scn *ss = elf_getscn(syms->elf, sym.st_shndx);
		if (!ss || !gelf_getshdr(ss, &ssh))
			continue;
		if (!(ssh.sh_flags & SHF_ALLOC))
			continue;
		Elf *secelf = syms->elf;
		if (ssh.sh_type == SHT_NOBITS) {
			Elf_Scn *rs = elf_getscn(run->elf, sym.st_shndx);
			if (!rs || !gelf_getshdr(rs, &ssh))
				continue;
			secelf = run->elf;
		}
		if (label && !sec_name_has(secelf, &ssh, "text") && !sec_name_has(secelf, &ssh, "data"))
			continue;
		if (phdr_of(run->elf, sym.st_value, &ph))
			sym.st_value -= ph.p_vaddr - ph.p_offset;
		else
			sym.st_value -= ssh.sh_addr - ssh.sh_offset;
		name = elf_strptr(syms->elf, sh.sh_link, sym.st_name);
		if (!name)
			continue;
		add_sym(t, sym.st_value, sym.st_size, (uint8_t)GELF_ST_BIND(sym.st_info), (uint8_t)type,
			name, strlen(name));
	}
	return t->n > 0;
}

/* dso__synthesize_plt_symbols (6.1): "name@plt" for each .rela.plt entry. */
static void synth_plt(struct pd_symtab *t, struct src *run)
{
	GElf_Shdr rel_sh, plt_sh;
	Elf_Scn *rel = section_by_name(run->elf, &run->eh, ".rela.plt", &rel_sh, NULL);
	bool rela = true;

	if (!run->dynsym)
		return;
	if (!rel) {
		rel = section_by_name(run->elf, &run->eh, ".rel.plt", &rel_sh, NULL);
		rela = false;
	}
	if (!rel || rel_sh.sh_link != run->dynsym_idx || !rel_sh.sh_entsize ||
	    !section_by_name(run->elf, &run->eh, ".plt", &plt_sh, NULL))
		return;
	Elf_Data *reld = elf_getdata(rel, NULL), *syms = elf_getdata(run->dynsym, NULL);
	if (!reld || !syms)
		return;
	uint64_t off = plt_sh.sh_offset + plt_sh.sh_entsize, n = rel_sh.sh_size / rel_sh.sh_entsize;
	for (uint64_t i = 0; i < n; i++) {
		GElf_Rela ra;
		GElf_Rel r;
		GElf_Sym sym;
		uint64_t info;
		char buf[1024];
		if (rela ? !gelf_getrela(reld, (int)i, &ra) : !gelf_getrel(reld, (int)i, &r))
			break;
		info = rela ? ra.r_info : r.r_info;
		if (!gelf_getsym(syms, (int)GELF_R_SYM(info), &sym))
			break;
		const char *name = elf_strptr(run->elf, run->dynshdr.sh_link, sym.st_name);
		int len = snprintf(buf, sizeof(buf), "%s@plt", name ? name : "");
		add_sym(t, off, plt_sh.sh_entsize, STB_GLOBAL, STT_FUNC, buf,
			len < (int)sizeof(buf) ? (size_t)len : sizeof(buf) - 1);
		off += plt_sh.sh_entsize;
	}
}

/* The .gnu_debuglink file name; false when none. */
static bool debuglink(Elf *elf, const GElf_Ehdr *eh, char *out, size_t cap)
{
	GElf_Shdr sh;
	Elf_Scn *scn = section_by_name(elf, eh, ".gnu_debuglink", &sh, NULL);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;

	if (!d || !d->d_buf || d->d_size < 2)
		return false;
	size_t n = strnlen(d->d_buf, d->d_size);
	if (n == 0 || n >= cap || n == d->d_size)
		return false;
	memcpy(out, d->d_buf, n + 1);
	return true;
}

static bool regular_file(const char *path)
{
	return access(path, R_OK) == 0;
}

/* Build the candidate list in perf's order (binary_type_symtab). */
static size_t candidates(const char *path, const char *build_id, char cand[][4096], size_t cap)
{
	size_t n = 0;
	char dir[4096], link[1024];
	const char *slash = strrchr(path, '/');
	struct src s;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 0, path);
	if (src_open(&s, path, "")) {
		if (debuglink(s.elf, &s.eh, link, sizeof(link))) {
			const char *fmts[] = {"%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s"};
			for (size_t i = 0; i < 3 && n < cap; i++) {
				snprintf(cand[n], 4096, fmts[i], dir, link);
				if (regular_file(cand[n])) {
					n++;
					break;
				}
			}
		}
		src_close(&s);
	}
	if (n < cap)
		snprintf(cand[n++], 4096, "/usr/lib/debug%s.debug", path);
	if (n < cap)
		snprintf(cand[n++], 4096, "/usr/lib/debug%s", path);
	if (build_id[0] && strlen(build_id) > 2 && n < cap)
		snprintf(cand[n++], 4096, "/usr/lib/debug/.build-id/%.2s/%s.debug", build_id, build_id + 2);
	if (n < cap)
		snprintf(cand[n++], 4096, "%s", path);
	return n;
}

static void load_from(struct pd_symtab *t, struct src *ss, size_t nss)
{
	struct src *syms = NULL, *run = NULL;

	for (size_t i = 0; i < nss; i++) {
		if (!syms && ss[i].symtab)
			syms = &ss[i];
		if (!run && ss[i].dynsym)
			run = &ss[i];
	}
	if (!syms)
		syms = run;
	if (!run)
		run = syms;
	if (!syms) {
		t->why = "no symbol table in the module";
		return;
	}
	t->loaded = true;
	snprintf(t->source, sizeof(t->source), "%s", syms->path);
	if (!load_sym(t, syms, run)) {
		t->n = 0;
		t->why = "no symbols in the module's table";
		return;
	}
	tree_add_new(t, 0);
	fixup(t, false);
	size_t before = t->n;
	synth_plt(t, run);
	tree_add_new(t, before);
}

void pd_symtab_load_elf(struct pd_symtab *t, const char *path, const char *build_id)
{
	char cand[6][4096], own[41] = "";
	struct src ss[2];
	size_t nss = 0;

	memset(t, 0, sizeof(*t));
	t->root = PD_NIL;
	elf_version(EV_CURRENT);
	if (!build_id[0]) {
		/* perf reads the file's own build-id when none was recorded. */
		struct src s;
		if (src_open(&s, path, "")) {
			elf_build_id(s.elf, own);
			src_close(&s);
		}
		build_id = own;
	}
	size_t n = candidates(path, build_id, cand, 6);
	for (size_t i = 0; i < n && nss < 2; i++) {
		struct src *s = &ss[nss];
		if (!src_open(s, cand[i], build_id))
			continue;
		bool keep = (s->symtab && !(nss && ss[0].symtab)) || (s->dynsym && !(nss && ss[0].dynsym));
		if (!keep || (!s->symtab && !s->dynsym)) {
			src_close(s);
			continue;
		}
		nss++;
		if (nss == 2 || (s->symtab && s->dynsym))
			break;
	}
	if (nss == 0)
		t->why = build_id[0] ? "no local file with the recorded build-id" : "module file not found";
	else
		load_from(t, ss, nss);
	for (size_t i = 0; i < nss; i++)
		src_close(&ss[i]);
}

/* ------------------------------------------------------------ perf maps */

void pd_symtab_parse_perfmap(struct pd_symtab *t, const char *text, size_t n)
{
	char *line = NULL;
	size_t cap = 0, from = t->n;

	if (from == 0)
		t->root = PD_NIL;
	for (size_t i = 0; i < n;) {
		const char *nl = memchr(text + i, '\n', n - i);
		size_t line_len = nl ? (size_t)(nl - (text + i)) + 1 : n - i, len;
		uint64_t start, size;
		char *end;

		if (line_len > PD_PERFMAP_LINE_MAX) {
			t->why = "a line of the perf map is over 1 MB: not read";
			i += line_len;
			continue;
		}
		if (line_len + 1 > cap) {
			cap = line_len + 1;
			line = pl_xrealloc(line, cap);
		}
		memcpy(line, text + i, line_len);
		i += line_len;
		/* getline's line, its last byte (the '\n') ended */
		line[line_len] = '\0';
		line[--line_len] = '\0';
		start = strtoull(line, &end, 16);
		len = (size_t)(end - line) + 1;
		if (len + 2 >= line_len)
			continue;
		size = strtoull(line + len, &end, 16);
		len = (size_t)(end - line) + 1;
		if (len + 2 >= line_len)
			continue;
		add_sym(t, start, size, STB_GLOBAL, STT_FUNC, line + len, strlen(line + len));
	}
	free(line);
	tree_add_new(t, from);
	t->loaded = true;
}

bool pd_symtab_load_perfmap(struct pd_symtab *t, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	char *text;
	size_t got = 0;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > PD_PERFMAP_MAX) {
		t->why = "the perf map is not a regular file of at most 256 MB: not read";
		close(fd);
		return true;
	}
	text = pl_xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size) {
		ssize_t k = read(fd, text + got, (size_t)st.st_size - got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	pd_symtab_parse_perfmap(t, text, got);
	snprintf(t->source, sizeof(t->source), "%s", path);
	free(text);
	return true;
}

void pd_symtab_load_vdso(struct pd_symtab *t, const char *build_id)
{
	const unsigned char *img = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	char hex[41];
	struct src s;

	memset(t, 0, sizeof(*t));
	t->root = PD_NIL;
	memset(&s, 0, sizeof(s));
	s.fd = -1;
	if (!img) {
		t->why = "this process has no vDSO";
		return;
	}
	elf_version(EV_CURRENT);
	/* The image ends with its section headers. */
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	s.elf = elf_memory((char *)img, size);
	if (!s.elf || !gelf_getehdr(s.elf, &s.eh)) {
		t->why = "cannot read this process's vDSO";
		src_close(&s);
		return;
	}
	if (build_id[0] && (!elf_build_id(s.elf, hex) || strcmp(hex, build_id) != 0)) {
		t->why = "the recorded [vdso] build-id is not this kernel's";
		src_close(&s);
		return;
	}
	s.symtab = section_by_name(s.elf, &s.eh, ".symtab", &s.symshdr, NULL);
	s.dynsym = section_by_name(s.elf, &s.eh, ".dynsym", &s.dynshdr, &s.dynsym_idx);
	snprintf(s.path, sizeof(s.path), "[vdso]");
	load_from(t, &s, 1);
	src_close(&s);
}

/* ------------------------------------------------------------ kernel */

/* Each byte's hex value, 16 for a non-digit: one load a character where
 * ctype calls were most of the parse of 122k kallsyms lines. */
#define HV(c) ((c) >= '0' && (c) <= '9' ? (c) - '0' : (c) >= 'a' && (c) <= 'f' ? (c) - 'a' + 10 : \
	       (c) >= 'A' && (c) <= 'F' ? (c) - 'A' + 10 : 16)
#define HV4(c) HV(c), HV((c) + 1), HV((c) + 2), HV((c) + 3)
#define HV16(c) HV4(c), HV4((c) + 4), HV4((c) + 8), HV4((c) + 12)
#define HV64(c) HV16(c), HV16((c) + 16), HV16((c) + 32), HV16((c) + 48)
static const uint8_t hex_value[256] = {HV64(0), HV64(64), HV64(128), HV64(192)};

static bool parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *q = *p;
	uint64_t x = 0;
	unsigned d;

	for (; q < end && (d = hex_value[(unsigned char)*q]) < 16; q++)
		x = x * 16 + d;
	if (q == *p)
		return false;
	*p = q;
	*v = x;
	return true;
}

/* Calls fn for each "ADDR TYPE NAME[\t[mod]]" line. */
static void kallsyms_each(const char *text, size_t n,
			  bool (*fn)(void *arg, uint64_t addr, char type, const char *name, size_t len),
			  void *arg)
{
	const char *p = text, *end = text + n;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *q = p;
		const char *le = nl ? nl : end;
		uint64_t addr;
		if (parse_hex(&q, le, &addr) && le - q >= 3 && q[0] == ' ' && q[2] == ' ') {
			if (!fn(arg, addr, q[1], q + 3, (size_t)(le - q - 3)))
				return;
		}
		p = le + 1;
	}
}

struct find_arg {
	const char *name;
	uint64_t addr;
	bool found;
};

static bool find_one(void *arg, uint64_t addr, char type, const char *name, size_t len)
{
	struct find_arg *a = arg;

	(void)type;
	if (strlen(a->name) == len && memcmp(a->name, name, len) == 0) {
		a->addr = addr;
		a->found = true;
		return false;
	}
	return true;
}

bool pd_kallsyms_addr(const char *text, size_t n, const char *name, uint64_t *addr)
{
	struct find_arg a = {name, 0, false};

	kallsyms_each(text, n, find_one, &a);
	*addr = a.addr;
	return a.found;
}

struct load_arg {
	struct pd_symtab *t;
	uint64_t delta;
};

/* A kept line becomes a symbol whose name stays where it is in the text
 * (t->names), ended in place: no copy of 122k names. */
static bool load_one(void *arg, uint64_t addr, char type, const char *name, size_t len)
{
	struct load_arg *a = arg;
	struct pd_symtab *t = a->t;
	bool upper = type >= 'A' && type <= 'Z';
	char u = upper || type < 'a' || type > 'z' ? type : (char)(type - 'a' + 'A');

	if ((u != 'T' && u != 'W' && u != 'D' && u != 'B') || (len && name[0] == '$'))
		return true;
	uint8_t bind = type == 'W' ? STB_WEAK : upper ? STB_GLOBAL : STB_LOCAL;
	uint8_t st = (u == 'T' || u == 'W') ? STT_FUNC : STT_OBJECT;
	size_t off = (size_t)(name - t->names);
	/* Module symbols ("name\t[mod]") keep their tab: they are other maps'. */
	uint64_t start = addr - (memchr(name, '\t', len) ? 0 : a->delta);
	t->names[off + len] = '\0';   /* the line's '\n', or the text's own NUL */
	PL_GROW(t->v, t->cap, t->n + 1);
	t->v[t->n++] = (struct pd_sym){start, start, (uint32_t)off, bind, st, 0, 0};
	return true;
}

void pd_symtab_adopt_kallsyms(struct pd_symtab *t, char *text, size_t n, uint64_t delta)
{
	struct load_arg a = {t, delta};
	size_t lines = 1;

	memset(t, 0, sizeof(*t));
	t->root = PD_NIL;
	t->names = text;
	t->names_len = t->names_cap = n + 1;
	/* One array of the right size: growing it by doubling copied and
	 * faulted in twice its 5 MB. */
	for (const char *p = text, *end = text + n; (p = memchr(p, '\n', (size_t)(end - p))); p++)
		lines++;
	t->cap = n / 16 + 1 < lines ? n / 16 + 1 : lines;
	t->v = pl_xmalloc(t->cap * sizeof(*t->v));
	pl_prefault(t->v, t->cap * sizeof(*t->v));
	kallsyms_each(text, n, load_one, &a);
	if (!fixup_flat(t, true)) {
		/* Overlaps (a module's first symbol within the page rounding of
		 * the symbol before it): perf's tree decides.  kallsyms gives no
		 * sizes, so every end was its start. */
		for (size_t i = 0; i < t->n; i++) {
			t->v[i].end = t->v[i].start;
			t->v[i].erased = 0;
		}
		tree_add_new(t, 0);
		fixup(t, true);
	}
	t->loaded = t->n > 0;
	snprintf(t->source, sizeof(t->source), "kallsyms");
	if (!t->loaded)
		t->why = "kallsyms holds no symbols";
}

void pd_symtab_load_kallsyms(struct pd_symtab *t, const char *text, size_t n, uint64_t delta)
{
	char *copy = pl_xmalloc(n + 1);

	memcpy(copy, text, n);
	copy[n] = '\0';
	pd_symtab_adopt_kallsyms(t, copy, n, delta);
}

bool pd_kernel_notes_build_id(const unsigned char *p, size_t n, char *hex)
{
	size_t off = 0;

	while (n - off >= 12) {
		uint32_t namesz, descsz, type;
		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		size_t nlen = ((size_t)namesz + 3) & ~(size_t)3, dlen = ((size_t)descsz + 3) & ~(size_t)3;
		if (nlen > n - off - 12 || dlen > n - off - 12 - nlen)
			return false;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(p + off + 12, "GNU", 4) == 0 &&
		    descsz > 0 && descsz <= 20) {
			pl_hex(p + off + 12 + nlen, descsz, hex);
			return true;
		}
		off += 12 + nlen + dlen;
	}
	return false;
}
