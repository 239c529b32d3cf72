"""metrics_oracle.py - the agent's health metrics against /proc read by Python.

The oracle: when a metrics frame arrives, snapshot() reads the files of
its type again with Python (its own parsing: str.split, not the agent's
code) and keeps them with the wall time of the read.  check_metrics()
then compares each type's frames with the snapshot taken at the same
moment: only frames whose snapshot lags the agent's `ts` by at most
MAX_LAG are compared (the agent reads, stamps ts, sends; loopback), and
at least one frame of each type must be.  Tolerances: what never changes
(sizes, ids, names, the thread list) is exact; cumulative counters may
only have grown by what the lag allows; percentages over an interval are
compared with the oracle's own percentage over its snapshots' interval.

Sources where the kernel gives two independent views are taken from the
other one: the process's RSS, vsize and threads from /proc/PID/status
(VmRSS, VmSize, Threads) while the agent reads /proc/PID/stat, a
thread's name from /proc/PID/task/TID/comm.
"""
import os
import time

MAX_LAG = 0.25   # s between the agent's ts and the oracle's read
HZ = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGESIZE") // 1024


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _keyed(text):
    """'Key: value unit' lines -> {key: first number} (meminfo, status, io)."""
    out = {}
    for line in (text or "").splitlines():
        k, _, v = line.partition(":")
        parts = v.split()
        if parts and parts[0].lstrip("-").isdigit():
            out[k.strip()] = int(parts[0])
    return out


def _stat_fields(text):
    """Fields of a /proc/PID/stat text, numbered as proc(5) does (1 = pid)."""
    head, _, rest = text.rpartition(")")
    pid, _, comm = head.partition(" (")
    return dict(enumerate([pid, comm] + rest.split(), start=1))


def _cpu_lines(stat):
    """/proc/stat's cpu lines -> {name: (busy, total)} (busy: all but idle, iowait)."""
    out = {}
    for line in stat.splitlines():
        if line.startswith("cpu"):
            name, *vals = line.split()
            v = [int(x) for x in vals[:8]]
            out[name] = (sum(v) - v[3] - v[4], sum(v))
    return out


def snapshot(frame, pid):
    """The oracle's reading for one metrics frame (pid: the capture target),
    or None when its files are gone (the process ended)."""
    try:
        return _snapshot(frame, pid)
    except (OSError, AttributeError, ValueError):
        return None


def _snapshot(frame, pid):
    t = frame.get("type")
    s = {"t": time.time()}
    if t == "system":
        s["stat"] = _read("/proc/stat")
        s["meminfo"] = _keyed(_read("/proc/meminfo"))
        s["loadavg"] = [float(x) for x in _read("/proc/loadavg").split()[:3]]
        s["uptime"] = float(_read("/proc/uptime").split()[0])
    elif t == "process":
        p = frame.get("pid")
        s["stat"] = _read("/proc/%d/stat" % p)
        s["status"] = _keyed(_read("/proc/%d/status" % p))
        s["fds"] = len(os.listdir("/proc/%d/fd" % p))
        s["oom"] = int((_read("/proc/%d/oom_score" % p) or "0").strip())
    elif t == "network":
        s["dev"] = _read("/proc/net/dev")
    elif t == "disk":
        s["diskstats"] = _read("/proc/diskstats")
        s["io"] = _keyed(_read("/proc/%d/io" % pid)) if pid else {}
    elif t == "threads":
        tp = "/proc/%d/task" % frame.get("pid")
        s["tasks"] = {}
        for tid in os.listdir(tp):
            st = _read("%s/%s/stat" % (tp, tid))
            if st:
                s["tasks"][int(tid)] = (_stat_fields(st), (_read("%s/%s/comm" % (tp, tid)) or "").strip())
    s["t_end"] = time.time()
    return s


class Checker:
    """Collects the failures of one frame's comparisons."""

    def __init__(self):
        self.bad = []

    def exact(self, name, agent, oracle):
        if agent != oracle:
            self.bad.append("%s: agent %r, /proc %r" % (name, agent, oracle))

    def near(self, name, agent, oracle, tol):
        if agent is None or abs(agent - oracle) > tol:
            self.bad.append("%s: agent %r, /proc %r (tolerance %s)" % (name, agent, oracle, tol))

    def grown(self, name, agent, oracle, slack):
        """A counter: the oracle read later, so it may only have grown, by slack at most."""
        if not isinstance(agent, int) or not 0 <= oracle - agent <= slack:
            self.bad.append("%s: agent %r, /proc %r (may grow by %s)" % (name, agent, oracle, slack))


def _pct(now, prev):
    busy, total = now[0] - prev[0], now[1] - prev[1]
    return 100.0 * busy / total if total > 0 else 0.0


def check_system(c, m, s, prev):
    cpu = _cpu_lines(s["stat"])
    cores = sorted(k for k in cpu if k != "cpu")
    c.exact("cpu.num_cores", m["cpu"]["num_cores"], len(cores))
    c.exact("len(cpu.per_core)", len(m["cpu"]["per_core"]), len(cores))
    if prev is not None and m["cpu"]["overall_pct"] is not None:
        pc = _cpu_lines(prev["stat"])
        # Both intervals are about `interval` long and shifted by the lags:
        # a few ticks apart on a 2-core machine at 100 Hz.
        c.near("cpu.overall_pct", m["cpu"]["overall_pct"], _pct(cpu["cpu"], pc["cpu"]), 8)
        for i, name in enumerate(cores):
            c.near("cpu.per_core[%d]" % i, m["cpu"]["per_core"][i], _pct(cpu[name], pc[name]), 15)
    mi, mem = s["meminfo"], m["mem"]
    c.exact("mem.total_kb", mem["total_kb"], mi["MemTotal"])
    c.exact("mem.swap_total_kb", mem["swap_total_kb"], mi["SwapTotal"])
    slack = max(32768, mi["MemTotal"] // 100)   # others build on this machine
    c.near("mem.available_kb", mem["available_kb"], mi["MemAvailable"], slack)
    c.near("mem.used_kb", mem["used_kb"], mi["MemTotal"] - mi["MemAvailable"], slack)
    c.near("mem.cached_kb", mem["cached_kb"], mi["Cached"], slack)
    c.near("mem.buffers_kb", mem["buffers_kb"], mi["Buffers"], slack)
    c.near("mem.used_pct", mem["used_pct"], 100.0 * (mi["MemTotal"] - mi["MemAvailable"]) / mi["MemTotal"], 1.5)
    # /proc/loadavg moves every 5 s, by a fraction of the runnable count.
    for key, val, tol in zip(("avg_1m", "avg_5m", "avg_15m"), s["loadavg"], (0.5, 0.2, 0.1)):
        c.near("load." + key, m["load"][key], val, tol)
    c.near("uptime_sec", m["uptime_sec"], s["uptime"], 2)
    kv = {l.split()[0]: int(l.split()[1]) for l in s["stat"].splitlines() if l.split()[0] in ("ctxt", "intr")}
    c.grown("context_switches", m["context_switches"], kv["ctxt"], max(5000, kv["ctxt"] // 100))
    c.grown("interrupts", m["interrupts"], kv["intr"], max(5000, kv["intr"] // 100))


def check_process(c, m, s, prev):
    f, st = _stat_fields(s["stat"]), s["status"]
    c.exact("pid", m["pid"], int(f[1]))
    c.exact("comm", m["comm"], f[2])
    c.exact("start_time", m["start_time"], int(f[22]))
    c.exact("threads", m["threads"], st["Threads"])
    c.near("vsize_kb", m["vsize_kb"], st["VmSize"], 1024)
    c.near("rss_kb", m["rss_kb"], st["VmRSS"], 256)
    c.exact("fds", m["fds"], s["fds"])
    c.near("oom_score", m["oom_score"], s["oom"], 10)
    c.grown("minor_faults", m["minor_faults"], int(f[10]), 100)
    c.grown("major_faults", m["major_faults"], int(f[12]), 10)
    c.grown("voluntary_csw", m["voluntary_csw"], st["voluntary_ctxt_switches"], 500)
    c.grown("involuntary_csw", m["involuntary_csw"], st["nonvoluntary_ctxt_switches"], 500)
    if m["state"] not in "RSDTtWXZPI":
        c.bad.append("state: %r is not a state of proc(5)" % m["state"])
    if prev is not None and m["cpu_pct"] is not None:
        pf = _stat_fields(prev["stat"])
        ticks = int(f[14]) + int(f[15]) - int(pf[14]) - int(pf[15])
        c.near("cpu_pct", m["cpu_pct"], 100.0 * ticks / HZ / (s["t"] - prev["t"]), 12)


def _net_dev(text):
    out = {}
    for line in text.splitlines()[2:]:
        name, _, rest = line.partition(":")
        v = [int(x) for x in rest.split()]
        if name.strip() != "lo" and len(v) >= 11:
            out[name.strip()] = v
    return out


def check_network(c, m, s, prev):
    del prev
    want = _net_dev(s["dev"])
    c.exact("interfaces (lo left out)", sorted(m["interfaces"]), sorted(want))
    cols = {"rx_bytes": (0, 1 << 20), "rx_packets": (1, 2000), "rx_errors": (2, 10), "rx_drops": (3, 100),
            "tx_bytes": (8, 1 << 20), "tx_packets": (9, 2000), "tx_errors": (10, 10)}
    for name, v in want.items():
        for key, (col, slack) in cols.items():
            c.grown("%s.%s" % (name, key), m["interfaces"].get(name, {}).get(key), v[col], slack)


def _disks(text):
    """Whole disks with any I/O: not loop, ram or zram, not a partition of one listed."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) < 14:
            continue
        name, v = f[2], [int(x) for x in f[3:14]]
        if name.startswith(("loop", "ram", "zram")) or any(name.startswith(d) for d in out):
            continue
        if v[0] or v[4]:
            out[name] = v
    return out


def check_disk(c, m, s, prev):
    del prev
    want = _disks(s["diskstats"])
    c.exact("devices", sorted(m["devices"]), sorted(list(want)[:8]))
    cols = {"reads": (0, 1, 2000), "read_bytes": (2, 512, 256 << 20), "read_ms": (3, 1, 20000),
            "writes": (4, 1, 2000), "write_bytes": (6, 512, 256 << 20), "write_ms": (7, 1, 20000)}
    for name, v in want.items():
        for key, (col, scale, slack) in cols.items():
            c.grown("%s.%s" % (name, key), m["devices"].get(name, {}).get(key), v[col] * scale, slack)
    # "proc" is the capture target's I/O: there while the agent has a pid
    # (verify_capture checks that it is during the capture).
    if "proc" in m:
        for key in ("read_bytes", "write_bytes", "syscr", "syscw"):
            c.grown("proc." + key, m["proc"].get(key), s["io"].get(key, -1), 1 << 16)


def check_threads(c, m, s, prev):
    del prev
    c.exact("clk_tck", m["clk_tck"], HZ)
    got = {t["tid"]: t for t in m["threads"]}
    c.exact("tids", sorted(got), sorted(list(s["tasks"])[:64]))
    lag = s["t"] - m["ts"]
    for tid, (f, comm) in s["tasks"].items():
        t = got.get(tid, {})
        c.exact("%d.comm (task/TID/comm)" % tid, t.get("comm"), comm)
        c.grown("%d.ticks" % tid, t.get("ticks"), int(f[14]) + int(f[15]), int(HZ * (lag + 0.1)) + 3)
        if t.get("state", "?") not in "RSDTtWXZPI":
            c.bad.append("%d.state: %r" % (tid, t.get("state")))


CHECKS = {"system": check_system, "process": check_process, "network": check_network,
          "disk": check_disk, "threads": check_threads}


def check_metrics(frames, check, what, types=tuple(CHECKS)):
    """Each type's frames (with their '_oracle' snapshot) against /proc.
    check is agent_peer.check; one ok/not ok line per type."""
    for t in types:
        compared, bad, prev = 0, [], None
        for m in frames.get(t, []):
            s = m.get("_oracle")
            if s is None:
                continue
            if s["t"] - m["ts"] > MAX_LAG or s["t"] < m["ts"] - 0.05:
                prev = None     # not the same moment (the peer was busy): skip, and the next interval
                continue
            c = Checker()
            try:
                CHECKS[t](c, m, s, prev)
            except (KeyError, TypeError, ValueError) as e:
                c.bad.append("malformed: %r" % e)
            compared += 1
            bad += ["frame %d: %s" % (compared, b) for b in c.bad]
            prev = s
        check("%s: %s metrics equal /proc read by Python at the same moment (%d frames compared)"
              % (what, t, compared), compared >= 1 and not bad, bad[:6] or "no frame within %.2f s of its ts" % MAX_LAG)
