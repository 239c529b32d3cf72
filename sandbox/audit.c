/* audit.c - which system call got a worker killed by seccomp.
 *
 * A process killed by SECCOMP_RET_KILL_PROCESS dies of SIGSYS and its
 * wait status says nothing more.  The kernel does log the kill as an
 * audit record (type 1326, "... pid=N ... arch=c000003e syscall=41 ..."),
 * which ends up in the kernel log (/dev/kmsg) when no audit daemon takes
 * it.  We read the log and take the newest such record for the pid, so a
 * detail can say "(socket)" instead of "a forbidden system call".
 *
 * Best effort only: reading /dev/kmsg needs root or CAP_SYSLOG when
 * kernel.dmesg_restrict is set, printk rate-limits audit records, and an
 * audit daemon keeps them for itself.  Records older than the worker (a
 * recycled pid) are skipped by their timestamp.  The same lookup names
 * the system call of a worker's child (perf) killed by the filter it
 * inherited, from the pid its error message gives.
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

#define AUDIT_WAIT_MS 20

struct audit_hit {
	long long nr;         /* system call number, -1 until found */
	unsigned long arch;   /* AUDIT_ARCH_* of the call */
};

/* The decimal (base 10) or hex (base 16) number after `key` in `s`. */
static bool field(const char *s, const char *key, int base, unsigned long long *out)
{
	const char *p = strstr(s, key);
	char *end;

	if (!p)
		return false;
	p += strlen(key);
	if ((base == 10 && (*p < '0' || *p > '9')) || *p == '-')
		return false;
	errno = 0;
	*out = strtoull(p, &end, base);
	return end != p && errno == 0;
}

/* One /dev/kmsg record: "prio,seq,usec,flags;message".  Fill `hit` when
 * it is the seccomp record of `pid` logged at or after `since_us`. */
static void scan_record(char *rec, const char *pid_key, long long since_us,
			struct audit_hit *hit)
{
	char *msg = strchr(rec, ';');
	char *c1 = strchr(rec, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
	unsigned long long nr, arch;
	uint64_t usec;

	if (!msg || !c2 || c2 > msg || !strstr(msg, "type=1326") || !strstr(msg, pid_key))
		return;
	if (!pl_parse_u64(c2 + 1, strcspn(c2 + 1, ","), &usec) || (long long)usec < since_us)
		return;
	if (field(msg, " syscall=", 10, &nr) && field(msg, " arch=", 16, &arch)) {
		hit->nr = (long long)nr;
		hit->arch = (unsigned long)arch;
	}
}

/* Read every record available now; false when the log is unreadable. */
static bool scan_all(int fd, const char *pid_key, long long since_us, struct audit_hit *hit)
{
	char rec[8192];

	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		if (n > 0) {
			rec[n] = '\0';
			scan_record(rec, pid_key, since_us, hit);
		} else if (n < 0 && (errno == EPIPE || errno == EINTR)) {
			continue;  /* records overwritten meanwhile, or a signal */
		} else {
			return n < 0 && errno == EAGAIN;
		}
	}
}

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Copy the name of system call `hit` into `name`. */
static bool name_of(const struct audit_hit *hit, char *name, size_t cap)
{
	char *s = seccomp_syscall_resolve_num_arch((uint32_t)hit->arch, (int)hit->nr);

	if (s)
		snprintf(name, cap, "%s", s);
	else
		snprintf(name, cap, "system call %lld", hit->nr);
	free(s);
	return true;
}

bool sbx_audit_syscall(pid_t pid, long long since_us, char *name, size_t cap)
{
	struct audit_hit hit = {-1, 0};
	char pid_key[32];
	long long deadline = now_ms() + AUDIT_WAIT_MS;
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	snprintf(pid_key, sizeof(pid_key), " pid=%d ", (int)pid);
	ok = scan_all(fd, pid_key, since_us, &hit);
	/* The record may still be on its way from the audit thread. */
	while (ok && hit.nr < 0 && now_ms() < deadline) {
		struct pollfd pfd = {fd, POLLIN, 0};
		if (poll(&pfd, 1, (int)(deadline - now_ms())) > 0)
			ok = scan_all(fd, pid_key, since_us, &hit);
	}
	close(fd);
	return hit.nr >= 0 && name_of(&hit, name, cap);
}

bool sbx_explain_child_sigsys(const char *text, unsigned within_ms, char *out, size_t cap)
{
	const char *p = text ? strstr(text, "(pid ") : NULL;
	char name[40];
	struct timespec t;
	int pid;

	if (cap)
		out[0] = '\0';
	if (!p || !strstr(text, "killed by SIGSYS") || sscanf(p, "(pid %d)", &pid) != 1 || pid <= 0)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &t);
	if (!sbx_audit_syscall(pid, (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000 -
			       (long long)within_ms * 1000, name, sizeof(name)))
		return false;
	snprintf(out, cap, " (the system call the sandbox refused: %s)", name);
	return true;
}
