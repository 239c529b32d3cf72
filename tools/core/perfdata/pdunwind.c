/* pdunwind.c - a sample's user stack unwound with libdw (see pdunwind.h).
 *
 * The Dwfl of a space reports each executable file mapping as a module
 * (its load bias from the PT_LOAD holding the mapping's file offset, the
 * file skipped when its build-id is not the recorded one) and is attached
 * once to a "process" whose one thread is whatever sample is current:
 * get_thread/next_thread answer the sample's tid, set_initial_registers
 * its registers mapped to DWARF numbers for the recording's architecture,
 * memory_read its stack copy (bounds checked, overflow-safe) or the file
 * bytes of a module's PT_LOAD.  The backend comes from a 64-byte ELF
 * header made for that architecture, so an aarch64 recording unwinds on
 * an x86_64 host.  No separate debug files and no debug sections but
 * .debug_frame (hide_debug): CFI is all it reads.
 * An x86_64 chain whose every frame has a plain rule (CFA = register +
 * offset, registers saved at CFA + offset) is walked from those rules
 * kept per pc (the step cache below) instead of by libdw, to the same
 * frames; any other goes to libdw whole.
 * Single-threaded: a space is used by one reader.
 */
#include <elf.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pdunwind.h"
#include "base/util.h"

struct step;

struct pd_unwind_space {
	enum pd_unwind_arch arch;
	unsigned char ehdr[64];      /* the header-only image behind `elf` */
	Elf *elf;
	Dwfl *dwfl;                  /* NULL until the first sample after a change */
	bool broken;                 /* attaching failed: no unwinding in this set */
	struct pd_unwind_module *mods;   /* sorted by start, not overlapping */
	uint8_t *reported;               /* per module: 0 not yet, 1 reported, 2 could not be */
	bool *elsewhere;                 /* per module: its file is not the recorded path */
	size_t nelsewhere;
	size_t nmods;
	size_t unreported;               /* modules still 0 in reported */
	/* the files' private mappings behind the Dwfl's Elfs (report_one),
	 * unmapped after dwfl_end */
	struct view { void *map; size_t len; } *views;
	size_t nviews;
	uint64_t sig;
	pd_unwind_locate locate;     /* pd_unwind_space_set_locator */
	void *locate_arg;
	bool locate_first;
	/* the current sample */
	const struct pd_unwind_sample *cur;
	uint64_t sp;
	bool given;                  /* next_thread answered it */
	bool mem_fail;               /* a memory read was refused */
	bool no_module;              /* a caller's pc was in no module */
	uint64_t *pcs;
	size_t n, max;
	bool capped;
	bool through_elsewhere;      /* a frame in a module of elsewhere */
	struct step *steps;          /* STEP_SLOTS rules by pc (x86_64), NULL until used */
};

static const char *const stop_names[PD_UW_NSTOPS] = {
	"end", "max_frames", "no_registers", "memory_outside_copy", "no_module", "no_cfi",
};

const char *pd_unwind_stop_name(enum pd_unwind_stop s)
{
	return (unsigned)s < PD_UW_NSTOPS ? stop_names[s] : "?";
}

enum pd_unwind_arch pd_unwind_arch_of(const char *arch)
{
	if (!arch)
		return PD_UW_ARCH_NONE;
	if (strcmp(arch, "x86_64") == 0)
		return PD_UW_ARCH_X86_64;
	if (strcmp(arch, "aarch64") == 0 || strcmp(arch, "arm64") == 0)
		return PD_UW_ARCH_AARCH64;
	return PD_UW_ARCH_NONE;
}

/* ------------------------------------------------------------ registers */

/* x86_64: DWARF register n (rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip)
 * from perf's register number (AX BX CX DX SI DI BP SP IP FLAGS CS SS DS
 * ES FS GS R8-R15 = 0..23). */
static const uint8_t x86_64_regs[17] = {0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8};
#define X86_64_PERF_SP 7
#define X86_64_PERF_IP 8
/* aarch64: x0..x30 and sp are DWARF 0..31, perf 0..31; pc is perf 32. */
#define AARCH64_NREGS 32
#define AARCH64_PERF_SP 31
#define AARCH64_PERF_PC 32

static int perf_sp(enum pd_unwind_arch a)
{
	return a == PD_UW_ARCH_X86_64 ? X86_64_PERF_SP : AARCH64_PERF_SP;
}

static int perf_pc(enum pd_unwind_arch a)
{
	return a == PD_UW_ARCH_X86_64 ? X86_64_PERF_IP : AARCH64_PERF_PC;
}

static bool has_reg(const struct pd_unwind_sample *smp, int i)
{
	return i < 64 && (smp->have >> i) & 1;
}

static bool regs_complete(enum pd_unwind_arch a, const struct pd_unwind_sample *smp)
{
	if (a == PD_UW_ARCH_X86_64) {
		for (size_t i = 0; i < PL_ARRAY_LEN(x86_64_regs); i++)
			if (!has_reg(smp, x86_64_regs[i]))
				return false;
		return true;
	}
	for (int i = 0; i <= AARCH64_PERF_PC; i++)
		if (!has_reg(smp, i))
			return false;
	return true;
}

/* ------------------------------------------------------------ callbacks */

/* This process's own vDSO image, or NULL (its size in *n). */
static const char *own_vdso(size_t *n)
{
	const unsigned char *img = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);

	if (!img || memcmp(img, ELFMAG, SELFMAG) != 0 || img[EI_CLASS] != ELFCLASS64)
		return NULL;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	/* The image ends with its section headers. */
	*n = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	return (const char *)img;
}

/* Only "[vdso]" is found this way (reported by address, its Elf this
 * process's own image); files are reported with their descriptor. */
static int find_elf_vdso(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			 char **file_name, Elf **elfp)
{
	size_t n;
	const char *img;

	(void)mod, (void)base, (void)file_name;
	if (*userdata) {
		/* report_one's view of the file (the Dwfl owns it now). */
		*elfp = *userdata;
		*userdata = NULL;
	} else if (strcmp(modname, "[vdso]") == 0 && (img = own_vdso(&n))) {
		*elfp = elf_memory((char *)img, n);
	}
	return -1;
}

/* No separate debug files: the unwinder needs CFI only, which .eh_frame
 * (or a .debug_frame in the file itself) gives; a dbgsym file would cost
 * the decompression of its whole DWARF at the first frame whose CFI
 * fails (most of a 0.4 s read of 1,131 samples). */
static int find_debuginfo_none(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			       const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			       char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)debuglink_file;
	(void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = find_elf_vdso,
	.find_debuginfo = find_debuginfo_none,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct pd_unwind_space *s = arg;

	(void)dwfl;
	if (s->given || !s->cur)
		return 0;
	s->given = true;
	*thread_argp = s;
	return s->cur->tid > 0 ? s->cur->tid : 1;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct pd_unwind_space *s = arg;

	(void)dwfl, (void)tid;
	*thread_argp = s;
	return s->cur != NULL;
}

static bool word_of(const uint8_t *p, bool swap, Dwarf_Word *out)
{
	uint64_t v;
	memcpy(&v, p, 8);
	*out = swap ? __builtin_bswap64(v) : v;
	return true;
}

/* The bytes of a module's file at `addr`, within a PT_LOAD's file part. */
static bool read_module(struct pd_unwind_space *s, Dwarf_Addr addr, Dwarf_Word *out)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	Dwarf_Addr bias;
	size_t phnum, fsize;

	if (!mod)
		return false;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	if (!elf || elf_getphdrnum(elf, &phnum) != 0 || addr < bias)
		return false;
	char *raw = elf_rawfile(elf, &fsize);
	if (!raw)
		return false;
	uint64_t vaddr = addr - bias;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr < ph.p_vaddr || vaddr - ph.p_vaddr >= ph.p_filesz || ph.p_filesz - (vaddr - ph.p_vaddr) < 8)
			continue;
		uint64_t off = ph.p_offset + (vaddr - ph.p_vaddr);
		if (off > fsize || fsize - off < 8)
			return false;
		return word_of((const uint8_t *)raw + off, s->cur->swap, out);
	}
	return false;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct pd_unwind_space *s = arg;
	const struct pd_unwind_sample *smp = s->cur;

	(void)dwfl;
	if (!smp)
		return false;
	/* Within [sp, sp + size - 8) only, without overflowing: perf's
	 * access_mem sends the copy's last word to the files too. */
	if (addr >= s->sp && addr - s->sp <= smp->stack_size && smp->stack_size - (addr - s->sp) > 8)
		return word_of(smp->stack + (addr - s->sp), smp->swap, result);
	/* Modules are all reported before libdw starts (pd_unwind_sample):
	 * never from inside a step, where libdw holds on to its list. */
	if (read_module(s, addr, result))
		return true;
	s->mem_fail = true;
	return false;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct pd_unwind_space *s = arg;
	const struct pd_unwind_sample *smp = s->cur;
	Dwarf_Word v[AARCH64_NREGS];

	if (s->arch == PD_UW_ARCH_X86_64) {
		for (size_t i = 0; i < PL_ARRAY_LEN(x86_64_regs); i++)
			v[i] = smp->regs[x86_64_regs[i]];
		if (!dwfl_thread_state_registers(thread, 0, PL_ARRAY_LEN(x86_64_regs), v))
			return false;
	} else {
		for (int i = 0; i < AARCH64_NREGS; i++)
			v[i] = smp->regs[i];
		if (!dwfl_thread_state_registers(thread, 0, AARCH64_NREGS, v))
			return false;
	}
	dwfl_thread_state_register_pc(thread, smp->regs[perf_pc(s->arch)]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* ------------------------------------------------------------ space */

struct pd_unwind_space *pd_unwind_space_new(enum pd_unwind_arch arch)
{
	if (arch == PD_UW_ARCH_NONE)
		return NULL;
	elf_version(EV_CURRENT);
	struct pd_unwind_space *s = pl_xcalloc(1, sizeof(*s));
	s->arch = arch;
	/* A little-endian ELF64 header: all the backend reads is e_machine
	 * (and the class and data for the register width). */
	Elf64_Ehdr eh = {0};
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = arch == PD_UW_ARCH_X86_64 ? EM_X86_64 : EM_AARCH64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	memcpy(s->ehdr, &eh, sizeof(eh));
	s->elf = elf_memory((char *)s->ehdr, sizeof(eh));
	if (!s->elf) {
		free(s);
		return NULL;
	}
	return s;
}

/* A view report_one made that libdw never asked for is still ours. */
static int end_unused_view(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	(void)mod, (void)name, (void)start, (void)arg;
	if (*userdata)
		elf_end(*userdata);
	*userdata = NULL;
	return DWARF_CB_OK;
}

static void drop_dwfl(struct pd_unwind_space *s)
{
	if (s->dwfl) {
		dwfl_getmodules(s->dwfl, end_unused_view, NULL, 0);
		dwfl_end(s->dwfl);
	}
	s->dwfl = NULL;
	free(s->steps);
	s->steps = NULL;
	for (size_t i = 0; i < s->nviews; i++)
		munmap(s->views[i].map, s->views[i].len);
	free(s->views);
	s->views = NULL;
	s->nviews = 0;
	s->broken = false;
	if (s->reported)
		memset(s->reported, 0, s->nmods);
	if (s->elsewhere)
		memset(s->elsewhere, 0, s->nmods * sizeof(*s->elsewhere));
	s->nelsewhere = 0;
	s->unreported = s->nmods;
}

static void free_mods(struct pd_unwind_space *s)
{
	for (size_t i = 0; i < s->nmods; i++) {
		free((char *)s->mods[i].path);
		free((char *)s->mods[i].build_id);
		free((char *)s->mods[i].cached);
	}
	free(s->mods);
	free(s->reported);
	free(s->elsewhere);
	s->mods = NULL;
	s->reported = NULL;
	s->elsewhere = NULL;
	s->nelsewhere = 0;
	s->nmods = 0;
}

void pd_unwind_space_free(struct pd_unwind_space *s)
{
	if (!s)
		return;
	drop_dwfl(s);
	free_mods(s);
	if (s->elf)
		elf_end(s->elf);
	free(s);
}

void pd_unwind_space_set_modules(struct pd_unwind_space *s, const struct pd_unwind_module *m, size_t n,
				 uint64_t sig)
{
	if (s->sig == sig && s->nmods == n)
		return;
	/* The Dwfl stays when every module it holds is still mapped the
	 * same (a dlopen adds mappings): only a change of those rebuilds it. */
	uint8_t *reported = n ? pl_xcalloc(n, 1) : NULL;
	bool *elsewhere = n ? pl_xcalloc(n, sizeof(bool)) : NULL;
	size_t nelsewhere = 0;
	bool keep = s->dwfl != NULL;
	for (size_t i = 0, k = 0; keep && i < s->nmods; i++) {
		if (!s->reported[i])
			continue;
		const struct pd_unwind_module *o = &s->mods[i];
		while (k < n && m[k].start < o->start)
			k++;
		keep = k < n && m[k].start == o->start && m[k].end == o->end && m[k].pgoff == o->pgoff &&
		       strcmp(m[k].path, o->path) == 0 &&
		       strcmp(m[k].build_id ? m[k].build_id : "", o->build_id) == 0;
		if (keep) {
			reported[k] = s->reported[i];
			elsewhere[k] = s->elsewhere[i];
			nelsewhere += elsewhere[k];
		}
	}
	if (!keep) {
		drop_dwfl(s);
		if (n) {
			memset(reported, 0, n);
			memset(elsewhere, 0, n * sizeof(*elsewhere));
		}
		nelsewhere = 0;
	}
	free_mods(s);
	s->mods = n ? pl_xcalloc(n, sizeof(*m)) : NULL;
	s->reported = reported;
	s->elsewhere = elsewhere;
	s->nelsewhere = nelsewhere;
	for (size_t i = 0; i < n; i++) {
		s->mods[i] = m[i];
		s->mods[i].path = pl_xstrdup(m[i].path);
		s->mods[i].build_id = pl_xstrdup(m[i].build_id ? m[i].build_id : "");
		s->mods[i].cached = m[i].cached ? pl_xstrdup(m[i].cached) : NULL;
	}
	s->nmods = n;
	s->sig = sig;
	s->unreported = 0;
	for (size_t i = 0; i < n; i++)
		s->unreported += !reported[i];
}

void pd_unwind_space_set_locator(struct pd_unwind_space *s, pd_unwind_locate fn, void *arg, bool first)
{
	s->locate = fn;
	s->locate_arg = arg;
	s->locate_first = first;
}

bool pd_unwind_through_elsewhere(const struct pd_unwind_space *s)
{
	return s->through_elsewhere;
}

uint64_t pd_unwind_space_sig(const struct pd_unwind_space *s)
{
	return s->sig;
}

/* Report one mapping: its bias from the PT_LOAD holding its file offset;
 * not when the file is not the recorded one. */
static bool host_arch(enum pd_unwind_arch a)
{
#if defined(__x86_64__)
	return a == PD_UW_ARCH_X86_64;
#elif defined(__aarch64__)
	return a == PD_UW_ARCH_AARCH64;
#else
	return false;
#endif
}

/* [vdso]: this process's own, as perf uses its own, when the recording
 * is of this architecture and its build-id (when recorded) is the same. */
static void report_vdso(struct pd_unwind_space *s, const struct pd_unwind_module *m)
{
	size_t n;
	const char *img = own_vdso(&n);

	if (!img || !host_arch(s->arch))
		return;
	if (m->build_id[0]) {
		Elf *e = elf_memory((char *)img, n);
		const void *bid;
		char hex[2 * 64 + 1];
		ssize_t nb = e ? dwelf_elf_gnu_build_id(e, &bid) : -1;
		bool same = nb > 0 && nb <= 64;
		if (same) {
			pl_hex(bid, (size_t)nb, hex);
			same = strcmp(hex, m->build_id) == 0;
		}
		if (e)
			elf_end(e);
		if (!same)
			return;
	}
	dwfl_report_module(s->dwfl, "[vdso]", m->start, m->end);
}

/* Hide the debug sections of a file that has no .debug_frame: its
 * .eh_frame is all the unwinder needs, and libdw, when a frame's CFI
 * fails (a read past the stack copy), would load and decompress the
 * whole DWARF to look for a .debug_frame (0.28 s for one libpython).
 * Their section headers become SHT_NOBITS in the private mapping only. */
static void hide_debug(Elf *elf, const GElf_Ehdr *eh, unsigned char *map, size_t len)
{
	size_t shstrndx, nscn;
	uint32_t nobits = SHT_NOBITS;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0 || elf_getshdrnum(elf, &nscn) != 0)
		return;
	for (size_t pass = 0; pass < 2; pass++)
		for (size_t i = 1; i < nscn; i++) {
			GElf_Shdr sh;
			Elf_Scn *scn = elf_getscn(elf, i);
			const char *name = scn && gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
			if (!name || (strncmp(name, ".debug_", 7) != 0 && strncmp(name, ".zdebug_", 8) != 0))
				continue;
			if (strcmp(name, ".debug_frame") == 0 || strcmp(name, ".zdebug_frame") == 0)
				return;   /* pass 0 finds it: leave the file whole */
			uint64_t at = eh->e_shoff + i * (uint64_t)eh->e_shentsize + 4;
			if (pass == 1 && eh->e_shentsize >= 8 && at <= len && len - at >= 4) {
				uint32_t v = (eh->e_ident[EI_DATA] == ELFDATA2MSB) == (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
						     ? nobits : __builtin_bswap32(nobits);
				memcpy(map + at, &v, 4);
			}
		}
}

/* A separate debug file (a debuginfod "debuginfo" answer, a .debug
 * under a sysroot) has the build-id and the program headers but not the
 * bytes: its .text or .eh_frame is SHT_NOBITS.  Not a file to unwind in. */
static bool code_absent(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (name && sh.sh_type == SHT_NOBITS && (strcmp(name, ".text") == 0 || strcmp(name, ".eh_frame") == 0))
			return true;
	}
	return false;
}

/* One file's private view for mapping m, checked to be the recorded
 * build and to hold m's file offset in a PT_LOAD: its Elf (debug
 * sections hidden, hide_debug) and the module's address range.  false
 * when the file is absent or not the recorded one. */
/* `file` mapped privately and writable (hide_debug edits the copy);
 * NULL when it cannot be, or is too short for an ELF header. */
static unsigned char *map_private(const char *file, size_t *lenp)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf32_Ehdr)) {
		close(fd);
		return NULL;
	}
	*lenp = (size_t)st.st_size;
	unsigned char *map = mmap(NULL, *lenp, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	return map == MAP_FAILED ? NULL : map;
}

/* Whether the file's GNU build-id is `want` (hex; "" takes any file). */
static bool build_id_matches(Elf *elf, const char *want)
{
	const void *bid;
	char hex[2 * 64 + 1];
	ssize_t nb = dwelf_elf_gnu_build_id(elf, &bid);

	if (!want[0])
		return true;
	if (nb <= 0 || nb > 64)
		return false;
	pl_hex(bid, (size_t)nb, hex);
	return strcmp(hex, want) == 0;
}

/* The file's loaded span [low, high) and the load bias that puts the
 * segment holding the module's pgoff at its start; false when no
 * segment holds it or nothing is loaded. */
static bool load_span(Elf *elf, size_t phnum, const struct pd_unwind_module *m, uint64_t *bias,
		      uint64_t *low, uint64_t *high)
{
	bool found = false;

	*bias = 0, *low = UINT64_MAX, *high = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		uint64_t align = ph.p_align > 1 ? ph.p_align : 1;
		if (*low == UINT64_MAX)
			*low = ph.p_vaddr & ~(align - 1);
		if (ph.p_vaddr + ph.p_memsz > *high)
			*high = ph.p_vaddr + ph.p_memsz;
		if (!found && m->pgoff >= ph.p_offset && m->pgoff - ph.p_offset < ph.p_filesz) {
			*bias = m->start - (ph.p_vaddr + (m->pgoff - ph.p_offset));
			found = true;
		}
	}
	return found && *high > *low;
}

static bool open_view(const char *file, const struct pd_unwind_module *m, unsigned char **mapp, size_t *lenp,
		      Elf **elfp, uint64_t *from, uint64_t *to)
{
	size_t phnum, len;
	bool ok = false;
	uint64_t bias = 0, low = UINT64_MAX, high = 0;
	unsigned char *map = map_private(file, &len);

	if (!map)
		return false;
	Elf *elf = elf_memory((char *)map, len);
	GElf_Ehdr eh;
	if (elf && gelf_getehdr(elf, &eh) && elf_getphdrnum(elf, &phnum) == 0) {
		ok = build_id_matches(elf, m->build_id) && load_span(elf, phnum, m, &bias, &low, &high) &&
		     !code_absent(elf);
		if (ok)
			hide_debug(elf, &eh, map, len);
	}
	if (elf)
		elf_end(elf);
	if (!ok || !(elf = elf_memory((char *)map, len))) {
		munmap(map, len);
		return false;
	}
	*mapp = map, *lenp = len, *elfp = elf;
	*from = bias + low, *to = bias + high;
	return true;
}

/* The view of the locator's file for m, when it has one; *elsewhere
 * when that is not the recorded path. */
static bool open_located(struct pd_unwind_space *s, const struct pd_unwind_module *m, unsigned char **mapp,
			 size_t *lenp, Elf **elfp, uint64_t *from, uint64_t *to, bool *elsewhere)
{
	const char *file = s->locate ? s->locate(s->locate_arg, m) : NULL;

	*elsewhere = file && strcmp(file, m->path) != 0;
	return file && open_view(file, m, mapp, lenp, elfp, from, to);
}

/* Report one mapping: the recorded file, else perf's build-id cache copy
 * of it (as perf script finds a binary that moved), else the locator's
 * (--binary, --sysroot, debuginfod; first when it names the profiled
 * machine's files), never another build.  true when reported from a
 * file other than the recorded path. */
static bool report_one(struct pd_unwind_space *s, const struct pd_unwind_module *m)
{
	unsigned char *map;
	size_t len;
	Elf *elf;
	uint64_t from, to;

	if (strcmp(m->path, "[vdso]") == 0) {
		report_vdso(s, m);
		return false;
	}
	bool elsewhere = true;
	if (s->locate_first && open_located(s, m, &map, &len, &elf, &from, &to, &elsewhere))
		;
	else if (open_view(m->path, m, &map, &len, &elf, &from, &to))
		elsewhere = false;
	else if (m->cached && open_view(m->cached, m, &map, &len, &elf, &from, &to))
		elsewhere = true;
	else if (s->locate_first || !open_located(s, m, &map, &len, &elf, &from, &to, &elsewhere))
		return false;
	Dwfl_Module *mod = dwfl_report_module(s->dwfl, m->path, from, to);
	if (!mod) {
		elf_end(elf);
		munmap(map, len);
		return false;
	}
	void **ud;
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	if (*ud)
		elf_end(*ud);   /* reported before in this Dwfl: its view stays */
	*ud = elf;
	s->views = pl_xrealloc(s->views, (s->nviews + 1) * sizeof(*s->views));
	s->views[s->nviews++] = (struct view){map, len};
	return elsewhere;
}

/* The index + 1 of the last module starting at or below addr (0: none). */
static size_t mod_after(const struct pd_unwind_space *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nmods;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->mods[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The module of the mapping holding `addr` reported, if it was not yet:
 * only mappings a chain may reach are opened (a stale mapping of an
 * earlier exec, which perf keeps, only when a word points into it). */
static void ensure(struct pd_unwind_space *s, uint64_t addr)
{
	size_t lo = mod_after(s, addr);

	if (!lo || addr >= s->mods[lo - 1].end || s->reported[lo - 1])
		return;
	s->reported[lo - 1] = 2;
	s->unreported--;
	dwfl_report_begin_add(s->dwfl);
	bool elsewhere = report_one(s, &s->mods[lo - 1]);
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (dwfl_addrmodule(s->dwfl, addr)) {
		s->reported[lo - 1] = 1;
		s->elsewhere[lo - 1] = elsewhere;
		s->nelsewhere += elsewhere;
	}
}

static bool build(struct pd_unwind_space *s, int32_t pid)
{
	s->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!s->dwfl) {
		s->broken = true;
		return false;
	}
	dwfl_report_begin(s->dwfl);
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (!dwfl_attach_state(s->dwfl, s->elf, pid > 0 ? pid : 1, &thread_callbacks, s)) {
		s->broken = true;
		return false;
	}
	return true;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct pd_unwind_space *s = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (s->n >= s->max) {
		s->capped = true;
		return DWARF_CB_ABORT;
	}
	s->pcs[s->n++] = activation ? pc : pc - 1;
	if (s->nelsewhere && !s->through_elsewhere) {
		size_t k = mod_after(s, s->pcs[s->n - 1]);
		s->through_elsewhere = k && s->pcs[s->n - 1] < s->mods[k - 1].end && s->elsewhere[k - 1];
	}
	/* libdw goes on from a pc in no module by the backend's frame
	 * pointer walk, as libunwind does: said, not hidden. */
	if (s->n > 1 && !dwfl_addrmodule(s->dwfl, s->pcs[s->n - 1]))
		s->no_module = true;
	return DWARF_CB_OK;
}

/* Does the CFI at `pc` call its return address undefined (the outermost
 * frame, _start's)?  Tells an end from a return address libdw could not
 * read and so took as undefined. */
static bool outermost(struct pd_unwind_space *s, Dwarf_Addr pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	Dwarf_Frame *fr = NULL;
	Dwarf_Addr bias;
	Dwarf_CFI *cfi;

	if (!mod)
		return false;
	if (!((cfi = dwfl_module_eh_cfi(mod, &bias)) && dwarf_cfi_addrframe(cfi, pc - bias, &fr) == 0) &&
	    !((cfi = dwfl_module_dwarf_cfi(mod, &bias)) && dwarf_cfi_addrframe(cfi, pc - bias, &fr) == 0))
		return false;
	Dwarf_Op mem[3], *ops = NULL;
	size_t nops = 1;
	int ra = dwarf_frame_info(fr, NULL, NULL, NULL);
	bool undefined = ra >= 0 && dwarf_frame_register(fr, ra, mem, &ops, &nops) == 0 && nops == 0 && ops == mem;
	free(fr);
	return undefined;
}

/* The span [*lo, *hi) of the modules not reported yet; false: none. */
static bool unreported_span(const struct pd_unwind_space *s, uint64_t *lo, uint64_t *hi)
{
	*lo = UINT64_MAX, *hi = 0;
	for (size_t i = 0; i < s->nmods && s->unreported; i++)
		if (!s->reported[i]) {
			*lo = s->mods[i].start < *lo ? s->mods[i].start : *lo;
			*hi = s->mods[i].end > *hi ? s->mods[i].end : *hi;
		}
	return *hi > *lo;
}

/* Does any of the words at p[0..n) fall in [lo, lo + span)?  Branchless,
 * so that the compiler vectorizes it: most blocks of a stack copy hold
 * no address of a module not reported yet. */
static bool block_hits(const uint8_t *p, size_t n, bool swap, uint64_t lo, uint64_t span)
{
	uint64_t any = 0;

	if (swap) {
		for (size_t i = 0; i < n; i++) {
			uint64_t w;
			memcpy(&w, p + 8 * i, 8);
			any |= __builtin_bswap64(w) - lo < span;
		}
	} else {
		for (size_t i = 0; i < n; i++) {
			uint64_t w;
			memcpy(&w, p + 8 * i, 8);
			any |= w - lo < span;
		}
	}
	return any != 0;
}

/* Every module the chain can reach holds the pc, a register's value
 * (aarch64's x30) or a word of the stack copy (a saved return address):
 * reported before libdw starts, since a module reported between its
 * steps gave wrong callers.  Only words within the span of the modules
 * not reported yet are looked up, a block of the copy at a time. */
static void report_reachable(struct pd_unwind_space *s, const struct pd_unwind_sample *smp)
{
	enum { BLOCK = 32 };
	uint64_t lo, hi;

	if (!unreported_span(s, &lo, &hi))
		return;
	for (int i = 0; i < 64 && s->unreported; i++)
		if (has_reg(smp, i) && smp->regs[i] >= lo && smp->regs[i] < hi)
			ensure(s, smp->regs[i]);
	size_t nw = smp->stack_size / 8;
	for (size_t b = 0; b < nw && s->unreported; b += BLOCK) {
		size_t n = nw - b < BLOCK ? nw - b : BLOCK;
		if (!block_hits(smp->stack + 8 * b, n, smp->swap, lo, hi - lo))
			continue;
		for (size_t i = b; i < b + n && s->unreported; i++) {
			Dwarf_Word w;
			word_of(smp->stack + 8 * i, smp->swap, &w);
			if (w >= lo && w < hi)
				ensure(s, w);
		}
	}
}

/* ------------------------------------------------------------ step cache */

/* An x86_64 frame whose CFI says no more than: the CFA is a register plus
 * an offset, and each register is undefined, the same, or saved at the
 * CFA plus an offset (all gcc emits but for signal trampolines and stack
 * realignment) is unwound here, from a rule kept per pc, exactly as
 * libdw's handle_cfi would unwind it: the same registers set, the same
 * words read, the return address register (16) giving the caller's pc,
 * undefined or 0 ending the chain.  Anything else in a chain (no module,
 * no .eh_frame rule, a signal frame, an expression, a read that fails)
 * hands the whole sample to libdw, so a chain is always libdw's.  The
 * rules live with the Dwfl (dropped with it): a pc's module and its CFI
 * do not change while it stands. */
#define STEP_SLOTS 1024        /* direct-mapped by pc */
#define STEP_SAVED 8           /* registers saved in memory by one frame */
#define X86_64_DWARF_NREGS 17  /* rax..r15, rip: libdw's frame registers */
#define X86_64_DWARF_RA 16

struct step {
	uint64_t pc;               /* the pc looked up */
	bool used, simple;
	uint8_t cfa_reg, nsaved;
	uint64_t cfa_off;          /* added to the register, wrapping as libdw's */
	uint32_t same;             /* DWARF registers kept as they are */
	/* registers saved at CFA + off, or (value) equal to it; the others
	 * are undefined in the caller */
	struct { uint8_t reg; bool value; uint64_t off; } saved[STEP_SAVED];
};

/* libdw's rule at `pc` (an address in a reported module) as a step:
 * false when the pc is in no module yet (not kept: a later report may
 * add it), else true with st->simple saying whether the fast path can
 * take it. */
static bool step_rule(struct pd_unwind_space *s, uint64_t pc, struct step *st)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	Dwarf_Frame *fr = NULL;
	Dwarf_Addr bias;
	Dwarf_CFI *cfi;
	Dwarf_Op *ops;
	size_t nops;
	bool signal = false;

	if (!mod)
		return false;
	memset(st, 0, sizeof(*st));
	st->used = true;
	st->pc = pc;
	if (!(cfi = dwfl_module_eh_cfi(mod, &bias)) || dwarf_cfi_addrframe(cfi, pc - bias, &fr) != 0)
		return true;
	if (dwarf_frame_info(fr, NULL, NULL, &signal) != X86_64_DWARF_RA || signal ||
	    dwarf_frame_cfa(fr, &ops, &nops) != 0 || nops != 1 || ops[0].atom != DW_OP_bregx ||
	    ops[0].number >= X86_64_DWARF_NREGS)
		goto done;
	st->cfa_reg = (uint8_t)ops[0].number;
	st->cfa_off = ops[0].number2;
	for (unsigned r = 0; r < X86_64_DWARF_NREGS; r++) {
		Dwarf_Op mem[3], *o;
		size_t n;
		if (dwarf_frame_register(fr, (int)r, mem, &o, &n) != 0)
			goto done;
		/* A value rule (val_offset: x86_64's rsp = CFA) ends with
		 * DW_OP_stack_value: the CFA plus the offset, not read. */
		bool value = n > 1 && o[n - 1].atom == DW_OP_stack_value;
		if (n == 0 && o == mem) {
			continue;   /* undefined */
		} else if (n == 0 && o == NULL) {
			st->same |= 1u << r;
		} else if (st->nsaved < STEP_SAVED && o[0].atom == DW_OP_call_frame_cfa &&
			   (n - value == 1 || (n - value == 2 && o[1].atom == DW_OP_plus_uconst))) {
			st->saved[st->nsaved].reg = (uint8_t)r;
			st->saved[st->nsaved].value = value;
			st->saved[st->nsaved++].off = n - value == 2 ? o[1].number : 0;
		} else {
			goto done;
		}
	}
	st->simple = true;
done:
	free(fr);
	return true;
}

/* The step for `pc`, from the cache or libdw; NULL when the fast path
 * cannot take it. */
static const struct step *step_at(struct pd_unwind_space *s, uint64_t pc)
{
	if (!s->steps)
		s->steps = pl_xcalloc(STEP_SLOTS, sizeof(*s->steps));
	struct step *st = &s->steps[(pc ^ pc >> 10) & (STEP_SLOTS - 1)];
	if (!st->used || st->pc != pc) {
		struct step fresh;
		if (!step_rule(s, pc, &fresh))
			return NULL;
		*st = fresh;
	}
	return st->simple ? st : NULL;
}

/* Emit one frame as frame_cb does; false at the frame cap. */
static bool fast_emit(struct pd_unwind_space *s, uint64_t pc)
{
	if (s->n >= s->max) {
		s->capped = true;
		return false;
	}
	s->pcs[s->n++] = pc;
	if (s->nelsewhere && !s->through_elsewhere) {
		size_t k = mod_after(s, pc);
		s->through_elsewhere = k && pc < s->mods[k - 1].end && s->elsewhere[k - 1];
	}
	return true;
}

/* The chain by cached steps: true with s->pcs filled and *stop set, or
 * false (s->n and the flags then mean nothing) for libdw to do it. */
static bool fast_unwind(struct pd_unwind_space *s, const struct pd_unwind_sample *smp, enum pd_unwind_stop *stop)
{
	uint64_t regs[X86_64_DWARF_NREGS], next[X86_64_DWARF_NREGS];
	uint32_t set = (1u << X86_64_DWARF_NREGS) - 1;
	uint64_t pc = smp->regs[X86_64_PERF_IP];
	bool initial = true;

	for (size_t i = 0; i < X86_64_DWARF_NREGS; i++)
		regs[i] = smp->regs[x86_64_regs[i]];
	for (;;) {
		/* libdw looks the caller's rule up at its return address - 1. */
		const struct step *st = step_at(s, initial ? pc : pc - 1);
		if (!st)
			return false;
		if (!fast_emit(s, initial ? pc : pc - 1)) {
			*stop = PD_UW_MAX;
			return true;
		}
		if (!((set >> st->cfa_reg) & 1))
			return false;
		uint64_t cfa = regs[st->cfa_reg] + st->cfa_off;
		uint32_t nset = 0;
		for (unsigned r = 0; r < X86_64_DWARF_NREGS; r++)
			if (((st->same >> r) & 1) && ((set >> r) & 1)) {
				next[r] = regs[r];
				nset |= 1u << r;
			}
		for (size_t k = 0; k < st->nsaved; k++) {
			Dwarf_Word w = cfa + st->saved[k].off;
			if (!st->saved[k].value && !memory_read(s->dwfl, w, &w, s))
				return false;
			next[st->saved[k].reg] = w;
			nset |= 1u << st->saved[k].reg;
		}
		memcpy(regs, next, sizeof(regs));
		set = nset;
		if (!((set >> X86_64_DWARF_RA) & 1) || regs[X86_64_DWARF_RA] == 0) {
			*stop = PD_UW_END;
			return true;
		}
		pc = regs[X86_64_DWARF_RA];
		initial = false;
	}
}

/* The space's per-sample state, for a walk into pcs[0..max). */
static void begin_sample(struct pd_unwind_space *s, const struct pd_unwind_sample *smp, uint64_t *pcs,
			 size_t max)
{
	s->cur = smp;
	s->sp = smp->regs[perf_sp(s->arch)];
	s->given = false;
	s->mem_fail = false;
	s->no_module = false;
	s->capped = false;
	s->through_elsewhere = false;
	s->pcs = pcs;
	s->n = 0;
	s->max = max;
}

/* Why libdw's walk (its result rc) stopped.  A refused read ends the
 * chain even when libdw then takes the return address as undefined
 * (rc 0): unless the CFI says so. */
static enum pd_unwind_stop libdw_stop(struct pd_unwind_space *s, int rc)
{
	if (s->capped)
		return PD_UW_MAX;
	if (s->no_module || (rc != 0 && s->n && !dwfl_addrmodule(s->dwfl, s->pcs[s->n - 1])))
		return PD_UW_NO_MODULE;
	if (s->mem_fail && (rc != 0 || !s->n || !outermost(s, s->pcs[s->n - 1])))
		return PD_UW_MEMORY;
	return rc == 0 ? PD_UW_END : PD_UW_NO_CFI;
}

size_t pd_unwind_sample(struct pd_unwind_space *s, const struct pd_unwind_sample *smp, uint64_t *pcs,
			size_t max, enum pd_unwind_stop *stop)
{
	*stop = PD_UW_NO_REGS;
	if (!regs_complete(s->arch, smp) || max == 0)
		return 0;
	if (!s->dwfl && !s->broken)
		build(s, smp->pid);
	if (s->broken) {
		/* Nothing to unwind with: the sampled pc alone. */
		pcs[0] = smp->regs[perf_pc(s->arch)];
		*stop = PD_UW_NO_MODULE;
		return 1;
	}
	begin_sample(s, smp, pcs, max);
	/* Steps by cached rules first: the frames they visit are in
	 * modules already reported, whose rules and bytes the modules not
	 * reported yet do not change, so the chain is the one libdw would
	 * give after the pre-scan, which only libdw needs. */
	if (s->arch == PD_UW_ARCH_X86_64) {
		if (fast_unwind(s, smp, stop)) {
			s->cur = NULL;
			s->pcs = NULL;
			return s->n;
		}
		s->mem_fail = false;
		s->capped = false;
		s->through_elsewhere = false;
		s->n = 0;
	}
	report_reachable(s, smp);
	int rc = dwfl_getthread_frames(s->dwfl, smp->tid > 0 ? smp->tid : 1, frame_cb, s);
	*stop = libdw_stop(s, rc);
	if (s->n == 0) {
		/* libdw gave no frame at all: the sampled pc, as perf does. */
		pcs[0] = smp->regs[perf_pc(s->arch)];
		s->n = 1;
	}
	s->cur = NULL;
	s->pcs = NULL;
	return s->n;
}
