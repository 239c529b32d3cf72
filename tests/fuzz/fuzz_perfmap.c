/* fuzz_perfmap.c - JIT perf maps (/tmp/perf-PID.map) as the native
 * perf.data reader reads them (perfdata/pdsyms.h).
 *
 * The input is a map file.  It is parsed into a symbol table, and every
 * symbol's start, end and the addresses around them are looked up in
 * perf's tree; a found symbol must hold the address and have its name in
 * the table.  Lines over PD_PERFMAP_LINE_MAX are the bound (unit test).
 */
// fuzz-flags: -max_len=65536
#include "fuzz.h"
#include "perfdata/pdsyms.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pd_symtab t = {0};

	pd_symtab_parse_perfmap(&t, (const char *)data, size);
	for (size_t i = 0; i < t.n && i < 256; i++) {
		uint64_t at[4] = {t.v[i].start, t.v[i].end, t.v[i].start - 1, t.v[i].end + 1};
		for (int k = 0; k < 4; k++) {
			const struct pd_sym *s = pd_symtab_find(&t, at[k]);
			if (!s)
				continue;
			if (s < t.v || s >= t.v + t.n || s->name >= t.names_len)
				abort();
			if (at[k] < s->start || (at[k] > s->end) || (at[k] == s->end && s->end != s->start))
				abort();   /* perf's symbols__find never answers outside */
			(void)strlen(pd_sym_name(&t, s));
		}
	}
	pd_symtab_release(&t);
	return 0;
}
