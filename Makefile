# Makefile - builds PerfLens, its tests and its benchmarks.
#
#   make setup      install missing Debian packages (root), else print the line
#                   (the list lives in tests/setup.sh)
#   make            build the binaries into $(BUILD) (default: build/)
#   make demo       the evidence workflow on the bundled real captures (tests/demo.sh)
#   make test       unit tests (check) and integration tests, normal build
#   make test-san   the same under ASan+UBSan (into build-san/), less the
#                   integration scripts that run no sanitized code
#   make check      both of the above: what CI and the README run
#   make check-fast unit tests and a smoke test of each surface (the edit loop)
#   make fuzz       a short pass of each libFuzzer harness of tests/fuzz/
#                   (FUZZ_SECONDS each, FUZZ_JOBS at a time; clang)
#   make fuzz-long  the same at nice 19, for a longer FUZZ_SECONDS (600)
#   make test-tsan  unit tests and the threaded integration tests under TSan
#   make bench      speed benchmarks against peers (prints ratios; not tests)
#   make agent      the static device agent, x86_64 (musl-gcc + Debian's libzstd.a)
#   make agent-cross the same for aarch64 (aarch64-linux-gnu-gcc -static)
#   make install    binaries, man pages (help2man), the Skill and the docs under
#                   $(DESTDIR)$(PREFIX) (default /usr/local); make uninstall
#                   removes exactly those files
#
# Out-of-tree builds: `make BUILD=/tmp/x` keeps parallel builds apart.

BUILD ?= build
SAN ?=
CC ?= cc
# `make` alone builds everything (the agent's rules come first in this file).
.DEFAULT_GOAL := all
# Compile jobs of the builds `make check` starts itself, and integration
# scripts run at once (tests/integration/run.sh -j: most of them wait on
# perf, servers and timeouts more than they compute).
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
IT_JOBS ?= 3

PKGS := jansson libzstd libdw libelf libseccomp zlib nettle libprotobuf-c
# libiberty (Debian libiberty-dev, a static library without a .pc file):
# cplus_demangle for C++, Rust and D names, as binutils and perf demangle.
DEMANGLE_LIBS := -liberty
# Headers only: tools/core/symbols/debuginfod.c dlopen()s libcurl when a fetch needs it,
# tools/core/export/flamepng.c libcairo for the first picture.
HDR_PKGS := libcurl cairo

OPT ?= -O2
CFLAGS ?= $(OPT) -g
PL_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers \
	-D_GNU_SOURCE -Itools/core -I. $(shell pkg-config --cflags $(PKGS) $(HDR_PKGS) 2>/dev/null)
PL_LDLIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) $(DEMANGLE_LIBS) -lm
PL_CFLAGS += $(EXTRA_CFLAGS)
ifeq ($(SAN),1)
PL_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
PL_LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(TSAN),1)
PL_CFLAGS += -fsanitize=thread
PL_LDFLAGS += -fsanitize=thread
endif

# The engine's subsystems, lowest first; see LAYERS below for what each may use.
ENGINE := base profile perfdata symbols store export evidence
CORE_SRC := $(sort $(foreach d,$(ENGINE),$(wildcard tools/core/$(d)/*.c)))
COLLECTOR_SRC := $(sort $(wildcard collectors/*.c collectors/agentlink/*.c collectors/fleet/*.c))
TOOL_SRC := $(sort $(wildcard tools/*.c tools/lib/*.c))
SANDBOX_SRC := $(sort $(wildcard sandbox/*.c))
LIB_SRC := $(CORE_SRC) $(COLLECTOR_SRC) $(TOOL_SRC) $(SANDBOX_SRC)
SCHEMAS := $(sort $(wildcard schemas/*.json schemas/tools/*.json schemas/rules/*.json schemas/test/*.json)) $(sort $(wildcard skill/perflens-performance-analysis/*.md skill/perflens-performance-analysis/*/*.md))
# The web viewer's page, style and scripts, served by perflens-mcp --http.
SCHEMAS += $(sort $(wildcard mcp-server/viewer/*.html mcp-server/viewer/*.css mcp-server/viewer/*.js))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/schemas.o $(BUILD)/obj/gen/pprof.pb-c.o
CLI_SRC := $(sort $(wildcard tools/cli/*.c))
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/*.c tests/unit/*/*.c))
# The agent's pure parts (JSON, SHA-256/HMAC, framing, commands, pairing)
# are unit-tested against jansson and nettle, built with the host compiler.
AGENT_UNIT_SRC := agent/json.c agent/sha256.c agent/wire.c agent/cmd.c agent/pair.c
UNIT_OBJ := $(UNIT_SRC:%.c=$(BUILD)/obj/%.o) $(AGENT_UNIT_SRC:%.c=$(BUILD)/obj/%.o)

# Layers: what the files of each folder may include ("FOLDER: ALLOWED...").
# A quoted include names its folder ("symbols/symbolize.h"); a bare name is
# a header of the including file's own folder.  tools/build/check-layers.sh reads
# this table and fails the build on any other include, so a dependency that
# points up (engine -> tools, tools/lib -> the handlers, tools -> mcp-server,
# anything -> sandbox internals) is refused.  The README's layout table says the same.
define LAYERS
base:
profile: base
perfdata: base profile
symbols: base profile
store: base profile
export: base profile
evidence: base profile symbols store export
collectors: base profile
agent: collectors/health.h collectors/procfs.h collectors/agentlink/frame.h
collectors/agentlink: base collectors/collect.h collectors/fleet/store.h
collectors/fleet: base profile
sandbox: base
tools/lib: tools/registry.h base profile perfdata symbols store export evidence collectors collectors/agentlink collectors/fleet sandbox/sandbox.h
tools: tools/lib base profile perfdata symbols store export evidence collectors collectors/agentlink collectors/fleet sandbox/sandbox.h
tools/cli: tools base profile perfdata symbols store export evidence collectors collectors/agentlink collectors/fleet sandbox/sandbox.h
mcp-server: tools tools/lib/perf_data_read.h base profile symbols store collectors/perfcfg.h collectors/known_chain.h collectors/launch.h collectors/agentlink/link.h collectors/fleet/fleetcfg.h sandbox/sandbox.h
tests: *
bench: *
endef
export LAYERS

LIB := $(BUILD)/libperflens.a
MCP_SRC := $(sort $(wildcard mcp-server/*.c))
MCP_OBJ := $(MCP_SRC:%.c=$(BUILD)/obj/%.o)
BINS := $(BUILD)/perflens $(BUILD)/perflens-mcp


# The device agent (agent/): one static binary that links only libc and
# zstd, so it includes nothing of the server but collectors/health.h and
# collectors/procfs.h, the /proc readers it shares with the server (see
# LAYERS).  x86_64 with musl-gcc and Debian's libzstd.a; aarch64 with the
# Debian cross compiler (static glibc: no NSS, numeric addresses) and
# libzstd-dev:arm64.  musl-gcc must not see /usr/include (glibc's headers),
# so zstd's two headers are linked into a folder of their own.  A missing
# toolchain skips with the reason.
AGENT_SRC := $(sort $(wildcard agent/*.c)) collectors/health.c collectors/procfs.c
AGENT_VERSION := $(shell sed -n 's/^\#define PL_VERSION "\(.*\)"/\1/p' tools/core/base/version.h)
AGENT_CFLAGS := -std=gnu11 -Os -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers \
	-D_GNU_SOURCE -I. -I$(BUILD)/agent-inc -DAGENT_VERSION='"$(AGENT_VERSION)"' \
	-fstack-protector-strong -D_FORTIFY_SOURCE=2 -Wformat=2 -ffunction-sections -fdata-sections
AGENT_LDFLAGS := -static -Wl,-z,relro,-z,now -Wl,--gc-sections -s
AGENT_BIN := $(BUILD)/perflens-agent
AGENT_CROSS_BIN := $(BUILD)/perflens-agent-aarch64
MUSL_CC := $(shell command -v musl-gcc 2>/dev/null)
ZSTD_A := /usr/lib/x86_64-linux-gnu/libzstd.a
CROSS_CC := $(shell command -v aarch64-linux-gnu-gcc 2>/dev/null)
ZSTD_A_ARM := /usr/lib/aarch64-linux-gnu/libzstd.a
AGENT_WHY := $(if $(MUSL_CC),$(if $(wildcard $(ZSTD_A)),,$(ZSTD_A) is missing (apt-get install libzstd-dev)),musl-gcc is missing (apt-get install musl-tools))
AGENT_CROSS_WHY := $(if $(CROSS_CC),$(if $(wildcard $(ZSTD_A_ARM)),,$(ZSTD_A_ARM) is missing (dpkg --add-architecture arm64; apt-get install libzstd-dev:arm64)),aarch64-linux-gnu-gcc is missing (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross))
# The TSan build's agent (make test-tsan): musl has no ThreadSanitizer, so
# it is glibc's gcc -fsanitize=thread, dynamic, with the shared libzstd
# (the agent's collector, metrics and receive threads are what it checks).
ifeq ($(TSAN),1)
MUSL_CC := $(CC)
ZSTD_A := -lzstd
AGENT_WHY :=
AGENT_CFLAGS += -fsanitize=thread -g
AGENT_LDFLAGS := -fsanitize=thread
endif

.PHONY: agent agent-cross
agent: $(if $(AGENT_WHY),agent-skip,$(AGENT_BIN))
agent-cross: $(if $(AGENT_CROSS_WHY),agent-cross-skip,$(AGENT_CROSS_BIN))
agent-skip:
	@echo "make agent: skipped: $(AGENT_WHY)"
agent-cross-skip:
	@echo "make agent-cross: skipped: $(AGENT_CROSS_WHY)"

$(BUILD)/agent-inc/zstd.h:
	@mkdir -p $(dir $@)
	ln -sf /usr/include/zstd.h /usr/include/zstd_errors.h $(dir $@)

$(BUILD)/agent-obj/x86_64/%.o: %.c $(BUILD)/agent-inc/zstd.h
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(AGENT_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/agent-obj/aarch64/%.o: %.c $(BUILD)/agent-inc/zstd.h
	@mkdir -p $(dir $@)
	$(CROSS_CC) $(AGENT_CFLAGS) -MMD -MP -c $< -o $@

$(AGENT_BIN): $(AGENT_SRC:%.c=$(BUILD)/agent-obj/x86_64/%.o)
	$(MUSL_CC) $(AGENT_LDFLAGS) -o $@ $^ $(ZSTD_A) -lpthread

$(AGENT_CROSS_BIN): $(AGENT_SRC:%.c=$(BUILD)/agent-obj/aarch64/%.o)
	$(CROSS_CC) $(AGENT_LDFLAGS) -o $@ $^ $(ZSTD_A_ARM) -lpthread

.PHONY: FORCE font-atlas node-setup all check-layers print-layers setup demo test test-unit test-integration test-san check bench clean \
	test-fuzz-replay fuzz fuzz-long fuzz-build test-tsan install uninstall man

all: $(BUILD)/layers.ok $(BINS) agent $(BUILD)/cycles.ok

# The layering check: cheap, so it runs on every build (see LAYERS).
$(BUILD)/layers.ok: $(LIB_SRC) $(CLI_SRC) $(MCP_SRC) $(UNIT_SRC) $(AGENT_SRC) $(wildcard tools/core/*/*.h tools/*.h tools/lib/*.h tools/cli/*.h collectors/*.h collectors/agentlink/*.h collectors/fleet/*.h mcp-server/*.h sandbox/*.h agent/*.h) tools/build/check-layers.sh Makefile
	@mkdir -p $(BUILD)
	@sh tools/build/check-layers.sh && touch $@

# No two source files may need each other (tools/build/check-cycles.sh reads
# the objects' symbol tables); tools/build/cycles.allow lists the groups left.
$(BUILD)/cycles.ok: $(BINS) $(if $(AGENT_WHY),,$(AGENT_BIN)) tools/build/check-cycles.sh tools/build/cycles.allow
	@sh tools/build/check-cycles.sh $(BUILD)/obj
	@if [ -d $(BUILD)/agent-obj/x86_64 ]; then sh tools/build/check-cycles.sh $(BUILD)/agent-obj/x86_64; fi
	@touch $@

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(PL_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# schemas/ is embedded so that one binary carries its tool definitions.
$(BUILD)/gen/schemas.c: $(SCHEMAS) tools/build/gen-schemas.sh
	@mkdir -p $(dir $@)
	sh tools/build/gen-schemas.sh $(SCHEMAS) > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/gen/schemas.o: $(BUILD)/gen/schemas.c
	@mkdir -p $(dir $@)
	$(CC) $(PL_CFLAGS) $(CFLAGS) -c $< -o $@

# pprof's profile.proto, as C from protoc-c (tools/core/profile/pprof.proto);
# its users include <pprof.pb-c.h> from BUILD/gen.
$(BUILD)/gen/pprof.pb-c.c: tools/core/profile/pprof.proto
	@mkdir -p $(dir $@)
	protoc-c --c_out=$(BUILD)/gen --proto_path=tools/core/profile pprof.proto
$(BUILD)/gen/pprof.pb-c.h: $(BUILD)/gen/pprof.pb-c.c

$(BUILD)/obj/gen/pprof.pb-c.o: $(BUILD)/gen/pprof.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -Werror -Wextra,$(PL_CFLAGS)) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/tools/core/profile/parse_pprof.o $(BUILD)/obj/tools/core/export/pprof.o: $(BUILD)/gen/pprof.pb-c.h
PL_CFLAGS += -I$(BUILD)/gen

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/perflens: $(CLI_OBJ) $(LIB)
	$(CC) $(PL_LDFLAGS) $(LDFLAGS) -o $@ $^ $(PL_LDLIBS)

# libmicrohttpd: its header only; http.c dlopen()s the library (see there).
$(BUILD)/obj/mcp-server/%.o: PL_CFLAGS += $(shell pkg-config --cflags libmicrohttpd)

$(BUILD)/perflens-mcp: $(MCP_OBJ) $(LIB)
	$(CC) $(PL_LDFLAGS) $(LDFLAGS) -Wl,-z,now -o $@ $^ $(PL_LDLIBS) -lpthread

# The known-depth chains of the call-graph probe (collectors/known_chain.h):
# one with frame pointers, one without, whatever the build's own flags
# (these come after them on the command line).
$(BUILD)/obj/collectors/known_chain_fp.o: CFLAGS += -fno-omit-frame-pointer
$(BUILD)/obj/collectors/known_chain_nofp.o: CFLAGS += -fomit-frame-pointer

# The unit-test runner finds every `Suite *suite_NAME(void)` by itself.
$(BUILD)/suites.h: $(UNIT_SRC)
	@mkdir -p $(BUILD)
	@sed -n 's/^Suite \*\(suite_[a-z0-9_]*\)(void)$$/PL_SUITE(\1)/p' $(UNIT_SRC) > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/tests/unit/main.o: $(BUILD)/suites.h
$(BUILD)/obj/tests/unit/%.o: PL_CFLAGS += -I$(BUILD) -Itests/unit $(shell pkg-config --cflags check)

$(BUILD)/test_unit: $(UNIT_OBJ) $(LIB)
	$(CC) $(PL_LDFLAGS) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs check) $(PL_LDLIBS)

# The PNG pictures' glyphs (tools/build/fontgen/gen-font.c says why they are committed).
font-atlas:
	$(CC) tools/build/fontgen/gen-font.c $(shell pkg-config --cflags --libs cairo) -lm -o $(BUILD)/gen-font
	$(BUILD)/gen-font > tools/core/export/font_atlas.c

check-layers:
	@sh tools/build/check-layers.sh && echo 'check-layers: every include follows LAYERS'

print-layers:
	@printf '%s\n' "$$LAYERS"

setup:
	@sh tests/setup.sh

demo: all
	@sh tests/demo.sh $(BUILD)

test-unit: $(BUILD)/test_unit
	$(BUILD)/test_unit

# A server built with test hooks (the test_fault tool, --no-sandbox), for
# the sandbox failure tests only; normal builds never contain it.  Only the
# three files that read PL_TEST_HOOKS are compiled again; the rest are the
# normal build's objects (named first, the faults objects win over the
# library's copies of registry.o).
FAULT_SRC := mcp-server/main.c tools/registry.c tools/test_fault.c
FAULT_OBJ := $(FAULT_SRC:%.c=$(BUILD)/faults/obj/%.o)
$(BUILD)/faults/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(PL_CFLAGS) $(CFLAGS) -DPL_TEST_HOOKS -MMD -MP -c $< -o $@
$(BUILD)/faults/obj/mcp-server/%.o: PL_CFLAGS += $(shell pkg-config --cflags libmicrohttpd)

$(BUILD)/faults/perflens-mcp: $(FAULT_OBJ) $(filter-out $(BUILD)/obj/mcp-server/main.o,$(MCP_OBJ)) $(LIB)
	$(CC) $(PL_LDFLAGS) $(LDFLAGS) -Wl,-z,now -o $@ $^ $(PL_LDLIBS) -lpthread

FORCE:

# Node 22 and the MCP test clients come from the npm registry (cached in
# ~/.cache/perflens-node22), and so do the claude and codex CLIs (cached in
# ~/.cache/perflens-agents); without them those tests skip and say why.
node-setup:
	@sh tests/mcp/setup-node.sh >/dev/null || echo "make: Node 22 setup failed; the MCP client tests will skip" >&2
	@sh tests/mcp/setup-agents.sh >/dev/null || echo "make: claude/codex setup failed; the agent setup tests will skip" >&2

test-integration: all agent-cross $(BUILD)/faults/perflens-mcp node-setup
	@BUILD=$(BUILD) SAN=$(SAN) sh tests/integration/run.sh -j $(IT_JOBS)

test:
	+@$(MAKE) --no-print-directory -j$(JOBS) test-build
	+@$(MAKE) --no-print-directory -j1 test-unit test-fuzz-replay test-integration

# Sanitized code runs two to three times slower: the unit tests' timeouts
# are scaled for it (check reads CK_TIMEOUT_MULTIPLIER from the environment).
# The integration scripts tagged `# run.sh: no-asan` run no sanitized code
# (the static agent, shell and Python checks of files) and are left out.
test-san:
	+@$(MAKE) --no-print-directory BUILD=build-san SAN=1 OPT=-O1 CK_TIMEOUT_MULTIPLIER=4 test

# Every test: what CI and the README run.  Each part can be run alone;
# each prints the seconds it took when it ends.
CHECK_PARTS := test test-san fuzz test-tsan
check:
	@for part in $(CHECK_PARTS); do \
		start=$$(date +%s); \
		$(MAKE) --no-print-directory $$part || exit 1; \
		echo "make check: $$part took $$(( $$(date +%s) - start )) s"; \
	done

# The edit loop: unit tests and one quick script for each surface (CLI,
# MCP over stdio and HTTP, the viewer, the agent link, the sandbox), in a
# few minutes.  CI runs `make check`.
FAST_TESTS ?= test_cli.sh test_mcp_e2e.sh test_mcp_sandbox.sh test_viewer.sh test_agent_link.sh test_perf_data_native.sh
check-fast:
	+@$(MAKE) --no-print-directory -j$(JOBS) all $(BUILD)/test_unit $(BUILD)/faults/perflens-mcp
	$(BUILD)/test_unit
	@BUILD=$(BUILD) ONLY="$(FAST_TESTS)" sh tests/integration/run.sh -j $(IT_JOBS)

# ThreadSanitizer (gcc's, which defines __SANITIZE_THREAD__ for the
# sandbox's address-space guard): the unit tests (the input hash thread, the
# stack-table writer thread) and the integration tests whose binaries run
# threads (the HTTP transport's, compare_profiles' pair, the hashing of big
# inputs, the agent link's listener, servicer, reader and request threads
# against a Python agent and against our agent, and the agent's own
# collector, metrics and receive threads, built with glibc's TSan: see
# AGENT above), in $(TSAN_BUILD).  A report stops the binary with exit 66,
# which fails its test; suppressions, each justified, are in tests/tsan.supp.
TSAN_BUILD ?= build-tsan
TSAN_TESTS ?= test_mcp_protocol test_mcp_e2e test_perf_data_native test_mcp_bad_input test_compare test_cli test_hotspot_index test_device_session \
	test_agent.sh test_agent_server.sh test_agent_link.sh test_agent_live.sh
# die_after_fork=0: the zygote forks workers from the threaded server and
# a worker may start its own threads (TSan stops that by default; it cannot
# follow the parent's threads across fork, which the worker never touches);
# check's per-test timeouts are 10 times longer (TSan runs 5-15 times slower).
TSAN_ENV = CK_TIMEOUT_MULTIPLIER=10 TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 die_after_fork=0 suppressions=$(CURDIR)/tests/tsan.supp"
test-tsan:
	+@$(MAKE) --no-print-directory -j$(JOBS) BUILD=$(TSAN_BUILD) OPT=-O1 TSAN=1 \
		all $(TSAN_BUILD)/test_unit $(TSAN_BUILD)/faults/perflens-mcp
	$(TSAN_ENV) $(TSAN_BUILD)/test_unit
	@$(TSAN_ENV) PERFLENS_TSAN=1 BUILD=$(TSAN_BUILD) ONLY="$(TSAN_TESTS)" sh tests/integration/run.sh -j 2

bench: all
	@BUILD=$(BUILD) sh bench/run.sh

clean:
	rm -rf build build-san build-tsan

# ---------------------------------------------------------------- fuzzing
# Every tests/fuzz/fuzz_NAME.c is a harness (LLVMFuzzerTestOneInput) with
# its corpus in tests/fuzz/corpus/NAME/; nothing here names them.  A
# harness links fuzz_common.c and libperflens.a; more objects come from
# its own comment lines (see tests/fuzz/README.md):
#   // fuzz-link: DIR_OR_FILE.c...   every .c of DIR without a main(), or that file
#   // fuzz-libs: -lpthread ...      extra libraries
#   // fuzz-flags: -max_len=65536    extra libFuzzer options for `make fuzz`
# `make test` replays every corpus through tests/fuzz/replay.c (any
# compiler); `make fuzz` builds them with clang and libFuzzer into
# $(BUILD)/fuzz/ and fuzzes each for FUZZ_SECONDS, new inputs going to
# $(BUILD)/fuzz-corpus/NAME (the committed corpus stays as it is).
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_NAMES := $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%)
FUZZ_SECONDS ?= 15
FUZZ_CC ?= clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
fuzz_tag = $(shell sed -n 's|^// fuzz-$(2):||p' tests/fuzz/fuzz_$(1).c)
fuzz_link_src = $(sort $(foreach d,$(call fuzz_tag,$(1),link),$(if $(filter %.c,$(d)),$(d),$(shell grep -L '^int main[[:space:]]*.int' $(d)/*.c))))
fuzz_objs = $(BUILD)/obj/tests/fuzz/fuzz_$(1).o $(BUILD)/obj/tests/fuzz/common.o \
	$(patsubst %.c,$(BUILD)/obj/%.o,$(call fuzz_link_src,$(1)))
FUZZ_REPLAYS := $(FUZZ_NAMES:%=$(BUILD)/fuzz-replay/%)
FUZZ_BINS := $(FUZZ_NAMES:%=$(BUILD)/fuzzers/%)

define FUZZ_RULES
$(BUILD)/fuzz-replay/$(1): $(call fuzz_objs,$(1)) $(BUILD)/obj/tests/fuzz/replay.o $(LIB)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(PL_LDFLAGS) $$(LDFLAGS) -o $$@ $$^ $$(PL_LDLIBS) $(call fuzz_tag,$(1),libs)
$(BUILD)/fuzzers/$(1): $(call fuzz_objs,$(1)) $(LIB)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(PL_LDFLAGS) $$(LDFLAGS) -fsanitize=fuzzer -o $$@ $$^ $$(PL_LDLIBS) $(call fuzz_tag,$(1),libs)
endef
$(foreach n,$(FUZZ_NAMES),$(eval $(call FUZZ_RULES,$(n))))

$(BUILD)/obj/tests/fuzz/%.o: PL_CFLAGS += $(shell pkg-config --cflags libmicrohttpd)

# The regression run: every corpus once, no fuzzing.
test-fuzz-replay: $(FUZZ_REPLAYS)
	@for n in $(FUZZ_NAMES); do \
		$(BUILD)/fuzz-replay/$$n tests/fuzz/corpus/$$n || { echo "fuzz replay: $$n failed" >&2; exit 1; }; \
	done

# Everything the tests of one flavour run, so that it is built once, at
# -j$(JOBS), before any test starts (here, after FUZZ_REPLAYS is known).
test-build: all agent-cross $(BUILD)/faults/perflens-mcp $(BUILD)/test_unit $(FUZZ_REPLAYS)

# The instrumented build: the whole tree again with clang, libFuzzer's
# coverage and ASan+UBSan, in $(BUILD)/fuzz.
FUZZ_MAKE = $(MAKE) --no-print-directory BUILD=$(BUILD)/fuzz CC=$(FUZZ_CC) OPT=-O1 \
	EXTRA_CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" PL_LDFLAGS="$(FUZZ_SAN)"
fuzz-build:
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz: $(FUZZ_CC) is missing (apt-get install clang)" >&2; exit 2; }
	+@$(FUZZ_MAKE) -j$(JOBS) $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzzers/%)

# Each harness for FUZZ_SECONDS, FUZZ_JOBS at a time (tests/fuzz/run.sh);
# a crash fails the run and leaves its input in $(BUILD)/fuzz-crashes/ (add
# it to the corpus once fixed).  `make fuzz` is CI's short pass of every
# harness; `make fuzz-long` the long runs, at nice 19.  FUZZ_ONLY=NAME
# fuzzes one harness.
FUZZ_ONLY ?= $(FUZZ_NAMES)
FUZZ_NICE ?= 10
FUZZ_SECONDS_LONG ?= 600
FUZZ_JOBS ?= $(JOBS)
fuzz: fuzz-build
	@BUILD=$(BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_NICE=$(FUZZ_NICE) FUZZ_JOBS=$(FUZZ_JOBS) \
		sh tests/fuzz/run.sh $(FUZZ_ONLY)

fuzz-long:
	@$(MAKE) --no-print-directory fuzz FUZZ_NICE=19 FUZZ_SECONDS=$(FUZZ_SECONDS_LONG)

# ------------------------------------------------------------ install
# Where `make install` puts things (GNU conventions; DESTDIR for staging).
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(PREFIX)/bin
DATADIR = $(PREFIX)/share/perflens
DOCDIR = $(PREFIX)/share/doc/perflens
MANDIR = $(PREFIX)/share/man/man1
SKILL_FILES := $(sort $(wildcard skill/perflens-performance-analysis/*.md skill/perflens-performance-analysis/*/*.md))
DOC_FILES := README.md $(sort $(wildcard docs/*.md docs/*.example))
MANS := $(BUILD)/man/perflens.1 $(BUILD)/man/perflens-mcp.1
PL_VERSION_TEXT = $(shell sed -n 's/^#define PL_VERSION "\(.*\)"/\1/p' tools/core/base/version.h)

# Man pages from the binaries' own --help (Debian's help2man).
$(BUILD)/man/%.1: $(BUILD)/%
	@mkdir -p $(dir $@)
	@command -v help2man >/dev/null || { echo "make: help2man is missing (apt-get install help2man, or make setup)" >&2; exit 1; }
	help2man --no-info --no-discard-stderr --version-string="$(PL_VERSION_TEXT)" \
		--name "$(if $(filter perflens-mcp,$*),PerfLens MCP server: performance-analysis tools for coding agents,PerfLens: evidence-first Linux performance analysis)" \
		--output $@.tmp $(abspath $<) && mv $@.tmp $@

man: $(MANS)

install: all man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR) $(DESTDIR)$(DOCDIR)
	install -m 755 $(BINS) $(wildcard $(AGENT_BIN)) $(DESTDIR)$(BINDIR)/
	install -m 644 $(MANS) $(DESTDIR)$(MANDIR)/
	install -m 644 $(DOC_FILES) $(DESTDIR)$(DOCDIR)/
	for f in $(SKILL_FILES); do \
		install -d $(DESTDIR)$(DATADIR)/$$(dirname $$f) && install -m 644 $$f $(DESTDIR)$(DATADIR)/$$f || exit 1; \
	done

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(BINS) $(AGENT_BIN)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/,$(notdir $(MANS)))
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(DOC_FILES)))
	rm -f $(addprefix $(DESTDIR)$(DATADIR)/,$(SKILL_FILES))
	-rmdir -p $(sort $(dir $(addprefix $(DESTDIR)$(DATADIR)/,$(SKILL_FILES)))) $(DESTDIR)$(DOCDIR) 2>/dev/null

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(UNIT_OBJ:.o=.d) $(MCP_OBJ:.o=.d)
-include $(AGENT_SRC:%.c=$(BUILD)/agent-obj/x86_64/%.d) $(AGENT_SRC:%.c=$(BUILD)/agent-obj/aarch64/%.d)
-include $(wildcard $(BUILD)/obj/tests/fuzz/*.d)
-include $(FAULT_OBJ:.o=.d)
