/* policy.c - the confinement of a tools/call worker (see policy.h).
 *
 * Every worker reads the allowed roots, the artifact root and the files
 * the operator named for symbols; writes the artifact root only with
 * --allow-writes.  A tool whose row says it runs perf also gets perf and
 * what perf reads (with --allow-process-execution), or else what the
 * native perf.data reader reads (system modules, the kernel's build-id),
 * and the server's kallsyms copy either way; one that may use the
 * network gets it when a debuginfod server is configured; a collection
 * tool (with --allow-collection) gets its connection to the collection
 * launcher (which runs perf and the program outside the sandbox), /proc
 * and the tracing folders, and a deadline past its timeout_arg; only the
 * capabilities probe, which runs perf on this binary's known-depth
 * workload itself, gets perf events too.
 */
#include "policy.h"
#include "collectors/perfcfg.h"

#include <string.h>
#include <unistd.h>

/* Append the paths of `list` that exist; the new count. */
static size_t add_existing(const char *const *list, const char **reads, size_t n)
{
	for (size_t i = 0; list[i] && n < MCP_POLICY_MAX_READS; i++)
		if (access(list[i], F_OK) == 0)
			reads[n++] = list[i];
	return n;
}

/* A collection worker: its connection to the launcher, which runs perf
 * and the program outside the sandbox (collectors/launch.h), /proc and
 * the tracing folders, and a deadline that covers the call's own
 * timeout.  Only the capabilities probe runs perf itself (on this
 * binary's known chain), so only it keeps perf's events and capabilities
 * and may exec its workload. */
static size_t collection_policy(const struct mcp_config *cfg, const struct tool_def *t,
				json_t *args, struct mcp_policy *p, size_t n)
{
	json_t *timeout = t->timeout_arg ? json_object_get(args, t->timeout_arg) : NULL;
	uint64_t ms;

	p->pol.use_launcher = true;
	/* The call-graph probe: perf runs this binary as its known chain,
	 * and perf script reads its symbols and CFI. */
	if (t->needs & TOOL_PROBES_CHAINS) {
		p->pol.allow_perf_events = true;
		if (cfg->ctx.perf.probe_workload && n < MCP_POLICY_MAX_READS) {
			p->pol.exec_target = cfg->ctx.perf.probe_workload;
			p->reads[n++] = cfg->ctx.perf.probe_workload;
		}
	}
	n = add_existing(pl_perf_collection_reads, p->reads, n);
	/* The tool stops at the call's timeout; the worker gets time beyond
	 * it to write and answer. */
	if (json_integer_value(timeout) > 0) {
		ms = (uint64_t)json_integer_value(timeout) * 1000 + 30000;
		if (ms > p->pol.timeout_ms) {
			p->pol.timeout_ms = (uint32_t)ms;
			p->pol.max_cpu_seconds = ms / 1000 + 2;
		}
	}
	return n;
}

/* The allowed roots, the artifact root, the files the operator named for
 * symbols and the system's debug folder; the count. */
static size_t common_reads(const struct tool_ctx *ctx, const char **reads)
{
	const struct pl_sym_cfg *sym = &ctx->sym;
	size_t n = 0, cap = MCP_POLICY_MAX_READS;

	for (size_t i = 0; i < ctx->nroots && n < cap; i++)
		reads[n++] = ctx->allowed_roots[i];
	if (ctx->artifact_root && n < cap)
		reads[n++] = ctx->artifact_root;
	for (size_t i = 0; i < sym->nbinaries && n < cap; i++)
		reads[n++] = sym->binaries[i];
	for (size_t i = 0; i < sym->nmodule_maps && n < cap; i++)
		reads[n++] = sym->module_maps[i].to;
	if (sym->sysroot && n < cap)
		reads[n++] = sym->sysroot;
	if (n < cap)
		reads[n++] = "/usr/lib/debug";
	return n;
}

void mcp_policy_for(const struct mcp_config *cfg, const struct tool_def *t, json_t *args,
		    struct mcp_policy *p)
{
	const struct tool_ctx *ctx = &cfg->ctx;
	struct sbx_policy *pol = &p->pol;
	size_t n = common_reads(ctx, p->reads);

	memset(pol, 0, sizeof(*pol));
	if ((t->needs & TOOL_RUNS_PERF) && ctx->allow_process_execution && ctx->perf.path) {
		pol->exec_path = ctx->perf.path;
		n = add_existing(pl_perf_reads, p->reads, n);
	} else if (t->needs & TOOL_RUNS_PERF) {
		/* The native perf.data reader: no process, only reads. */
		n = add_existing(pl_perf_data_reads, p->reads, n);
	}
	if ((t->needs & TOOL_RUNS_PERF) && ctx->perf.kallsyms_path && n < MCP_POLICY_MAX_READS)
		p->reads[n++] = ctx->perf.kallsyms_path;
	if (pol->exec_path && ctx->perf.buildid_dir && n < MCP_POLICY_MAX_READS)
		p->reads[n++] = ctx->perf.buildid_dir;
	pol->allow_network = ((t->needs & TOOL_USES_NETWORK) && ctx->sym.debuginfod_urls) ||
			     ((t->needs & TOOL_FLEET) && ctx->fleet.url);
	pol->write_root = ctx->allow_writes ? ctx->artifact_root : NULL;
	pol->max_address_space = cfg->worker_memory;
	pol->max_cpu_seconds = cfg->tool_timeout_ms / 1000 + 2;
	pol->max_open_files = 256;
	pol->max_file_size = 8ULL << 30;
	pol->timeout_ms = cfg->tool_timeout_ms;
	pol->max_result_bytes = cfg->max_result_bytes;
	if ((t->needs & TOOL_COLLECTS) && pol->exec_path && ctx->allow_collection)
		n = collection_policy(cfg, t, args, p, n);
	pol->load_libraries = tool_call_draws(t, args);
	pol->read_roots = p->reads;
	pol->nread_roots = n;
}
