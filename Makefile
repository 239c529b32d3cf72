# Makefile - builds PerfLens, its tests and its benchmarks.
#
#   make setup      install missing Debian packages (root), else print the line
#                   (the list lives in tests/setup.sh)
#   make            build the binaries into $(BUILD) (default: build/)
#   make demo       analyze the bundled real profile, print hotspots, write an SVG
#   make test       unit tests (check) and integration tests, normal build
#   make test-san   the same under ASan+UBSan (into build-san/)
#   make check      both of the above: what CI and the README run
#   make bench      speed benchmarks against peers (prints ratios; not tests)
#   make agent      the static device agent, x86_64 (musl-gcc + Debian's libzstd.a)
#   make agent-cross the same for aarch64 (aarch64-linux-gnu-gcc -static)
#
# Out-of-tree builds: `make BUILD=/tmp/x` keeps parallel builds apart.

BUILD ?= build
SAN ?=
CC ?= cc

PKGS := jansson libzstd libdw libelf libseccomp zlib nettle
# libcurl: headers only; tools/core/symbols/debuginfod.c dlopen()s it when a fetch needs it.
HDR_PKGS := libcurl

OPT ?= -O2
CFLAGS ?= $(OPT) -g
PL_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers \
	-D_GNU_SOURCE -Itools/core -I. $(shell pkg-config --cflags $(PKGS) $(HDR_PKGS) 2>/dev/null)
PL_LDLIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm
PL_CFLAGS += $(EXTRA_CFLAGS)
ifeq ($(SAN),1)
PL_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
PL_LDFLAGS += -fsanitize=address,undefined
endif

# The engine's subsystems, lowest first; see LAYERS below for what each may use.
ENGINE := base profile perfdata symbols store export evidence
CORE_SRC := $(sort $(foreach d,$(ENGINE),$(wildcard tools/core/$(d)/*.c)))
COLLECTOR_SRC := $(sort $(wildcard collectors/*.c))
TOOL_SRC := $(sort $(wildcard tools/*.c))
SANDBOX_SRC := $(sort $(wildcard sandbox/*.c))
LIB_SRC := $(CORE_SRC) $(COLLECTOR_SRC) $(TOOL_SRC) $(SANDBOX_SRC)
SCHEMAS := $(sort $(wildcard schemas/*.json schemas/tools/*.json schemas/rules/*.json schemas/test/*.json)) $(sort $(wildcard skill/perflens-performance-analysis/*.md skill/perflens-performance-analysis/*/*.md))
# The web viewer's page, style and scripts, served by perflens-mcp --http.
SCHEMAS += $(sort $(wildcard mcp-server/viewer/*.html mcp-server/viewer/*.css mcp-server/viewer/*.js))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/schemas.o
CLI_SRC := $(sort $(wildcard tools/cli/*.c))
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/*.c tests/unit/*/*.c))
# The agent's pure parts (JSON, SHA-256/HMAC, framing, commands, pairing)
# are unit-tested against jansson and nettle, built with the host compiler.
AGENT_UNIT_SRC := agent/json.c agent/sha256.c agent/wire.c agent/cmd.c agent/pair.c
UNIT_OBJ := $(UNIT_SRC:%.c=$(BUILD)/obj/%.o) $(AGENT_UNIT_SRC:%.c=$(BUILD)/obj/%.o)

# Layers: what the files of each folder may include ("FOLDER: ALLOWED...").
# A quoted include names its folder ("symbols/symbolize.h"); a bare name is
# a header of the including file's own folder.  tools/check-layers.sh reads
# this table and fails the build on any other include, so a dependency that
# points up (engine -> tools, tools -> mcp-server, anything -> sandbox
# internals) is refused.  The README's layout table says the same.
define LAYERS
base:
profile: base
perfdata: base profile
symbols: base profile
store: base profile
export: base profile
evidence: base profile symbols store export
collectors: base profile
agent: collectors/health.h
sandbox: base
tools: base profile perfdata symbols store export evidence collectors sandbox/sandbox.h
tools/cli: tools base profile perfdata symbols store export evidence collectors sandbox/sandbox.h
mcp-server: tools base profile symbols store collectors/perfcfg.h collectors/known_chain.h sandbox/sandbox.h
tests: *
bench: *
endef
export LAYERS

LIB := $(BUILD)/libperflens.a
MCP_SRC := $(sort $(wildcard mcp-server/*.c))
MCP_OBJ := $(MCP_SRC:%.c=$(BUILD)/obj/%.o)
BINS := $(BUILD)/perflens $(BUILD)/perflens-mcp


# The device agent (agent/): one static binary that links only libc and
# zstd, so it includes nothing of the server but collectors/health.h (see
# LAYERS).  x86_64 with musl-gcc and Debian's libzstd.a; aarch64 with the
# Debian cross compiler (static glibc: no NSS, numeric addresses) and
# libzstd-dev:arm64.  musl-gcc must not see /usr/include (glibc's headers),
# so zstd's two headers are linked into a folder of their own.  A missing
# toolchain skips with the reason.
AGENT_SRC := $(sort $(wildcard agent/*.c)) collectors/health.c
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

.PHONY: FORCE node-setup all check-layers print-layers setup demo test test-unit test-integration test-san check bench clean

all: $(BUILD)/layers.ok $(BINS) agent

# The layering check: cheap, so it runs on every build (see LAYERS).
$(BUILD)/layers.ok: $(LIB_SRC) $(CLI_SRC) $(MCP_SRC) $(UNIT_SRC) $(AGENT_SRC) $(wildcard tools/core/*/*.h tools/*.h tools/cli/*.h collectors/*.h mcp-server/*.h sandbox/*.h agent/*.h) tools/check-layers.sh Makefile
	@mkdir -p $(BUILD)
	@sh tools/check-layers.sh && touch $@

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(PL_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# schemas/ is embedded so that one binary carries its tool definitions.
$(BUILD)/gen/schemas.c: $(SCHEMAS) tools/gen-schemas.sh
	@mkdir -p $(dir $@)
	sh tools/gen-schemas.sh $(SCHEMAS) > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/gen/schemas.o: $(BUILD)/gen/schemas.c
	@mkdir -p $(dir $@)
	$(CC) $(PL_CFLAGS) $(CFLAGS) -c $< -o $@

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

check-layers:
	@sh tools/check-layers.sh && echo 'check-layers: every include follows LAYERS'

print-layers:
	@printf '%s\n' "$$LAYERS"

setup:
	@sh tests/setup.sh

demo: all
	@sh tests/demo.sh $(BUILD)

test-unit: $(BUILD)/test_unit
	$(BUILD)/test_unit

# A server built with test hooks (the test_fault tool), for the sandbox
# failure tests only; normal builds never contain it.
$(BUILD)/faults/perflens-mcp: FORCE
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/faults EXTRA_CFLAGS=-DPL_TEST_HOOKS $(BUILD)/faults/perflens-mcp-real

$(BUILD)/perflens-mcp-real: $(MCP_OBJ) $(LIB)
	$(CC) $(PL_LDFLAGS) $(LDFLAGS) -Wl,-z,now -o $(BUILD)/perflens-mcp $^ $(PL_LDLIBS) -lpthread

FORCE:

# Node 22 and the MCP test clients come from the npm registry (cached in
# ~/.cache/perflens-node22), and so do the claude and codex CLIs (cached in
# ~/.cache/perflens-agents); without them those tests skip and say why.
node-setup:
	@sh tests/mcp/setup-node.sh >/dev/null || echo "make: Node 22 setup failed; the MCP client tests will skip" >&2
	@sh tests/mcp/setup-agents.sh >/dev/null || echo "make: claude/codex setup failed; the agent setup tests will skip" >&2

test-integration: all agent-cross $(BUILD)/faults/perflens-mcp node-setup
	@BUILD=$(BUILD) sh tests/integration/run.sh

test: test-unit test-integration

test-san:
	$(MAKE) BUILD=build-san SAN=1 OPT=-O1 test

check: test test-san

bench: all
	@BUILD=$(BUILD) sh bench/run.sh

clean:
	rm -rf build build-san

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(UNIT_OBJ:.o=.d) $(MCP_OBJ:.o=.d)
-include $(AGENT_SRC:%.c=$(BUILD)/agent-obj/x86_64/%.d) $(AGENT_SRC:%.c=$(BUILD)/agent-obj/aarch64/%.d)
