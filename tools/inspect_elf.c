/* inspect_elf.c - the inspect_elf tool: what an ELF file offers a
 * symbolizer, and one sentence on what that means.
 *
 * Everything comes from elfinfo.c (libelf reads of the file and of the
 * candidate debug files, each verified by build-id or CRC), so the
 * answer names the same separate debug file that symbolize would use.
 * Nothing is fetched: the debuginfod cache is only looked at.
 */
#include "registry.h"
#include "base/escape.h"
#include "store/artifact.h"
#include "symbols/elfinfo.h"

#include <elf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOT_FOUND_MAX 1000   /* bytes of the refused-candidates list kept */

struct debug_state {
	struct pl_elf_facts f;
	enum pl_debug_source sep_source;
	char sep[PATH_MAX];
	bool have_build_id_dir, have_cache;
	char build_id_dir[PATH_MAX], cache[PATH_MAX];
	struct pl_buf tried;
	const char *servers;
};

static void find_debug(const struct tool_ctx *ctx, const char *path, struct debug_state *d)
{
	struct pl_elf_facts bf;
	struct pl_error e;
	const char *id = d->f.build_id;

	d->sep_source = pl_elf_find_debug_file(path, id, d->f.has_debuglink ? d->f.debuglink : NULL,
					       d->f.debuglink_crc, ctx->sym.sysroot, d->sep,
					       sizeof(d->sep), &d->tried);
	if (*id && pl_build_id_path(ctx->sym.sysroot ? ctx->sym.sysroot : "", id, ".debug",
				    d->build_id_dir, sizeof(d->build_id_dir)))
		d->have_build_id_dir = pl_elf_read_facts(d->build_id_dir, &bf, &e) == PL_OK &&
				       strcmp(bf.build_id, id) == 0;
	if (!d->have_build_id_dir && *id && ctx->sym.sysroot &&
	    pl_build_id_path("", id, ".debug", d->build_id_dir, sizeof(d->build_id_dir)))
		d->have_build_id_dir = pl_elf_read_facts(d->build_id_dir, &bf, &e) == PL_OK &&
				       strcmp(bf.build_id, id) == 0;
	d->have_cache = *id && pl_debuginfod_cache_entry(id, "debuginfo", d->cache, sizeof(d->cache));
	d->servers = ctx->sym.debuginfod_urls && *ctx->sym.debuginfod_urls ? ctx->sym.debuginfod_urls
									   : NULL;
}

/* The one sentence, from the best source down to nothing. */
static void summarize(const struct debug_state *d, struct pl_buf *b)
{
	const struct pl_elf_facts *f = &d->f;
	bool dwarf = f->has_debug_info && f->has_debug_line;

	if (f->type == ET_REL || f->type == ET_CORE) {
		pl_buf_addf(b, "This is a%s file, not a loaded module: symbolize the linked executable or library instead.",
			    f->type == ET_REL ? " relocatable object (.o/.ko)" : " core");
	} else if (dwarf && f->text_nobits) {
		pl_buf_adds(b, "This is a separate debug file: symbolize accepts it (or its build-id) and resolves functions, source lines and inline chains from it.");
	} else if (dwarf) {
		pl_buf_adds(b, "Functions, source lines and inline chains resolve from this file's own DWARF.");
	} else if (d->sep_source != PL_DEBUG_NONE) {
		pl_buf_addf(b, "Functions, source lines and inline chains resolve from the separate debug file %s (found by %s).",
			    d->sep, d->sep_source == PL_DEBUG_DEBUGLINK ? ".gnu_debuglink" : "build-id");
	} else if (d->have_cache) {
		pl_buf_addf(b, "Functions, source lines and inline chains can come from the debuginfod cache entry %s once symbolize runs with a debuginfod server configured.",
			    d->cache);
	} else if (f->has_symtab) {
		pl_buf_addf(b, "Function names resolve from .symtab, but no DWARF is here or findable, so there will be no source lines or inline chains%s.",
			    d->servers ? " unless the debuginfod server has it" : "");
	} else if (f->has_dynsym || f->has_debugdata) {
		pl_buf_addf(b, "Only %s functions have names; addresses inside other functions stay unresolved and there are no source lines%s.",
			    f->has_debugdata ? "exported (.dynsym) and MiniDebugInfo (.gnu_debugdata)" : "exported (.dynsym)",
			    d->servers ? " unless the debuginfod server has the debug file" : "");
	} else {
		pl_buf_addf(b, "Nothing resolves: the file has no symbols and no debug information%s.",
			    d->servers ? " (the debuginfod server may have it)" : "");
	}
}

/* What to do next.  No call can be filled in here (symbolize needs the
 * offsets the agent holds), so this is advice, not next_steps. */
static json_t *advice(const struct debug_state *d, const char *path)
{
	const struct pl_elf_facts *f = &d->f;
	json_t *a = json_array();
	bool full = (f->has_debug_info && f->has_debug_line) || d->sep_source != PL_DEBUG_NONE;
	struct pl_buf b = {0};

	pl_buf_addf(&b, "symbolize(binary=\"%s\", offsets=[\"0x...\"]) names module offsets (ELF addresses as nm prints them)", path);
	json_array_append_new(a, pl_json_text(b.data));
	if (!full && !d->have_cache && *f->build_id) {
		pl_buf_reset(&b);
		pl_buf_addf(&b, "for source lines: install the debug package that provides /usr/lib/debug/.build-id/%.2s/%s.debug, pass the unstripped binary with --binary, or set DEBUGINFOD_URLS",
			    f->build_id, f->build_id + 2);
		json_array_append_new(a, json_string(b.data));
	} else if (!full && !d->have_cache) {
		json_array_append_new(a, json_string("the file has no build-id: pass the unstripped binary itself to symbolize"));
	}
	pl_buf_release(&b);
	return a;
}

static json_t *debug_json(const struct debug_state *d)
{
	const struct pl_elf_facts *f = &d->f;
	char crc[16];
	json_t *link = json_null(), *sep = json_null();

	/* Paths and the debuglink name are bytes: escaped (docs/paths.md). */
	if (f->has_debuglink) {
		snprintf(crc, sizeof(crc), "0x%08x", f->debuglink_crc);
		link = json_pack("{s:o,s:s}", "file", pl_json_bytes(f->debuglink), "crc", crc);
	}
	if (d->sep_source != PL_DEBUG_NONE)
		sep = json_pack("{s:o,s:s}", "path", pl_json_bytes(d->sep), "found_by",
				pl_debug_source_name(d->sep_source));
	return json_pack("{s:b,s:b,s:b,s:o,s:o,s:o,s:o,s:s?,s:o}",
			 "debug_info", f->has_debug_info, "debug_line", f->has_debug_line,
			 "gnu_debugdata", f->has_debugdata, "gnu_debuglink", link, "separate_file", sep,
			 "build_id_dir", pl_json_bytes(d->have_build_id_dir ? d->build_id_dir : NULL),
			 "debuginfod_cache", pl_json_bytes(d->have_cache ? d->cache : NULL),
			 "debuginfod_servers", d->servers,
			 "not_found", pl_json_text(d->sep_source == PL_DEBUG_NONE && d->tried.len &&
						   !f->has_debug_info ? d->tried.data : NULL));
}

enum pl_err tool_inspect_elf(const struct tool_ctx *ctx, json_t *args, json_t **result,
			     struct pl_error *err)
{
	const char *arg = json_string_value(json_object_get(args, "path"));
	char path[PATH_MAX], mbuf[32], *shown;
	struct debug_state d;
	struct pl_buf sentence = {0};
	enum pl_err rc;

	memset(&d, 0, sizeof(d));
	if ((rc = tool_resolve_input(ctx, arg, path, sizeof(path), err)))
		return rc;
	if ((rc = pl_elf_read_facts(path, &d.f, err)))
		return rc;
	find_debug(ctx, path, &d);
	if (d.tried.len > NOT_FOUND_MAX) {
		d.tried.data[NOT_FOUND_MAX] = '\0';
		d.tried.len = NOT_FOUND_MAX;
	}
	summarize(&d, &sentence);
	shown = pl_esc_dup(path);  /* as a result prints it, to be passed back */
	*result = json_pack("{s:s,s:s,s:s,s:s,s:s?,s:b,s:b,s:{s:I,s:I},s:o,s:o,s:o,s:[]}",
		"path", shown, "class", d.f.elf_class == ELFCLASS32 ? "ELF32" : "ELF64",
		"machine", pl_elf_machine_name(d.f.machine, mbuf, sizeof(mbuf)),
		"type", pl_elf_type_name(d.f.type), "build_id", *d.f.build_id ? d.f.build_id : NULL,
		"stripped", !d.f.has_symtab, "is_debug_file", d.f.text_nobits,
		"symbols", "symtab", (json_int_t)d.f.symtab_entries, "dynsym", (json_int_t)d.f.dynsym_entries,
		"debug", debug_json(&d), "symbolization", pl_json_text(sentence.data),
		"advice", advice(&d, shown), "next_steps");
	free(shown);
	pl_buf_release(&sentence);
	pl_buf_release(&d.tried);
	return *result ? PL_OK : pl_fail(err, PL_ERR_INTERNAL, "report this as a bug",
					      "the facts of '%s' could not be encoded", arg);
}
