/* zygote.c - the job registry and the zygote: a small helper process,
 * forked from the server at startup, that forks the workers for it (see
 * sandbox.h for the API).
 *
 * Why: forking the server itself costs its page tables and, while the
 * worker lives, copy-on-write faults on both sides; with many threads it
 * also costs TLB shootdowns.  The zygote is forked once, while the server
 * is still small and single-threaded, and stays that way.
 *
 * Spares: the zygote keeps one worker forked ahead of its request (see
 * the spare section below for why and how).
 *
 * Protocol, over a SOCK_STREAM unix socketpair; one request at a time
 * (the server's side holds a mutex from sending a request to reading its
 * reply, so threads may spawn concurrently):
 *   request: struct zreq (limits, sizes), then the strings (read roots,
 *            write root, exec path, job name, each NUL-terminated), then
 *            the job's bytes;
 *   reply:   struct zrep (PL_OK and the worker's pid, or a pl_err with
 *            its text and hint); with PL_OK, SCM_RIGHTS carries the read
 *            ends of the result pipe, the setup-message pipe and the done
 *            pipe.
 * The zygote keeps the done pipe's write end.  When a worker exits it
 * kills the worker's group while the zombie pins the group id, reaps it
 * (and, as child subreaper, every descendant), and once the group is
 * empty (or after 1 s) writes the wait status (an int) to the done pipe
 * and closes it.  So the server learns the exit from that pipe, matched
 * to its worker by construction, and kills by kill(-pid) as before.
 *
 * Zygote confinement: its own name, no_new_privs, parent-death signal
 * (SIGTERM, handled: it kills its workers' groups and leaves), child
 * subreaper, stdin/stdout on /dev/null, descriptors 0-2 plus the socket
 * and a signalfd only, single-threaded, terminal signals ignored.  It
 * must still open policy roots and fork, so it has no Landlock or
 * seccomp of its own; each worker applies its own as before.
 *
 * Failures: the server's side has a 5 s send/receive timeout.  A socket
 * error, a timeout or a done pipe that ends without a status means the
 * zygote is gone: that is logged once on stderr, the zygote is killed and
 * reaped, and from then on workers are forked directly.
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

#define MAX_JOBS 16
#define ZREQ_MAGIC 0x5a594731u         /* "ZYG1" */
#define MAX_STRINGS (1u << 20)
#define MAX_JOB_BYTES (64u << 20)
#define IO_TIMEOUT_S 5                 /* server side: zygote presumed hung */
#define PL_STR_(x) #x
#define PL_STR(x) PL_STR_(x)
#define GROUP_GONE_WAIT_NS 1000000000LL
#define ZY_SOCK_FD 3

enum { ZF_WRITE_ROOT = 1, ZF_EXEC = 2, ZF_NO_SECCOMP = 4, ZF_NETWORK = 8, ZF_PERF = 16,
       ZF_TARGET = 32, ZF_LAUNCHER = 64, ZF_LIBRARIES = 128 };

struct zreq {
	uint32_t magic;
	uint32_t nroots;
	uint32_t flags;
	uint32_t timeout_ms;
	uint64_t max_address_space, max_cpu_seconds, max_open_files, max_file_size;
	uint64_t max_result_bytes;
	uint64_t strings_len;
	uint64_t job_len;
};

struct zrep {
	int32_t rc;
	int32_t pid;
	int32_t landlock_abi;
	int32_t nfds;
	char text[sizeof(((struct pl_error *)0)->text)];
	char hint[sizeof(((struct pl_error *)0)->hint)];
};

/* ============================================================= registry */

static struct {
	char name[SBX_JOB_NAME_MAX];
	sbx_job_fn fn;
} jobs[MAX_JOBS];
static size_t njobs;

sbx_job_fn sbx_job_find(const char *name)
{
	for (size_t i = 0; i < njobs; i++)
		if (strcmp(jobs[i].name, name) == 0)
			return jobs[i].fn;
	return NULL;
}

enum pl_err sbx_register(const char *name, sbx_job_fn fn, struct pl_error *err)
{
	size_t n = strlen(name);
	sbx_job_fn have = sbx_job_find(name);

	if (have == fn)
		return PL_OK;
	if (have || n == 0 || n >= SBX_JOB_NAME_MAX)
		return pl_fail(err, PL_ERR_USAGE, "pick another name",
			       "cannot register sandbox job '%s': taken or badly sized", name);
	if (njobs == MAX_JOBS)
		return pl_fail(err, PL_ERR_LIMIT, NULL, "no room for sandbox job '%s'", name);
	memcpy(jobs[njobs].name, name, n + 1);
	jobs[njobs++].fn = fn;
	return PL_OK;
}

/* ============================================================== helpers */

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Send all of `iov` (modified) on socket or pipe `fd`; 0 or -1.  On a
 * socket without SIGPIPE (MSG_NOSIGNAL); the zygote ignores SIGPIPE, so
 * its pipes need not. */
static int send_all(int fd, struct iovec *iov, int n, bool socket)
{
	while (n > 0) {
		struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
		ssize_t w = socket ? sendmsg(fd, &m, MSG_NOSIGNAL) : writev(fd, iov, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Read exactly `len` bytes; 1 done, 0 end of file at once, -1 error. */
static int read_full(int fd, void *p, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = read(fd, (char *)p + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 && off == 0 ? 0 : -1;
		off += (size_t)n;
	}
	return 1;
}

static void close_fds(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* ============================================================== scratch
 *
 * Memory only the zygote itself uses (a request's bytes and parsed roots,
 * the table of its workers) lives in mappings that forks do not copy
 * (MADV_DONTFORK), faulted in once.  Why: every fork makes the zygote's
 * pages shared with the new spare, and the zygote's next write to each
 * one then costs a copy-on-write fault, tens of microseconds on this VM.
 * A spare has none of it (scratch is NULL there); bigger needs, and the
 * spare's own, use malloc. */

#define SCRATCH_BYTES (1u << 20)
#define MAX_KIDS 4096

static unsigned char *scratch;
static size_t scratch_used;

static void *private_map(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (madvise(p, n, MADV_DONTFORK) < 0) {
		munmap(p, n);
		return NULL;
	}
	(void)madvise(p, n, MADV_POPULATE_WRITE);
	return p;
}

/* `n` bytes from the scratch, or from malloc; release with zfree. */
static void *zalloc(size_t n)
{
	size_t want = (n + 15) & ~(size_t)15;

	if (scratch && want <= SCRATCH_BYTES - scratch_used) {
		void *p = scratch + scratch_used;
		scratch_used += want;
		return p;
	}
	return pl_xmalloc(n ? n : 1);
}

static void zfree(void *p)
{
	if (!scratch || (unsigned char *)p < scratch || (unsigned char *)p >= scratch + SCRATCH_BYTES)
		free(p);
}

/* ================================================================ zygote */

struct zkid {
	pid_t pid;              /* a worker, also its group id */
	int done_w;             /* the done pipe's write end */
	int status_r;           /* a copy of its status pipe's read end, watched
				 * while its job runs (see busy), else -1 */
	bool busy;              /* its job runs: nothing on its status pipe yet */
	bool exited;            /* reaped; waiting for its group to empty */
	int wstatus;
	long long give_up_ns;
};

/* The spare: the next worker, forked before its request (see spare_main). */
struct spare {
	pid_t pid;              /* 0: none */
	int job_w;              /* the job pipe's write end */
	int fds[3][2];          /* result, status and done pipes */
	struct pl_buf policy;   /* what it confined itself to (policy_of);
				 * empty: it confines itself once its job came */
};

struct zygote {
	int sock;
	int sigfd;
	struct zkid *kids;      /* MAX_KIDS of them, in a mapping forks do not copy */
	size_t nkids;
	struct pollfd *pfds;    /* the socket, the signalfd, then busy kids' status_r */
	long long idle_ns;      /* since when no job runs; 0 while one does */
	bool eager;             /* calls come back to back: fork spares at once,
				 * and they skip the warm-up */
	struct spare spare;
	struct pl_buf expect;   /* policy_of() the last request: the next spare's */
};

static void spare_drop(struct zygote *z);

/* A worker's job is over (it wrote on its status pipe: its done record, or
 * why it failed; or it exited). */
static void kid_idle(struct zkid *k)
{
	if (k->status_r >= 0)
		close(k->status_r);
	k->status_r = -1;
	k->busy = false;
}

static bool jobs_running(const struct zygote *z)
{
	for (size_t i = 0; i < z->nkids; i++)
		if (z->kids[i].busy)
			return true;
	return false;
}

static struct zkid *find_kid(struct zygote *z, pid_t pid)
{
	for (size_t i = 0; i < z->nkids; i++)
		if (z->kids[i].pid == pid)
			return &z->kids[i];
	return NULL;
}

/* Reap every exited child: a worker gets its group killed first (while
 * its zombie pins the group id); others are its re-parented descendants. */
static void reap_children(struct zygote *z)
{
	for (;;) {
		siginfo_t si;
		struct zkid *k;

		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
			return;
		k = find_kid(z, si.si_pid);
		if (k && !k->exited) {
			kill(-k->pid, SIGKILL);
			while (waitpid(k->pid, &k->wstatus, 0) < 0 && errno == EINTR)
				;
			kid_idle(k);
			k->exited = true;
			k->give_up_ns = now_ns() + GROUP_GONE_WAIT_NS;
		} else {
			while (waitpid(si.si_pid, NULL, 0) < 0 && errno == EINTR)
				;
			if (si.si_pid == z->spare.pid) {
				/* Died waiting, perhaps unable to confine itself to
				 * the policy it took: the next one waits for its
				 * request instead (and forking cannot loop). */
				spare_drop(z);
				z->expect.len = 0;
			}
		}
	}
}

/* Tell the server about each reaped worker whose group is gone. */
static void report_done(struct zygote *z)
{
	for (size_t i = 0; i < z->nkids;) {
		struct zkid *k = &z->kids[i];

		if (!k->exited || (!(kill(-k->pid, 0) < 0 && errno == ESRCH) &&
				   now_ns() < k->give_up_ns)) {
			i++;
			continue;
		}
		if (write(k->done_w, &k->wstatus, sizeof(k->wstatus)) < 0)
			(void)0;  /* the server has let go of this worker */
		close(k->done_w);
		kid_idle(k);
		z->kids[i] = z->kids[--z->nkids];
	}
}

static bool draining(const struct zygote *z)
{
	for (size_t i = 0; i < z->nkids; i++)
		if (z->kids[i].exited)
			return true;
	return false;
}

/* The server is gone or asked us to stop: kill every worker's group,
 * reap what we can within a second, leave. */
static void __attribute__((noreturn)) zygote_exit(struct zygote *z)
{
	long long give_up = now_ns() + GROUP_GONE_WAIT_NS;
	struct timespec nap = {0, 200000};

	for (size_t i = 0; i < z->nkids; i++)
		kill(-z->kids[i].pid, SIGKILL);
	if (z->spare.pid)
		kill(-z->spare.pid, SIGKILL);
	while (now_ns() < give_up) {
		pid_t p = waitpid(-1, NULL, WNOHANG);
		if (p < 0)
			break;  /* ECHILD: nothing left */
		if (p == 0)
			nanosleep(&nap, NULL);
	}
	_exit(0);
}

/* ------------------------------------------------------------ requests */

/* The next NUL-terminated string of [*p, end), or NULL. */
static const char *next_string(const char **p, const char *end)
{
	const char *s = *p, *nul = memchr(s, '\0', (size_t)(end - s));

	if (!nul)
		return NULL;
	*p = nul + 1;
	return s;
}

/* A request's policy, job name and job bytes, pointing into `buf`. */
struct zjob {
	struct sbx_policy pol;
	const char **roots;
	const char *name;
	sbx_job_fn fn;
	const char *bytes;
	size_t len;
};

static int parse_request(const struct zreq *h, const char *buf, struct zjob *j)
{
	const char *p = buf, *end = buf + h->strings_len;

	memset(&j->pol, 0, sizeof(j->pol));
	j->roots = zalloc((h->nroots + 1) * sizeof(*j->roots));
	memset(j->roots, 0, (h->nroots + 1) * sizeof(*j->roots));
	for (uint32_t i = 0; i < h->nroots; i++)
		if (!(j->roots[i] = next_string(&p, end)))
			return -1;
	if ((h->flags & ZF_WRITE_ROOT) && !(j->pol.write_root = next_string(&p, end)))
		return -1;
	if ((h->flags & ZF_EXEC) && !(j->pol.exec_path = next_string(&p, end)))
		return -1;
	if ((h->flags & ZF_TARGET) && !(j->pol.exec_target = next_string(&p, end)))
		return -1;
	if (!(j->name = next_string(&p, end)))
		return -1;
	j->pol.read_roots = j->roots;
	j->pol.nread_roots = h->nroots;
	j->pol.max_address_space = h->max_address_space;
	j->pol.max_cpu_seconds = h->max_cpu_seconds;
	j->pol.max_open_files = h->max_open_files;
	j->pol.max_file_size = h->max_file_size;
	j->pol.timeout_ms = h->timeout_ms;
	j->pol.max_result_bytes = (size_t)h->max_result_bytes;
	j->pol.no_seccomp = (h->flags & ZF_NO_SECCOMP) != 0;
	j->pol.allow_network = (h->flags & ZF_NETWORK) != 0;
	j->pol.allow_perf_events = (h->flags & ZF_PERF) != 0;
	j->pol.use_launcher = (h->flags & ZF_LAUNCHER) != 0;
	j->pol.load_libraries = (h->flags & ZF_LIBRARIES) != 0;
	j->fn = sbx_job_find(j->name);
	j->bytes = end;
	j->len = (size_t)h->job_len;
	return 0;
}

static int run_zjob(void *arg, int out_fd)
{
	const struct zjob *j = arg;

	return j->fn(j->bytes, j->len, out_fd);
}

static enum pl_err pipes(int fds[3][2], struct pl_error *err)
{
	for (int i = 0; i < 3; i++) {
		fds[i][0] = fds[i][1] = -1;
		if (pipe2(fds[i], O_CLOEXEC) < 0)
			return pl_fail(err, PL_ERR_LIMIT, "close descriptors or raise RLIMIT_NOFILE",
				       "cannot create the worker's pipes: %s", strerror(errno));
		fcntl(fds[i][0], F_SETFL, O_NONBLOCK);
	}
	return PL_OK;
}

/* ---------------------------------------------------------------- spare
 *
 * Why: forking, confining, and the first write to each page a job
 * touches cost milliseconds on the project's VMs (every page fault and
 * every new seccomp filter is a trip to the hypervisor).  So the next
 * worker, the spare, is forked while nothing waits for it.  It faults in
 * its heap and stack in a few large steps, touches them (a fresh
 * process's first access to a page, even one already there, still costs
 * about 5 us on those VMs), runs the warm-up hook (the code every job
 * runs: see sbx_set_warm_up), then confines itself to the
 * policy of the last request (rlimits, Landlock, seccomp: the same calls,
 * in the same order, as a worker forked at request time), and only then
 * blocks on its job pipe.  A request whose policy is byte for byte the
 * one the spare holds goes to it; the spare checks that again, and runs
 * the job.  Another policy gets a new spare, primed for it.  The first
 * spare has no policy to take yet: it reads its request first and
 * confines itself after.  Either way the untrusted job runs confined
 * exactly as asked.  The zygote forks the next spare once the job ended
 * (a job's own core is worth more than a spare ready early), or at once
 * when calls come back to back (see zygote_loop). */

#define WARM_HEAP (512u << 10)   /* fresh heap made ready before the job comes */
#define WARM_STACK (64u << 10)   /* stack made ready before the job comes */

/* Fault in the whole pages of [p, p + n) in one system call.  Only
 * that: a kernel without MADV_POPULATE_WRITE leaves them to the job. */
static void populate(void *p, size_t n)
{
	uintptr_t start = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t end = ((uintptr_t)p + n) & ~(uintptr_t)4095;

	if (end > start)
		(void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
}

/* Write every page of [p, p + n) once, from user space.  After the
 * populate above the pages are there, but on the project's VMs (where the
 * host keeps page tables of its own) a process's first access to each
 * page still costs about 5 us; a job that finds them touched saves that.
 * Single-threaded, and a byte is written back as it was read. */
static void touch_pages(void *p, size_t n)
{
	uintptr_t start = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;

	for (uintptr_t a = start; a + 4096 <= (uintptr_t)p + n; a += 4096) {
		volatile unsigned char *c = (unsigned char *)a;
		*c = *c;
	}
}

/* Where the heap starts (its end is sbrk(0)); the zygote reads it once,
 * its spares inherit it. */
static uintptr_t heap_start;

static void find_heap_start(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && !heap_start && fgets(line, sizeof(line), f)) {
		unsigned long a;
		if (strstr(line, "[heap]") && sscanf(line, "%lx-", &a) == 1)
			heap_start = a;
	}
	if (f)
		fclose(f);
}

/* Make the heap a job writes private and present before the job comes:
 * copy now, before any malloc walks them, the pages shared with the
 * zygote (malloc reuses their free chunks), and grow malloc's top by
 * WARM_HEAP of written pages, where a job's new allocations land.  One
 * madvise for many pages costs a third of the faults it saves, and it is
 * paid while nobody waits.  The worker exits after one job, so malloc
 * may keep all it gets: no trimming, and no separate mappings (each would
 * fault afresh) below 64 MiB. */
static void warm_heap(void)
{
	uintptr_t end = (uintptr_t)sbrk(0);
	char *p;

	if (heap_start && end != (uintptr_t)-1 && end > heap_start)
		populate((void *)heap_start, end - heap_start);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TOP_PAD, 0);
	p = malloc(WARM_HEAP);
	if (p)
		populate(p, WARM_HEAP);
	free(p);
	mallopt(M_TOP_PAD, 1 << 20);
}

static sbx_warm_up_fn warm_up;

void sbx_set_warm_up(sbx_warm_up_fn fn)
{
	warm_up = fn;
}

/* The heap warm_heap made ready, touched (see touch_pages). */
static void touch_heap(void)
{
	uintptr_t end = (uintptr_t)sbrk(0);

	if (heap_start && end != (uintptr_t)-1 && end > heap_start)
		touch_pages((void *)heap_start, end - heap_start);
}

/* A request is there already: calls come faster than spares get ready. */
static bool job_waiting(int job_r)
{
	struct pollfd pfd = {job_r, POLLIN, 0};

	return poll(&pfd, 1, 0) > 0;
}

static void __attribute__((noinline)) warm_stack(void)
{
	volatile char frame[WARM_STACK];

	for (size_t off = 0; off < sizeof(frame); off += 4096)
		frame[off] = 0;
}

/* In the spare after a failure of its own: say why on the status pipe,
 * as a worker that cannot confine itself does. */
static void __attribute__((noreturn)) spare_fail(int status_w, const char *text)
{
	if (write(status_w, text, strlen(text)) < 0)
		(void)0;  /* the parent then sees exit status SBX_SETUP_EXIT */
	_exit(SBX_SETUP_EXIT);
}

/* What a spare is confined to: the request's header without its job
 * length, then its strings (roots, paths, job name). */
static void policy_of(const struct zreq *h, const char *strings, struct pl_buf *out)
{
	struct zreq k = *h;

	k.job_len = 0;
	out->len = 0;
	pl_buf_add(out, &k, sizeof(k));
	pl_buf_add(out, strings, (size_t)h->strings_len);
}

/* Is `b` policy_of() this request?  (Compared, not built: building
 * would write.) */
static bool policy_equals(const struct zreq *h, const char *strings, const struct pl_buf *b)
{
	struct zreq k = *h;

	k.job_len = 0;
	return b->len == sizeof(k) + h->strings_len && memcmp(b->data, &k, sizeof(k)) == 0 &&
	       memcmp(b->data + sizeof(k), strings, (size_t)h->strings_len) == 0;
}

/* The spare's request from `fd`, checked, into `j` (buffer in *buf);
 * NULL, or what was wrong. */
static const char *read_request(int fd, struct zreq *h, char **buf, struct zjob *j)
{
	int rd = read_full(fd, h, sizeof(*h));

	if (rd == 0)
		_exit(0);  /* no job: the zygote is leaving */
	if (rd < 0 || h->magic != ZREQ_MAGIC || h->strings_len > MAX_STRINGS ||
	    h->job_len > MAX_JOB_BYTES || h->nroots > MAX_STRINGS)
		return "read its request: it is malformed";
	*buf = pl_xmalloc(h->strings_len + h->job_len + 1);
	(*buf)[h->strings_len + h->job_len] = '\0';
	if (read_full(fd, *buf, h->strings_len + h->job_len) != 1 ||
	    parse_request(h, *buf, j) < 0 || !j->fn)
		return "read its request: it is truncated or names no job";
	return NULL;
}

/* A primed spare, confined: read the job and run it if its policy is the
 * one this worker holds (the zygote checked; this is the worker's own
 * word on it). */
static int run_primed(void *arg, int out_fd)
{
	const struct pl_buf *held = arg;
	struct pl_buf got = {0};
	struct zjob j = {0};
	struct zreq h;
	char *buf = NULL;
	const char *bad = read_request(SBX_JOB_FD, &h, &buf, &j);

	if (bad)
		return 126;
	prctl(PR_SET_NAME, "perflens-worker");
	policy_of(&h, buf, &got);
	if (got.len != held->len || memcmp(got.data, held->data, got.len) != 0)
		return 126;
	close(SBX_JOB_FD);
	return j.fn(j.bytes, j.len, out_fd);
}

/* The policy held in `policy` into `j`; -1 when it does not parse. */
static int policy_job(const struct pl_buf *policy, struct zjob *j)
{
	struct zreq h;

	if (policy->len < sizeof(h))
		return -1;
	memcpy(&h, policy->data, sizeof(h));
	return parse_request(&h, policy->data + sizeof(h), j);
}

/* The spare's life: warm up, then confine and wait for the job (primed)
 * or wait, then confine; run it. */
static void __attribute__((noreturn)) spare_main(struct zygote *z, pid_t zygote, int job_r)
{
	struct sbx_plan p = {.parent = zygote, .out_w = z->spare.fds[0][1],
			     .status_w = z->spare.fds[1][1]};
	const struct pl_buf *policy = &z->spare.policy;
	struct zjob j = {0};
	struct pl_error err;
	struct zreq h;
	char *buf = NULL;
	const char *bad;
	int abi;

	prctl(PR_SET_NAME, "perflens-spare");  /* "perflens-worker" once its job came */
	scratch = NULL;  /* not inherited, nor is z->kids */
	if (setpgid(0, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != zygote)
		_exit(SBX_SETUP_EXIT);
	close(z->sock);
	close(z->sigfd);
	warm_heap();
	warm_stack();
	/* What only makes the job faster is skipped when calls come back to
	 * back (it would take a core from the job running beside it) or the
	 * job waits already (it would delay it by more than it saves). */
	if (!z->eager && !job_waiting(job_r)) {
		touch_heap();
		if (warm_up)
			warm_up();
	}
	if (policy->len) {
		if (policy_job(policy, &j) < 0)
			spare_fail(p.status_w, "take its policy: it does not parse");
		p.job_r = job_r;
		p.fn = run_primed;
		p.arg = (void *)policy;
	} else {
		if ((bad = read_request(job_r, &h, &buf, &j)))
			spare_fail(p.status_w, bad);
		prctl(PR_SET_NAME, "perflens-worker");
		p.fn = run_zjob;
		p.arg = &j;
	}
	p.pol = &j.pol;
	if (sbx_prepare(&j.pol, &p, &abi, &err))
		spare_fail(p.status_w, err.text);
	sbx_child_main(&p);
}

/* Close the zygote's ends of the spare's pipes; the spare, if it still
 * lives, sees the end of its job pipe and leaves (it is reaped as any
 * other child). */
static void spare_drop(struct zygote *z)
{
	struct spare *sp = &z->spare;

	if (!sp->pid)
		return;
	close(sp->job_w);
	for (int i = 0; i < 3; i++)
		close_fds(sp->fds[i], 2);
	sp->pid = 0;  /* its policy stays: the next spare's, when equal, is not rewritten */
}

/* Fork a spare if there is none; PL_OK when there is one. */
static enum pl_err spare_make(struct zygote *z, struct pl_error *err)
{
	struct spare *sp = &z->spare;
	int job[2] = {-1, -1};
	pid_t self = getpid(), pid;
	enum pl_err rc;

	if (sp->pid)
		return PL_OK;
	for (int i = 0; i < 3; i++)
		sp->fds[i][0] = sp->fds[i][1] = -1;
	if (sp->policy.len != z->expect.len ||
	    (z->expect.len && memcmp(sp->policy.data, z->expect.data, z->expect.len) != 0)) {
		sp->policy.len = 0;
		if (z->expect.len)
			pl_buf_add(&sp->policy, z->expect.data, z->expect.len);
	}
	rc = pipes(sp->fds, err);
	if (rc == PL_OK && pipe2(job, O_CLOEXEC) < 0)
		rc = pl_fail(err, PL_ERR_LIMIT, "close descriptors or raise RLIMIT_NOFILE",
			     "cannot create the worker's job pipe: %s", strerror(errno));
	if (rc == PL_OK && (pid = fork()) == 0) {
		close(job[1]);
		spare_main(z, self, job[0]);
	}
	if (rc == PL_OK && pid < 0)
		rc = pl_fail(err, PL_ERR_LIMIT, "wait for running workers to finish",
			     "cannot fork a worker: %s", strerror(errno));
	close_fds(job, 1);
	if (rc) {
		close_fds(&job[1], 1);
		for (int i = 0; i < 3; i++)
			close_fds(sp->fds[i], 2);
		return rc;
	}
	setpgid(pid, pid);  /* also here, so kill(-pid) works at once */
	for (int i = 0; i < 3; i++)
		if (i < 2) {
			close(sp->fds[i][1]);
			sp->fds[i][1] = -1;
		}
	sp->job_w = job[1];
	sp->pid = pid;
	return PL_OK;
}

/* Write the request to the spare; 0, or -1 when it is gone. */
static int spare_send(struct spare *sp, const struct zreq *h, const char *buf)
{
	struct iovec iov[2] = {{(void *)h, sizeof(*h)},
			       {(void *)buf, (size_t)(h->strings_len + h->job_len)}};

	return send_all(sp->job_w, iov, 2, false);
}

/* Give the request to the spare (forking one first if there is none, and
 * again if it died meanwhile); on PL_OK r->pid is set and `give` holds
 * the read ends for the server. */
static enum pl_err hand_to_spare(struct zygote *z, const struct zreq *h, const char *buf,
				 struct zrep *r, int give[3], struct pl_error *err)
{
	struct spare *sp = &z->spare;
	enum pl_err rc = PL_OK;

	if (sp->pid && sp->policy.len && !policy_equals(h, buf, &sp->policy)) {
		kill(-sp->pid, SIGKILL);  /* confined to another policy */
		spare_drop(z);
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		if ((rc = spare_make(z, err)))
			return rc;
		if (spare_send(sp, h, buf) == 0)
			break;
		kill(-sp->pid, SIGKILL);
		spare_drop(z);
		rc = pl_fail(err, PL_ERR_LIMIT, "retry the call", "the worker exited before its job came");
	}
	if (rc)
		return rc;
	close(sp->job_w);
	for (int i = 0; i < 3; i++)
		give[i] = sp->fds[i][0];
	z->kids[z->nkids++] = (struct zkid){.pid = sp->pid, .done_w = sp->fds[2][1], .busy = true,
		.status_r = fcntl(sp->fds[1][0], F_DUPFD_CLOEXEC, 3)};
	r->pid = sp->pid;
	r->landlock_abi = sbx_ll_abi();
	sp->pid = 0;
	return PL_OK;
}

static void send_reply(struct zygote *z, const struct zrep *r, const int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(3 * sizeof(int))];
	struct iovec iov = {(void *)r, sizeof(*r)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;

	if (nfds > 0) {
		memset(cbuf, 0, sizeof(cbuf));
		m.msg_control = cbuf;
		m.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
	}
	while (sendmsg(z->sock, &m, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

/* What would stop a worker from confining itself to `pol` (a root that
 * cannot be opened, a filter that cannot be built), found here so that
 * the caller gets it as the spawn's error, as from a direct fork; the
 * worker prepares its own.  Also caches a new seccomp mode's program
 * for the spares forked from now on. */
static enum pl_err check_policy(const struct sbx_policy *pol, struct pl_error *err)
{
	struct sbx_plan p = {0};
	int abi;
	enum pl_err rc = sbx_prepare(pol, &p, &abi, err);

	if (p.ruleset >= 0)
		close(p.ruleset);
	return rc;
}

/* A valid request: check its policy unless the spare holds it already
 * (it confined itself to it without error), make it the one spares take
 * from now on, and hand the request over. */
static enum pl_err serve(struct zygote *z, const struct zreq *h, const char *buf,
			 const struct sbx_policy *pol, struct zrep *r, int give[3],
			 struct pl_error *err)
{
	enum pl_err rc;

	if (z->nkids >= MAX_KIDS)
		return pl_fail(err, PL_ERR_LIMIT, "wait for running calls to finish",
			       "%d workers are running already", MAX_KIDS);
	if (!(z->spare.pid && policy_equals(h, buf, &z->spare.policy)) &&
	    (rc = check_policy(pol, err)))
		return rc;
	if (!policy_equals(h, buf, &z->expect))
		policy_of(h, buf, &z->expect);
	return hand_to_spare(z, h, buf, r, give, err);
}

/* Serve one request; -1 when the server is gone (or spoke nonsense). */
static int handle_request(struct zygote *z)
{
	struct zreq h;
	struct zrep r;
	struct zjob j = {0};
	struct pl_error err;
	int give[3] = {-1, -1, -1};
	char *buf;
	int rd = read_full(z->sock, &h, sizeof(h));

	if (rd <= 0 || h.magic != ZREQ_MAGIC || h.strings_len > MAX_STRINGS ||
	    h.job_len > MAX_JOB_BYTES || h.nroots > MAX_STRINGS)
		return -1;
	scratch_used = 0;
	buf = zalloc(h.strings_len + h.job_len + 1);
	buf[h.strings_len + h.job_len] = '\0';
	if (read_full(z->sock, buf, h.strings_len + h.job_len) != 1 ||
	    parse_request(&h, buf, &j) < 0) {
		zfree(j.roots);
		zfree(buf);
		return -1;
	}
	memset(&r, 0, sizeof(r));
	pl_error_clear(&err);
	if (!j.fn)
		r.rc = pl_fail(&err, PL_ERR_USAGE, NULL, "the zygote has no job '%s'", j.name);
	else
		r.rc = serve(z, &h, buf, &j.pol, &r, give, &err);
	memcpy(r.text, err.text, sizeof(r.text));
	memcpy(r.hint, err.hint, sizeof(r.hint));
	r.nfds = r.rc == PL_OK ? 3 : 0;
	send_reply(z, &r, give, r.nfds);
	close_fds(give, 3);
	zfree(j.roots);
	zfree(buf);
	return 0;
}

/* ---------------------------------------------------------- main loop */

/* True when SIGTERM (the server died) came. */
static bool drain_signals(struct zygote *z)
{
	struct signalfd_siginfo si;
	bool term = false;

	while (read(z->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		term |= si.ssi_signo == SIGTERM;
	return term;
}

/* What to poll: the socket, the signalfd, and the status pipe of every
 * worker whose job runs; the count. */
static nfds_t watch_list(struct zygote *z)
{
	nfds_t n = 2;

	z->pfds[0] = (struct pollfd){z->sock, POLLIN, 0};
	z->pfds[1] = (struct pollfd){z->sigfd, POLLIN, 0};
	for (size_t i = 0; i < z->nkids; i++)
		if (z->kids[i].status_r >= 0)
			z->pfds[n++] = (struct pollfd){z->kids[i].status_r, POLLIN, 0};
	return n;
}

/* Workers that wrote on their status pipe (the server reads it; this copy
 * is only looked at) have finished their jobs. */
static void note_idle(struct zygote *z, nfds_t n)
{
	for (size_t i = 0, at = 2; i < z->nkids && at < n; i++) {
		struct zkid *k = &z->kids[i];
		if (k->status_r < 0 || k->status_r != z->pfds[at].fd)
			continue;
		if (z->pfds[at++].revents)
			kid_idle(k);
	}
}

/* A request that comes this soon after the last job ended is one of a
 * stream of calls made back to back: sooner than a spare forked at the
 * job's end gets ready (3 to 4 ms on the project's VMs), so waiting for
 * the end bought nothing. */
#define BACK_TO_BACK_NS (4 * 1000 * 1000LL)

/* Keep idle_ns: since when no job runs (0 while one does). */
static void note_running(struct zygote *z)
{
	if (jobs_running(z))
		z->idle_ns = 0;
	else if (!z->idle_ns)
		z->idle_ns = now_ns();
}

/* When to fork the next spare.  Calls one at a time with a pause between
 * (an agent thinking): once no job runs, since forking and warming it up
 * beside a running job would take a core from the job, and from the
 * server answering it, on a machine with few.  A job's end is seen on its
 * status pipe, before its exit.  Calls back to back (eager): at once after
 * the reply, so that the spare gets ready while the job runs. */
static void __attribute__((noreturn)) zygote_loop(struct zygote *z)
{
	spare_make(z, NULL);
	z->idle_ns = now_ns();
	for (;;) {
		nfds_t n = watch_list(z);

		if (poll(z->pfds, n, draining(z) ? 1 : -1) < 0 && errno != EINTR)
			zygote_exit(z);
		if (z->pfds[1].revents && drain_signals(z))
			zygote_exit(z);
		note_idle(z, n);
		reap_children(z);
		report_done(z);
		note_running(z);
		if (z->pfds[0].revents) {
			z->eager = z->idle_ns && now_ns() - z->idle_ns < BACK_TO_BACK_NS;
			if (handle_request(z) < 0)
				zygote_exit(z);
			note_running(z);
		}
		/* After the reply, so the server does not wait for this fork.
		 * A failure is reported with the next request, which tries again. */
		if (z->idle_ns || z->eager)
			spare_make(z, NULL);
	}
}

static int zygote_signals(void)
{
	struct sigaction ign = {.sa_handler = SIG_IGN};
	sigset_t set;

	sigaction(SIGPIPE, &ign, NULL);
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGQUIT, &ign, NULL);
	sigaction(SIGHUP, &ign, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_SETMASK, &set, NULL);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* 0, 1 on /dev/null, 2 kept, the socket on 3, the launcher's socket
 * (when there is one) on 4, nothing else. */
static int zygote_fds(int sock)
{
	int hi = fcntl(sock, F_DUPFD_CLOEXEC, 10);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int launch = sbx_launcher_socket() >= 0 ? fcntl(sbx_launcher_socket(), F_DUPFD_CLOEXEC, 10) : -1;

	if (hi < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup3(hi, ZY_SOCK_FD, O_CLOEXEC) < 0)
		return -1;
	if (launch >= 0 && dup3(launch, SBX_ZY_LAUNCH_FD, O_CLOEXEC) < 0)
		return -1;
	sbx_launcher_socket_moved(launch >= 0 ? SBX_ZY_LAUNCH_FD : -1);
	sbx_close_from(launch >= 0 ? SBX_ZY_LAUNCH_FD + 1 : ZY_SOCK_FD + 1);
	return 0;
}

static void __attribute__((noreturn)) zygote_main(int sock, pid_t server)
{
	struct zygote z = {.sock = ZY_SOCK_FD, .sigfd = -1};
	const struct sock_fprog *prog;
	char ready = 'R';

	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != server)
		_exit(1);
	if (zygote_fds(sock) < 0 || (z.sigfd = zygote_signals()) < 0)
		_exit(1);
	prctl(PR_SET_NAME, "perflens-zygote");
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		_exit(1);
	/* Built once here, not per worker; errors are reported per request. */
	/* Collection programs (perf rows) are rare: built when first asked. */
	for (int mode = 0; mode < 4; mode++)
		sbx_sc_program(mode & 1, mode & 2, false, &prog, NULL);
	sbx_ll_abi();
	/* No fast bins: a spare's first large malloc would otherwise walk
	 * (and copy) every page holding one; and a heap in one piece. */
	mallopt(M_MXFAST, 0);
	scratch = private_map(SCRATCH_BYTES);
	z.kids = private_map(MAX_KIDS * sizeof(*z.kids));
	if (!z.kids)
		z.kids = pl_xcalloc(MAX_KIDS, sizeof(*z.kids));
	z.pfds = private_map((MAX_KIDS + 2) * sizeof(*z.pfds));
	if (!z.pfds)
		z.pfds = pl_xcalloc(MAX_KIDS + 2, sizeof(*z.pfds));
	malloc_trim(0);
	find_heap_start();
	if (write(z.sock, &ready, 1) != 1)
		_exit(1);
	zygote_loop(&z);
}

/* ========================================================= server side */

static struct {
	pthread_mutex_t lock;   /* one request/reply at a time */
	int sock;               /* -1: no zygote */
	pid_t pid;
} zy = {PTHREAD_MUTEX_INITIALIZER, -1, -1};

static void set_timeouts(int sock)
{
	struct timeval tv = {IO_TIMEOUT_S, 0};

	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Kill and reap the zygote; with `why`, say so on stderr. */
static void zygote_gone_locked(const char *why)
{
	if (zy.sock < 0)
		return;
	if (why)
		fprintf(stderr, "perflens: the sandbox zygote (pid %d) %s; forking workers "
			"directly from now on\n", (int)zy.pid, why);
	close(zy.sock);
	zy.sock = -1;
	kill(zy.pid, SIGKILL);
	while (waitpid(zy.pid, NULL, 0) < 0 && errno == EINTR)
		;
	zy.pid = -1;
}

void sbx_zygote_lost(void)
{
	pthread_mutex_lock(&zy.lock);
	zygote_gone_locked("exited");
	pthread_mutex_unlock(&zy.lock);
}

enum pl_err sbx_zygote_start(struct pl_error *err)
{
	pid_t server = getpid(), pid;
	char ready = 0;
	int sv[2];

	pthread_mutex_lock(&zy.lock);
	if (zy.sock >= 0) {
		pthread_mutex_unlock(&zy.lock);
		return PL_OK;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		pthread_mutex_unlock(&zy.lock);
		return pl_fail(err, PL_ERR_LIMIT, "close descriptors or raise RLIMIT_NOFILE",
			       "cannot create the zygote's socket: %s", strerror(errno));
	}
	if ((pid = fork()) == 0)
		zygote_main(sv[1], server);
	close(sv[1]);
	zy.sock = sv[0];
	zy.pid = pid;
	set_timeouts(sv[0]);
	if (pid < 0 || read(sv[0], &ready, 1) != 1 || ready != 'R') {
		int e = errno;
		const char *why = e == EAGAIN || e == EWOULDBLOCK ?
			"it did not get ready within " PL_STR(IO_TIMEOUT_S) " s" : "it exited during setup";

		if (pid >= 0) {
			zygote_gone_locked(NULL);
		} else {
			close(sv[0]);
			zy.sock = -1;
		}
		pthread_mutex_unlock(&zy.lock);
		return pl_fail(err, PL_ERR_LIMIT, "workers will be forked directly",
			       "cannot start the sandbox zygote: %s",
			       pid < 0 ? strerror(e) : why);
	}
	pthread_mutex_unlock(&zy.lock);
	return PL_OK;
}

void sbx_zygote_stop(void)
{
	pthread_mutex_lock(&zy.lock);
	if (zy.sock >= 0) {
		shutdown(zy.sock, SHUT_RDWR);  /* end of file: it kills its workers */
		while (waitpid(zy.pid, NULL, 0) < 0 && errno == EINTR)
			;
		close(zy.sock);
		zy.sock = -1;
		zy.pid = -1;
	}
	pthread_mutex_unlock(&zy.lock);
}

int sbx_zygote_pid(void)
{
	int pid;

	pthread_mutex_lock(&zy.lock);
	pid = zy.pid;
	pthread_mutex_unlock(&zy.lock);
	return pid;
}

/* The strings of a request: roots, write root, exec path, exec target,
 * job name. */
static void request_strings(const struct sbx_policy *pol, const char *name, struct pl_buf *b)
{
	for (size_t i = 0; i < pol->nread_roots; i++)
		pl_buf_add(b, pol->read_roots[i], strlen(pol->read_roots[i]) + 1);
	if (pol->write_root)
		pl_buf_add(b, pol->write_root, strlen(pol->write_root) + 1);
	if (pol->exec_path)
		pl_buf_add(b, pol->exec_path, strlen(pol->exec_path) + 1);
	if (pol->exec_target)
		pl_buf_add(b, pol->exec_target, strlen(pol->exec_target) + 1);
	pl_buf_add(b, name, strlen(name) + 1);
}

static void request_header(const struct sbx_policy *pol, size_t strings, size_t len,
			   struct zreq *h)
{
	memset(h, 0, sizeof(*h));
	h->magic = ZREQ_MAGIC;
	h->nroots = (uint32_t)pol->nread_roots;
	h->flags = (pol->write_root ? ZF_WRITE_ROOT : 0) | (pol->exec_path ? ZF_EXEC : 0) |
		   (pol->no_seccomp ? ZF_NO_SECCOMP : 0) | (pol->allow_network ? ZF_NETWORK : 0) |
		   (pol->allow_perf_events ? ZF_PERF : 0) | (pol->exec_target ? ZF_TARGET : 0) |
		   (pol->use_launcher ? ZF_LAUNCHER : 0) | (pol->load_libraries ? ZF_LIBRARIES : 0);
	h->timeout_ms = pol->timeout_ms;
	h->max_address_space = pol->max_address_space;
	h->max_cpu_seconds = pol->max_cpu_seconds;
	h->max_open_files = pol->max_open_files;
	h->max_file_size = pol->max_file_size;
	h->max_result_bytes = pol->max_result_bytes;
	h->strings_len = strings;
	h->job_len = len;
}

/* The reply and its descriptors; 0, or -1 (the zygote is gone). */
static int recv_reply(int sock, struct zrep *r, int fds[3])
{
	char cbuf[CMSG_SPACE(3 * sizeof(int))];
	struct iovec iov = {r, sizeof(*r)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			   .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;
	int got = 0;
	ssize_t n;

	fds[0] = fds[1] = fds[2] = -1;
	while ((n = recvmsg(sock, &m, MSG_WAITALL | MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	for (c = CMSG_FIRSTHDR(&m); n > 0 && c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			got = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			got = got > 3 ? 3 : got;
			memcpy(fds, CMSG_DATA(c), (size_t)got * sizeof(int));
		}
	if (n != (ssize_t)sizeof(*r) || (m.msg_flags & MSG_CTRUNC) || got != r->nfds ||
	    (r->rc == PL_OK && got != 3)) {
		close_fds(fds, 3);
		return -1;
	}
	return 0;
}

int sbx_zygote_spawn(const struct sbx_policy *pol, const char *name, const void *buf,
		     size_t len, struct sbx_zworker *zw, struct pl_error *err)
{
	struct pl_buf strings = {0};
	struct zreq h;
	struct zrep r;
	struct iovec iov[3];
	int fds[3], io = -1;

	request_strings(pol, name, &strings);
	request_header(pol, strings.len, len, &h);
	iov[0] = (struct iovec){&h, sizeof(h)};
	iov[1] = (struct iovec){strings.data, strings.len};
	iov[2] = (struct iovec){(void *)buf, len};
	pthread_mutex_lock(&zy.lock);
	if (zy.sock >= 0 && strings.len <= MAX_STRINGS && len <= MAX_JOB_BYTES) {
		io = send_all(zy.sock, iov, 3, true) < 0 ? -1 : recv_reply(zy.sock, &r, fds);
		if (io < 0)
			zygote_gone_locked("exited or stopped answering");
	}
	pthread_mutex_unlock(&zy.lock);
	pl_buf_release(&strings);
	if (io < 0)
		return SBX_NO_ZYGOTE;
	if (r.rc != PL_OK) {
		r.text[sizeof(r.text) - 1] = r.hint[sizeof(r.hint) - 1] = '\0';
		return pl_fail(err, (enum pl_err)r.rc, r.hint[0] ? r.hint : NULL, "%s", r.text);
	}
	*zw = (struct sbx_zworker){(pid_t)r.pid, fds[0], fds[1], fds[2], r.landlock_abi};
	return PL_OK;
}
