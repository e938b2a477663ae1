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
/* Z0 is neutral grey with no badge border, Z1 a distinct slate teal: told apart at a glance. */
.tile[data-zone="0"]{--zc:#3f454d}.tile[data-zone="1"]{--zc:#0f7480}.tile[data-zone="2"]{--zc:#1f5fd1}
.tile[data-zone="3"]{--zc:#1e8e3e}.tile[data-zone="4"]{--zc:#d97706}.tile[data-zone="5"]{--zc:#c62828}
.tile[data-zone="0"] .zone{border-style:dashed;opacity:.8}
.tile.new{outline:calc(var(--u)*.08) dashed #fff;outline-offset:calc(var(--u)*-.12)}
.tile[data-state="stale"]{--zc:#3a3f47;color:#9aa3ad}
.tile[data-state="gone"]{--zc:#22262c;color:#6b7280}
.tile[data-state="waiting"]{--zc:#1b2028;color:#c9d1d9;border:calc(var(--u)*.08) dashed #8b949e}
.tile[data-state="waiting"] .hr{font-size:calc(var(--u)*.55);font-weight:normal;white-space:normal;line-height:1.15}
.tile[data-state="waiting"] .zone,.tile[data-state="waiting"] .bottom{visibility:hidden}
#waiting-more{font-size:.8em;padding:.1em .5em;border-radius:.3em;background:#b26b00;color:#fff}
#waiting-more:empty{display:none}
#summary{display:none;flex:1 1 auto;padding:1.2vh 1.5vw;overflow:hidden;min-height:0;flex-direction:column}
body.summary #summary{display:flex}
body.summary main{display:none}
#summary .summary{display:flex;flex-direction:column;height:100%;min-height:0}
#summary .summary-title{font-size:min(4vh,2.6vw);margin-bottom:1vh;display:flex;justify-content:space-between}
#summary .summary-cards{flex:1 1 auto;display:grid;gap:1vmin;min-height:0}
#summary .summary-member{display:none;flex-direction:column;min-width:0;min-height:0;overflow:hidden;background:#161b22;
  border:1px solid #30363d;border-radius:1vmin;padding:.45em .6em;font-size:var(--su,16px);line-height:1.25;font-variant-numeric:tabular-nums}
#summary .summary-member.shown{display:flex}
.sm-name{font-weight:bold;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;min-width:0}
.sm-pts{white-space:nowrap;color:#c9d1d9}
.sm-curve{flex:1 1 auto;min-height:0;margin:.25em 0}
.sm-curve svg{width:100%;height:100%;display:block}
.sm-zones{display:grid;grid-template-columns:repeat(5,minmax(0,1fr));gap:.15em;white-space:nowrap}
.sm-zones span{text-align:center;border-radius:.3em;padding:.05em 0;background:#0d1117;overflow:hidden}
.sm-zones i{display:block;font-style:normal;font-size:.75em;opacity:.85}
.sm-zones .z1{color:#5fd3df}.sm-zones .z2{color:#6ea8ff}.sm-zones .z3{color:#4cc46a}.sm-zones .z4{color:#f5a524}.sm-zones .z5{color:#ff5c5c}
#empty{grid-column:1/-1;grid-row:1/-1;align-self:center;justify-self:center;font-size:4vh;opacity:.6}
</style>
</head>
<body>
<div id="page">
<header>
  <div id="gym"></div>
  <div id="waiting-more" data-field="waiting-more"></div>
  <div class="class" id="class"><span id="class-name" data-field="class-name"></span><span id="class-timer" data-field="class-timer"></span></div>
  <div id="clock"></div>
</header>
<main id="grid"><div id="empty">Waiting for heart-rate straps…</div></main>
<section id="summary"></section>
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

// The summary is drawn by the gateway once per class (`GET /summary`); the page fits its
// cards in a grid of cards at least 230×150 px and pages through them every 10 s when a
// screen holds fewer than the class.
let summaryPage = 0, summaryPages = 1, summaryTimer = null;
function showSummary(summary) {
  document.body.classList.toggle("summary", !!summary);
  const box = document.getElementById("summary");
  if (!summary) { summaryKey = ""; box.textContent = ""; return; }
  const key = String(summary.number);
  if (key === summaryKey) return;
  summaryKey = key;
  fetch("summary", {cache: "no-store"}).then(r => r.ok ? r.text() : "").then(html => {
    if (summaryKey !== key) return;
    box.innerHTML = html;
    summaryPage = 0;
    fitSummary();
  }).catch(() => { summaryKey = ""; });
}

function fitSummary() {
  const cards = document.querySelector("#summary .summary-cards");
  if (!cards) return;
  const all = Array.from(cards.querySelectorAll(".summary-member"));
  const W = cards.clientWidth, H = cards.clientHeight, n = Math.max(all.length, 1);
  let c = Math.max(1, Math.min(n, Math.floor(W / 230))), r = Math.max(1, Math.floor(H / 150));
  while (c * r > n && r > 1 && c * (r - 1) >= n) r--;
  while (c * r > n && c > 1 && (c - 1) * r >= n) c--;
  const per = c * r;
  summaryPages = Math.ceil(all.length / per);
  if (summaryPage >= summaryPages) summaryPage = 0;
  cards.style.gridTemplateColumns = "repeat(" + c + ", minmax(0, 1fr))";
  cards.style.gridTemplateRows = "repeat(" + r + ", minmax(0, 1fr))";
  // A card is about 17 em wide (five zone times) and 9 em tall (name, points, curve, zones).
  cards.style.setProperty("--su", Math.min(W / c / 17, H / r / 9).toFixed(1) + "px");
  all.forEach((e, i) => e.classList.toggle("shown", Math.floor(i / per) === summaryPage));
  const title = document.querySelector("#summary .summary-title");
  if (title) title.dataset.pages = summaryPages > 1 ? (summaryPage + 1) + " / " + summaryPages : "";
  let pager = document.getElementById("summary-pager");
  if (title && !pager) { pager = el("span", "", title); pager.id = "summary-pager"; }
  if (pager) set(pager, summaryPages > 1 ? "page " + (summaryPage + 1) + " of " + summaryPages : "");
}

// For tests and tools: how many pages the summary has here, and showing one of them.
window.wallSummaryPages = () => summaryPages;
window.wallSummaryShow = (i) => { summaryPage = i; fitSummary(); };

setInterval(() => {
  if (!document.body.classList.contains("summary") || summaryPages < 2) return;
  summaryPage = (summaryPage + 1) % summaryPages;
  fitSummary();
}, 10000);

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
  set(document.getElementById("waiting-more"), frame.waitingHidden ? "+" + frame.waitingHidden + " waiting for a link" : "");
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
    const waiting = f.state === "waiting";
    set(t.hr, waiting ? (f.why || "waiting for a link") : String(f.hr));
    set(t.zone, "Z" + f.zone);
    set(t.pct, waiting ? "" : (f.est ? "~" : "") + f.pct + "%");
    set(t.kcal, f.kcal === undefined ? "" : f.kcal + " kcal");
    set(t.pts, f.pts + " pts");
    set(t.adv, f.state === "advertised" ? "no link" : waiting ? "waiting" : "");
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

window.addEventListener("resize", () => { shownSlots = -1; fitSummary(); });
setInterval(tick, 1000);
tick();
connect();
</script>
</body>
</html>
"""#
}
