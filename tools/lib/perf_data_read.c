/* perf_data_read.c - the native perf.data reader, with perf script as its
 * fallback (see perf_data_read.h).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf_data_read.h"
#include "collectors/perf_data.h"
#include "base/escape.h"
#include "base/input.h"
#include "base/fsatomic.h"
#include "base/util.h"
#include "perfdata/pdformat.h"
#include "perfdata/pdkindex.h"
#include "perfdata/pdread.h"
#include "symbols/symbolize.h"

#include <sys/mman.h>
#include <sys/stat.h>

/* Mark the perf script result with the reason the native reader gave. */
static void mark_fallback(struct pl_profile *p, const char *why)
{
	for (size_t i = 0; i < p->nsources; i++) {
		p->sources[i].reader = "perf script";
		free(p->sources[i].reader_reason);
		p->sources[i].reader_reason = why ? pl_xstrdup(why) : NULL;
	}
}

static enum pl_err skip_record(void *arg, const uint8_t *rec, size_t size, uint64_t time,
			       struct pl_error *err)
{
	(void)arg, (void)rec, (void)size, (void)time, (void)err;
	return PL_OK;
}

bool tool_perf_data_count_lost(const char *path, uint64_t *records, uint64_t *lost, uint64_t *lost_samples)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct pd_file f;
	struct pl_error err;
	struct stat st;
	void *base;
	bool ok = false;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || st.st_size <= 0 ||
	    (base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		close(fd);
		return false;
	}
	close(fd);
	memset(&f, 0, sizeof(f));
	if (pd_open(&f, base, (size_t)st.st_size, &err) == PL_OK) {
		ok = pd_walk(&f, skip_record, NULL, &err) == PL_OK;
		*records = f.counts.lost_records;
		*lost = f.counts.lost;
		*lost_samples = f.counts.lost_samples;
		pd_release(&f);
	}
	munmap(base, (size_t)st.st_size);
	return ok;
}

/* The perf script path's sources get the losses the native reader
 * would have reported (summary.c warns of them from the source). */
static void note_losses(struct pl_profile *p, const char *path)
{
	uint64_t recs = 0, lost = 0, lost_samples = 0;

	if (!tool_perf_data_count_lost(path, &recs, &lost, &lost_samples))
		return;
	for (size_t i = 0; i < p->nsources; i++) {
		p->sources[i].lost_records = recs;
		p->sources[i].lost_events = lost;
		p->sources[i].lost_samples = lost_samples;
	}
}

/* The DWARF unwinder's binary finder: the symbolizer's own lookup of a
 * module by recorded path and build-id (--module-map, --sysroot, the
 * path, then --binary files, /usr/lib/debug/.build-id and debuginfod),
 * as symbolize, srcline and the CFI check find binaries.  A debuginfod
 * answer is a file only with a cache folder (else a memory file the
 * unwinder cannot open). */
struct finder {
	const struct pl_sym_cfg *cfg;
	struct pl_debuginfod dbg;
	struct pl_symbolizer *sym;
	char fetched[4096];
};

static const char *find_binary(void *arg, const char *path, const char *build_id)
{
	struct finder *f = arg;
	struct pl_sym_module *m;
	struct pl_error ignored;

	if (path[0] != '/')
		return NULL;
	if (!f->sym)
		f->sym = pl_symbolizer_new(f->cfg, f->dbg.urls && *f->dbg.urls ? &f->dbg : NULL);
	if (pl_symbolizer_open_dso(f->sym, path, build_id, &m, &ignored) != PL_OK)
		return NULL;
	const char *file = pl_sym_module_path(m), *id = pl_sym_module_build_id(m);
	if (file[0] == '/')
		return file;
	/* Fetched just now: named by its URL, kept as CACHE/HEX/executable
	 * (debuginfod.h); a "debuginfo" answer holds no code to unwind in. */
	if (!f->dbg.cache_dir || !id ||
	    snprintf(f->fetched, sizeof(f->fetched), "%s/%s/executable", f->dbg.cache_dir, id) >=
		    (int)sizeof(f->fetched) ||
	    access(f->fetched, R_OK) != 0)
		return NULL;
	return f->fetched;
}

/* Is there anywhere but the recorded path to look? */
static bool finder_useful(const struct pl_sym_cfg *c)
{
	return c && (c->nbinaries || c->sysroot || c->nmodule_maps || (c->debuginfod_urls && *c->debuginfod_urls));
}

/* A device session's perf.data chunk (chunk_N.perf.zst), or a
 * compressed perf.data: decompressed in memory (input.c, within the input
 * limits) and read natively after the chunks before it (none for a file
 * of its own); its source is the file, with its codec. */
static enum pl_err read_in_memory(struct pl_profile *p, const char *path,
				      const struct pl_perf_data_opts *o, struct pl_error *err)
{
	struct pl_input in;
	struct pl_buf image = {0};
	enum pl_err rc;

	if ((rc = pl_input_open(&in, path, &p->limits, err)))
		return rc;
	rc = pl_input_read_all(&in, &image, err);
	const char *codec = pl_codec_name(in.codec);
	size_t file_size = (size_t)in.file_size;
	pl_input_close(&in);
	if (rc == PL_OK)
		rc = pd_read_chunk(p, image.data, image.len, path, o->kallsyms, NULL, o->allowed_roots,
				   o->nallowed_roots, err);
	if (rc == PL_OK && p->nsources) {
		struct pl_source *src = &p->sources[p->nsources - 1];
		src->codec = codec;
		src->size = file_size;
	}
	pl_buf_release(&image);
	return rc;
}

/* A gzip- or zstd-compressed file, as input.c tells by its magic: the
 * native reader reads it decompressed in memory, as a session's chunk. */
static bool compressed(const char *path, const struct pl_limits *lim)
{
	struct pl_input in;
	struct pl_error ignored;
	bool z;

	if (pl_input_open(&in, path, lim, &ignored) != PL_OK)
		return false;
	z = in.codec != PL_CODEC_NONE;
	pl_input_close(&in);
	return z;
}

/* The native reader on `path`, with the binary finder and digest cache
 * set for the call: PL_ERR_UNSUPPORTED when it cannot read such a file. */
static enum pl_err read_natively(struct pl_profile *p, const char *path, const struct pl_perf_data_opts *o,
				 bool in_memory, struct pl_error *err)
{
	/* One that is gone or another build here from where symbolize finds
	 * binaries (first when a sysroot or module map says the recording is
	 * of another machine's files). */
	struct finder fd = {o->sym, {NULL, 0, o->debuginfod_cache, 0}, NULL, ""};
	enum pl_err rc;

	/* With srcline every frame keeps its address, as perf_data.c does. */
	p->keep_addrs = o->srcline;
	/* A DWARF chain through a binary that moved is unwound from perf's
	 * build-id cache copy, as perf script finds it. */
	pd_read_set_buildid_dir(o->buildid_dir);
	if (finder_useful(o->sym)) {
		fd.dbg.urls = o->sym->debuginfod_urls;
		fd.dbg.timeout_ms = o->sym->debuginfod_timeout_ms;
		pd_read_set_binary_finder(find_binary, &fd, o->sym->sysroot || o->sym->nmodule_maps);
	}
	pd_read_set_digest_cache(o->digest_cache);
	rc = in_memory ? read_in_memory(p, path, o, err)
		       : pd_read_profile_in(p, path, o->kallsyms, NULL, o->allowed_roots, o->nallowed_roots, err);
	pd_read_set_digest_cache(NULL);
	pd_read_set_binary_finder(NULL, NULL, false);
	pl_symbolizer_free(fd.sym);
	return rc;
}

/* The native reader refused `path` (err says why) and perf script may not
 * stand in: forced native, or a session chunk or compressed file, which
 * perf script cannot read.  The refusal, naming the fix. */
static enum pl_err native_refusal(const char *path, const struct pl_perf_data_opts *o, bool in_memory,
				  enum pl_err rc, const char *why, struct pl_error *err)
{
	char hint[sizeof(err->hint)];

	snprintf(hint, sizeof(hint), "%s", in_memory && !o->session_chunk
		 ? "decompress it (zstd -d or gunzip) and analyze the perf.data, which perf script reads"
		 : err->hint);
	return pl_fail(err, rc, hint, "the native perf.data reader does not support %s in '%s'",
		       why, PL_ESC_MSG(path));
}

enum pl_err tool_perf_data_read(struct pl_profile *p, const char *path,
				const struct pl_perf_data_opts *given, struct pl_error *err)
{
	const char *force = getenv("PERFLENS_PERF_DATA_READER");
	struct pl_perf_data_opts with_copy;
	const struct pl_perf_data_opts *o = given;
	static char kallsyms_copy[4096];
	char why[512];
	enum pl_err rc;
	bool in_memory;

	if (!given->kallsyms && given->kallsyms_copy_root) {
		with_copy = *given;
		with_copy.kallsyms = tool_kallsyms_copy(given->kallsyms_copy_root, kallsyms_copy,
							sizeof(kallsyms_copy));
		o = &with_copy;
	}
	/* perf script reads neither: a chunk adds to those before it, and
	 * perf reads no compressed perf.data */
	in_memory = o->session_chunk || compressed(path, &p->limits);
	if (force && strcmp(force, "perf-script") == 0 && !in_memory) {
		snprintf(why, sizeof(why), "PERFLENS_PERF_DATA_READER=perf-script asked for it");
	} else {
		if ((rc = read_natively(p, path, o, in_memory, err)) != PL_ERR_UNSUPPORTED)
			return rc;
		/* The refusal's text is what the native reader does not support. */
		snprintf(why, sizeof(why), "%s", err->text);
		if ((force && strcmp(force, "native") == 0) || in_memory)
			return native_refusal(path, o, in_memory, rc, why, err);
	}
	if (!o->perf_path)
		return pl_fail(err, PL_ERR_UNSUPPORTED,
			       o->refusal ? o->refusal : "install linux-perf or start with --perf-path FILE",
			       "'%s' needs perf script: the native reader does not support %s",
			       PL_ESC_MSG(path), why);
	rc = coll_perf_data_read(p, path, o, err);
	if (rc == PL_OK) {
		mark_fallback(p, why);
		note_losses(p, path);
	}
	return rc;
}

/* The boot id (a UUID), or false. */
static bool boot_id(char out[40])
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, out, 39) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 32)
		return false;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	for (char *c = out; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') || *c == '-'))
			return false;
	return true;
}

/* A whole file into `out`, up to `max` bytes; false when it cannot be opened. */
static bool read_whole(const char *path, struct pl_buf *out, size_t max)
{
	char chunk[1 << 16];
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0 && out->len < max)
		pl_buf_add(out, chunk, (size_t)n);
	close(fd);
	return true;
}

bool tool_kallsyms_index(const char *kallsyms_path)
{
	char path[4200];
	struct stat ks, ix;
	struct pd_kindex_source src;
	struct pl_error ignored;
	struct pl_buf text = {0};
	size_t len = 0;
	void *blob;
	bool ok;

	if (!pd_kindex_path(kallsyms_path, path, sizeof(path)) || stat(kallsyms_path, &ks) != 0)
		return false;
	/* One made after the copy stands (the reader checks it whole, and
	 * parses the copy when it refuses it). */
	if (stat(path, &ix) == 0 && (ix.st_mtim.tv_sec > ks.st_mtim.tv_sec ||
				     (ix.st_mtim.tv_sec == ks.st_mtim.tv_sec && ix.st_mtim.tv_nsec >= ks.st_mtim.tv_nsec)))
		return true;
	if (!read_whole(kallsyms_path, &text, 256u << 20))
		return false;
	pd_kindex_source_of(&ks, &src);
	/* The copy is of the running kernel: a recording of it needs no shift. */
	blob = text.len ? pd_kindex_build(text.data, text.len, 0, &src, &len) : NULL;
	pl_buf_release(&text);
	ok = blob && pl_write_file_atomic(path, blob, len, &ignored) == PL_OK;
	free(blob);
	return ok;
}

const char *tool_kallsyms_copy(const char *artifact_root, char *buf, size_t cap)
{
	char id[40], dir[4096];
	struct pl_buf text = {0};
	struct pl_error ignored;

	if (!artifact_root || !boot_id(id) ||
	    snprintf(dir, sizeof(dir), "%s/cache", artifact_root) >= (int)sizeof(dir) ||
	    snprintf(buf, cap, "%s/kallsyms-%s", dir, id) >= (int)cap)
		return "/proc/kallsyms";
	if (access(buf, R_OK) == 0) {
		tool_kallsyms_index(buf);
		return buf;
	}
	if (!read_whole("/proc/kallsyms", &text, 256u << 20))
		return "/proc/kallsyms";
	/* Hidden addresses (kptr_restrict, no CAP_SYSLOG) are all zero: not
	 * worth keeping, and another run may see the real ones. */
	bool real = text.len > 16 && strncmp(text.data, "0000000000000000", 16) != 0;
	if (!real || pl_make_dirs(dir, &ignored) != PL_OK ||
	    pl_write_file_atomic(buf, text.data, text.len, &ignored) != PL_OK) {
		pl_buf_release(&text);
		return "/proc/kallsyms";
	}
	pl_buf_release(&text);
	tool_kallsyms_index(buf);
	return buf;
}
