/* parse.h - turn profile files into a pl_profile.
 *
 * pl_parse_path reads one file, or every chunk_* file of a device-agent
 * session folder in name order, detecting the format when asked for
 * "auto".  Parsers stream line by line: memory grows with unique frames
 * and stacks, never with input size.  Malformed records are skipped,
 * counted and previewed in the profile; passing a resource limit stops
 * the parse with PL_ERR_LIMIT.
 *
 * The per-format line parsers are exposed for unit tests.
 */
#ifndef PL_PARSE_H
#define PL_PARSE_H

#include "base/error.h"
#include "profile.h"

/* How perf.data is read.  The parser never runs anything itself: the
 * caller hands it a reader from collectors/ (collectors/perf_data.h runs
 * `perf script` and feeds its text back to the perf script parser). */
struct pl_perf_data_opts;
typedef enum pl_err (*pl_perf_data_reader)(struct pl_profile *p, const char *path,
					   const struct pl_perf_data_opts *o,
					   struct pl_error *err);
struct pl_sym_cfg;

struct pl_perf_data_opts {
	pl_perf_data_reader read;  /* NULL: perf.data is refused (`refusal` says why) */
	const char *perf_path;     /* allowlisted absolute perf; NULL: refuse */
	uint32_t timeout_ms;
	bool srcline;              /* keep every frame's address, for the lines and
				    * inline frames PerfLens computes afterwards */
	const char *refusal;       /* why perf may not run, when perf_path is NULL */
	const char *kallsyms;      /* --kallsyms for perf, or NULL */
	const char *kallsyms_copy_root; /* with kallsyms NULL: the artifact root
				    * whose per-boot copy of /proc/kallsyms the reader
				    * makes and uses (tool_kallsyms_copy), only once a
				    * perf.data is read; NULL: none */
	const char *kallsyms_shown;/* what the provenance calls it (a copy's origin) */
	const char *buildid_dir;   /* perf's build-id cache (--buildid-dir), or NULL */
	/* Where binaries are found by build-id (--binary, --sysroot,
	 * --module-map, debuginfod: symbols/symcfg.h), for DWARF unwinding
	 * when a recorded file is gone or another build; NULL: none. */
	const struct pl_sym_cfg *sym;
	const char *debuginfod_cache; /* folder for debuginfod answers, or NULL */
	const char *digest_cache;  /* folder of the input digests kept by file
				    * identity (base/digest_cache.h), or NULL */
	const char *const *allowed_roots; /* JIT perf maps read only beneath these */
	size_t nallowed_roots;     /* 0: anywhere */
	/* A device session's perf.data chunk (extension 4): read after the
	 * chunks before it, into the same profile (set by the parser). */
	bool session_chunk;
};

struct pl_parse_opts {
	enum pl_format format;     /* PL_FMT_AUTO to detect */
	const char *folded_event;  /* event name for folded input; NULL: "unknown" */
	struct pl_perf_data_opts perf_data;
	/* Leave the last file's SHA-256 to be finished later (its source's
	 * pending_hash), so a big file's hashing can overlap what comes
	 * after parsing; pl_parse_finish_hashes then fills it in. */
	bool defer_hash;
	/* Where input digests are kept by file identity
	 * (base/digest_cache.h), or NULL: every input is hashed. */
	const char *digest_cache;
};

enum pl_err pl_parse_path(struct pl_profile *p, const char *path,
			  const struct pl_parse_opts *opts, struct pl_error *err);

/* Wait for the SHA-256 of every source parsed with defer_hash; fails
 * (PL_ERR_INPUT) when a file changed while it was read. */
enum pl_err pl_parse_finish_hashes(struct pl_profile *p, struct pl_error *err);
/* Would pl_parse_finish_hashes wait for a hashing thread? */
bool pl_parse_hashes_busy(const struct pl_profile *p);

/* Detect the format of a file's first bytes. */
enum pl_format pl_detect_format(const char *head, size_t n);

/* Parse a format by name ("auto", "folded", ...); false when unknown. */
bool pl_format_from_name(const char *name, enum pl_format *out);

/* Append "formats read: NAME, NAME, ... (pass one as format=NAME ...)"
 * to `out`, every input format but "auto", for messages. */
void pl_format_list(struct pl_buf *out);

/* Streaming perf script parser (also reads agent chunks: a line
 * "### PERF_STAT ###" switches the rest of the file to perf stat). */
struct pl_ps_parser;
struct pl_ps_parser *pl_ps_new(struct pl_profile *p, const char *source);
enum pl_err pl_ps_line(struct pl_ps_parser *ps, const char *line, size_t n,
		       uint64_t line_no, struct pl_error *err);
enum pl_err pl_ps_finish(struct pl_ps_parser *ps, struct pl_error *err);
/* The text after the last line given to pl_ps_line, in place (complete
 * lines, the first numbered `line_no`): when a record is open, take the
 * frame lines that start it, all at once, and return how many bytes (and
 * *nlines lines) they are; 0 when nothing was taken.  Lines longer than
 * `max_line` are left to pl_ps_line.  *rc gets an error, as pl_ps_line's. */
size_t pl_ps_body(struct pl_ps_parser *ps, const char *text, size_t n, uint64_t line_no,
		  uint64_t max_line, uint64_t *nlines, enum pl_err *rc, struct pl_error *err);

/* One folded line "a;b;c 12". */
enum pl_err pl_folded_line(struct pl_profile *p, uint32_t event,
			   const char *line, size_t n, uint64_t line_no,
			   struct pl_error *err);

#endif
