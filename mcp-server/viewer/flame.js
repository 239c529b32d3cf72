// flame.js - the flame graph, drawn on a canvas from an analysis' stack
// table (schemas/stacks.schema.json), one event at a time.
//
// decodeStacks() reads the compact table once: functions, frames and each
// stack's frames (a stack names the first SHARED frames of an earlier
// stack, then its own) and weights.  CallTree builds the tree of every
// stack once per analysis, node per function path (frames of one function
// at one place merge, as in any flame graph), and remembers each stack's
// leaf; weigh(event) then adds each stack's period to its leaf's self and
// to every node up to the root, so switching events never rebuilds the
// tree.  FlameView lays out only what is at least a third of a pixel wide
// from the zoomed node (a 100k-stack profile draws a few thousand
// rectangles), keeps their rectangles for the pointer and the keyboard,
// and counts a search's matched share once per stack: the weight of the
// topmost matching nodes, which no stack passes twice.
//
// A view (the tools' view argument: focus, ignore, hide, as RegExps on a
// function's symbol) is applied while the tree is built, in the tools'
// order: ignore and focus read each stack as recorded, hide then removes
// frames; a stack left out has no leaf (-1) and weighs nothing.  A time
// window (view.time) changes only the weights: weigh(event, window) adds
// the timed samples (the table's "timed" part, decoded on first use) whose
// time is in [from, to) ns after the first, one sample and its period
// each, as the tools' time_window.c does.
//
// A sandwich of a function is two more trees of the same viewed stacks,
// each stack cut at the function's outermost frame: its callers (the
// function first, then its caller, up to the root) and its callees (the
// function, then what it called, down to the leaf); each stack through the
// function weighs once in both, so both roots hold its inclusive weight.

export function decodeStacks(t) {
  const words = arr => {
    const out = [];
    for (const s of arr || []) if (s.length) for (const w of s.split(" ")) out.push(w);
    return out;
  };
  const S = t.strings;
  const funcs = words(t.functions).map(r => {
    const p = r.split("|");
    return {symbol: S[+p[0]], dso: p.length > 1 && p[1] !== "" ? S[+p[1]] : null, inlined: p[2] === "i"};
  });
  const frameFunc = Int32Array.from(words(t.frames), r => parseInt(r, 10));
  const recs = words(t.stacks);
  const n = recs.length;
  const base = new Int32Array(n), shared = new Int32Array(n);
  const own = new Array(n);
  const wStart = new Int32Array(n + 1);
  const wEv = [], wSamples = [], wPeriod = [];
  for (let i = 0; i < n; i++) {
    const p = recs[i].split("|");
    if (p[1]) {
      const c = p[1].indexOf(":");
      base[i] = parseInt(p[1].slice(0, c), 10);
      shared[i] = parseInt(p[1].slice(c + 1), 10);
    } else {
      base[i] = -1;
      shared[i] = 0;
    }
    own[i] = p[2] ? p[2].split(",").map(x => frameFunc[parseInt(x, 10)]) : [];
    wStart[i] = wEv.length;
    for (const w of (p[3] || "").split(";")) {
      if (!w) continue;
      const q = w.split(":");
      wEv.push(+q[0]);
      wSamples.push(+q[1]);
      wPeriod.push(+q[2]);
    }
  }
  wStart[n] = wEv.length;
  return {
    funcs, events: (t.events || []).map(e => S[e[0]]), rawTimed: t.timed || null, timedByEvent: null,
    base, shared, own, wStart,
    wEv: Int32Array.from(wEv), wSamples: Float64Array.from(wSamples), wPeriod: Float64Array.from(wPeriod),
  };
}

// The table's timed samples of event `ev` (its index), decoded once:
// {at: ns after the first sample, stack, period}, in time order; null
// when the table has no times.
export function timedSamples(table, ev) {
  const raw = table.rawTimed;
  if (!raw) return null;
  if (!table.timedByEvent) {
    table.timedByEvent = new Map();
    for (const e of raw.events || []) {
      const at = [], stack = [], period = [];
      let t = 0, p = 0;
      for (const chunk of e.samples) {
        if (!chunk.length) continue;
        for (const r of chunk.split(" ")) {
          const q = r.split(":");
          t += +q[0];
          if (q.length > 2) p = +q[2];
          at.push(t);
          stack.push(+q[1]);
          period.push(p);
        }
      }
      table.timedByEvent.set(e.event, {at: Float64Array.from(at), stack: Int32Array.from(stack), period: Float64Array.from(period)});
    }
  }
  return table.timedByEvent.get(ev) || {at: new Float64Array(0), stack: new Int32Array(0), period: new Float64Array(0)};
}

// Function names shared by the trees that are compared (a differential
// graph matches nodes by name, not by a table's ids).
export class Names {
  constructor() { this.ids = new Map(); this.list = []; }
  id(f) {
    const k = f.symbol + "\u0000" + (f.dso || "");
    let i = this.ids.get(k);
    if (i === undefined) {
      i = this.list.length;
      this.ids.set(k, i);
      this.list.push(f);
    }
    return i;
  }
}

// Each stack's functions (table.funcs ids), root first, under `view`;
// null for a stack the view leaves out.
function viewedStacks(table, view) {
  const n = table.base.length, full = new Array(n), out = new Array(n);
  const hit = (re, cache, f) => {
    if (cache[f] === undefined) cache[f] = re.test(table.funcs[f].symbol);
    return cache[f];
  };
  const ci = [], cf = [], ch = [];
  for (let i = 0; i < n; i++) {
    const b = table.base[i], sh = table.shared[i];
    full[i] = (b >= 0 && sh > 0 ? full[b].slice(0, sh) : []).concat(table.own[i]);
    const fr = full[i];
    if ((view.ignore && fr.some(f => hit(view.ignore, ci, f))) || (view.focus && !fr.some(f => hit(view.focus, cf, f)))) {
      out[i] = null;
      continue;
    }
    const kept = view.hide ? fr.filter(f => !hit(view.hide, ch, f)) : fr;
    out[i] = kept.length || !fr.length ? kept : null;
  }
  return out;
}

// The viewed stacks cut at the outermost frame of any function of `fids`
// (a Set of table.funcs ids): side "callers" gives the function then its
// callers toward the root, "callees" the function then its callees; a
// stack without the function is left out.
function sandwichStacks(viewed, fids, side) {
  return viewed.map(fr => {
    if (!fr) return null;
    const at = fr.findIndex(f => fids.has(f));
    if (at < 0) return null;
    return side === "callers" ? fr.slice(0, at + 1).reverse() : fr.slice(at);
  });
}

export class CallTree {
  // view: {focus, ignore, hide} RegExps or null; sandwich: {fids, side}
  // or null (see sandwichStacks).
  constructor(table, names, view, sandwich) {
    this.table = table;
    this.names = names || new Names();
    const key = table.funcs.map(f => this.names.id(f));
    let viewed = view || sandwich ? viewedStacks(table, view || {}) : null;
    if (sandwich) viewed = sandwichStacks(viewed, sandwich.fids, sandwich.side);
    const parent = [-1], fn = [-1], depth = [0];
    const child = new Map();
    const NK = 1 << 26;  // room for keys: parent * NK + key stays below 2^53
    const n = table.base.length;
    const leaf = new Int32Array(n), len = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      let node = 0;
      const b = table.base[i], sh = table.shared[i];
      if (viewed && !viewed[i]) {
        leaf[i] = -1;
        continue;
      }
      if (!viewed && b >= 0 && sh > 0) {
        node = leaf[b];
        for (let up = len[b] - sh; up > 0; up--) node = parent[node];
      }
      for (const f of viewed ? viewed[i] : table.own[i]) {
        const k = key[f];
        const ck = node * NK + k;
        let c = child.get(ck);
        if (c === undefined) {
          c = parent.length;
          parent.push(node);
          fn.push(k);
          depth.push(depth[node] + 1);
          child.set(ck, c);
        }
        node = c;
      }
      leaf[i] = node;
      len[i] = (sh > 0 ? sh : 0) + table.own[i].length;
    }
    this.leaf = leaf;
    this.parent = Int32Array.from(parent);
    this.fn = Int32Array.from(fn);
    this.depth = Int32Array.from(depth);
    this.childMap = child;
    this.NK = NK;
    // Children lists in name order (a stable layout).
    const N = parent.length;
    const count = new Int32Array(N + 1);
    for (let i = 1; i < N; i++) count[parent[i] + 1]++;
    for (let i = 0; i < N; i++) count[i + 1] += count[i];
    const kids = new Int32Array(Math.max(N - 1, 0)), fill = count.slice(0, N);
    for (let i = 1; i < N; i++) kids[fill[parent[i]]++] = i;
    const label = i => this.names.list[fn[i]].symbol;
    for (let i = 0; i < N; i++) {
      const a = kids.subarray(count[i], count[i + 1]);
      if (a.length > 1) {
        const sorted = Array.from(a).sort((x, y) => (label(x) < label(y) ? -1 : label(x) > label(y) ? 1 : 0));
        a.set(sorted);
      }
    }
    this.kidStart = count;
    this.kids = kids;
    this.size = N;
  }

  // Weights of one event (by name) into total/self, period and samples;
  // with window {from, to} (ns after the first timed sample), only the
  // timed samples in [from, to).
  weigh(event, window) {
    const t = this.table, ev = t.events.indexOf(event);
    const N = this.size;
    this.total = new Float64Array(N);
    this.self = new Float64Array(N);
    this.samples = new Float64Array(N);
    this.event = event;
    if (ev < 0) return;
    const parent = this.parent;
    if (window) {
      const ts = timedSamples(t, ev) || {at: []};
      for (let i = 0; i < ts.at.length; i++) {
        if (ts.at[i] < window.from || ts.at[i] >= window.to) continue;
        let node = this.leaf[ts.stack[i]];
        if (node < 0) continue;
        const p = ts.period[i];
        this.self[node] += p;
        for (; node >= 0; node = parent[node]) {
          this.total[node] += p;
          this.samples[node] += 1;
        }
      }
      return;
    }
    for (let i = 0; i < t.base.length; i++) {
      for (let w = t.wStart[i]; w < t.wStart[i + 1]; w++) {
        if (t.wEv[w] !== ev) continue;
        const p = t.wPeriod[w], s = t.wSamples[w];
        let node = this.leaf[i];
        if (node < 0) continue;   // left out by the view
        this.self[node] += p;
        for (; node >= 0; node = parent[node]) {
          this.total[node] += p;
          this.samples[node] += s;
        }
      }
    }
  }

  childOf(node, key) {
    const c = this.childMap.get(node * this.NK + key);
    return c === undefined ? -1 : c;
  }
  name(node) { return node === 0 ? "all" : this.names.list[this.fn[node]].symbol; }
  dso(node) { return node === 0 ? null : this.names.list[this.fn[node]].dso; }
  // The node's path of name ids, root excluded, and back.
  pathOf(node) {
    const p = [];
    for (; node > 0; node = this.parent[node]) p.push(this.fn[node]);
    return p.reverse();
  }
  nodeAt(path) {
    let node = 0;
    for (const k of path) {
      const c = this.childOf(node, k);
      if (c < 0) return 0;
      node = c;
    }
    return node;
  }
}

const ROW = 18;
const MIN_WIDTH = 0.34;

function hashHue(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return (h >>> 0) % 55;  // red to yellow, like FlameGraph's "hot"
}

export class FlameView {
  // host: an element to draw into; onChange({zoom, q}) when the user
  // zooms or searches (the page puts it in the URL); opts.inverted draws
  // the root at the top (an icicle: a sandwich's callees); opts.onMenu(node,
  // x, y) opens a frame's menu (right click, the context-menu key or "m"
  // on the focused frame; x, y in viewport pixels).
  constructor(host, onChange, opts) {
    this.host = host;
    this.onChange = onChange || (() => {});
    this.inverted = !!(opts && opts.inverted);
    this.onMenu = opts && opts.onMenu;
    this.canvas = document.createElement("canvas");
    this.canvas.className = "flame";
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute("role", "img");
    this.canvas.setAttribute("aria-label", "flame graph: arrows move, Enter zooms, Escape resets");
    this.info = document.createElement("div");
    this.info.className = "flame-info";
    this.info.setAttribute("aria-live", "polite");
    host.append(this.canvas, this.info);
    this.zoom = 0;
    this.focus = 0;
    this.query = "";
    this.diff = null;
    this.canvas.addEventListener("mousemove", e => this.hover(e));
    this.canvas.addEventListener("mouseleave", () => this.describe(this.focus));
    this.canvas.addEventListener("click", e => {
      const n = this.hit(e);
      if (n >= 0) this.setZoom(n, true);
    });
    this.canvas.addEventListener("keydown", e => this.key(e));
    this.canvas.addEventListener("contextmenu", e => {
      const n = this.hit(e);
      if (!this.onMenu || n <= 0) return;
      e.preventDefault();
      this.focus = n;
      this.draw();
      this.onMenu(n, e.clientX, e.clientY);
    });
    this.resizeObserver = new ResizeObserver(() => this.draw());
    this.resizeObserver.observe(host);
  }

  // tree: a weighed CallTree; base: an optional weighed CallTree of the
  // baseline, for red (grew) and blue (shrank) by share.
  setTree(tree, base) {
    this.tree = tree;
    this.base = base || null;
    if (this.base) this.mapBase();
    this.zoom = 0;
    this.focus = 0;
    this.computeMatch();
    this.draw();
  }

  mapBase() {
    const t = this.tree, b = this.base;
    const map = new Int32Array(t.size).fill(-1);
    map[0] = 0;
    for (let i = 1; i < t.size; i++) {
      const bp = map[t.parent[i]];
      map[i] = bp < 0 ? -1 : b.childOf(bp, t.fn[i]);
    }
    this.baseOf = map;
    let maxAbs = 0;
    const delta = new Float64Array(t.size);
    const tt = t.total[0] || 1, bt = b.total[0] || 1;
    for (let i = 0; i < t.size; i++) {
      const bs = map[i] >= 0 ? b.total[map[i]] / bt : 0;
      delta[i] = (t.total[i] / tt - bs) * 100;
      if (Math.abs(delta[i]) > maxAbs) maxAbs = Math.abs(delta[i]);
    }
    this.delta = delta;
    this.maxAbsDelta = maxAbs || 1;
  }

  setZoom(node, notify) {
    this.zoom = node;
    this.focus = node;
    this.computeMatch();
    this.draw();
    if (notify) this.onChange(this.state());
  }
  zoomToPath(path) { this.setZoom(this.tree.nodeAt(path), false); }
  state() { return {zoom: this.tree.pathOf(this.zoom).join("."), q: this.query}; }

  search(q, notify) {
    this.query = q || "";
    this.computeMatch();
    this.draw();
    if (notify) this.onChange(this.state());
  }

  // The matched share of the zoomed node: the total of matching nodes
  // with no matching ancestor under it (each stack counted once).
  computeMatch() {
    const t = this.tree;
    this.match = null;
    this.matched = 0;
    if (!t || !this.query) return;
    const q = this.query.toLowerCase();
    const hit = new Uint8Array(t.names.list.length);
    t.names.list.forEach((f, i) => { hit[i] = f.symbol.toLowerCase().includes(q) ? 1 : 0; });
    this.match = hit;
    let matched = 0;
    const stack = [this.zoom];
    while (stack.length) {
      const n = stack.pop();
      if (n !== 0 && hit[t.fn[n]]) {
        matched += t.total[n];
        continue;
      }
      for (let k = t.kidStart[n]; k < t.kidStart[n + 1]; k++) if (t.total[t.kids[k]] > 0) stack.push(t.kids[k]);
    }
    this.matched = matched;
  }

  matchedPercent() {
    const z = this.tree ? this.tree.total[this.zoom] : 0;
    return z > 0 ? (100 * this.matched) / z : 0;
  }

  // Lay out and paint; returns the milliseconds it took.
  draw() {
    const t0 = performance.now();
    const t = this.tree;
    if (!t) return 0;
    const width = Math.max(this.host.clientWidth - 2, 200);
    const zt = t.total[this.zoom];
    const rects = [];  // [node, x, depth, w]
    // The zoomed node's ancestors span the width, greyed.
    for (let a = t.parent[this.zoom]; a >= 0; a = t.parent[a]) rects.push([a, 0, t.depth[a], width, true]);
    rects.push([this.zoom, 0, t.depth[this.zoom], width, false]);
    let maxDepth = t.depth[this.zoom];
    if (zt > 0) {
      const scale = width / zt;
      const work = [[this.zoom, 0]];
      while (work.length) {
        const [n, x] = work.pop();
        let cx = x;
        for (let k = t.kidStart[n]; k < t.kidStart[n + 1]; k++) {
          const c = t.kids[k];
          const w = t.total[c] * scale;
          if (w >= MIN_WIDTH) {
            rects.push([c, cx, t.depth[c], w, false]);
            if (t.depth[c] > maxDepth) maxDepth = t.depth[c];
            work.push([c, cx]);
          }
          cx += w;
        }
      }
    }
    const dpr = window.devicePixelRatio || 1;
    const height = (maxDepth + 1) * ROW;
    const cv = this.canvas;
    cv.width = Math.round(width * dpr);
    cv.height = Math.round(height * dpr);
    cv.style.width = width + "px";
    cv.style.height = height + "px";
    const g = cv.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, height);
    g.font = "12px ui-monospace, monospace";
    g.textBaseline = "middle";
    const dark = document.documentElement.dataset.theme === "dark";
    for (const [n, x, d, w, above] of rects) {
      const y = this.rowY(d, height);
      g.fillStyle = this.color(n, above, dark);
      g.fillRect(x, y, Math.max(w - 0.5, 0.3), ROW - 1);
      if (w > 28) {
        const label = t.name(n);
        const fit = Math.floor((w - 6) / 7.2);
        g.fillStyle = dark && above ? "#ddd" : "#111";
        g.fillText(label.length > fit ? label.slice(0, Math.max(fit - 1, 1)) + "\u2026" : label, x + 3, y + ROW / 2);
      }
      if (n === this.focus && document.activeElement === cv) {
        g.strokeStyle = dark ? "#fff" : "#000";
        g.lineWidth = 2;
        g.strokeRect(x + 1, y + 1, Math.max(w - 2, 1), ROW - 3);
      }
    }
    this.rects = rects;
    this.height = height;
    this.describe(this.focus);
    this.lastDrawMs = performance.now() - t0;
    return this.lastDrawMs;
  }

  rowY(d, height) { return this.inverted ? d * ROW : height - (d + 1) * ROW; }

  // Where a drawn node is, in viewport pixels (its rectangle's middle);
  // null when it is not drawn.
  where(n) {
    const r = this.rects && this.rects.find(q => q[0] === n);
    if (!r) return null;
    const b = this.canvas.getBoundingClientRect();
    return {x: b.left + r[1] + r[3] / 2, y: b.top + this.rowY(r[2], this.height) + ROW / 2};
  }

  color(n, above, dark) {
    const t = this.tree;
    if (above) return dark ? "#555" : "#ccc";
    if (this.match && n !== 0 && this.match[t.fn[n]]) return "#d33ad6";
    if (this.base) {
      const d = this.delta[n];
      if (this.baseOf[n] < 0) return "rgb(220,40,40)";  // new in the candidate
      const s = Math.min(Math.abs(d) / this.maxAbsDelta, 1);
      const v = Math.round(235 - 170 * s);
      return d > 0 ? `rgb(235,${v},${v})` : d < 0 ? `rgb(${v},${v},235)` : "rgb(225,225,225)";
    }
    if (n === 0) return "#e8a33a";
    return `hsl(${hashHue(t.name(n))}, 85%, ${dark ? 52 : 62}%)`;
  }

  hit(e) {
    const r = this.canvas.getBoundingClientRect();
    const x = e.clientX - r.left, y = e.clientY - r.top;
    const d = Math.floor((this.inverted ? y : this.height - y) / ROW);
    for (const [n, rx, rd, w] of this.rects) if (rd === d && x >= rx && x < rx + w) return n;
    return -1;
  }

  hover(e) {
    const n = this.hit(e);
    if (n >= 0) this.describe(n);
  }

  describe(n) {
    const t = this.tree;
    if (!t || n < 0) return;
    const all = t.total[0] || 1;
    let text = `${t.name(n)}${t.dso(n) ? " (" + t.dso(n) + ")" : ""}: ` +
      `${t.samples[n].toLocaleString("en-US")} samples, ${(100 * t.total[n] / all).toFixed(2)}% of ${t.event}`;
    if (this.base) {
      const d = this.delta[n];
      text += `, ${d >= 0 ? "+" : ""}${d.toFixed(2)} points vs baseline` + (this.baseOf[n] < 0 ? " (new)" : "");
    }
    this.info.textContent = text;
  }

  // Keyboard: Up goes to the heaviest child, Down to the parent (the
  // other way round when inverted), Left/Right to the siblings, Enter
  // zooms, Escape resets, m or the context-menu key opens the menu.
  key(e) {
    const t = this.tree;
    if (!t) return;
    let n = this.focus;
    const kidsOf = p => {
      const a = [];
      for (let k = t.kidStart[p]; k < t.kidStart[p + 1]; k++) if (t.total[t.kids[k]] > 0) a.push(t.kids[k]);
      return a;
    };
    const key = this.inverted && (e.key === "ArrowUp" || e.key === "ArrowDown") ?
      (e.key === "ArrowUp" ? "ArrowDown" : "ArrowUp") : e.key;
    switch (key) {
      case "ArrowUp": {
        const a = kidsOf(n);
        if (a.length) n = a.reduce((x, y) => (t.total[y] > t.total[x] ? y : x));
        break;
      }
      case "ArrowDown":
        if (n !== this.zoom && t.parent[n] >= 0) n = t.parent[n];
        break;
      case "ArrowLeft":
      case "ArrowRight": {
        if (n === this.zoom) break;
        const a = kidsOf(t.parent[n]), i = a.indexOf(n);
        const j = e.key === "ArrowLeft" ? i - 1 : i + 1;
        if (j >= 0 && j < a.length) n = a[j];
        break;
      }
      case "Enter":
        this.setZoom(n, true);
        e.preventDefault();
        return;
      case "Escape":
        this.setZoom(0, true);
        e.preventDefault();
        return;
      case "ContextMenu":
      case "m": {
        const at = this.where(n);
        if (this.onMenu && n > 0 && at) this.onMenu(n, at.x, at.y);
        e.preventDefault();
        return;
      }
      default:
        return;
    }
    e.preventDefault();
    this.focus = n;
    this.draw();
  }
}
