# test_faults.sh - faults injected around a serving perflens-mcp (stdio):
# the artifact root's disk full (a small tmpfs) and read-only (a read-only
# bind mount) for analyses, exports, reports and benchmarks, and for
# collections (collect_profile with real perf, cpu-clock; agent sessions
# are test_agent_link.sh's "full sessions folder" case); few file
# descriptors (ulimit -n) and little address space (RLIMIT_AS) in the
# server and its workers; workers SIGKILLed at random points of many calls;
# the server SIGKILLed while it writes.  Each shows a clear error, no
# partial file under a final name, and the next call working once the
# fault is gone; the oracle for "complete" is the analysis id recomputed
# from the two files as docs say it is made (SHA-256 of the stack table's
# and the summary's SHA-256s, the summary's id read as the placeholder).
# Mounting needs root (skip otherwise); RLIMIT_AS is skipped under ASan,
# whose shadow memory cannot live under such a limit.
. tests/integration/lib.sh
server="$(cd "$BUILD" && pwd)/perflens-mcp"

WORK="$WORK" timeout "${MCP_TEST_TIMEOUT:-400}" python3 - "$server" <<'PY'
import glob, hashlib, json, os, random, re, signal, subprocess, sys, time
sys.path.insert(0, os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration"))
from mcp_client import *  # the shared MCP test client (mcp_client.py)

SERVER = sys.argv[1]
IN = os.path.join(WORK, "in")
os.makedirs(IN)
random.seed(17)
ROOT_USER = os.geteuid() == 0
asan = b"__asan_init" in open(SERVER, "rb").read()

# A profile of 20,000 distinct call paths: its artifacts take a few MB and
# its analysis long enough (a few hundred ms) to be hit mid-write.
with open(os.path.join(IN, "big.folded"), "w") as f:
    for i in range(20000):
        depth = 4 + i % 9
        f.write(";".join("fn_%d_%d" % (k, (i * 7919 + k * 104729) % 613) for k in range(depth)) + " %d\n" % (1 + i % 13))
with open(os.path.join(IN, "small.folded"), "w") as f:
    f.write("main;work;leaf 5\nmain;idle 2\n")
BIG, SMALL = os.path.join(IN, "big.folded"), os.path.join(IN, "small.folded")
PLACEHOLDER = "an-00000000000000000000"


def sh(*argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def start(root, name, pre=None, extra=()):
    argv = [SERVER, "--allowed-root", IN, "--artifact-root", root, "--allow-writes"] + list(extra)
    s = Stdio(argv if not pre else ["sh", "-c", pre + ' && exec "$@"', "sh"] + argv, name)
    s.initialize()
    return s


def result(r):
    return (r or {}).get("result", {})


def err_of(r):
    return result(r).get("_meta", {}).get("perflens/error", {})


def is_error(r):
    return bool(result(r).get("isError")) or "error" in (r or {})


def content_id_ok(summary_path):
    """The analysis id recomputed from its two files."""
    aid = os.path.basename(summary_path)[:-len(".json")]
    stacks = summary_path[:-len(".json")] + ".stacks.json"
    if not os.path.exists(stacks):
        return False, "no stack table beside it"
    s = open(summary_path, "rb").read()
    if aid.encode() not in s[:512]:
        return False, "its id is not in its first bytes"
    s = s.replace(aid.encode(), PLACEHOLDER.encode(), 1)
    both = hashlib.sha256(open(stacks, "rb").read()).digest() + hashlib.sha256(s).digest()
    want = "an-" + hashlib.sha256(both).hexdigest()[:20]
    return want == aid, "recomputed %s" % want


def final_files(root):
    """Files under a final name: analyses/an-*.json (+ .stacks.json),
    exports/*, benchmarks/bm-*.json; temporaries are dot files or pending.*"""
    out = []
    for p in glob.glob(os.path.join(root, "*", "*")):
        b = os.path.basename(p)
        if os.path.isfile(p) and not b.startswith(".") and not b.startswith("pending") and ".tmp" not in b:
            out.append(os.path.relpath(p, root))
    return sorted(out)


def all_files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


def complete(root):
    """(ok, why): every final analysis' id recomputes; nothing else is
    truncated (JSON that parses)."""
    for rel in final_files(root):
        p = os.path.join(root, rel)
        if rel.startswith("analyses/") and rel.endswith(".json") and not rel.endswith(".stacks.json"):
            good, why = content_id_ok(p)
            if not good:
                return False, "%s: %s" % (rel, why)
        # A stack table without its summary (renamed last) is what a
        # write killed between its two renames leaves: not an analysis,
        # and never listed (checked after the crashes).
        if rel.endswith(".json"):
            try:
                json.load(open(p))
            except Exception as e:
                return False, "%s does not parse: %s" % (rel, e)
    return True, ""


def exercise(s, aid, what):
    """Analysis, export, report and benchmark under a fault: each an error."""
    calls = [("analyze_profile", {"path": BIG}),
             ("export_profile", {"analysis_id": aid, "format": "svg"}),
             ("build_report", {"analysis_id": aid, "problem": "slow", "metric": "wall time"}),
             ("normalize_benchmark", {"format": "values", "values": [1.0, 2.0, 3.0], "name": "x",
                                      "unit": "ops/s", "direction": "higher_is_better"})]
    out = {}
    for name, args in calls:
        r = s.call(name, args, timeout=60)
        e = err_of(r)
        out[name] = r
        check("%s: %s fails with a clear error (%s)" % (what, name, e.get("code")),
              is_error(r) and e.get("code") == "output_refused" and e.get("hint"), short(r, 500))
    return out


def recover(s, what):
    r = s.call("analyze_profile", {"path": BIG}, timeout=120)
    aid = result(r).get("structuredContent", {}).get("analysis_id")
    check("%s: once the fault is gone, analyze_profile works" % what, aid, short(r))
    r2 = s.call("export_profile", {"analysis_id": aid or "x", "format": "svg"}, timeout=60)
    check("%s: ... and so does export_profile" % what, not is_error(r2), short(r2))
    r3 = s.call("normalize_benchmark", {"format": "values", "values": [1.0, 2.0], "name": "x",
                                        "unit": "ops/s", "direction": "higher_is_better"})
    check("%s: ... and normalize_benchmark" % what, not is_error(r3), short(r3))


# ------------------------------------------------------------- disk full
def fill(root):
    """Fill what is left of the tmpfs at root with root/filler (a little
    at a time: tmpfs accounts pages)."""
    fd = os.open(os.path.join(root, "filler"), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while os.write(fd, b"\0" * 4096) > 0:
            pass
    except OSError:
        pass
    os.close(fd)


def small_tmpfs(name, size, what):
    """WORK/name with a tmpfs of `size` mounted on it, or None (skipped)."""
    root = os.path.join(WORK, name)
    os.makedirs(root)
    m = sh("mount", "-t", "tmpfs", "-o", "size=" + size, "perflens-" + name, root)
    if m.returncode:
        print("skip - %s: cannot mount a tmpfs: %s" % (what, m.stdout.strip()))
        return None
    return root


def disk_full():
    root = small_tmpfs("full", "1m", "disk full")
    if not root:
        return
    try:
        s = start(root, "disk-full")
        r = s.call("analyze_profile", {"path": SMALL})
        aid = result(r).get("structuredContent", {}).get("analysis_id", "an-00000000000000000001")
        before = final_files(root)
        fill(root)
        exercise(s, aid, "disk full")
        after = [p for p in final_files(root) if p != "filler"]
        check("disk full: no new file under a final name", after == [p for p in before if p != "filler"],
              "before %s after %s" % (before, after))
        left = [p for p in all_files(root) if p != "filler" and p not in before]
        check("disk full: no temporary file is left behind", not left, left)
        check("disk full: the server still answers ping", s.ping_ms() is not None, s.stderr())
        os.unlink(os.path.join(root, "filler"))
        sh("mount", "-o", "remount,size=64m", root)
        recover(s, "disk full")
        good, why = complete(root)
        check("disk full: every artifact is complete", good, why)
        s.close()
    finally:
        sh("umount", "-l", root)


# ---------------------------------------------------------- read-only root
def read_only():
    root = os.path.join(WORK, "ro")
    os.makedirs(root)
    s = start(root, "read-only")
    r = s.call("analyze_profile", {"path": SMALL})
    aid = result(r).get("structuredContent", {}).get("analysis_id", "an-00000000000000000001")
    before = all_files(root)
    m = sh("mount", "--bind", root, root)
    if m.returncode:
        print("skip - read-only root: cannot bind-mount: %s" % m.stdout.strip())
        s.close()
        return
    try:
        m = sh("mount", "-o", "remount,bind,ro", root)
        if m.returncode:
            print("skip - read-only root: cannot remount read-only: %s" % m.stdout.strip())
            return
        exercise(s, aid, "read-only root")
        check("read-only root: nothing was written", all_files(root) == before,
              "before %s after %s" % (before, all_files(root)))
        r = s.call("list_hotspots", {"analysis_id": aid})
        check("read-only root: reading an analysis still works", not is_error(r), short(r))
        sh("mount", "-o", "remount,bind,rw", root)
        recover(s, "read-only root")
    finally:
        sh("umount", "-l", root)
        s.close()


# ------------------------------------------------------------ collections
AUTH = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
COLLECT = ["--allow-collection", "--allow-process-execution"]


def perf_records():
    """Why real perf cannot record here, or None."""
    probe = os.path.join(WORK, "probe.data")
    r = sh("perf", "record", "-e", "cpu-clock", "-g", "-N", "-o", probe, "--", "true")
    return None if r.returncode == 0 else "perf cannot record here: %s" % r.stdout.strip()[-200:]


def collection_dirs(root):
    """collections/ID folders (a staging folder starts with a dot)."""
    d = os.path.join(root, "collections")
    return sorted(e for e in os.listdir(d) if os.path.isdir(os.path.join(d, e))) if os.path.isdir(d) else []


def collect(s):
    exe = os.path.join(IN, "fib")
    return s.call("collect_profile", {"executable": exe, "authorization": AUTH, "call_graph": "fp"}, timeout=120)


def collect_fails(s, root, what):
    before = all_files(root)
    r = collect(s)
    e = err_of(r)
    check("%s: collect_profile fails with a clear error (%s: %s)" % (what, e.get("code"), e.get("message", "")[:80]),
          is_error(r) and e.get("code") == "output_refused" and e.get("hint"), short(r, 500))
    check("%s: no collection folder, staging folder or file is left" % what,
          all_files(root) == before and not [d for d in collection_dirs(root) if d.startswith(".")],
          "new: %s" % [p for p in all_files(root) if p not in before])
    check("%s: the server still answers ping" % what, s.ping_ms() is not None, s.stderr())


def collect_works(s, root, what):
    r = collect(s)
    cid = result(r).get("structuredContent", {}).get("collection_id")
    files = result(r).get("structuredContent", {}).get("files") or []
    check("%s: collect_profile works (%s)" % (what, cid),
          cid and cid in collection_dirs(root), short(r))
    data = os.path.join(root, "collections", cid or "x", "perf.data")
    rep = sh("perf", "report", "-i", data, "--stdio", "--header-only") if cid else None
    check("%s: ... and its perf.data is whole (perf report reads it)" % what,
          rep is not None and rep.returncode == 0 and files, rep and rep.stdout[-300:])


def collections():
    why = perf_records()
    if why:
        print("skip - collections under faults: %s" % why)
        return
    fib = os.path.join(IN, "fib")
    src = os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "workloads", "fib.c")
    if sh("gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-o", fib, src).returncode:
        check("collections: build the workload (gcc fib.c)", False)
        return
    # Disk full: perf writes its perf.data into the staging folder.
    root = small_tmpfs("cfull", "64m", "collections, disk full")
    if not root:
        return
    try:
        s = start(root, "collect-full", extra=COLLECT)
        collect_works(s, root, "collections, before the disk fills")
        fill(root)
        collect_fails(s, root, "collections, disk full")
        os.unlink(os.path.join(root, "filler"))
        collect_works(s, root, "collections, disk full, once space is back")
        s.close()
    finally:
        sh("umount", "-l", root)
    # Read-only: the collections folder exists, nothing may be made in it.
    root = os.path.join(WORK, "cro")
    os.makedirs(root)
    s = start(root, "collect-ro", extra=COLLECT)
    collect_works(s, root, "collections, before the root is made read-only")
    if sh("mount", "--bind", root, root).returncode:
        print("skip - collections, read-only root: cannot bind-mount")
        s.close()
        return
    try:
        if sh("mount", "-o", "remount,bind,ro", root).returncode == 0:
            collect_fails(s, root, "collections, read-only root")
            sh("mount", "-o", "remount,bind,rw", root)
            collect_works(s, root, "collections, read-only root, once writable again")
    finally:
        sh("umount", "-l", root)
        s.close()


# ------------------------------------------------- descriptors and memory
def limits():
    root = os.path.join(WORK, "lim")
    for n in (16, 24, 40):
        try:
            s = start(root, "nofile-%d" % n, "ulimit -n %d" % n)
        except Exception as e:
            check("ulimit -n %d: the server starts or refuses clearly" % n, False, e)
            continue
        answered = 0
        for name, args in [("analyze_profile", {"path": BIG}), ("list_artifacts", {}),
                           ("analyze_profile", {"path": SMALL})]:
            r = s.call(name, args, timeout=90)
            answered += r is not None
        check("ulimit -n %d: every call is answered (result or error)" % n, answered == 3, s.stderr())
        check("ulimit -n %d: the server then answers ping" % n, s.ping_ms() is not None, s.stderr())
        s.close()
    if asan:
        print("skip - RLIMIT_AS: an ASan build cannot run under an address-space limit")
        return
    for mb in (200, 400):
        s = start(root, "as-%d" % mb, "ulimit -v %d" % (mb * 1024))
        r = s.call("analyze_profile", {"path": BIG}, timeout=120)
        check("RLIMIT_AS %d MB: analyze_profile answers (result or error)" % mb, r is not None, s.stderr())
        if is_error(r):
            check("RLIMIT_AS %d MB: the error is a resource or internal one, with a hint" % mb,
                  err_of(r).get("code") in ("limit_exceeded", "internal") and err_of(r).get("hint"), short(r))
        check("RLIMIT_AS %d MB: the server then answers ping" % mb, s.ping_ms() is not None, s.stderr())
        s.close()


# --------------------------------------------- workers killed mid-call
def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def kill_workers():
    root = os.path.join(WORK, "kill")
    s = start(root, "kill-workers")
    pid = s.p.pid
    s.call("list_artifacts", {})
    time.sleep(0.3)
    fds0 = fd_count(pid)
    answered, killed, slow, errors = 0, 0, [], 0
    N = 40
    for i in range(N):
        rid = "k%d" % i
        s.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                "params": {"name": "analyze_profile", "arguments": {"path": BIG}}})
        # The analysis takes some 100 ms: most kills land inside it.
        time.sleep(random.uniform(0.0, 0.1))
        for w in children(pid):
            try:
                os.kill(w, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
        t0 = time.time()
        r = s.wait_for(rid, timeout=60)
        if r is not None:
            answered += 1
            errors += is_error(r)
        if time.time() - t0 > 30:
            slow.append(i)
    check("killed workers: every one of %d calls is answered (%d workers killed, %d error results)" % (N, killed, errors),
          answered == N, "%d answered; %s" % (answered, s.stderr()))
    check("killed workers: no call waits more than 30 s after its kill", not slow, slow)
    # The zygote reaps killed workers off the caller's path: wait for it.
    def zombies_left():
        return [p for p, st in processes().items() if st[0] == "Z" and (st[1] == pid or st[1] in children(pid))]
    until(lambda: not zombies_left(), 5 * SCALE)
    zombies = zombies_left()
    check("killed workers: no zombie is left", not zombies, zombies)
    for _ in range(20):
        if fd_count(pid) <= fds0:
            break
        time.sleep(0.2)
    check("killed workers: the server holds as many descriptors as before (%d)" % fds0,
          fd_count(pid) <= fds0, "now %d: %s" % (fd_count(pid), os.listdir("/proc/%d/fd" % pid)))
    check("killed workers: the server then answers ping", s.ping_ms() is not None, s.stderr())
    good, why = complete(root)
    check("killed workers: every artifact left is complete", good, why)
    s.close()


# ------------------------------------------- the server killed mid-write
def kill_server():
    root = os.path.join(WORK, "crash")
    bad = []
    for i in range(8):
        s = start(root, "crash-%d" % i)
        s.send({"jsonrpc": "2.0", "id": "w", "method": "tools/call",
                "params": {"name": "analyze_profile", "arguments": {"path": BIG}}})
        time.sleep(random.uniform(0.02, 0.3))
        os.kill(s.p.pid, signal.SIGKILL)
        s.p.wait()
        # Its workers go with it (they may finish the write they started).
        for _ in range(50):
            if not [p for p, st in processes().items() if st[1] == s.p.pid]:
                break
            time.sleep(0.1)
        good, why = complete(root)
        if not good:
            bad.append("round %d: %s" % (i, why))
    check("server SIGKILLed during writes (8 rounds): every artifact is complete or absent", not bad, bad)
    s = start(root, "after-crash")
    r = s.call("list_artifacts", {})
    listed = [a["path"] for a in result(r).get("structuredContent", {}).get("artifacts", [])]
    check("after the crashes: list_artifacts answers (%d artifacts)" % len(listed), not is_error(r), short(r))
    orphans = [p for p in listed if p.endswith(".stacks.json") and p[:-len(".stacks.json")] + ".json" not in listed]
    check("after the crashes: no stack table is listed without its summary", not orphans, orphans)
    ids = [p.split("/")[1][:-5] for p in listed if p.startswith("analyses/") and not p.endswith(".stacks.json")]
    loads = [s.call("list_hotspots", {"analysis_id": a}) for a in ids]
    check("after the crashes: every listed analysis loads", all(not is_error(x) for x in loads),
          [short(x) for x in loads if is_error(x)][:2])
    recover(s, "after the crashes")
    s.close()


if ROOT_USER:
    disk_full()
    read_only()
    collections()
else:
    print("skip - disk full and read-only root: mounting needs root")
limits()
kill_workers()
kill_server()
sys.exit(0)
PY
