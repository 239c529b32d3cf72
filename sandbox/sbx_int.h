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

#include "error.h"
#include "sandbox.h"

/* ------------------------------------------------------- landlock.c */

/* The kernel's Landlock ABI version, 0 when it has none (cached). */
int sbx_ll_abi(void);

/* Build a ruleset for `pol` under ABI `abi` (>= 1): read rights beneath
 * the read roots, read-write beneath write_root, execute on exec_path and
 * its ELF interpreter.  *fd is a new close-on-exec descriptor. */
enum pl_err sbx_ll_ruleset(const struct sbx_policy *pol, int abi, int *fd,
			   struct pl_error *err);

/* In the child, once no_new_privs is set: confine to ruleset `fd`.
 * Returns 0 or -1 with errno. */
int sbx_ll_restrict(int fd);

/* -------------------------------------------------------- seccomp.c */

/* The allow-list compiled to BPF, built once per process and per mode
 * (with or without exec_path); borrowed for the process lifetime. */
enum pl_err sbx_sc_program(bool exec, const struct sock_fprog **prog,
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
