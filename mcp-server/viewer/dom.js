// dom.js - the viewer's two helpers: building elements (every text from a
// profile goes in as a text node, never as HTML: nothing here parses
// markup) and calling the server's read-only API.

// el("td", {class: "num", title: t}, "text", child...): attributes are set
// with setAttribute (an "on..." name is refused), children that are not
// nodes become text nodes.
export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (/^on/i.test(k)) throw new Error("el: event handlers are added with addEventListener");
    e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

// A number with a fixed count of decimals, or "-" for null.
export function fmt(x, digits = 0) {
  if (x === null || x === undefined || Number.isNaN(x)) return "-";
  return Number(x).toLocaleString("en-US", {minimumFractionDigits: digits, maximumFractionDigits: digits});
}
export function pct(x) {
  return x === null || x === undefined ? "-" : Number(x).toFixed(2) + "%";
}

// An error of the API: the tool's own {code, message, hint}.
export class ApiError extends Error {
  constructor(status, e) {
    super(e && e.message ? e.message : "HTTP " + status);
    this.status = status;
    this.code = e && e.code;
    this.hint = e && e.hint;
  }
}

// Run a read-only tool on the server (the same registry and sandboxed
// worker as MCP) and give its structured result.
export async function call(tool, args) {
  const r = await fetch("/viewer/api/call", {
    method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify({tool, arguments: args || {}}),
    credentials: "same-origin",
  });
  let body = null;
  try { body = await r.json(); } catch (_) { body = null; }
  if (!r.ok || !body || body.error) throw new ApiError(r.status, body && body.error);
  return body.result;
}

// An artifact's JSON by its path under the artifact root
// ("analyses/an-....stacks.json"); memoized per page load.
const files = new Map();
export function artifactJson(path) {
  if (!files.has(path)) {
    const p = fetch("/viewer/api/file/" + path, {credentials: "same-origin"}).then(async r => {
      if (!r.ok) {
        let e = null;
        try { e = (await r.json()).error; } catch (_) { e = null; }
        throw new ApiError(r.status, e);
      }
      return r.json();
    });
    p.catch(() => files.delete(path));
    files.set(path, p);
  }
  return files.get(path);
}

// A paragraph saying what failed and how to fix it.
export function errorBox(err) {
  return el("div", {class: "error", role: "alert"},
    el("strong", {}, err.code ? err.code + ": " : "error: "), err.message,
    err.hint ? el("div", {class: "hint"}, err.hint) : null);
}
