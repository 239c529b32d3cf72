/* doctor.c - `perflens doctor` (agent_setup.h): what this machine offers
 * for profiling, one line per fact, each with what to do about it.
 *
 * Facts are measured, not assumed: perf is found as the tools find it
 * (--perf-path or the fixed list) and asked its version; the paranoid
 * level is read and explained for this user (root or CAP_PERFMON lifts
 * it); hardware events are counted with perf stat (collectors'
 * coll_probe_event, as the capabilities tool does); the call-graph modes
 * are measured on the known-depth chain (collectors/callgraph_probe.h,
 * the same code as the capabilities tool); the sandbox is tried by
 * running one confined worker (sandbox.h), which says whether seccomp and
 * which Landlock ABI held; debuginfod comes from the symbol flags and
 * DEBUGINFOD_URLS; libc's debug information is looked for by its build-id
 * where the symbolizer looks.  Scratch recordings go to a private
 * temporary folder, removed at the end.
 */
#include "agent_setup_int.h"
#include "collectors/callgraph_probe.h"
#include "collectors/capabilities.h"
#include "collectors/collect.h"
#include "collectors/perfcfg.h"
#include "collectors/procfs.h"
#include "symbols/elfinfo.h"
#include "symbols/symcfg.h"
#include "sandbox/sandbox.h"

#include <ftw.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DOCTOR_USAGE "perflens doctor [--json] [--format table|json] [--perf-path FILE]"
#define PROBE_TIMEOUT_MS 20000

static const char *rs(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* One line: check, status (ok, warn, fail, info), value, detail, fix. */
static void line(json_t *lines, const char *check, const char *status, json_t *value,
		 const char *detail, const char *fix)
{
	json_array_append_new(lines, json_pack("{s:s,s:s,s:o,s:s,s:s?}", "check", check, "status", status,
					       "value", value ? value : json_null(), "detail", detail,
					       "fix", fix));
}

/* ------------------------------------------------------------- perf */

static void check_perf(json_t *lines, const struct pl_perf_cfg *perf)
{
	char *version = perf->path ? pl_perf_version(perf->path) : NULL;
	char detail[600];

	if (!perf->path) {
		line(lines, "perf", "fail", NULL, "no perf found (looked for /usr/bin/perf, /usr/local/bin/perf, /usr/sbin/perf)",
		     "apt-get install linux-perf (Debian), or pass --perf-path FILE");
	} else if (!version) {
		snprintf(detail, sizeof(detail), "%s does not run 'perf version'", perf->path);
		line(lines, "perf", "fail", json_string(perf->path), detail,
		     "install the perf that matches this kernel (linux-perf), or pass --perf-path FILE");
	} else {
		snprintf(detail, sizeof(detail), "%s: %s", perf->path, version);
		line(lines, "perf", "ok", json_string(version), detail, NULL);
	}
	free(version);
}

/* True when this process has capability `bit` in its effective set. */
static bool has_cap(int bit)
{
	char buf[4096];
	const char *eff = coll_read_text("/proc/self/status", buf, sizeof(buf)) > 0 ? strstr(buf, "\nCapEff:") : NULL;

	return eff && (strtoull(eff + 8, NULL, 16) >> bit) & 1;
}

/* What level `level` lets an unprivileged user do. */
static const char *paranoid_meaning(int level)
{
	if (level >= 3)
		return "no profiling at all without CAP_PERFMON (Debian's level 3)";
	if (level == 2)
		return "their own processes, user space only (no kernel frames, no system-wide)";
	if (level == 1)
		return "their own processes with kernel frames, no system-wide";
	if (level == 0)
		return "their own processes with kernel frames, and system-wide CPU events";
	return "everything, raw tracepoints included";
}

static void check_paranoid(json_t *lines)
{
	bool root = geteuid() == 0, perfmon = has_cap(38) || has_cap(21);
	char detail[500], text[32];
	int level = 0;

	if (coll_read_text("/proc/sys/kernel/perf_event_paranoid", text, sizeof(text)) <= 0 ||
	    sscanf(text, "%d", &level) != 1) {
		line(lines, "perf_event_paranoid", "warn", NULL, "cannot read /proc/sys/kernel/perf_event_paranoid",
		     "check that /proc is mounted");
		return;
	}
	if (root || perfmon) {
		snprintf(detail, sizeof(detail), "level %d (unprivileged users: %s); this user is %s: no limit (kernel frames, system-wide, any process)",
			 level, paranoid_meaning(level), root ? "root" : "privileged (CAP_PERFMON or CAP_SYS_ADMIN)");
		line(lines, "perf_event_paranoid", "ok", json_integer(level), detail, NULL);
		return;
	}
	snprintf(detail, sizeof(detail), "level %d: this unprivileged user gets %s", level, paranoid_meaning(level));
	line(lines, "perf_event_paranoid", level >= 3 ? "fail" : "ok", json_integer(level), detail,
	     level >= 3 ? "sudo sysctl kernel.perf_event_paranoid=2 (your own processes, user space), or grant CAP_PERFMON" :
	     level == 2 ? "for kernel frames: sudo sysctl kernel.perf_event_paranoid=1" : NULL);
}

/* tracefs: where, or the exact command that mounts it. */
static void check_tracefs(json_t *lines)
{
	json_t *t = coll_tracefs_json();
	char detail[700];

	if (json_is_true(json_object_get(t, "mounted"))) {
		snprintf(detail, sizeof(detail), "mounted at %s (%s): collect_profile can record tracepoints (off_cpu, sched, lock)",
			 rs(t, "path"), rs(t, "via"));
		line(lines, "tracefs", "ok", json_string(rs(t, "path")), detail, NULL);
	} else {
		line(lines, "tracefs", "warn", NULL,
		     "tracefs is not mounted: collect_profile refuses off_cpu, sched and lock until it is (record and stat need no tracepoints)",
		     "as root: " COLL_TRACEFS_MOUNT);
	}
	json_decref(t);
}

static void check_events(json_t *lines, const char *perf, const char *scratch)
{
	json_t *cycles, *instr;
	bool hw;

	if (!perf) {
		line(lines, "hardware_events", "fail", NULL, "no perf to ask", "install linux-perf first");
		return;
	}
	cycles = coll_probe_event(perf, scratch, "cycles");
	instr = coll_probe_event(perf, scratch, "instructions");
	hw = strcmp(rs(cycles, "count"), "counted") == 0 && strcmp(rs(instr, "count"), "counted") == 0;
	line(lines, "hardware_events", hw ? "ok" : "warn",
	     json_pack("{s:s,s:s,s:s}", "cycles", rs(cycles, "count"), "instructions", rs(instr, "count"),
		       "cycles_record", rs(cycles, "record")),
	     hw ? "hardware events count here (cycles, instructions): IPC and cycle sampling work" :
	     "software events only: cycles and instructions do not count here (a VM without a virtual PMU)",
	     hw ? NULL : "sample cpu-clock and count task-clock (what PerfLens does by default); for IPC run on bare metal or a VM with a virtual PMU");
	json_decref(cycles);
	json_decref(instr);
}

static void check_call_graphs(json_t *lines, const struct pl_perf_cfg *perf, const char *scratch)
{
	json_t *graphs, *g;
	size_t i;

	if (!perf->path) {
		line(lines, "call_graphs", "fail", NULL, "no perf to probe with", "install linux-perf first");
		return;
	}
	graphs = coll_probe_call_graphs(perf->path, perf->probe_workload, scratch, PROBE_TIMEOUT_MS);
	json_array_foreach(graphs, i, g) {
		char check[32];
		const char *st = rs(g, "status"), *fix = NULL;

		snprintf(check, sizeof(check), "call_graph_%s", rs(g, "mode"));
		if (strcmp(st, "real_chains") == 0 && json_is_true(json_object_get(g, "needs_frame_pointers")))
			fix = "build what you profile with -fno-omit-frame-pointer, or collect with call_graph=\"dwarf\"";
		else if (strcmp(st, "real_chains") != 0)
			fix = strcmp(rs(g, "mode"), "dwarf") == 0 ? "use call_graph=\"fp\" with code built with -fno-omit-frame-pointer" :
			      "use another call_graph mode (see the other lines)";
		line(lines, check, strcmp(st, "real_chains") == 0 ? "ok" : strcmp(rs(g, "mode"), "lbr") == 0 ? "info" : "warn",
		     json_pack("{s:s,s:O,s:O,s:O}", "status", st, "expected_depth", json_object_get(g, "expected_depth"),
			       "with_frame_pointers", json_object_get(json_object_get(g, "with_frame_pointers"), "depth_found"),
			       "without_frame_pointers", json_object_get(json_object_get(g, "without_frame_pointers"), "depth_found")),
		     rs(g, "detail"), fix);
	}
	json_decref(graphs);
}

/* ---------------------------------------------------------- sandbox */

static int sandbox_probe(void *arg, int out_fd)
{
	(void)arg;
	(void)out_fd;
	return 0;
}

static void check_sandbox(json_t *lines)
{
	struct sbx_policy pol = {.timeout_ms = 10000, .max_open_files = 64};
	struct sbx_result res = {0};
	struct pl_error err;
	char detail[400];
	bool ran = sbx_run(&pol, sandbox_probe, NULL, &res, &err) == PL_OK;

	if (!ran || res.outcome != SBX_OK) {
		snprintf(detail, sizeof(detail), "a confined worker did not run: %s", ran ? res.detail : err.text);
		line(lines, "sandbox", "fail", NULL, detail,
		     "the server refuses tool calls it cannot confine: use a kernel with seccomp (CONFIG_SECCOMP_FILTER)");
	} else {
		snprintf(detail, sizeof(detail), "a confined worker ran: seccomp filter applied; Landlock %s",
			 res.landlock_abi ? "enforced" : "not offered by this kernel (only seccomp and rlimits hold)");
		line(lines, "sandbox", res.landlock_abi ? "ok" : "warn",
		     json_pack("{s:b,s:i}", "seccomp", true, "landlock_abi", res.landlock_abi), detail,
		     res.landlock_abi ? NULL : "boot a kernel with Landlock (5.13+, lsm=landlock,...) so file access is confined too");
	}
	sbx_result_release(&res);
}

/* -------------------------------------------------------- symbols */

static void check_debuginfod(json_t *lines, const struct pl_sym_cfg *sym)
{
	char detail[600];

	if (sym->debuginfod_urls && *sym->debuginfod_urls) {
		snprintf(detail, sizeof(detail), "debug files missing here are fetched from: %.500s", sym->debuginfod_urls);
		line(lines, "debuginfod", "ok", json_string(sym->debuginfod_urls), detail, NULL);
	} else {
		line(lines, "debuginfod", "info", NULL,
		     "no debuginfod server configured: only local debug files are used",
		     "export DEBUGINFOD_URLS=https://debuginfod.debian.net (or pass --debuginfod URL) for libraries without local debug info");
	}
}

/* dl_iterate_phdr: the path of the loaded libc. */
static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name, *base = strrchr(name, '/');

	(void)size;
	if (base && strncmp(base + 1, "libc.so", 7) == 0) {
		snprintf(arg, PATH_MAX, "%s", name);
		return 1;
	}
	return 0;
}

static void check_libc_debug(json_t *lines)
{
	char libc[PATH_MAX] = "", found[PATH_MAX], detail[2 * PATH_MAX + 300];
	struct pl_elf_facts f;
	struct pl_error err;
	enum pl_debug_source src;

	dl_iterate_phdr(find_libc, libc);
	if (!*libc || pl_elf_read_facts(libc, &f, &err)) {
		line(lines, "libc_debug_info", "warn", NULL, "cannot find or read this process's libc", "none");
		return;
	}
	src = f.has_debug_info ? PL_DEBUG_EMBEDDED :
		pl_elf_find_debug_file(libc, f.build_id, f.has_debuglink ? f.debuglink : NULL,
				       f.debuglink_crc, NULL, found, sizeof(found), NULL);
	if (src == PL_DEBUG_NONE) {
		snprintf(detail, sizeof(detail), "%s (build-id %s) has no debug info here: libc frames get names but no lines or inline frames",
			 libc, *f.build_id ? f.build_id : "none");
		line(lines, "libc_debug_info", "warn", json_null(), detail,
		     "apt-get install libc6-dbg (Debian), or configure debuginfod");
	} else {
		snprintf(detail, sizeof(detail), "%s: debug info %s", libc,
			 src == PL_DEBUG_EMBEDDED ? "embedded" : found);
		line(lines, "libc_debug_info", "ok", json_string(pl_debug_source_name(src)), detail, NULL);
	}
}

/* ------------------------------------------------------------ main */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

static void doctor_table(json_t *r, FILE *out)
{
	size_t i;
	json_t *l;

	json_array_foreach(json_object_get(r, "checks"), i, l) {
		fprintf(out, "%-5s %-20s %s\n", rs(l, "status"), rs(l, "check"), rs(l, "detail"));
		if (*rs(l, "fix"))
			fprintf(out, "      %-20s do: %s\n", "", rs(l, "fix"));
	}
}

static void doctor_usage(FILE *out)
{
	fprintf(out,
		"usage: " DOCTOR_USAGE "\n\n"
		"What this machine offers for profiling, measured, one line each with what to do:\n"
		"perf and its version, perf_event_paranoid and what it allows this user, hardware\n"
		"events or software only, which call-graph modes recover a chain of known depth\n"
		"(fp, dwarf, lbr: the capabilities tool's probe), seccomp and Landlock for the\n"
		"sandbox (one confined worker is run), debuginfod, libc's debug info.\n\n"
		"  --json, --format json  the same as data (default: a table)\n"
		"  --perf-path FILE       the perf to check (default: as the tools find it)\n");
}

int cli_doctor(int argc, char **argv)
{
	const char *perf_path = NULL;
	bool json_out = false, table = true, help;
	const struct setup_flag flags[] = {
		{"json", NULL, &json_out}, {"perf-path", &perf_path, NULL}, {NULL, NULL, NULL},
	};
	struct pl_perf_cfg perf = {0};
	struct pl_sym_cfg sym = {0};
	struct pl_error err;
	char scratch[] = "/tmp/perflens-doctor.XXXXXX";
	json_t *lines;

	pl_error_clear(&err);
	if (setup_parse_flags(argc, argv, "usage: " DOCTOR_USAGE, flags, &table, &help, &err))
		return cli_fail(&err);
	if (help) {
		doctor_usage(stdout);
		return 0;
	}
	if (perf_path) {
		const struct pl_option *o = pl_option_find(pl_perf_options, "perf-path");

		if (o->set(&perf, o, perf_path, &err))
			return cli_fail(&err);
	}
	pl_perf_cfg_finish(&perf);
	pl_sym_cfg_finish(&sym);
	if (!mkdtemp(scratch)) {
		pl_fail(&err, PL_ERR_OUTPUT, "check that /tmp is writable", "cannot create a scratch folder");
		return cli_fail(&err);
	}
	lines = json_array();
	check_perf(lines, &perf);
	check_paranoid(lines);
	check_tracefs(lines);
	check_events(lines, perf.path, scratch);
	check_call_graphs(lines, &perf, scratch);
	check_sandbox(lines);
	check_debuginfod(lines, &sym);
	check_libc_debug(lines);
	nftw(scratch, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	return setup_emit(json_pack("{s:s?,s:o}", "perf_path", perf.path, "checks", lines),
			  table && !json_out, doctor_table);
}
