/* pdprefetch.h - symbol tables loaded ahead of the walk, in a thread.
 *
 * A perf.data file names, in its build-id feature, every module its
 * samples hit; the kallsyms index names the kernel's table.  Both can be
 * read before the first sample needs them, on the other CPU, while the
 * walk parses records: the prefetcher loads each listed file's table
 * with the very call the reader would make (pd_symtab_load_elf with the
 * same path and build-id, pd_kindex_open of the same kallsyms), so a
 * table taken from it is the table the reader would have built.  The
 * reader takes a table when it first needs it: done, it is handed over;
 * being loaded, the reader waits for it; not started, the reader loads
 * it itself and the prefetcher skips it.  Nothing else is shared.
 */
#ifndef PD_PREFETCH_H
#define PD_PREFETCH_H

#include <stdbool.h>

#include "pdformat.h"
#include "pdkindex.h"
#include "pdsyms.h"

struct pd_prefetch;

/* Start loading the tables of f's build-id list (files only) and the
 * index of `kallsyms`; NULL when there is nothing to load or no thread. */
struct pd_prefetch *pd_prefetch_start(const struct pd_file *f, const char *kallsyms);

/* The table of `path` with `build_id` into t, when it was listed: true
 * with t filled (the caller's now), false when the caller loads it. */
bool pd_prefetch_take_elf(struct pd_prefetch *pf, const char *path, const char *build_id,
			  struct pd_symtab *t);

/* The kallsyms index opened ahead: true with x filled (the caller's). */
bool pd_prefetch_take_kindex(struct pd_prefetch *pf, struct pd_kindex *x);

/* Stop, wait for the thread, and free what was not taken. */
void pd_prefetch_end(struct pd_prefetch *pf);

#endif
