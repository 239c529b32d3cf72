/* fuzz_pdsyms.c - libFuzzer harness for the native perf.data reader's
 * symbol tables (perfdata/pdsyms.c): a recording names any file under
 * the allowed root as a DSO, so its bytes are outside bytes.  The first
 * input byte picks what the rest is: 0 an ELF file (pd_symtab_load_elf,
 * perf's .symtab/.dynsym/PLT rules, the build-id note, .gnu_debuglink),
 * 1 a kallsyms text, 2 a /sys/kernel/notes image.  Every symbol found is
 * looked up at its start, middle and end, and addresses 0 and ~0 too.
 * Seed corpus: tests/fuzz/corpus/pdsyms/ (the elf harness's small ELF
 * files behind mode 0, a kallsyms excerpt, a notes image). */
#include "fuzz.h"
#include "perfdata/pdsyms.h"

#include <stdlib.h>
#include <string.h>

static void lookups(const struct pd_symtab *t)
{
	const uint64_t edges[] = {0, ~0ull};

	for (size_t i = 0; i < t->n; i++) {
		const struct pd_sym *s = &t->v[i];
		const uint64_t at[] = {s->start, s->start + (s->end - s->start) / 2, s->end};
		for (size_t k = 0; k < 3; k++) {
			const struct pd_sym *f = pd_symtab_find(t, at[k]);
			if (f)
				(void)strlen(pd_sym_name(t, f));
		}
	}
	for (size_t k = 0; k < 2; k++)
		(void)pd_symtab_find(t, edges[k]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned mode = fuzz_take_byte(&data, &size);
	struct pd_symtab t;
	char hex[41];
	uint64_t addr;

	switch (mode % 3) {
	case 0:
		pd_symtab_load_elf(&t, fuzz_file("dso.so", data, size), "");
		lookups(&t);
		pd_symtab_release(&t);
		break;
	case 1: {
		/* A copy of exact size, so that a read past the text is caught. */
		char *text = malloc(size ? size : 1);
		memcpy(text, data, size);
		pd_symtab_load_kallsyms(&t, text, size, 0x1000);
		lookups(&t);
		pd_symtab_release(&t);
		(void)pd_kallsyms_addr(text, size, "_text", &addr);
		free(text);
		break;
	}
	default:
		(void)pd_kernel_notes_build_id(data, size, hex);
		break;
	}
	return 0;
}
