/* collect.h - authorized collection with perf: record, stat, sched, lock
 * and off-CPU, into a collection folder under the artifact root.
 *
 * The caller (tools/collect_profile.c) checks the gates; this runs perf
 * through pl_run (no shell, LC_ALL=C, own process group, nice, timeout,
 * capped output) into a staging folder, post-processes what the mode
 * needs (sched timehist, lock report, off-CPU folding), writes
 * metadata.json and renames the folder into collections/ID in one step.
 * A run that fails or times out leaves nothing behind: the staging folder
 * is removed, and the error says what perf printed.
 */
#ifndef PL_COLLECT_H
#define PL_COLLECT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/error.h"

struct pl_buf;
struct pl_user_chains;

#define PL_COLLECT_PHRASE "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
#define PL_PID_ATTACH_PHRASE "I_EXPLICITLY_AUTHORIZE_PID_ATTACH"
#define PL_COLLECT_MAX_ARGS 64
#define PL_COLLECT_MAX_EVENTS 16

#define PL_COLLECT_MAX_ENV 64

/* Where the program's stdout or stderr goes: a file in the collection
 * folder (the default: the program never waits on PerfLens), nowhere,
 * or a file whose first PL_COLLECT_INLINE_BYTES come back in the result
 * and which is then removed.  A tail is read after the run in every case
 * but discard. */
enum pl_collect_output { PL_OUT_FILE, PL_OUT_DISCARD, PL_OUT_INLINE };
#define PL_COLLECT_INLINE_BYTES (64u << 10)

enum pl_collect_mode {
	PL_COLLECT_RECORD,
	PL_COLLECT_STAT,
	PL_COLLECT_SCHED,
	PL_COLLECT_LOCK,
	PL_COLLECT_OFF_CPU,
};

struct pl_collect_req {
	enum pl_collect_mode mode;
	const char *executable;          /* absolute, or NULL with pid */
	const char *args[PL_COLLECT_MAX_ARGS];
	size_t nargs;
	int64_t pid;                     /* > 0: attach for duration_ms */
	uint32_t duration_ms;
	uint32_t frequency_hz;
	const char *call_graph;          /* "none", "fp", "dwarf", "lbr" */
	uint32_t dwarf_stack_bytes;      /* dwarf: user stack copied per sample
					  * (--call-graph dwarf,N); 0: perf's 8192 */
	const char *events[PL_COLLECT_MAX_EVENTS];
	size_t nevents;
	uint32_t repeat;                 /* stat only */
	uint32_t timeout_ms;
	const char *name;                /* a label kept in the metadata */
	/* How the program runs (launch.h): its working directory (resolved;
	 * NULL: the server's), variables added to the server's environment,
	 * and where its stdout and stderr go. */
	const char *cwd;
	const char *env[PL_COLLECT_MAX_ENV + 1];
	size_t nenv;
	enum pl_collect_output out_stdout, out_stderr;
};

struct pl_collect_env {
	const char *perf_path;
	const char *artifact_root;
	const char *kallsyms;            /* see symcfg.h; NULL: perf's own */
	const atomic_int *cancel;        /* see pl_run_opts */
	/* The connection to the collection launcher (launch.h), or -1: then
	 * perf runs from this process, unless `confined` says that is a
	 * sandboxed worker: then the collection is refused (the program would
	 * not run as it does without PerfLens). */
	int launcher_conn;
	bool confined;
	/* Counts of a perf.data's PERF_RECORD_LOST records, the events they
	 * say were lost, and PERF_RECORD_LOST_SAMPLES' sum (the caller's
	 * perf.data reader: collectors/ reads no perf.data itself); NULL: not
	 * counted.  False when the file cannot be read. */
	bool (*count_lost)(const char *data, uint64_t *records, uint64_t *lost, uint64_t *lost_samples);
	/* The user part of DWARF call chains from the caller's own unwinder
	 * (collectors/ reads no perf.data itself): perf 6.1's stops at the
	 * first user frame of every wait in some system-wide recordings
	 * (offcpu.c).  user_chains_open reads `data` once (NULL when it
	 * cannot); user_chain appends the user frames of the sample of `tid`
	 * at `time_ns` as perf script prints them ("\tADDR SYM (DSO)\n",
	 * leaf first) and returns how many (0: none known); user_chains_close
	 * frees.  NULL: perf's chains only. */
	struct pl_user_chains *(*user_chains_open)(const char *data, const char *kallsyms);
	size_t (*user_chain)(const struct pl_user_chains *c, int64_t tid, uint64_t time_ns,
			     struct pl_buf *out);
	void (*user_chains_close)(struct pl_user_chains *c);
};

/* Run it; on PL_OK *result describes the collection (id, folder, files,
 * metadata, the analyze_profile call to make next). */
enum pl_err pl_collect(const struct pl_collect_env *env, const struct pl_collect_req *r,
		       json_t **result, struct pl_error *err);

/* Is event `ev` a tracepoint (sys:name, which needs tracefs), not an
 * event with modifiers (cycles:u)? */
bool pl_collect_is_tracepoint(const char *ev);

/* "perf version 6.1.187", or NULL when perf does not say. */
char *pl_perf_version(const char *perf_path);

/* Run perf once, collecting stdout (up to `cap` bytes) and stderr; for
 * probes.  Returns the exit status, or -1 when it could not run or was
 * killed (timeout). */
int pl_perf_probe(const char *const *argv, uint32_t timeout_ms, char **out, char **err_text);

/* The machine's CPUs: {"online", "configured", "online_list"} (null
 * where the system does not say).  New reference. */
json_t *coll_cpus_json(void);

bool pl_collect_mode_from_name(const char *name, enum pl_collect_mode *mode);
bool pl_collect_output_from_name(const char *name, enum pl_collect_output *out);
const char *pl_collect_mode_name(enum pl_collect_mode mode);

#endif
