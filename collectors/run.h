/* run.h - run an external program (perf) safely and boundedly.
 *
 * No shell: argv[0] is an absolute path that the caller has allowlisted.
 * The child gets LC_ALL=C and a minimal environment (or, with
 * inherit_env, this process's own environment plus `env`), /dev/null as
 * stdin, optionally a working directory and files for stdout and stderr,
 * every other descriptor closed, its own process group, a lower priority
 * (nice), and the caller's rlimits.  Its stdout is handed to a callback
 * as it arrives (line by line, each line capped), its stderr is kept up
 * to a cap for error messages.  At the deadline, on a callback error or
 * when the output cap is passed, the whole process group is killed with
 * SIGKILL and reaped, so nothing the program started is left behind.
 */
#ifndef PL_RUN_H
#define PL_RUN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* One stdout line without its newline (also NUL-terminated); return PL_OK
 * to go on. */
typedef enum pl_err (*pl_run_line_fn)(void *arg, const char *line, size_t len,
				      struct pl_error *err);

struct pl_run_opts {
	const char *const *argv;   /* argv[0]: absolute path; NULL-terminated */
	const char *const *env;    /* extra "K=V" entries (LC_ALL=C is always set); may be NULL */
	uint32_t timeout_ms;       /* 0 = none */
	uint32_t interrupt_ms;     /* send SIGINT then (perf record -p stops and
				    * writes its file); 0 = never */
	uint64_t max_stdout;       /* bytes; passing it is PL_ERR_LIMIT; 0 = 4 GiB */
	size_t max_line;           /* longest stdout line; 0 = 1 MiB */
	size_t max_stderr;         /* bytes kept; 0 = 16 KiB */
	int nice;                  /* added to the child's niceness */
	pl_run_line_fn on_line;    /* NULL: stdout is discarded */
	void *arg;
	const atomic_int *cancel;  /* when not NULL and set (by another thread or a
				    * signal handler): kill and stop */
	bool progress_stdout;      /* report stdout's bytes (base/progress.h) */
	uint32_t progress_ms;      /* report elapsed time of this many ms; 0: not */
	/* Faithful runs (the collection launcher, launch.h): */
	const char *cwd;           /* the child's working directory; NULL: ours */
	bool inherit_env;          /* environ, then `env` (replacing equal names);
				    * no LC_ALL=C */
	const char *stdout_path;   /* stdout into this file (created, truncated),
				    * nothing read; on_line is then unused */
	const char *stderr_path;   /* stderr into this file; stderr_text empty */
	int hangup_fd;             /* > 0: anything readable or a hangup on it
				    * (the requester went away) cancels the run */
	volatile int *started_pid; /* when set: the child's pid (its process
				    * group) once forked, 0 again once reaped;
				    * for a signal handler that must kill it */
};

struct pl_run_result {
	int exit_status;           /* valid when !signaled */
	int signal;                /* the signal that ended it, or 0 */
	int pid;                   /* the child's process id, 0 when none started */
	bool timed_out;
	bool interrupted;          /* we sent it SIGINT (opts.interrupt_ms) */
	uint64_t stdout_bytes;
	uint64_t stdout_lines;
	char *stderr_text;         /* kept bytes, NUL-terminated (free it) */
	bool stderr_truncated;
	double seconds;
	/* perf's own use and that of the children it waited for (the target):
	 * from wait4, zero when it never ran. */
	double user_seconds, system_seconds;
	long max_rss_kb;
};

/* Run to completion.  PL_OK means the program ran and exited (with any
 * status: check exit_status); PL_ERR_TIMEOUT, PL_ERR_LIMIT or the
 * callback's error mean it was killed; PL_ERR_EXTERNAL that it could not
 * be started.  `res` is filled in every case. */
enum pl_err pl_run(const struct pl_run_opts *o, struct pl_run_result *res,
		   struct pl_error *err);

void pl_run_result_release(struct pl_run_result *res);

/* The last line of stderr (trimmed, at most `cap` bytes), for messages;
 * bytes that are not UTF-8 read \xHH (base/escape.h's text form). */
void pl_run_stderr_tail(const struct pl_run_result *res, char *out, size_t cap);

#endif
