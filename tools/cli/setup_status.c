/* setup_status.c - `perflens status --project DIR` (agent_setup.h).
 *
 * Read-only: it reads DIR/.perflens/setup.json and, per client set up
 * there, says whether each recorded file is still as init wrote it, runs
 * the recorded server with --version (through the bounded runner) and
 * then with its recorded arguments for one MCP `initialize` over stdio
 * (its own pipes, a deadline, the process group killed at the end),
 * compares the installed Skill with the copy embedded in this binary,
 * and reads from the arguments what the server may do.  Every problem
 * comes with its fix.  A server whose artifact root does not exist yet
 * would create it on start: it is then started with a temporary one, so
 * status writes nothing in the project.
 */
#include "agent_setup_int.h"
#include "collectors/run.h"
#include "base/version.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STATUS_USAGE "perflens status --project DIR [--format table|json]"
#define VERSION_TIMEOUT_MS 10000
#define INITIALIZE_TIMEOUT_MS 15000
#define MAX_ANSWER (1u << 20)

/* A string of the record, "" when it is not one (the record is read
 * from the project: a number where a string belongs must not crash). */
static const char *sv(json_t *v)
{
	const char *s = json_string_value(v);

	return s ? s : "";
}

static const char *rs(json_t *o, const char *key)
{
	return sv(json_object_get(o, key));
}

static void problem(json_t *problems, const char *what, const char *fix)
{
	json_array_append_new(problems, json_pack("{s:s,s:s}", "problem", what, "fix", fix));
}

/* ------------------------------------------------------ --version */

static enum pl_err first_line(void *arg, const char *line, size_t len, struct pl_error *err)
{
	struct pl_buf *b = arg;

	(void)err;
	if (b->len == 0 && len)
		pl_buf_add(b, line, len < 200 ? len : 200);
	return PL_OK;
}

/* SERVER --version's first line (new), or NULL. */
static char *server_version(const char *server)
{
	const char *argv[] = {server, "--version", NULL};
	struct pl_buf b = {0};
	struct pl_run_opts o = {.argv = argv, .timeout_ms = VERSION_TIMEOUT_MS, .max_stdout = 65536,
				.on_line = first_line, .arg = &b};
	struct pl_run_result res;
	struct pl_error err;
	bool ok = pl_run(&o, &res, &err) == PL_OK && !res.signal && res.exit_status == 0 && b.len;

	pl_run_result_release(&res);
	if (!ok) {
		pl_buf_release(&b);
		return NULL;
	}
	pl_buf_addc(&b, '\0');
	return b.data;
}

/* ---------------------------------------------------- initialize */

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

/* Start `argv` with pipes on stdin and stdout, stderr to /dev/null, in its
 * own process group; the child's pid, or -1. */
static pid_t start_server(char *const *argv, int *to, int *from)
{
	int in[2], out[2];
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]), close(in[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		setpgid(0, 0);
		dup2(in[0], 0);
		dup2(out[1], 1);
		if (null >= 0)
			dup2(null, 2);
		signal(SIGPIPE, SIG_DFL);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (pid < 0) {
		close(in[1]), close(out[0]);
		return -1;
	}
	*to = in[1];
	*from = out[0];
	return pid;
}

/* Read one line from `fd` into `b` until `deadline`; false on timeout,
 * EOF or a line over MAX_ANSWER. */
static bool read_line(int fd, struct pl_buf *b, double deadline)
{
	char buf[65536];

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		double left = deadline - now_ms();
		ssize_t n;

		if (b->len && memchr(b->data, '\n', b->len))
			return true;
		if (left <= 0 || b->len > MAX_ANSWER || poll(&p, 1, (int)left + 1) <= 0)
			return false;
		if ((n = read(fd, buf, sizeof(buf))) <= 0)
			return false;
		pl_buf_add(b, buf, (size_t)n);
	}
}

/* Close stdin (the server leaves at EOF), give it 3 s, then kill its
 * group; reap it. */
static void stop_server(pid_t pid, int to, int from)
{
	double until = now_ms() + 3000;
	int st;

	close(to);
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now_ms() > until) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		usleep(20000);
	}
	close(from);
}

/* The argv: the server, its recorded args, the artifact root replaced by
 * `tmp_root` when that is not NULL. */
static char **server_argv(const char *server, json_t *args, const char *tmp_root)
{
	size_t n = json_array_size(args), i;
	char **argv = pl_xcalloc(n + 2, sizeof(*argv));
	json_t *a;

	argv[0] = (char *)server;
	json_array_foreach(args, i, a) {
		argv[i + 1] = (char *)sv(a);
		if (tmp_root && i > 0 && strcmp(sv(json_array_get(args, i - 1)), "--artifact-root") == 0)
			argv[i + 1] = (char *)tmp_root;
	}
	return argv;
}

/* The recorded artifact root when it does not exist yet, else NULL. */
static const char *missing_artifact_root(json_t *args)
{
	size_t i;
	json_t *a;
	struct stat st;

	json_array_foreach(args, i, a)
		if (strcmp(sv(a), "--artifact-root") == 0 && i + 1 < json_array_size(args)) {
			const char *root = sv(json_array_get(args, i + 1));
			return stat(root, &st) == 0 ? NULL : root;
		}
	return NULL;
}

/* One MCP initialize with the recorded arguments, within the bound. */
static json_t *initialize_check(const char *server, json_t *args)
{
	char tmp[] = "/tmp/perflens-status.XXXXXX";
	const char *missing = missing_artifact_root(args);
	json_t *req = json_pack("{s:s,s:i,s:s,s:{s:s,s:{},s:{s:s,s:s}}}", "jsonrpc", "2.0", "id", 1,
				"method", "initialize", "params", "protocolVersion", "2025-11-25",
				"capabilities", "clientInfo", "name", "perflens-status", "version", PL_VERSION);
	char *text = json_dumps(req, JSON_COMPACT), **argv;
	struct pl_buf line = {0};
	double t0 = now_ms();
	int to = -1, from = -1;
	json_t *answer = NULL, *r;
	const char *why = NULL;
	pid_t pid;

	json_decref(req);
	if (missing && !mkdtemp(tmp))
		missing = NULL;
	argv = server_argv(server, args, missing ? tmp : NULL);
	pid = start_server(argv, &to, &from);
	if (pid < 0) {
		why = "could not be started";
	} else {
		signal(SIGPIPE, SIG_IGN);
		if (write(to, text, strlen(text)) < 0 || write(to, "\n", 1) < 0)
			why = "closed its input before the request";
		else if (!read_line(from, &line, t0 + INITIALIZE_TIMEOUT_MS))
			why = "gave no answer line within 15 s";
		else if (!(answer = json_loadb(line.data, (size_t)((char *)memchr(line.data, '\n', line.len) - line.data), 0, NULL)))
			why = "answered something that is not JSON";
		stop_server(pid, to, from);
	}
	r = json_object_get(answer, "result");
	if (!why && (!json_is_object(r) || strcmp(rs(json_object_get(r, "serverInfo"), "name"), "perflens-mcp") != 0))
		why = "answered initialize without a perflens-mcp result";
	if (missing)
		nftw(tmp, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	r = json_pack("{s:b,s:s?,s:s?,s:I,s:b,s:s?}", "answered", why == NULL,
		      "protocol_version", why ? NULL : rs(r, "protocolVersion"),
		      "server_version", why ? NULL : rs(json_object_get(r, "serverInfo"), "version"),
		      "ms", (json_int_t)(now_ms() - t0), "temporary_artifact_root", missing != NULL, "error", why);
	json_decref(answer);
	pl_buf_release(&line);
	free(argv);
	free(text);
	return r;
}

/* ------------------------------------------------------------ Skill */

/* The installed Skill against the embedded copy. */
static json_t *skill_check(const char *proj, const char *client)
{
	json_t *differs = json_array(), *missing = json_array(), *r;
	const char *rel, *text;
	char path[2 * PATH_MAX];
	size_t n = 0;

	for (size_t i = 0; setup_skill_file(i, &rel, &text); i++, n++) {
		FILE *f;
		char *buf;
		size_t len = strlen(text), got;

		snprintf(path, sizeof(path), "%s/%s/%s/%s", proj, setup_skills_dir(client), PL_SKILL_NAME, rel);
		if (!(f = fopen(path, "rb"))) {
			json_array_append_new(missing, json_string(rel));
			continue;
		}
		buf = pl_xmalloc(len + 2);
		got = fread(buf, 1, len + 1, f);
		fclose(f);
		if (got != len || memcmp(buf, text, len) != 0)
			json_array_append_new(differs, json_string(rel));
		free(buf);
	}
	r = json_pack("{s:s,s:O,s:O}", "state",
		      json_array_size(missing) == n ? "missing" :
		      json_array_size(missing) || json_array_size(differs) ? "differs" : "matches",
		      "differing", differs, "missing", missing);
	json_decref(differs);
	json_decref(missing);
	return r;
}

/* ----------------------------------------------------------- clients */

static bool has_arg(json_t *args, const char *flag)
{
	size_t i;
	json_t *a;

	json_array_foreach(args, i, a)
		if (strcmp(sv(a), flag) == 0)
			return true;
	return false;
}

/* Will status run this recorded server?  The record is a file in the
 * project, which a cloned repository may carry: status runs only what
 * init records (an absolute path to a perflens-mcp), never, say, /bin/sh
 * with arguments from the record. */
static bool runnable_server(const char *server)
{
	const char *base = strrchr(server, '/');

	return server[0] == '/' && base && strcmp(base + 1, SETUP_MCP_BINARY) == 0;
}

static json_t *client_status(const char *proj, const char *client, json_t *crec)
{
	const char *server = rs(crec, "server");
	json_t *args = json_object_get(crec, "args"), *files = json_array(), *problems = json_array();
	json_t *row, *init = NULL, *skill = skill_check(proj, client), *out;
	char *version = NULL, fix[PATH_MAX + 200];
	bool runs = access(server, X_OK) == 0, ours = runnable_server(server);
	size_t i;

	json_array_foreach(json_object_get(crec, "files"), i, row) {
		const char *state = setup_row_state(proj, row);

		json_array_append_new(files, json_pack("{s:s,s:s}", "path", rs(row, "path"), "state", state));
		if (strcmp(rs(row, "kind"), "file") != 0 && strcmp(state, "as_written") != 0)
			problem(problems, strcmp(state, "missing") == 0 ? "the registration init wrote is gone" :
				"the registration was edited since init wrote it",
				"keep yours, or undo the edit (perflens detach then perflens init writes it afresh)");
	}
	if (runs && ours && (version = server_version(server)))
		init = initialize_check(server, args);
	if (runs && !ours) {
		problem(problems, "the recorded server is not an absolute path to " SETUP_MCP_BINARY ": status does not run it",
			"check " SETUP_RECORD_REL " (a copied project may carry one), then perflens init --project DIR --update --server /path/to/" SETUP_MCP_BINARY);
	} else if (!runs) {
		snprintf(fix, sizeof(fix), "rebuild or reinstall perflens-mcp at '%s', or point the project at the one you have: perflens init --project DIR --update --server /path/to/perflens-mcp",
			 server);
		problem(problems, "the recorded server binary is not there (moved or removed)", fix);
	} else if (!version) {
		problem(problems, "the recorded server does not run with --version", "rebuild it, or perflens init --update --server PATH");
	} else if (!json_is_true(json_object_get(init, "answered"))) {
		problem(problems, "the server does not answer an MCP initialize", "run the recorded command by hand to see its error on stderr");
	}
	if (strcmp(rs(skill, "state"), "matches") != 0)
		problem(problems, strcmp(rs(skill, "state"), "missing") == 0 ? "the Skill is not installed" :
			"the installed Skill differs from this perflens's copy",
			"perflens init --project DIR --update (only files still as written are rewritten)");
	out = json_pack("{s:s,s:{s:s,s:b,s:s?,s:o*},s:o,s:o,s:{s:b,s:b,s:b},s:O,s:o}",
		"client", client,
		"server", "path", server, "exists", runs, "version", version, "initialize", init,
		"files", files, "skill", skill,
		"allows", "writes", has_arg(args, "--allow-writes"),
		"process_execution", has_arg(args, "--allow-process-execution"),
		"collection", has_arg(args, "--allow-collection"),
		"args", args, "problems", problems);
	free(version);
	return out;
}

static void status_table(json_t *r, FILE *out)
{
	size_t i, k;
	json_t *c, *p;

	fprintf(out, "project %s: %s\n", rs(r, "project"),
		!json_is_true(json_object_get(r, "set_up")) ? "not set up (perflens init --project DIR)" :
		json_is_true(json_object_get(r, "ok")) ? "ok" : "problems");
	json_array_foreach(json_object_get(r, "clients"), i, c) {
		json_t *s = json_object_get(c, "server"), *in = json_object_get(s, "initialize"),
		       *al = json_object_get(c, "allows");

		fprintf(out, "%s:\n  server     %s (%s)\n", rs(c, "client"), rs(s, "path"),
			!json_is_true(json_object_get(s, "exists")) ? "missing" :
			json_is_true(json_object_get(in, "answered")) ? "answers initialize" : "does not answer");
		fprintf(out, "  skill      %s\n  allows     writes %s, process execution %s, collection %s\n",
			rs(json_object_get(c, "skill"), "state"),
			json_is_true(json_object_get(al, "writes")) ? "yes" : "no",
			json_is_true(json_object_get(al, "process_execution")) ? "yes" : "no",
			json_is_true(json_object_get(al, "collection")) ? "yes" : "no");
		json_array_foreach(json_object_get(c, "problems"), k, p)
			fprintf(out, "  problem    %s\n    fix      %s\n", rs(p, "problem"), rs(p, "fix"));
	}
}

static void status_usage(FILE *out)
{
	fprintf(out,
		"usage: " STATUS_USAGE "\n\n"
		"What perflens init set up in DIR (read-only): per client, whether the files it\n"
		"wrote are still as written, whether the recorded server runs (--version) and\n"
		"answers an MCP initialize within 15 s, whether the Skill matches this perflens's\n"
		"copy, and what the server's flags allow (writes, process execution, collection).\n"
		"Each problem comes with its fix.\n\n"
		"  --project DIR        the project root\n"
		"  --format table|json  a table or JSON (default)\n");
}

int cli_status(int argc, char **argv)
{
	const char *project = NULL;
	const struct setup_flag flags[] = {{"project", &project, NULL}, {NULL, NULL, NULL}};
	char proj[PATH_MAX];
	struct pl_error err;
	json_t *record, *clients = json_array(), *crec;
	const char *name;
	bool table = false, help, exists, ok = true;

	pl_error_clear(&err);
	if (setup_parse_flags(argc, argv, "usage: " STATUS_USAGE, flags, &table, &help, &err) ||
	    (!help && !project && pl_fail(&err, PL_ERR_USAGE, "usage: " STATUS_USAGE, "'--project' is required")) ||
	    (!help && setup_resolve_dir("project", project, "pass an existing folder: " STATUS_USAGE, proj, &err))) {
		json_decref(clients);
		return cli_fail(&err);
	}
	if (help) {
		json_decref(clients);
		status_usage(stdout);
		return 0;
	}
	if (!(record = setup_load_record(proj, &exists, &err))) {
		json_decref(clients);
		return cli_fail(&err);
	}
	json_object_foreach(json_object_get(record, "clients"), name, crec) {
		json_t *c = client_status(proj, name, crec);

		ok &= json_array_size(json_object_get(c, "problems")) == 0;
		json_array_append_new(clients, c);
	}
	json_decref(record);
	return setup_emit(json_pack("{s:s,s:b,s:b,s:o}", "project", proj, "set_up", exists && json_array_size(clients),
				    "ok", ok && exists && json_array_size(clients), "clients", clients),
			  table, status_table);
}
