/* main.c - perflens-mcp: startup flags, then the stdio or HTTP transport.
 *
 * What a session may do is fixed here, by whoever starts the server:
 * which folders tools may read (--allowed-root, default the working
 * folder), where artifacts go and whether anything may be written
 * (--artifact-root, --allow-writes), whether processes may be run or
 * profiles collected, and, for HTTP, the address and the bearer token.
 * Nothing a client sends can widen these.  The flags are tables
 * (server_options here; the limits, symbol and perf groups shared with
 * the CLI, base/options.h), and --help is printed from the same rows.
 *
 * Right after the options, while the process is small and has one
 * thread, main() starts the sandbox's zygote, which forks every tool
 * worker from then on (sandbox.h); without it workers are forked from
 * the server, only slower.
 */
#include "transports.h"
#include "worker.h"
#include "tools/lib/perf_data_read.h"
#include "collectors/perfcfg.h"
#include "collectors/known_chain.h"
#include "collectors/launch.h"
#include "collectors/agentlink/link.h"
#include "store/artifact.h"
#include "symbols/debuginfod.h"
#include "collectors/fleet/fleetcfg.h"
#include "fleet_pump.h"
#include "live_pump.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ROOTS 16

struct options {
	const char *roots[MAX_ROOTS];
	char root_bufs[MAX_ROOTS][PATH_MAX];
	size_t nroots;
	char artifact_root[PATH_MAX];
	bool have_artifact_root;
	const char *http;
	struct mcp_http_opts http_opts;
	struct mcp_config cfg;
	struct coll_link_cfg link;       /* the agent link (--agent-listen, ...) */
	char link_addr[64];
	const char *code_file;
};

/* A startup error: its text (pl_error_text) on stderr, and the exit code
 * of its code, as every PerfLens error leaves. */
static int fail_error(const struct pl_error *err)
{
	char *text = pl_error_text(err);

	fprintf(stderr, "perflens-mcp: %s\n", text);
	free(text);
	return pl_err_exit_code(err->code);
}

static int __attribute__((format(printf, 3, 4)))
fail(enum pl_err code, const char *hint, const char *fmt, ...)
{
	struct pl_error err;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err.text, sizeof(err.text), fmt, ap);
	va_end(ap);
	err.code = code;
	snprintf(err.hint, sizeof(err.hint), "%s", hint ? hint : "");
	return fail_error(&err);
}

/* In each worker before confinement: a worker that may use the network
 * fetches from debuginfod, and one that draws a picture uses libcairo;
 * once confined it could not load them.  Only those workers load them:
 * libcairo and what it pulls in are about 100 mappings, which every fork
 * of the zygote would copy and every worker's exit unmap. */
static void preload_for_worker(const struct sbx_policy *pol)
{
	if (pol->allow_network)
		pl_debuginfod_preload();
	if (pol->load_libraries)
		tool_load_picture_library();
}

/* The collection launcher (collectors/launch.h), forked before the zygote
 * and before anything is confined, when the flags allow collection: perf
 * and the program it measures run from it, as from the operator's shell.
 * Without it a collection runs confined, and says so. */
static enum pl_err start_launcher(const struct tool_ctx *ctx, struct pl_error *err)
{
	static struct coll_launcher_cfg cfg;
	int fd;
	pid_t pid;
	enum pl_err rc;

	if (!ctx->allow_collection || !ctx->allow_process_execution || !ctx->allow_writes ||
	    !ctx->artifact_root || !ctx->perf.path)
		return PL_OK;
	cfg.perf_path = ctx->perf.path;
	cfg.artifact_root = ctx->artifact_root;
	cfg.allowed_roots = ctx->allowed_roots;
	cfg.nroots = ctx->nroots;
	cfg.allow_pid_attach = ctx->allow_pid_attach;
	if ((rc = coll_launcher_start(&cfg, &fd, &pid, err)))
		return rc;
	sbx_set_launcher_fd(fd);
	return PL_OK;
}

/* The workers' job, with the final options, and the zygote (unless tools
 * run in-process); a zygote that fails to start only costs speed. */
static int start_workers(const struct options *o)
{
	struct pl_error err;

	if (o->cfg.no_sandbox)
		return 0;
	tool_preload_for_workers();
	if (mcp_worker_setup(&o->cfg.ctx, &err))
		return fail_error(&err);
	sbx_set_preconfine(preload_for_worker);  /* workers forked directly too */
	if ((err.code = start_launcher(&o->cfg.ctx, &err)))
		fprintf(stderr, "perflens-mcp: %s\n", err.text);
	pl_error_clear(&err);
	if (sbx_zygote_start(&err))
		fprintf(stderr, "perflens-mcp: %s (%s)\n", err.text, err.hint);
	return 0;
}

/* ------------------------------------------------------ the options */

static enum pl_err set_root(void *target, const struct pl_option *opt, const char *v,
			    struct pl_error *err)
{
	struct options *o = target;

	if (o->nroots == MAX_ROOTS || !realpath(v, o->root_bufs[o->nroots]))
		return pl_fail(err, PL_ERR_USAGE, "pass an existing folder (at most 16)",
			       "--%s '%s' does not exist", opt->name, v);
	o->roots[o->nroots] = o->root_bufs[o->nroots];
	o->nroots++;
	return PL_OK;
}

static enum pl_err set_artifact_root(void *target, const struct pl_option *opt, const char *v,
				     struct pl_error *err)
{
	struct options *o = target;

	if (mkdir(v, 0755) < 0 && errno != EEXIST)
		return pl_fail(err, PL_ERR_OUTPUT, "pass a folder you can write",
			       "cannot create --%s '%s': %s", opt->name, v, strerror(errno));
	if (!realpath(v, o->artifact_root))
		return pl_fail(err, PL_ERR_OUTPUT, "pass a folder you can write",
			       "cannot resolve --%s '%s': %s", opt->name, v, strerror(errno));
	o->have_artifact_root = true;
	return PL_OK;
}

static enum pl_err set_http(void *target, const struct pl_option *opt, const char *spec,
			    struct pl_error *err)
{
	struct options *o = target;
	const char *colon = strrchr(spec, ':'), *addr = spec;
	static char addr_buf[64];
	uint64_t port;
	size_t n;

	(void)opt;
	if (!colon || !pl_parse_u64(colon + 1, strlen(colon + 1), &port) || port > 65535)
		return pl_fail(err, PL_ERR_USAGE, "e.g. --http 127.0.0.1:8765",
			       "--http takes ADDR:PORT; got '%s'", spec);
	n = (size_t)(colon - spec);
	if (n >= 2 && spec[0] == '[' && spec[n - 1] == ']') {
		addr++;
		n -= 2;
	}
	if (n == 0 || n >= sizeof(addr_buf))
		return pl_fail(err, PL_ERR_USAGE, "e.g. --http 127.0.0.1:8765",
			       "--http takes ADDR:PORT; got '%s'", spec);
	memcpy(addr_buf, addr, n);
	addr_buf[n] = '\0';
	o->http_opts.bind_addr = addr_buf;
	o->http_opts.port = (unsigned)port;
	o->http = spec;
	return PL_OK;
}

static enum pl_err set_token(void *target, const struct pl_option *opt, const char *v,
			     struct pl_error *err)
{
	(void)opt;
	(void)err;
	((struct options *)target)->http_opts.token = v;
	return PL_OK;
}

static enum pl_err set_tool_timeout(void *target, const struct pl_option *opt, const char *v,
				    struct pl_error *err)
{
	uint64_t s;

	if (!pl_parse_u64(v, strlen(v), &s) || s < 1 || s > 3600)
		return pl_fail(err, PL_ERR_USAGE, "e.g. --tool-timeout 55",
			       "--%s takes 1 to 3600 seconds; got '%s'", opt->name, v);
	((struct options *)target)->cfg.tool_timeout_ms = (unsigned)s * 1000;
	return PL_OK;
}

static enum pl_err set_live_analysis(void *target, const struct pl_option *opt, const char *v,
				     struct pl_error *err)
{
	uint64_t ms;

	if (!pl_parse_u64(v, strlen(v), &ms) || (ms && ms < 200) || ms > 3600000)
		return pl_fail(err, PL_ERR_USAGE, "e.g. --live-analysis-interval-ms 2000",
			       "--%s takes 0 (off) or 200 to 3600000 ms; got '%s'", opt->name, v);
	((struct options *)target)->cfg.live_analysis_ms = (unsigned)ms;
	return PL_OK;
}

static enum pl_err set_agent_listen(void *target, const struct pl_option *opt, const char *spec,
				    struct pl_error *err)
{
	struct options *o = target;
	const char *colon = strrchr(spec, ':');
	uint64_t port;
	size_t n = colon ? (size_t)(colon - spec) : 0;

	if (!colon || n == 0 || n >= sizeof(o->link_addr) ||
	    !pl_parse_u64(colon + 1, strlen(colon + 1), &port) || port > 65535)
		return pl_fail(err, PL_ERR_USAGE, "e.g. --agent-listen 0.0.0.0:9999",
			       "--%s takes IPV4:PORT; got '%s'", opt->name, spec);
	memcpy(o->link_addr, spec, n);
	o->link_addr[n] = '\0';
	o->link.listen_addr = o->link_addr;
	o->link.listen_port = (unsigned)port;
	return PL_OK;
}

static enum pl_err set_code_file(void *target, const struct pl_option *opt, const char *v,
				 struct pl_error *err)
{
	(void)opt;
	(void)err;
	((struct options *)target)->code_file = v;
	return PL_OK;
}

static enum pl_err set_legacy(void *target, const struct pl_option *opt, const char *v,
			      struct pl_error *err)
{
	(void)opt;
	return coll_link_parse_legacy(&((struct options *)target)->link, v, err);
}

static enum pl_err set_send_timeout(void *target, const struct pl_option *opt, const char *v,
				    struct pl_error *err)
{
	struct options *o = target;
	uint64_t ms;

	if (!pl_parse_u64(v, strlen(v), &ms) || ms < 100 || ms > 600000)
		return pl_fail(err, PL_ERR_USAGE, "e.g. --agent-send-timeout-ms 30000",
			       "--%s takes 100 to 600000 ms; got '%s'", opt->name, v);
	o->link.send_timeout_ms = (unsigned)ms;
	if (o->link.ping_interval_ms > ms / 3 + 1)
		o->link.ping_interval_ms = (unsigned)(ms / 3 + 1);
	return PL_OK;
}

#define CTX_FLAG(name, field, help) \
	{name, NULL, help, pl_option_bool, offsetof(struct options, cfg.ctx.field)}

/* The server's own flags (the limits, symbol and perf flags are the
 * shared groups of option_groups()). */
static const struct pl_option server_options[] = {
	{"allowed-root", "DIR", "tools read only beneath DIR (repeatable; default: the working folder)",
	 set_root},
	{"artifact-root", "DIR", "where analyses and exports are written (created if missing)",
	 set_artifact_root},
	CTX_FLAG("allow-writes", allow_writes,
		 "let tools write under the artifact root (analyze and export need it)"),
	CTX_FLAG("allow-process-execution", allow_process_execution, "let tools run the allowlisted perf"),
	CTX_FLAG("allow-collection", allow_collection, "let collect_profile record (also needs the two above)"),
	CTX_FLAG("allow-pid-attach", allow_pid_attach,
		 "let collect_profile attach to running pids (with its phrase)"),
	{"agent-listen", "IPV4:PORT", "accept device agents that dial in (sessions under the artifact root)",
	 set_agent_listen},
	{"agent-pairing-code-file", "FILE", "the pairing code agents must prove (default: $PERFLENS_AGENT_CODE)",
	 set_code_file},
	{"agent-allow-legacy", "loopback|IPV4,...", "accept seed agents (code sent in clear) from these peers",
	 set_legacy},
	{"agent-text-chunks", NULL, "devices send perf script text, never perf.data chunks", pl_option_bool,
	 offsetof(struct options, link.text_chunks)},
	{"agent-send-timeout-ms", "MS", "the agent link's send bound (default 30000)", set_send_timeout},
	{"live-analysis-interval-ms", "MS", "analyze live device sessions again this often as chunks land, "
	 "for the viewer's Live page (default 0: only when asked)", set_live_analysis},
	CTX_FLAG("allow-device-control", allow_device_control,
		 "let tools connect to devices and start or stop captures (with their phrases)"),
	{"http", "ADDR:PORT", "serve http://ADDR:PORT/mcp (e.g. 127.0.0.1:8765, [::1]:8765)", set_http},
	{"token", "TOKEN", "bearer token for HTTP (default: $PERFLENS_TOKEN)", set_token},
	{"no-auth", NULL, "HTTP without a token; refused unless ADDR is loopback", pl_option_bool,
	 offsetof(struct options, http_opts.no_auth)},
	{"tool-timeout", "SECONDS", "wall-clock limit of one tool call (default 55)", set_tool_timeout},
#ifdef PL_TEST_HOOKS
	/* Test builds only: measure the sandbox's share. */
	{"no-sandbox", NULL, "run tools in-process (test builds only)", pl_option_bool,
	 offsetof(struct options, cfg.no_sandbox)},
#endif
	{NULL},
};

#define NGROUPS 5

static void option_groups(struct options *o, struct pl_option_group *g)
{
	g[0] = (struct pl_option_group){server_options, o};
	g[1] = (struct pl_option_group){pl_limit_options, &o->cfg.ctx.limits};
	g[2] = (struct pl_option_group){pl_sym_options, &o->cfg.ctx.sym};
	g[3] = (struct pl_option_group){pl_perf_options, &o->cfg.ctx.perf};
	g[4] = (struct pl_option_group){fleet_options, &o->cfg.ctx.fleet};
}

static void usage(FILE *out)
{
	fprintf(out, "usage: perflens-mcp [options]\n"
		"Serves PerfLens tools over MCP: stdio by default, Streamable HTTP with --http.\n\n");
	pl_option_help(out, server_options);
	pl_option_help(out, pl_limit_options);
	pl_option_help(out, pl_sym_options);
	pl_option_help(out, pl_perf_options);
	pl_option_help(out, fleet_options);
	fprintf(out, "  --version, --help\n");
}

static int parse_options(struct options *o, int argc, char **argv)
{
	struct pl_option_group groups[NGROUPS];
	struct pl_error err;

	option_groups(o, groups);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			exit(0);
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("perflens-mcp %s\n", PL_VERSION);
			exit(0);
		}
		switch (pl_options_take(groups, NGROUPS, argc, argv, &i, &err)) {
		case 1:
			continue;
		case 0:
			return fail(PL_ERR_USAGE, "see perflens-mcp --help", "unknown option '%s'", argv[i]);
		default:
			return fail_error(&err);
		}
	}
	return 0;
}

/* Defaults and the checks that need every flag. */
static int finish_options(struct options *o)
{
	if (o->nroots == 0) {
		if (!getcwd(o->root_bufs[0], PATH_MAX))
			return fail(PL_ERR_INPUT, "pass --allowed-root DIR", "cannot read the working folder: %s", strerror(errno));
		o->roots[0] = o->root_bufs[0];
		o->nroots = 1;
	}
	o->cfg.ctx.allowed_roots = o->roots;
	o->cfg.ctx.nroots = o->nroots;
	o->cfg.ctx.call = tool_call_name;
	pl_sym_cfg_finish(&o->cfg.ctx.sym);
	pl_perf_cfg_finish(&o->cfg.ctx.perf);
	o->cfg.ctx.artifact_root = o->have_artifact_root ? o->artifact_root : NULL;
	if (o->cfg.ctx.allow_writes && !o->have_artifact_root)
		return fail(PL_ERR_USAGE, "add --artifact-root DIR", "--allow-writes needs --artifact-root DIR");
	if (o->cfg.ctx.fleet.url) {
		struct pl_error err;
		if (fleet_cfg_finish(&o->cfg.ctx.fleet, &err))
			return fail_error(&err);
	}
	if (o->http && !o->http_opts.no_auth && !o->http_opts.token) {
		o->http_opts.token = getenv("PERFLENS_TOKEN");
		if (!o->http_opts.token || !*o->http_opts.token)
			return fail(PL_ERR_USAGE, "set PERFLENS_TOKEN or pass --token TOKEN (or --no-auth on loopback)", "HTTP needs a bearer token");
	}
	if (o->link.listen_addr || o->cfg.ctx.allow_device_control) {
		struct pl_error err;
		if (!o->have_artifact_root || !o->cfg.ctx.allow_writes)
			return fail(PL_ERR_USAGE, "add --artifact-root DIR --allow-writes",
				    "the agent link (--agent-listen, --allow-device-control) needs --artifact-root DIR and --allow-writes");
		if (coll_link_load_code(&o->link, o->code_file, &err))
			return fail_error(&err);
		if (o->link.listen_addr && !o->link.pairing_code[0])
			return fail(PL_ERR_USAGE, "pass --agent-pairing-code-file FILE or set PERFLENS_AGENT_CODE",
				    "--agent-listen needs a pairing code: no device is accepted unpaired");
		o->link.artifact_root = o->artifact_root;
		o->link.allow_control = o->cfg.ctx.allow_device_control;
		o->cfg.ctx.device_link = true;
	} else if (o->cfg.live_analysis_ms) {
		return fail(PL_ERR_USAGE, "add --agent-listen IPV4:PORT or --allow-device-control",
			    "--live-analysis-interval-ms analyzes device sessions: it needs the agent link");
	} else if (o->code_file || o->link.nlegacy || o->link.legacy_loopback) {
		return fail(PL_ERR_USAGE, "add --agent-listen IPV4:PORT or --allow-device-control",
			    "the agent flags need the agent link");
	}
	fprintf(stderr, "perflens-mcp %s: reading under", PL_VERSION);
	for (size_t i = 0; i < o->nroots; i++)
		fprintf(stderr, " %s", o->roots[i]);
	fprintf(stderr, "; artifacts %s%s\n", o->have_artifact_root ? o->artifact_root : "(none)",
		o->cfg.ctx.allow_writes ? " (writable)" : " (read-only)");
	return 0;
}

/* Resolve every library symbol at startup, once, rather than in each
 * worker: a worker is a fresh fork of the zygote, so lazy binding would
 * redo its symbol lookups, and write (copy) its GOT pages, on every
 * call.  The dynamic linker reads LD_BIND_NOW only when a program
 * starts, so the server runs itself again with it (same pid, same
 * arguments) and then drops it from the environment that perf and other
 * children inherit.  If the exec fails, lazy binding is merely slower. */
static void bind_now(char **argv)
{
	if (getenv("PERFLENS_BOUND")) {
		unsetenv("PERFLENS_BOUND");
		unsetenv("LD_BIND_NOW");
		return;
	}
	if (getenv("LD_BIND_NOW"))
		return;  /* already: the user's own choice stays */
	setenv("LD_BIND_NOW", "1", 1);
	setenv("PERFLENS_BOUND", "1", 1);
	execv("/proc/self/exe", argv);
	unsetenv("LD_BIND_NOW");
	unsetenv("PERFLENS_BOUND");
}

/* The options before the command line: limits, the worker's time,
 * answer size and memory, the HTTP transport's bounds. */
static struct options *default_options(void)
{
	struct options *o = pl_xcalloc(1, sizeof(*o));

	pl_limits_default(&o->cfg.ctx.limits);
	coll_link_cfg_init(&o->link);
	o->cfg.tool_timeout_ms = 55000;
	o->cfg.max_result_bytes = 4u << 20;
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	/* ASan and TSan reserve terabytes of address space; no RLIMIT_AS under them. */
	o->cfg.worker_memory = 8ULL << 30;
#endif
	o->http_opts.max_body = 4u << 20;
	o->http_opts.max_sessions = 256;
	return o;
}

int main(int argc, char **argv)
{
	struct options *o;
	struct mcp_server s;
	int rc;

	/* The call-graph probe's workload: this binary, re-run by perf. */
	if ((rc = coll_known_chain_main(argc, argv)) >= 0)
		return rc;
	bind_now(argv);
	o = default_options();
	if ((rc = parse_options(o, argc, argv)) || (rc = finish_options(o))) {
		free(o);
		return rc;
	}
	/* Workers lose CAP_SYSLOG, and with it the kernel's symbol addresses:
	 * perf and the native perf.data reader get a copy taken now. */
	if (!o->cfg.no_sandbox && pl_perf_cfg_snapshot_kallsyms(&o->cfg.ctx.perf))
		tool_kallsyms_index(o->cfg.ctx.perf.kallsyms_path);
	/* Once the options are final (workers inherit them, see worker.h),
	 * and before the transport starts: the zygote, and so every worker,
	 * then maps nothing that only the server needs (libmicrohttpd and
	 * GnuTLS are loaded by mcp_run_http, after this fork). */
	if ((rc = start_workers(o))) {
		pl_perf_cfg_remove_kallsyms(&o->cfg.ctx.perf);
		free(o);
		return rc;
	}
	/* The definitions and schema patterns the server checks every call
	 * against, now rather than on the first call; after the zygote's
	 * fork, which then copies none of them (workers never check). */
	tool_schemas_prepare();
	/* The link's threads start after the zygote's fork (sandbox.h). */
	if (o->cfg.ctx.device_link) {
		struct pl_error err;
		if (coll_link_start(&o->link, &err)) {
			sbx_zygote_stop();
			pl_perf_cfg_remove_kallsyms(&o->cfg.ctx.perf);
			rc = fail_error(&err);
			free(o);
			return rc;
		}
	}
	mcp_fleet_pump_start(&o->cfg);
	mcp_live_pump_start(&o->cfg);
	mcp_server_init(&s, &o->cfg);
	rc = o->http ? mcp_run_http(&s, &o->http_opts) : mcp_run_stdio(&s, 4u << 20);
	mcp_server_release(&s);
	coll_link_stop();
	sbx_zygote_stop();
	pl_perf_cfg_remove_kallsyms(&o->cfg.ctx.perf);
	free(o);
	return rc;
}
