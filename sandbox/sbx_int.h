/* sbx_int.h - what the files of sandbox/ share with each other; not part
 * of the API (see sandbox.h).
 *
 * Everything that can fail in an ordinary way (a root that does not
 * exist, a filter libseccomp cannot build) is prepared in the parent
 * before fork(), so that sbx_spawn() reports it with a struct pl_error;
 * the child only applies what was prepared, with plain system calls.
 */
#ifndef PL_SBX_INT_H
#define PL_SBX_INT_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"
#include "sandbox.h"

/* -------------------------------------------------------- sandbox.c */

/* What a worker needs, prepared before fork() (by the server, or by the
 * zygote from a request). */
struct sbx_plan {
	const struct sbx_policy *pol;
	pid_t parent;              /* the process that forks the worker */
	int out_w, status_w;       /* write ends of the result and setup pipes */
	int ruleset;               /* Landlock ruleset or -1 */
	const struct sock_fprog *prog;  /* NULL: no seccomp */
	int job_r;                 /* > 0: the spare's job pipe, kept open for
				  * fn as SBX_JOB_FD (see zygote.c) */
	sbx_fn fn;
	void *arg;
};

/* Where a primed spare's fn finds its job pipe. */
/* First byte of the done record on the status pipe; a setup failure
 * message is text, so it never starts with it. */
#define SBX_DONE_MARK 0x00

#define SBX_JOB_FD 6
/* Where a collection worker keeps its connection to the launcher. */
#define SBX_LAUNCH_CONN_FD 7
/* Where the zygote keeps the launcher's socket (sbx_set_launcher_fd). */
#define SBX_ZY_LAUNCH_FD 4

/* The launcher's socket in this process (server or zygote), or -1. */
int sbx_launcher_socket(void);
void sbx_launcher_socket_moved(int fd);

/* The ruleset and the seccomp program for `pol` into `p`; *abi gets the
 * Landlock ABI (0: none).  On failure p->ruleset may still need closing. */
enum pl_err sbx_prepare(const struct sbx_policy *pol, struct sbx_plan *p, int *abi,
			struct pl_error *err);

/* Exit status of a worker that could not confine itself. */
#define SBX_SETUP_EXIT 125

/* In the forked child: confine as planned, run p->fn, _exit. */
void sbx_child_main(const struct sbx_plan *p) __attribute__((noreturn));

/* Close every descriptor from `first` on. */
void sbx_close_from(unsigned first);

/* --------------------------------------------------------- zygote.c */

/* The function registered under `name`, or NULL. */
sbx_job_fn sbx_job_find(const char *name);

/* What the zygote hands back for a worker it forked: descriptors now
 * owned by the caller (all non-blocking, close-on-exec). */
struct sbx_zworker {
	pid_t pid;          /* the worker, also its process group id */
	int out_fd;         /* result pipe, read end */
	int status_fd;      /* setup failure message, read end */
	int done_fd;        /* the wait status (an int) then end of file */
	int landlock_abi;
};

/* Returned by sbx_zygote_spawn() when no zygote runs: fork directly. */
#define SBX_NO_ZYGOTE (-1)

/* Ask the zygote to fork a worker for job `name`: PL_OK with *zw filled,
 * a pl_err from preparing the policy, or SBX_NO_ZYGOTE. */
int sbx_zygote_spawn(const struct sbx_policy *pol, const char *name, const void *buf,
		     size_t len, struct sbx_zworker *zw, struct pl_error *err);

/* A done pipe ended without a status: the zygote is gone.  Logs once,
 * reaps it and makes later spawns fork directly. */
void sbx_zygote_lost(void);

/* ------------------------------------------------------- landlock.c */

/* The kernel's Landlock ABI version, 0 when it has none (cached). */
int sbx_ll_abi(void);

/* Build a ruleset for `pol` under ABI `abi` (>= 1): read rights beneath
 * the read roots, read-write beneath write_root, execute on exec_path and
 * its ELF interpreter; with allow_network, read on the name-resolution
 * and CA-certificate files and TCP connect (bind stays denied).  *fd is
 * a new close-on-exec descriptor. */
enum pl_err sbx_ll_ruleset(const struct sbx_policy *pol, int abi, int *fd,
			   struct pl_error *err);

/* In the child, once no_new_privs is set: confine to ruleset `fd`.
 * Returns 0 or -1 with errno. */
int sbx_ll_restrict(int fd);

/* -------------------------------------------------------- seccomp.c */

/* The allow-list compiled to BPF, built once per process and per mode
 * (with or without exec_path, with or without allow_network); borrowed
 * for the process lifetime. */
enum pl_err sbx_sc_program(bool exec, bool network, bool perf, const struct sock_fprog **prog,
			   struct pl_error *err);

/* In the child, once no_new_privs is set: install `prog` behind a guard
 * for process `self` (tgkill only at itself; with exec, setpgid only
 * into its own group).  Returns 0 or -1 with errno. */
int sbx_sc_install(const struct sock_fprog *prog, bool exec, pid_t self);

/* ---------------------------------------------------------- audit.c */

/* Look in the kernel log for the audit record of the seccomp kill of
 * `pid` (logged at or after `since_us`, microseconds of
 * CLOCK_MONOTONIC) and put the system call's name into `name`.  Waits up
 * to 20 ms for the record; false when it cannot be found or read. */
bool sbx_audit_syscall(pid_t pid, long long since_us, char *name, size_t cap);

#endif
