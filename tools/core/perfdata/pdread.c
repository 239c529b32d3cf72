/* pdread.c - perf.data into a profile the way `perf script` shows it (see
 * pdread.h).
 *
 * The machine model follows perf 6.1's util/machine.c and util/thread.c:
 * threads are found by tid and created with the comm ":TID"; a thread
 * whose pid is not its tid shares its leader's maps; FORK of a new
 * process copies the parent's maps (not for synthesized FORK_EXEC ones);
 * an MMAP replaces the parts of the maps it overlaps.  Kernel-mode
 * addresses are looked up in the one kernel map ([kernel.kallsyms]),
 * user-mode ones in the thread's maps.  perf 6.1 prints a user frame's
 * address relative to its DSO (map_ip: ip - start + pgoff), a kernel or
 * unmapped one as it is; a frame with no map is "[unknown]" in
 * "[unknown]".  Callchains are walked leaf first, markers switching the
 * mode, an unknown marker dropping the chain, at most 127 real entries
 * (perf script's max stack); an LBR call stack (--call-graph lbr) takes
 * its user frames from the branch stack instead (pdlbr.c, walk_lbr).
 *
 * Resolved frames are cached by (address space, its generation, mode,
 * address): a sample costs a few hash probes once its frames were seen.
 * Whole callchains are cached too, by their raw entries and what their
 * frames depend on: a repeated chain costs one hash of its bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "pdread.h"
#include "pdformat.h"
#include "pdlbr.h"
#include "pdkindex.h"
#include "pdprefetch.h"
#include "pdsyms.h"
#include "pdunwind.h"
#include "base/digest_cache.h"
#include "base/escape.h"
#include "base/sha256.h"
#include "base/util.h"

#define MAX_STACK 127
#define CTX_HV ((uint64_t)-32)
#define CTX_KERNEL ((uint64_t)-128)
#define CTX_USER ((uint64_t)-512)
#define CTX_MAX ((uint64_t)-4095)
#define MISC_KERNEL 1
#define MISC_USER 2
#define MISC_HV 3
#define MISC_GUEST_KERNEL 4
#define MISC_GUEST_USER 5
#define MISC_MMAP_DATA (1u << 13)
#define MISC_FORK_EXEC (1u << 13)
#define MISC_MMAP_BUILD_ID (1u << 14)
#define MAP_HUGETLB_FLAG 0x40000
#define PROT_EXEC_FLAG 4
#define FRAME_CACHE (1u << 16)
/* Chains remembered whole: 8k of at most CHAIN_MAX_BYTES of entries, so
 * at most 16 MB whatever the file. */
#define CHAIN_CACHE (1u << 13)
#define CHAIN_MAX_BYTES 2048
#define MAX_THREADS (1u << 22)
#define MAX_MAPS_PER_SPACE (1u << 20)
/* Map entries of all address spaces together: FORK copies the parent's
 * maps, so N forks of a process of M maps would hold N x M entries
 * (a 240 KB file of 3000 maps and 3000 forks took 480 MB). */
#define MAX_MAP_ENTRIES (1u << 22)
#define MAX_DSOS (1u << 16)

/* ------------------------------------------------------------ model */

enum dso_kind { DK_FILE, DK_VDSO, DK_KERNEL, DK_ANON, DK_NODSO };

struct dso {
	char *name;
	char *cached;                /* perf's build-id cache copy, made when first unwound */
	bool cached_set;
	char *found;                 /* the binary finder's file for it (NULL: none) */
	bool found_set;
	enum dso_kind kind;
	char build_id[41];
	bool loaded;
	bool hit;                    /* a sample's own address fell in it */
	struct pd_symtab syms;
	uint32_t name_id;            /* profile string, PL_NOID until used */
};

struct map {
	uint64_t start, end, pgoff;
	struct dso *dso;
	bool identity;
	bool exec;                   /* PROT_EXEC: a module for DWARF unwinding */
};

struct maps {
	struct map *v;
	size_t n, cap;
	uint32_t refs;
	uint32_t gen;                /* bumped on every change */
	uint32_t serial;             /* this address space, for the frame cache */
	struct pd_unwind_space *uw;  /* DWARF unwinding (pdunwind.h), NULL until a sample needs it */
	uint32_t uw_gen;             /* gen the unwinder's modules were taken at */
	bool uw_located;             /* the binary finder was handed to uw */
	/* per file, its lowest mapping's start here (perf_base_differs), as of lows_gen */
	struct dso_low { const struct dso *d; uint64_t low; } *lows;
	size_t nlows;
	uint32_t lows_gen;
	bool lows_set;
};

struct thread {
	int32_t pid, tid;
	char *comm;
	bool comm_set;
	struct maps *maps;
	uint32_t comm_id;            /* profile thread of (sample_pid, tid, comm), PL_NOID when stale */
	int32_t sample_pid;
};

struct frame_entry {
	uint64_t ip;
	uint32_t serial, gen;
	uint8_t mode;
	uint8_t used;
	uint32_t frame;
	uint64_t printed;
};

/* A callchain seen before, as its raw entries, with what it became: the
 * same entries in the same thread (profile thread, address space and its
 * generation, the kernel map's) resolve to the same stack and the same
 * site, so a repeat skips the walk and both internings. */
struct chain_entry {
	uint64_t hash;
	uint32_t thread, serial, gen, kgen, event;
	uint32_t stack, site;        /* site: PL_NOID past the sites' bound */
	bool used, has_site;         /* has_site: sites were kept when it was seen */
	uint32_t nbytes, cap;
	uint8_t *bytes;
};

struct reader {
	struct pl_profile *p;
	struct pd_file f;
	pd_sample_hook hook;         /* pd_read_set_sample_hook, or NULL */
	void *hook_arg;
	const char *kallsyms_path, *notes_path;
	struct pl_error why;         /* what is not supported (the first thing) */
	bool unsupported;
	bool no_files;               /* an image in memory: no symbol files read */
	/* threads: open addressing by tid */
	struct thread **tab;
	size_t tab_mask, nthreads;
	struct thread **all;         /* every thread ever made, to free */
	size_t nall, all_cap;
	uint32_t next_serial;
	uint64_t map_entries;        /* live map entries, all spaces: MAX_MAP_ENTRIES */
	/* dsos */
	struct dso **dsos;
	size_t ndsos, dsos_cap;
	struct map kmap;             /* the kernel map; dso NULL until seen */
	uint64_t kref;               /* recorded _text address (kernel mmap pgoff) */
	struct pd_prefetch *pf;      /* tables loaded ahead, or NULL */
	uint32_t kgen;               /* bumped when the kernel map changes */
	bool kernel_decided;
	char *kernel_note;           /* provenance: how kernel names came */
	const char *const *roots;    /* JIT maps only beneath these (nroots 0: any) */
	size_t nroots;
	uint32_t jit_read, jit_symbols, jit_outside, jit_absent;
	/* per-sample scratch */
	uint32_t *frames;
	uint64_t *pcs, *rev_pcs;
	uint32_t *rev;
	size_t frames_cap;
	struct frame_entry *cache;
	struct chain_entry *chains;  /* CHAIN_CACHE entries, direct-mapped */
	uint32_t *event_ids;         /* per attr: profile event id + 1 */
	size_t prepared;             /* attrs checked and named */
	char **event_names;
	uint64_t samples, samples_skipped;
	/* DWARF call graphs: the recording's architecture, scratch, counts */
	enum pd_unwind_arch uw_arch;
	bool uw_arch_known;
	uint64_t *uw_pcs;
	struct pd_unwind_module *uw_mods;
	size_t uw_mods_cap;
	uint64_t uw_samples, uw_frames, uw_empty, uw_stops[PD_UW_NSTOPS];
	uint64_t uw_two_bases;       /* samples through a file mapped at two load bases */
	uint64_t uw_elsewhere;       /* samples through a module read from a file found elsewhere */
	uint64_t last_stack, last_event, last_period;
	bool last_tail;
	bool have_last;
};

static void unsupported(struct reader *r, const char *fmt, const char *arg)
{
	if (r->unsupported)
		return;
	r->unsupported = true;
	pl_fail(&r->why, PL_ERR_UNSUPPORTED, NULL, fmt, arg ? arg : "");
}

/* A refusal's error: what is not supported (the reader's reason, else
 * the text of the error that refused, else "unsupported") and the fix. */
static void refusal(const char *why, struct pl_error *err)
{
	char reason[sizeof(err->text)];

	snprintf(reason, sizeof(reason), "%s", why[0] ? why : err->text[0] ? err->text : "unsupported");
	pl_fail(err, PL_ERR_UNSUPPORTED, "let perf script read it (start with --allow-process-execution)",
		"%s", reason);
}

/* ------------------------------------------------------------ dsos */

static struct dso *dso_find(struct reader *r, const char *name, enum dso_kind kind)
{
	for (size_t i = 0; i < r->ndsos; i++)
		if (r->dsos[i]->kind == kind && strcmp(r->dsos[i]->name, name) == 0)
			return r->dsos[i];
	if (r->ndsos >= MAX_DSOS)
		return NULL;
	struct dso *d = pl_xcalloc(1, sizeof(*d));
	d->name = pl_xstrdup(name);
	d->kind = kind;
	d->name_id = PL_NOID;
	for (size_t i = 0; i < r->f.nbuild_ids; i++)
		if (strcmp(r->f.build_ids[i].filename, name) == 0) {
			memcpy(d->build_id, r->f.build_ids[i].hex, sizeof(d->build_id));
			break;
		}
	PL_GROW(r->dsos, r->dsos_cap, r->ndsos + 1);
	r->dsos[r->ndsos++] = d;
	return d;
}

/* The file's bytes (at most `max`), NUL-terminated, or NULL.  Read in
 * place, growing from the size fstat gives (0 for /proc files). */
static char *slurp(const char *path, size_t max, size_t *n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t len = 0, cap;
	char *b;
	ssize_t k;

	*n = 0;
	if (fd < 0)
		return NULL;
	cap = fstat(fd, &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size < max ? (size_t)st.st_size + 1 :
		1 << 16;
	b = pl_xmalloc(cap + 1);
	while (len < max && (k = read(fd, b + len, cap - len)) > 0) {
		len += (size_t)k;
		if (len == cap) {
			cap *= 2;
			b = pl_xrealloc(b, cap + 1);
		}
	}
	close(fd);
	if (len == 0) {
		free(b);
		return NULL;
	}
	b[len] = '\0';
	*n = len;
	return b;
}

/* The kernel's symbols, only when the recording is of this kernel. */
/* The kernel's table for `delta`: from the copy's index when it was made
 * for that shift, else parsed from the text (read now if it was not). */
static void kernel_table(struct reader *r, struct dso *d, struct pd_kindex *x, char **ks, size_t *nk,
			 uint64_t delta)
{
	if (x->map && x->delta == delta) {
		pd_kindex_adopt(x, &d->syms);
		return;
	}
	if (!*ks)
		*ks = slurp(r->kallsyms_path, 256u << 20, nk);
	if (*ks) {
		pd_symtab_adopt_kallsyms(&d->syms, *ks, *nk, delta);
		*ks = NULL;
	}
}

static void load_kernel(struct reader *r, struct dso *d)
{
	char running[41] = "", note[512];
	size_t nn = 0, nk = 0;
	unsigned char *notes = (unsigned char *)slurp(r->notes_path, 1 << 20, &nn);
	struct utsname u;
	struct pd_kindex x;
	uint64_t text = 0;
	char *ks = NULL;
	bool have_text;

	if (notes)
		pd_kernel_notes_build_id(notes, nn, running);
	free(notes);
	/* The index of the server's kallsyms copy answers without a parse
	 * of its 122k lines (a quarter of a 6 MB recording's read). */
	if (pd_prefetch_take_kindex(r->pf, &x) || pd_kindex_open(&x, r->kallsyms_path)) {
		text = x.text_addr;
		have_text = text != 0;
	} else {
		ks = slurp(r->kallsyms_path, 256u << 20, &nk);
		have_text = ks && pd_kallsyms_addr(ks, nk, "_text", &text) && text != 0;
	}
	if (!have_text) {
		snprintf(note, sizeof(note), "unresolved: no kernel symbol addresses could be read "
			 "(kallsyms missing, or addresses hidden by kptr_restrict)");
	} else if (d->build_id[0] && running[0] && strcmp(d->build_id, running) == 0) {
		kernel_table(r, d, &x, &ks, &nk, r->kref ? text - r->kref : 0);
		snprintf(note, sizeof(note), "kallsyms: the recorded kernel build-id %s is the running kernel's",
			 d->build_id);
	} else if (d->build_id[0]) {
		snprintf(note, sizeof(note),
			 "unresolved: the recorded kernel build-id %s is not the running kernel's (%s)",
			 d->build_id, running[0] ? running : "unknown");
	} else if (r->f.osrelease && uname(&u) == 0 && strcmp(u.release, r->f.osrelease) == 0 &&
		   r->kref == text) {
		kernel_table(r, d, &x, &ks, &nk, 0);
		snprintf(note, sizeof(note),
			 "kallsyms: no kernel build-id recorded; the release (%s) and the _text address are "
			 "the running kernel's", u.release);
	} else {
		snprintf(note, sizeof(note),
			 "unresolved: no kernel build-id recorded, and the release or _text address differ "
			 "from the running kernel's");
	}
	pd_kindex_close(&x);
	free(ks);
	free(r->kernel_note);
	r->kernel_note = pl_xstrdup(note);
}

/* Whether the JIT map `path` may be read: beneath an allowed root (by
 * its real path), or anywhere when no roots were given. */
static bool map_allowed(const struct reader *r, const char *path)
{
	char real[PATH_MAX];

	if (!r->nroots)
		return true;
	if (!realpath(path, real))
		return false;
	for (size_t i = 0; i < r->nroots; i++) {
		size_t n = strlen(r->roots[i]);
		if (strncmp(real, r->roots[i], n) == 0 &&
		    (real[n] == '/' || real[n] == '\0' || (n && r->roots[i][n - 1] == '/')))
			return true;
	}
	return false;
}

/* The binary finder (pd_read_set_binary_finder), per reading thread. */
static __thread pd_binary_finder binary_finder;
static __thread void *binary_finder_arg;
static __thread bool binary_finder_first;

void pd_read_set_binary_finder(pd_binary_finder fn, void *arg, bool first)
{
	binary_finder = fn;
	binary_finder_arg = arg;
	binary_finder_first = first;
}

/* The finder's file for a file dso, asked once; NULL: none. */
static const char *found_file(struct dso *d)
{
	if (!d || d->kind != DK_FILE || !binary_finder)
		return NULL;
	if (!d->found_set) {
		d->found_set = true;
		const char *f = binary_finder(binary_finder_arg, d->name, d->build_id);
		d->found = f ? pl_xstrdup(f) : NULL;
	}
	return d->found;
}

/* The unwinder's locator (pdunwind.h): the finder's file for the dso. */
static const char *locate_dso(void *arg, const struct pd_unwind_module *m)
{
	(void)arg;
	return found_file(m->key);
}

/* A file dso's symbols: from the recorded path (or the prefetcher's
 * load of it), and from the binary finder's file before it when the
 * finder goes first, or after it when the recorded file is gone or
 * another build: the file the unwinder takes the module's CFI from. */
static void load_file_syms(struct reader *r, struct dso *d)
{
	const char *alt = binary_finder_first ? found_file(d) : NULL;

	if (alt) {
		pd_symtab_load_elf(&d->syms, alt, d->build_id);
		if (d->syms.loaded)
			return;
		pd_symtab_release(&d->syms);
	}
	if (!pd_prefetch_take_elf(r->pf, d->name, d->build_id, &d->syms))
		pd_symtab_load_elf(&d->syms, d->name, d->build_id);
	if (d->syms.loaded || binary_finder_first || !(alt = found_file(d)) || strcmp(alt, d->name) == 0)
		return;
	pd_symtab_release(&d->syms);
	pd_symtab_load_elf(&d->syms, alt, d->build_id);
}

static const struct pd_symtab *dso_syms(struct reader *r, struct dso *d)
{
	if (d->loaded)
		return &d->syms;
	d->loaded = true;
	if (r->no_files)
		return &d->syms;
	switch (d->kind) {
	case DK_FILE: load_file_syms(r, d); break;
	case DK_VDSO: pd_symtab_load_vdso(&d->syms, d->build_id); break;
	case DK_KERNEL: load_kernel(r, d); break;
	case DK_ANON:
		/* a JIT's perf map, read as perf reads it, beneath the allowed
		 * roots; one that exists but this process may not open goes to
		 * perf script */
		if (!map_allowed(r, d->name)) {
			if (access(d->name, F_OK) == 0)
				r->jit_outside++;
			else
				r->jit_absent++;
		} else if (pd_symtab_load_perfmap(&d->syms, d->name)) {
			r->jit_read++;
			r->jit_symbols += (uint32_t)d->syms.n;
		} else if (access(d->name, F_OK) == 0) {
			unsupported(r, "JIT symbols from %s (the map file cannot be opened here; perf script reads it)", d->name);
		} else {
			r->jit_absent++;
		}
		break;
	case DK_NODSO: break;
	}
	return &d->syms;
}

/* ------------------------------------------------------------ maps */

static struct maps *maps_new(struct reader *r)
{
	struct maps *m = pl_xcalloc(1, sizeof(*m));

	m->refs = 1;
	m->serial = ++r->next_serial;
	return m;
}

static void maps_put(struct reader *r, struct maps *m)
{
	if (m && --m->refs == 0) {
		r->map_entries -= m->n;
		pd_unwind_space_free(m->uw);
		free(m->lows);
		free(m->v);
		free(m);
	}
}

static struct map *maps_find(struct maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < m->v[lo - 1].end)
		return &m->v[lo - 1];
	return NULL;
}

static void maps_insert_sorted(struct maps *m, struct map mp)
{
	size_t i = m->n;

	PL_GROW(m->v, m->cap, m->n + 1);
	while (i > 0 && m->v[i - 1].start > mp.start) {
		m->v[i] = m->v[i - 1];
		i--;
	}
	m->v[i] = mp;
	m->n++;
	m->gen++;
}

/* maps__fixup_overlappings, then the insert. */
static void maps_insert(struct reader *r, struct maps *m, struct map mp)
{
	struct map keep[2];
	size_t nkeep = 0, out = 0, before = m->n;

	if (m->n >= MAX_MAPS_PER_SPACE)
		return;
	for (size_t i = 0; i < m->n; i++) {
		struct map *pos = &m->v[i];
		if (pos->end <= mp.start || pos->start >= mp.end) {
			m->v[out++] = *pos;
			continue;
		}
		if (mp.start > pos->start && nkeep < 2) {
			keep[nkeep] = *pos;
			keep[nkeep++].end = mp.start;
		}
		if (mp.end < pos->end && nkeep < 2) {
			keep[nkeep] = *pos;
			keep[nkeep].start = mp.end;
			keep[nkeep++].pgoff += mp.end - pos->start;
		}
	}
	m->n = out;
	for (size_t i = 0; i < nkeep; i++)
		maps_insert_sorted(m, keep[i]);
	maps_insert_sorted(m, mp);
	r->map_entries = r->map_entries - before + m->n;
}

/* ------------------------------------------------------------ threads */

static size_t tid_slot(const struct reader *r, int32_t tid)
{
	size_t j = (size_t)pl_mix_u64((uint64_t)(uint32_t)tid) & r->tab_mask;

	while (r->tab[j] && r->tab[j]->tid != tid)
		j = (j + 1) & r->tab_mask;
	return j;
}

static void tab_grow(struct reader *r)
{
	struct thread **old = r->tab;
	size_t old_n = r->tab ? r->tab_mask + 1 : 0;

	r->tab_mask = old_n ? old_n * 2 - 1 : 1023;
	r->tab = pl_xcalloc_hot(r->tab_mask + 1, sizeof(*r->tab));
	for (size_t i = 0; i < old_n; i++)
		if (old[i])
			r->tab[tid_slot(r, old[i]->tid)] = old[i];
	free(old);
}

static struct thread *thread_find(struct reader *r, int32_t tid)
{
	return r->tab ? r->tab[tid_slot(r, tid)] : NULL;
}

/* machine__remove_thread: the tid no longer names it. */
static void thread_remove(struct reader *r, struct thread *t)
{
	size_t j = tid_slot(r, t->tid);

	if (r->tab[j] != t)
		return;
	/* Backward-shift deletion keeps the probe chains whole. */
	r->tab[j] = NULL;
	r->nthreads--;
	for (size_t k = (j + 1) & r->tab_mask; r->tab[k]; k = (k + 1) & r->tab_mask) {
		struct thread *x = r->tab[k];
		r->tab[k] = NULL;
		r->tab[tid_slot(r, x->tid)] = x;
	}
}

static struct thread *thread_findnew(struct reader *r, int32_t pid, int32_t tid);

static void thread_set_comm(struct thread *t, const char *comm)
{
	free(t->comm);
	t->comm = pl_xstrdup(comm);
	t->comm_set = true;
	t->comm_id = PL_NOID;
}

static void update_pid(struct reader *r, struct thread *t, int32_t pid)
{
	if (pid == t->pid || pid == -1 || t->pid != -1)
		return;
	t->pid = pid;
	if (t->pid == t->tid)
		return;
	struct thread *leader = thread_findnew(r, pid, pid);
	if (!leader || t->maps == leader->maps)
		return;
	maps_put(r, t->maps);
	t->maps = leader->maps;
	t->maps->refs++;
}

static struct thread *thread_findnew(struct reader *r, int32_t pid, int32_t tid)
{
	struct thread *t = thread_find(r, tid);
	char comm[32];

	if (t) {
		update_pid(r, t, pid);
		return t;
	}
	if (r->nall >= MAX_THREADS)
		return NULL;
	if (!r->tab || (r->nthreads + 1) * 2 > r->tab_mask)
		tab_grow(r);
	t = pl_xcalloc(1, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	snprintf(comm, sizeof(comm), ":%d", tid);
	t->comm = pl_xstrdup(comm);
	t->comm_id = PL_NOID;
	r->tab[tid_slot(r, tid)] = t;
	r->nthreads++;
	PL_GROW(r->all, r->all_cap, r->nall + 1);
	r->all[r->nall++] = t;
	if (pid == tid || pid == -1) {
		t->maps = maps_new(r);
	} else {
		struct thread *leader = thread_findnew(r, pid, pid);
		if (leader) {
			t->maps = leader->maps;
			t->maps->refs++;
		} else {
			t->maps = maps_new(r);
		}
	}
	return t;
}

/* ------------------------------------------------------------ records */

static const char *rec_string(const uint8_t *p, const uint8_t *end, char *buf, size_t cap)
{
	size_t n = end > p ? strnlen((const char *)p, (size_t)(end - p)) : 0;

	if (n >= cap)
		n = cap - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

static void comm_record(struct reader *r, const uint8_t *rec, size_t size)
{
	char comm[256];

	if (size < 16)
		return;
	struct thread *t = thread_findnew(r, (int32_t)pd_u32(&r->f, rec + 8),
					  (int32_t)pd_u32(&r->f, rec + 12));
	if (t)
		thread_set_comm(t, rec_string(rec + 16, rec + size, comm, sizeof(comm)));
}

static enum pl_err fork_record(struct reader *r, const uint8_t *rec, size_t size,
			       struct pl_error *err)
{
	if (size < 24)
		return PL_OK;
	int32_t pid = (int32_t)pd_u32(&r->f, rec + 8), ppid = (int32_t)pd_u32(&r->f, rec + 12);
	int32_t tid = (int32_t)pd_u32(&r->f, rec + 16), ptid = (int32_t)pd_u32(&r->f, rec + 20);
	struct thread *t = thread_find(r, tid), *parent = thread_findnew(r, ppid, ptid);

	if (parent && parent->pid != ppid) {
		thread_remove(r, parent);
		parent = thread_findnew(r, ppid, ptid);
	}
	if (t)
		thread_remove(r, t);
	t = thread_findnew(r, pid, tid);
	if (!t || !parent)
		return PL_OK;
	if (parent->comm_set)
		thread_set_comm(t, parent->comm);
	if (t->pid == parent->pid || t->maps == parent->maps ||
	    (pd_u16(&r->f, rec + 4) & MISC_FORK_EXEC))
		return PL_OK;
	if (r->map_entries + parent->maps->n > MAX_MAP_ENTRIES)
		return pl_fail(err, PL_ERR_LIMIT, "analyze a shorter capture",
			       "more than %u mapped regions in all processes together (each FORK copies its parent's)",
			       MAX_MAP_ENTRIES);
	for (size_t i = 0; i < parent->maps->n; i++)
		maps_insert_sorted(t->maps, parent->maps->v[i]);
	r->map_entries += parent->maps->n;
	return PL_OK;
}

/* The mapping as the perf script parser keeps it from the printed line. */
static void note_mapping(struct reader *r, int32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
			 bool file_id, uint32_t maj, uint32_t min, uint64_t ino, const char *name)
{
	struct pl_profile *p = r->p;

	p->sideband_records++;
	if (!name[0] || len == 0)
		return;
	if (p->nmappings == PL_MAX_MAPPINGS) {
		p->mappings_dropped++;
		return;
	}
	struct pl_mapping m = {.pid = pid, .start = start, .len = len, .pgoff = pgoff,
			       .has_file_id = file_id && ino != 0, .dev_major = maj, .dev_minor = min,
			       .ino = ino};
	m.path = pl_intern_str(p, name, strlen(name));
	PL_GROW(p->mappings, p->mappings_cap, p->nmappings + 1);
	p->mappings[p->nmappings++] = m;
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* An MMAP or MMAP2 record's fields. */
struct mmap_event {
	int32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t maj, min, prot, flags;
	uint64_t ino;
	bool file_id;                /* maj, min and ino are set */
	const uint8_t *build_id;     /* MMAP2 with a build-id, else NULL */
	size_t build_id_len;
	char name[4096];
};

/* Decode `rec` (MMAP2 when v2); false when it is too short to hold one. */
static bool decode_mmap(const struct pd_file *f, const uint8_t *rec, size_t size, bool v2,
			struct mmap_event *m)
{
	uint16_t misc = pd_u16(f, rec + 4);
	size_t fixed = v2 ? 8 + 64 : 8 + 32;

	if (size < fixed + 1)
		return false;
	*m = (struct mmap_event){.prot = PROT_EXEC_FLAG};
	m->pid = (int32_t)pd_u32(f, rec + 8);
	m->tid = (int32_t)pd_u32(f, rec + 12);
	m->start = pd_u64(f, rec + 16);
	m->len = pd_u64(f, rec + 24);
	m->pgoff = pd_u64(f, rec + 32);
	if (v2) {
		if (!(misc & MISC_MMAP_BUILD_ID)) {
			m->maj = pd_u32(f, rec + 40);
			m->min = pd_u32(f, rec + 44);
			m->ino = pd_u64(f, rec + 48);
			m->file_id = true;
		} else {
			m->build_id = rec + 44;
			m->build_id_len = rec[40] <= 20 ? rec[40] : 20;
		}
		m->prot = pd_u32(f, rec + 64);
		m->flags = pd_u32(f, rec + 68);
	} else if (misc & MISC_MMAP_DATA) {
		m->prot = 0;
	}
	rec_string(rec + fixed, rec + size, m->name, sizeof(m->name));
	return true;
}

/* The kernel's own map ([kernel.kallsyms]); a module's or a guest's is
 * not supported (false). */
static bool kernel_mmap(struct reader *r, const struct mmap_event *m, bool guest)
{
	if (guest || !starts(m->name, "[kernel.kallsyms]")) {
		unsupported(r, "kernel module or guest kernel maps (%s)", m->name);
		return false;
	}
	struct dso *d = dso_find(r, "[kernel.kallsyms]", DK_KERNEL);
	if (m->build_id && d && !d->build_id[0])
		pl_hex(m->build_id, m->build_id_len, d->build_id);
	r->kmap = (struct map){m->start, m->start + m->len, 0, d, true, true};
	r->kgen++;
	if (m->start == 0 && m->len == 0)
		r->kmap.end = UINT64_MAX;
	if (m->pgoff)
		r->kref = m->pgoff;
	return true;
}

/* The DSO a user map names, as perf's map__new classifies its name:
 * anonymous memory (a JIT's /tmp/perf-PID.map), memory without a DSO,
 * the vDSO, or a file. */
static void user_map_dso(struct reader *r, const struct mmap_event *m, struct map *mp)
{
	const char *name = m->name;
	bool anon = strcmp(name, "//anon") == 0 || starts(name, "/dev/zero") ||
		    starts(name, "/anon_hugepage") || (m->flags & MAP_HUGETLB_FLAG);
	bool no_dso = starts(name, "[stack") || starts(name, "/SYSV") || strcmp(name, "[heap]") == 0;
	bool vdso = strcmp(name, "[vdso]") == 0 || strcmp(name, "[vdso32]") == 0 ||
		    strcmp(name, "[vdsox32]") == 0;

	if (anon) {
		char jit[64];
		snprintf(jit, sizeof(jit), "/tmp/perf-%d.map", m->pid);
		mp->dso = dso_find(r, jit, DK_ANON);
		mp->identity = true;
		if (m->prot & PROT_EXEC_FLAG)
			dso_syms(r, mp->dso);
	} else if (no_dso) {
		mp->dso = dso_find(r, name, DK_NODSO);
		mp->identity = true;
	} else if (vdso) {
		mp->pgoff = 0;
		mp->dso = dso_find(r, name, DK_VDSO);
	} else {
		mp->dso = dso_find(r, name, DK_FILE);
	}
}

static void mmap_record(struct reader *r, const uint8_t *rec, size_t size, bool v2)
{
	struct mmap_event m;

	if (!decode_mmap(&r->f, rec, size, v2, &m))
		return;
	uint8_t mode = pd_u16(&r->f, rec + 4) & 7;
	if (mode == MISC_KERNEL || mode == MISC_GUEST_KERNEL) {
		if (!kernel_mmap(r, &m, mode == MISC_GUEST_KERNEL))
			return;
	} else {
		struct thread *t = thread_findnew(r, m.pid, m.tid);
		if (!t)
			return;
		struct map mp = {m.start, m.start + m.len, m.pgoff, NULL, false, (m.prot & PROT_EXEC_FLAG) != 0};
		user_map_dso(r, &m, &mp);
		if (mp.dso) {
			if (m.build_id && !mp.dso->build_id[0])
				pl_hex(m.build_id, m.build_id_len, mp.dso->build_id);
			maps_insert(r, t->maps, mp);
		}
	}
	note_mapping(r, m.pid, m.start, m.len, m.pgoff, m.file_id, m.maj, m.min, m.ino, m.name);
}

/* ------------------------------------------------------------ samples */

struct resolved {
	const char *sym;
	const char *dso;
	struct dso *d;
	uint64_t printed;
};

/* thread__find_symbol in `mode`, and what perf script prints for it. */
/* thread__find_map: the kernel map or the thread's, by mode; NULL for none. */
static struct map *find_map(struct reader *r, struct thread *t, uint8_t mode, uint64_t ip)
{
	if (mode == MISC_KERNEL)
		return r->kmap.dso && ip >= r->kmap.start && ip < r->kmap.end ? &r->kmap : NULL;
	if (mode == MISC_USER)
		return maps_find(t->maps, ip);
	return NULL;
}

static void resolve(struct reader *r, struct thread *t, uint8_t mode, uint64_t ip, bool raw_addr,
		    struct resolved *out)
{
	struct map *m = find_map(r, t, mode, ip);

	out->sym = "[unknown]";
	out->dso = "[unknown]";
	out->d = NULL;
	out->printed = ip;
	if (!m)
		return;
	uint64_t addr = m->identity ? ip : ip - m->start + m->pgoff;
	out->d = m->dso;
	out->dso = m->dso->name;
	if (!raw_addr && m->dso->kind != DK_KERNEL)
		out->printed = addr;
	const struct pd_symtab *st = dso_syms(r, m->dso);
	const struct pd_sym *s = pd_symtab_find(st, addr);
	if (s)
		out->sym = pd_sym_name(st, s);
}

static enum pl_err grow_frames(struct reader *r, size_t n)
{
	if (n <= r->frames_cap)
		return PL_OK;
	size_t cap = n * 2;
	r->frames = pl_xrealloc(r->frames, cap * sizeof(uint32_t));
	r->rev = pl_xrealloc(r->rev, cap * sizeof(uint32_t));
	r->pcs = pl_xrealloc(r->pcs, cap * sizeof(uint64_t));
	r->rev_pcs = pl_xrealloc(r->rev_pcs, cap * sizeof(uint64_t));
	r->frames_cap = cap;
	return PL_OK;
}

/* The profile's frame for a resolved address, as intern_frame_text makes it. */
static uint32_t intern_resolved(struct reader *r, const struct resolved *res, struct pl_error *err)
{
	struct pl_profile *p = r->p;
	uint32_t sym = pl_intern_str(p, res->sym, strlen(res->sym));
	uint32_t dso;

	if (res->d) {
		if (res->d->name_id == PL_NOID)
			res->d->name_id = pl_intern_str(p, res->dso, strlen(res->dso));
		dso = res->d->name_id;
	} else {
		dso = pl_intern_str(p, res->dso, strlen(res->dso));
	}
	uint32_t func = pl_intern_func(p, sym, dso);
	return pl_intern_frame(p, func, p->funcs[func].unknown || p->keep_addrs, res->printed, PL_NOID,
			       err);
}

/* A callchain entry's frame, through the cache. */
/* chain_frame's miss: resolve and intern, then keep it in entry `e`.
 * Out of line, so that the hit, nearly every frame, stays a few
 * instructions in its callers. */
static uint32_t __attribute__((noinline)) chain_frame_miss(struct reader *r, struct thread *t, uint8_t mode,
							   uint64_t ip, uint32_t serial, uint32_t gen,
							   struct frame_entry *e, uint64_t *printed,
							   struct pl_error *err)
{
	struct resolved res;

	resolve(r, t, mode, ip, false, &res);
	uint32_t frame = intern_resolved(r, &res, err);
	if (frame == PL_NOID)
		return PL_NOID;
	*e = (struct frame_entry){ip, serial, gen, mode, 1, frame, res.printed};
	*printed = res.printed;
	return frame;
}

static uint32_t chain_frame(struct reader *r, struct thread *t, uint8_t mode, uint64_t ip,
			    uint64_t *printed, struct pl_error *err)
{
	/* Kernel frames do not depend on the thread: the kernel map's own
	 * generation stands for the address space. */
	uint32_t serial = mode == MISC_KERNEL ? 0 : t->maps->serial;
	uint32_t gen = mode == MISC_KERNEL ? r->kgen : t->maps->gen;
	uint64_t key = ip ^ ((uint64_t)serial << 40) ^ ((uint64_t)gen << 20) ^ mode;
	struct frame_entry *e = &r->cache[pl_mix_u64(key) & (FRAME_CACHE - 1)];

	if (__builtin_expect(e->used && e->ip == ip && e->serial == serial && e->gen == gen &&
			     e->mode == mode, 1)) {
		*printed = e->printed;
		return e->frame;
	}
	return chain_frame_miss(r, t, mode, ip, serial, gen, e, printed, err);
}

/* push_frame's refusal, out of its way. */
static enum pl_err __attribute__((noinline, cold)) too_deep(const struct reader *r, struct pl_error *err)
{
	return pl_fail(err, PL_ERR_LIMIT, "analyze a capture recorded with a smaller stack depth",
		       "a stack is deeper than %u frames", r->p->limits.max_depth);
}

/* One more frame of the sample, leaf first (inlined into the walks: it
 * runs for every frame of every sample whose chain is new). */
static inline __attribute__((always_inline)) enum pl_err
push_frame(struct reader *r, struct thread *t, uint8_t mode, uint64_t ip, size_t *n, struct pl_error *err)
{
	if (__builtin_expect(*n >= r->p->limits.max_depth, 0))
		return too_deep(r, err);
	grow_frames(r, *n + 1);
	uint32_t fr = chain_frame(r, t, mode, ip, &r->pcs[*n], err);
	if (fr == PL_NOID)
		return err->code;
	r->frames[(*n)++] = fr;
	return PL_OK;
}

/* --call-graph lbr: the user frames from the branch stack (pdlbr.h);
 * *done false when perf walks the callchain instead. */
static enum pl_err walk_lbr(struct reader *r, struct thread *t, const struct pd_sample *s,
			    const uint8_t *rec, size_t size, size_t *n, bool *done, struct pl_error *err)
{
	struct pd_lbr_iter it;
	enum pd_lbr_how how = pd_lbr_begin(&it, &r->f, s, rec, size, MAX_STACK);
	uint8_t mode;
	uint64_t ip;
	enum pl_err rc;

	*done = how != PD_LBR_FP_CHAIN;
	if (how == PD_LBR_UNREADABLE)
		unsupported(r, "%s", it.why);
	while (how == PD_LBR_FRAMES && pd_lbr_next(&it, &mode, &ip))
		if ((rc = push_frame(r, t, mode, ip, n, err)))
			return rc;
	return PL_OK;
}

/* thread__resolve_callchain_sample, callee order: the frames leaf first. */
static enum pl_err walk_chain(struct reader *r, struct thread *t, const struct pd_sample *s,
			      const uint8_t *rec, size_t size, size_t *n, struct pl_error *err)
{
	uint8_t mode = MISC_USER;
	size_t real = 0;
	bool done = false;
	enum pl_err rc;

	*n = 0;
	if (pd_lbr_applies(s->attr) && ((rc = walk_lbr(r, t, s, rec, size, n, &done, err)) || done))
		return rc;
	for (uint64_t i = 0; i < s->nchain && real < MAX_STACK; i++) {
		uint64_t ip = pd_u64(&r->f, s->chain + 8 * i);
		if (ip >= CTX_MAX) {
			if (ip == CTX_HV)
				mode = MISC_HV;
			else if (ip == CTX_KERNEL)
				mode = MISC_KERNEL;
			else if (ip == CTX_USER)
				mode = MISC_USER;
			else {
				*n = 0;   /* perf drops a chain with an unknown context */
				return PL_OK;
			}
			continue;
		}
		real++;
		if ((rc = push_frame(r, t, mode, ip, n, err)))
			return rc;
	}
	return PL_OK;
}

/* --call-graph dwarf: does this event carry user registers and stack? */
static bool is_dwarf(const struct pd_attr *a)
{
	return (a->sample_type & (PD_S_REGS_USER | PD_S_STACK_USER)) == (PD_S_REGS_USER | PD_S_STACK_USER);
}

/* perf's build-id cache (pd_read_set_buildid_dir), per reading thread. */
static __thread const char *buildid_dir;

void pd_read_set_buildid_dir(const char *dir)
{
	buildid_dir = dir;
}

/* The digest cache (pd_read_set_digest_cache), per reading thread. */
static __thread const char *digest_cache;

void pd_read_set_digest_cache(const char *dir)
{
	digest_cache = dir;
}

/* The sample hook (pd_read_set_sample_hook), per reading thread. */
static __thread pd_sample_hook sample_hook;
static __thread void *sample_hook_arg;

void pd_read_set_sample_hook(pd_sample_hook hook, void *arg)
{
	sample_hook = hook;
	sample_hook_arg = arg;
}

/* The path of perf's build-id cache copy of a file dso, or NULL. */
static const char *cached_copy(struct dso *d)
{
	if (!d->cached_set) {
		d->cached_set = true;
		if (buildid_dir && *buildid_dir && strlen(d->build_id) > 2) {
			char path[PATH_MAX];
			if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s/elf", buildid_dir, d->build_id,
				     d->build_id + 2) < (int)sizeof(path))
				d->cached = pl_xstrdup(path);
		}
	}
	return d->cached;
}

/* The address space's unwinder, its modules the executable file mappings
 * as they are now (reported as chains reach them); NULL when the
 * recording's architecture is not one it unwinds (then unsupported). */
static struct pd_unwind_space *unwind_space(struct reader *r, struct maps *m)
{
	if (!r->uw_arch_known) {
		r->uw_arch_known = true;
		r->uw_arch = pd_unwind_arch_of(r->f.arch);
	}
	if (r->uw_arch == PD_UW_ARCH_NONE) {
		unsupported(r, "DWARF callchains of a recording whose architecture (%s) is not x86_64 or aarch64",
			    r->f.arch ? r->f.arch : "not recorded");
		return NULL;
	}
	if (!m->uw && !(m->uw = pd_unwind_space_new(r->uw_arch))) {
		unsupported(r, "DWARF callchains: libdw cannot start an unwinder for %s", r->f.arch);
		return NULL;
	}
	if (binary_finder && !m->uw_located) {
		m->uw_located = true;
		pd_unwind_space_set_locator(m->uw, locate_dso, NULL, binary_finder_first);
	}
	if (m->uw_gen == m->gen && pd_unwind_space_sig(m->uw))
		return m->uw;
	size_t n = 0;
	uint64_t sig = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < m->n; i++) {
		const struct map *mp = &m->v[i];
		if (!mp->exec || !mp->dso || (mp->dso->kind != DK_FILE && mp->dso->kind != DK_VDSO) ||
		    r->no_files)
			continue;
		PL_GROW(r->uw_mods, r->uw_mods_cap, n + 1);
		r->uw_mods[n++] = (struct pd_unwind_module){mp->dso->name, mp->dso->build_id, mp->start,
							    mp->end, mp->pgoff,
							    mp->dso->kind == DK_FILE ? cached_copy(mp->dso) : NULL,
							    mp->dso};
		sig = pl_mix_u64(sig ^ mp->start) ^ pl_mix_u64(mp->end ^ (mp->pgoff << 1)) ^
		      pl_mix_u64((uint64_t)(uintptr_t)mp->dso);
	}
	pd_unwind_space_set_modules(m->uw, r->uw_mods, n, sig ? sig : 1);
	m->uw_gen = m->gen;
	return m->uw;
}

/* Would perf 6.1's libunwind stop in this chain?  For each frame it
 * looks the file's .eh_frame_hdr up at the lowest start among the
 * thread's mappings of that file: where that is not the load base of the
 * mapping the frame is in (an exec left an older image's mapping of the
 * file below the live one), the lookup fails and perf's chain ends at
 * that frame.  Counted, not copied: these chains go on.  (Cutting them
 * there reproduced perf script on 1,025 of 1,131 samples of a python3
 * started through pyenv's shell shims, 21 before, and on all 1,451 of a
 * program exec'd from sh.) */
static bool perf_base_differs(struct maps *m, const uint64_t *pcs, size_t n)
{
	if (!m->lows_set || m->lows_gen != m->gen) {
		m->nlows = 0;
		for (size_t k = 0; k < m->n; k++) {
			const struct map *mp = &m->v[k];
			if (!mp->dso || mp->dso->kind != DK_FILE)
				continue;
			size_t x = 0;
			while (x < m->nlows && m->lows[x].d != mp->dso)
				x++;
			if (x == m->nlows) {
				m->lows = pl_xrealloc(m->lows, (m->nlows + 1) * sizeof(*m->lows));
				m->lows[m->nlows++] = (struct dso_low){mp->dso, mp->start};
			} else if (mp->start < m->lows[x].low) {
				m->lows[x].low = mp->start;
			}
		}
		m->lows_gen = m->gen;
		m->lows_set = true;
	}
	for (size_t i = 0; i < n; i++) {
		const struct map *mp = maps_find(m, pcs[i]);
		if (!mp || !mp->dso || mp->dso->kind != DK_FILE)
			continue;
		for (size_t x = 0; x < m->nlows; x++)
			if (m->lows[x].d == mp->dso && m->lows[x].low != mp->start - mp->pgoff)
				return true;
	}
	return false;
}

static enum pl_err walk_dwarf(struct reader *r, struct thread *t, const struct pd_sample *s, size_t *n,
			      struct pl_error *err)
{
	uint64_t regs[64] = {0}, have = 0, mask = s->attr->sample_regs_user;
	enum pd_unwind_stop stop;
	enum pl_err rc;

	if (!s->regs_abi || !s->regs || !s->stack_size) {
		r->uw_empty++;
		return PL_OK;
	}
	struct pd_unwind_space *uw = unwind_space(r, t->maps);
	if (!uw)
		return PL_OK;
	for (uint32_t bit = 0, k = 0; bit < 64 && k < s->nregs; bit++)
		if ((mask >> bit) & 1) {
			regs[bit] = pd_u64(&r->f, s->regs + 8 * (size_t)k++);
			have |= 1ull << bit;
		}
	if (!r->uw_pcs)
		r->uw_pcs = pl_xcalloc(MAX_STACK, sizeof(uint64_t));
	struct pd_unwind_sample smp = {s->pid, s->tid, regs, have, s->stack, s->stack_size, r->f.swap};
	size_t k = pd_unwind_sample(uw, &smp, r->uw_pcs, MAX_STACK, &stop);
	r->uw_samples++;
	r->uw_frames += k;
	r->uw_stops[stop]++;
	if (perf_base_differs(t->maps, r->uw_pcs, k))
		r->uw_two_bases++;
	if (pd_unwind_through_elsewhere(uw))
		r->uw_elsewhere++;
	for (size_t i = 0; i < k; i++)
		if ((rc = push_frame(r, t, MISC_USER, r->uw_pcs[i], n, err)))
			return rc;
	return PL_OK;
}

/* The cache entry for this sample's chain: used when it was seen before
 * (and, if sites are kept now, was seen with them), else an unused one to
 * fill once the chain is walked; NULL for a chain too long to keep. */
static struct chain_entry *chain_seen(struct reader *r, const struct thread *t, uint32_t thread,
				      uint32_t event, const struct pd_sample *s)
{
	size_t nb = (size_t)s->nchain * 8;

	if (s->nchain > CHAIN_MAX_BYTES / 8)
		return NULL;
	uint32_t serial = t->maps->serial, gen = t->maps->gen;
	uint64_t h = pl_strtab_hash(s->chain, nb) ^
		     pl_mix_u64((uint64_t)thread << 32 ^ event ^ (uint64_t)serial << 16 ^
				(uint64_t)gen << 40 ^ (uint64_t)r->kgen << 8);
	struct chain_entry *e = &r->chains[h & (CHAIN_CACHE - 1)];
	bool same = e->used && e->hash == h && e->nbytes == nb && e->thread == thread &&
		    e->event == event && e->serial == serial && e->gen == gen && e->kgen == r->kgen &&
		    (e->has_site || !r->p->nmappings) && memcmp(e->bytes, s->chain, nb) == 0;
	if (!same) {
		e->used = false;
		e->hash = h;
		e->thread = thread;
		e->event = event;
		e->serial = serial;
		e->gen = gen;
		e->kgen = r->kgen;
		if (nb > e->cap) {
			e->cap = (uint32_t)nb;
			e->bytes = pl_xrealloc(e->bytes, nb);
		}
		e->nbytes = (uint32_t)nb;
		if (nb)
			memcpy(e->bytes, s->chain, nb);
	}
	return e;
}

static void chain_remember(struct chain_entry *e, uint32_t stack, uint32_t site, bool has_site)
{
	e->stack = stack;
	e->site = site;
	e->has_site = has_site;
	e->used = true;
}

/* What every kept sample ends with. */
static enum pl_err sample_done(struct reader *r, uint32_t stack, uint32_t event, uint64_t period,
			       bool chain, struct pl_error *err)
{
	struct pl_profile *p = r->p;

	p->records_parsed++;
	r->samples++;
	/* Without a callchain perf prints no blank line after a sample: the
	 * last one ends the text unterminated (a tail, profile.h). */
	r->have_last = true;
	r->last_tail = !chain;
	r->last_stack = stack;
	r->last_event = event;
	r->last_period = period;
	if (p->records_parsed > p->limits.max_records)
		return pl_fail(err, PL_ERR_LIMIT, "raise --max-records, or record a shorter capture",
			       "more than %llu records", (unsigned long long)p->limits.max_records);
	return PL_OK;
}

/* The sample's time into the timeline (PERF_SAMPLE_TIME; UINT64_MAX
 * when the event was recorded without it), cut to the microsecond as
 * perf script prints it: both readers then give the same analysis. */
static void note_time(struct pl_profile *p, uint32_t stack, uint32_t event, uint64_t time,
		      uint64_t period)
{
	if (time == UINT64_MAX)
		pl_note_untimed(p);
	else
		pl_add_timed(p, stack, event, time / 1000 * 1000, period);
}

/* A sample the format cannot parse: counted, and previewed as the
 * record's first bytes in hex ("line" is the record's number in delivery
 * order). */
static void skip_malformed_sample(struct reader *r, const uint8_t *rec, size_t size, const char *why)
{
	char hex[161];
	size_t k = size < 64 ? size : 64;

	r->samples_skipped++;
	pl_hex(rec, k, hex);
	pl_note_malformed(r->p, r->f.counts.records, why, hex, 2 * k);
}

/* The header: comm, thread, as start_record interns them (the ids are
 * remembered while the thread's comm and the pid stay). */
static uint32_t sample_thread(struct reader *r, struct thread *t, const struct pd_sample *s)
{
	if (t->comm_id == PL_NOID || t->sample_pid != s->pid) {
		uint32_t comm = pl_intern_str(r->p, t->comm, strlen(t->comm));
		t->comm_id = pl_intern_thread(r->p, s->pid, s->tid, comm);
		t->sample_pid = s->pid;
	}
	return t->comm_id;
}

/* The sample's event, interned once per attr. */
static uint32_t sample_event(struct reader *r, const struct pd_sample *s)
{
	uint32_t *ev = &r->event_ids[s->attr_index];

	if (!*ev)
		*ev = pl_intern_event(r->p, r->event_names[s->attr_index],
				      strlen(r->event_names[s->attr_index])) + 1;
	return *ev - 1;
}

/* A sample without a callchain: its one frame, the IP's, into
 * r->frames[0] and r->pcs[0]. */
static enum pl_err ip_frame(struct reader *r, struct thread *t, const struct pd_sample *s,
			    struct pl_error *err)
{
	struct resolved res;
	uint8_t mode = s->cpumode;

	resolve(r, t, mode, s->ip, true, &res);
	/* thread__find_map_fb: the other mode by address when none. */
	if (!res.d && (mode == MISC_USER || mode == MISC_KERNEL)) {
		uint64_t kstart = r->kmap.dso ? r->kmap.start : 1ull << 63;
		uint8_t other = s->ip >= kstart ? MISC_KERNEL : MISC_USER;
		if (other != mode)
			resolve(r, t, other, s->ip, true, &res);
	}
	grow_frames(r, 1);
	uint32_t fr = intern_resolved(r, &res, err);
	if (fr == PL_NOID)
		return err->code;
	r->frames[0] = fr;
	r->pcs[0] = res.printed;
	return PL_OK;
}

/* What one sample weighs: its period, or the attr's fixed one (-c N:
 * without PERIOD in sample_type perf takes it for every sample and perf
 * script prints it), else 1 with no period. */
static uint64_t sample_period(const struct pd_sample *s, bool *has_period)
{
	bool fixed = !(s->attr->flags & PD_A_FREQ) && s->attr->sample_period != 0;

	*has_period = s->has_period || fixed;
	return s->has_period ? s->period : fixed ? s->attr->sample_period : 1;
}

/* The n frames in r->frames (leaf first) as the sample's stack, root
 * first, with its weight, time and address site; remembered in `seen`
 * (a chain cache entry, or NULL) for the next sample of that chain. */
static enum pl_err add_sample_stack(struct reader *r, uint32_t thread, uint32_t event,
				    const struct pd_sample *s, size_t n, struct chain_entry *seen,
				    struct pl_error *err)
{
	struct pl_profile *p = r->p;
	bool has_period;
	uint64_t period = sample_period(s, &has_period);

	grow_frames(r, n + 1);
	for (size_t i = 0; i < n; i++) {
		r->rev[i] = r->frames[n - 1 - i];
		r->rev_pcs[i] = r->pcs[n - 1 - i];
	}
	uint32_t stack = pl_intern_stack(p, thread, r->rev, (uint32_t)n, err);
	if (stack == PL_NOID)
		return err->code;
	pl_add_weight(p, stack, event, 1, period, has_period);
	note_time(p, stack, event, s->time, period);
	uint32_t site = PL_NOID;
	if (p->nmappings)
		site = pl_add_site(p, stack, event, r->rev_pcs, (uint32_t)n, period);
	if (seen)
		chain_remember(seen, stack, site, p->nmappings != 0);
	return sample_done(r, stack, event, period, s->attr->sample_type & PD_S_CALLCHAIN, err);
}

static enum pl_err sample_record(struct reader *r, const uint8_t *rec, size_t size,
				 struct pl_error *err)
{
	struct pl_profile *p = r->p;
	struct pd_sample s;
	const char *why;
	size_t n = 0;
	enum pl_err rc;

	if (!pd_parse_sample(&r->f, rec, size, &s, &why)) {
		skip_malformed_sample(r, rec, size, why);
		return PL_OK;
	}
	if (s.cpumode == MISC_GUEST_KERNEL || s.cpumode == MISC_GUEST_USER) {
		unsupported(r, "guest samples%s", NULL);
		return PL_OK;
	}
	struct thread *t = thread_findnew(r, s.pid, s.tid);
	if (!t)
		return pl_fail(err, PL_ERR_LIMIT, "analyze a shorter capture", "more than %u threads",
			       MAX_THREADS);
	uint32_t thread = sample_thread(r, t, &s);
	/* perf buildid-list's build_id__mark_dso_hit: the DSO of the
	 * sample's own address (not its callers'), for note_build_ids. */
	struct map *hit = find_map(r, t, s.cpumode, s.ip);
	if (hit && hit->dso)
		hit->dso->hit = true;
	uint32_t event = sample_event(r, &s);
	struct chain_entry *seen = NULL;
	if (s.attr->sample_type & PD_S_CALLCHAIN) {
		/* An LBR chain's frames come from its branch stack as well:
		 * not keyed by the callchain alone, so never cached. */
		if (!pd_lbr_applies(s.attr) && !is_dwarf(s.attr) && !r->hook)
			seen = chain_seen(r, t, thread, event, &s);
		if (seen && seen->used) {
			bool has_period;
			uint64_t period = sample_period(&s, &has_period);
			pl_add_weight(p, seen->stack, event, 1, period, has_period);
			note_time(p, seen->stack, event, s.time, period);
			if (p->nmappings)
				pl_add_site_again(p, seen->site, period);
			return sample_done(r, seen->stack, event, period, true, err);
		}
		if ((rc = walk_chain(r, t, &s, rec, size, &n, err)))
			return rc;
		if (is_dwarf(s.attr) && (rc = walk_dwarf(r, t, &s, &n, err)))
			return rc;
		if (r->unsupported)
			return PL_OK;
	} else {
		if ((rc = ip_frame(r, t, &s, err)))
			return rc;
		n = 1;
	}
	if (r->hook)
		r->hook(r->hook_arg, s.pid, s.tid, s.time, r->frames, r->pcs, n);
	return add_sample_stack(r, thread, event, &s, n, seen, err);
}

static enum pl_err on_record(void *arg, const uint8_t *rec, size_t size, uint64_t time,
			     struct pl_error *err)
{
	struct reader *r = arg;
	uint32_t type = pd_u32(&r->f, rec);

	(void)time;
	if (r->unsupported)
		return PL_ERR_UNSUPPORTED;
	switch (type) {
	case PD_SAMPLE: return sample_record(r, rec, size, err);
	case PD_COMM: comm_record(r, rec, size); break;
	case PD_FORK: return fork_record(r, rec, size, err);
	case PD_MMAP: mmap_record(r, rec, size, false); break;
	case PD_MMAP2: mmap_record(r, rec, size, true); break;
	case PD_AUX: case PD_ITRACE_START: case PD_AUXTRACE: case PD_AUXTRACE_INFO:
		unsupported(r, "AUX area tracing records%s", NULL);
		break;
	case PD_HEADER_TRACING_DATA:
		unsupported(r, "tracepoint data%s", NULL);
		break;
	case PD_HEADER_ATTR:
		/* pipe mode: events arrive as records. */
		break;
	default: break;
	}
	return r->unsupported ? PL_ERR_UNSUPPORTED : PL_OK;
}

/* ------------------------------------------------------------ events */

static const char *const sample_bits[] = {
	"IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD", "STREAM_ID", "RAW",
	"BRANCH_STACK", "REGS_USER", "STACK_USER", "WEIGHT", "DATA_SRC", "IDENTIFIER", "TRANSACTION",
	"REGS_INTR", "PHYS_ADDR", "AUX", "CGROUP", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE", "WEIGHT_STRUCT",
};

/* The attr text perf evlist -v prints, as far as pl_note_event_attr reads it. */
static void note_attrs(struct reader *r)
{
	for (size_t i = 0; i < r->prepared; i++) {
		const struct pd_attr *a = &r->f.attrs[i];
		struct pl_buf b = {0};
		if (!r->event_ids[i])
			continue;
		pl_buf_adds(&b, "type: , sample_type: ");
		for (size_t k = 0; k < PL_ARRAY_LEN(sample_bits); k++)
			if (a->sample_type & (1ull << k)) {
				pl_buf_adds(&b, sample_bits[k]);
				pl_buf_addc(&b, '|');
			}
		if (a->flags & PD_A_EXCLUDE_CALLCHAIN_USER)
			pl_buf_adds(&b, ", exclude_callchain_user: 1");
		if (a->sample_type & PD_S_STACK_USER)
			pl_buf_addf(&b, ", sample_stack_user: %u", a->sample_stack_user);
		const char *name = r->event_names[i];
		pl_note_event_attr(r->p, name, strlen(name), b.data ? b.data : "", b.len);
		pl_buf_release(&b);
	}
}

/* What only perf reproduces, decided from the attributes. */
/* What event `name`'s sample_type asks of a sample, if this reader
 * reproduces it as perf does. */
static bool sampling_supported(struct reader *r, const struct pd_attr *a, const char *name)
{
	if (a->sample_type & ~PD_S_KNOWN) {
		unsupported(r, "unknown sample_type bits in event %s", name);
		return false;
	}
	/* DWARF call graphs as perf record --call-graph dwarf makes
	 * them: the kernel's chain without user frames, registers and
	 * stack to unwind those (walk_dwarf). */
	bool regs = a->sample_type & PD_S_REGS_USER, stack = a->sample_type & PD_S_STACK_USER;
	/* exclude_callchain_user of an event sampled without a chain
	 * (perf record -e EV/call-graph=no/ beside --call-graph dwarf,
	 * as the off-CPU collection's sched_waking) says nothing. */
	if ((regs || stack || ((a->flags & PD_A_EXCLUDE_CALLCHAIN_USER) && (a->sample_type & PD_S_CALLCHAIN))) &&
	    !(regs && stack && (a->sample_type & PD_S_CALLCHAIN) &&
	      (a->flags & PD_A_EXCLUDE_CALLCHAIN_USER))) {
		unsupported(r, "user registers or stacks other than --call-graph dwarf's in event %s", name);
		return false;
	}
	if (regs && (a->sample_type & PD_S_BRANCH_STACK)) {
		unsupported(r, "DWARF callchains with branch stacks in event %s", name);
		return false;
	}
	if ((a->sample_type & PD_S_BRANCH_STACK) && !pd_lbr_applies(a)) {
		unsupported(r, "branch stacks without the LBR call stack (-b/-j: perf report sorts "
			    "by branch) in event %s", name);
		return false;
	}
	if ((a->sample_type & PD_S_BRANCH_STACK) && a->branch_sample_type >= PD_BR_MAX) {
		unsupported(r, "branch_sample_type bits perf 6.1 does not know in event %s", name);
		return false;
	}
	if (a->sample_type & PD_S_READ) {
		unsupported(r, "sample-read (group) values in event %s", name);
		return false;
	}
	if (!(a->sample_type & PD_S_IP) || !(a->sample_type & PD_S_TID)) {
		unsupported(r, "samples without IP or TID in event %s", name);
		return false;
	}
	return true;
}

static bool attrs_supported(struct reader *r)
{
	char buf[256];

	r->event_ids = pl_xcalloc(r->f.nattrs + 1, sizeof(uint32_t));
	r->event_names = pl_xcalloc(r->f.nattrs + 1, sizeof(char *));
	r->prepared = r->f.nattrs;
	for (size_t i = 0; i < r->f.nattrs; i++) {
		const struct pd_attr *a = &r->f.attrs[i];
		const char *name = pd_event_name(a, buf, sizeof(buf));
		if (a->type == 2 && !r->hook) {
			unsupported(r, "tracepoint events (%s): their fields need perf's format parser",
				    name ? name : "?");
			return false;
		}
		if (!name) {
			snprintf(buf, sizeof(buf), "type %u", a->type);
			unsupported(r, "an event perf names from its PMU (%s)", buf);
			return false;
		}
		if (!sampling_supported(r, a, name))
			return false;
		r->event_names[i] = pl_xstrdup(name);
	}
	return true;
}

/* ------------------------------------------------------------ driver */

static void reader_release(struct reader *r)
{
	pd_prefetch_end(r->pf);   /* before the file: its items name the file's build-ids */
	r->pf = NULL;
	for (size_t i = 0; i < r->nall; i++) {
		maps_put(r, r->all[i]->maps);
		free(r->all[i]->comm);
		free(r->all[i]);
	}
	free(r->all);
	free(r->tab);
	for (size_t i = 0; i < r->ndsos; i++) {
		pd_symtab_release(&r->dsos[i]->syms);
		free(r->dsos[i]->name);
		free(r->dsos[i]->cached);
		free(r->dsos[i]->found);
		free(r->dsos[i]);
	}
	free(r->dsos);
	for (size_t i = 0; r->event_names && i < r->prepared; i++)
		free(r->event_names[i]);
	free(r->event_names);
	free(r->event_ids);
	free(r->frames);
	free(r->rev);
	free(r->pcs);
	free(r->rev_pcs);
	free(r->cache);
	for (size_t i = 0; r->chains && i < CHAIN_CACHE; i++)
		free(r->chains[i].bytes);
	free(r->chains);
	free(r->kernel_note);
	free(r->uw_pcs);
	free(r->uw_mods);
	pd_release(&r->f);
}

/* Build-ids as perf buildid-list gives them: the recorded table, else
 * those the MMAP2 records carried for the DSOs a sample's address fell in
 * (perf lists "with hits" when there is no table: a DSO seen only among
 * callers, ld.so calling an ifunc resolver say, is not listed). */
/* A device session's chunks name the same build-ids again: once each. */
static bool build_id_known(const struct pl_profile *p, uint32_t dso, const char *hex)
{
	for (size_t i = 0; i < p->nbuild_ids; i++)
		if (p->build_ids[i].dso == dso && strcmp(p->build_ids[i].hex, hex) == 0)
			return true;
	return false;
}

static void note_build_ids(struct reader *r)
{
	struct pl_profile *p = r->p;

	for (size_t i = 0; i < r->f.nbuild_ids && p->nbuild_ids < PL_MAX_BUILD_IDS; i++) {
		const struct pd_build_id *b = &r->f.build_ids[i];
		if (build_id_known(p, pl_intern_str(p, b->filename, strlen(b->filename)), b->hex))
			continue;
		PL_GROW(p->build_ids, p->build_ids_cap, p->nbuild_ids + 1);
		struct pl_build_id *o = &p->build_ids[p->nbuild_ids++];
		o->dso = pl_intern_str(p, b->filename, strlen(b->filename));
		snprintf(o->hex, sizeof(o->hex), "%s", b->hex);
	}
	if (r->f.nbuild_ids)
		return;
	for (size_t i = 0; i < r->ndsos && p->nbuild_ids < PL_MAX_BUILD_IDS; i++) {
		const struct dso *d = r->dsos[i];
		if (!d->build_id[0] || !d->hit || d->name_id == PL_NOID || build_id_known(p, d->name_id, d->build_id))
			continue;
		PL_GROW(p->build_ids, p->build_ids_cap, p->nbuild_ids + 1);
		struct pl_build_id *o = &p->build_ids[p->nbuild_ids++];
		o->dso = d->name_id;
		snprintf(o->hex, sizeof(o->hex), "%s", d->build_id);
	}
}

static char *dup_or_null(const char *s)
{
	return s ? pl_xstrdup(s) : NULL;
}

static struct pl_perf_data_info *info_of(struct reader *r)
{
	struct pl_perf_data_info *i = pl_xcalloc(1, sizeof(*i));
	const struct pd_counts *c = &r->f.counts;
	struct pl_buf ev = {0};

	i->pipe = r->f.pipe;
	i->swapped = r->f.swap;
	i->compressed = c->by_type[PD_COMPRESSED] + c->by_type[PD_COMPRESSED2] > 0;
	i->records = c->records;
	i->samples = r->samples;
	i->samples_skipped = r->samples_skipped + c->unknown_id;
	i->unknown_records = c->unknown_types;
	i->lost_records = c->lost_records;
	i->lost = c->lost;
	i->lost_samples = c->lost_samples;
	i->out_of_order = c->out_of_order;
	i->compressed_bytes = c->compressed_bytes;
	i->decompressed_bytes = c->decompressed_bytes;
	i->hostname = dup_or_null(r->f.hostname);
	i->osrelease = dup_or_null(r->f.osrelease);
	i->arch = dup_or_null(r->f.arch);
	i->cpudesc = dup_or_null(r->f.cpudesc);
	i->cmdline = dup_or_null(r->f.cmdline);
	i->perf_version = dup_or_null(r->f.version);
	i->nrcpus_online = r->f.nrcpus_online;
	i->nrcpus_avail = r->f.nrcpus_avail;
	i->kernel_symbols = dup_or_null(r->kernel_note ? r->kernel_note : "no kernel frames");
	if (r->jit_read || r->jit_outside || r->jit_absent) {
		char jit[256];
		snprintf(jit, sizeof(jit), "%u JIT perf maps read (%u symbols), %u outside the allowed roots "
			 "(not read: their frames stay [unknown]), %u absent", r->jit_read, r->jit_symbols,
			 r->jit_outside, r->jit_absent);
		i->jit_maps = pl_xstrdup(jit);
	}
	i->dwarf_samples = r->uw_samples;
	i->dwarf_frames = r->uw_frames;
	i->dwarf_no_stack = r->uw_empty;
	i->dwarf_two_bases = r->uw_two_bases;
	i->dwarf_elsewhere = r->uw_elsewhere;
	for (int k = 0; k < PD_UW_NSTOPS && k < 8; k++) {
		i->dwarf_stops[k] = r->uw_stops[k];
		i->dwarf_stop_names[k] = pd_unwind_stop_name((enum pd_unwind_stop)k);
	}
	for (size_t k = 0; k < r->prepared; k++) {
		if (!r->event_names || !r->event_names[k])
			continue;
		if (ev.len)
			pl_buf_adds(&ev, ", ");
		pl_buf_adds(&ev, r->event_names[k]);
	}
	pl_buf_add(&ev, "", 1);
	i->events = ev.data;
	return i;
}

/* Empty the profile again, keeping its limits and settings. */
static void reset_profile(struct pl_profile *p)
{
	struct pl_limits lim = p->limits;
	bool keep = p->keep_addrs;

	pl_profile_release(p);
	pl_profile_init(p, &lim);
	p->keep_addrs = keep;
}

static enum pl_err pipe_prepare(struct reader *r)
{
	if (r->event_names && r->prepared != r->f.nattrs) {
		unsupported(r, "a pipe whose events change after its first sample%s", NULL);
		return PL_ERR_UNSUPPORTED;
	}
	if (r->event_names || r->f.nattrs == 0)
		return PL_OK;
	return attrs_supported(r) ? PL_OK : PL_ERR_UNSUPPORTED;
}

static enum pl_err on_record_pipe(void *arg, const uint8_t *rec, size_t size, uint64_t time,
				  struct pl_error *err)
{
	struct reader *r = arg;

	if (pd_u32(&r->f, rec) == PD_SAMPLE && pipe_prepare(r))
		return PL_ERR_UNSUPPORTED;
	return on_record(arg, rec, size, time, err);
}

enum pl_err pd_read_image(struct pl_profile *p, const void *data, size_t n, const char *name,
			  struct pl_error *err)
{
	struct reader r;
	enum pl_err rc;

	(void)name;
	pl_error_clear(err);
	memset(&r, 0, sizeof(r));
	r.p = p;
	r.no_files = true;
	r.hook = sample_hook;
	r.hook_arg = sample_hook_arg;
	rc = pd_open(&r.f, data, n, err);
	if (rc == PL_OK) {
		r.cache = pl_xcalloc_hot(FRAME_CACHE, sizeof(*r.cache));
		r.chains = pl_xcalloc_hot(CHAIN_CACHE, sizeof(*r.chains));
		if (!r.f.pipe && !attrs_supported(&r))
			rc = PL_ERR_UNSUPPORTED;
	}
	if (rc == PL_OK)
		rc = pd_walk(&r.f, r.f.pipe ? on_record_pipe : on_record, &r, err);
	if (r.unsupported)
		rc = PL_ERR_UNSUPPORTED;
	if (rc == PL_ERR_UNSUPPORTED)
		refusal(r.why.text, err);
	reader_release(&r);
	return rc;
}

/* SHA-256 of the mapped file for the provenance, in 4 MiB steps, each
 * given back after so that memory stays bounded. */
struct hash_job {
	const void *map;
	size_t size;
	char hex[65];
	bool keep;        /* an image in memory: its pages are not a file's to drop */
};

static void hash_image(struct hash_job *j)
{
	struct pl_sha256 sha;
	unsigned char digest[PL_SHA256_SIZE];

	pl_sha256_init(&sha);
	for (size_t at = 0; at < j->size; at += 4u << 20) {
		size_t len = j->size - at < (4u << 20) ? j->size - at : 4u << 20;
		pl_sha256_update(&sha, (const char *)j->map + at, len);
		if (!j->keep)
			madvise((char *)j->map + at, len, MADV_DONTNEED);
	}
	pl_sha256_final(&sha, digest);
	pl_hex(digest, sizeof(digest), j->hex);
}

static void *hash_thread(void *arg)
{
	hash_image(arg);
	return NULL;
}

/* Map `path` read-only; PL_ERR_UNSUPPORTED for what is not a regular
 * file. */
static enum pl_err map_input(const struct pl_profile *p, const char *path, void **map, size_t *size,
			     struct pl_file_identity *id, struct pl_error *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*map = MAP_FAILED;
	if (fd < 0)
		return pl_fail(err, PL_ERR_INPUT, "check the path", "cannot open '%s': %s", PL_ESC_MSG(path),
			       strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return pl_fail(err, PL_ERR_UNSUPPORTED, NULL, "a file that is not a regular file");
	}
	if ((uint64_t)st.st_size > p->limits.max_input_bytes) {
		close(fd);
		return pl_fail(err, PL_ERR_LIMIT, "raise --max-input-bytes", "'%s' is larger than %llu bytes",
			       PL_ESC_MSG(path), (unsigned long long)p->limits.max_input_bytes);
	}
	*size = (size_t)st.st_size;
	pl_file_identity_of(&st, id);
	if (st.st_size > 0)
		*map = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (*map == MAP_FAILED)
		return pl_fail(err, PL_ERR_INPUT, NULL, "cannot map '%s': %s", PL_ESC_MSG(path),
			       st.st_size ? strerror(errno) : "empty file");
	madvise(*map, *size, MADV_SEQUENTIAL);
	return PL_OK;
}

/* Open, check and walk the mapped image. */
static enum pl_err walk_mapped(struct reader *r, const void *map, size_t size, bool droppable,
			       struct pl_error *err)
{
	enum pl_err rc = pd_open(&r->f, map, size, err);

	if (rc == PL_OK) {
		r->f.droppable = droppable;
		/* The tables the samples will need load on the other CPU. */
		r->pf = pd_prefetch_start(&r->f, strncmp(r->kallsyms_path, "/proc/", 6) != 0 ? r->kallsyms_path : NULL);
		r->cache = pl_xcalloc_hot(FRAME_CACHE, sizeof(*r->cache));
		r->chains = pl_xcalloc_hot(CHAIN_CACHE, sizeof(*r->chains));
		if (!r->f.pipe && !attrs_supported(r))
			rc = PL_ERR_UNSUPPORTED;
	}
	if (rc == PL_OK)
		rc = pd_walk(&r->f, r->f.pipe ? on_record_pipe : on_record, r, err);
	if (r->unsupported)
		rc = PL_ERR_UNSUPPORTED;
	if (rc == PL_OK && r->f.pipe && pipe_prepare(r))
		rc = PL_ERR_UNSUPPORTED;
	if (rc == PL_OK && r->f.nattrs == 0)
		rc = pl_fail(err, PL_ERR_MALFORMED, "check that the recording is complete",
			     "malformed perf.data: no event attributes");
	return rc;
}

/* What the walk leaves for the profile: the last sample's tail, the
 * events' attributes, the build-ids and the source. */
static void finish_profile(struct reader *r, const char *path, size_t size, const char *sha,
			   const char *cache_entry, const struct pl_file_identity *id, uint64_t records_before)
{
	struct pl_profile *p = r->p;

	if (r->have_last && r->last_tail) {
		PL_GROW(p->tails, p->tails_cap, p->ntails + 1);
		p->tails[p->ntails++] = (struct pl_tail){(uint32_t)r->last_stack, (uint32_t)r->last_event,
							 r->last_period};
	}
	note_attrs(r);
	note_build_ids(r);
	PL_GROW(p->sources, p->sources_cap, p->nsources + 1);
	struct pl_source *src = &p->sources[p->nsources++];
	memset(src, 0, sizeof(*src));
	src->path = pl_xstrdup(path);
	src->size = size;
	src->text_bytes = r->f.data_size + r->f.counts.decompressed_bytes;
	memcpy(src->sha256, sha, sizeof(src->sha256));
	if (cache_entry) {
		src->sha256_cache_entry = pl_xstrdup(cache_entry);
		src->identity = *id;
	}
	src->format = PL_FMT_PERF_DATA;
	src->codec = "none";
	src->records = p->records_parsed - records_before;
	src->reader = "native";
	src->perf_data = info_of(r);
	src->lost_records = r->f.counts.lost_records;
	src->lost_events = r->f.counts.lost;
	src->lost_samples = r->f.counts.lost_samples;
}

/* An error names the file; a refusal empties the profile (but the
 * chunks read before, when `append`: the caller fails the whole) and
 * says why. */
static enum pl_err finish_error(struct pl_profile *p, enum pl_err rc, const char *path, const char *why,
				bool append, struct pl_error *err)
{
	if (rc == PL_ERR_MALFORMED) {
		/* The file named, in its escaped form (docs/paths.md). */
		char text[sizeof(err->text)], hint[sizeof(err->hint)];
		memcpy(text, err->text, sizeof(text));
		memcpy(hint, err->hint, sizeof(hint));
		pl_fail(err, PL_ERR_MALFORMED, hint, "'%s': %s", PL_ESC_MSG(path), text);
	}
	if (rc == PL_ERR_UNSUPPORTED) {
		if (!append)
			reset_profile(p);
		refusal(why, err);
	}
	return rc;
}

enum pl_err pd_read_profile(struct pl_profile *p, const char *path, const char *kallsyms,
			    const char *notes, struct pl_error *err)
{
	return pd_read_profile_in(p, path, kallsyms, notes, NULL, 0, err);
}

/* Read an image (a mapped file, or a chunk decompressed in memory: no
 * identity, nothing dropped) into p, after what p holds when `append`. */
static enum pl_err read_image(struct pl_profile *p, const char *path, const void *map, size_t size,
			      const struct pl_file_identity *id, const char *kallsyms, const char *notes,
			      const char *const *roots, size_t nroots, bool append, struct pl_error *err)
{
	struct reader r;
	char entry[64];
	uint64_t records_before = p->records_parsed;
	enum pl_err rc;

	/* The provenance hash runs beside the walk, unless the digest cache
	 * holds it for this very file (same identity). */
	struct hash_job hj = {map, size, "", id == NULL};
	pthread_t hasher;
	bool cached = id && pl_digest_cache_get(digest_cache, id, hj.hex, entry, sizeof(entry));
	int64_t started = cached ? 0 : pl_digest_clock_ns();
	bool hashing = !cached && pthread_create(&hasher, NULL, hash_thread, &hj) == 0;
	memset(&r, 0, sizeof(r));
	r.p = p;
	r.kallsyms_path = kallsyms ? kallsyms : "/proc/kallsyms";
	r.notes_path = notes ? notes : "/sys/kernel/notes";
	r.roots = roots;
	r.nroots = nroots;
	r.hook = sample_hook;
	r.hook_arg = sample_hook_arg;
	rc = walk_mapped(&r, map, size, id != NULL, err);
	if (hashing)
		pthread_join(hasher, NULL);
	else if (!cached)
		hash_image(&hj);
	if (id && !cached && digest_cache && rc == PL_OK) {
		/* Kept only if the file stayed as it was while it was hashed. */
		struct stat now;
		struct pl_file_identity after = {0};
		if (stat(path, &now) == 0)
			pl_file_identity_of(&now, &after);
		pl_digest_cache_put(digest_cache, id, &after, started, hj.hex);
	}
	if (rc == PL_OK)
		finish_profile(&r, path, size, hj.hex, cached ? entry : NULL, id, records_before);
	rc = finish_error(p, rc, path, r.why.text, append, err);
	reader_release(&r);
	return rc;
}

enum pl_err pd_read_profile_in(struct pl_profile *p, const char *path, const char *kallsyms,
			       const char *notes, const char *const *roots, size_t nroots,
			       struct pl_error *err)
{
	struct pl_file_identity id = {0};
	void *map;
	size_t size = 0;
	enum pl_err rc;

	pl_error_clear(err);
	if ((rc = map_input(p, path, &map, &size, &id, err)))
		return finish_error(p, rc, path, "", false, err);
	rc = read_image(p, path, map, size, &id, kallsyms, notes, roots, nroots, false, err);
	munmap(map, size);
	return rc;
}

enum pl_err pd_read_chunk(struct pl_profile *p, const void *data, size_t n, const char *name,
			  const char *kallsyms, const char *notes, const char *const *roots, size_t nroots,
			  struct pl_error *err)
{
	pl_error_clear(err);
	return read_image(p, name, data, n, NULL, kallsyms, notes, roots, nroots, true, err);
}

static enum pl_err count_record(void *arg, const uint8_t *rec, size_t size, uint64_t time,
				struct pl_error *err)
{
	uint64_t *c = arg;

	(void)size;
	(void)time;
	(void)err;
	c[0]++;
	if (rec[0] == PD_SAMPLE && rec[1] == 0 && rec[2] == 0 && rec[3] == 0)
		c[1]++;
	return PL_OK;
}

enum pl_err pd_walk_image(const void *data, size_t n, uint64_t *records, uint64_t *samples,
			  struct pl_error *err)
{
	struct pd_file f;
	uint64_t c[2] = {0, 0};
	enum pl_err rc = pd_open(&f, data, n, err);

	if (rc == PL_OK)
		rc = pd_walk(&f, count_record, c, err);
	pd_release(&f);
	*records = c[0];
	*samples = c[1];
	return rc;
}
