/* sandbox.h - run one piece of code (an MCP tool call) in a confined,
 * forked worker process and collect the bytes it writes.
 *
 * Usage, asynchronous (a server keeps reading requests meanwhile):
 *   1. fill a struct sbx_policy (zero it first: 0 means "no limit");
 *   2. sbx_spawn() forks the worker, which confines itself and calls
 *      fn(arg, out_fd) - `arg` is only read in the child, after fork(),
 *      so it may point into the caller's stack;
 *   3. poll() sbx_fd() for POLLIN with sbx_timeout_left_ms() as timeout,
 *      then call sbx_step(); repeat until it returns true;
 *   4. sbx_finish() fills a struct sbx_result and frees the worker;
 *   5. sbx_result_release() frees the result's data.
 * sbx_run() does 2-4 in one blocking call.
 *
 * Jobs and the zygote (what a server uses): a job is a function
 * registered by name with sbx_register() at startup (before
 * sbx_zygote_start(), e.g. from a constructor) and an argument passed as
 * bytes.  sbx_zygote_start(), called early in main() while the process is
 * still small and single-threaded, forks a helper process, the zygote;
 * from then on sbx_spawn_job() sends the policy and the job's bytes to it
 * over a socket and the zygote forks the worker (the same child setup as
 * sbx_spawn()), so the server never forks its own, large, multi-threaded
 * image.  The worker is then driven with sbx_fd/sbx_step/sbx_cancel/
 * sbx_finish exactly as a directly forked one, with the same outcomes and
 * details.  Without a zygote (never started, failed, or exited: that is
 * logged once on stderr), sbx_spawn_job() forks directly.  The zygote
 * dies with the server and takes its workers with it.
 *
 * What the worker gets: its own process group; stdin and stdout on
 * /dev/null (stdout belongs to the MCP stdio transport), stderr kept, the
 * result pipe as out_fd, no other descriptor; default signal handlers
 * with SIGPIPE ignored; no_new_privs; SIGKILL when the parent dies; the
 * policy's rlimits and RLIMIT_CORE 0; no capabilities (a worker of a root
 * server is root without privileges); Landlock (file access only beneath
 * the policy's roots, when the kernel has it); a seccomp allow-list whose
 * default action kills the process.  Code run in the worker must flush
 * any stdio stream it writes: the worker leaves with _exit(fn's status).
 *
 * Process-wide effect: a direct fork (sbx_spawn(), or sbx_spawn_job()
 * without a zygote) makes the calling process a child subreaper (PR_SET_CHILD_SUBREAPER), so that a worker's descendants
 * are re-parented to it and reaped here; after sbx_finish() nothing of the
 * worker's process group is left, not even a zombie.  The zygote is a
 * child of the caller until sbx_zygote_stop(); its workers are not.
 *
 * Threads: sbx_spawn() may be called from several threads.  A worker
 * belongs to one thread, except sbx_cancel(), which may be called from
 * any thread until sbx_finish() starts.  The worker itself must stay
 * single-threaded unless the policy has an exec_path (creating a thread
 * is a forbidden system call otherwise).
 *
 * The caller must not reap children with waitpid(-1, ...) nor set SIGCHLD
 * to SIG_IGN: either takes the worker's exit status away from sbx.
 */
#ifndef PL_SANDBOX_H
#define PL_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Used when sbx_policy.max_result_bytes is 0. */
#define SBX_DEFAULT_MAX_RESULT (64u << 20)

struct sbx_policy {
	/* Landlock: read-only beneath these (folders or files).  Everything
	 * else is neither readable nor writable.  A worker that executes
	 * exec_path needs its shared libraries in here (e.g. /usr/lib). */
	const char *const *read_roots;
	size_t nread_roots;
	const char *write_root;        /* read-write beneath this; NULL = none */
	/* NULL: execve is forbidden by seccomp.  Else the one binary that may
	 * be executed (Landlock grants execute on it and on its ELF
	 * interpreter only) and seccomp also allows what running a program
	 * needs: execve, fork/clone, wait4, kill, pipes, poll. */
	const char *exec_path;
	/* Let the worker open TCP connections (a debuginfod client): seccomp
	 * then allows socket (AF_INET, AF_INET6), connect and the calls
	 * around them, and Landlock lets it connect over TCP (never bind)
	 * and read the name-service files and the CA certificates. */
	bool allow_network;
	/* A collection worker (collect_profile): seccomp also allows
	 * perf_event_open and what perf record needs around it, the worker
	 * keeps CAP_PERFMON, CAP_SYSLOG, CAP_SYS_PTRACE and CAP_IPC_LOCK when
	 * the server has them (system-wide tracing, kernel symbols, attaching
	 * to a pid, perf's ring buffers), and Landlock lets exec_path run
	 * exec_target (the program perf starts) too.  Needs exec_path. */
	bool allow_perf_events;
	const char *exec_target;       /* NULL: perf starts nothing */
	/* A worker that collects through the collection launcher
	 * (sbx_launcher_conn): it gets its private connection to the
	 * launcher and nothing of perf's events, capabilities or targets,
	 * which the launcher holds outside the sandbox. */
	bool use_launcher;
	uint64_t max_address_space;    /* RLIMIT_AS bytes; 0 = leave (ignored
					* in ASan builds, whose shadow memory
					* needs terabytes of address space) */
	uint64_t max_cpu_seconds;      /* RLIMIT_CPU; 0 = leave */
	uint64_t max_open_files;       /* RLIMIT_NOFILE; 0 = leave */
	uint64_t max_file_size;        /* RLIMIT_FSIZE bytes; 0 = leave */
	uint32_t timeout_ms;           /* wall clock; 0 = none */
	size_t max_result_bytes;       /* more -> SBX_OVERSIZE, worker killed;
					* 0 = SBX_DEFAULT_MAX_RESULT */
	bool no_seccomp;               /* debug builds / benchmarks only */
	/* The worker needs shared libraries that the server does not load
	 * for every worker (libcairo for pictures): the preconfine hook
	 * (sbx_set_preconfine) loads them when it sees this, before the
	 * worker confines itself.  Part of the policy, so a spare primed
	 * for it has them loaded before its job comes. */
	bool load_libraries;
};

/* Runs in the child after confinement; writes its result bytes to out_fd;
 * returns the worker's exit status (0 ok, 1..255 a failure of its own). */
typedef int (*sbx_fn)(void *arg, int out_fd);

enum sbx_outcome {
	SBX_OK,             /* exit status 0 */
	SBX_EXIT_NONZERO,   /* exit status 1..255 (in exit_status) */
	SBX_CRASHED,        /* a signal other than SIGSYS (in signal) */
	SBX_SECCOMP_KILLED, /* called a system call the filter forbids */
	SBX_TIMEOUT,        /* still running at the deadline: killed */
	SBX_OVERSIZE,       /* wrote more than max_result_bytes: killed */
	SBX_CANCELLED,      /* sbx_cancel() */
	SBX_SETUP_FAILED    /* the worker could not confine itself */
};

/* Stable snake_case name, e.g. "seccomp_killed". */
const char *sbx_outcome_name(enum sbx_outcome o);

struct sbx_result {
	enum sbx_outcome outcome;
	int exit_status;     /* SBX_OK, SBX_EXIT_NONZERO; else 0 */
	int signal;          /* the killing signal, else 0 */
	char *data;          /* new: what the worker wrote (at most
			      * max_result_bytes, whatever the outcome),
			      * NUL-terminated, never NULL; caller frees */
	size_t len;
	double elapsed_ms;   /* from spawn to reap */
	int landlock_abi;    /* Landlock ABI applied; 0 = the kernel has no
			      * Landlock and only seccomp and rlimits held */
	char detail[200];    /* one plain sentence an agent can act on */
};

struct sbx_worker;

/* True when the running kernel offers Landlock (ABI >= 1). */
bool sbx_landlock_available(void);

/* A worker's own child (perf) killed by the seccomp filter it inherits
 * dies of SIGSYS too, but the worker cannot read the kernel's audit log.
 * Its error names the child as "killed by SIGSYS ... (pid N)"; given that
 * text, the server (unconfined) puts into `out` " (the system call the
 * sandbox refused: NAME)" from the audit record of pid N logged within
 * the last `within_ms`.  False, `out` empty, when the text names no such
 * child or the log has no record (see audit.c for when it cannot). */
bool sbx_explain_child_sigsys(const char *text, unsigned within_ms, char *out, size_t cap);

/* Fork a confined worker that runs fn(arg, out_fd).  On PL_OK *out is a
 * new worker (free it with sbx_finish).  Fails with PL_ERR_PATH when a
 * root or exec_path cannot be opened, PL_ERR_LIMIT when no process or
 * pipe can be made, PL_ERR_INTERNAL when the filter cannot be built. */
enum pl_err sbx_spawn(const struct sbx_policy *pol, sbx_fn fn, void *arg,
		      struct sbx_worker **out, struct pl_error *err);

/* A descriptor to poll() for POLLIN: it becomes readable when the worker
 * wrote something or exited.  Borrowed: valid until sbx_finish(). */
int sbx_fd(const struct sbx_worker *w);

/* Milliseconds until the deadline, for poll()'s timeout; -1 when none. */
int sbx_timeout_left_ms(const struct sbx_worker *w);

/* Read what is available, enforce the size cap and the deadline, reap the
 * worker when it has exited.  Never blocks for long: a seccomp kill looks
 * up the kernel log for up to 20 ms, and killed descendants get up to 1 s
 * to die (they take microseconds).  True when the worker is finished and
 * reaped; then call sbx_finish(). */
bool sbx_step(struct sbx_worker *w);

/* What the worker wrote so far (read by sbx_step), in *data, borrowed
 * until the next sbx_step or sbx_finish; returns its length.  For a
 * caller that reads records the worker sends before its result. */
size_t sbx_output(const struct sbx_worker *w, const char **data);

/* Kill the worker's whole process group now; it ends as SBX_CANCELLED
 * unless it was already reaped.  Safe from another thread. */
void sbx_cancel(struct sbx_worker *w);

/* Fill `res` and free `w` (killing and reaping the worker and its group
 * if still running, which then counts as cancelled).  res->data is new:
 * release it with sbx_result_release().  sbx_finish(NULL, res) is a
 * harmless no-op that leaves `res` untouched. */
void sbx_finish(struct sbx_worker *w, struct sbx_result *res);

/* A job: runs in the worker after confinement with the bytes given to
 * sbx_spawn_job() (a copy; `buf` is NUL-terminated one past `len`);
 * returns the exit status, like sbx_fn. */
typedef int (*sbx_job_fn)(const void *buf, size_t len, int out_fd);

#define SBX_JOB_NAME_MAX 64

/* Register `fn` under `name` (at most SBX_JOB_NAME_MAX-1 bytes, at most
 * 16 jobs).  Call before sbx_zygote_start(), from one thread: the zygote
 * knows the jobs registered when it was forked.  Registering the same
 * pair again is harmless; PL_ERR_USAGE for another fn under a taken name,
 * PL_ERR_LIMIT when the table is full. */
enum pl_err sbx_register(const char *name, sbx_job_fn fn, struct pl_error *err);

/* Like sbx_spawn(), for the job registered under `name` with `len`
 * bytes of `buf` (copied: the caller may free them on return).  Through
 * the zygote when one runs, else by a direct fork.  PL_ERR_USAGE for an
 * unknown job name, otherwise the errors of sbx_spawn(). */
enum pl_err sbx_spawn_job(const struct sbx_policy *pol, const char *name, const void *buf,
			  size_t len, struct sbx_worker **out, struct pl_error *err);

/* Called in every worker once its policy is known, before it confines
 * itself (for a spare, before its request came): the place to load what
 * the policy will need and the confinement would forbid loading, such as
 * a shared library for network access.  It must not read the job or any
 * untrusted input.  Set it before sbx_zygote_start(). */
typedef void (*sbx_preconfine_fn)(const struct sbx_policy *pol);
void sbx_set_preconfine(sbx_preconfine_fn fn);

/* Called in every spare worker (see zygote.c) while it waits for a job,
 * before it confines itself: the place to run once the code that every
 * job runs, so that the job does not pay for touching its pages first.
 * It must not read the job or any untrusted input.  Set it before
 * sbx_zygote_start(). */
typedef void (*sbx_warm_up_fn)(void);
void sbx_set_warm_up(sbx_warm_up_fn fn);

/* A collection launcher (collectors/launch.h) outside the sandbox: the
 * socket, of SOCK_SEQPACKET, over which it takes connections.  Set it
 * before sbx_zygote_start(); the zygote keeps it.  A worker whose policy
 * has allow_perf_events, before it confines itself, makes a socketpair
 * and sends one end over it (SCM_RIGHTS, one byte), and keeps the other;
 * no other worker keeps either. */
void sbx_set_launcher_fd(int fd);

/* In a worker: its own connection to the launcher, or -1 (no launcher,
 * not a collection worker, or the connection could not be made). */
int sbx_launcher_conn(void);

/* True in a worker once it is confined (its job runs under the policy). */
bool sbx_confined(void);

/* Fork the zygote.  Call from main() before any thread exists and before
 * much memory is in use.  PL_OK also when it already runs; on failure
 * sbx_spawn_job() keeps forking directly. */
enum pl_err sbx_zygote_start(struct pl_error *err);

/* Stop the zygote (killing the workers it still has) and reap it.
 * Workers it forked must be finished first.  Harmless when none runs. */
void sbx_zygote_stop(void);

/* The zygote's pid, or -1 when none runs (for tests and diagnostics). */
int sbx_zygote_pid(void);

/* Blocking convenience: spawn, wait, finish.  PL_OK whenever the worker
 * ran, whatever its outcome (see res->outcome); an error only when it
 * could not be started (then `res` is zeroed with data NULL). */
enum pl_err sbx_run(const struct sbx_policy *pol, sbx_fn fn, void *arg,
		    struct sbx_result *res, struct pl_error *err);

/* Free res->data; the result may be released twice. */
void sbx_result_release(struct sbx_result *res);

#endif
