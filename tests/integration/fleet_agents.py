#!/usr/bin/env python3
"""fleet_agents.py - the fleet with our agent, many of them: two ingest
servers and 24 perflens-agent processes (4 in network namespaces as
separate hosts when ip netns is here, the others on loopback), each
running its capture through a perf shim that replays a recorded `perf
script` text (a peer's real capture) instead of sampling, so the test is
cheap on two cores.  Two firmware builds: each agent profiles a process of
build 1.4.1 or 1.4.2 (two binaries, two build-ids, which the agents' maps
put on the rows as build_id.app=HEX); the 1.4.2 text holds extra samples of
one function (cpu_intensive).  Oracles: each agent's own count of the
samples it sent (its stop answer's counters); every session analysed on
its own (analyze_profile, list_hotspots) and summed here; the recorded
texts.  Checked: per-device totals in the store equal the samples each
agent sent; fleet_hotspots equals the sum of the per-session analyses,
function by function; fleet_compare of the two builds names cpu_intensive
and no other.
"""
import collections, glob, json, os, re, socket, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa

SERVER, CHUNK, AGENT = sys.argv[1:4]
WORK = os.environ["WORK"]
CH = os.environ["CH"]
NETNS = os.environ.get("NETNS") == "1"
CODE = "fleet-" + os.urandom(6).hex()
AUTH = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
PAUTH = "I_EXPLICITLY_AUTHORIZE_PID_ATTACH"
AGENTS, IN_NETNS = 24, 4
procs = []

# The shim: what the agent runs of perf (agent/perf.c's probes, capture.c's
# rounds) answered without sampling.  perf script prints the recorded text;
# in the agent's pipeline (record -o - | script -i -) it prints it once,
# then waits for the record stage to end.
SHIM = r'''#!/bin/sh
# perf shim (tests/integration/fleet_agents.py): replays %(text)s
case "$1" in
--version) echo "perf version 6.1.shim"; exit 0 ;;
version) echo "        libdw-dwarf-unwind: [ OFF ]"; exit 0 ;;
stat)
	csv=0; events=""; dur=0
	while [ $# -gt 0 ]; do
		case "$1" in
		-x) csv=1 ;;
		-e) events=$2; shift ;;
		--) [ "$2" = sleep ] && dur=$3; break ;;
		esac
		shift
	done
	if [ $csv = 1 ]; then
		echo "$events" | tr ',' '\n' | while read -r e; do echo "1000,,$e,1000000,100.00,," >&2; done
		exit 0
	fi
	trap 'exit 0' INT TERM
	[ "$dur" != 0 ] && sleep "$dur"
	exit 0 ;;
record)
	out=""; timed=0; prev=""; events=""
	for a in "$@"; do
		[ "$prev" = "-o" ] && out=$a
		[ "$prev" = "-e" ] && events=$a
		[ "$a" = "--" ] && timed=1
		prev=$a
	done
	if [ "$out" = "-" ]; then echo shim; else echo "$events" | tr ',' '\n' > "$out"; fi
	[ $timed = 1 ] && exit 0
	trap 'exit 0' INT TERM
	while :; do sleep 0.2; done ;;
evlist)
	cat "$3"; exit 0 ;;
script)
	in=""; prev=""
	for a in "$@"; do [ "$prev" = "-i" ] && in=$a; prev=$a; done
	cat '%(text)s'
	[ "$in" = "-" ] && cat > /dev/null
	exit 0 ;;
esac
echo "perf shim: $* is not replayed" >&2
exit 1
'''


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start_clickhouse(d, http, tcp):
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "config.xml"), "w").write(
        "<?xml version=\"1.0\"?><yandex><logger><level>warning</level><log>%s/server.log</log>"
        "<errorlog>%s/err.log</errorlog><console>0</console></logger><http_port>%d</http_port>"
        "<tcp_port>%d</tcp_port><listen_host>127.0.0.1</listen_host><path>%s/data/</path>"
        "<tmp_path>%s/tmp/</tmp_path><users_config>%s/users.xml</users_config>"
        "<default_profile>default</default_profile><default_database>default</default_database>"
        "<mark_cache_size>5368709</mark_cache_size><timezone>UTC</timezone></yandex>" % (d, d, http, tcp, d, d, d))
    open(os.path.join(d, "users.xml"), "w").write(
        "<?xml version=\"1.0\"?><yandex><profiles><default><max_memory_usage>2000000000</max_memory_usage>"
        "</default></profiles><users><default><password></password><networks><ip>127.0.0.1</ip></networks>"
        "<profile>default</profile><quota>default</quota></default></users><quotas><default></default>"
        "</quotas></yandex>")
    procs.append(subprocess.Popen([CH, "--config-file=" + os.path.join(d, "config.xml")], cwd=d,
                                  stdout=open(os.path.join(d, "out.log"), "a"), stderr=subprocess.STDOUT))
    url = "http://127.0.0.1:%d/" % http
    return until(lambda: subprocess.run(["curl", "-sf", url + "?query=SELECT%201"], capture_output=True)
                 .stdout.strip() == b"1", 30, 0.2)


def recorded_text(dst, app, hot_copies):
    """The peer's capture, its workload's frames put in `app`, with `hot_copies` more of each sample whose
    leaf is cpu_intensive (the hotter build); the perf stat part left out (the shim's perf stat says it)."""
    text = open(CHUNK).read().partition("### PERF_STAT ###")[0]
    blocks = [b for b in text.strip("\n").split("\n\n") if b.strip()]
    hot = [b for b in blocks if len(b.split("\n")) > 1 and re.search(r"\scpu_intensive\s", b.split("\n")[1])]
    out = "\n\n".join(blocks + hot * hot_copies) + "\n\n"
    open(dst, "w").write(out.replace("/root/perflens-test/sample_workload", app))


def listen_port(s):
    return link_port(s)


def connected(s):
    return [d for d in sc(s.call("list_devices", {})).get("devices", []) if d["state"] == "connected"]


try:
    http, tcp = free_port(), free_port()
    if not start_clickhouse(os.path.join(WORK, "cha"), http, tcp):
        print("skip - fleet with our agents: clickhouse-server did not answer within 30 s")
        sys.exit(0)
    # two firmware builds of one program, told apart by their build-ids
    # installed at one path, as on the boards: each build's process and the
    # agents that profile it share a mount namespace where FWPATH is that
    # build (a bind mount), so the agents read its build-id from the path its
    # maps name, and a function is one (name, DSO) in both builds
    builds, texts, shims, targets = {}, {}, {}, {}
    fwpath = os.path.join(WORK, "fw", "app")
    os.makedirs(os.path.dirname(fwpath))
    open(fwpath, "w").close()
    for fw, hot in (("1.4.1", 0), ("1.4.2", 3)):
        d = os.path.join(WORK, "fw-" + fw)
        os.makedirs(d)
        open(os.path.join(d, "app.c"), "w").write(
            '#include <unistd.h>\nconst char firmware[] = "%s";\nint main(void){for(;;)pause();}\n' % fw)
        subprocess.run(["gcc", "-O1", "-Wl,--build-id", "-o", os.path.join(d, "app"), os.path.join(d, "app.c")],
                       check=True)
        note = subprocess.run(["readelf", "-n", os.path.join(d, "app")], capture_output=True, text=True).stdout
        builds[fw] = re.search(r"Build ID: ([0-9a-f]+)", note).group(1)
        texts[fw] = os.path.join(d, "recorded.txt")
        recorded_text(texts[fw], fwpath, hot)
        shims[fw] = os.path.join(d, "perf")
        open(shims[fw], "w").write(SHIM % {"text": texts[fw]})
        os.chmod(shims[fw], 0o755)
        p = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                              'mount --bind "$0" "$1" && exec "$1"', os.path.join(d, "app"), fwpath])
        procs.append(p)
        targets[fw] = p.pid
    maps_ok = until(lambda: all(fwpath in open("/proc/%d/maps" % t).read() for t in targets.values()), 10, 0.1)
    if not maps_ok:
        print("skip - fleet with our agents: unshare --mount could not run the builds at one path")
        sys.exit(0)
    code_file = os.path.join(WORK, "code")
    open(code_file, "w").write(CODE + "\n")
    url = "http://127.0.0.1:%d/fleet" % http
    ingest = []
    for i in range(2):
        si = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", os.path.join(WORK, "ingest%d" % i),
                    "--allow-writes", "--agent-listen", "0.0.0.0:0" if NETNS else "127.0.0.1:0",
                    "--agent-pairing-code-file", code_file, "--allow-device-control", "--fleet-store", url,
                    "--fleet-server-name", "ingest%d" % i, "--fleet-publish-interval-ms", "0"], "agents-ingest%d" % i)
        si.initialize()
        ingest.append(si)
    sc(ingest[0].call("fleet_init", {}))
    ports = [listen_port(si) for si in ingest]
    # the hosts: network namespaces, each with a veth to this one
    hosts = []
    for k in range(IN_NETNS if NETNS else 0):
        ns, a, b = "pl-fa-%d-%d" % (os.getpid(), k), "pfa%d%d" % (os.getpid() % 10000, k), \
            "pfb%d%d" % (os.getpid() % 10000, k)
        ip_host, ip_ns = "10.233.%d.1" % k, "10.233.%d.2" % k
        for c in (["ip", "netns", "add", ns], ["ip", "link", "add", a, "type", "veth", "peer", "name", b],
                  ["ip", "link", "set", b, "netns", ns], ["ip", "addr", "add", ip_host + "/24", "dev", a],
                  ["ip", "link", "set", a, "up"],
                  ["ip", "netns", "exec", ns, "ip", "addr", "add", ip_ns + "/24", "dev", b],
                  ["ip", "netns", "exec", ns, "ip", "link", "set", b, "up"],
                  ["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"]):
            subprocess.run(c, check=True, capture_output=True)
        with open(os.path.join(WORK, "netns"), "a") as f:
            f.write("%s %s\n" % (ns, a))
        hosts.append((ns, ip_host, ip_ns))
    env = dict(os.environ, PERFLENS_TOKEN=CODE)
    fw_of = {}   # (server, address) -> firmware; a loopback agent is told apart by its pid's target
    for i in range(AGENTS):
        fw = "1.4.2" if i % 2 else "1.4.1"
        srv = i % 2 if i < 2 * IN_NETNS else (i // 2) % 2
        mnt = ["nsenter", "--mount=/proc/%d/ns/mnt" % targets[fw]]
        # --text-chunks: the shim replays recorded perf script text, which
        # only the text protocol carries (perf.data chunks are test_fleet's)
        cmd = mnt + [AGENT, "--server", "127.0.0.1:%d" % ports[srv], "--perf", shims[fw], "--text-chunks"]
        if i < len(hosts):
            ns, ip_host, ip_ns = hosts[i]
            cmd = ["ip", "netns", "exec", ns] + mnt + [AGENT, "--server", "%s:%d" % (ip_host, ports[srv]),
                                                      "--perf", shims[fw], "--text-chunks"]
        procs.append(subprocess.Popen(cmd, env=env, stdout=open(os.path.join(WORK, "agent%d.out" % i), "w"),
                                      stderr=subprocess.STDOUT))
    want_n = [sum(1 for i in range(AGENTS) if (i % 2 if i < 2 * IN_NETNS else (i // 2) % 2) == srv)
              for srv in range(2)]
    devs = [until(lambda si=si, n=n: (lambda l: l if len(l) >= n else None)(connected(si)), 60, 0.5) or []
            for si, n in zip(ingest, want_n)]
    check("%d of our agents connected to two ingest servers (%s), %d of them from network namespaces" %
          (sum(len(d) for d in devs), [len(d) for d in devs], sum(1 for d in sum(devs, []) if
                                                                    d["address"].startswith("10.233."))),
          [len(d) for d in devs] == want_n, devs)
    # which build each agent profiles: its shim (the agent's perf) says it
    # in the agent's command line, read from /proc by the link's peer port
    pid_fw = {}
    for p in procs:
        try:
            cmd = open("/proc/%d/cmdline" % p.pid).read().split("\0")
        except OSError:
            continue
        if "--perf" in cmd:
            pid_fw[p.pid] = "1.4.2" if "fw-1.4.2" in cmd[cmd.index("--perf") + 1] else "1.4.1"

    def firmware_of(d):
        """The build a connected agent's shim replays: the agent process owning the link's local end."""
        out = subprocess.run(["ss", "-Htnp", "state", "established", "( sport = :%d or dport = :%d )" %
                              (d["port"], d["port"])], capture_output=True, text=True).stdout
        if d["address"].startswith("10.233."):
            k = int(d["address"].split(".")[2])
            return "1.4.2" if k % 2 else "1.4.1"
        for m in re.finditer(r"pid=(\d+)", out):
            if int(m.group(1)) in pid_fw:
                return pid_fw[int(m.group(1))]
        return None
    rids = []
    for si, ds in zip(ingest, devs):
        for d in ds:
            fw = firmware_of(d)
            si.next_id += 1
            rids.append((si, si.next_id, fw))
            si.send({"jsonrpc": "2.0", "id": si.next_id, "method": "tools/call", "params": {
                "name": "start_capture", "arguments": {"device": d["device"], "pid": targets.get(fw, 1),
                                                       "frequency_hz": 99, "interval_seconds": 1,
                                                       "authorization": AUTH, "pid_authorization": PAUTH}}})
    started = [si.wait_for(rid, 180) for si, rid, _ in rids]
    bad = [(fw, result_text(r)[:300]) for (_, _, fw), r in zip(rids, started) if is_tool_error(r) or not r]
    check("every agent started its capture (%d; the builds %s)" % (len(rids), collections.Counter(f for _, _, f in rids)),
          not bad and None not in [f for _, _, f in rids], bad[:3])
    time.sleep(2)
    for si, ds in zip(ingest, devs):
        for d in ds:
            si.call("stop_capture", {"device": d["device"]}, timeout=60)

    def settled():
        metas = [json.load(open(mp)) for mp in glob.glob(os.path.join(WORK, "ingest*", "sessions", "*",
                                                                     "metadata.json"))]
        caps = [m for m in metas if m.get("chunks") or m.get("capture")]
        return caps if caps and all(m.get("live") is False for m in caps) else None
    metas = until(settled, 30, 0.5) or []
    sent = collections.Counter()
    for m in metas:
        sent[m["agent"]] += (m.get("capture_counters") or {}).get("samples_sent", 0)
    for si in ingest:
        sc(si.call("fleet_publish", {}, timeout=180))
    fd = {d["device"]: d for d in sc(ingest[1].call("fleet_devices", {"limit": 100})).get("devices", [])}
    check("per-device totals in the store equal the samples each agent says it sent (%d devices, %d samples)" %
          (len(fd), sum(d["samples"] for d in fd.values())),
          len(fd) == AGENTS and all(sent.values()) and {k: v["samples"] for k, v in fd.items()} == dict(sent),
          sorted(set((k, v["samples"]) for k, v in fd.items()) ^ set(sent.items()))[:6])
    bids = sorted({l for d in fd.values() for l in d["labels"] if l.startswith("build_id.app=")})
    check("the agents' maps put each build's build-id on its rows (%s; readelf says %s)" % (bids, builds),
          bids == sorted("build_id.app=" + b for b in builds.values()), bids)
    # every session analysed on its own, summed: the oracle of fleet_hotspots
    per_session = collections.Counter()
    for si, art in zip(ingest, ("ingest0", "ingest1")):
        for sd in sorted(glob.glob(os.path.join(WORK, art, "sessions", "*"))):
            if not glob.glob(os.path.join(sd, "chunk_*")):
                continue
            an = sc(si.call("analyze_profile", {"path": sd, "event": "cycles"}, timeout=120))
            cursor = None
            while an.get("analysis_id"):
                args = {"analysis_id": an["analysis_id"], "event": "cycles", "limit": 100}
                if cursor:
                    args["cursor"] = cursor
                lh = sc(si.call("list_hotspots", args, timeout=60))
                for h in lh.get("hotspots", []):
                    if h["self"]["samples"]:
                        per_session[(h["symbol"], h["dso"])] += h["self"]["samples"]
                cursor = (lh.get("page") or {}).get("next_cursor")
                if not cursor:
                    break
    r = sc(ingest[0].call("fleet_hotspots", {"event": "cycles", "limit": 100}, timeout=120))
    got = {(h["function"], h["dso"]): h["self_samples"] for h in r.get("hotspots", []) if h["self_samples"]}
    check("fleet_hotspots equals the sum of the %d sessions' own analyses, function by function (%d functions, "
          "%s samples)" % (len(metas), len(got), r.get("total_samples")), got and got == dict(per_session),
          sorted(set(got.items()) ^ set(per_session.items()))[:6])
    rc = sc(ingest[1].call("fleet_compare", {"a": ["build_id.app=" + builds["1.4.1"]],
                                             "b": ["build_id.app=" + builds["1.4.2"]], "event": "cycles"},
                           timeout=120))
    changed = sorted(c["function"] for c in rc.get("changes", []) if c["verdict"] == "changed")
    ci = next((c for c in rc.get("changes", []) if c["function"] == "cpu_intensive"), {})
    check("fleet_compare of the two builds names cpu_intensive and no other (%s; %s -> %s %s, p %.2g)" %
          (changed, ci.get("a"), ci.get("b"), rc.get("measure"), ci.get("p_value", 1)),
          changed == ["cpu_intensive"], rc.get("changes"))
    for si in ingest:
        si.close()
finally:
    reap(procs)
