/* landlock.c - the file-system half of the sandbox: a Landlock ruleset
 * built from a struct sbx_policy.
 *
 * Landlock denies by default every access right the ruleset "handles";
 * we handle every right the running kernel knows (its ABI version picks
 * the set) and grant, with one rule per path: read beneath each read
 * root, read-write beneath the write root (no devices, fifos, sockets or
 * symlinks), and execute+read on exec_path and on the ELF interpreter it
 * names (the kernel opens that one for execution too).  From ABI 4 TCP
 * bind/connect are denied as well, and from ABI 6 the worker may neither
 * signal nor connect to abstract sockets of processes outside its domain.
 * A policy with allow_network may connect over TCP (bind stays denied)
 * and read what name resolution and TLS need: net_files[] below, those
 * that exist (the name-service files, the CA certificates, OpenSSL's
 * configuration - not /etc/ssl as a whole, which holds private keys).
 *
 * The ruleset is made in the parent, where opening a root can fail in an
 * ordinary way; the child only calls landlock_restrict_self().  The raw
 * system calls are used (glibc 2.36 has no wrappers), and the header of
 * Debian 12 stops at ABI 2, so the later constants are defined here.
 */
#include "sbx_int.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <linux/landlock.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)    /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)   /* ABI 5 */
#endif
#define LL_NET_BIND_TCP (1ULL << 0)                 /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)   /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)

#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Ehdr elf_ehdr;
typedef Elf64_Phdr elf_phdr;
#define ELF_OUR_CLASS ELFCLASS64
#else
typedef Elf32_Ehdr elf_ehdr;
typedef Elf32_Phdr elf_phdr;
#define ELF_OUR_CLASS ELFCLASS32
#endif

/* struct landlock_ruleset_attr as of ABI 6; older kernels accept it as
 * long as the fields they do not know are zero. */
struct ll_ruleset_attr {
	__u64 handled_access_fs;
	__u64 handled_access_net;
	__u64 scoped;
};

#define LL_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define LL_WRITE (LL_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | \
		  LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
		  LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | \
		  LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE)
#define LL_EXEC (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE)
/* The only rights a rule on a file (not a folder) may carry. */
#define LL_FILE_RIGHTS (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
			LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
			LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* Cached ABI version: -1 until asked. */
static int ll_abi_cache = -1;

int sbx_ll_abi(void)
{
	int abi = __atomic_load_n(&ll_abi_cache, __ATOMIC_RELAXED);
	long v;

	if (abi >= 0)
		return abi;
	v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	abi = v > 0 ? (int)v : 0;
	__atomic_store_n(&ll_abi_cache, abi, __ATOMIC_RELAXED);
	return abi;
}

bool sbx_landlock_available(void)
{
	return sbx_ll_abi() >= 1;
}

/* Every file-system right known to ABI `abi`. */
static __u64 fs_rights(int abi)
{
	__u64 r = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;  /* ABI 1 */

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r;
}

/* Grant `rights` (cut to what is handled, and to file rights when `path`
 * is not a folder) beneath `path`. */
static enum pl_err add_path(int ruleset, const char *path, __u64 rights, __u64 handled,
			    const char *role, struct pl_error *err)
{
	struct landlock_path_beneath_attr rule = {0};
	struct stat st;
	int fd = open(path, O_PATH | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return pl_fail(err, PL_ERR_PATH, "create it, or leave it out of the sandbox policy",
			       "cannot open %s '%s': %s", role, path, strerror(errno));
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		rights &= LL_FILE_RIGHTS;
	rule.allowed_access = rights & handled;
	rule.parent_fd = fd;
	rc = (int)syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
	close(fd);
	if (rc < 0)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "cannot add Landlock rule for %s '%s': %s",
			       role, path, strerror(errno));
	return PL_OK;
}

/* Read the PT_INTERP string of ELF file `fd` into `out`; false when it has
 * none (a static binary, or not an ELF file of our class). */
static bool elf_interp(int fd, char *out, size_t cap)
{
	elf_ehdr eh;
	elf_phdr ph;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELF_OUR_CLASS ||
	    eh.e_phentsize != sizeof(ph) || eh.e_phnum > 512)
		return false;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
			return false;
		if (ph.p_type != PT_INTERP)
			continue;
		if (ph.p_filesz < 2 || ph.p_filesz > cap ||
		    pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz ||
		    out[ph.p_filesz - 1] != '\0')
			return false;
		return true;
	}
	return false;
}

/* Execute (and read) on exec_path and on its ELF interpreter. */
static enum pl_err add_exec(int ruleset, const char *path, __u64 handled, struct pl_error *err)
{
	char interp[PATH_MAX];
	struct stat st;
	bool has_interp;
	enum pl_err rc;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 && errno == EACCES)  /* execute-only: no interpreter lookup */
		fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return pl_fail(err, PL_ERR_PATH, "give the absolute path of an installed program",
			       "cannot open exec_path '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return pl_fail(err, PL_ERR_PATH, "give the absolute path of an installed program",
			       "exec_path '%s' is not a regular file", path);
	}
	has_interp = elf_interp(fd, interp, sizeof(interp));
	close(fd);
	rc = add_path(ruleset, path, LL_EXEC, handled, "exec_path", err);
	if (rc == PL_OK && has_interp)
		rc = add_path(ruleset, interp, LL_EXEC, handled, "ELF interpreter", err);
	return rc;
}

/* Read with allow_network: glibc's resolver and libcurl/OpenSSL. */
static const char *const net_files[] = {
	"/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/gai.conf",
	"/etc/host.conf", "/etc/ssl/certs", "/usr/share/ca-certificates",
	"/etc/ssl/openssl.cnf",
};

static enum pl_err add_net_files(int ruleset, __u64 handled, struct pl_error *err)
{
	enum pl_err rc;

	for (size_t i = 0; i < sizeof(net_files) / sizeof(net_files[0]); i++) {
		if (access(net_files[i], F_OK) < 0)
			continue;  /* not on this system: nothing to grant */
		if ((rc = add_path(ruleset, net_files[i], LL_READ, handled, "network file", err)))
			return rc;
	}
	return PL_OK;
}

static enum pl_err add_rules(int ruleset, const struct sbx_policy *pol, __u64 handled,
			     struct pl_error *err)
{
	enum pl_err rc;

	for (size_t i = 0; i < pol->nread_roots; i++)
		if ((rc = add_path(ruleset, pol->read_roots[i], LL_READ, handled, "read root", err)))
			return rc;
	if (pol->write_root &&
	    (rc = add_path(ruleset, pol->write_root, LL_WRITE, handled, "write root", err)))
		return rc;
	if (pol->exec_path && pol->exec_target && pol->allow_perf_events &&
	    (rc = add_exec(ruleset, pol->exec_target, handled, err)))
		return rc;
	if (pol->exec_path && (rc = add_exec(ruleset, pol->exec_path, handled, err)))
		return rc;
	if (pol->allow_network && (rc = add_net_files(ruleset, handled, err)))
		return rc;
	return PL_OK;
}

enum pl_err sbx_ll_ruleset(const struct sbx_policy *pol, int abi, int *fd,
			   struct pl_error *err)
{
	struct ll_ruleset_attr attr = {0};
	enum pl_err rc;
	int ruleset;

	attr.handled_access_fs = fs_rights(abi);
	if (abi >= 4)  /* handled = denied: connect only without allow_network */
		attr.handled_access_net = LL_NET_BIND_TCP |
					  (pol->allow_network ? 0 : LL_NET_CONNECT_TCP);
	if (abi >= 6)
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0)
		return pl_fail(err, errno == EMFILE ? PL_ERR_LIMIT : PL_ERR_INTERNAL, NULL,
			       "cannot create a Landlock ruleset: %s", strerror(errno));
	rc = add_rules(ruleset, pol, attr.handled_access_fs, err);
	if (rc) {
		close(ruleset);
		return rc;
	}
	*fd = ruleset;
	return PL_OK;
}

int sbx_ll_restrict(int fd)
{
	return (int)syscall(SYS_landlock_restrict_self, fd, 0);
}
