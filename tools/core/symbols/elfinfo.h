/* elfinfo.h - facts about one ELF file and where its debug information is.
 *
 * Read with libelf only (no DWARF parsing): class, machine, type, the
 * GNU build-id, which symbol tables and debug sections are present, the
 * .gnu_debuglink and .gnu_debugdata sections.  The separate-debug-file
 * search looks where GDB and libdwfl look and accepts a candidate only
 * when it is verified: same build-id, or (for a file without build-id)
 * the CRC that .gnu_debuglink records.  Used by the symbolizer and by the
 * inspect_elf tool, so both always agree on what is findable.
 */
#ifndef PL_ELFINFO_H
#define PL_ELFINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/util.h"

#define PL_BUILD_ID_MAX 64         /* bytes; real ones are 16 to 20 */
#define PL_BUILD_ID_HEX_MAX (2 * PL_BUILD_ID_MAX + 1)
#define PL_DEBUGLINK_MAX 256        /* a debuglink file name, NUL included */

struct pl_elf_facts {
	int elf_class;                 /* ELFCLASS32 or ELFCLASS64 */
	unsigned machine;              /* EM_* */
	unsigned type;                 /* ET_* */
	char build_id[PL_BUILD_ID_HEX_MAX]; /* lowercase hex; "" when none */
	bool has_symtab, has_dynsym;
	uint64_t symtab_entries;       /* sh_size / sh_entsize, null entry included */
	uint64_t dynsym_entries;       /* (what readelf's "contains N entries" says) */
	bool has_debug_info, has_debug_line;
	bool has_debugdata;            /* .gnu_debugdata: an xz MiniDebugInfo symtab */
	bool has_debuglink;
	char debuglink[PL_DEBUGLINK_MAX];
	uint32_t debuglink_crc;
	bool text_nobits;              /* executable sections hold no bytes: this is
					* itself a separate debug file */
};

/* Read the facts of the ELF file at `path`.  A file that is not ELF, or
 * an ELF whose headers cannot be read, is PL_ERR_UNSUPPORTED with a
 * message saying so; an unreadable file is PL_ERR_INPUT. */
enum pl_err pl_elf_read_facts(const char *path, struct pl_elf_facts *f, struct pl_error *err);
/* The same on an open descriptor (borrowed: not closed); `name` is for
 * messages. */
enum pl_err pl_elf_read_facts_fd(int fd, const char *name, struct pl_elf_facts *f,
				 struct pl_error *err);

/* "x86_64", "aarch64"... for an EM_* value ("EM_123" when unknown; the
 * buffer form is used then). */
const char *pl_elf_machine_name(unsigned machine, char *buf, size_t cap);
/* "EXEC", "DYN", "REL", "CORE" or "OTHER". */
const char *pl_elf_type_name(unsigned type);

/* Where a module's debug information came from. */
enum pl_debug_source {
	PL_DEBUG_NONE = 0,     /* none found */
	PL_DEBUG_EMBEDDED,     /* .debug_info in the file itself */
	PL_DEBUG_DEBUGLINK,    /* the file .gnu_debuglink names */
	PL_DEBUG_BUILD_ID,     /* /usr/lib/debug/.build-id/xx/rest.debug */
	PL_DEBUG_DEBUGINFOD,   /* fetched from a debuginfod server */
};
/* "none", "embedded", "debuglink", "build_id_dir", "debuginfod". */
const char *pl_debug_source_name(enum pl_debug_source s);

/* Find the separate debug file of the ELF at `path` on this machine.
 * `build_id` (lowercase hex or "") and `debuglink`/`crc` (NULL when the
 * file has none) describe it.  Candidates, in order:
 *   DIR/LINK, DIR/.debug/LINK, [SYSROOT]/usr/lib/debug/DIR/LINK (DIR the
 *   folder of the real path), then [SYSROOT]/usr/lib/debug/.build-id/
 *   xx/rest.debug;
 * the sysroot variants first when `sysroot` is set.  The first candidate
 * that is verified wins: its path goes to `out`.  A candidate that is the
 * file itself is skipped.  `tried` (may be NULL) gets "path (why)" for
 * every candidate refused or absent, '; '-separated, for messages. */
enum pl_debug_source pl_elf_find_debug_file(const char *path, const char *build_id,
					    const char *debuglink, uint32_t crc,
					    const char *sysroot, char *out, size_t cap,
					    struct pl_buf *tried);

/* The file [SYSROOT]/usr/lib/debug/.build-id/xx/rest[SUFFIX] for a
 * build-id, into `out`; false when the build-id is too short. */
bool pl_build_id_path(const char *root, const char *build_id, const char *suffix, char *out,
		      size_t cap);

/* The elfutils debuginfod client cache entry for a build-id and kind
 * ("debuginfo", "executable"): $DEBUGINFOD_CACHE_PATH, else
 * $XDG_CACHE_HOME/debuginfod_client, else ~/.cache/debuginfod_client,
 * then /BUILDID/KIND.  True when the file is there (`out` gets its path). */
bool pl_debuginfod_cache_entry(const char *build_id, const char *kind, char *out, size_t cap);

/* True when `build_id` is 2 to 128 lowercase or uppercase hex digits, an
 * even number of them; `lower` (2*64+1 bytes) gets it in lowercase. */
bool pl_build_id_normalize(const char *build_id, char *lower);

#endif
