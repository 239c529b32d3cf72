/* perf_data.c - read perf.data by running the allowlisted perf.
 *
 * `perf script` turns the file into text with an explicit field list
 * (so the header form does not depend on what perf guesses) and with
 * side-band mmap lines (so frames get verified load bases); its stdout
 * streams straight into the perf script parser, line by line, through
 * pl_run (no shell, LC_ALL=C, own process group, timeout, capped output).
 * A field the file's samples lack makes perf refuse the whole list; it is
 * dropped and perf asked again, and the command that worked is recorded in
 * the provenance.  perf buildid-list and perf evlist -v then give the
 * modules' build-ids and how each event unwound its stacks.
 *
 * perf never starts children here: `--no-inline` keeps it from running
 * addr2line for the inline frames of DWARF callchains, and srclines are
 * not asked of it either (its addr2line children cannot start in the
 * sandbox's confinement, and they are slow).  With srcline, the frames
 * keep their addresses instead, so that PerfLens's own libdw symbolizer
 * gives lines and inline frames afterwards (symbols/srclines.h).  A perf
 * killed by a signal gets an error that says what the signal means.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf_data.h"
#include "base/progress.h"
#include "run.h"
#include "base/escape.h"
#include "base/sha256.h"
#include "base/util.h"

#define MAX_ARGS 16
#define MAX_RETRIES 4

struct feed {
	struct pl_ps_parser *ps;
	uint64_t line_no;
};

static enum pl_err feed_line(void *arg, const char *line, size_t len, struct pl_error *err)
{
	struct feed *f = arg;

	return pl_ps_line(f->ps, line, len, ++f->line_no, err);
}

/* SHA-256 and size of the perf.data itself, for provenance. */
static enum pl_err hash_file(const char *path, uint64_t max, char hex[65], uint64_t *size,
			     struct pl_error *err)
{
	struct pl_sha256 sha;
	unsigned char digest[PL_SHA256_SIZE];
	char buf[1 << 16];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return pl_fail(err, PL_ERR_INPUT, "check the path", "cannot open '%s': %s", PL_ESC_MSG(path),
			       strerror(errno));
	pl_sha256_init(&sha);
	*size = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		*size += (uint64_t)n;
		if (*size > max) {
			close(fd);
			return pl_fail(err, PL_ERR_LIMIT, "raise --max-input-bytes",
				       "'%s' is larger than %llu bytes", PL_ESC_MSG(path), (unsigned long long)max);
		}
		pl_sha256_update(&sha, buf, (size_t)n);
	}
	close(fd);
	if (n < 0)
		return pl_fail(err, PL_ERR_INPUT, NULL, "cannot read '%s': %s", PL_ESC_MSG(path), strerror(errno));
	pl_sha256_final(&sha, digest);
	pl_hex(digest, sizeof(digest), hex);
	return PL_OK;
}

/* The field list without `drop` (a comma-separated name). */
static void drop_field(char *fields, const char *drop)
{
	size_t n = strlen(drop);
	char *p = fields;

	while ((p = strstr(p, drop))) {
		bool start = p == fields || p[-1] == ',', end = p[n] == ',' || p[n] == '\0';
		if (start && end) {
			memmove(p, p + n + (p[n] == ','), strlen(p + n + (p[n] == ',')) + 1);
			if (*fields && fields[strlen(fields) - 1] == ',')
				fields[strlen(fields) - 1] = '\0';
			return;
		}
		p += n;
	}
}

/* perf: "... Cannot print 'time' field." -> "time". */
static bool refused_field(const char *stderr_text, char *out, size_t cap)
{
	const char *p = strstr(stderr_text, "Cannot print '");
	const char *q;

	if (!p)
		return false;
	p += 14;
	q = strchr(p, '\'');
	if (!q || q == p || (size_t)(q - p) >= cap)
		return false;
	memcpy(out, p, (size_t)(q - p));
	out[q - p] = '\0';
	return true;
}

/* The command for the provenance; a kallsyms copy is named after what it
 * copies, so that the text does not depend on a temporary path. */
static char *command_text(const char *const *argv, const struct pl_perf_data_opts *o)
{
	struct pl_buf b = {0};

	for (size_t i = 0; argv[i]; i++) {
		const char *a = argv[i];
		if (i)
			pl_buf_add(&b, " ", 1);
		if (o->kallsyms && o->kallsyms_shown && a == o->kallsyms)
			a = o->kallsyms_shown;
		pl_buf_add(&b, a, strlen(a));
	}
	pl_buf_add(&b, "", 1);
	return b.data;
}

/* "HEX PATH" lines of perf buildid-list. */
static enum pl_err build_id_line(void *arg, const char *line, size_t len, struct pl_error *err)
{
	struct pl_profile *p = arg;
	const char *sp = memchr(line, ' ', len);
	size_t nhex = sp ? (size_t)(sp - line) : 0;

	(void)err;
	if (nhex < 2 || nhex > 128 || sp + 1 >= line + len || p->nbuild_ids == PL_MAX_BUILD_IDS)
		return PL_OK;
	for (size_t i = 0; i < nhex; i++)
		if (!((line[i] >= '0' && line[i] <= '9') || (line[i] >= 'a' && line[i] <= 'f')))
			return PL_OK;
	PL_GROW(p->build_ids, p->build_ids_cap, p->nbuild_ids + 1);
	struct pl_build_id *b = &p->build_ids[p->nbuild_ids++];
	b->dso = pl_intern_str(p, sp + 1, (size_t)(line + len - sp - 1));
	memcpy(b->hex, line, nhex);
	b->hex[nhex] = '\0';
	return PL_OK;
}

/* The build-ids the recording holds, which let frames perf could not
 * name be named from local binaries that are verifiably the same.  A
 * failure here only costs that: the analysis goes on without them. */
static void read_build_ids(struct pl_profile *p, const char *path, const struct pl_perf_data_opts *o)
{
	const char *argv[] = {o->perf_path, "buildid-list", "-i", path, NULL};
	struct pl_run_opts ro = {
		.argv = argv, .timeout_ms = o->timeout_ms, .max_stdout = 1u << 20,
		.max_line = 4096, .nice = 5, .on_line = build_id_line, .arg = p,
	};
	struct pl_run_result res;
	struct pl_error ignored;

	pl_run(&ro, &res, &ignored);
	pl_run_result_release(&res);
}

/* "NAME: type: 1, ..., sample_type: IP|TID|CALLCHAIN|..., ..." lines of
 * perf evlist -v. */
static enum pl_err event_attr_line(void *arg, const char *line, size_t len, struct pl_error *err)
{
	const char *sep = memmem(line, len, ": type: ", 8);

	(void)err;
	if (sep && sep > line)
		pl_note_event_attr(arg, line, (size_t)(sep - line), sep, len - (size_t)(sep - line));
	return PL_OK;
}

/* How each event unwound its stacks (only frame-pointer chains get the
 * caller check); a failure leaves the events unsaid, hence unchecked. */
static void read_event_attrs(struct pl_profile *p, const char *path, const struct pl_perf_data_opts *o)
{
	const char *argv[] = {o->perf_path, "evlist", "-v", "-i", path, NULL};
	struct pl_run_opts ro = {
		.argv = argv, .timeout_ms = o->timeout_ms, .max_stdout = 1u << 20,
		.max_line = 1u << 16, .nice = 5, .on_line = event_attr_line, .arg = p,
	};
	struct pl_run_result res;
	struct pl_error ignored;

	pl_run(&ro, &res, &ignored);
	pl_run_result_release(&res);
}

/* perf killed by a signal: what the signal means here and what to do,
 * never a hint about a damaged file (perf reports those itself, with an
 * exit status).  SIGSYS comes from the sandbox's seccomp filter: the
 * caller running the worker (which may read the kernel's audit record)
 * names the system call from the pid given here. */
static enum pl_err killed(const struct pl_run_result *res, const char *path,
			  struct pl_error *err)
{
	const char *name = sigabbrev_np(res->signal), *what, *hint;
	char tail[160];

	pl_run_stderr_tail(res, tail, sizeof(tail));
	switch (res->signal) {
	case SIGSYS:
		what = "the sandbox refused a system call perf made";
		hint = "read the same file with the CLI (perflens analyze --path FILE), which runs "
		       "perf unconfined, and report the system call so the sandbox can allow it";
		break;
	case SIGPIPE:
		what = "perf wrote to a pipe nobody reads (a helper it started could not run)";
		hint = "analyze without srcline, or with the CLI, and report the call";
		break;
	case SIGKILL:
	case SIGXCPU:
		what = "perf passed a resource limit (memory, CPU time) or was stopped";
		hint = "analyze a shorter capture, or raise --perf-timeout";
		break;
	default:
		what = "perf crashed";
		hint = "check that this perf (--perf-path) reads the file outside PerfLens: "
		       "perf script -i FILE";
		break;
	}
	return pl_fail(err, PL_ERR_EXTERNAL, hint,
		       "perf script on '%s' (pid %d) was killed by SIG%s (signal %d): %s%s%s",
		       PL_ESC_MSG(path), (int)res->pid, name ? name : "?", res->signal, what,
		       tail[0] ? "; its last words: " : "", tail);
}

/* The last line of perf's stderr that says something: perf warns
 * "'trace' not valid for software events. Ignoring." for each event type
 * the trace field does not apply to, which says nothing about a failure. */
static void error_tail(const struct pl_run_result *res, char *out, size_t cap)
{
	const char *s = res->stderr_text ? res->stderr_text : "";
	const char *end = s + strlen(s), *start;

	for (;;) {
		while (end > s && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\r'))
			end--;
		for (start = end; start > s && start[-1] != '\n'; start--)
			;
		if (start == end || !memmem(start, (size_t)(end - start), "' not valid for ", 16))
			break;
		end = start;
	}
	snprintf(out, cap, "%.*s", (int)(end - start), start);
}

/* One run of perf script into a fresh profile (so a refused field leaves
 * nothing half-parsed behind). */
static enum pl_err run_once(struct pl_profile *p, const char *const *argv, const char *path,
			    const struct pl_perf_data_opts *o, struct pl_run_result *res,
			    struct pl_error *err)
{
	struct feed f = {pl_ps_new(p, path), 0};
	struct pl_run_opts ro = {
		.argv = argv, .timeout_ms = o->timeout_ms, .max_stdout = p->limits.max_input_bytes,
		.max_line = p->limits.max_line, .nice = 5, .on_line = feed_line, .arg = &f,
		.progress_stdout = true,
	};
	enum pl_err rc;

	pl_progress_input_start(0);  /* perf script's text: its length is unknown */
	rc = pl_run(&ro, res, err);

	if (rc == PL_OK)
		return pl_ps_finish(f.ps, err);
	struct pl_error ignored;
	pl_ps_finish(f.ps, &ignored);
	return rc;
}

/* perf script's argv for `fields`: side-band mmap lines for load bases,
 * mangled names, no inline frames (perf would start addr2line children; our own
 * symbolizer adds them with srclines). */
static void script_argv(const char **argv, const char *path, const char *fields,
			const struct pl_perf_data_opts *o)
{
	size_t n = 0;

	argv[n++] = o->perf_path;
	if (o->buildid_dir) {
		argv[n++] = "--buildid-dir";
		argv[n++] = o->buildid_dir;
	}
	argv[n++] = "script";
	argv[n++] = "-i";
	argv[n++] = path;
	argv[n++] = "-F";
	argv[n++] = fields;
	argv[n++] = "--show-mmap-events";
	if (o->kallsyms) {
		argv[n++] = "--kallsyms";
		argv[n++] = o->kallsyms;
	}
	argv[n++] = "--no-inline";
	/* linker names, demangled by the profile as the native reader's
	 * (profile/demangle.h): the same names, the mangled one kept */
	argv[n++] = "--no-demangle";
	argv[n] = NULL;
	assert(n < MAX_ARGS);
}

/* The error of a perf script run that did not succeed (rc PL_OK: it ran). */
static enum pl_err script_failure(enum pl_err rc, struct pl_run_result *res, const char *path,
				  struct pl_error *err)
{
	char tail[256];

	if (rc != PL_OK)
		return rc;
	if (res->signal)
		return killed(res, path, err);
	error_tail(res, tail, sizeof(tail));
	return pl_fail(err, PL_ERR_EXTERNAL,
		       "check that the file is a complete perf.data that this perf reads",
		       "perf script on '%s' exited with status %d: %s", PL_ESC_MSG(path),
		       res->exit_status, tail);
}

/* The perf.data as the profile's one source, for provenance. */
static void add_source(struct pl_profile *p, const char *path, uint64_t size, const char sha[65],
		       const struct pl_run_result *res, const char *const *argv,
		       const struct pl_perf_data_opts *o)
{
	PL_GROW(p->sources, p->sources_cap, p->nsources + 1);
	struct pl_source *src = &p->sources[p->nsources++];
	memset(src, 0, sizeof(*src));
	src->path = pl_xstrdup(path);
	src->size = size;
	src->text_bytes = res->stdout_bytes;
	memcpy(src->sha256, sha, sizeof(src->sha256));
	src->format = PL_FMT_PERF_DATA;
	src->codec = "none";
	src->lines = res->stdout_lines;
	src->records = p->records_parsed;
	src->converted_by = command_text(argv, o);
}

enum pl_err coll_perf_data_read(struct pl_profile *p, const char *path,
			       const struct pl_perf_data_opts *o, struct pl_error *err)
{
	char fields[128], refused[32], sha[65];
	const char *argv[MAX_ARGS];
	struct pl_run_result res;
	struct pl_profile scratch;
	uint64_t size;
	enum pl_err rc;

	if (!o->perf_path)
		return pl_fail(err, PL_ERR_UNSUPPORTED,
			       "install linux-perf or start with --perf-path FILE",
			       "'%s' is perf.data and no perf was found", PL_ESC_MSG(path));
	if ((rc = hash_file(path, p->limits.max_input_bytes, sha, &size, err)))
		return rc;
	/* trace: a tracepoint's fields (sched:* ones feed the per-task
	 * scheduling table); perf ignores it for other events. */
	snprintf(fields, sizeof(fields), "comm,pid,tid,time,event,period,trace,ip,sym,symoff,dso");
	for (int attempt = 0;; attempt++) {
		script_argv(argv, path, fields, o);
		pl_profile_init(&scratch, &p->limits);
		scratch.keep_addrs = o->srcline;
		rc = run_once(&scratch, argv, path, o, &res, err);
		if (rc == PL_OK && res.exit_status == 0 && !res.signal)
			break;
		pl_profile_release(&scratch);
		/* A field the samples lack makes perf refuse the whole list. */
		if (rc == PL_OK && attempt < MAX_RETRIES && res.stderr_text &&
		    refused_field(res.stderr_text, refused, sizeof(refused)) &&
		    strcmp(refused, "ip") != 0 && strcmp(refused, "sym") != 0) {
			drop_field(fields, refused);
			pl_run_result_release(&res);
			continue;
		}
		rc = script_failure(rc, &res, path, err);
		pl_run_result_release(&res);
		return rc;
	}
	/* The scratch profile becomes the result: the caller's was empty. */
	pl_profile_release(p);
	*p = scratch;
	add_source(p, path, size, sha, &res, argv, o);
	pl_run_result_release(&res);
	read_build_ids(p, path, o);
	read_event_attrs(p, path, o);
	return PL_OK;
}
