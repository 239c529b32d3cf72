/* pdkindex.h - the kallsyms index: the kernel's symbol table as pdsyms.c
 * builds it from one kallsyms copy, stored beside that copy so that the
 * next reader maps it instead of parsing 122k lines again.
 *
 * A kallsyms copy under the artifact root (cache/kallsyms-BOOTID) is
 * written once per boot and never changes, so its index is
 * COPY.index: the survivors of perf's fixups (pdsyms.c, when their ranges
 * are disjoint, as they are in the usual case), in address order, with
 * their names, for one shift (delta) of the addresses, and the _text
 * address the reader compares with the recording's.  The header names the
 * copy it was made from (size, mtime, inode, device) and a checksum
 * (base/checksum.h) seals the whole file: an index of another copy, of
 * another format version, or damaged in any byte is refused, and the
 * reader parses the copy as before.  Lookups in an index give exactly
 * what the parsed table gives (tests/unit/test_pdkindex.c).
 */
#ifndef PD_KINDEX_H
#define PD_KINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/error.h"
#include "pdsyms.h"

/* Which copy an index stands for. */
struct pd_kindex_source {
	uint64_t size, mtime_sec, mtime_nsec, ino, dev;
};

struct pd_kindex {
	void *map;           /* the checked blob, or NULL */
	size_t len;
	bool mapped;         /* map is pd_kindex_open's mapping (else borrowed) */
	uint64_t text_addr;  /* _text in the copy, 0 when it has none */
	uint64_t delta;      /* what was subtracted from the kernel's addresses */
	size_t nsyms;
};

void pd_kindex_source_of(const struct stat *st, struct pd_kindex_source *src);

/* "PATH.index" for a kallsyms copy at PATH; false when PATH has no index
 * by design (/proc/kallsyms itself) or it does not fit. */
bool pd_kindex_path(const char *kallsyms_path, char *out, size_t cap);

/* Build the index of a kallsyms text for `delta` (pdsyms.c's load, then
 * its survivors) into a malloc'ed blob; NULL when the table is not flat
 * (overlapping ranges: the tree decides, and that is not stored) or
 * holds nothing. */
void *pd_kindex_build(const char *text, size_t n, uint64_t delta, const struct pd_kindex_source *src,
		      size_t *len);

/* Check a blob made for `src` (NULL: the source its header names):
 * PL_ERR_MALFORMED, the error saying why, when it is refused.  On PL_OK
 * x describes it (x->map is set to blob, not owned). */
enum pl_err pd_kindex_check(const void *blob, size_t len, const struct pd_kindex_source *src,
			    struct pd_kindex *x, struct pl_error *err);

/* Seal a blob as it is: its checksum made right (the fuzz harness, to get
 * past it to the structural checks). */
void pd_kindex_seal(void *blob, size_t len);

/* Map and check the index of the kallsyms copy at kallsyms_path; false
 * (and nothing mapped) when there is none or it is refused. */
bool pd_kindex_open(struct pd_kindex *x, const char *kallsyms_path);

/* The table of a checked index, in t (which takes the mapping when
 * x->map came from pd_kindex_open, else points into the blob, which must
 * outlive t). */
void pd_kindex_adopt(struct pd_kindex *x, struct pd_symtab *t);
void pd_kindex_close(struct pd_kindex *x);

#endif
