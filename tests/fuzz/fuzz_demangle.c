/* fuzz_demangle.c - linker names made readable (profile/demangle.h).
 *
 * The input is one name per line.  Each is demangled in both forms
 * (libiberty, bounded by PL_DEMANGLE_MAX), and the full form and the raw
 * line are shortened; then the lines are functions of one or two DSOs of
 * a profile, whose short names must name one function each.  Checked on
 * every input: results are NUL-terminated strings no longer than what
 * they came from (plus "@plt" kept), nothing reads past a line, and no
 * two functions with different names share a shown name in one DSO.
 */
// fuzz-flags: -max_len=20000
#include "fuzz.h"
#include "profile/demangle.h"
#include "profile/profile.h"

#include <stdlib.h>
#include <string.h>

static void one(const char *s, size_t n)
{
	char *f = pl_demangle(s, n, PL_DM_FULL), *p = pl_demangle(s, n, PL_DM_PERF);
	char *sh = pl_demangle_shorten(s, n);

	if (strlen(sh) > n)
		abort();
	free(sh);
	if (f) {
		size_t fl = strlen(f);
		sh = pl_demangle_shorten(f, fl);
		if (strlen(sh) > fl)
			abort();
		free(sh);
	}
	free(f);
	free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pl_profile prof;
	uint32_t dso[2];
	char **sn;
	size_t nf;

	pl_profile_init(&prof, NULL);
	dso[0] = pl_intern_str(&prof, "/bin/a", 6);
	dso[1] = pl_intern_str(&prof, "/bin/b", 6);
	for (size_t i = 0, k = 0; i < size && k < 64; k++) {
		const uint8_t *nl = memchr(data + i, '\n', size - i);
		size_t n = nl ? (size_t)(nl - (data + i)) : size - i;
		/* a private copy the exact length of the line: ASan sees an overread */
		char *line = malloc(n ? n : 1);

		memcpy(line, data + i, n);
		one(line, n);
		if (n && !memchr(line, '\0', n))
			pl_intern_func(&prof, pl_intern_str(&prof, line, n), dso[k & 1]);
		free(line);
		i += n + 1;
	}
	nf = pl_nfuncs(&prof);
	sn = pl_profile_short_names(&prof);
	for (size_t a = 0; a < nf; a++)
		for (size_t b = a + 1; b < nf; b++) {
			const struct pl_func *fa = &prof.funcs[a], *fb = &prof.funcs[b];
			const char *na = sn[a] ? sn[a] : pl_str(&prof, fa->symbol);
			const char *nb = sn[b] ? sn[b] : pl_str(&prof, fb->symbol);
			if (fa->dso == fb->dso && fa->symbol != fb->symbol && strcmp(na, nb) == 0)
				abort();   /* two functions under one shown name */
		}
	pl_short_names_free(sn, nf);
	pl_profile_release(&prof);
	return 0;
}
