# test_debuginfod.sh - debug information fetched by build-id from a REAL
# debuginfod server (Debian's debuginfod 0.188), started and stopped here.
#
# A fixture program is built with gcc -g; its DWARF goes into a folder the
# server indexes (objcopy --only-keep-debug) and the binary is stripped of
# it (--strip-debug, no .gnu_debuglink), so only the server has the debug
# information.  debuginfod has no listen-address flag, so as root the
# whole script re-runs inside `unshare -n` (a network namespace with only
# `lo` up); elsewhere the server listens on a port the script picked.
#
# Oracles: the bytes the server was given (sha256), the server's own
# client debuginfod-find, eu-addr2line on the unstripped binary, and ldd.
#   - neither binary links libcurl or its dependencies (ldd): libcurl is
#     dlopen()ed when a fetch needs it; a libcurl.so.4 without curl's
#     functions makes a fetch fail saying what to install, not crash;
#   - our client (a small C program linked against $BUILD/libperflens.a)
#     fetches debuginfo and executable, with and without a cache folder;
#   - the same client in a sandboxed worker with allow_network (sbx_run);
#   - an unknown build-id is "not found" quickly, as debuginfod-find says;
#   - a server that accepts but never answers is a timeout, on time;
#   - https to a self-signed server is refused (verification is on), in
#     and out of the sandbox;
#   - the symbolize tool through the CLI and through perflens-mcp (a
#     sandboxed worker that fetches over the network) names the same
#     function, inlined function and file:line:column as eu-addr2line
#     (skipped, saying why, while the build has no symbolize tool), and a
#     silent server costs the fetch timeout, not a hang;
#   - a --call-graph dwarf recording whose binary is gone is unwound (and
#     named) with the executable the server serves, as perf script did
#     on it while the binary was there.
# The servers are stopped at exit whatever happens; no process is left.

# Re-run in a private network namespace when we can (root, unshare, ip);
# PL_DFD_NETNS=0 stays in the machine's namespace.
if [ -z "${PL_DFD_NETNS:-}" ] && [ "$(id -u)" = 0 ] &&
	unshare -n sh -c 'ip link set lo up' 2>/dev/null; then
	PL_DFD_NETNS=1 exec unshare -n sh -c 'ip link set lo up && exec sh "$0"' "$0"
fi
. tests/integration/lib.sh

what="debuginfod"

# ---------------------------------------------- libcurl is not linked
# Only libcurl brings these in (libmicrohttpd's GnuTLS brings libidn2 and
# nettle, so they are not listed).
curl_deps='libcurl|libssl|libcrypto|libkrb5|libgssapi_krb5|libk5crypto|libldap|liblber|libsasl2|librtmp|libssh2|libpsl|libnghttp2|libbrotli'
linked=""
for bin in "$PERFLENS" "$BUILD/perflens-mcp"; do
	if ! ldd "$bin" >"$WORK/ldd.out" 2>&1; then
		linked="$linked ldd $bin failed: $(head -c 200 "$WORK/ldd.out" | tr '\n' ' ');"
		continue
	fi
	found=$(awk '{ print $1 }' "$WORK/ldd.out" | grep -E "^($curl_deps)[.-]" | tr '\n' ' ')
	[ -n "$found" ] && linked="$linked $(basename "$bin"): $found;"
done
if [ -z "$linked" ]; then
	ok "$what: ldd lists neither libcurl nor its dependencies for perflens and perflens-mcp (loaded only when a fetch needs it)"
else
	notok "$what: linked at start although only debuginfod needs them:$linked"
fi
for tool in debuginfod debuginfod-find eu-addr2line gcc objcopy readelf; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		skip "$what: $tool is not installed (Debian packages debuginfod, elfutils, gcc, binutils)"
		exit 0
	fi
done
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if [ "${PL_DFD_NETNS:-}" = 1 ]; then
	echo "# running in a private network namespace (unshare -n, lo only)"
else
	echo "# running in the machine's network namespace (no unshare -n: not root, unavailable, or PL_DFD_NETNS=0)"
fi

# alive PID: the process runs (exists and is not a zombie).
alive() { ps -o stat= -p "$1" 2>/dev/null | grep -qv Z; }

# SIGTERM, up to 5 s to exit, then SIGKILL; reaped either way.
dfd_pid="" hang_pid="" tls_pid=""
stop_servers() {
	for p in $dfd_pid $hang_pid $tls_pid; do
		kill "$p" 2>/dev/null || continue
		for _ in $(seq 50); do
			alive "$p" || break
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	dfd_pid="" hang_pid="" tls_pid=""
}
trap 'stop_servers; cleanup' EXIT

ms_now() { date +%s%3N; }

# ------------------------------------------------------------ the fixture
mkdir -p "$WORK/src" "$WORK/served" "$WORK/bin"
cat > "$WORK/src/dfdprog.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>

static inline int scale(int x)
{
	return x * 3 + (x >> 2);
}

__attribute__((noinline)) long accumulate(int n)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += scale(i) ^ (s >> 3);
	return s;
}

__attribute__((noinline)) long twice(int n)
{
	return accumulate(n) + accumulate(n / 2);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	printf("%ld\n", twice(n));
	return 0;
}
EOF
full="$WORK/bin/dfdprog.full"
stripped="$WORK/bin/dfdprog"
if ! (cd "$WORK/src" && gcc -g -O2 -Wl,--build-id -o "$full" dfdprog.c) 2>"$WORK/gcc.err"; then
	notok "$what: the fixture does not build: $(tr '\n' ' ' < "$WORK/gcc.err")"
	exit 0
fi
objcopy --only-keep-debug "$full" "$WORK/served/dfdprog.debug"
objcopy --strip-debug "$full" "$stripped"
cp "$stripped" "$WORK/served/dfdprog"
bid=$(readelf -n "$full" | sed -n 's/^ *Build ID: \([0-9a-f]*\)$/\1/p')
if [ -z "$bid" ] || readelf -S "$stripped" | grep -qE '\.debug_(info|line)|gnu_debuglink'; then
	notok "$what: fixture: build-id '$bid', stripped sections: $(readelf -S "$stripped" | grep -oE '\.(debug_[a-z]+|gnu_debuglink)' | tr '\n' ' ')"
	exit 0
fi
ok "$what: fixture built, build-id $bid; the stripped binary has no DWARF and no .gnu_debuglink"

# --------------------------------------------------------- the C client
# pl_debuginfod_fetch as the tools call it: bytes to stdout, one status
# line "rc=NAME ms=N source=S text=T" to stderr.  With --sandbox it runs in
# a sandboxed worker (sbx_run, allow_network, no read root, the cache
# folder as write root) that sends the status line and the bytes back.
cat > "$WORK/src/fetch.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "symbols/debuginfod.h"
#include "sandbox/sandbox.h"

struct job { struct pl_debuginfod d; const char *hex, *kind; int status_fd; };

/* As perflens-mcp does: a worker that may use the network loads libcurl
 * before it is confined (it could not read the library afterwards). */
static void preload(const struct sbx_policy *pol)
{
	if (pol->allow_network)
		pl_debuginfod_preload();
}

/* The status line (to status_fd, or first to `out` when it is -1), then
 * the answer's bytes, to `out`. */
static int fetch(void *arg, int out)
{
	const struct job *j = arg;
	struct pl_error err = {0};
	struct timespec a, b;
	char src[1024] = "", buf[65536];
	int fd = -1;
	ssize_t n;
	enum pl_err rc;

	clock_gettime(CLOCK_MONOTONIC, &a);
	rc = pl_debuginfod_fetch(&j->d, j->hex, j->kind, &fd, src, sizeof(src), &err);
	clock_gettime(CLOCK_MONOTONIC, &b);
	dprintf(j->status_fd >= 0 ? j->status_fd : out, "rc=%s ms=%.0f source=%s text=%s\n", pl_err_name(rc),
		(b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6, src, err.text);
	while (rc == PL_OK && (n = read(fd, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return 1;
	return rc != PL_OK;
}

int main(int argc, char **argv)
{
	int sandboxed = argc > 1 && strcmp(argv[1], "--sandbox") == 0;
	struct job j;
	struct sbx_policy pol = {0};
	struct sbx_result res;
	struct pl_error err;
	char *nl;
	int rc;

	argv += sandboxed, argc -= sandboxed;
	if (argc < 5)
		return 2;
	j.d = (struct pl_debuginfod){argv[1], (unsigned)atoi(argv[4]), argc > 5 ? argv[5] : NULL, 0};
	j.hex = argv[2];
	j.kind = argv[3];
	j.status_fd = sandboxed ? -1 : 2;
	if (!sandboxed)
		return fetch(&j, 1);
	if (j.d.cache_dir)
		mkdir(j.d.cache_dir, 0755);  /* a write root must exist */
	pol.allow_network = 1;
	pol.write_root = j.d.cache_dir;
	sbx_set_preconfine(preload);
	pol.timeout_ms = 60000;
	pol.max_result_bytes = 256u << 20;
	if (sbx_run(&pol, fetch, &j, &res, &err) != PL_OK) {
		fprintf(stderr, "rc=sandbox text=%s\n", err.text);
		return 1;
	}
	nl = strchr(res.data, '\n');
	if (res.outcome > SBX_EXIT_NONZERO || !nl) {
		fprintf(stderr, "rc=sandbox_%s text=%s\n", sbx_outcome_name(res.outcome), res.detail);
		sbx_result_release(&res);
		return 1;
	}
	fwrite(res.data, 1, (size_t)(nl + 1 - res.data), stderr);
	fwrite(nl + 1, 1, res.len - (size_t)(nl + 1 - res.data), stdout);
	rc = res.outcome != SBX_OK;
	sbx_result_release(&res);
	return rc;
}
EOF
fetch="$WORK/bin/fetch"
link_fetch() {
	cc "$@" -D_GNU_SOURCE -I"$REPO/tools/core" -I"$REPO" -o "$fetch" "$WORK/src/fetch.c" "$BUILD/libperflens.a" \
		$(pkg-config --libs jansson libzstd libdw libelf libseccomp zlib nettle) -lm \
		2>>"$WORK/cc.err"
}
# A sanitizer build's library needs the sanitizers' runtime too.
if ! link_fetch && ! link_fetch -fsanitize=address,undefined; then
	notok "$what: the client test program does not link against $BUILD/libperflens.a: $(head -5 "$WORK/cc.err" | tr '\n' ' ')"
	exit 0
fi

# field NAME FILE: the value of NAME= in the client's status line.
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" "$2"; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

# ------------------------------------------------------------ the server
# A free port (in a private namespace every port is free; otherwise the
# one the OS hands out, retried if debuginfod loses the race for it - and
# there debuginfod listens on every address, for the test's few seconds).
free_port() {
	"$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
url=""
for attempt in 1 2 3 4 5; do
	port=$(free_port)
	debuginfod -F -p "$port" -d "$WORK/db-$attempt.sqlite" -t 0 -g 0 "$WORK/served" \
		>"$WORK/debuginfod.log" 2>&1 &
	dfd_pid=$!
	for _ in $(seq 50); do
		grep -q "started http server on .*port=$port" "$WORK/debuginfod.log" && break
		kill -0 "$dfd_pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$dfd_pid" 2>/dev/null && grep -q "started http server on .*port=$port" "$WORK/debuginfod.log"; then
		url="http://127.0.0.1:$port"
		break
	fi
	stop_servers
done
if [ -z "$url" ]; then
	notok "$what: debuginfod did not start on any of 5 ports: $(tail -3 "$WORK/debuginfod.log" | tr '\n' ' ')"
	exit 0
fi

# Wait until it has indexed the folder.  debuginfod-find caches a 404
# (for 10 minutes), so every poll gets a fresh client cache.
t0=$(ms_now)
found=""
for i in $(seq 150); do
	rm -rf "$WORK/find-cache"
	if found=$(DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH="$WORK/find-cache" DEBUGINFOD_TIMEOUT=5 \
		debuginfod-find debuginfo "$bid" 2>/dev/null) && [ -n "$found" ]; then
		break
	fi
	found=""
	sleep 0.2
done
if [ -z "$found" ]; then
	notok "$what: debuginfod did not index $WORK/served within 30 s: $(tail -3 "$WORK/debuginfod.log" | tr '\n' ' ')"
	exit 0
fi
if [ "$(sha "$found")" = "$(sha "$WORK/served/dfdprog.debug")" ]; then
	ok "$what: debuginfod serves the fixture on $url (indexed in $(( $(ms_now) - t0 )) ms); debuginfod-find gets the debug file's bytes"
else
	notok "$what: debuginfod-find got other bytes than the served debug file"
fi

# ------------------------------------------------------- our client alone
"$fetch" "$url" "$bid" debuginfo 10000 >"$WORK/got.debug" 2>"$WORK/st1"
if [ "$(field rc "$WORK/st1")" = ok ] && [ "$(sha "$WORK/got.debug")" = "$(sha "$WORK/served/dfdprog.debug")" ] &&
	[ "$(field source "$WORK/st1")" = "$url/buildid/$bid/debuginfo" ]; then
	ok "$what: pl_debuginfod_fetch gets the debuginfo byte for byte (sha256 equal, $(field ms "$WORK/st1") ms, no cache: a memory file)"
else
	notok "$what: pl_debuginfod_fetch debuginfo: $(cat "$WORK/st1")"
fi

"$fetch" "$url/" "$bid" executable 10000 >"$WORK/got.exe" 2>"$WORK/st2"
if [ "$(field rc "$WORK/st2")" = ok ] && [ "$(sha "$WORK/got.exe")" = "$(sha "$stripped")" ]; then
	ok "$what: pl_debuginfod_fetch gets the executable byte for byte (server URL with a trailing slash)"
else
	notok "$what: pl_debuginfod_fetch executable: $(cat "$WORK/st2")"
fi

cache="$WORK/cache"
"$fetch" "$url" "$bid" debuginfo 10000 "$cache" >/dev/null 2>"$WORK/st3"
"$fetch" "http://127.0.0.1:1" "$bid" debuginfo 10000 "$cache" >"$WORK/got2.debug" 2>"$WORK/st4"
if [ "$(field rc "$WORK/st3")" = ok ] && [ "$(sha "$cache/$bid/debuginfo")" = "$(sha "$WORK/served/dfdprog.debug")" ] &&
	[ "$(ls -A "$cache/$bid")" = debuginfo ] && [ "$(field rc "$WORK/st4")" = ok ] &&
	[ "$(field source "$WORK/st4")" = "$cache/$bid/debuginfo" ] &&
	[ "$(sha "$WORK/got2.debug")" = "$(sha "$WORK/served/dfdprog.debug")" ]; then
	ok "$what: with a cache folder the answer is kept as CACHE/$bid/debuginfo (no temporary left) and a later fetch is answered from it without a server"
else
	notok "$what: cache: $(cat "$WORK/st3" "$WORK/st4" | tr '\n' ' '); $(ls -A "$cache/$bid" 2>&1 | tr '\n' ' ')"
fi

# ------------------------------------------------ inside the sandbox
# The client in a sandboxed worker that may use the network (seccomp
# allow-list with the network rows, Landlock, no read root at all).
"$fetch" --sandbox "$url" "$bid" debuginfo 10000 >"$WORK/got4.debug" 2>"$WORK/st8"
"$fetch" --sandbox "$url" "$bid" executable 10000 "$WORK/sbx-cache" >/dev/null 2>"$WORK/st9"
if [ "$(field rc "$WORK/st8")" = ok ] && [ "$(sha "$WORK/got4.debug")" = "$(sha "$WORK/served/dfdprog.debug")" ] &&
	[ "$(field rc "$WORK/st9")" = ok ] && [ "$(sha "$WORK/sbx-cache/$bid/executable")" = "$(sha "$stripped")" ]; then
	ok "$what: in a sandboxed worker with allow_network the client fetches the same bytes (memory file, and into a cache folder that is the write root)"
else
	notok "$what: sandboxed fetch: $(cat "$WORK/st8" "$WORK/st9" | tr '\n' ' ')"
fi

# ------------------------------------------- a libcurl that is not one
# A libcurl.so.4 without curl's functions, found first through
# LD_LIBRARY_PATH (nothing else is looked up there: the binaries do not
# link libcurl): the fetch fails naming the package, in and out of the
# sandbox, and the CLI's symbolize still answers from the symbol table
# (below).
mkdir -p "$WORK/fakecurl"
echo 'int not_curl(void) { return 0; }' >"$WORK/src/fakecurl.c"
if cc -shared -fPIC -Wl,-soname,libcurl.so.4 -o "$WORK/fakecurl/libcurl.so.4" "$WORK/src/fakecurl.c" 2>"$WORK/cc.err"; then
	LD_LIBRARY_PATH="$WORK/fakecurl" "$fetch" "$url" "$bid" debuginfo 5000 >/dev/null 2>"$WORK/st12"
	rc12=$?
	LD_LIBRARY_PATH="$WORK/fakecurl" "$fetch" --sandbox "$url" "$bid" debuginfo 5000 >/dev/null 2>"$WORK/st13"
	rc13=$?
	if [ "$rc12" -eq 1 ] && [ "$rc13" -eq 1 ] && [ "$(field rc "$WORK/st12")" = unsupported ] &&
		[ "$(field rc "$WORK/st13")" = unsupported ] &&
		grep -q "apt-get install libcurl4): libcurl.so.4 has no curl_global_init" "$WORK/st12" &&
		grep -q "apt-get install libcurl4): libcurl.so.4 has no curl_global_init" "$WORK/st13"; then
		ok "$what: with a libcurl.so.4 that lacks curl's functions a fetch fails, naming the package to install, in and out of the sandbox ($(sed -n 's/.*text=//p' "$WORK/st12"))"
	else
		notok "$what: a libcurl.so.4 without curl's functions: exits $rc12/$rc13; $(cat "$WORK/st12" "$WORK/st13" | tr '\n' ' ')"
	fi
else
	skip "$what: a libcurl.so.4 without curl's functions: cc -shared failed: $(head -c 200 "$WORK/cc.err")"
fi

# ---------------------------------------------------- unknown build-id
unknown=0123456789abcdef0123456789abcdef01234567
"$fetch" "$url" "$unknown" debuginfo 10000 >/dev/null 2>"$WORK/st5"
rm -rf "$WORK/find-cache"
DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH="$WORK/find-cache" debuginfod-find debuginfo "$unknown" \
	>/dev/null 2>"$WORK/find.err"
peer_rc=$?
took=$(field ms "$WORK/st5")
if [ "$(field rc "$WORK/st5")" = input ] && grep -q "text=build-id $unknown not found on $url" "$WORK/st5" &&
	[ "${took:-99999}" -lt 2000 ] && [ "$peer_rc" -ne 0 ]; then
	ok "$what: an unknown build-id is \"not found\" in $took ms (timeout 10000 ms), as debuginfod-find says ($(tr '\n' ' ' < "$WORK/find.err"))"
else
	notok "$what: unknown build-id: $(cat "$WORK/st5"); debuginfod-find exit $peer_rc"
fi

# ------------------------------------------------------ a silent server
"$PY" -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
print(s.getsockname()[1], flush=True)
held = []
end = time.monotonic() + 120
while time.monotonic() < end:
    s.settimeout(1)
    try:
        held.append(s.accept()[0])   # accept, read nothing, answer nothing
    except socket.timeout:
        pass
' >"$WORK/hang.port" 2>/dev/null &
hang_pid=$!
for _ in $(seq 50); do
	[ -s "$WORK/hang.port" ] && break
	sleep 0.1
done
hport=$(cat "$WORK/hang.port")
t0=$(ms_now)
"$fetch" "http://127.0.0.1:$hport" "$bid" debuginfo 1500 >/dev/null 2>"$WORK/st6"
wall=$(( $(ms_now) - t0 ))
if [ "$(field rc "$WORK/st6")" = timeout ] && [ "$wall" -ge 1400 ] && [ "$wall" -lt $((1500 + 1500 * SCALE)) ] &&
	grep -Eq "did not answer within 1([0-4][0-9][0-9]|500) ms" "$WORK/st6"; then
	# The message names the server's share of what is left of the budget:
	# a millisecond spent before the first request makes it 1499 (a
	# sanitizer build's start can take a few hundred).
	ok "$what: a server that accepts but never answers is a timeout after $wall ms (timeout 1500 ms), naming the server"
else
	notok "$what: silent server: $wall ms; $(cat "$WORK/st6")"
fi
# The silent server first, the real one second: each gets its share.
t0=$(ms_now)
"$fetch" "http://127.0.0.1:$hport $url" "$bid" debuginfo 2000 >"$WORK/got3.debug" 2>"$WORK/st7"
wall=$(( $(ms_now) - t0 ))
if [ "$(field rc "$WORK/st7")" = ok ] && [ "$(sha "$WORK/got3.debug")" = "$(sha "$WORK/served/dfdprog.debug")" ] &&
	[ "$wall" -ge 900 ] && [ "$wall" -lt $((2000 + 500 * SCALE)) ]; then
	ok "$what: a silent first server gets half of the 2000 ms; the second server still answers ($wall ms)"
else
	notok "$what: silent then real server: $wall ms; $(cat "$WORK/st7")"
fi

# ----------------------------------------------------------------- TLS
# https to a server with a self-signed certificate: the handshake runs
# (also sandboxed: the CA store is readable there) and the certificate is
# refused, so verification is on.
if command -v openssl >/dev/null 2>&1 &&
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$WORK/tls.key" -out "$WORK/tls.crt" \
		-days 1 -subj /CN=localhost >/dev/null 2>&1; then
	"$PY" -c '
import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
s.socket = ctx.wrap_socket(s.socket, server_side=True)
s.timeout = 60
print(s.server_address[1], flush=True)
for _ in range(2):
    s.handle_request()
' "$WORK/tls.crt" "$WORK/tls.key" >"$WORK/tls.port" 2>/dev/null &
	tls_pid=$!
	for _ in $(seq 50); do
		[ -s "$WORK/tls.port" ] && break
		sleep 0.1
	done
	tport=$(cat "$WORK/tls.port")
	"$fetch" "https://localhost:$tport" "$bid" debuginfo 5000 >/dev/null 2>"$WORK/st10"
	"$fetch" --sandbox "https://localhost:$tport" "$bid" debuginfo 5000 >/dev/null 2>"$WORK/st11"
	if [ "$(field rc "$WORK/st10")" = external_tool_failed ] && grep -q "SSL certificate problem" "$WORK/st10" &&
		[ "$(field rc "$WORK/st11")" = external_tool_failed ] && grep -q "SSL certificate problem" "$WORK/st11"; then
		ok "$what: https to a self-signed server fails certificate verification, in and out of the sandbox ($(sed -n 's/.*failed: \(SSL[^(]*[^( ]\) (.*/\1/p' "$WORK/st11"))"
	else
		notok "$what: https self-signed: $(cat "$WORK/st10" "$WORK/st11" | tr '\n' ' ')"
	fi
else
	skip "$what: https: no openssl command to make a test certificate"
fi

# ---------------------------------------------- symbolize: CLI and MCP
# Offsets: every third byte of the fixture's functions (module offsets =
# ELF addresses, as nm prints them; inlined scale() and atoi() among
# them), answered by eu-addr2line on the UNSTRIPPED binary.
offsets=$(nm -S --defined-only "$full" | while read -r addr size type name; do
	case "$type:$name" in
	[tT]:main | [tT]:twice | [tT]:accumulate)
		for i in $(seq 0 3 $((0x$size - 1))); do
			printf '%d ' $((0x$addr + i))
		done ;;
	esac
done)
# expect.txt: one line per offset, tab-separated: offset, ELF symbol and
# offset into it (eu-addr2line -S), innermost function (eu-addr2line -f,
# an inlined one when there is one), file:line:column.
expect="$WORK/expect.txt"
hexes=$(for o in $offsets; do printf '0x%x ' "$o"; done)
# Two lines per address: symbol or function, then file:line:column.
eu-addr2line -S -e "$full" $hexes | awk 'NR % 2 == 1' >"$WORK/a2l.sym"
eu-addr2line -f -e "$full" $hexes | awk 'NR % 2 == 1 { print $1 }' >"$WORK/a2l.inner"
eu-addr2line -e "$full" $hexes >"$WORK/a2l.where"
for o in $offsets; do echo "$o"; done | paste - "$WORK/a2l.sym" "$WORK/a2l.inner" "$WORK/a2l.where" >"$expect"

# compare.py ANSWER.json EXPECT: each offset must come back with the same
# symbol+offset, innermost function and file:line:column; prints "N/M" or
# the first mismatches.
cat > "$WORK/compare.py" <<'EOF'
import json, sys
want = {}
for line in open(sys.argv[2]):
    off, sym, inner, where = line.rstrip("\n").split("\t")
    name, _, plus = sym.partition("+")
    path, ln, col = (where.rsplit(":", 2) + ["0", "0"])[:3]
    want[int(off)] = (name, int(plus, 16) if plus else 0, inner, path, int(ln), int(col))
doc = json.load(open(sys.argv[1]))
doc = doc.get("structuredContent", doc)
src = (doc.get("module") or {}).get("debug_source")
got = {int(a["offset"], 16): a for a in doc.get("answers", [])}
bad = []
for off, w in sorted(want.items()):
    a = got.get(off)
    if a is None:
        bad.append("%#x: no answer" % off)
        continue
    f = a.get("file")
    if f and not f.startswith("/") and a.get("comp_dir"):
        f = a["comp_dir"].rstrip("/") + "/" + f
    inl = a.get("inlines") or []
    inner = inl[0]["function"] if inl else a.get("subprogram")
    g = (a.get("function"), a.get("function_offset", 0), inner, f, a.get("line"), a.get("column"))
    if g != w:
        bad.append("%#x: got %s, eu-addr2line %s" % (off, g, w))
if len(sys.argv) > 3 and src != sys.argv[3]:
    bad.insert(0, "debug_source %s, not %s" % (src, sys.argv[3]))
print("%d/%d" % (len(want), len(want)) if not bad else "; ".join(bad[:4]))
sys.exit(1 if bad else 0)
EOF

if ! "$PERFLENS" --help 2>&1 | grep -qw symbolize; then
	skip "$what: symbolize through the CLI: this build has no symbolize tool yet"
	skip "$what: symbolize through perflens-mcp (sandboxed worker fetching over the network): this build has no symbolize tool yet"
else
	offs_json=$(echo $offsets | tr ' ' ',')
	args="{\"binary\": \"$stripped\", \"offsets\": [$offs_json]}"
	"$PERFLENS" call symbolize "$args" --debuginfod "$url" --allowed-root "$WORK" \
		--artifact-root "$WORK/art-cli" >"$WORK/cli.json" 2>"$WORK/cli.err"
	rc=$?
	if [ "$rc" -eq 0 ] && res=$("$PY" "$WORK/compare.py" "$WORK/cli.json" "$expect" debuginfod); then
		ok "$what: perflens call symbolize --debuginfod on the stripped binary names function and file:line as eu-addr2line on the unstripped one ($res offsets)"
	else
		notok "$what: CLI symbolize (exit $rc): ${res:-} $(head -c 400 "$WORK/cli.err" "$WORK/cli.json" | tr '\n' ' ')"
	fi
	# Without the server the same call has no file:line (the debug
	# information really came from it).
	"$PERFLENS" call symbolize "$args" --debuginfod "" --allowed-root "$WORK" \
		--artifact-root "$WORK/art-cli" >"$WORK/cli0.json" 2>/dev/null
	if "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["module"]["debug_source"] == "none" and d["answers"] and
         not any("line" in a for a in d["answers"]) else 1)' "$WORK/cli0.json" 2>/dev/null; then
		ok "$what: with --debuginfod \"\" the same call has no debug source and no line (the server supplied them)"
	else
		notok "$what: the stripped binary symbolizes to file:line without the server: the test does not show the fetch"
	fi
	# A libcurl.so.4 that is not one: the fetch fails, the call does not.
	if [ -f "$WORK/fakecurl/libcurl.so.4" ]; then
		LD_LIBRARY_PATH="$WORK/fakecurl" "$PERFLENS" call symbolize "$args" --debuginfod "$url" \
			--allowed-root "$WORK" --artifact-root "$WORK/art-cli" >"$WORK/cli1.json" 2>"$WORK/cli1.err"
		rc=$?
		if [ "$rc" -eq 0 ] && "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["module"]["debug_source"] == "none" and d["answers"] and
         all(a.get("function") and "line" not in a for a in d["answers"]) else 1)' "$WORK/cli1.json" 2>/dev/null; then
			ok "$what: without a usable libcurl, perflens call symbolize --debuginfod still answers (exit 0) from the symbol table, without lines"
		else
			notok "$what: CLI symbolize without a usable libcurl (exit $rc): $(head -c 400 "$WORK/cli1.err" "$WORK/cli1.json" | tr '\n' ' ')"
		fi
	fi

	WORK="$WORK" timeout 120 "$PY" - "$BUILD/perflens-mcp" "$url" "$stripped" "$expect" "$offs_json" "$bid" "$hport" <<'PY'
import json, os, subprocess, sys
sys.path.insert(0, os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration"))
from mcp_client import *  # the shared MCP test client (mcp_client.py)

SERVER, URL, BINARY, EXPECT, OFFS, BID, HPORT = sys.argv[1:8]
offsets = [int(x) for x in OFFS.split(",") if x]
s = Stdio([SERVER, "--debuginfod", URL, "--allowed-root", WORK, "--artifact-root",
           os.path.join(WORK, "art-mcp"), "--allow-writes"], "mcp-dfd")
s.initialize()
r = s.call("symbolize", {"binary": BINARY, "offsets": offsets}, timeout=60)
res = (r or {}).get("result", {})
path = os.path.join(WORK, "mcp.json")
json.dump(res, open(path, "w"))
cmp = subprocess.run([sys.executable, os.path.join(WORK, "compare.py"), path, EXPECT, "debuginfod"],
                     capture_output=True, text=True)
check("debuginfod: symbolize through perflens-mcp (a sandboxed worker fetches from the server) "
      "names function and file:line as eu-addr2line (%s offsets)" % cmp.stdout.strip(),
      not res.get("isError") and cmp.returncode == 0, "%s %s" % (cmp.stdout, short(r, 500)))
r = s.call("inspect_elf", {"path": BINARY}, timeout=60)
res = (r or {}).get("result", {})
text = json.dumps(res.get("structuredContent", res))
check("debuginfod: inspect_elf on the stripped binary names its build-id and the server",
      not res.get("isError") and '"%s"' % BID in text and URL in text, short(r, 400))
rc = s.close()
check("debuginfod: perflens-mcp exits 0 at end of input, no sanitizer report",
      rc == 0 and not sanitizer_report(s.stderr()), "exit %s; %s" % (rc, s.stderr()[-300:]))

# A server that never answers: the call still ends, near the 1 s fetch
# timeout, with the symbol table's names and no line.
s = Stdio([SERVER, "--debuginfod", "http://127.0.0.1:" + HPORT, "--debuginfod-timeout", "1",
           "--allowed-root", WORK], "mcp-dfd-silent")
s.initialize()
t = time.monotonic()
r = s.call("symbolize", {"binary": BINARY, "offsets": offsets[:3]}, timeout=30)
took = time.monotonic() - t
res = (r or {}).get("result", {})
sc = res.get("structuredContent") or {}
check("debuginfod: through perflens-mcp a silent debuginfod server costs its 1 s timeout, "
      "not a hang (%.1f s; answered from the symbol table)" % took,
      r is not None and 0.9 < took < 5 and not res.get("isError") and
      sc.get("module", {}).get("debug_source") == "none" and
      all(a.get("function") and "line" not in a for a in sc.get("answers", [])), short(r, 500))
s.close()
sys.exit(0)
PY
fi

# ------------------------------------------- DWARF unwinding, file gone
# A --call-graph dwarf recording of a copy of the stripped binary (its
# .eh_frame is all the unwinder needs), then the copy removed: the native
# perf.data reader unwinds through it with the executable the server
# serves for its build-id.  Oracle: the perf script path on the same
# recording while the copy was there (-N: no perf build-id cache).
gone="$WORK/bin/dwprog"
cp "$stripped" "$gone"
if ! command -v perf >/dev/null 2>&1; then
	skip "$what: DWARF unwinding with the served executable: perf is not installed"
elif ! perf record -N -e cpu-clock -F 999 --call-graph dwarf -o "$WORK/dw.data" -- "$gone" 150000000 \
	>/dev/null 2>"$WORK/dw.err"; then
	skip "$what: DWARF unwinding with the served executable: perf cannot record here: $(head -c 200 "$WORK/dw.err" | tr '\n' ' ')"
else
	# dw_folded READER [OPTIONS...]: dw.data's folded stacks, sorted.
	dw_folded() {
		_r=$1
		shift
		_id=$(PERFLENS_PERF_DATA_READER=$_r "$PERFLENS" "$@" analyze --path "$WORK/dw.data" \
			--artifact-root "$WORK/art-dw" 2>>"$WORK/dw.err" |
			"$PY" -c 'import json,sys; print(json.load(sys.stdin)["analysis_id"])')
		[ -n "$_id" ] && "$PERFLENS" export --analysis-id "$_id" --format folded --output - \
			--artifact-root "$WORK/art-dw" 2>>"$WORK/dw.err" | sort
	}
	dw_folded perf-script --debuginfod "" >"$WORK/dw.want"
	rm -f "$gone"
	dw_folded native --debuginfod "" >"$WORK/dw.none"
	dw_folded native --debuginfod "$url" >"$WORK/dw.got"
	if grep -q ';main;twice;accumulate ' "$WORK/dw.want" && cmp -s "$WORK/dw.got" "$WORK/dw.want" &&
		! cmp -s "$WORK/dw.none" "$WORK/dw.want"; then
		ok "$what: a --call-graph dwarf recording whose binary is gone unwinds with the executable debuginfod serves: chains and names equal perf script's from before ($(wc -l <"$WORK/dw.want") stacks)"
	else
		notok "$what: DWARF unwinding with the served executable: $(diff "$WORK/dw.got" "$WORK/dw.want" | head -4 | tr '\n' ' ') $(head -c 200 "$WORK/dw.err")"
	fi
fi

# ------------------------------------------------------------- stop
pids="$dfd_pid $hang_pid $tls_pid"
kill "$dfd_pid" 2>/dev/null
t0=$(ms_now)
for _ in $(seq 50); do
	alive "$dfd_pid" || break
	sleep 0.1
done
term_ms=$(( $(ms_now) - t0 ))
stop_servers
left=""
for p in $pids; do
	kill -0 "$p" 2>/dev/null && left="$left $p"
done
if [ -z "$left" ] && [ "$term_ms" -lt 5000 ]; then
	ok "$what: debuginfod exits on SIGTERM ($term_ms ms); it and the other test servers are gone"
else
	notok "$what: servers left:${left:- none}; debuginfod took $term_ms ms after SIGTERM"
fi
