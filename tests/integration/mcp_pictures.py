"""mcp_pictures.py - the new inputs and the PNG pictures through perflens-mcp,
as an agent meets them.  Run by test_pictures.sh with HERE, BUILD_DIR, WORK,
INPUTS (a folder with good.pb, good.cpuprofile, sampled.speedscope.json and
chunk.txt, a real perf script capture) and PICS (where the pictures are
saved for a look).

For each input: analyze_profile (format auto) says the format and its
events; the agent follows next_steps to list_hotspots, then asks
export_profile(format=png) and get_hotspot(picture=true).  Every picture
comes back as an MCP image content block beside the structured result, and
is checked with the tests' own PNG reader (png_read.py: signature, chunk
CRCs, IHDR, zlib-inflated IDAT, the five row filters undone): it decodes,
has the size the result says, is at most 200 KB, equals the file written
under the artifact root, and is the same bytes when asked again.  The
"all" bar's pixels are the fill the SVG export gives "all" (same colour
rule), and the background is the SVG's gradient colour.
"""
import base64
import json
import os
import re
import sys

sys.path.insert(0, os.environ["HERE"])
from mcp_client import *  # noqa: E402,F401,F403
from png_read import png_read  # noqa: E402

build, work, inputs, pics = (os.environ[k] for k in ("BUILD_DIR", "WORK", "INPUTS", "PICS"))


def images(r):
    return [base64.b64decode(c["data"]) for c in r["result"]["content"]
            if c.get("type") == "image" and c.get("mimeType") == "image/png"]


s = Stdio([build + "/perflens-mcp", "--allowed-root", work, "--artifact-root", work + "/art",
           "--allow-writes"], "pictures")
s.initialize()
tools = {t["name"]: t for t in s.request("tools/list")["result"]["tools"]}
check("pictures: export_profile offers png",
      "png" in tools["export_profile"]["inputSchema"]["properties"]["format"]["enum"])
# get_hotspot's picture argument is in its schema only when the tools/list
# budget has room for it (tools/get_hotspot.c draws it when asked).
sandwich = "picture" in tools["get_hotspot"]["inputSchema"]["properties"]
if not sandwich:
    print("skip - pictures: get_hotspot has no picture argument in this build's schema (the tools/list budget); the sandwich PNG is not reachable over MCP")

cases = [("good.pb", "pprof", "cpu"), ("good.cpuprofile", "cpuprofile", "time"),
         ("sampled.speedscope.json", "speedscope", "time"), ("chunk.txt", "perf_script", None)]
for name, fmt, event in cases:
    r = s.call("analyze_profile", {"path": os.path.join(inputs, name)}, timeout=120)
    a = r["result"].get("structuredContent", {})
    if not check("%s: analyze_profile reads it as %s" % (name, fmt),
                 a.get("inputs", [{}])[0].get("format") == fmt, short(r)):
        continue
    aid = a["analysis_id"]
    event = event or max(a["events"], key=lambda e: e["samples"])["name"]
    step = next((st for st in a["next_steps"] if st["tool"] == "list_hotspots"), None)
    args = dict(step["arguments"]) if step else {"analysis_id": aid}
    args["event"] = event
    hs = s.call("list_hotspots", args)["result"].get("structuredContent", {})
    check("%s: list_hotspots from next_steps gives %s hotspots in %s" % (name, event, hs.get("unit")),
          hs.get("hotspots") and hs.get("event") == event, short(hs))
    if fmt != "perf_script":
        # perf cannot record a pprof sample type or a V8/speedscope weight:
        # no candidate may send the agent to collect_profile for one.
        cl = s.call("classify_hotspots", {"analysis_id": aid, "limit": 50}, timeout=120)["result"].get("structuredContent", {})
        tools_named = [st.get("tool") for c in cl.get("candidates", []) for st in c.get("next_steps", [])]
        check("%s: classify_hotspots names no collect_profile step for events perf cannot record (%d candidates)"
              % (name, len(cl.get("candidates", []))), "candidates" in cl and "collect_profile" not in tools_named,
              short(cl))

    r = s.call("export_profile", {"analysis_id": aid, "event": event, "format": "png"}, timeout=120)
    e = r["result"].get("structuredContent", {})
    got = images(r)
    if not check("%s: export_profile(png) returns the picture as an image content block" % name,
                 len(got) == 1 and e.get("picture", {}).get("inline"), short(r)):
        continue
    png = got[0]
    w, h, rows = png_read(png)
    ondisk = open(e["path"], "rb").read()
    again = images(s.call("export_profile", {"analysis_id": aid, "event": event, "format": "png"}, timeout=120))
    check("%s: the PNG decodes (%dx%d), is the size the result says, <= 200 KB (%d bytes), equals the file and the same bytes again"
          % (name, w, h, len(png)),
          (w, h) == (e["picture"]["width"], e["picture"]["height"]) and len(png) <= 200 * 1024 and
          png == ondisk and again == [png], "%s %d" % (e["picture"], len(png)))
    open(os.path.join(pics, name + ".png"), "wb").write(png)
    # The SVG's fill of "all" and its background: same colour rule.
    sv = s.call("export_profile", {"analysis_id": aid, "event": event, "format": "svg"}, timeout=120)
    svg = open(sv["result"]["structuredContent"]["path"]).read()
    # The SVG's next step is the same picture, as an agent would follow it.
    step = next((x for x in sv["result"]["structuredContent"].get("next_steps", [])
                 if x.get("tool") == "export_profile" and x["arguments"].get("format") == "png"), None)
    check("%s: export_profile(svg) names the same flame graph as a PNG next, and following it gives this PNG"
          % name, step and images(s.call("export_profile", step["arguments"], timeout=120)) == [png],
          short(sv["result"]["structuredContent"].get("next_steps")))
    m = re.search(r"<title>all \(.*?</title><rect [^>]*fill=\"rgb\((\d+),(\d+),(\d+)\)\"", svg)
    all_rgb = tuple(int(v) for v in m.groups()) if m else None
    bar = rows[h - 10 - 8][w // 2]     # the middle of the bottom bar ("all")
    check("%s: the PNG's \"all\" bar is the SVG's fill %s and the corner its background" % (name, all_rgb),
          bar == all_rgb and rows[0][0] == (0xee, 0xee, 0xee), "bar %s corner %s" % (bar, rows[0][0]))

    top = hs["hotspots"][0]
    if not sandwich:
        continue
    r = s.call("get_hotspot", {"analysis_id": aid, "event": event, "hotspot_id": top["hotspot_id"],
                               "picture": True}, timeout=120)
    g = r["result"].get("structuredContent", {})
    got = images(r)
    ok_pic = len(got) == 1 and g.get("callers") is not None
    if ok_pic:
        w2, h2, _ = png_read(got[0])
        ok_pic = (w2, h2) == (g["picture"]["width"], g["picture"]["height"]) and len(got[0]) <= 200 * 1024
        open(os.path.join(pics, name + ".sandwich.png"), "wb").write(got[0])
    check("%s: get_hotspot(picture) gives %s's callers and callees beside a decodable sandwich PNG"
          % (name, top["symbol"]), ok_pic, short(r))


def maps_of(pid):
    try:
        with open("/proc/%d/maps" % pid) as f:
            return f.read()
    except OSError:
        return None


# Only a worker that draws loads libcairo: the server and its zygote, which
# every worker is forked from, stay without it after all these pictures
# (the kernel's own list of each process's mappings says so).
kids = []
for task in os.listdir("/proc/%d/task" % s.p.pid):
    try:
        kids += [int(k) for k in open("/proc/%d/task/%s/children" % (s.p.pid, task)).read().split()]
    except OSError:
        pass
zygotes = [k for k in kids if (open("/proc/%d/comm" % k).read().strip() if os.path.exists("/proc/%d/comm" % k) else "") == "perflens-zygote"]
server_maps = maps_of(s.p.pid)
if not zygotes or server_maps is None:
    print("skip - pictures: no zygote to look at (workers forked directly)")
else:
    zmaps = maps_of(zygotes[0]) or ""
    check("pictures: after the pictures, neither the server nor its zygote has libcairo mapped "
          "(%d and %d mappings)" % (server_maps.count("\n"), zmaps.count("\n")),
          "libcairo" not in server_maps and zmaps and "libcairo" not in zmaps,
          [l for l in (server_maps + zmaps).splitlines() if "cairo" in l][:3])
s.close()
import mcp_client  # noqa: E402
sys.exit(1 if mcp_client.fails else 0)
