// viewer.js - the PerfLens viewer: a read-only page over the tools.
//
// Every figure on the page is a tool's answer (through /viewer/api/call,
// the same registry and sandboxed worker as MCP) or an artifact the tools
// wrote (the summary and the stack table); the page only lays them out.
// The whole view lives in the URL's query (view, a, e, tab, sort, off,
// min, comm, focus, ignore, hide, t0, t1, sw, zoom, q, fn, b, c, bt0, bt1,
// ct0, ct1, exp), so
// a link reopens it; tabs and controls change it with history.pushState
// and the page redraws from it.  Every text from a profile is put in as
// text (dom.js), never as HTML.
//
// An analysis page has a timeline (get_timeline) above its tabs: dragging
// across it (or typing the two ends) sets the time window t0, t1 (seconds
// after the first sample), which every tool call carries as view.time and
// the flame graph applies to the stack table's timed samples.  A frame's
// menu (right click, or m on the focused frame) sets focus, ignore or hide
// to that function, or opens its sandwich (sw: its hotspot_id): the flame
// tab then draws its callers above it and its callees below.  The Compare
// page takes a window per side (bt0, bt1; ct0, ct1): compare_profiles' view
// and candidate_view, so two phases of one recording compare.

import {el, clear, fmt, pct, call, artifactJson, errorBox} from "./dom.js";
import {decodeStacks, CallTree, FlameView, Names} from "./flame.js";

const app = document.getElementById("app");
const PAGE = 20;

// ------------------------------------------------------------- state

function readState() {
  return Object.fromEntries(new URLSearchParams(location.search));
}
let state = readState();

// Merge `patch` into the state (null removes a key), put it in the URL
// and redraw; replace instead of push for small steps (typing).
function go(patch, replace) {
  const next = {...state};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || v === undefined || v === "") delete next[k];
    else next[k] = String(v);
  }
  state = next;
  const url = "?" + new URLSearchParams(next).toString();
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  render();
}
// The same without a redraw: the flame graph's zoom and search, which
// the graph has already drawn.
function setUrl(patch) {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || v === undefined || v === "") delete state[k];
    else state[k] = String(v);
  }
  history.replaceState(null, "", "?" + new URLSearchParams(state).toString());
}
window.addEventListener("popstate", () => { state = readState(); render(); });

// A function's name as the tools list it: the short form when there is one
// (C++/Rust without template arguments and parameters), the full name and
// the linker's one step away, in the tooltip.
function fnTitle(f) {
  return f.short_name ? f.symbol + (f.linkage_name ? "\n" + f.linkage_name : "") : null;
}

function link(text, patch, attrs) {
  // a null, undefined or empty value leaves its key out (as go() does)
  const target = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== null && v !== undefined && v !== ""));
  const a = el("a", {...(attrs || {}), href: "?" + new URLSearchParams(target).toString()}, text);
  a.addEventListener("click", e => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    state = {};
    go(target);
  });
  return a;
}

function button(text, onClick, attrs) {
  const b = el("button", {type: "button", ...(attrs || {})}, text);
  b.addEventListener("click", onClick);
  return b;
}

// -------------------------------------------------------------- theme

function applyTheme() {
  const saved = localStorage.getItem("perflens-theme");
  const dark = saved ? saved === "dark" : window.matchMedia("(prefers-color-scheme: dark)").matches;
  document.documentElement.dataset.theme = dark ? "dark" : "light";
}
applyTheme();
document.getElementById("theme").addEventListener("click", () => {
  const dark = document.documentElement.dataset.theme !== "dark";
  localStorage.setItem("perflens-theme", dark ? "dark" : "light");
  applyTheme();
  render();
});

// ------------------------------------------------------- long polling

// One long poll at a time (/viewer/api/wait answers when something under
// the artifact root changes, or after its timeout): `onChange(names)` runs
// on each change; a new page's render stops the old page's poll.
let watcher = null;
function watch(query, onChange) {
  const ctl = new AbortController();
  watcher = ctl;
  (async () => {
    while (!ctl.signal.aborted) {
      let names = [];
      try {
        const r = await fetch("/viewer/api/wait?" + new URLSearchParams(query), {signal: ctl.signal, credentials: "same-origin"});
        if (!r.ok) return;  // logged out, or nothing to watch: stop, never spin
        names = (await r.json()).changed || [];
      } catch (_) {
        return;
      }
      if (names.length && !ctl.signal.aborted) await onChange(names);
    }
  })();
}

// ------------------------------------------------------------ routing

let renderSeq = 0;
async function render() {
  const seq = ++renderSeq;
  if (watcher) watcher.abort();
  watcher = null;
  const view = state.view || (state.a ? "analysis" : "list");
  document.querySelectorAll("nav a").forEach(a => a.removeAttribute("aria-current"));
  const nav = document.getElementById("nav-" + view);
  if (nav) nav.setAttribute("aria-current", "page");
  const page = el("div", {class: "page"});
  try {
    if (view === "analysis" && state.a) await analysisPage(page, seq);
    else if (view === "compare") await comparePage(page, seq);
    else if (view === "live") await livePage(page, seq);
    else if (view === "fleet") await fleetPage(page, seq);
    else await listPage(page, seq);
  } catch (e) {
    page.append(errorBox(e));
  }
  if (seq !== renderSeq) return;  // a newer render owns the page
  clear(app).append(page);
  document.body.dataset.ready = String(seq);
  app.dispatchEvent(new CustomEvent("rendered"));
}

// ------------------------------------------------------- the analyses

async function listPage(page) {
  const filter = state.filter || "";
  const res = await call("list_artifacts", {kind: "analysis", limit: PAGE, ...(filter ? {filter} : {}),
    ...(state.cursor ? {cursor: state.cursor} : {})});
  const input = el("input", {type: "search", id: "list-filter", value: filter, placeholder: "path or input contains",
    "aria-label": "filter analyses"});
  input.addEventListener("change", () => go({view: "list", filter: input.value, cursor: null}));
  page.append(el("h1", {}, "Analyses"),
    el("div", {class: "controls"}, el("label", {}, "Filter ", input)));
  const rows = res.artifacts.map(a => {
    const id = a.path.replace(/^analyses\//, "").replace(/\.json$/, "");
    const b = a.analysis || {inputs: [], events: [], modified: ""};
    return el("tr", {"data-id": id},
      el("td", {}, link(id, {a: id})),
      el("td", {class: "path"}, b.inputs.join(", ")),
      el("td", {}, b.events.map(e => e.name).join(", ")),
      el("td", {class: "num"}, b.events.map(e => fmt(e.samples)).join(" / ")),
      el("td", {}, b.modified.replace("T", " ").replace("Z", " UTC")));
  });
  page.append(el("table", {id: "analyses"},
    el("thead", {}, el("tr", {}, ["id", "input", "events", "samples (per event)", "written"].map(h => el("th", {scope: "col"}, h)))),
    el("tbody", {}, rows)));
  page.append(pager(res.page, c => go({view: "list", filter: filter || null, cursor: c})));
  // A new analysis shows up without a reload.
  watch({timeout: 25}, names => { if (names.includes("analyses")) render(); });
  if (!rows.length) page.append(el("p", {}, "No analyses under the artifact root yet: an agent writes them with analyze_profile."));
}

// A pager for a tool's page object: next with its cursor, first again.
function pager(pg, goCursor) {
  const from = pg.total_items ? pg.offset + 1 : 0, to = pg.offset + pg.returned;
  return el("div", {class: "pager"},
    el("span", {class: "page-info"}, `${from}\u2013${to} of ${pg.total_items}`), " ",
    pg.offset > 0 ? button("First page", () => goCursor(null), {id: "page-first"}) : null, " ",
    pg.next_cursor ? button("Next page", () => goCursor(pg.next_cursor), {id: "page-next"}) : null);
}

// ------------------------------------------------------- one analysis

// The tools' view argument from the URL (focus, ignore, hide: POSIX
// extended regular expressions on function names; t0, t1: the time
// window), or null.  Every tool call of an analysis page carries it; the
// flame graph applies the same patterns as JavaScript RegExps (the same
// for plain names, alternations and anchors) to the stack table.
const VIEW_KEYS = ["focus", "ignore", "hide"];
function patternsOf() {
  const v = {};
  for (const k of VIEW_KEYS) if (state[k]) v[k] = state[k];
  return Object.keys(v).length ? v : null;
}
// The window in the URL (keys t0, t1, or another pair) as view.time, or null.
function timeOf(k0 = "t0", k1 = "t1") {
  if (!state[k0] && !state[k1]) return null;
  const t = {from_seconds: Number(state[k0] || 0)};
  if (state[k1]) t.to_seconds = Number(state[k1]);
  return t;
}
function viewOf() {
  const v = {...(patternsOf() || {})}, t = timeOf();
  if (t) v.time = t;
  return Object.keys(v).length ? v : null;
}
// Seconds as the URL holds them: to the microsecond, no trailing zeros.
const secs = x => String(Math.round(x * 1e6) / 1e6);
// A name as a pattern matching it alone (a name too long for a pattern's
// 256 bytes: its start).
const quoteRe = s => s.replace(/[.[\]{}()*+?^$|\\]/g, "\\$&");
function exactly(s) {
  const whole = "^" + quoteRe(s) + "$";
  if (whole.length <= 256) return whole;
  let n = 200;
  while (n > 0 && ("^" + quoteRe(s.slice(0, n))).length > 256) n -= 20;
  return "^" + quoteRe(s.slice(0, n));
}

const TABS = [["hotspots", "Hotspots"], ["flame", "Flame graph"], ["paths", "Call paths"], ["threads", "Threads"],
  ["source", "Source"], ["candidates", "Candidates"], ["exports", "Exports"]];

// The hotspot call of a view whose event the URL names, started with the
// summary's fetch rather than after it (one round trip less).
function hotspotArgs(args) {
  const q = {...args, sort: state.sort === "inclusive" ? "inclusive" : "self", limit: PAGE,
    offset: Math.max(0, parseInt(state.off || "0", 10) || 0), min_percent: state.min ? Number(state.min) : 0};
  if (state.comm) q.comm = state.comm;
  if (viewOf()) q.view = viewOf();
  return q;
}
let early = null;

async function analysisPage(page, seq) {
  const id = state.a;
  early = null;
  if (state.e && (!state.tab || state.tab === "hotspots")) {
    const q = hotspotArgs({analysis_id: id, event: state.e});
    early = {key: JSON.stringify(q), p: call("list_hotspots", q)};
    early.p.catch(() => {});
  }
  const summary = await artifactJson(`analyses/${id}.json`);
  const events = summary.events.map(e => e.name);
  const event = events.includes(state.e) ? state.e : events[0];
  const tab = TABS.some(t => t[0] === state.tab) ? state.tab : "hotspots";
  const picker = el("select", {id: "event", "aria-label": "event"},
    summary.events.map(e => el("option", {value: e.name, selected: e.name === event}, `${e.name} (${fmt(e.samples)} samples)`)));
  picker.addEventListener("change", () => go({e: picker.value, zoom: null, off: null, q: null, fn: null}));
  page.append(el("h1", {}, "Analysis ", el("code", {id: "analysis-id"}, id)),
    el("p", {class: "path"}, (summary.provenance.inputs || []).map(i => i.path).join(", ")),
    el("div", {class: "controls"}, el("label", {}, "Event ", picker),
      el("span", {class: "note"}, " one event at a time: events are never merged")));
  page.append(qualityBox(summary, event), viewBox(), await timelineBox({analysis_id: id, event}));
  const tabs = el("div", {role: "tablist", class: "tabs"}, TABS.map(([k, label]) => {
    const b = button(label, () => go({tab: k}), {role: "tab", id: "tab-" + k, "aria-selected": k === tab ? "true" : "false"});
    b.addEventListener("keydown", e => {
      const i = TABS.findIndex(t => t[0] === k);
      const j = e.key === "ArrowRight" ? i + 1 : e.key === "ArrowLeft" ? i - 1 : -1;
      if (j >= 0 && j < TABS.length) go({tab: TABS[j][0]});
    });
    return b;
  }));
  const panel = el("section", {role: "tabpanel", id: "panel", "aria-labelledby": "tab-" + tab});
  page.append(tabs, panel);
  const args = {analysis_id: id, event};
  if (viewOf()) args.view = viewOf();
  await ({hotspots: hotspotsTab, flame: flameTab, paths: pathsTab, threads: threadsTab, source: sourceTab,
    candidates: candidatesTab, exports: exportsTab})[tab](panel, args, summary, seq);
}

// The view's patterns, each one a field of the URL.
function viewBox() {
  const field = (k, hint) => {
    const input = el("input", {id: "view-" + k, type: "search", value: state[k] || "", placeholder: hint, "aria-label": k});
    input.addEventListener("change", () => go({[k]: input.value, off: null, zoom: null, fn: null}));
    return el("label", {}, k[0].toUpperCase() + k.slice(1) + " ", input);
  };
  return el("div", {class: "controls", id: "view"}, field("focus", "keep stacks through"), field("ignore", "drop stacks through"),
    field("hide", "remove frames of"), el("span", {class: "note"}, " regular expressions on function names"));
}

// --------------------------------------------------------- the timeline

// get_timeline's answers, per analysis and event (one per page load: the
// timeline is of the whole event, whatever the window).
const timelines = new Map();
function timelineOf(args) {
  const key = JSON.stringify(args);
  if (!timelines.has(key)) {
    const p = call("get_timeline", {...args, buckets: 200});
    p.catch(() => timelines.delete(key));
    timelines.set(key, p);
  }
  return timelines.get(key);
}

// The event's samples per time bucket as bars, the window shaded; drag
// across the bars to set the window (t0, t1), or type its ends.  An
// analysis without sample times says so in a line instead.
async function timelineBox(args) {
  let tl;
  try {
    tl = await timelineOf(state.sw ? {...args, hotspot_id: state.sw} : args);
  } catch (e) {
    return el("p", {class: "note", id: "timeline-none"}, `No timeline: ${e.message}`);
  }
  const n = tl.samples.length, span = n * tl.bucket_seconds;
  const t0 = state.t0 ? Number(state.t0) : null, t1 = state.t1 ? Number(state.t1) : null;
  const num = (id, label, v) => {
    const i = el("input", {id, type: "number", min: 0, step: "any", value: v === null ? "" : secs(v), "aria-label": label});
    i.addEventListener("change", () => go({[id === "time-from" ? "t0" : "t1"]: i.value, off: null, zoom: null, cursor: null}));
    return el("label", {}, label + " ", i);
  };
  const canvas = el("canvas", {class: "timeline", id: "timeline-canvas", role: "img",
    "aria-label": `samples of ${tl.event} per ${tl.bucket_seconds} s over ${tl.span_seconds} s; drag to choose a window`});
  const box = el("section", {class: "timeline-box", id: "timeline", "aria-label": "timeline",
    "data-buckets": String(n), "data-bucket-seconds": String(tl.bucket_seconds), "data-span": String(span)},
    el("div", {class: "controls"},
      el("strong", {}, "Timeline"), num("time-from", "From s", t0), num("time-to", "To s", t1),
      t0 !== null || t1 !== null ? button("Whole profile", () => go({t0: null, t1: null, off: null, zoom: null, cursor: null}),
        {id: "time-clear"}) : null,
      t0 !== null || t1 !== null ? link("Compare with the whole profile", {view: "compare", b: args.analysis_id, c: args.analysis_id,
        e: args.event, ...(t0 === null ? {} : {ct0: secs(t0)}), ...(t1 === null ? {} : {ct1: secs(t1)})}, {id: "time-compare"}) : null,
      el("span", {class: "note", id: "timeline-note"}, `${fmt(tl.total.samples)} timed samples over ${tl.span_seconds} s, ` +
        `${tl.bucket_seconds} s a bar` + (tl.function ? `; in violet, ${tl.function.symbol}'s inclusive part` : "") +
        (tl.timeless_samples ? `; ${fmt(tl.timeless_samples)} samples without a time are in no window` : ""))),
    canvas);
  const H = 70;
  const draw = (brush) => {
    const W = Math.max(box.clientWidth - 2, 200), dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(W * dpr);
    canvas.height = Math.round(H * dpr);
    canvas.style.width = W + "px";
    canvas.style.height = H + "px";
    const g = canvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, W, H);
    const max = Math.max(1, ...tl.samples), bw = W / n;
    const css = getComputedStyle(document.documentElement);
    g.fillStyle = css.getPropertyValue("--accent").trim() || "#b3470f";
    tl.samples.forEach((v, i) => { if (v) g.fillRect(i * bw, H - (v / max) * (H - 4), Math.max(bw - 0.5, 0.5), (v / max) * (H - 4)); });
    if (tl.function) {   // the sandwich's function: its inclusive part of each bar
      g.fillStyle = "#6a3fb5";
      tl.function.period_per_bucket.forEach((fp, i) => {
        const h = tl.period[i] ? (tl.samples[i] * fp / tl.period[i] / max) * (H - 4) : 0;
        if (h > 0) g.fillRect(i * bw, H - h, Math.max(bw - 0.5, 0.5), h);
      });
    }
    const win = brush || (t0 !== null || t1 !== null ? [t0 || 0, t1 === null ? span : t1] : null);
    if (win) {
      const [a, b] = win[0] <= win[1] ? win : [win[1], win[0]];
      g.fillStyle = "rgba(11, 87, 208, 0.18)";
      g.fillRect(a / span * W, 0, (b - a) / span * W, H);
      g.strokeStyle = css.getPropertyValue("--focus").trim() || "#0b57d0";
      g.strokeRect(a / span * W + 0.5, 0.5, Math.max((b - a) / span * W - 1, 1), H - 1);
    }
  };
  // Seconds under a pointer, clamped to the timeline.
  const at = e => {
    const r = canvas.getBoundingClientRect();
    return Math.min(Math.max((e.clientX - r.left) / r.width, 0), 1) * span;
  };
  let from = null;
  canvas.addEventListener("pointerdown", e => { from = at(e); canvas.setPointerCapture(e.pointerId); draw([from, from]); });
  canvas.addEventListener("pointermove", e => { if (from !== null) draw([from, at(e)]); });
  canvas.addEventListener("pointerup", e => {
    if (from === null) return;
    const to = at(e), a = Math.min(from, to), b = Math.max(from, to);
    from = null;
    if (b - a < tl.bucket_seconds / 4) { draw(); return; }   // a click, not a drag
    go({t0: secs(a), t1: secs(b), off: null, zoom: null, cursor: null});
  });
  app.addEventListener("rendered", () => {
    draw();
    new ResizeObserver(() => draw()).observe(box);
  }, {once: true});
  return box;
}

// Data quality first: what the figures below can and cannot say.
function qualityBox(summary, event) {
  const ev = summary.events.find(e => e.name === event) || {};
  const view = (summary.views || []).find(v => v.event === event) || {};
  const c = summary.provenance.counts || {};
  const q = summary.quality || {};
  const fr = q.frame_recovery;
  const dl = (k, v, id) => [el("dt", {}, k), el("dd", id ? {id} : {}, v)];
  return el("section", {class: "quality", id: "quality", "aria-label": "data quality"},
    el("h2", {}, "Data quality"),
    el("dl", {},
      dl("samples", fmt(ev.samples), "q-samples"),
      dl("period", `${fmt(ev.period)} ${ev.unit || ""}`, "q-period"),
      dl("unique stacks", fmt(view.unique_stacks), "q-stacks"),
      dl("unknown self share", pct(view.unknown_self_percent), "q-unknown"),
      dl("records", `${fmt(c.records_parsed)} parsed, ${fmt(c.records_skipped)} skipped, ${fmt(c.records_malformed)} malformed`),
      dl("source lines", fmt(c.srclines)),
      fr ? dl("frame recovery", `${fmt(fr.user_frames_unknown)} unknown user frames, ${fmt(fr.recovered)} recovered` +
        Object.entries(fr.not_recovered || {}).map(([k, v]) => `; ${fmt(v)} not: ${k.replace(/_/g, " ")}`).join("")) : null),
    (q.warnings || []).length ? el("ul", {class: "warnings"}, q.warnings.map(w => el("li", {}, w))) : null);
}

async function hotspotsTab(panel, args) {
  const q = hotspotArgs(args);
  const {sort, offset: off, min_percent: min} = q;
  const res = await (early && early.key === JSON.stringify(q) ? early.p : call("list_hotspots", q));
  early = null;
  const sortSel = el("select", {id: "sort", "aria-label": "sort by"},
    ["self", "inclusive"].map(s => el("option", {value: s, selected: s === sort}, s)));
  sortSel.addEventListener("change", () => go({sort: sortSel.value, off: null}));
  const minIn = el("input", {id: "min-percent", type: "number", min: 0, max: 100, step: "0.1", value: min || "", "aria-label": "minimum percent"});
  minIn.addEventListener("change", () => go({min: minIn.value, off: null}));
  const commIn = el("input", {id: "comm", type: "search", value: state.comm || "", placeholder: "thread name", "aria-label": "thread name"});
  commIn.addEventListener("change", () => go({comm: commIn.value, off: null}));
  panel.append(el("div", {class: "controls"},
    el("label", {}, "Sort ", sortSel), el("label", {}, "Min % ", minIn), el("label", {}, "Thread ", commIn)));
  const head = ["#", "function", "module", "self %", "self samples", "inclusive %", "inclusive samples", ""];
  panel.append(el("table", {id: "hotspots", "data-total-samples": res.total.samples},
    el("caption", {}, `${res.event}: ${fmt(res.total.samples)} samples, sorted by ${sort}` +
      (res.view ? `; the view keeps ${pct(res.view.percent_of_samples)} of the samples` : "")),
    el("thead", {}, el("tr", {}, head.map(h => el("th", {scope: "col"}, h)))),
    el("tbody", {}, res.hotspots.map(h => el("tr", {"data-hotspot": h.hotspot_id},
      el("td", {class: "num"}, h.rank),
      el("td", {class: "sym"}, link(h.short_name || h.symbol, {...state, fn: h.hotspot_id}, {class: "fn-link", title: fnTitle(h)})),
      el("td", {class: "path"}, h.dso || ""),
      el("td", {class: "num self-pct"}, pct(h.self.percent)),
      el("td", {class: "num"}, fmt(h.self.samples)),
      el("td", {class: "num incl-pct"}, pct(h.inclusive.percent)),
      el("td", {class: "num"}, fmt(h.inclusive.samples)),
      el("td", {}, link("source", {a: args.analysis_id, e: args.event, tab: "source", fn: h.hotspot_id}), " ",
        VIEW_KEYS.flatMap(k => [link(k, {...state, [k]: exactly(h.symbol), off: null, fn: null},
          {class: "view-" + k, title: `${k} ${h.symbol}`}), " "])))))));
  const pg = res.page;
  panel.append(el("div", {class: "pager"},
    el("span", {class: "page-info"}, `${pg.total_items ? pg.offset + 1 : 0}\u2013${pg.offset + pg.returned} of ${pg.total_items}`), " ",
    off > 0 ? button("Previous page", () => go({off: Math.max(0, off - PAGE) || null}), {id: "page-prev"}) : null, " ",
    pg.next_cursor ? button("Next page", () => go({off: off + PAGE}), {id: "page-next"}) : null));
  if (state.fn) await hotspotDetail(panel, args, state.fn);
}

// One function's callers and callees (get_hotspot), under the table.
async function hotspotDetail(panel, args, fn) {
  let h;
  try {
    h = await call("get_hotspot", {...args, hotspot_id: fn, limit: 10});
  } catch (e) {
    panel.append(errorBox(e));
    return;
  }
  const side = (title, rows, total) => el("div", {class: "side"}, el("h3", {}, `${title} (${total})`),
    el("table", {}, el("tbody", {}, rows.map(r => el("tr", {},
      el("td", {class: "sym"}, r.hotspot_id ? link(r.symbol, {...state, fn: r.hotspot_id}) : r.symbol),
      el("td", {class: "num"}, pct(r.percent_of_hotspot)), el("td", {class: "num"}, fmt(r.samples)))))));
  panel.append(el("section", {id: "hotspot-detail", class: "detail", "aria-label": "callers and callees"},
    el("h2", {}, el("span", {class: "sym", title: fnTitle(h)}, h.short_name || h.symbol), el("span", {class: "note"}, ` ${h.dso || ""}`)),
    h.short_name ? el("p", {class: "sym", id: "full-name"}, h.symbol, h.linkage_name ? el("span", {class: "note"}, ` (${h.linkage_name})`) : null) : null,
    el("p", {}, `self ${pct(h.self.percent)} (${fmt(h.self.samples)} samples), inclusive ${pct(h.inclusive.percent)} ` +
      `(${fmt(h.inclusive.samples)} samples); shares below are of this function's inclusive weight`),
    el("div", {class: "sides"}, side("Callers", h.callers, h.callers_total), side("Callees", h.callees, h.callees_total)),
    link("Source of this function", {a: args.analysis_id, e: args.event, tab: "source", fn}), " ",
    link("Its sandwich (callers and callees as flame graphs)", {...state, tab: "flame", sw: fn, fn: null, zoom: null},
      {id: "detail-sandwich"})));
}

// Decoded stack tables, and their trees per analysis, patterns and
// sandwich (the time window changes weights only: CallTree.weigh).
const tables = new Map(), trees = new Map();
async function tableOf(id) {
  if (!tables.has(id)) tables.set(id, decodeStacks(await artifactJson(`analyses/${id}.stacks.json`)));
  return tables.get(id);
}
async function treeOf(id, names, patterns, sandwich) {
  const key = id + (names ? "/shared" : "") + (patterns ? JSON.stringify(patterns) : "") +
    (sandwich ? "/" + sandwich.side + ":" + [...sandwich.fids].join(",") : "");
  if (!names && trees.has(key)) return trees.get(key);
  const table = await tableOf(id);
  const re = patterns && Object.fromEntries(Object.entries(patterns).map(([k, v]) => [k, new RegExp(v)]));
  const tree = new CallTree(table, names, re, sandwich);
  if (!names) trees.set(key, tree);
  return tree;
}
// The window as the flame graph weighs it: ns after the first sample.
function windowNs(k0, k1) {
  const t = timeOf(k0, k1);
  return t ? {from: Math.round(t.from_seconds * 1e9), to: t.to_seconds === undefined ? Infinity : Math.round(t.to_seconds * 1e9)} : null;
}

// A frame's menu: zoom, focus, ignore, hide (the function's exact name as
// the pattern), and its sandwich.  One menu at a time; Escape, a choice
// or a click elsewhere closes it, and the frame gets the focus back.
let openMenu = null;
function closeMenu() {
  if (!openMenu) return;
  const {menu, back} = openMenu;
  openMenu = null;
  menu.remove();
  if (back) back.focus();
}
function frameMenu(tree, flame, node, x, y) {
  closeMenu();
  const f = tree.names.list[tree.fn[node]];
  const fid = tree.table.funcs.findIndex(g => g.symbol === f.symbol && g.dso === f.dso);
  const item = (label, id, fn) => {
    const b = button(label, () => { closeMenu(); fn(); }, {role: "menuitem", id: "menu-" + id, class: "menu-item"});
    return b;
  };
  const pattern = exactly(f.symbol);
  const menu = el("div", {class: "frame-menu", role: "menu", id: "frame-menu", "aria-label": `frame ${f.symbol}`,
    "data-symbol": f.symbol},
    el("div", {class: "menu-title sym"}, f.symbol),
    item("Zoom", "zoom", () => flame.setZoom(node, true)),
    item("Focus on this function", "focus", () => go({focus: pattern, off: null, zoom: null, fn: null})),
    item("Ignore its stacks", "ignore", () => go({ignore: pattern, off: null, zoom: null, fn: null})),
    item("Hide its frames", "hide", () => go({hide: pattern, off: null, zoom: null, fn: null})),
    fid >= 0 ? item("Sandwich: callers and callees", "sandwich", () => go({tab: "flame", sw: "fn" + fid, zoom: null})) : null);
  menu.style.left = Math.min(x, window.innerWidth - 260) + "px";
  menu.style.top = Math.min(y, window.innerHeight - 200) + "px";
  menu.addEventListener("keydown", e => {
    const items = [...menu.querySelectorAll("button")], i = items.indexOf(document.activeElement);
    if (e.key === "Escape") closeMenu();
    else if (e.key === "ArrowDown") items[(i + 1) % items.length].focus();
    else if (e.key === "ArrowUp") items[(i - 1 + items.length) % items.length].focus();
    else return;
    e.preventDefault();
  });
  document.body.append(menu);
  openMenu = {menu, back: flame.canvas};
  menu.querySelector("button").focus();
}
document.addEventListener("pointerdown", e => { if (openMenu && !openMenu.menu.contains(e.target)) closeMenu(); });

async function flameTab(panel, args) {
  const t0 = performance.now();
  // The tools judge the view first: a bad pattern, or one keeping nothing,
  // is their error, shown as theirs.
  if (args.view) await call("list_hotspots", {...args, limit: 1});
  if (state.sw) return sandwichTab(panel, args, state.sw);
  const tree = await treeOf(args.analysis_id, null, patternsOf());
  tree.weigh(args.event, windowNs());
  const loadMs = performance.now() - t0;  // fetch, decode, tree, weights
  const search = el("input", {id: "flame-search", type: "search", value: state.q || "", placeholder: "function name contains",
    "aria-label": "search functions"});
  const share = el("span", {id: "flame-matched", class: "note"});
  const host = el("div", {class: "flame-host", id: "flame"});
  panel.append(el("div", {class: "controls"},
    el("label", {}, "Search ", search), share, " ",
    button("Reset zoom", () => view.setZoom(0, true), {id: "flame-reset"})), host,
    el("p", {class: "note"}, `Width: share of ${args.event} period (${fmt(tree.total[0])}, ${fmt(tree.samples[0])} samples) ` +
      "from the stack table; click a frame to zoom, right-click it for focus, ignore, hide and its sandwich; " +
      "keyboard: arrows, Enter, Escape, m for the menu."));
  const showShare = () => {
    share.textContent = view.query ? ` matched: ${view.matchedPercent().toFixed(2)}% of the view (each stack once)` : "";
  };
  const view = new FlameView(host, st => { setUrl({zoom: st.zoom || null, q: st.q || null}); showShare(); },
    {onMenu: (n, x, y) => frameMenu(tree, view, n, x, y)});
  view.canvas.addEventListener("focus", () => view.draw());
  view.canvas.addEventListener("blur", () => view.draw());
  // Appended to the page after this returns: draw once it is in place.
  view.query = state.q || "";
  view.tree = tree;
  app.addEventListener("rendered", () => {
    view.setTree(tree);
    if (state.zoom) view.zoomToPath(state.zoom.split(".").map(Number));
    showShare();
    host.dataset.drawMs = view.lastDrawMs.toFixed(1);
    host.dataset.loadMs = loadMs.toFixed(1);
    host.dataset.nodes = String(tree.size);
    host.dataset.total = String(tree.total[0]);
    host.dataset.samples = String(tree.samples[0]);
  }, {once: true});
  search.addEventListener("input", () => { view.search(search.value, true); showShare(); });
  window.perflensFlame = view;
}

// A function's sandwich: its callers above it (a flame graph growing up
// from the function) and its callees below (an icicle hanging from it),
// from the stack table under the same view and window.
async function sandwichTab(panel, args, sw) {
  const table = await tableOf(args.analysis_id);
  const id = parseInt(String(sw).replace(/^fn/, ""), 10);
  const f = table.funcs[id];
  if (!f) {
    panel.append(el("p", {class: "error", role: "alert"}, `No function ${sw} in this analysis.`));
    return;
  }
  // Every id of the same name and module (an inlined copy is another id).
  const fids = new Set();
  table.funcs.forEach((g, i) => { if (g.symbol === f.symbol && g.dso === f.dso) fids.add(i); });
  const names = new Names(), win = windowNs();
  const callers = await treeOf(args.analysis_id, names, patternsOf(), {fids, side: "callers"});
  const callees = await treeOf(args.analysis_id, names, patternsOf(), {fids, side: "callees"});
  callers.weigh(args.event, win);
  callees.weigh(args.event, win);
  const all = await treeOf(args.analysis_id, null, patternsOf());
  all.weigh(args.event, win);
  const hostUp = el("div", {class: "flame-host", id: "sandwich-callers"});
  const hostDown = el("div", {class: "flame-host", id: "sandwich-callees"});
  panel.append(el("section", {id: "sandwich", "aria-label": "sandwich", "data-symbol": f.symbol,
      "data-samples": String(callers.samples[0])},
    el("h2", {}, "Sandwich of ", el("span", {class: "sym", id: "sandwich-symbol"}, f.symbol),
      el("span", {class: "note"}, ` ${f.dso || ""}`)),
    el("div", {class: "controls"},
      button("Close the sandwich", () => go({sw: null, zoom: null}), {id: "sandwich-close"}),
      link("Callers and callees as tables", {...state, tab: "hotspots", fn: sw, sw: null, zoom: null}, {id: "sandwich-table"}),
      el("span", {class: "note"}, `inclusive ${fmt(callers.samples[0])} samples, ` +
        `${(100 * callers.total[0] / (all.total[0] || 1)).toFixed(2)}% of ${args.event} in the view`)),
    el("h3", {}, "Callers (the function at the bottom, who called it above)"), hostUp,
    el("h3", {}, "Callees (the function at the top, what it called below)"), hostDown));
  const up = new FlameView(hostUp, null, {onMenu: (n, x, y) => frameMenu(callers, up, n, x, y)});
  const down = new FlameView(hostDown, null, {inverted: true, onMenu: (n, x, y) => frameMenu(callees, down, n, x, y)});
  app.addEventListener("rendered", () => { up.setTree(callers); down.setTree(callees); }, {once: true});
  window.perflensSandwich = {callers: up, callees: down};
}

async function pathsTab(panel, args) {
  const q = {...args, limit: 10};
  if (state.sym) q.symbol = state.sym;
  if (state.cursor) q.cursor = state.cursor;
  const res = await call("get_call_paths", q);
  const symIn = el("input", {id: "path-symbol", type: "search", value: state.sym || "", placeholder: "through function", "aria-label": "through function"});
  symIn.addEventListener("change", () => go({sym: symIn.value, cursor: null}));
  panel.append(el("div", {class: "controls"}, el("label", {}, "Through ", symIn)),
    el("ol", {id: "paths", class: "paths"}, res.paths.map(p => el("li", {},
      el("div", {class: "path-head"}, `${pct(p.percent)}, ${fmt(p.samples)} samples, depth ${p.depth}` +
        (p.elided_frames ? `, ${p.elided_frames} frames elided` : "")),
      el("div", {class: "frames"}, p.frames.map((f, i) => [i ? el("span", {class: "arrow"}, " \u2192 ") : null,
        el("span", {class: "sym", title: f.dso || ""}, f.symbol)]))))));
  if (res.caller_check && res.caller_check.note) panel.append(el("p", {class: "note"}, res.caller_check.note));
  panel.append(pager(res.page, c => go({cursor: c})));
}

async function threadsTab(panel, args) {
  const res = await call("list_threads", {...args, limit: 50});
  panel.append(el("table", {id: "threads"},
    el("thead", {}, el("tr", {}, ["#", "pid", "tid", "comm", "samples", "share", "top functions"].map(h => el("th", {scope: "col"}, h)))),
    el("tbody", {}, res.threads.map(t => el("tr", {},
      el("td", {class: "num"}, t.rank), el("td", {class: "num"}, t.pid ?? "-"), el("td", {class: "num"}, t.tid ?? "-"),
      el("td", {class: "sym"}, t.comm ?? "-"), el("td", {class: "num"}, fmt(t.samples)), el("td", {class: "num"}, pct(t.percent)),
      el("td", {}, (t.top_functions || []).map(f => `${f.symbol} ${pct(f.inclusive_percent)}`).join(", ") +
        (t.probably_blocked ? " (probably blocked)" : "")))))));
}

async function sourceTab(panel, args) {
  let fn = state.fn;
  if (!fn) {
    const top = await call("list_hotspots", {...args, limit: 1});
    fn = top.hotspots.length ? top.hotspots[0].hotspot_id : null;
  }
  if (!fn) {
    panel.append(el("p", {}, "No hotspot in this event."));
    return;
  }
  let res;
  try {
    res = await call("source_context", {...args, hotspot_id: fn, before: 3, after: 3, hot_lines: 10});
  } catch (e) {
    panel.append(errorBox(e));
    return;
  }
  panel.append(el("h2", {}, "Source of ", el("span", {class: "sym", id: "source-symbol"}, res.symbol || fn)),
    el("p", {class: "note"}, `${fmt(res.samples_with_lines)} samples with lines, ${fmt(res.samples_without_lines)} without`));
  for (const f of res.files || []) {
    const max = Math.max(1, ...(f.lines || []).map(l => l.self_samples));
    const box = el("section", {class: "source-file"},
      el("h3", {class: "path"}, f.read_path || f.recorded_path),
      el("p", {class: "note"}, `${fmt(f.self_samples)} self samples, ${fmt(f.total_samples)} total` +
        (f.not_read_reason ? `; text not read: ${f.not_read_reason}` : "")));
    if ((f.lines || []).length) {
      box.append(el("table", {class: "source"},
        el("thead", {}, el("tr", {}, ["line", "self", "total", "source"].map(h => el("th", {scope: "col"}, h)))),
        el("tbody", {}, f.lines.map(l => {
          const heat = Math.round(9 * l.self_samples / max);
          return el("tr", {class: "heat" + heat, "data-line": l.line},
            el("td", {class: "num"}, l.line), el("td", {class: "num self"}, l.self_samples || ""),
            el("td", {class: "num"}, l.total_samples || ""), el("td", {class: "code"}, el("code", {}, l.text)));
        }))));
    } else if ((f.hot_lines || []).length) {
      box.append(el("ul", {}, f.hot_lines.map(l => el("li", {}, `line ${l.line}: ${l.self_samples} self, ${l.total_samples} total`))));
    }
    panel.append(box);
  }
  if (res.source_text_fix) panel.append(el("p", {class: "hint"}, res.source_text_fix));
}

async function candidatesTab(panel, args) {
  const res = await call("classify_hotspots", {...args, limit: 20});
  const texts = res.texts || {};
  panel.append(el("p", {class: "note", id: "candidates-note"}, res.note));
  panel.append(el("ol", {id: "candidates", class: "candidates"}, res.candidates.map(c => el("li", {},
    el("h3", {}, "Candidate: ", c.rule.label, el("span", {class: "note"}, ` (${c.rule.group}, ${c.status})`)),
    c.figure ? el("p", {}, `${c.figure.name} ${fmt(c.figure.value, 2)} ${c.figure.op} ${fmt(c.figure.threshold, 2)}`) : null,
    (c.hotspots || []).length ? el("p", {}, "Hotspots: ", c.hotspots.map(h => `${h.symbol} ${pct(h.self_percent ?? h.percent)}`).join(", ")) : null,
    el("p", {}, "Evidence: ", String(c.evidence)),
    (c.missing_evidence || []).length ? el("div", {class: "missing"}, el("strong", {}, "Missing evidence before this candidate can be tested:"),
      el("ul", {}, c.missing_evidence.map(k => el("li", {}, texts[k] || k)))) : null,
    (c.next_steps || []).length ? el("p", {class: "note"}, "Next: ", c.next_steps.map(s => `${s.tool}: ${s.why}`).join("; ")) : null))));
  if ((res.forbidden_conclusions || []).length)
    panel.append(el("h3", {}, "Not to conclude"), el("ul", {}, res.forbidden_conclusions.map(f => el("li", {}, f))));
  panel.append(pager(res.page, () => {}));
}

async function exportsTab(panel, args) {
  const res = await call("list_artifacts", {kind: "export", filter: args.analysis_id, limit: 100});
  panel.append(el("p", {class: "note"}, "What export_profile wrote for this analysis (the viewer writes nothing)."));
  if (!res.artifacts.length) panel.append(el("p", {}, "No exports yet: an agent writes them with export_profile."));
  panel.append(el("ul", {id: "exports"}, res.artifacts.map(a => el("li", {},
    el("a", {href: "/viewer/api/file/" + a.path, download: a.path.replace(/^exports\//, "")}, a.path.replace(/^exports\//, "")),
    ` (${fmt(a.bytes)} bytes, ${a.mime_type})`))));
}

// ------------------------------------------------------------ compare

// An experiment: run_experiment's benchmark artifact (format experiment),
// read whole in pages of read_artifact_page; the page shows what the tool
// wrote (the verdicts it gave, every raw run of both sides), read-only.
const EXPERIMENT_PAGES = 64;  // 2 MiB at most; 200 runs a side take about 200 KiB
async function experimentDoc(id) {
  let text = "", offset = 0;
  for (let i = 0; i < EXPERIMENT_PAGES; i++) {
    const p = await call("read_artifact_page", {artifact: `benchmarks/${id}.json`, offset, limit_bytes: 32768});
    text += p.text;
    if (p.next_offset === null) return JSON.parse(text);
    offset = p.next_offset;
  }
  throw new Error(`the experiment ${id} is larger than the viewer reads (${EXPERIMENT_PAGES} pages of 32 KiB)`);
}

const num = (x, digits) => typeof x === "number" ? Number(x.toPrecision(digits || 4)).toString() : "-";
const command = s => [s.executable, ...(s.arguments || [])].join(" ");

function experimentSection(page, id, doc) {
  const x = doc.experiment;
  if (!x) {
    page.append(el("p", {class: "error"}, `${id} is a benchmark artifact, not an experiment: compare_benchmarks reads it.`));
    return;
  }
  page.append(el("h2", {}, `Experiment ${id}`),
    el("p", {id: "experiment-settings"}, `Baseline: ${command(x.baseline)}. Candidate: ${command(x.candidate)}. `,
      `${x.runs_per_side} runs a side after ${x.warmup} warmup block(s), seed ${x.seed}, `,
      `practical threshold ${x.practical_threshold_percent ?? "-"}%, CV bound ${x.max_cv_percent ?? "-"}%, run from ${x.where}.`),
    el("table", {id: "verdicts"}, el("caption", {}, "Verdict per measure (candidate / baseline)"),
      el("thead", {}, el("tr", {}, ["measure", "verdict", "baseline median", "candidate median", "ratio", "95% interval",
        "p", "CV % (b / c)", "runs to resolve", "unit"].map(h => el("th", {scope: "col"}, h)))),
      el("tbody", {}, (x.verdicts || []).map(v => el("tr", {"data-verdict": v.verdict},
        el("td", {class: "sym"}, v.measure), el("td", {class: "verdict", title: v.reason}, v.verdict),
        el("td", {class: "num"}, num(v.baseline_median)), el("td", {class: "num"}, num(v.candidate_median)),
        el("td", {class: "num"}, num(v.ratio_of_medians)),
        el("td", {class: "num"}, v.confidence_interval ? `[${num(v.confidence_interval.low)}, ${num(v.confidence_interval.high)}]` : "-"),
        el("td", {class: "num"}, num(v.p_value, 3)),
        el("td", {class: "num"}, `${num(v.cv_percent.baseline, 3)} / ${num(v.cv_percent.candidate, 3)}`),
        el("td", {class: "num"}, v.runs_to_resolve ?? "-"), el("td", {}, v.unit))))),
    el("table", {id: "runs"}, el("caption", {}, "Every run of both sides, in order (warmups and excluded runs never enter a verdict)"),
      el("thead", {}, el("tr", {}, ["side", "block", "run", "warmup", "status", "wall s", "user s", "system s", "max RSS bytes",
        "metric", "exit"].map(h => el("th", {scope: "col"}, h)))),
      el("tbody", {}, x.runs.map(r => el("tr", {class: r.status === "ok" && !r.warmup ? "" : "excluded"},
        el("td", {}, r.side), el("td", {class: "num"}, r.block), el("td", {class: "num"}, r.run), el("td", {}, r.warmup ? "yes" : ""),
        el("td", {}, r.status), el("td", {class: "num"}, num(r.wall_seconds)), el("td", {class: "num"}, num(r.user_seconds)),
        el("td", {class: "num"}, num(r.system_seconds)), el("td", {class: "num"}, fmt(r.max_rss_bytes)),
        el("td", {class: "num"}, num(r.metric)), el("td", {class: "num"}, r.signal ? `signal ${r.signal}` : r.exit_status))))));
}

async function comparePage(page) {
  const [list, benches] = await Promise.all([call("list_artifacts", {kind: "analysis", limit: 100}),
    call("list_artifacts", {kind: "benchmark", limit: 100})]);
  const items = list.artifacts.map(a => ({id: a.path.replace(/^analyses\//, "").replace(/\.json$/, ""),
    label: (a.analysis ? a.analysis.inputs.join(", ") : "")}));
  const expIds = benches.artifacts.map(a => a.path.replace(/^benchmarks\//, "").replace(/\.json$/, ""));
  const expSel = el("select", {id: "experiment", "aria-label": "experiment"}, el("option", {value: ""}, "none"),
    expIds.map(i => el("option", {value: i, selected: i === state.exp}, i)));
  expSel.addEventListener("change", () => go({exp: expSel.value}));
  const pick = (id, name, cur) => {
    const s = el("select", {id, "aria-label": name}, el("option", {value: ""}, "choose"),
      items.map(i => el("option", {value: i.id, selected: i.id === cur}, `${i.id} ${i.label}`)));
    s.addEventListener("change", () => go({[id === "baseline" ? "b" : "c"]: s.value, zoom: null}));
    return s;
  };
  page.append(el("h1", {}, "Compare"),
    el("div", {class: "controls"}, el("label", {}, "Baseline ", pick("baseline", "baseline", state.b)),
      el("label", {}, "Candidate ", pick("candidate", "candidate", state.c)),
      el("label", {}, "Experiment ", expSel)));
  if (state.exp) experimentSection(page, state.exp, await experimentDoc(state.exp));
  if (!state.b || !state.c) {
    if (!state.exp) page.append(el("p", {}, "Choose a baseline and a candidate analysis of the same event, or an experiment."));
    return;
  }
  const [sb, sc] = await Promise.all([artifactJson(`analyses/${state.b}.json`), artifactJson(`analyses/${state.c}.json`)]);
  const common = sc.events.map(e => e.name).filter(n => sb.events.some(e => e.name === n));
  if (!common.length) {
    page.append(el("p", {class: "error"}, "These analyses share no event: only one event is ever compared with itself."));
    return;
  }
  const event = common.includes(state.e) ? state.e : common[0];
  const evSel = el("select", {id: "event", "aria-label": "event"}, common.map(n => el("option", {value: n, selected: n === event}, n)));
  evSel.addEventListener("change", () => go({e: evSel.value, zoom: null}));
  const sort = state.sort === "inclusive" ? "inclusive" : "self";
  // A time window per side: view is the baseline's, candidate_view the
  // candidate's (given, even empty, so that view stays the baseline's).
  const side = (label, k0, k1) => [k0, k1].map((k, i) => {
    const input = el("input", {id: "cmp-" + k, type: "number", min: 0, step: "any", value: state[k] || "",
      "aria-label": `${label} window ${i ? "to" : "from"} seconds`});
    input.addEventListener("change", () => go({[k]: input.value, cursor: null, zoom: null}));
    return el("label", {}, `${label} ${i ? "to" : "from"} s `, input);
  });
  page.append(el("div", {class: "controls"}, el("label", {}, "Event ", evSel), ...side("Baseline", "bt0", "bt1"),
    ...side("Candidate", "ct0", "ct1"), el("span", {class: "note"}, "time windows: seconds after each one's first sample")));
  const bt = timeOf("bt0", "bt1"), ct = timeOf("ct0", "ct1");
  const views = bt || ct ? {...(bt ? {view: {time: bt}} : {}), candidate_view: ct ? {time: ct} : {}} : {};
  const res = await call("compare_profiles", {baseline_id: state.b, candidate_id: state.c, event, sort, limit: PAGE,
    ...views, ...(state.cursor ? {cursor: state.cursor} : {})});
  page.append(el("table", {id: "deltas"},
    el("caption", {}, `Change of share in points, ${event}, sorted by ${sort}` +
      (res.view ? `; the baseline's window keeps ${pct(res.view.percent_of_samples)} of its samples` : "") +
      (res.candidate_view ? `; the candidate's ${pct(res.candidate_view.percent_of_samples)}` : "")),
    el("thead", {}, el("tr", {}, ["#", "status", "function", "module", "baseline self", "candidate self", "self \u0394", "inclusive \u0394"]
      .map(h => el("th", {scope: "col"}, h)))),
    el("tbody", {}, res.functions.map(f => el("tr", {class: f.self_delta_points > 0 ? "up" : f.self_delta_points < 0 ? "down" : ""},
      el("td", {class: "num"}, f.rank), el("td", {}, f.status), el("td", {class: "sym"}, f.symbol), el("td", {class: "path"}, f.dso || ""),
      el("td", {class: "num"}, pct(f.baseline && f.baseline.self ? f.baseline.self.percent : null)),
      el("td", {class: "num"}, pct(f.candidate && f.candidate.self ? f.candidate.self.percent : null)),
      el("td", {class: "num delta"}, (f.self_delta_points > 0 ? "+" : "") + f.self_delta_points.toFixed(2)),
      el("td", {class: "num"}, (f.inclusive_delta_points > 0 ? "+" : "") + f.inclusive_delta_points.toFixed(2)))))));
  page.append(pager(res.page, c => go({cursor: c})));
  // The differential flame graph: widths from the candidate, red where a
  // path's share grew, blue where it shrank (both trees on shared names).
  const names = new Names();
  const [tb, tc] = [await treeOf(state.b, names), await treeOf(state.c, names)];
  tb.weigh(event, windowNs("bt0", "bt1"));
  tc.weigh(event, windowNs("ct0", "ct1"));
  const host = el("div", {class: "flame-host", id: "flame"});
  page.append(el("h2", {}, "Differential flame graph"),
    el("p", {class: "note"}, "Width: candidate's share; red: share grew against the baseline, blue: it shrank; deep red: not in the baseline."),
    host);
  const view = new FlameView(host, st => setUrl({zoom: st.zoom || null}));
  app.addEventListener("rendered", () => {
    view.setTree(tc, tb);
    if (state.zoom) view.zoomToPath(state.zoom.split(".").map(Number));
  }, {once: true});
  window.perflensFlame = view;
}

// --------------------------------------------------------------- live

// A sparkline of `values` (numbers or null) as an inline SVG.
function sparkline(values, label, unit) {
  const NS = "http://www.w3.org/2000/svg", W = 220, H = 40;
  const xs = values.map((v, i) => [i, v]).filter(p => typeof p[1] === "number");
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("width", W);
  svg.setAttribute("height", H);
  svg.setAttribute("role", "img");
  svg.setAttribute("class", "spark");
  const last = xs.length ? xs[xs.length - 1][1] : null;
  svg.setAttribute("aria-label", `${label}: ${last === null ? "no data" : last + " " + unit}`);
  if (xs.length) {
    const lo = Math.min(...xs.map(p => p[1])), hi = Math.max(...xs.map(p => p[1]));
    const n = Math.max(values.length - 1, 1);
    const pts = xs.map(([i, v]) => `${(i / n * (W - 4) + 2).toFixed(1)},${(H - 3 - (hi > lo ? (v - lo) / (hi - lo) : 0.5) * (H - 6)).toFixed(1)}`);
    const line = document.createElementNS(NS, "polyline");
    line.setAttribute("points", pts.join(" "));
    line.setAttribute("class", "spark-line");
    svg.append(line);
  }
  return el("figure", {class: "spark-box", "data-metric": label, "data-points": xs.length},
    el("figcaption", {}, `${label}: `, el("strong", {}, last === null ? "-" : fmt(last, unit === "%" ? 1 : unit === "" ? 2 : 0) + (unit ? " " + unit : ""))), svg);
}

// Up to 1,000 frames of one type, oldest first (get_device_metrics pages).
async function metricFrames(session, type) {
  const frames = [];
  let cursor = null;
  for (let i = 0; i < 5; i++) {
    const r = await call("get_device_metrics", {session, type, limit: 200, ...(cursor ? {cursor} : {})});
    frames.push(...r.frames);
    cursor = r.page.next_cursor;
    if (!cursor) break;
  }
  return frames;
}

// The newest analysis whose inputs are the session's chunks (list_artifacts
// filtered by the session folder; up to 500 analyses), or null.
async function sessionAnalysis(session) {
  let best = null, cursor = null;
  for (let i = 0; i < 5; i++) {
    const r = await call("list_artifacts", {kind: "analysis", filter: `/sessions/${session}/chunk_`, limit: 100,
      ...(cursor ? {cursor} : {})});
    for (const a of r.artifacts) {
      const m = (a.analysis || {}).modified || "";
      if (!best || m > best.m || (m === best.m && a.path > best.a.path)) best = {a, m};
    }
    cursor = r.page.next_cursor;
    if (!cursor) break;
  }
  return best && best.a;
}

// The session's profile: its newest analysis's hotspots, and how many of
// the session's chunks it read.  The viewer writes nothing, so it
// analyzes nothing itself: a new analysis (an agent's analyze_profile, or
// the server's own with --live-analysis-interval-ms) shows here without a
// reload, as chunks do above.
async function liveProfile(session, cur) {
  const a = await sessionAnalysis(session);
  const box = el("section", {id: "live-profile"}, el("h2", {}, "Profile"));
  const uri = cur ? cur.uri : `perflens://artifacts/sessions/${session}`;
  if (!a) {
    box.append(el("p", {class: "note", id: "live-profile-none"},
      `No analysis of this session yet: an agent runs analyze_profile(path="${uri}"), or a server started with ` +
      `--live-analysis-interval-ms analyzes it as its chunks land; its hotspots show here.`));
    return box;
  }
  const id = a.path.replace(/^analyses\//, "").replace(/\.json$/, "");
  const read = (a.analysis.inputs || []).length, have = cur ? cur.chunks : read;
  const hs = await call("list_hotspots", {analysis_id: id, limit: 10});
  box.append(el("p", {id: "live-profile-of", "data-analysis": id, "data-chunks-read": String(read)},
      "Analysis ", link(id, {a: id}), ` of ${fmt(read)} of the session's ${fmt(have)} chunks, written ` +
      `${(a.analysis.modified || "").replace("T", " ").replace("Z", " UTC")}` +
      (read < have ? ` (${fmt(have - read)} chunks since: analyze_profile again, or --live-analysis-interval-ms, to see them)` : ""),
      " \u2014 ", link("flame graph", {a: id, tab: "flame"})),
    el("table", {id: "live-hotspots"},
      el("thead", {}, el("tr", {}, ["#", "function", "self %", "inclusive %"].map(h => el("th", {scope: "col"}, h)))),
      el("tbody", {}, (hs.hotspots || []).map(h => el("tr", {"data-symbol": h.symbol},
        el("td", {class: "num"}, String(h.rank)), el("td", {class: "sym"}, h.short_name || h.symbol),
        el("td", {class: "num"}, fmt(h.self.percent, 1)), el("td", {class: "num"}, fmt(h.inclusive.percent, 1)))))));
  return box;
}

async function livePage(page) {
  page.append(el("h1", {}, "Live devices"));
  let devices = null, sessions;
  try {
    devices = await call("list_devices", {limit: 50});
  } catch (e) {
    page.append(el("p", {class: "note"}, `Devices: ${e.message}`));
  }
  if (devices) {
    // The session's own chunks beside it, as the session table counts
    // them; the link's totals since the device connected apart, named so
    // (they span every capture of the connection).
    page.append(el("table", {id: "devices"},
      el("thead", {}, el("tr", {}, ["device", "state", "session", "its chunks", "chunks since linked", "samples sent since linked"].map(h => el("th", {scope: "col"}, h)))),
      el("tbody", {}, (devices.devices || []).map(d => el("tr", {"data-session": d.session ?? "", "data-session-chunks": d.session ? String(d.session_chunks ?? 0) : ""},
        el("td", {class: "sym"}, String(d.device ?? d.id ?? "-")), el("td", {}, String(d.state ?? "-")),
        el("td", {class: "sym"}, d.session ? link(d.session, {view: "live", s: d.session}) : "-"),
        el("td", {class: "num"}, d.session ? fmt(d.session_chunks) : "-"), el("td", {class: "num"}, fmt(d.chunks)),
        el("td", {class: "num"}, fmt(d.samples)))))));
    if (!(devices.devices || []).length) page.append(el("p", {class: "note"}, "No device is linked to this server now."));
  }
  try {
    sessions = await call("list_sessions", {limit: 20});
  } catch (e) {
    page.append(errorBox(e));
    return;
  }
  const chosen = state.s || (sessions.sessions.find(x => x.live) || sessions.sessions[0] || {}).session;
  page.append(el("h2", {}, "Sessions"), el("table", {id: "sessions"},
    el("thead", {}, el("tr", {}, ["session", "device", "live", "chunks", "text bytes", "started", "last chunk"].map(h => el("th", {scope: "col"}, h)))),
    el("tbody", {}, sessions.sessions.map(x => el("tr", {"data-session": x.session, "data-chunks": String(x.chunks ?? 0), class: x.session === chosen ? "chosen" : ""},
      el("td", {class: "sym"}, link(x.session, {view: "live", s: x.session})), el("td", {}, String(x.device ?? "-")),
      el("td", {}, x.live ? "live" : "finished"), el("td", {class: "num"}, fmt(x.chunks)), el("td", {class: "num"}, fmt(x.text_bytes)),
      el("td", {}, String(x.started ?? "-")), el("td", {}, String(x.last_chunk_time ?? "-")))))));
  if (!chosen) {
    page.append(el("p", {}, "No session on disk yet."));
    watch({timeout: 25}, names => { if (names.some(n => n !== "analyses")) render(); });
    return;
  }
  const cur = sessions.sessions.find(x => x.session === chosen);
  const [sys, proc] = await Promise.all([metricFrames(chosen, "system"), metricFrames(chosen, "process")]);
  const pick = (frames, f) => frames.map(x => { try { const v = f(x); return typeof v === "number" ? v : null; } catch (_) { return null; } });
  page.append(el("h2", {}, "Health of ", el("span", {class: "sym", id: "live-session"}, chosen),
      el("span", {class: "note"}, cur && cur.live ? " (live: updates as chunks and metrics arrive)" : " (finished)")),
    el("p", {id: "live-counts"}, `${fmt(cur ? cur.chunks : 0)} chunks, ${fmt(cur ? cur.text_bytes : 0)} bytes of text, ` +
      `${sys.length} system and ${proc.length} process metrics frames`),
    el("div", {class: "sparks", id: "sparks"},
      sparkline(pick(sys, x => x.cpu.overall_pct), "CPU", "%"),
      sparkline(pick(sys, x => x.mem.used_pct), "memory", "%"),
      sparkline(pick(sys, x => x.load.avg_1m), "load (1 min)", ""),
      sparkline(pick(proc, x => x.cpu_pct), "process CPU", "%"),
      sparkline(pick(proc, x => x.rss_kb), "process RSS", "KiB")),
    await liveProfile(chosen, cur));
  // Long polling: the session's folder changes as chunks and metrics arrive.
  watch({session: chosen, timeout: 25}, () => render());
}

// ------------------------------------------------------------- fleet

// Labels in the URL: "KEY=VALUE,KEY=VALUE" (fl: the selection, fa and fb:
// the two sides of a comparison).
function labelList(text) {
  return (text || "").split(",").map(x => x.trim()).filter(x => x.includes("="));
}

// The fleet store's devices, the top functions of a label selection, and
// two label sets compared, as fleet_devices, fleet_hotspots and
// fleet_compare answer them (perflens-mcp --fleet-store).
async function fleetPage(page) {
  page.append(el("h1", {}, "Fleet"));
  let devices;
  try {
    devices = await call("fleet_devices", {limit: 100});
  } catch (e) {
    page.append(el("p", {class: "note"}, `The fleet store: ${e.message}`));
    return;
  }
  page.append(el("table", {id: "fleet-devices"},
    el("thead", {}, el("tr", {}, ["device", "labels", "last seen", "chunks", "samples"].map(h => el("th", {scope: "col"}, h)))),
    el("tbody", {}, devices.devices.map(d => el("tr", {},
      el("td", {class: "sym"}, d.device), el("td", {}, d.labels.join(" ")), el("td", {}, d.last_seen),
      el("td", {class: "num"}, fmt(d.chunks)), el("td", {class: "num"}, fmt(d.samples)))))));
  const input = (id, label, value, key) => {
    const i = el("input", {id, "aria-label": label, value: value || "", placeholder: "KEY=VALUE,..."});
    i.addEventListener("change", () => go({[key]: i.value, cursor: null}));
    return el("label", {}, label + " ", i);
  };
  page.append(el("h2", {}, "Top functions"),
    el("div", {class: "controls"}, input("fleet-labels", "Labels", state.fl, "fl")));
  const sel = {limit: PAGE, ...(labelList(state.fl).length ? {labels: labelList(state.fl)} : {}),
    ...(state.e ? {event: state.e} : {}), ...(state.cursor ? {cursor: state.cursor} : {})};
  const hot = await call("fleet_hotspots", sel);
  const evSel = el("select", {id: "event", "aria-label": "event"},
    hot.events.map(x => el("option", {value: x.event, selected: x.event === hot.event}, x.event)));
  evSel.addEventListener("change", () => go({e: evSel.value, cursor: null}));
  page.append(el("div", {class: "controls"}, el("label", {}, "Event ", evSel)),
    el("table", {id: "fleet-hotspots"},
      el("caption", {}, `${fmt(hot.total_samples)} samples of ${hot.event} from ${hot.devices} devices`),
      el("thead", {}, el("tr", {}, ["function", "module", "self", "inclusive", "devices"].map(h => el("th", {scope: "col"}, h)))),
      el("tbody", {}, hot.hotspots.map(h => el("tr", {},
        el("td", {class: "sym"}, h.function), el("td", {class: "sym"}, h.dso),
        el("td", {class: "num"}, h.self_percent.toFixed(2) + "%"), el("td", {class: "num"}, h.inclusive_percent.toFixed(2) + "%"),
        el("td", {class: "num"}, String(h.devices)))))),
    pager(hot.page, c => go({cursor: c})));
  page.append(el("h2", {}, "Compare two label sets"),
    el("div", {class: "controls"}, input("fleet-a", "Side a", state.fa, "fa"), input("fleet-b", "Side b", state.fb, "fb")));
  if (!labelList(state.fa).length || !labelList(state.fb).length) {
    page.append(el("p", {class: "note"}, "Give each side its labels, e.g. firmware=1.4.1 and firmware=1.4.2."));
    return;
  }
  const cmp = await call("fleet_compare", {a: labelList(state.fa), b: labelList(state.fb), event: hot.event});
  const unit = cmp.measure === "samples_per_second" ? " /s" : "%";
  page.append(el("table", {id: "fleet-compare"},
    el("caption", {}, `${cmp.measure === "samples_per_second" ? "Samples per second of capture" : "Share of samples"}: ` +
      `a ${cmp.a.devices} devices, b ${cmp.b.devices} devices`),
    el("thead", {}, el("tr", {}, ["function", "module", "a", "b", "\u0394", "a devices (min / median / max)", "b devices", "p", "verdict"]
      .map(h => el("th", {scope: "col"}, h)))),
    el("tbody", {}, cmp.changes.map(c => el("tr", {class: c.verdict},
      el("td", {class: "sym"}, c.function), el("td", {class: "sym"}, c.dso),
      el("td", {class: "num"}, c.a.toFixed(2) + unit), el("td", {class: "num"}, c.b.toFixed(2) + unit),
      el("td", {class: "num"}, (c.delta >= 0 ? "+" : "") + c.delta.toFixed(2)),
      el("td", {class: "num"}, [c.a_devices.min, c.a_devices.median, c.a_devices.max].map(x => x.toFixed(1)).join(" / ")),
      el("td", {class: "num"}, [c.b_devices.min, c.b_devices.median, c.b_devices.max].map(x => x.toFixed(1)).join(" / ")),
      el("td", {class: "num"}, c.p_value.toPrecision(2)), el("td", {}, c.verdict))))));
  if (!cmp.changes.length) page.append(el("p", {class: "note"}, "No function moved enough between the two sides to be tested."));
}


render();
