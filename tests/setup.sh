#!/bin/sh
# setup.sh - install the Debian packages PerfLens needs (make setup).
# Usage: sh tests/setup.sh [PACKAGE...]   (default: the list below)
#
# As root it runs apt-get for whatever is missing; otherwise it prints the
# exact apt-get line to run and fails, so nothing half-installs silently.
set -eu
# Every Debian package PerfLens builds, tests or benchmarks with:
#   libjansson-dev JSON; libzstd-dev and zlib1g-dev compressed inputs;
#   nettle-dev SHA-256 for provenance and artifact ids; libdw-dev,
#   libelf-dev, libcurl4-openssl-dev, libseccomp-dev, libmicrohttpd-dev
#   for symbolization, debuginfod, the sandbox and the HTTP transport;
#   check for unit tests; linux-perf and elfutils as oracles and for
#   perf.data; python3-jsonschema validates JSON against schemas/;
#   hyperfine and time for benchmarks; libc6-dbg (libc symbolization
#   tests), debuginfod (a real server for the debuginfod tests),
#   libbenchmark-dev (Google Benchmark producer) and python3-scipy (an
#   independent statistics oracle), cmark-gfm (renders build_report Markdown in a test),
#   zstd (the test agent of the agent link compresses its chunks with the
#   command; the device agent's fake server decompresses with it) and
#   iproute2 (ip netns and veth: agents as separate hosts);
#   golang-go (go tool pprof reads our pprof exports in a test; Go's
#   runtime/pprof writes a real pprof input), llvm (llvm-symbolizer beside
#   addr2line in bench/symbolize.sh), help2man (man pages from --help for
#   make install); the static device agent: musl-tools (musl-gcc links
#   libzstd.a into the x86_64 agent), gcc-aarch64-linux-gnu and
#   libc6-dev-arm64-cross (the aarch64 agent), libzstd-dev:arm64 (its
#   libzstd.a, through multiarch: the arm64 architecture is added when
#   missing), qemu-user-static (runs the aarch64 agent in the tests),
#   binutils (readelf -n, the build-id oracle of the agent tests), clang
#   (libFuzzer for make fuzz);
#   libprotobuf-c-dev and protobuf-c-compiler decode pprof profiles
#   (profile.proto, tools/core/profile/pprof.proto) with generated code, not by
#   hand; libcairo2-dev draws the PNG flame graphs; golang-go is also the Go
#   producer (runtime/pprof) and oracle (go tool pprof) of the pprof input
#   tests; pngcheck checks the PNGs the tests get;
#   chromium renders the SVGs and drives the web viewer in tests;
#   libclang-rt-14-dev holds clang's libFuzzer and sanitizer runtimes
#   (only a Recommends of clang, which --no-install-recommends skips);
#   file (file(1) checks the agents are static ELFs of their arch), curl
#   (test_viewer.sh and docs/json-rpc.md's HTTP examples), openssl (a
#   self-signed certificate for the debuginfod TLS check); npm, only when
#   no npm is on PATH, fetches Node 22 and the MCP test clients
#   (tests/mcp/setup-node.sh); libiberty-dev (libiberty.a's cplus_demangle:
#   C++, Rust and D names demangled as binutils and Debian's perf do, linked
#   statically so the sandboxed worker needs no new file); rustc (Debian's
#   1.63: Rust workloads with the legacy and the v0 mangling for
#   test_demangle.sh); openjdk-17-jdk-headless (tests only: javac and a
#   JVM that writes its perf map, -XX:+DumpPerfMapAtExit, for
#   test_jit_langs.sh); sqlite3 (test_debian_programs.sh: a real program
#   that syncs each commit, analyzed off-CPU; gzip, python3 and curl, the
#   others it drives, are already here); clickhouse-server (test_fleet.sh:
#   the fleet store, started by the test on loopback in its own folder).
PACKAGES="build-essential pkg-config libjansson-dev libzstd-dev zlib1g-dev nettle-dev
libdw-dev libelf-dev libcurl4-openssl-dev libseccomp-dev libmicrohttpd-dev check
linux-perf elfutils python3 python3-jsonschema hyperfine time chromium
libc6-dbg debuginfod libbenchmark-dev python3-scipy cmark-gfm zstd iproute2
golang-go llvm help2man
musl-tools gcc-aarch64-linux-gnu libc6-dev-arm64-cross libzstd-dev:arm64 qemu-user-static
binutils clang libclang-rt-14-dev libprotobuf-c-dev protobuf-c-compiler libcairo2-dev pngcheck
file curl openssl libiberty-dev rustc openjdk-17-jdk-headless sqlite3 clickhouse-server"
# An image with its own Node (e.g. NodeSource's, which conflicts with
# Debian's npm) keeps it; a fresh Debian 12 gets Debian's npm.
command -v npm >/dev/null 2>&1 || PACKAGES="$PACKAGES npm"
[ $# -gt 0 ] && PACKAGES="$*"
missing=""
for pkg in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $pkg"
done
if [ -z "$missing" ]; then
	echo "setup: every package is installed"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "setup: missing packages:$missing" >&2
	case "$missing" in *":arm64"*)
		echo "setup: (libzstd-dev:arm64 needs: dpkg --add-architecture arm64)" >&2 ;;
	esac
	echo "setup: run as root: apt-get update && apt-get install -y$missing" >&2
	exit 2
fi
echo "setup: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# libzstd-dev:arm64 comes through multiarch: enable arm64 first (the
# apt-get update below then fetches its package lists).
case "$missing" in *":arm64"*)
	dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64 ;;
esac
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
