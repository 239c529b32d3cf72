/* launch.h - the collection launcher: perf and the program it measures
 * run outside the analysis sandbox.
 *
 * The sandbox protects the server from hostile inputs (parsers).  The
 * program under measurement is not an input: the operator enabled
 * collection with flags and the caller named it with the authorization
 * phrase, so it must run as `perf record -- CMD` runs from the shell that
 * started the server: same user, capabilities, rlimits, files, network,
 * /proc and environment.  So perflens-mcp forks this launcher at start,
 * before the zygote and before anything is confined, and a collection
 * worker (still confined: it parses what perf wrote) asks it to run the
 * main perf command over a private connection.
 *
 * Usage:
 *   1. the server calls coll_launcher_start() once, single-threaded, with
 *      the operator's flags; it gets the launcher's socket and hands it
 *      to the sandbox (sbx_set_launcher_fd), which gives each collection
 *      worker its own connection before confining it;
 *   2. the worker calls coll_launch_run() with a pl_run_opts: argv, env
 *      (added variables), cwd, stdout_path and stderr_path (both needed:
 *      files, never pipes, so the program never waits on PerfLens),
 *      timeout_ms and interrupt_ms; the rest is fixed by the launcher.
 *
 * The request is narrow and checked again by the launcher against the
 * flags it was started with, not the worker's word: argv[0] is the
 * allowlisted perf; the subcommand is record, stat, sched record or lock
 * record with only the options collect.c writes and their values (no
 * event naming a file, which perf would load as BPF); -o and the two output
 * files lie in a staging folder under ARTIFACT_ROOT/collections; the
 * program after "--" and the working directory resolve under an allowed
 * root; -p (and a run with no program) only with --allow-pid-attach;
 * added variables are bounded and may not be LD_* or PERF_* (they would
 * apply to perf too).  Protocol: SOCK_SEQPACKET, one message each way
 * per run (a second kind runs the program itself, without perf, for
 * experiments: coll_launch_program); a worker that goes away (killed, cancelled) ends its run: the
 * launcher kills perf's process group.
 */
#ifndef PL_COLL_LAUNCH_H
#define PL_COLL_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "run.h"
#include "base/error.h"

#define COLL_LAUNCH_MAX_ENV 64
#define COLL_LAUNCH_MAX_ENV_BYTES (32u << 10)
#define COLL_LAUNCH_MAX_ARGV 256
#define COLL_LAUNCH_MAX_REQUEST (128u << 10)

/* What a request runs: perf (a collection) or the program itself (an
 * experiment's run, measured by its own wait4). */
enum coll_launch_kind { COLL_LAUNCH_PERF = 0, COLL_LAUNCH_PROGRAM = 1 };

/* One request as the launcher's handler reads it from a worker (whose
 * bytes it does not trust): the strings point into the message. */
struct coll_launch_request {
	uint32_t kind;                  /* enum coll_launch_kind, or anything */
	uint32_t timeout_ms, interrupt_ms;
	const char *argv[COLL_LAUNCH_MAX_ARGV + 1];
	const char *env[COLL_LAUNCH_MAX_ENV + 1];
	const char *cwd, *stdout_path, *stderr_path;
};

struct coll_launcher_cfg {
	const char *perf_path;              /* the allowlisted perf */
	const char *artifact_root;          /* resolved */
	const char *const *allowed_roots;   /* resolved */
	size_t nroots;
	bool allow_pid_attach;
};

/* Fork the launcher.  On PL_OK *fd is the socket that connections are
 * passed over (close-on-exec; keep it for the process lifetime) and *pid
 * the launcher's.  It dies with the calling process. */
enum pl_err coll_launcher_start(const struct coll_launcher_cfg *cfg, int *fd, pid_t *pid,
				struct pl_error *err);

/* Run o->argv through the launcher over the connection `conn` (see
 * above for the fields used); like pl_run, PL_OK when perf ran and
 * exited (any status), `res` filled in every case (stderr_text NULL:
 * stderr is in o->stderr_path).  `cancel`, when set, gives up the run
 * (the launcher then kills it); `progress_ms` as in pl_run_opts. */
enum pl_err coll_launch_run(int conn, const struct pl_run_opts *o, struct pl_run_result *res,
			    struct pl_error *err);

/* The other kind of request: run o->argv itself, not perf (an
 * experiment's run, tools/run_experiment.c: the program's own wall time,
 * rusage and exit status are the measurement).  Checked by
 * coll_launch_check_program; the rest as coll_launch_run. */
enum pl_err coll_launch_program(int conn, const struct pl_run_opts *o, struct pl_run_result *res,
				struct pl_error *err);

/* The launcher's check of a program request: argv[0] an executable
 * resolving under an allowed root, the working directory under one,
 * stdout and stderr files in a staging folder (or /dev/null), the added
 * variables as for perf (bounded, no LD_* or PERF_*).  NULL when it may
 * run, else why not. */
const char *coll_launch_check_program(const struct coll_launcher_cfg *cfg, const char *const *argv,
				      const char *const *env, const char *cwd, const char *stdout_path,
				      const char *stderr_path);

/* Decode one message of `len` bytes (at most COLL_LAUNCH_MAX_REQUEST) into
 * `q`, its strings pointing into `buf`; false when it does not parse. */
bool coll_launch_decode(char *buf, size_t len, struct coll_launch_request *q);

/* The check of a decoded request by its kind (coll_launch_check or
 * coll_launch_check_program); NULL when it may run, else why not. */
const char *coll_launch_check_request(const struct coll_launcher_cfg *cfg,
				      const struct coll_launch_request *q);

/* The launcher's check of one request, apart for the unit tests: NULL
 * when it may run, else why not. */
const char *coll_launch_check(const struct coll_launcher_cfg *cfg, const char *const *argv,
			      const char *const *env, const char *cwd, const char *stdout_path,
			      const char *stderr_path);

#endif
