# test_device_session.sh - the real device-agent session in shared/peers:
# every chunk parses, the sample total equals metadata.json's, events stay
# apart, and the PERF_STAT sections come out typed, the last one equal to
# the counters the agent itself reported in metadata.json.
. tests/integration/lib.sh
need_shared "device session"
session="$SHARED/peers/device-sessions/session-x86-baseline"
"$PERFLENS" analyze --input "$session" --artifact-root "$WORK" > "$WORK/an.json" 2>"$WORK/err" ||
	{ notok "analyze device session: $(cat "$WORK/err")"; exit 0; }
id=$(sed -n 's/^  "analysis_id": "\(.*\)",$/\1/p' "$WORK/an.json")
"$PERFLENS" stat --analysis-id "$id" --artifact-root "$WORK" > "$WORK/stat.json"
python3 - "$session/metadata.json" "$WORK/analyses/$id.json" "$WORK/stat.json" <<'PY'
import json, sys
meta = json.load(open(sys.argv[1]))
summary = json.load(open(sys.argv[2]))
stat = json.load(open(sys.argv[3]))

def check(what, cond, detail=""):
    print(("ok - " if cond else "not ok - ") + what + ("" if cond else ": " + detail))

inputs = summary["provenance"]["inputs"]
check("all %d chunks were read" % meta["chunks"], len(inputs) == meta["chunks"],
      "read %d" % len(inputs))
total = sum(e["samples"] for e in summary["events"])
check("sample total equals metadata.json's %d" % meta["total_samples"],
      total == meta["total_samples"], "got %d" % total)
check("no malformed records", summary["provenance"]["counts"]["records_malformed"] == 0,
      str(summary["provenance"]["malformed_preview"]))
names = sorted(e["name"] for e in summary["events"])
check("events kept apart: %s" % ", ".join(names), names == sorted(meta["event_types"]),
      "metadata says %s" % meta["event_types"])
check("one view per event", len(summary["views"]) == len(summary["events"]))
for v in summary["views"]:
    own = sum(h["self"]["samples"] for h in v["hotspots"])
    ev = [e for e in summary["events"] if e["name"] == v["event"]][0]
    check("view %s counts only its own %d samples" % (v["event"], ev["samples"]),
          v["total"]["samples"] == ev["samples"] and own <= ev["samples"],
          "view total %d, self sum %d" % (v["total"]["samples"], own))
blocks = stat["blocks"]
check("one PERF_STAT block per chunk", len(blocks) == meta["chunks"], "got %d" % len(blocks))
last = {c["event"]: c for c in blocks[-1]["counters"]}
for name, want in meta["perf_stat"].items():
    if name in ("time_elapsed", "ipc", "cache_miss_rate"):
        continue
    got = last.get(name, {}).get("value")
    check("last block's %s equals metadata's %s" % (name, want["value"]),
          got is not None and abs(got - want["value"]) < 1e-9 * max(1, abs(want["value"])),
          "got %r" % got)
check("counts are typed integers", isinstance(last["cycles"]["value"], int)
      and last["cycles"]["status"] == "counted", repr(last.get("cycles")))
check("elapsed seconds %.9f" % meta["perf_stat"]["time_elapsed"]["value"],
      abs(blocks[-1]["elapsed_seconds"] - meta["perf_stat"]["time_elapsed"]["value"]) < 1e-9,
      repr(blocks[-1]["elapsed_seconds"]))
ipc = blocks[-1]["ipc"]
check("derived IPC %.4f from instructions/cycles" % (ipc or 0),
      ipc is not None and abs(ipc - last["instructions"]["value"] / last["cycles"]["value"]) < 1e-9
      and abs(ipc - meta["perf_stat"]["ipc"]["value"]) < 0.01, repr(ipc))
PY
