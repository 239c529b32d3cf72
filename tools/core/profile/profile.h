/* profile.h - the profile model every parser fills and every view reads.
 *
 * A profile is a set of unique stacks.  Each stack belongs to one thread,
 * lists frame ids root to leaf, and carries one weight entry per event it
 * was sampled under (samples and summed period), so different events are
 * never merged.  Frames are interned by (function, unknown-symbol address,
 * source line); functions by (symbol, DSO).  Every table gives dense ids in
 * order of first appearance, so the same input always yields the same ids
 * and byte-identical output.
 *
 * What the input does not say stays unknown: a thread without a pid has
 * pid -1, a frame without a DSO has dso PL_NOID, a folded profile has the
 * event "unknown" with unit "count".
 *
 * Ownership: the profile owns every string and table; pointers returned by
 * the accessors are borrowed and live until pl_profile_release().
 */
#ifndef PL_PROFILE_H
#define PL_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/digest_cache.h"
#include "base/error.h"
#include "base/limits.h"
#include "base/util.h"

enum pl_kind {
	PL_KIND_USER = 0,  /* a user-space DSO or executable */
	PL_KIND_KERNEL,    /* [kernel.kallsyms], a [module] or vmlinux */
	PL_KIND_JIT,       /* /tmp/perf-PID.map, a [JIT ...] region or perf
			    * inject --jit's jitted-PID-N.so */
	PL_KIND_UNKNOWN    /* the input did not say where the code lives */
};
const char *pl_kind_name(enum pl_kind k);

struct pl_event {
	uint32_t name;      /* string id */
	uint64_t samples;   /* records seen */
	uint64_t period;    /* summed period (1 per record when none given) */
	uint64_t records_without_period;
	uint32_t unit1;     /* string id + 1 of the unit the input named
			     * (pprof, speedscope, V8); 0: derived (pl_event_unit) */
};

struct pl_thread {
	int64_t pid;        /* -1: the input did not say */
	int64_t tid;        /* -1: the input did not say */
	uint32_t comm;      /* string id, PL_NOID when unknown */
};

struct pl_func {
	uint32_t symbol;    /* string id, e.g. "memcpy" or "[unknown]" */
	uint32_t dso;       /* string id as printed, PL_NOID when unknown */
	uint8_t kind;       /* enum pl_kind */
	uint8_t inlined;    /* inlined into its caller (perf printed "(inlined)"
			     * for the DSO, or the symbolizer said so) */
	uint8_t unknown;    /* the symbol is "[unknown]" */
	uint8_t undemangled;/* the name looks mangled but libiberty could not
			     * read it (or it is over PL_DEMANGLE_MAX) */
	uint32_t linkage;   /* string id of the linker (mangled) name the input
			     * gave, `symbol` being its demangled full form
			     * (profile/demangle.h); PL_NOID when the input's
			     * name was not mangled */
};

struct pl_frame {
	uint32_t func;
	uint32_t srcline;   /* string id of the srcline line, or PL_NOID */
	uint64_t addr;      /* kept for unknown symbols (has_addr), and, after
			     * srclines, a leaf's module offset */
	uint8_t has_addr;
};

struct pl_stack {
	uint32_t thread;
	uint32_t depth;
	const uint32_t *frames;  /* depth frame ids, root to leaf; borrowed */
	uint32_t first_weight;   /* index into weights, PL_NOID ends */
};

struct pl_weight {
	uint32_t event;
	uint32_t next;      /* next weight of the same stack, PL_NOID ends */
	uint64_t samples;
	uint64_t period;
};

/* A malformed line kept for the provenance preview. */
struct pl_bad_line {
	uint64_t line_no;
	char reason[64];
	char text[161];     /* the first 160 bytes */
};
#define PL_MAX_PREVIEWS 5

/* A record that a peer collapser would have dropped: perf script text
 * whose last sample is not followed by a blank line. */
struct pl_tail {
	uint32_t stack;
	uint32_t event;
	uint64_t period;
};

/* A sample with its time (perf script's time column, perf.data's
 * PERF_SAMPLE_TIME, a V8 tick): which stack and event it added weight to,
 * when, and how much.  The table keeps at most PL_MAX_TIMED of them, the
 * first ones read; samples past that, and samples the input gave no time,
 * are counted (past_cap, untimed), never silently lost.  Entries are in
 * input order while parsing; the stack table stores them sorted by event,
 * time, stack and period (store/stack_table.h), and reads them back so.
 * pl_profile_restack moves them to the new stack ids. */
struct pl_timed {
	uint64_t time_ns;   /* the input's clock (perf: seconds since boot) */
	uint64_t period;
	uint32_t stack;
	uint32_t event;
};
#define PL_MAX_TIMED (1u << 20)
struct pl_timed_table {
	struct pl_timed *v;
	size_t n, cap;
	uint64_t past_cap;  /* samples with a time beyond PL_MAX_TIMED */
	uint64_t untimed;   /* samples the input gave no time */
};

struct pl_stat_block;  /* perf_stat.h */
struct pl_profile;
struct pl_sched;       /* sched.h */

/* Input formats; "auto" is resolved per file before parsing. */
enum pl_format {
	PL_FMT_AUTO = 0,
	PL_FMT_FOLDED,
	PL_FMT_PERF_SCRIPT,
	PL_FMT_AGENT_CHUNKS,
	PL_FMT_PERF_STAT,
	PL_FMT_PERF_DATA,  /* read through `perf script` (perf_data.c) */
	PL_FMT_PPROF,      /* profile.proto, gzipped or not (parse_pprof.c) */
	PL_FMT_SPEEDSCOPE, /* speedscope JSON (parse_json.c) */
	PL_FMT_CPUPROFILE  /* V8 .cpuprofile JSON (parse_json.c) */
};
const char *pl_format_name(enum pl_format f);

struct pl_input_hash;

/* One input file, for provenance. */
struct pl_source {
	char *path;
	uint64_t size;          /* bytes on disk */
	uint64_t text_bytes;    /* decompressed bytes */
	char sha256[65];        /* "" while pending_hash is */
	struct pl_input_hash *pending_hash;  /* see pl_parse_opts.defer_hash */
	/* sha256 came from the digest cache (base/digest_cache.h): the entry
	 * (under the cache folder) and the identity it was kept for, which
	 * the file still had. */
	char *sha256_cache_entry;
	struct pl_file_identity identity;
	enum pl_format format;
	const char *codec;      /* "none", "gzip", "zstd" */
	uint64_t lines;
	uint64_t records;       /* samples (or stat counters) it contributed */
	char *converted_by;     /* the command that turned it into text, or NULL */
	/* perf.data: which reader ran ("native" or "perf script"), why perf
	 * script did when it did (or NULL), and what the native reader saw. */
	const char *reader;
	char *reader_reason;
	struct pl_perf_data_info *perf_data;
	/* perf.data: what perf lost while recording (PERF_RECORD_LOST
	 * records, the events they count, PERF_RECORD_LOST_SAMPLES), set
	 * by either reader: the quality warnings say it. */
	uint64_t lost_records, lost_events, lost_samples;
};

/* What the native perf.data reader found in a file (provenance). */
struct pl_perf_data_info {
	bool pipe, swapped, compressed;
	uint64_t records, samples, samples_skipped, unknown_records;
	uint64_t lost_records, lost, lost_samples, out_of_order;
	uint64_t compressed_bytes, decompressed_bytes;
	char *hostname, *osrelease, *arch, *cpudesc, *cmdline, *perf_version;
	uint32_t nrcpus_online, nrcpus_avail;
	char *kernel_symbols;   /* where kernel names came from, or why none */
	char *jit_maps;         /* JIT perf maps read or not (NULL: no JIT code) */
	char *events;           /* the event names, ", "-joined */
	/* DWARF call graphs unwound (pdunwind.h): samples unwound, user
	 * frames they gave, samples without registers or stack, and how
	 * many chains ended for each reason (names in dwarf_stop_names). */
	uint64_t dwarf_samples, dwarf_frames, dwarf_no_stack;
	uint64_t dwarf_two_bases;       /* samples through a file mapped at two load bases */
	uint64_t dwarf_elsewhere;       /* samples through a module whose CFI came from a file
					 * other than its recorded path */
	uint64_t dwarf_stops[8];
	const char *dwarf_stop_names[8]; /* static strings, NULL past the last */
};
void pl_perf_data_info_free(struct pl_perf_data_info *i);

/* A file mapping from a PERF_RECORD_MMAP/MMAP2 line: where a module was
 * loaded in a process, which verifies the load base of its frames. */
struct pl_mapping {
	int64_t pid;            /* -1: every process (the kernel) */
	uint64_t start, len;    /* runtime addresses */
	uint64_t pgoff;         /* file offset of `start` */
	uint32_t path;          /* string id */
	bool has_file_id;       /* MMAP2 named the file: device and inode */
	uint32_t dev_major, dev_minor;
	uint64_t ino;
};
#define PL_MAX_MAPPINGS (1u << 20)

/* A module's build-id as the recording states it (perf buildid-list). */
struct pl_build_id {
	uint32_t dso;           /* string id of the path as the profile names it */
	char hex[129];          /* lowercase hex */
};
#define PL_MAX_BUILD_IDS 4096

/* Frames perf left "[unknown]" in user modules, and what naming them from
 * local binaries achieved (recover.c).  Counts are of unique frames. */
enum pl_recover_reason {
	PL_RR_NO_BASE,          /* no mmap record verifies the load base */
	PL_RR_NO_BUILD_ID,      /* the recording gives no build-id for the module */
	PL_RR_NO_BINARY,        /* no local file with that build-id */
	PL_RR_NO_SYMBOL,        /* the symbol table names nothing there */
	PL_RR_NO_LINE,          /* no line table row confirms it */
	PL_RR_DISAGREE,         /* symbol table and DWARF name different functions */
	PL_RR_CONFLICT,         /* the same frame resolves differently in two processes */
	PL_RR_COUNT
};
extern const char *const pl_recover_reason_names[PL_RR_COUNT];

/* A module none of whose local candidates matched: its frames stayed
 * [unknown] or without lines, and a --binary file with this build-id
 * would fix that. */
struct pl_missing_module {
	uint32_t dso;                 /* string id */
	char build_id[129];           /* "" when the recording gives none */
	uint64_t unknown_frames;      /* unique [unknown] frames left */
	uint64_t frames_without_lines;/* frames srclines could not give a line */
};
#define PL_MAX_MISSING_MODULES 8

struct pl_recovery {
	bool attempted;
	uint64_t user_frames_unknown; /* unique unknown user frames with an address */
	uint64_t recovered;
	uint64_t not_recovered[PL_RR_COUNT];
	struct pl_missing_module missing[PL_MAX_MISSING_MODULES];
	size_t nmissing;
	uint64_t missing_more;        /* frames of modules past PL_MAX_MISSING_MODULES */
};

/* Caller checks (symbols/cfi.h judges them).  With frame-pointer
 * unwinding, a frame whose function has not made rbp its frame pointer at
 * the sampled pc (a frameless function, a prologue or an epilogue) makes
 * the unwinder read the next return address out of an older frame: the
 * frame printed above it may not be its caller, which is then missing.
 * Such edges are marked per sample.  While the perf script parser reads
 * text with mmap records it keeps each distinct (stack, event, sampled
 * pcs) as a site with its weight; the check judges every user frame of a
 * site (but the root, whose missing callers are a truncated stack) and
 * turns the sites into marked weights, then drops them.  A mark lists the
 * frames whose edge to the frame above is not known to be kept, as words
 * (frame index << 2 | enum pl_edge), index ascending; a stack's weight
 * that no marked entry holds had every edge kept (or was not checked:
 * see caller_check). */
enum pl_edge {
	PL_EDGE_KEPT = 0,       /* rbp was the frame pointer: the caller above is the real one */
	PL_EDGE_MAY_SKIP = 1,   /* the CFA is not rbp-based there: a caller may be missing */
	PL_EDGE_UNKNOWN = 2     /* no module or no CFI to say (unknown_modules says why) */
};
#define PL_MARK_INDEX(w) ((w) >> 2)
#define PL_MARK_EDGE(w) ((enum pl_edge)((w) & 3))
#define PL_MAX_SITE_BYTES (64u << 20)  /* site keys kept while parsing */
#define PL_MAX_UNKNOWN_MODULES 16

struct pl_marked {
	uint32_t stack, event, mark;
	uint64_t samples, period;
};

/* Why a frame's edge stays unknown (noted once per module and reason). */
enum pl_unknown_why {
	PL_UW_NOT_A_FILE, PL_UW_NO_BUILD_ID, PL_UW_NO_LOCAL_FILE, PL_UW_NO_LOAD_BASE,
	PL_UW_CANNOT_OPEN, PL_UW_NOT_ELF, PL_UW_NOT_X86_64, PL_UW_NO_CFI, PL_UW_NO_SEGMENT,
	PL_UW_NO_ROW, PL_UW_TOO_MANY_MODULES, PL_UW_COUNT
};
extern const char *const pl_unknown_why_text[PL_UW_COUNT];
struct pl_unknown_module {
	uint32_t dso;           /* string id, PL_NOID for a frame without one */
	uint32_t why;           /* enum pl_unknown_why */
};

/* How the recording unwound an event's user stacks, from its attributes
 * (perf evlist -v, or perf script --header's "# event :" lines). */
struct pl_event_attr {
	uint32_t name;          /* string id of the event name */
	bool fp_chain;          /* CALLCHAIN without DWARF (STACK_USER,
				 * exclude_callchain_user) or LBR (BRANCH_STACK) */
	uint32_t dwarf_stack;   /* DWARF: bytes of user stack copied per sample
				 * (sample_stack_user; perf's default 8192); 0: not DWARF */
	bool counts_waits;      /* off-CPU records whose sample count is the
				 * waits they sum (collect_profile's "waits=N") */
};
#define PL_MAX_EVENT_ATTRS 64

struct pl_caller_check {
	bool attempted;         /* the sites of frame-pointer events were judged */
	uint64_t records_unchecked;  /* records past PL_MAX_SITE_BYTES, not judged */
	struct pl_event_attr attrs[PL_MAX_EVENT_ATTRS];
	size_t nattrs;
	struct pl_unknown_module unknown[PL_MAX_UNKNOWN_MODULES];
	size_t nunknown;
	uint64_t unknown_modules_more; /* past PL_MAX_UNKNOWN_MODULES */
};

/* The missing-module entry of `dso` (created, with its build-id), or NULL
 * past PL_MAX_MISSING_MODULES (then counted in missing_more). */
struct pl_missing_module *pl_recovery_missing(struct pl_profile *p, uint32_t dso,
					      const char *build_id);

struct pl_profile {
	struct pl_limits limits;
	struct pl_strtab strs;        /* every name: symbols, DSOs, comms... */

	struct pl_event *events;
	size_t nevents, events_cap;

	struct pl_strtab thread_keys; /* (pid, tid, comm) -> thread id */
	struct pl_thread *threads;
	size_t threads_cap;

	struct pl_strtab func_keys;   /* (symbol, dso) -> func id */
	struct pl_func *funcs;
	size_t funcs_cap;

	struct pl_strtab frame_keys;  /* (func, addr, srcline) -> frame id */
	struct pl_frame *frames;
	size_t frames_cap;

	struct pl_strtab stack_keys;  /* (thread, frames...) -> stack id */
	struct pl_stack *stacks;
	size_t stacks_cap;

	struct pl_weight *weights;
	size_t nweights, weights_cap;

	/* Provenance counters, filled by the parsers. */
	uint64_t lines;
	uint64_t records_parsed;
	uint64_t records_skipped;     /* comments and lines we ignore */
	uint64_t records_malformed;
	uint64_t srclines;            /* srcline lines attached to frames */
	uint64_t names_escaped;       /* distinct names kept escaped (base/escape.h) */
	struct pl_bad_line previews[PL_MAX_PREVIEWS];
	size_t npreviews;

	struct pl_tail *tails;        /* unterminated last records */
	size_t ntails, tails_cap;

	/* What the maker of the input said may distort it (a collection's
	 * warnings, collect_profile), repeated in the data quality. */
	char **notes;
	size_t nnotes;

	struct pl_stat_block **stats; /* perf stat sections, in input order */
	size_t nstats, stats_cap;

	struct pl_source *sources;    /* input files, in the order read */
	size_t nsources, sources_cap;

	/* Side-band records (perf script --show-mmap-events and the like). */
	uint64_t sideband_records;
	struct pl_mapping *mappings;  /* in input order */
	size_t nmappings, mappings_cap;
	uint64_t mappings_dropped;    /* past PL_MAX_MAPPINGS */
	struct pl_build_id *build_ids;
	size_t nbuild_ids, build_ids_cap;
	struct pl_recovery recovery;

	/* Caller checks (see enum pl_edge). */
	struct pl_strtab site_keys;   /* (stack, event, pcs root first) -> site id, packed (profile.c) */
	uint64_t *site_samples, *site_period;
	size_t sites_cap;
	struct pl_strtab mark_keys;   /* mark words -> mark id */
	struct pl_marked *marked;     /* sorted by stack, event, mark once finished */
	size_t nmarked, marked_cap;
	struct pl_caller_check caller_check;

	/* Keep every frame's address, not only unknown ones' (set before
	 * parsing): a later pass symbolizes them and rebuilds the stacks
	 * with pl_profile_restack (symbols/srclines.h). */
	bool keep_addrs;
	struct pl_sched *sched;       /* per-task times from sched tracepoints (sched.h), or NULL */
	struct pl_timed_table timed;  /* samples with their times (struct pl_timed) */
	/* Set before loading a stack table (store/stack_table.h) to read
	 * the timed samples too; without it only their counts are read,
	 * which spares the tools that do not look at time the decoding. */
	bool want_timed;
};

void pl_profile_init(struct pl_profile *p, const struct pl_limits *lim);
/* Size the tables for about this many entries (hints; a reader that knows
 * the counts saves the growing). */
void pl_profile_reserve(struct pl_profile *p, size_t nstrs, size_t nfuncs,
			size_t nframes, size_t nstacks);
/* Add a note (copied) for the data quality's warnings. */
void pl_profile_add_note(struct pl_profile *p, const char *text);

void pl_profile_release(struct pl_profile *p);

static inline size_t pl_nthreads(const struct pl_profile *p) { return p->thread_keys.count; }
static inline size_t pl_nfuncs(const struct pl_profile *p) { return p->func_keys.count; }
static inline size_t pl_nframes(const struct pl_profile *p) { return p->frame_keys.count; }
static inline size_t pl_nstacks(const struct pl_profile *p) { return p->stack_keys.count; }
static inline const char *pl_str(const struct pl_profile *p, uint32_t id)
{
	return pl_strtab_get(&p->strs, id);
}

/* Interning.  Each returns a dense id, or PL_NOID after filling `err`
 * with PL_ERR_LIMIT when a limit would be passed. */
uint32_t pl_intern_str(struct pl_profile *p, const char *s, size_t n);
/* pl_intern_str takes outside bytes (a frame name, a DSO path, a comm)
 * and keeps them in the escaped form of base/escape.h when they are not
 * UTF-8 or hold a backslash: every string of the profile is UTF-8 and
 * what the input held can be had back (pl_esc_decode_add).
 * pl_intern_text takes text already in that form (a stored artifact, the
 * symbolizer's names) as it is. */
uint32_t pl_intern_text(struct pl_profile *p, const char *s, size_t n);
uint32_t pl_intern_event(struct pl_profile *p, const char *name, size_t n);
uint32_t pl_intern_thread(struct pl_profile *p, int64_t pid, int64_t tid,
			  uint32_t comm);
/* A mangled `symbol` (C++, Rust, D) of a module that is not the kernel's
 * is demangled, as perf does: the function's symbol is the full demangled
 * name and its linkage the given one.  Functions stay keyed by the given
 * name, so two linker symbols with one demangled name stay two. */
uint32_t pl_intern_func(struct pl_profile *p, uint32_t symbol, uint32_t dso);
/* A function inlined into a caller of module `dso`: the DSO stays the
 * module, the inlined flag is set, and it is a function apart from an
 * out-of-line copy of the same name. */
uint32_t pl_intern_func_inlined(struct pl_profile *p, uint32_t symbol, uint32_t dso);
uint32_t pl_intern_frame(struct pl_profile *p, uint32_t func, bool has_addr,
			 uint64_t addr, uint32_t srcline, struct pl_error *err);
uint32_t pl_intern_stack(struct pl_profile *p, uint32_t thread,
			 const uint32_t *frames_root_first, uint32_t depth,
			 struct pl_error *err);

/* The index (root first) of the frame a stack's thread was executing
 * outside the kernel: the last frame that is not a kernel frame (the
 * kernel frames above it do not make its address a return address: it
 * is the user-mode pc, as perf's unwinders treat it), or depth - 1. */
uint32_t pl_stack_leaf_index(const struct pl_profile *p, const struct pl_stack *st);

/* Rebuild every stack frame by frame: `map` is called for each frame of
 * each stack (root first; `leaf` for the frame at pl_stack_leaf_index,
 * `pid` the stack's process) and appends the frames that replace it, root first, to
 * out[*n] (at most `cap`).  It interns them with pl_intern_frame into
 * the profile's frame table, which starts empty: `old` is the frame as
 * it was (a copy).  Stacks that become equal are merged (weights summed;
 * event totals do not change); tails, caller-check marks and timed samples
 * follow their stacks (a mark's frame index moves to where its frame's replacement
 * begins); sites, keyed by the old stack ids, are dropped.  On an error
 * (a limit) the profile is fit only for pl_profile_release. */
#define PL_RESTACK_MAX_EXPANSION 66  /* frames one frame may become */
typedef enum pl_err (*pl_frame_map_fn)(void *arg, struct pl_profile *p,
				       const struct pl_frame *old, bool leaf, int64_t pid,
				       uint32_t *out, size_t cap, size_t *n,
				       struct pl_error *err);
enum pl_err pl_profile_restack(struct pl_profile *p, pl_frame_map_fn map, void *arg,
			       struct pl_error *err);

/* Add one record (or `samples` records, for folded input) of `period`
 * total weight under `event` to `stack`.  `has_period` false means the
 * input gave no period and `period` is the sample count. */
void pl_add_weight(struct pl_profile *p, uint32_t stack, uint32_t event,
		   uint64_t samples, uint64_t period, bool has_period);

/* Remember one sample's time (after its pl_add_weight): kept while the
 * table has room, else counted in past_cap.  pl_note_untimed counts a
 * sample the input gave no time. */
void pl_add_timed(struct pl_profile *p, uint32_t stack, uint32_t event, uint64_t time_ns,
		  uint64_t period);
static inline void pl_note_untimed(struct pl_profile *p) { p->timed.untimed++; }

/* The weight entry of `stack` for `event`, or NULL. */
const struct pl_weight *pl_stack_weight(const struct pl_profile *p,
					uint32_t stack, uint32_t event);

/* The event `name` whose weights are in `unit`, as the input names it;
 * PL_NOID (PL_ERR_MALFORMED in `err`) when the profile already has an
 * event of that name in another unit: events are never merged. */
uint32_t pl_intern_event_unit(struct pl_profile *p, const char *name, size_t n,
			      const char *unit, struct pl_error *err);

/* Event id by name, PL_NOID when absent. */
uint32_t pl_find_event(const struct pl_profile *p, const char *name);

/* Unit of an event's period: the unit the input named (pl_intern_event_unit),
 * else "samples" when no record carried a period,
 * "ns" for cpu-clock and task-clock, "count" for folded input whose event
 * is unknown, "events" otherwise. */
const char *pl_event_unit(const struct pl_profile *p, uint32_t event);

/* Remember a malformed line for the provenance preview (first few only). */
void pl_note_malformed(struct pl_profile *p, uint64_t line_no,
		       const char *reason, const char *text, size_t n);

/* Caller checks.  pl_add_site adds one record of `period` to the site
 * (stack, event, pcs), `pcs` root first as the stack's frames, and returns
 * the site's id; a site past PL_MAX_SITE_BYTES is counted in
 * records_unchecked instead (PL_NOID).
 * pl_add_marked appends; pl_marked_finish sorts the entries and merges
 * equal keys (call it once all are in).  pl_marked_first gives the index
 * of the first entry of `stack` (nmarked when none); entries of a stack
 * are contiguous after pl_marked_finish.  pl_drop_sites frees the sites. */
uint32_t pl_add_site(struct pl_profile *p, uint32_t stack, uint32_t event, const uint64_t *pcs,
		     uint32_t depth, uint64_t period);
/* One more record of `period` for the site pl_add_site returned (PL_NOID:
 * the site was past the bound, and so is this record). */
void pl_add_site_again(struct pl_profile *p, uint32_t site, uint64_t period);
static inline size_t pl_nsites(const struct pl_profile *p) { return p->site_keys.count; }
/* Site `site`'s stack, event and pcs (root first, the stack's depth of
 * them, at most `cap`); false when its key does not fit this profile. */
bool pl_site_read(const struct pl_profile *p, uint32_t site, uint32_t *stack, uint32_t *event,
		  uint64_t *pcs, uint32_t cap);
uint32_t pl_intern_mark(struct pl_profile *p, const uint32_t *words, size_t n);
static inline size_t pl_nmarks(const struct pl_profile *p) { return p->mark_keys.count; }
/* The words of mark `id` (borrowed) and their count. */
const uint32_t *pl_mark_words(const struct pl_profile *p, uint32_t id, size_t *n);
/* The edge of frame `index` in mark `id`. */
enum pl_edge pl_mark_edge(const struct pl_profile *p, uint32_t id, uint32_t index);
void pl_add_marked(struct pl_profile *p, uint32_t stack, uint32_t event, uint32_t mark,
		   uint64_t samples, uint64_t period);
void pl_marked_finish(struct pl_profile *p);
size_t pl_marked_first(const struct pl_profile *p, uint32_t stack);
void pl_drop_sites(struct pl_profile *p);
/* Remember how event `name` was recorded, from the text of its attributes
 * (either form perf prints); only a frame-pointer event's sites are
 * judged.  pl_event_fp_chain: was event `event` (an id) so recorded? */
void pl_note_event_attr(struct pl_profile *p, const char *name, size_t n, const char *attrs,
			size_t attrs_n);
bool pl_event_fp_chain(const struct pl_profile *p, uint32_t event);
/* The user stack bytes each sample of `event` copied for DWARF unwinding
 * (STACK_USER's sample_stack_user), 0 when it was not so recorded or the
 * input did not say; pl_set_event_dwarf_stack records it (a stored
 * analysis read back). */
uint32_t pl_event_dwarf_stack(const struct pl_profile *p, uint32_t event);
void pl_set_event_dwarf_stack(struct pl_profile *p, uint32_t name, uint32_t bytes);
/* Do the samples of `event` count waits (each record an aggregate of
 * them, its sample count theirs)?  pl_set_event_counts_waits says so of
 * the event named by string id `name`. */
bool pl_event_counts_waits(const struct pl_profile *p, uint32_t event);
void pl_set_event_counts_waits(struct pl_profile *p, uint32_t name);
/* Is `name` an event of off-CPU time (offcpu-time: collect_profile's
 * off_cpu mode and perf record --off-cpu; off-cpu, offcpu-us and the like
 * of folded captures)?  Such a name is no perf event: `perf record -e`
 * refuses it, and the way to collect it is collect_profile(mode=off_cpu). */
bool pl_event_is_offcpu_time(const char *name);
/* Were event `event`'s edges judged? */
static inline bool pl_caller_checked(const struct pl_profile *p, uint32_t event)
{
	return p->caller_check.attempted && pl_event_fp_chain(p, event);
}

/* Remember why a module's edges stay unknown (once per dso and reason). */
void pl_note_unknown_module(struct pl_profile *p, uint32_t dso, enum pl_unknown_why why);

/* Classify a DSO string as printed by perf. */
enum pl_kind pl_classify_dso(const char *dso, size_t n);

#endif
