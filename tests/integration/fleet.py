#!/usr/bin/env python3
"""fleet.py - the fleet store through perflens-mcp as an agent uses it.

A ClickHouse server on loopback (its own folder and ports), a perflens-mcp
with the agent link and --fleet-store, and eight fake agents with two
firmware labels: the 1.4.2 ones send a chunk where one function
(cpu_intensive) has extra samples.  Oracles are the spooled chunks
themselves, decompressed with the zstd command and counted here: per
device samples, and per function leaf samples of the cycles event.
Checked: fleet_init creates the tables; fleet_publish sends every chunk;
fleet_devices' samples per device equal the chunks'; fleet_hotspots' self
samples per function equal the chunks' leaf counts; a label selection
names the function that changed and no other; publishing again sends
nothing; chunks replayed (marks removed) count once; the store killed
mid-ingest is an error naming it, and once restarted the publish
completes with every total still equal.  Also: fleet_compare with a view
(each side as fleet_hotspots' view cuts it), view.tid and view.time
refused; a capture whose later chunks reach the spool two hours late is
in the minutes of its samples' times (the oracle: perf's time column on
the clock its first chunk anchors, counted here); an agent named by its
hello's device label reconnecting is one device; an old month dropped
by partition goes alone.
"""
import collections, glob, json, os, re, shutil, signal, socket, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa

SERVER, CHUNK = sys.argv[1:3]
WORK = os.environ["WORK"]
CH = os.environ["CH"]
HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = [sys.executable, os.path.join(HERE, "fake_agent.py")]
CODE = "fleet-" + os.urandom(6).hex()
AUTH = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
PAUTH = "I_EXPLICITLY_AUTHORIZE_PID_ATTACH"
HEADER = re.compile(r"^\S.*\s\d+\.\d+:\s+\d+\s+(\S+):\s*$")
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)$")
procs = []


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start_clickhouse(d, http, tcp, extra=""):
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "config.xml"), "w").write(
        "<?xml version=\"1.0\"?><yandex><logger><level>warning</level><log>%s/server.log</log>"
        "<errorlog>%s/err.log</errorlog><console>0</console></logger><http_port>%d</http_port>"
        "<tcp_port>%d</tcp_port><listen_host>127.0.0.1</listen_host><path>%s/data/</path>"
        "<tmp_path>%s/tmp/</tmp_path><users_config>%s/users.xml</users_config>"
        "<default_profile>default</default_profile><default_database>default</default_database>"
        "<mark_cache_size>5368709</mark_cache_size><timezone>UTC</timezone>%s</yandex>"
        % (d, d, http, tcp, d, d, d, extra))
    open(os.path.join(d, "users.xml"), "w").write(
        "<?xml version=\"1.0\"?><yandex><profiles><default><max_memory_usage>2000000000</max_memory_usage>"
        "</default></profiles><users><default><password></password><networks><ip>127.0.0.1</ip></networks>"
        "<profile>default</profile><quota>default</quota></default></users><quotas><default></default>"
        "</quotas></yandex>")
    p = subprocess.Popen([CH, "--config-file=" + os.path.join(d, "config.xml")], cwd=d,
                         stdout=open(os.path.join(d, "out.log"), "a"), stderr=subprocess.STDOUT)
    procs.append(p)
    url = "http://127.0.0.1:%d/" % http
    ok = until(lambda: subprocess.run(["curl", "-sf", url + "?query=SELECT%201"], capture_output=True)
               .stdout.strip() == b"1", 90, 0.2)
    return p if ok else None


def ch_query(http, q):
    return subprocess.run(["curl", "-s", "--data-binary", q, "http://127.0.0.1:%d/" % http],
                          capture_output=True).stdout.decode()


def chunk_text(path):
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-d", "-c", path], capture_output=True).stdout.decode(errors="replace")
    return open(path, errors="replace").read()


def chunk_samples(path):
    """Samples in one spooled chunk: its text counted, or a perf.data
    chunk (extension 4) through perf script, one line a sample."""
    if path.endswith(".perf.zst"):
        data = subprocess.run(["zstd", "-d", "-c", path], capture_output=True).stdout
        out = subprocess.run(["perf", "script", "-i", "-", "-F", "tid", "-G"], input=data, capture_output=True).stdout
        return sum(1 for l in out.decode(errors="replace").splitlines() if l.strip())
    return count(chunk_text(path))[0]


def count(text):
    """(samples of every event, leaf (function, dso) counts of cycles)"""
    samples, leaves, event, want_leaf = 0, collections.Counter(), None, False
    for line in text.split("\n"):
        if line.startswith("### PERF_STAT ###"):
            break
        m = HEADER.match(line)
        if m:
            samples += 1
            event, want_leaf = m.group(1), True
            continue
        f = FRAME.match(line)
        if f and want_leaf:
            want_leaf = False
            if event == "cycles":
                name = re.sub(r"\+0x[0-9a-f]+$", "", f.group(1))
                leaves[(name, f.group(2))] += 1
    return samples, leaves


def device_of(m):
    """The fleet's device of a session (docs/fleet.md): the hello's device label, its platform's hostname,
    else the link's id."""
    return ((m.get("labels") or {}).get("device") or (m.get("platform") or {}).get("hostname")
            or m["agent"])


SAMPLE_TIME = re.compile(r"^\S.*\s(\d+)\.(\d+):\s+\d+\s+\S+:\s*$")


def sample_times_ns(text):
    """Every sample's time (perf's clock, ns), in order."""
    out = []
    for line in text.split("\n"):
        if line.startswith("### PERF_STAT ###"):
            break
        t = SAMPLE_TIME.match(line)
        if t:
            out.append(int(t.group(1)) * 10**9 + int(t.group(2).ljust(9, "0")[:9]))
    return out


def make_hot_chunk(src, dst, function, copies):
    """src's samples plus `copies` extra copies of each whose leaf is `function`, then its perf stat."""
    text = open(src).read()
    samples, mark, stat = text.partition("### PERF_STAT ###")
    blocks = [b for b in samples.strip("\n").split("\n\n") if b.strip()]
    hot = [b for b in blocks if len(b.split("\n")) > 1 and re.search(r"\s%s\s" % function, b.split("\n")[1])]
    open(dst, "w").write("\n\n".join(blocks + hot * copies) + "\n\n" + mark + stat)
    return len(hot)


def fake(port, name, *args):
    out = os.path.join(WORK, name + ".out")
    p = subprocess.Popen(FAKE + ["--server", "127.0.0.1:%d" % port, "--code", CODE] + list(args),
                         stdout=open(out, "w"), stderr=subprocess.STDOUT)
    procs.append(p)
    return p


def settled(art, timeout=20):
    """Every capture's session of `art` finalized (a stop's 2 s grace over): its chunks are all in the spool.
    (A session of metrics only, opened after a stop, stays live.)"""
    def f():
        metas = [json.load(open(mp)) for mp in glob.glob(os.path.join(art, "sessions", "*", "metadata.json"))]
        return metas and all(m.get("live") is False for m in metas if m.get("chunks") or m.get("capture"))
    return until(f, timeout, 0.25)


def session_dir(art, key, value):
    """The folder of the session with chunks whose hello labels have key=value."""
    return next((os.path.dirname(mp) for mp in sorted(glob.glob(os.path.join(art, "sessions", "*", "metadata.json")))
                 if (json.load(open(mp)).get("labels") or {}).get(key) == value and
                 glob.glob(os.path.join(os.path.dirname(mp), "chunk_*"))), "none")


def devices_listed(s):
    """Every device list_devices lists, page after page: its default page is
    20 devices, and this server sees more (a new agent's id, address_port,
    sorts by its ephemeral port, often past the first page)."""
    out, cursor = [], None
    for _ in range(50):
        r = sc(s.call("list_devices", dict({"limit": 100}, **({"cursor": cursor} if cursor else {}))))
        out += r.get("devices", [])
        cursor = (r.get("page") or {}).get("next_cursor")
        if not cursor:
            break
    return out


def devices_connected(s, n):
    def f():
        ds = [d for d in devices_listed(s) if d["state"] == "connected"]
        return ds if len(ds) >= n else None
    return until(f, 20, 0.2)


try:
    http, tcp = free_port(), free_port()
    chdir = os.path.join(WORK, "ch")
    ch = start_clickhouse(chdir, http, tcp)
    if not ch:
        print("skip - fleet: clickhouse-server did not answer on 127.0.0.1:%d within 30 s (see %s)" % (http, chdir))
        sys.exit(0)
    url = "http://127.0.0.1:%d/fleet" % http
    art = os.path.join(WORK, "art")
    code_file = os.path.join(WORK, "code")
    open(code_file, "w").write(CODE + "\n")
    hot = os.path.join(WORK, "hot.txt")
    nhot = make_hot_chunk(CHUNK, hot, "cpu_intensive", 3)
    noisy = os.path.join(WORK, "noisy.txt")
    make_hot_chunk(CHUNK, noisy, "random", 20)
    s = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", art, "--allow-writes", "--agent-listen",
               "127.0.0.1:0", "--agent-pairing-code-file", code_file, "--allow-device-control",
               "--fleet-store", url, "--fleet-label", "site=lab", "--fleet-publish-interval-ms", "0"], "fleet")
    s.initialize()
    names, cursor = [], None
    while True:
        res = s.request("tools/list", {"cursor": cursor} if cursor else {})["result"]
        names += [t["name"] for t in res["tools"]]
        cursor = res.get("nextCursor")
        if not cursor:
            break
    listed = {}
    cursor = None
    while True:
        res = s.request("tools/list", {"cursor": cursor} if cursor else {})["result"]
        listed.update({t["name"]: t for t in res["tools"]})
        cursor = res.get("nextCursor")
        if not cursor:
            break
    fa_out = json.loads(json.dumps(listed.get("fleet_analyze", {}).get("outputSchema", {})))
    fa_out.get("properties", {}).pop("fleet_selection", None)
    if "fleet_selection" in fa_out.get("required", []):
        fa_out["required"].remove("fleet_selection")
    check("fleet_analyze's output schema is analyze_profile's and its fleet_selection",
          fa_out == listed.get("analyze_profile", {}).get("outputSchema"), "regenerate schemas/tools/fleet_analyze.json")
    fleet_read = len(json.dumps([{"name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"]}
                                 for n_, t in sorted(listed.items()) if n_.startswith("fleet_")],
                                separators=(",", ":")).encode())
    check("the fleet tools add %d bytes to what a model reads of tools/list (<= 5 KB)" % fleet_read,
          fleet_read <= 5 * 1024)
    check("the fleet tools are listed with --fleet-store (%s)" % [n for n in names if n.startswith("fleet")],
          all(n in names for n in ("fleet_init", "fleet_publish", "fleet_devices", "fleet_hotspots")), names)
    r = s.call("fleet_hotspots", {})
    check("before fleet_init, a fleet tool's error names it", is_tool_error(r, "fleet-init"), result_text(r)[:300])
    r = sc(s.call("fleet_init", {}))
    tables = ch_query(http, "SHOW TABLES FROM fleet").split()
    check("fleet_init creates the tables (%s), version %s" % (tables, r.get("schema_version")),
          {"chunks_local", "samples_local", "stacks_local", "frames_local"} <= set(tables) and r.get("created"), r)
    port = link_port(s)
    n = 16
    for i in range(n):
        fw = "1.4.2" if i % 2 else "1.4.1"
        fake(port, "a%d" % i, "--chunk", hot if fw == "1.4.2" else noisy if i == 0 else CHUNK, "--interval", "0.5",
             "--build-id", "/root/perflens-test/sample_workload=%s" % ("b142" * 5 if fw == "1.4.2" else "a141" * 5),
             "--label", "firmware=" + fw, "--label", "board=b%d" % i, "--max-chunks", "3")
    devs = devices_connected(s, n) or []
    check("%d fake agents connected" % n, len(devs) == n, devs)
    for d in devs:
        s.call("start_capture", {"device": d["device"], "pid": 1, "frequency_hz": 99, "interval_seconds": 1,
                                 "authorization": AUTH, "pid_authorization": PAUTH}, timeout=60)
    time.sleep(3)
    for d in devs:
        s.call("stop_capture", {"device": d["device"]}, timeout=60)
    # the oracle: the spooled chunks, counted from their text
    per_dev, leaves, fw_leaves, fw_total = collections.Counter(), collections.Counter(), {}, collections.Counter()
    nchunks, fw_chunks = 0, collections.Counter()
    for meta in glob.glob(os.path.join(art, "sessions", "*", "metadata.json")):
        m = json.load(open(meta))
        fw = (m.get("labels") or {}).get("firmware")
        for c in sorted(glob.glob(os.path.join(os.path.dirname(meta), "chunk_*"))):
            nsamp, lv = count(chunk_text(c))
            nchunks += 1
            fw_chunks[fw] += 1
            per_dev[device_of(m)] += nsamp
            leaves.update(lv)
            fw_leaves.setdefault(fw, collections.Counter()).update(lv)
            fw_total[fw] += sum(lv.values())
    r = sc(s.call("fleet_publish", {}, timeout=120))
    check("fleet_publish sends every spooled chunk (%s of %d; %s samples)" % (r.get("published_chunks"), nchunks,
          r.get("published_samples")), r.get("published_chunks") == nchunks and r.get("pending_chunks") == 0 and
          r.get("published_samples") == sum(per_dev.values()), r)

    def fleet_devices():
        out, args = [], {"limit": 100}
        r = sc(s.call("fleet_devices", args))
        out += r.get("devices", [])
        return {d["device"]: d for d in out}

    # every next step the fleet tools propose, sent as given, answers
    proposed = []
    for name, args in (("fleet_devices", {"limit": 5}), ("fleet_hotspots", {"limit": 5}),
                       ("fleet_compare", {"a": ["firmware=1.4.1"], "b": ["firmware=1.4.2"]})):
        proposed += [(name, st) for st in sc(s.call(name, args, timeout=120)).get("next_steps", [])]
    failed = [(n, st["tool"]) for n, st in proposed if is_tool_error(s.call(st["tool"], st["arguments"], timeout=120))]
    check("every next step of fleet_devices, fleet_hotspots and fleet_compare answers when sent (%d: %s)"
          % (len(proposed), sorted({st["tool"] for _, st in proposed})), not failed, failed)
    fd = fleet_devices()
    check("fleet_devices: per-device samples equal the chunks' (%d devices, %d samples)" %
          (len(fd), sum(d["samples"] for d in fd.values())),
          {k: v["samples"] for k, v in fd.items()} == dict(per_dev), (fd, per_dev))
    some = next(iter(fd.values()), {})
    check("fleet_devices: labels carry the agent's, the platform's and the operator's (%s)" % some.get("labels"),
          any(l.startswith("firmware=") for l in some.get("labels", [])) and "site=lab" in some.get("labels", [])
          and "arch=x86_64" in some.get("labels", []), some)

    bids = sorted({l for d in fd.values() for l in d["labels"] if l.startswith("build_id.")})
    check("the sampled module's build-ids are labels, from the agents' maps (%s)" % bids,
          bids == ["build_id.sample_workload=" + "a141" * 5, "build_id.sample_workload=" + "b142" * 5], bids)

    def hotspots(**sel):
        args = {"event": "cycles", "limit": 100}
        args.update(sel)
        r = sc(s.call("fleet_hotspots", args, timeout=120))
        return r, {(h["function"], h["dso"]): h for h in r.get("hotspots", [])}

    r, hs = hotspots()
    want = {k: v for k, v in leaves.items()}
    got = {k: h["self_samples"] for k, h in hs.items() if h["self_samples"]}
    check("fleet_hotspots: self samples per function equal the chunks' leaf counts (%d functions, top %s)"
          % (len(got), r.get("hotspots", [{}])[0].get("function")), got == want,
          sorted(set(got.items()) ^ set(want.items()))[:10])
    check("fleet_hotspots: every function's devices count is of the %d devices" % n,
          r.get("devices") == n and all(1 <= h["devices"] <= n for h in hs.values()), r.get("devices"))

    def share(fw):
        r, hs = hotspots(labels=["firmware=" + fw])
        return {k[0]: h["self_percent"] for k, h in hs.items()}, r

    a, ra = share("1.4.1")
    b, rb = share("1.4.2")
    diff = {f: b.get(f, 0) - a.get(f, 0) for f in set(a) | set(b)}
    up = [f for f, d in diff.items() if d > 2.0]
    oracle = {fw: 100.0 * fw_leaves[fw][next(k for k in fw_leaves[fw] if k[0] == "cpu_intensive")] / fw_total[fw]
              for fw in fw_leaves if fw}
    check("a label selection: firmware 1.4.2 makes cpu_intensive hotter (%.1f%% vs %.1f%%; the chunks say %s) and no "
          "other function gains over 2 points (%s)" % (b.get("cpu_intensive", 0), a.get("cpu_intensive", 0),
          {k: round(v, 1) for k, v in oracle.items()}, up),
          up == ["cpu_intensive"] and abs(b["cpu_intensive"] - oracle["1.4.2"]) < 0.01 and
          abs(a["cpu_intensive"] - oracle["1.4.1"]) < 0.01, diff)
    # fleet_compare: the rate of each function per second of capture (each chunk
    # covers the capture's 1 s interval), pooled and per device
    r = sc(s.call("fleet_compare", {"a": ["firmware=1.4.1"], "b": ["firmware=1.4.2"], "event": "cycles"},
                  timeout=120))
    ch_ = {c["function"]: c for c in r.get("changes", [])}
    changed = sorted(f for f, c in ch_.items() if c["verdict"] == "changed")
    rate = {fw: sum(v for k, v in fw_leaves[fw].items() if k[0] == "cpu_intensive") / fw_chunks[fw]
            for fw in ("1.4.1", "1.4.2")}
    ci = ch_.get("cpu_intensive", {})
    check("fleet_compare names cpu_intensive changed and no other (%s; %s: %.1f -> %.1f samples/s, the chunks say "
          "%.1f -> %.1f, p %.2g)" % (changed, r.get("measure"), ci.get("a", -1), ci.get("b", -1), rate["1.4.1"],
                                     rate["1.4.2"], ci.get("p_value", 1)),
          changed == ["cpu_intensive"] and r.get("measure") == "samples_per_second" and
          abs(ci.get("a", -1) - rate["1.4.1"]) < 0.01 and abs(ci.get("b", -1) - rate["1.4.2"]) < 0.01,
          r.get("changes"))
    rb = sc(s.call("fleet_compare", {"a": ["build_id.sample_workload=" + "a141" * 5],
                                     "b": ["build_id.sample_workload=" + "b142" * 5], "event": "cycles"}, timeout=120))
    changed_b = sorted(c["function"] for c in rb.get("changes", []) if c["verdict"] == "changed")
    check("fleet_compare by build-id (the chunks after each agent's maps) names cpu_intensive changed and no "
          "other (%s)" % changed_b, changed_b == ["cpu_intensive"], rb.get("changes"))
    rn = ch_.get("random", {})
    check("fleet_compare: random, hot on one 1.4.1 board only, moved pooled (%.1f -> %.1f samples/s) but is "
          "noisy, not changed (p %.2g; side a's devices %s)" % (rn.get("a", -1), rn.get("b", -1),
          rn.get("p_value", -1), rn.get("a_devices")), rn.get("verdict") == "noisy", r.get("changes"))
    # the viewer's Fleet page in Chromium, against fleet_compare's answer
    node = os.environ.get("NODE", "")
    if not node or not os.path.exists("/usr/bin/chromium"):
        print("skip - fleet viewer: %s" % (os.environ.get("NODE_WHY") or "no /usr/bin/chromium"))
    else:
        h = Http([SERVER, "--allowed-root", WORK, "--artifact-root", os.path.join(WORK, "art-http"), "--fleet-store",
                  url, "--fleet-publish-interval-ms", "0"], "fleet-http", env={"PERFLENS_TOKEN": "fleet-" + CODE})
        login = until(lambda: next((l.split("viewer (one-time login): ", 1)[1].strip() for l in h.stderr().splitlines()
                                    if "viewer (one-time login): " in l), None), 10) or ""
        out = os.environ.get("OUT", WORK)
        cfg = os.path.join(WORK, "fleet-browser.json")
        json.dump({"login": login, "base": "http://127.0.0.1:%d" % h.port, "chromium": "/usr/bin/chromium",
                   "out": out, "devices": n, "changed": changed, "a": "firmware=1.4.1", "b": "firmware=1.4.2"},
                  open(cfg, "w"))
        res = subprocess.run([node, os.path.join(HERE, "fleet_browser.mjs"), cfg], capture_output=True, text=True,
                             timeout=180, env=dict(os.environ, HOME=WORK))
        sys.stdout.write(res.stdout)
        if res.returncode and "not ok" not in res.stdout:
            print("not ok - fleet viewer: the browser run exited %d: %s" % (res.returncode, res.stderr[-300:]))
        h.p.kill()
    # fleet_analyze: the 1.4.2 selection as an analysis the other tools read
    an = sc(s.call("fleet_analyze", {"labels": ["firmware=1.4.2"], "event": "cycles"}, timeout=120))
    aid = an.get("analysis_id")
    lh = sc(s.call("list_hotspots", {"analysis_id": aid, "event": "samples", "limit": 100}))
    mine = {h["dso"]: h for h in lh.get("hotspots", []) if h.get("symbol") == "cpu_intensive"}
    _, hb = hotspots(labels=["firmware=1.4.2"])
    want_ci = hb.get(("cpu_intensive", "/root/perflens-test/sample_workload"), {}).get("self_percent", -1)
    got_ci = next(iter(mine.values()), {}).get("self", {}).get("percent", -2)
    th = sc(s.call("list_threads", {"analysis_id": aid, "event": "samples", "limit": 100}))
    check("fleet_analyze: the selection is an analysis (%s of %s devices): list_hotspots gives cpu_intensive "
          "%.3f%% as fleet_hotspots does (%.3f%%), list_threads one thread per device (%d)" %
          (aid, an.get("fleet_selection", {}).get("devices"), got_ci, want_ci, len(th.get("threads", []))),
          aid and abs(got_ci - want_ci) < 0.001 + 1e-9 and len(th.get("threads", [])) == n // 2 and
          an.get("fleet_selection", {}).get("samples") == sum(fw_leaves["1.4.2"].values()), (an, lh))
    # a view on the fleet: the same view on fleet_analyze's analysis is the
    # engine's own answer (list_hotspots), the fleet's sums are fleet_hotspots'
    vw = {"focus": "^run_workload$", "hide": "^main$"}
    rv = sc(s.call("fleet_hotspots", {"labels": ["firmware=1.4.2"], "event": "cycles", "view": vw, "limit": 100},
                   timeout=120))
    lv = sc(s.call("list_hotspots", {"analysis_id": aid, "event": "samples", "view": vw, "limit": 100}))
    mine = {h["function"]: h["self_percent"] for h in rv.get("hotspots", []) if h["self_samples"]}
    theirs = {h["symbol"]: h["self"]["percent"] for h in lv.get("hotspots", []) if h["self"]["samples"]}
    theirs = {k: v for k, v in theirs.items() if not k.startswith("[")}
    mine_named = {k: v for k, v in mine.items() if not k.startswith("[")}
    check("fleet_hotspots with a view (focus run_workload, hide main) gives what list_hotspots gives on the "
          "selection's analysis with that view (%d functions, %s of the samples kept)" %
          (len(mine_named), (rv.get("view") or {}).get("percent_of_samples")),
          mine_named and set(mine_named) == set(theirs) and
          all(abs(mine_named[k] - theirs[k]) < 0.001 for k in theirs) and "main" not in mine and
          (rv.get("view") or {}).get("samples") == (lv.get("view") or {}).get("samples"), (mine, theirs))
    r = sc(s.call("fleet_publish", {}))
    check("publishing again sends nothing (%s)" % r.get("published_chunks"), r.get("published_chunks") == 0, r)
    shutil.rmtree(os.path.join(art, "fleet", "published"))
    r = sc(s.call("fleet_publish", {}, timeout=120))
    fd = fleet_devices()
    _, hs2 = hotspots()
    check("chunks replayed (the marks removed: %s sent again) count once" % r.get("published_chunks"),
          r.get("published_chunks") == nchunks and {k: v["samples"] for k, v in fd.items()} == dict(per_dev) and
          {k: h["self_samples"] for k, h in hs2.items() if h["self_samples"]} == want, fd)
    # a view on fleet_compare: each side cut as fleet_hotspots cuts it
    vw = {"hide": "^main$"}
    rcv = sc(s.call("fleet_compare", {"a": ["firmware=1.4.1"], "b": ["firmware=1.4.2"], "event": "cycles",
                                      "view": vw}, timeout=120))
    kept = [sc(s.call("fleet_hotspots", {"labels": [l], "event": "cycles", "view": vw, "limit": 1}, timeout=120))
            .get("view", {}).get("samples", -1) for l in ("firmware=1.4.1", "firmware=1.4.2")]
    changed_v = sorted(c["function"] for c in rcv.get("changes", []) if c["verdict"] == "changed")
    check("fleet_compare with a view (hide main) keeps what fleet_hotspots' view keeps of each side (%s = %s) "
          "and still names cpu_intensive alone (%s)" % ((rcv.get("view") or {}).get("samples"), kept, changed_v),
          (rcv.get("view") or {}).get("samples") == sum(kept) and changed_v == ["cpu_intensive"], rcv)
    rci = sc(s.call("fleet_compare", {"a": ["firmware=1.4.1"], "b": ["firmware=1.4.2"], "event": "cycles",
                                      "view": {"ignore": "^cpu_intensive$"}}, timeout=120))
    changed_i = sorted(c["function"] for c in rci.get("changes", []) if c["verdict"] == "changed")
    check("fleet_compare with a view ignoring cpu_intensive names no change (%s)" % changed_i,
          changed_i == [] and "cpu_intensive" not in [c["function"] for c in rci.get("changes", [])], rci)
    bad = [(k, s.call(t, dict(args_, view={k: v}), timeout=60))
           for k, v in (("tid", 1), ("time", {"from_seconds": 0, "to_seconds": 1}))
           for t, args_ in (("fleet_hotspots", {}), ("fleet_compare", {"a": ["firmware=1.4.1"], "b": ["firmware=1.4.2"]}))]
    check("view.tid and view.time on fleet rows are refused, naming the fields that apply (%s)" %
          result_text(bad[0][1])[:160], all(is_tool_error(r, "view." + k, "comm (a device), focus") for k, r in bad),
          [result_text(r)[:200] for _, r in bad])

    # sample time, not arrival time: a capture whose later chunks reach the
    # spool two hours late (their files' times moved, as a link that stalled
    # or a replayed spool would leave them) still lands in the minutes its
    # samples were taken, on the clock its first chunk anchors
    fake(port, "late", "--chunk", CHUNK, "--interval", "0.5", "--label", "firmware=late", "--max-chunks", "3")
    dl = [d for d in (devices_connected(s, n + 1) or []) if d["device"] not in per_dev][:1]
    for d in dl:
        s.call("start_capture", {"device": d["device"], "pid": 1, "frequency_hz": 99, "interval_seconds": 1,
                                 "authorization": AUTH, "pid_authorization": PAUTH}, timeout=60)
    until(lambda: any(len(glob.glob(os.path.join(os.path.dirname(mp), "chunk_*"))) >= 3 for mp in
                      glob.glob(os.path.join(art, "sessions", "*", "metadata.json"))
                      if (json.load(open(mp)).get("labels") or {}).get("firmware") == "late"), 15, 0.25)
    for d in dl:
        s.call("stop_capture", {"device": d["device"]}, timeout=60)
    settled(art)
    late_chunks = sorted(glob.glob(os.path.join(session_dir(art, "firmware", "late"), "chunk_*")))
    for c in late_chunks[1:]:
        st_ = os.stat(c)
        os.utime(c, ns=(st_.st_atime_ns, st_.st_mtime_ns + 7200 * 10**9))
    want_min = collections.Counter()
    if late_chunks:
        offset = os.stat(late_chunks[0]).st_mtime_ns - max(sample_times_ns(chunk_text(late_chunks[0])))
        for c in late_chunks:
            for t in sample_times_ns(chunk_text(c)):
                u = (t + offset) // 10**9
                want_min[u - u % 60] += 1
    sc(s.call("fleet_publish", {}, timeout=120))
    got_min = {}
    for line in ch_query(http, "SELECT toUInt32(minute), sum(samples) FROM fleet.samples_local FINAL WHERE "
                         "has(labels, 'firmware=late') GROUP BY minute FORMAT TSV").split("\n"):
        if line.strip():
            k_, v_ = line.split("\t")
            got_min[int(k_)] = int(v_)
    arrived = max(os.stat(c).st_mtime for c in late_chunks) if late_chunks else 0
    check("a capture whose chunks reached the spool 2 h late is in the minutes of its samples' times (%d chunks; "
          "store %s, the samples' times say %s)" % (len(late_chunks), got_min, dict(want_min)),
          len(late_chunks) >= 2 and got_min == dict(want_min) and all(m_ < arrived - 3600 for m_ in got_min),
          (got_min, want_min))
    lo = min(want_min or [0])
    r_in = sc(s.call("fleet_hotspots", {"labels": ["firmware=late"], "from_unix": lo,
                                        "to_unix": max(want_min or [0]) + 60, "limit": 1}, timeout=120))
    r_out = s.call("fleet_hotspots", {"labels": ["firmware=late"], "from_unix": int(arrived) - 600,
                                      "to_unix": int(arrived) + 600, "limit": 1}, timeout=120)
    check("fleet_hotspots' from/to select by sample time: the samples' minutes hold the capture's %s samples of "
          "%s, the late arrival's hold none" % (r_in.get("total_samples"), r_in.get("event")),
          sum(v_ for k_, v_ in got_min.items()) > 0 and
          r_in.get("total_samples") == int(ch_query(http, "SELECT sum(samples) FROM fleet.samples_local FINAL WHERE "
                                                   "has(labels, 'firmware=late') AND event = '%s'" % r_in.get("event"))
                                          or 0) and is_tool_error(r_out, "no samples"), result_text(r_out)[:200])

    # one board, two connections: an agent named by its hello's device label
    # reconnects from another port and is one device
    seen_links, named_links = set(per_dev) | {x["device"] for x in dl}, []
    for k in range(2):
        fp = fake(port, "named%d" % k, "--chunk", CHUNK, "--interval", "0.5", "--label", "device=board-r",
                  "--label", "firmware=named", "--max-chunks", "1")
        dn = until(lambda: next((d for d in devices_listed(s)
                                 if d["state"] == "connected" and d["device"] not in seen_links), None), 20, 0.2)
        if dn:
            seen_links.add(dn["device"])
            named_links.append(dn["device"])
            s.call("start_capture", {"device": dn["device"], "pid": 1, "frequency_hz": 99, "interval_seconds": 1,
                                     "authorization": AUTH, "pid_authorization": PAUTH}, timeout=60)
            time.sleep(1.5)
            s.call("stop_capture", {"device": dn["device"]}, timeout=60)
        settled(art)
        fp.kill()
        fp.wait()
    sc(s.call("fleet_publish", {}, timeout=120))
    named_want = sum(count(chunk_text(c))[0] for mp in glob.glob(os.path.join(art, "sessions", "*", "metadata.json"))
                     if (json.load(open(mp)).get("labels") or {}).get("device") == "board-r"
                     for c in glob.glob(os.path.join(os.path.dirname(mp), "chunk_*")))
    nd = sc(s.call("fleet_devices", {"labels": ["firmware=named"]})).get("devices", [])
    check("an agent that reconnects from another port (%s) is one device, named by its hello's device label "
          "(%s), with both sessions' samples (%s of %d)" % (named_links, [d["device"] for d in nd],
          [d["samples"] for d in nd], named_want),
          len(named_links) == 2 and named_links[0] != named_links[1] and [d["device"] for d in nd] == ["board-r"]
          and nd[0]["samples"] == named_want > 0 and nd[0]["sessions"] == 2, nd)

    # the store killed mid-ingest: new chunks wait in the spool.  The new
    # fakes' devices are those not listed before they start (a device of
    # an earlier part can still be connected: CI once took one for these)
    listed_before = {d["device"] for d in devices_listed(s)}
    for i in range(2):
        fake(port, "late%d" % i, "--chunk", CHUNK, "--interval", "0.5", "--label", "firmware=1.4.1",
             "--max-chunks", "2")
    devs2 = until(lambda: (lambda l: l if len(l) >= 2 else None)(
        [d for d in devices_listed(s)
         if d["state"] == "connected" and d["device"] not in seen_links | listed_before]), 20, 0.2) or []
    first = sc(s.call("list_devices", {})).get("devices", [])
    everyone = devices_listed(s)
    linked = [d["device"] for d in everyone if d["state"] in ("handshake", "connected", "profiling", "paused")]
    check("list_devices' first page (%d of %d devices) lists the %d the link holds now first, the new agents %s "
          "among them" % (len(first), len(everyone), len(linked), [d["device"] for d in devs2]),
          len(everyone) > len(first) and len(devs2) == 2 and [d["device"] for d in first[:len(linked)]] == linked and
          all(d["device"] in linked for d in devs2),
          [(d["device"], d["state"]) for d in first])
    ch.kill()
    ch.wait()
    for d in devs2:
        s.call("start_capture", {"device": d["device"], "pid": 1, "frequency_hz": 99, "interval_seconds": 1,
                                 "authorization": AUTH, "pid_authorization": PAUTH}, timeout=60)
    time.sleep(2)
    for d in devs2:
        s.call("stop_capture", {"device": d["device"]}, timeout=60)
    settled(art)
    r = s.call("fleet_publish", {}, timeout=60)
    check("the store down: fleet_publish is an error naming the store", is_tool_error(r, "fleet store"),
          result_text(r)[:300])
    ch = start_clickhouse(chdir, http, tcp)
    # A restarted store under CI's load can answer SELECT 1 before it
    # takes inserts: publish until it does (as the server's pump would).
    pub = []
    until(lambda: pub.append(s.call("fleet_publish", {}, timeout=120)) or
          not (pub[-1] or {}).get("result", {}).get("isError"), 90, 1)
    r = sc(pub[-1]) if pub else {}
    per_dev2 = collections.Counter()
    for meta in glob.glob(os.path.join(art, "sessions", "*", "metadata.json")):
        m = json.load(open(meta))
        for c in glob.glob(os.path.join(os.path.dirname(meta), "chunk_*")):
            per_dev2[device_of(m)] += count(chunk_text(c))[0]
    fd = fleet_devices()
    check("the store restarted: the chunks that waited are published (%s) and every device's samples equal "
          "the chunks' (%d devices)" % (r.get("published_chunks"), len(fd)),
          r.get("published_chunks", 0) > 0 and {k: v["samples"] for k, v in fd.items()} == dict(per_dev2),
          (result_text(pub[-1])[:300] if pub else "no answer", len(pub), fd, per_dev2))
    # retention on a ClickHouse without TTL (docs/fleet.md): a capture whose
    # samples are 62 days old (its first chunk, the clock's anchor, dated
    # back) is in an older month's partition; dropping that month from
    # samples_local and chunks_local removes it and nothing newer
    seen_links |= {d["device"] for d in devs2}
    listed_before = {d["device"] for d in devices_listed(s)}
    fo = fake(port, "old", "--chunk", CHUNK, "--interval", "0.5", "--label", "firmware=old", "--max-chunks", "1")
    do = until(lambda: next((d for d in devices_listed(s)
                             if d["state"] == "connected" and d["device"] not in seen_links | listed_before),
                            None), 60, 0.2)
    if do:
        s.call("start_capture", {"device": do["device"], "pid": 1, "frequency_hz": 99, "interval_seconds": 1,
                                 "authorization": AUTH, "pid_authorization": PAUTH}, timeout=60)
        time.sleep(1.5)
        s.call("stop_capture", {"device": do["device"]}, timeout=60)
    settled(art)
    fo.kill()
    old_chunks = sorted(glob.glob(os.path.join(session_dir(art, "firmware", "old"), "chunk_*")))
    back = time.time() - 62 * 86400
    for c in old_chunks[:1]:
        os.utime(c, (back, back))
    pubs = []

    def old_in():
        pubs.append(result_text(s.call("fleet_publish", {}, timeout=120))[:200])
        return sc(s.call("fleet_devices", {"labels": ["firmware=old"]})).get("devices") or None
    until(old_in, 30, 1)
    month = time.strftime("%Y%m", time.gmtime(back))
    before = {d["device"]: d["samples"] for d in fleet_devices().values()}
    old_devs = [d["device"] for d in sc(s.call("fleet_devices", {"labels": ["firmware=old"]})).get("devices", [])]
    parts = ch_query(http, "SELECT DISTINCT partition FROM system.parts WHERE database = 'fleet' AND table = "
                     "'samples_local' AND active ORDER BY partition FORMAT TSV").split()
    for t in ("samples_local", "chunks_local"):
        ch_query(http, "ALTER TABLE fleet.%s DROP PARTITION %s" % (t, month))
    after = {d["device"]: d["samples"] for d in fleet_devices().values()}
    check("retention without TTL: a capture 62 days old is in partition %s of %s; dropping that month from "
          "samples_local and chunks_local removes its device %s and leaves the %d newer ones' samples as they "
          "were" % (month, parts, old_devs, len(after)), old_chunks and len(old_devs) == 1 and month in parts and
          len(parts) >= 2 and after == {k: v for k, v in before.items() if k not in old_devs},
          (do, old_chunks, pubs[-2:], before, after))
    s.close()
    # the pump: a server that publishes on its own every 300 ms, the
    # store's totals following an agent's chunks with no call
    art2 = os.path.join(WORK, "art2")
    s2 = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", art2, "--allow-writes", "--agent-listen",
                "127.0.0.1:0", "--agent-pairing-code-file", code_file, "--allow-device-control",
                "--fleet-store", url, "--fleet-publish-interval-ms", "300"], "fleet-pump")
    s2.initialize()
    port2 = link_port(s2)
    fake(port2, "pumped", "--chunk", CHUNK, "--interval", "0.5", "--label", "firmware=1.4.3", "--max-chunks", "2")
    d3 = (devices_connected(s2, 1) or [{}])[0].get("device", "none")
    s2.call("start_capture", {"device": d3, "pid": 1, "frequency_hz": 99, "interval_seconds": 1,
                              "authorization": AUTH, "pid_authorization": PAUTH}, timeout=60)
    time.sleep(2)
    s2.call("stop_capture", {"device": d3}, timeout=60)

    def pumped():
        want = sum(count(chunk_text(c))[0] for c in glob.glob(os.path.join(art2, "sessions", "*", "chunk_*")))
        got = sc(s2.call("fleet_devices", {"labels": ["firmware=1.4.3"]})).get("devices", [])
        return (got[0]["samples"], want) if got and want and got[0]["samples"] == want else None
    res = until(pumped, 20, 0.5)
    check("with --fleet-publish-interval-ms the server publishes on its own: the store holds the agent's "
          "chunks (%s samples) with no call" % (res,), res is not None, [l for l in s2.stderr().splitlines() if "fleet" in l][-4:])
    s2.close()

    # the spool's bound: a store without PerfLens's tables yet (fleet_init
    # not run: every publish fails), 1 MB of spool; an agent sends 55 KB
    # chunks every 0.2 s: past 1 MB new chunks are gaps that say why
    art3 = os.path.join(WORK, "art3")
    s3 = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", art3, "--allow-writes", "--agent-listen",
                "127.0.0.1:0", "--agent-pairing-code-file", code_file, "--allow-device-control",
                "--fleet-store", "http://127.0.0.1:%d/fleet_full" % http, "--fleet-publish-interval-ms", "200",
                "--fleet-spool-max-mb", "1"], "fleet-full")
    s3.initialize()
    port3 = link_port(s3)
    fake(port3, "full", "--chunk", CHUNK, "--interval", "0.2")
    d4 = (devices_connected(s3, 1) or [{}])[0].get("device", "none")
    s3.call("start_capture", {"device": d4, "pid": 1, "frequency_hz": 99, "interval_seconds": 1,
                              "authorization": AUTH, "pid_authorization": PAUTH}, timeout=60)

    def full_gaps():
        return [g for meta in glob.glob(os.path.join(art3, "sessions", "*", "metadata.json"))
                for g in json.load(open(meta)).get("gaps", []) if "fleet spool is full" in g.get("reason", "")]
    # until a few chunks past the bound are gaps (a loaded machine sends slower)
    until(lambda: len(full_gaps()) >= 3, 25, 0.5)
    s3.call("stop_capture", {"device": d4}, timeout=60)
    spooled = sum(os.path.getsize(c) for c in glob.glob(os.path.join(art3, "sessions", "*", "chunk_*")))
    gaps = full_gaps()
    check("the spool's bound: with the store away, chunks stop at about 1 MB (%d KB spooled) and each one "
          "past it is a gap that says why (%d gaps: %s)" % (spooled >> 10, len(gaps),
          (gaps[0].get("reason") if gaps else "-")), gaps and spooled <= (1 << 20) + 4 * 60000 and
          "--fleet-spool-max-mb 1" in gaps[0]["reason"], (spooled, gaps[:2]))
    r = sc(s3.call("fleet_init", {}))
    drained = until(lambda: not os.path.exists(os.path.join(art3, "fleet", "FULL")) and
                    sc(s3.call("fleet_publish", {})).get("pending_chunks") == 0, 20, 0.5)
    s3.call("start_capture", {"device": d4, "pid": 1, "frequency_hz": 99, "interval_seconds": 1,
                              "authorization": AUTH, "pid_authorization": PAUTH}, timeout=60)
    time.sleep(1.5)
    st3 = sc(s3.call("stop_capture", {"device": d4}, timeout=60))
    mp = os.path.join(art3, "sessions", st3.get("session") or "none", "metadata.json")
    m = json.load(open(mp)) if os.path.exists(mp) else {}
    check("once the store takes the backlog the spool is not full and new chunks are written (%s chunks, "
          "%d full gaps in the new session)" % (m.get("chunks"), sum(1 for g in m.get("gaps", [])
          if "full" in g.get("reason", ""))), drained and m.get("chunks", 0) > 0 and
          not any("full" in g.get("reason", "") for g in m.get("gaps", [])), (drained, st3, m))
    s3.close()

    # two shards, a Distributed table over them, two ingest servers with
    # their own agents: either server's fleet tools see every device
    ports = [(free_port(), free_port()) for _ in range(2)]
    cluster = ("<remote_servers><two>%s</two></remote_servers>" %
               "".join("<shard><replica><host>127.0.0.1</host><port>%d</port></replica></shard>" % t
                       for _, t in ports))
    shards = [start_clickhouse(os.path.join(WORK, "shard%d" % i), h, t, cluster) for i, (h, t) in enumerate(ports)]
    if not all(shards):
        print("skip - fleet, two shards: a second clickhouse-server did not start")
        sys.exit(0)
    ingest, arts = [], []
    for i, (h, _) in enumerate(ports):
        arts.append(os.path.join(WORK, "ingest%d" % i))
        si = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", arts[-1], "--allow-writes", "--agent-listen",
                    "127.0.0.1:0", "--agent-pairing-code-file", code_file, "--allow-device-control",
                    "--fleet-store", "http://127.0.0.1:%d/fleet2" % h, "--fleet-cluster", "two",
                    "--fleet-server-name", "ingest%d" % i, "--fleet-publish-interval-ms", "300"], "ingest%d" % i)
        si.initialize()
        r = sc(si.call("fleet_init", {}))
        ingest.append(si)
    for i, si in enumerate(ingest):
        pi = link_port(si)
        for k in range(3):
            fake(pi, "s%d_%d" % (i, k), "--chunk", hot if k == 0 else CHUNK, "--interval", "0.5",
                 "--label", "firmware=2.0", "--max-chunks", "2")
        for d in devices_connected(si, 3) or []:
            si.call("start_capture", {"device": d["device"], "pid": 1, "frequency_hz": 99, "interval_seconds": 1,
                                      "authorization": AUTH, "pid_authorization": PAUTH}, timeout=60)
    time.sleep(2)
    for si in ingest:
        for d in devices_listed(si):
            si.call("stop_capture", {"device": d["device"]}, timeout=60)
    # ingest0 killed while its pump may be mid-publish, then started again
    # on the same artifact root: it resumes from its marks
    ingest[0].p.kill()
    ingest[0].p.wait()
    ingest[0] = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", arts[0], "--allow-writes",
                       "--fleet-store", "http://127.0.0.1:%d/fleet2" % ports[0][0], "--fleet-cluster", "two",
                       "--fleet-server-name", "ingest0", "--fleet-publish-interval-ms", "300",
                       "--agent-listen", "127.0.0.1:0", "--agent-pairing-code-file", code_file], "ingest0-again")
    ingest[0].initialize()
    want_dev, want_leaves = collections.Counter(), collections.Counter()
    for art_i in arts:
        for meta in glob.glob(os.path.join(art_i, "sessions", "*", "metadata.json")):
            m = json.load(open(meta))
            for c in glob.glob(os.path.join(os.path.dirname(meta), "chunk_*")):
                k, lv = count(chunk_text(c))
                want_dev[device_of(m)] += k
                want_leaves.update(lv)

    def both_in():
        got = sc(ingest[0].call("fleet_devices", {"labels": ["firmware=2.0"], "limit": 100})).get("devices", [])
        got = {d["device"]: d["samples"] for d in got}
        return got if got == dict(want_dev) else None
    got = until(both_in, 30, 0.5)
    rows = [ch_query(h, "SELECT count() FROM fleet2.samples_local").strip() for h, _ in ports]
    check("two ingest servers into two shards, ingest0 killed and restarted: its fleet_devices lists all %d "
          "devices with their chunks' samples, none lost or twice (shards hold %s sample rows)" % (len(want_dev), rows),
          got is not None and len(got) == 6 and all(x not in ("", "0") for x in rows), (got, dict(want_dev)))
    r = sc(ingest[1].call("fleet_hotspots", {"labels": ["firmware=2.0"], "event": "cycles", "limit": 100},
                          timeout=120))
    got_l = {(h["function"], h["dso"]): h["self_samples"] for h in r.get("hotspots", []) if h["self_samples"]}
    check("two shards: ingest1's fleet_hotspots (through the Distributed table) equals both servers' chunks, "
          "function by function (%d functions)" % len(got_l), got_l == dict(want_leaves),
          sorted(set(got_l.items()) ^ set(want_leaves.items()))[:6])
    for si in ingest:
        si.close()

    # our agent with real perf, in two network namespaces as two hosts,
    # through a server that publishes on its own: the store holds each
    # host's chunks, and the hosts are told apart
    agent = os.environ.get("AGENT", "")
    if not agent:
        print("skip - fleet, our agent from two hosts: %s" % os.environ.get("AGENT_WHY", "no agent"))
    else:
        art5 = os.path.join(WORK, "art5")
        s5 = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", art5, "--allow-writes", "--agent-listen",
                    "0.0.0.0:0", "--agent-pairing-code-file", code_file, "--allow-device-control",
                    "--fleet-store", url, "--fleet-label", "site=netns", "--fleet-publish-interval-ms", "300"],
                   "fleet-netns")
        s5.initialize()
        port5 = link_port(s5)
        hosts, work = [], {}
        for k in range(2):
            ns, a, b = "pl-fleet-%d-%d" % (os.getpid(), k), "pfv%d%d" % (os.getpid() % 10000, k), \
                "pfp%d%d" % (os.getpid() % 10000, k)
            ip_host, ip_ns = "10.232.%d.1" % k, "10.232.%d.2" % k
            for c in (["ip", "netns", "add", ns], ["ip", "link", "add", a, "type", "veth", "peer", "name", b],
                      ["ip", "link", "set", b, "netns", ns], ["ip", "addr", "add", ip_host + "/24", "dev", a],
                      ["ip", "link", "set", a, "up"],
                      ["ip", "netns", "exec", ns, "ip", "addr", "add", ip_ns + "/24", "dev", b],
                      ["ip", "netns", "exec", ns, "ip", "link", "set", b, "up"],
                      ["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"]):
                subprocess.run(c, check=True, capture_output=True)
            hosts.append((ns, a, ip_host, ip_ns))
            with open(os.path.join(WORK, "netns"), "a") as f:
                f.write("%s %s\n" % (ns, a))
        env = dict(os.environ, PERFLENS_TOKEN=CODE)
        for ns, a, ip_host, ip_ns in hosts:
            w = subprocess.Popen(["ip", "netns", "exec", ns, os.path.join(WORK, "spin")])
            procs.append(w)
            procs.append(subprocess.Popen(["ip", "netns", "exec", ns, agent, "--server", "%s:%d" % (ip_host, port5)],
                                          env=env, stdout=open(os.path.join(WORK, "agent-%s.out" % ns), "w"),
                                          stderr=subprocess.STDOUT))
            work[ip_ns] = w.pid
        ds = until(lambda: (lambda l: l if len(l) == 2 else None)(
            [x for x in devices_listed(s5) if x["state"] == "connected"]), 30, 0.3) or []
        check("our agent from two hosts connected (%s)" % sorted(x["address"] for x in ds),
              sorted(x["address"] for x in ds) == sorted(work), ds)
        rids = []
        for x in ds:
            s5.next_id += 1
            rids.append(s5.next_id)
            s5.send({"jsonrpc": "2.0", "id": s5.next_id, "method": "tools/call", "params": {"name": "start_capture",
                     "arguments": {"device": x["device"], "pid": work[x["address"]], "frequency_hz": 199,
                                   "interval_seconds": 1, "authorization": AUTH, "pid_authorization": PAUTH}}})
        for rid in rids:
            s5.wait_for(rid, 120)
        time.sleep(4)
        for x in ds:
            s5.call("stop_capture", {"device": x["device"]}, timeout=60)

        kinds, last = set(), []

        def hosts_in():
            want = collections.Counter()
            for meta in glob.glob(os.path.join(art5, "sessions", "*", "metadata.json")):
                m = json.load(open(meta))
                for c in glob.glob(os.path.join(os.path.dirname(meta), "chunk_*")):
                    want[device_of(m)] += chunk_samples(c)
                    kinds.add("perf.data" if c.endswith(".perf.zst") else "text")
            got = {d["device"]: d["samples"] for d in
                   sc(s5.call("fleet_devices", {"labels": ["site=netns"], "limit": 100})).get("devices", [])}
            last[:] = [got, dict(want)]
            return (got, dict(want)) if got == dict(want) and len(got) == 2 and all(want.values()) else None
        res = until(hosts_in, 30, 1)
        # ours and ours negotiate perf.data chunks (extension 4): the
        # publisher reads them natively, perf script counts them here
        check("our agent's chunks (%s) from two hosts are in the store, each host's samples its chunks' (%s)" %
              ("+".join(sorted(kinds)), res[0] if res else None), res is not None and "perf.data" in kinds and
              sorted(d.rsplit("_", 1)[0] for d in res[0]) == sorted(work), (last, s5.stderr()[-400:]))
        note = subprocess.run(["readelf", "-n", os.path.join(WORK, "spin")], capture_output=True, text=True).stdout
        m_ = re.search(r"Build ID: ([0-9a-f]+)", note)
        labs = sorted({l for d in sc(s5.call("fleet_devices", {"labels": ["site=netns"]})).get("devices", [])
                       for l in d["labels"] if l.startswith("build_id.spin=")})
        check("our agent's maps give the workload's build-id as a label (%s; readelf -n says %s)" %
              (labs, m_.group(1) if m_ else None), m_ and labs == ["build_id.spin=" + m_.group(1)], labs)
        r = sc(s5.call("fleet_hotspots", {"labels": ["site=netns"], "limit": 5}, timeout=120))
        top = [h["function"] for h in r.get("hotspots", [])]
        check("the fleet's top function on those hosts is the workload's leaf (%s), on both (%s devices)" %
              (top[:3], r.get("hotspots", [{}])[0].get("devices")),
              top and top[0] == "fleet_leaf" and r["hotspots"][0]["devices"] == 2, r)
        s5.close()
finally:
    reap(procs)
