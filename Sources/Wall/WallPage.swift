// SPDX-License-Identifier: MIT

/// The page, whole: no CDN, no fonts to fetch, no build step. It draws frames from
/// `/events` and keeps nothing else; the gateway decides every state.
///
/// Contract for tests and tools: a tile is `[data-device-id]` with `data-state` and
/// `data-zone`; `[data-field="hr"]` holds the heart rate. `window.wallLatency` keeps, per
/// drawn heart rate, milliseconds from the record's timestamp to the moment it was in
/// the DOM (the benchmark reads it).
enum WallPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Wall</title>
<style>
*{box-sizing:border-box;margin:0;padding:0}
html,body{width:100%;height:100%;overflow:hidden;background:#0d1117;color:#f0f3f6;
  font-family:"DejaVu Sans","Liberation Sans",Arial,Helvetica,sans-serif}
#page{display:flex;flex-direction:column;width:100vw;height:100vh}
header{flex:0 0 auto;height:8vh;min-height:40px;display:flex;align-items:center;justify-content:space-between;
  padding:0 2vw;font-size:min(4.2vh,3vw);background:#161b22;border-bottom:2px solid #30363d;white-space:nowrap}
header .class{display:flex;gap:1.5vw;opacity:.95}
header .class:empty{display:none}
#clock{font-variant-numeric:tabular-nums}
#offline{display:none;position:fixed;left:0;right:0;bottom:0;padding:1.2vh 2vw;background:#b3261e;color:#fff;
  font-size:min(3.5vh,2.5vw);text-align:center;z-index:9}
body.offline #offline{display:block}
main{flex:1 1 auto;display:grid;gap:.6vmin;padding:.6vmin;min-height:0}
.tile{position:relative;overflow:hidden;border-radius:1vmin;display:flex;flex-direction:column;justify-content:space-between;
  padding:calc(var(--u)*.18) calc(var(--u)*.3);background:var(--zc);color:#fff;text-shadow:0 1px 2px rgba(0,0,0,.45);min-width:0;min-height:0}
.tile .top,.tile .bottom,.tile .mid{display:flex;justify-content:space-between;align-items:baseline;gap:calc(var(--u)*.2);white-space:nowrap}
.tile .name{font-size:calc(var(--u)*.62);font-weight:bold;overflow:hidden;text-overflow:ellipsis;min-width:0}
.tile .tags{font-size:calc(var(--u)*.42);display:flex;gap:calc(var(--u)*.15)}
.tile .tag{padding:0 calc(var(--u)*.12);border-radius:calc(var(--u)*.1);background:rgba(0,0,0,.35)}
.tile .tag:empty{display:none}
.tile .tag.low{background:#fff;color:#b3261e;text-shadow:none;font-weight:bold}
.tile .hr{font-size:calc(var(--u)*2.1);line-height:1;font-weight:bold;font-variant-numeric:tabular-nums}
.tile .hr small{font-size:.3em;font-weight:normal;margin-left:.15em}
.tile .zone{font-size:calc(var(--u)*.75);font-weight:bold;border:calc(var(--u)*.06) solid #fff;border-radius:calc(var(--u)*.15);padding:0 calc(var(--u)*.15)}
.tile .pct{font-size:calc(var(--u)*.62)}
.tile .bottom{font-size:calc(var(--u)*.5);font-variant-numeric:tabular-nums}
.tile[data-zone="0"]{--zc:#4b5563}.tile[data-zone="1"]{--zc:#6b7a8c}.tile[data-zone="2"]{--zc:#1f6fd1}
.tile[data-zone="3"]{--zc:#1e8e3e}.tile[data-zone="4"]{--zc:#d97706}.tile[data-zone="5"]{--zc:#c62828}
.tile.new{outline:calc(var(--u)*.08) dashed #fff;outline-offset:calc(var(--u)*-.12)}
.tile[data-state="stale"]{--zc:#3a3f47;color:#9aa3ad}
.tile[data-state="gone"]{--zc:#22262c;color:#6b7280}
#summary{display:none;flex:1 1 auto;padding:2vh 3vw;overflow:hidden;font-size:min(3.2vh,2.4vw)}
body.summary #summary{display:block}
body.summary main{display:none}
#summary h1{font-size:1.6em;margin-bottom:1.5vh}
#summary table{width:100%;border-collapse:collapse;font-variant-numeric:tabular-nums}
#summary th,#summary td{padding:.25em .5em;text-align:right;border-bottom:1px solid #30363d}
#summary th:first-child,#summary td:first-child{text-align:left}
#summary td.z1{color:#9fb0c3}#summary td.z2{color:#5aa2ff}#summary td.z3{color:#4cc46a}#summary td.z4{color:#f5a524}#summary td.z5{color:#ff5c5c}
#empty{grid-column:1/-1;grid-row:1/-1;align-self:center;justify-self:center;font-size:4vh;opacity:.6}
</style>
</head>
<body>
<div id="page">
<header>
  <div id="gym"></div>
  <div class="class" id="class"><span id="class-name" data-field="class-name"></span><span id="class-timer" data-field="class-timer"></span></div>
  <div id="clock"></div>
</header>
<main id="grid"><div id="empty">Waiting for heart-rate straps…</div></main>
<section id="summary"><h1 id="summary-title"></h1>
<table><thead><tr><th>Member</th><th>Points</th><th>Z1 min</th><th>Z2 min</th><th>Z3 min</th><th>Z4 min</th><th>Z5 min</th></tr></thead>
<tbody id="summary-rows"></tbody></table></section>
</div>
<div id="offline">Lost the gateway: reconnecting…</div>
<script>
"use strict";
const grid = document.getElementById("grid");
const tiles = new Map();
const latency = [];
window.wallLatency = latency;
window.wallFrames = 0;
let cols = 1, shownSlots = -1, lastMessage = Date.now(), source = null;
let timer = null, summaryKey = "";

function clockText(seconds) {
  const s = Math.max(0, Math.floor(seconds)), h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60);
  const ss = String(s % 60).padStart(2, "0");
  return h ? h + ":" + String(m).padStart(2, "0") + ":" + ss : m + ":" + ss;
}

function showTimer() {
  const node = document.getElementById("class-timer");
  if (!timer) { set(node, ""); return; }
  const elapsed = timer.elapsed + (Date.now() - timer.at) / 1000;
  set(node, clockText(elapsed) + (timer.length ? " / " + clockText(timer.length) : ""));
}

function showSummary(summary) {
  document.body.classList.toggle("summary", !!summary);
  if (!summary) { summaryKey = ""; return; }
  const key = JSON.stringify(summary);
  if (key === summaryKey) return;
  summaryKey = key;
  set(document.getElementById("summary-title"), summary.name + ": well done");
  const body = document.getElementById("summary-rows");
  body.textContent = "";
  for (const r of summary.rows) {
    const tr = el("tr", "", body);
    tr.dataset.deviceId = r.id;
    el("td", "", tr).textContent = r.name;
    const pts = el("td", "", tr);
    pts.textContent = String(r.pts);
    pts.dataset.field = "points";
    for (let z = 1; z <= 5; z++) {
      const td = el("td", "z" + z, tr);
      td.textContent = String(r.min[z]);
      td.dataset.field = "z" + z;
    }
  }
}

function el(tag, cls, parent) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (parent) parent.appendChild(e);
  return e;
}

function makeTile(id) {
  const root = el("div", "tile");
  root.dataset.deviceId = id;
  const top = el("div", "top", root);
  const name = el("span", "name", top);
  const tags = el("span", "tags", top);
  const adv = el("span", "tag", tags);
  const stale = el("span", "tag", tags);
  const low = el("span", "tag low", tags);
  const mid = el("div", "mid", root);
  const hr = el("span", "hr", mid);
  hr.dataset.field = "hr";
  const zone = el("span", "zone", mid);
  zone.dataset.field = "zone";
  const bottom = el("div", "bottom", root);
  const pct = el("span", "pct", bottom);
  pct.dataset.field = "pct";
  const kcal = el("span", "", bottom);
  kcal.dataset.field = "kcal";
  const pts = el("span", "", bottom);
  pts.dataset.field = "points";
  const t = {root, name, adv, stale, low, hr, zone, pct, kcal, pts, last: null};
  tiles.set(id, t);
  grid.appendChild(root);
  return t;
}

function set(node, text) { if (node.textContent !== text) node.textContent = text; }

function layout(n) {
  const W = grid.clientWidth, H = grid.clientHeight;
  let best = null;
  for (let c = 1; c <= Math.max(n, 1); c++) {
    const r = Math.ceil(Math.max(n, 1) / c), w = W / c, h = H / r;
    const size = Math.min(w / 1.55, h);
    if (!best || size > best.size) best = {c, r, w, h, size};
  }
  cols = best.c;
  grid.style.gridTemplateColumns = "repeat(" + best.c + ", minmax(0, 1fr))";
  grid.style.gridTemplateRows = "repeat(" + best.r + ", minmax(0, 1fr))";
  // Width: three digits of the heart rate, the zone badge and padding need about 7 units.
  grid.style.setProperty("--u", Math.min(best.w / 7.0, best.h / 4.4).toFixed(1) + "px");
}

function apply(frame) {
  window.wallFrames++;
  set(document.getElementById("gym"), frame.gym);
  set(document.getElementById("class-name"), frame.class ? frame.class.name : "");
  timer = frame.class ? {elapsed: frame.class.elapsed, length: frame.class.length, at: Date.now()} : null;
  showTimer();
  showSummary(frame.summary);
  const seen = new Set();
  let slots = 0;
  for (const f of frame.tiles) slots = Math.max(slots, f.slot + 1);
  if (slots !== shownSlots) { shownSlots = slots; layout(slots); }
  document.getElementById("empty").style.display = frame.tiles.length ? "none" : "";
  for (const f of frame.tiles) {
    seen.add(f.id);
    const t = tiles.get(f.id) || makeTile(f.id);
    t.root.style.gridColumn = String(f.slot % cols + 1);
    t.root.style.gridRow = String(Math.floor(f.slot / cols) + 1);
    t.root.classList.toggle("new", f.short !== undefined);
    set(t.name, f.short !== undefined ? f.name + " \u00b7 " + f.short : f.name);
    if (t.root.dataset.state !== f.state) t.root.dataset.state = f.state;
    if (t.root.dataset.zone !== String(f.zone)) t.root.dataset.zone = String(f.zone);
    set(t.hr, String(f.hr));
    set(t.zone, "Z" + f.zone);
    set(t.pct, (f.est ? "~" : "") + f.pct + "%");
    set(t.kcal, f.kcal === undefined ? "" : f.kcal + " kcal");
    set(t.pts, f.pts + " pts");
    set(t.adv, f.state === "advertised" ? "no link" : "");
    set(t.stale, f.state === "stale" ? "no signal" : f.state === "gone" ? "gone" : "");
    set(t.low, f.low ? "LOW BATT" : "");
    if (t.last !== f.t) {
      t.last = f.t;
      t.root.dataset.t = String(f.t);
      if (f.state === "live" || f.state === "advertised") {
        latency.push(Date.now() - f.t);
        if (latency.length > 20000) latency.splice(0, 10000);
      }
    }
  }
  for (const [id, t] of tiles) {
    if (!seen.has(id)) { t.root.remove(); tiles.delete(id); }
  }
}

function online(ok) { document.body.classList.toggle("offline", !ok); }

function connect() {
  if (source) source.close();
  source = new EventSource("events");
  source.onmessage = (e) => { lastMessage = Date.now(); online(true); apply(JSON.parse(e.data)); };
  source.onerror = () => {
    online(false);
    if (source.readyState === EventSource.CLOSED) setTimeout(connect, 1000);
  };
}

function tick() {
  const d = new Date();
  set(document.getElementById("clock"), d.toLocaleTimeString([], {hour: "2-digit", minute: "2-digit"}));
  showTimer();
  // The gateway sends a frame at least every 2 s; silence means it is gone even when
  // the socket has not noticed (a TV's Wi-Fi dropping, a gateway killed).
  if (Date.now() - lastMessage > 6000) { online(false); lastMessage = Date.now(); connect(); }
}

window.addEventListener("resize", () => { shownSlots = -1; });
setInterval(tick, 1000);
tick();
connect();
</script>
</body>
</html>
"""#
}
