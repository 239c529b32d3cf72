/* fuzz_kindex.c - libFuzzer harness for the kallsyms index
 * (perfdata/pdkindex.h), a cache file under the artifact root that a
 * damaged disk or another program may have changed.  The first input
 * byte picks what the rest is: 0 an index (sealed first, so that the
 * fuzzer gets past the checksum to the size, order and name checks; the
 * source is the one its header names), looked up at each symbol's start,
 * middle and end once taken; 1 a kallsyms text, indexed, whose index must
 * then be taken and answer every lookup as the parsed table does (a
 * mismatch aborts).  Seed corpus: tests/fuzz/corpus/kindex/. */
#include "fuzz.h"
#include "perfdata/pdkindex.h"

#include <stdlib.h>
#include <string.h>

static void lookups(const struct pd_symtab *t, const struct pd_symtab *oracle)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct pd_sym *s = &t->v[i];
		const uint64_t at[] = {s->start, s->start + (s->end - s->start) / 2, s->end, s->start - 1};
		for (size_t k = 0; k < 4; k++) {
			const struct pd_sym *f = pd_symtab_find(t, at[k]);
			if (f)
				(void)strlen(pd_sym_name(t, f));
			if (!oracle)
				continue;
			const struct pd_sym *g = pd_symtab_find(oracle, at[k]);
			if (!f != !g || (f && (f->start != g->start || f->end != g->end ||
					       strcmp(pd_sym_name(t, f), pd_sym_name(oracle, g)) != 0)))
				abort();
		}
	}
	(void)pd_symtab_find(t, 0);
	(void)pd_symtab_find(t, ~0ull);
}

static void as_index(const uint8_t *data, size_t size)
{
	void *blob = malloc(size ? size : 1);
	struct pd_symtab t;
	struct pd_kindex x;
	struct pl_error err;

	memcpy(blob, data, size);
	pd_kindex_seal(blob, size);
	if (pd_kindex_check(blob, size, NULL, &x, &err) == PL_OK) {
		pd_kindex_adopt(&x, &t);
		lookups(&t, NULL);
		pd_symtab_release(&t);
	}
	free(blob);
}

static void as_text(const uint8_t *data, size_t size)
{
	static const struct pd_kindex_source src = {1, 2, 3, 4, 5};
	struct pd_symtab parsed, indexed;
	struct pd_kindex x;
	struct pl_error err;
	size_t len = 0;
	void *blob = pd_kindex_build((const char *)data, size, 0, &src, &len);

	if (!blob)
		return;
	if (pd_kindex_check(blob, len, &src, &x, &err) != PL_OK)
		abort();   /* the builder's own index refused */
	pd_kindex_adopt(&x, &indexed);
	pd_symtab_load_kallsyms(&parsed, (const char *)data, size, 0);
	lookups(&indexed, &parsed);
	pd_symtab_release(&indexed);
	pd_symtab_release(&parsed);
	free(blob);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned mode = fuzz_take_byte(&data, &size);

	if (mode & 1)
		as_text(data, size);
	else
		as_index(data, size);
	return 0;
}
