/* elfinfo.c - ELF facts and the verified search for separate debug files
 * (see elfinfo.h).
 *
 * Files are opened read-only with O_CLOEXEC and read through libelf in
 * ELF_C_READ mode (pread on demand, no mapping), so a file truncated
 * while we read it is an error, never a SIGBUS.  Nothing here trusts the
 * file: names are copied with bounds, counts come from section sizes.
 */
#include "elfinfo.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define DEBUG_ROOT "/usr/lib/debug"

static bool name_is(const char *name, const char *plain, const char *zname)
{
	return name && (strcmp(name, plain) == 0 || strcmp(name, zname) == 0);
}

static void note_section(struct pl_elf_facts *f, const GElf_Shdr *sh, const char *name)
{
	if (sh->sh_type == SHT_SYMTAB) {
		f->has_symtab = true;
		f->symtab_entries = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	} else if (sh->sh_type == SHT_DYNSYM) {
		f->has_dynsym = true;
		f->dynsym_entries = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	}
	/* A NOBITS .debug_info (in a stripped file's skeleton) holds nothing. */
	if (sh->sh_type != SHT_NOBITS && sh->sh_size > 0) {
		f->has_debug_info |= name_is(name, ".debug_info", ".zdebug_info");
		f->has_debug_line |= name_is(name, ".debug_line", ".zdebug_line");
		f->has_debugdata |= name_is(name, ".gnu_debugdata", ".gnu_debugdata");
	}
}

/* True when the file has executable sections and none of them has bytes. */
static bool text_is_nobits(Elf *e)
{
	Elf_Scn *scn = NULL;
	bool any = false, bytes = false;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) || sh.sh_size == 0)
			continue;
		any = true;
		bytes |= sh.sh_type != SHT_NOBITS;
	}
	return any && !bytes;
}

static void read_ids(Elf *e, struct pl_elf_facts *f)
{
	const void *id = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(e, &id);
	GElf_Word crc = 0;
	const char *link;

	if (n > 0 && n <= PL_BUILD_ID_MAX && id)
		pl_hex(id, (size_t)n, f->build_id);
	link = dwelf_elf_gnu_debuglink(e, &crc);
	if (link && *link && strlen(link) < sizeof(f->debuglink) && !strchr(link, '/')) {
		f->has_debuglink = true;
		memcpy(f->debuglink, link, strlen(link) + 1);
		f->debuglink_crc = crc;
	}
}

static enum pl_err facts_of_elf(Elf *e, const char *path, struct pl_elf_facts *f,
				struct pl_error *err)
{
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_kind(e) != ELF_K_ELF)
		return pl_fail(err, PL_ERR_UNSUPPORTED, "pass an ELF executable, shared library or debug file",
			       "'%s' is not an ELF file", path);
	if (!gelf_getehdr(e, &eh))
		return pl_fail(err, PL_ERR_UNSUPPORTED, "the file may be truncated or corrupt",
			       "cannot read the ELF header of '%s': %s", path, elf_errmsg(-1));
	f->elf_class = gelf_getclass(e);
	f->machine = eh.e_machine;
	f->type = eh.e_type;
	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return pl_fail(err, PL_ERR_UNSUPPORTED, "the file may be truncated or corrupt",
			       "cannot read the section headers of '%s': %s", path, elf_errmsg(-1));
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh))
			return pl_fail(err, PL_ERR_UNSUPPORTED, "the file may be truncated or corrupt",
				       "cannot read a section header of '%s': %s", path, elf_errmsg(-1));
		note_section(f, &sh, elf_strptr(e, shstrndx, sh.sh_name));
	}
	read_ids(e, f);
	f->text_nobits = text_is_nobits(e);
	return PL_OK;
}

enum pl_err pl_elf_read_facts_fd(int fd, const char *name, struct pl_elf_facts *f,
				 struct pl_error *err)
{
	struct stat st;
	enum pl_err rc;
	Elf *e;

	memset(f, 0, sizeof(*f));
	elf_version(EV_CURRENT);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return pl_fail(err, PL_ERR_INPUT, "pass a regular file", "'%s' is not a regular file", name);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return pl_fail(err, PL_ERR_UNSUPPORTED, "pass an ELF executable, shared library or debug file",
			       "'%s' is not a readable ELF file: %s", name, elf_errmsg(-1));
	rc = facts_of_elf(e, name, f, err);
	elf_end(e);
	return rc;
}

enum pl_err pl_elf_read_facts(const char *path, struct pl_elf_facts *f, struct pl_error *err)
{
	enum pl_err rc;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		memset(f, 0, sizeof(*f));
		return pl_fail(err, PL_ERR_INPUT, "check the path", "cannot open '%s': %s", path,
			       strerror(errno));
	}
	rc = pl_elf_read_facts_fd(fd, path, f, err);
	close(fd);
	return rc;
}

/* ------------------------------------------------------------- names */

static const struct {
	unsigned em;
	const char *name;
} machines[] = {
	{EM_386, "i386"}, {EM_X86_64, "x86_64"}, {EM_AARCH64, "aarch64"}, {EM_ARM, "arm"},
	{EM_RISCV, "riscv"}, {EM_PPC, "ppc"}, {EM_PPC64, "ppc64"}, {EM_S390, "s390"},
	{EM_MIPS, "mips"}, {EM_SPARC, "sparc"}, {EM_SPARCV9, "sparcv9"}, {EM_IA_64, "ia64"},
	{EM_SH, "sh"}, {EM_ALPHA, "alpha"}, {EM_68K, "m68k"}, {EM_BPF, "bpf"},
#ifdef EM_LOONGARCH
	{EM_LOONGARCH, "loongarch"},
#endif
	{EM_ARC_COMPACT, "arc"},
};

const char *pl_elf_machine_name(unsigned machine, char *buf, size_t cap)
{
	for (size_t i = 0; i < PL_ARRAY_LEN(machines); i++)
		if (machines[i].em == machine)
			return machines[i].name;
	snprintf(buf, cap, "EM_%u", machine);
	return buf;
}

const char *pl_elf_type_name(unsigned type)
{
	switch (type) {
	case ET_EXEC: return "EXEC";
	case ET_DYN: return "DYN";
	case ET_REL: return "REL";
	case ET_CORE: return "CORE";
	default: return "OTHER";
	}
}

const char *pl_debug_source_name(enum pl_debug_source s)
{
	static const char *const names[] = {"none", "embedded", "debuglink", "build_id_dir",
					    "debuginfod"};
	return (unsigned)s < PL_ARRAY_LEN(names) ? names[s] : "none";
}

bool pl_build_id_normalize(const char *build_id, char *lower)
{
	size_t n = strlen(build_id);

	if (n < 2 || n > 2 * PL_BUILD_ID_MAX || n % 2)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = build_id[i];
		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
		lower[i] = c;
	}
	lower[n] = '\0';
	return true;
}

/* ------------------------------------------------- separate debug files */

/* snprintf into a path buffer; false when it did not fit (a cut path
 * names another file, so it is never used). */
static bool fmt_path(char *out, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static bool fmt_path(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, cap, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < cap;
}

bool pl_build_id_path(const char *root, const char *build_id, const char *suffix, char *out,
		      size_t cap)
{
	return strlen(build_id) >= 4 &&
	       fmt_path(out, cap, "%s" DEBUG_ROOT "/.build-id/%.2s/%s%s", root ? root : "", build_id,
			build_id + 2, suffix);
}

static bool file_crc(const char *path, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0L, Z_NULL, 0);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		c = crc32(c, buf, (uInt)n);
	close(fd);
	*crc = (uint32_t)c;
	return n == 0;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Why `cand` is not the debug file we want, or NULL when it is. */
static const char *refuse(const char *path, const char *cand, const char *build_id,
			  const char *debuglink, uint32_t crc)
{
	struct pl_elf_facts f;
	struct pl_error e;
	uint32_t c;

	if (access(cand, R_OK) != 0)
		return "absent";
	if (same_file(path, cand))
		return "the file itself";
	if (pl_elf_read_facts(cand, &f, &e))
		return "not a readable ELF file";
	if (*build_id) {
		if (strcmp(f.build_id, build_id) != 0)
			return "different build-id";
	} else if (!debuglink || !file_crc(cand, &c) || c != crc) {
		return "CRC differs from .gnu_debuglink";
	}
	if (!f.has_debug_info && !f.has_symtab)
		return "holds neither DWARF nor a symbol table";
	return NULL;
}

static bool try_candidate(const char *path, const char *cand, const char *build_id,
			  const char *debuglink, uint32_t crc, char *out, size_t cap,
			  struct pl_buf *tried)
{
	const char *why = refuse(path, cand, build_id, debuglink, crc);

	if (!why && strlen(cand) < cap) {
		memcpy(out, cand, strlen(cand) + 1);
		return true;
	}
	if (tried)
		pl_buf_addf(tried, "%s%s (%s)", tried->len ? "; " : "", cand, why ? why : "path too long");
	return false;
}

static bool try_debuglink(const char *path, const char *build_id, const char *link, uint32_t crc,
			  const char *sysroot, char *out, size_t cap, struct pl_buf *tried)
{
	char real[PATH_MAX], dir[PATH_MAX], cand[PATH_MAX];
	const char *roots[2] = {sysroot, ""};
	char *slash;

	if (!realpath(path, real))
		return false;
	memcpy(dir, real, strlen(real) + 1);
	slash = strrchr(dir, '/');
	*slash = '\0';
	if (fmt_path(cand, sizeof(cand), "%s/%s", dir, link) &&
	    try_candidate(path, cand, build_id, link, crc, out, cap, tried))
		return true;
	if (fmt_path(cand, sizeof(cand), "%s/.debug/%s", dir, link) &&
	    try_candidate(path, cand, build_id, link, crc, out, cap, tried))
		return true;
	for (size_t i = 0; i < 2; i++) {
		if (!roots[i])
			continue;
		/* /usr/lib/debug mirrors the device's folders, not our copy's. */
		const char *devdir = dir;
		if (*roots[i] && strncmp(dir, roots[i], strlen(roots[i])) == 0)
			devdir = dir + strlen(roots[i]);
		if (fmt_path(cand, sizeof(cand), "%s" DEBUG_ROOT "%s/%s", roots[i], devdir, link) &&
		    try_candidate(path, cand, build_id, link, crc, out, cap, tried))
			return true;
	}
	return false;
}

enum pl_debug_source pl_elf_find_debug_file(const char *path, const char *build_id,
					    const char *debuglink, uint32_t crc,
					    const char *sysroot, char *out, size_t cap,
					    struct pl_buf *tried)
{
	const char *roots[2] = {sysroot, ""};
	char cand[PATH_MAX];

	if (debuglink && *debuglink &&
	    try_debuglink(path, build_id, debuglink, crc, sysroot, out, cap, tried))
		return PL_DEBUG_DEBUGLINK;
	for (size_t i = 0; i < 2 && *build_id; i++)
		if (roots[i] && pl_build_id_path(roots[i], build_id, ".debug", cand, sizeof(cand)) &&
		    try_candidate(path, cand, build_id, NULL, 0, out, cap, tried))
			return PL_DEBUG_BUILD_ID;
	return PL_DEBUG_NONE;
}

bool pl_debuginfod_cache_entry(const char *build_id, const char *kind, char *out, size_t cap)
{
	const char *env = getenv("DEBUGINFOD_CACHE_PATH"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char dir[PATH_MAX];
	struct stat st;
	bool ok;

	if (env && *env)
		ok = fmt_path(dir, sizeof(dir), "%s", env);
	else if (home && *home && fmt_path(dir, sizeof(dir), "%s/.debuginfod_client_cache", home) &&
		 stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		ok = true;  /* the legacy location, which elfutils uses when it exists */
	else if (xdg && *xdg)
		ok = fmt_path(dir, sizeof(dir), "%s/debuginfod_client", xdg);
	else if (home && *home)
		ok = fmt_path(dir, sizeof(dir), "%s/.cache/debuginfod_client", home);
	else
		ok = false;
	return ok && fmt_path(out, cap, "%s/%s/%s", dir, build_id, kind) && stat(out, &st) == 0 &&
	       S_ISREG(st.st_mode) && st.st_size > 0;
}
