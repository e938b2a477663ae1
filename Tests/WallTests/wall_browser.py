#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Drives the wall in headless Chromium (chromium-driver + python3-selenium) for
WallBrowserTests and scripts/bench.sh wall. Prints one JSON object on stdout (progress
lines start with '#'); the caller judges the results.

  layout  URL --tiles N --sizes 1920x1080,1280x720 --seconds S --shots DIR
  stale   URL --device ID --since EPOCH_MS --tiles N
  restart URL --tiles N           prints '# READY' then '# OFFLINE'; the caller kills and restarts the gateway
  bench   URL --tiles N --screens K --seconds S
  classes URL --tiles N --shots DIR  prints '# READY', '# CLASS' once a class shows, then waits for its summary
  summary URL --tiles N --sizes ... --shots DIR  a summary of N members: every page of it, at each size, fits
"""
import argparse
import json
import re
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

TILES_JS = """
return Array.from(document.querySelectorAll('[data-device-id]')).map(function (e) {
  var r = e.getBoundingClientRect();
  var hr = e.querySelector('[data-field="hr"]');
  return {id: e.dataset.deviceId, state: e.dataset.state, zone: e.dataset.zone === undefined ? null : e.dataset.zone,
          hr: hr ? hr.textContent : null, t: e.dataset.t || null,
          left: r.left, top: r.top, right: r.right, bottom: r.bottom};
});
"""


def say(msg):
    print("# " + msg, flush=True)


def browser(width, height):
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=%d,%d" % (width, height), "--force-device-scale-factor=1"):
        o.add_argument(a)
    d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
    size(d, width, height)
    return d


def size(d, width, height):
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def tiles(d):
    return d.execute_script(TILES_JS)


def wait_for(what, timeout, probe, every=0.25):
    end = time.time() + timeout
    while time.time() < end:
        v = probe()
        if v:
            return v
        time.sleep(every)
    return None


def fresh(ts, n):
    return len([t for t in ts if t["state"] in ("live", "advertised")]) >= n


def first_int(text):
    m = re.search(r"\d+", text or "")
    return int(m.group(0)) if m else None


def layout(a):
    out = {"sizes": []}
    d = browser(1920, 1080)
    try:
        d.get(a.url)
        for spec in a.sizes.split(","):
            w, h = (int(x) for x in spec.split("x"))
            size(d, w, h)
            ok = wait_for("tiles", 120, lambda: fresh(tiles(d), a.tiles))
            say("%s: %d tiles" % (spec, len(tiles(d))))
            time.sleep(1)
            viewport = d.execute_script("return [window.innerWidth, window.innerHeight, "
                                        "document.documentElement.scrollWidth, document.documentElement.scrollHeight, "
                                        "document.body.scrollWidth, document.body.scrollHeight];")
            samples = set()
            end = time.time() + a.seconds
            problems = []
            while time.time() < end:
                for t in tiles(d):
                    if t["state"] in ("live", "advertised", "stale", "waiting"):
                        if t["left"] < 0 or t["top"] < 0 or t["right"] > viewport[0] + 0.5 or t["bottom"] > viewport[1] + 0.5:
                            problems.append("%s outside the viewport: %r" % (t["id"], t))
                    if t["hr"] is not None:
                        if t["zone"] is None or not re.fullmatch(r"[0-5]", t["zone"]):
                            problems.append("%s shows a heart rate without a zone 0-5: %r" % (t["id"], t))
                        samples.add((t["id"], first_int(t["hr"]), int(t["t"]) if t["t"] else None))
                time.sleep(0.25)
            shot = "%s/%s-%dx%d.png" % (a.shots, a.prefix, w, h)
            d.save_screenshot(shot)
            final = tiles(d)
            out["sizes"].append({
                "size": spec, "reached": bool(ok), "tiles": len(final),
                "waiting": len([t for t in final if t["state"] == "waiting"]),
                "waiting_text": [t["hr"] for t in final if t["state"] == "waiting"][:5],
                "header_count": d.execute_script("return document.getElementById('waiting-more').textContent;"),
                "fresh": len([t for t in final if t["state"] in ("live", "advertised")]),
                "viewport": viewport, "problems": problems[:20], "screenshot": shot,
                "samples": sorted([list(s) for s in samples], key=lambda s: (s[0], s[2] or 0)),
            })
    finally:
        d.quit()
    return out


def stale(a):
    d = browser(1280, 720)
    try:
        d.get(a.url)
        seen = {}
        others_bad = []
        end = time.time() + 120
        while time.time() < end:
            now = time.time() * 1000 - a.since
            ts = tiles(d)
            mine = [t for t in ts if t["id"] == a.device]
            state = mine[0]["state"] if mine else "absent"
            # Absent counts only once the tile has been seen (not while the page loads).
            if state == "absent" and not seen:
                time.sleep(0.2)
                continue
            if state not in seen:
                seen[state] = now
                say("%s %s at %.1f s" % (a.device, state, now / 1000))
            # Other straps keep sending: none may be stale or gone.
            for t in ts:
                if t["id"] != a.device and t["state"] in ("stale", "gone"):
                    others_bad.append([t["id"], t["state"], round(now)])
            if state == "absent" and "gone" in seen:
                break
            time.sleep(0.2)
        return {"first_seen_ms": seen, "others_stale_or_gone": others_bad[:20]}
    finally:
        d.quit()


def restart(a):
    d = browser(1280, 720)
    try:
        d.get(a.url)
        ok = wait_for("tiles", 120, lambda: fresh(tiles(d), a.tiles))
        d.execute_script("window.__marker = 'no reload';")
        say("READY" if ok else "NOT READY")
        offline = wait_for("offline", 60, lambda: d.execute_script("return document.body.classList.contains('offline');"))
        banner = d.execute_script("return getComputedStyle(document.getElementById('offline')).display + ' ' + "
                                  "document.getElementById('offline').textContent;") if offline else None
        say("OFFLINE" if offline else "NEVER OFFLINE")
        t0 = time.time()
        frames = d.execute_script("return window.wallFrames;")
        # Back: online, frames flowing again, and fresh heart rates on screen. How many straps
        # the new gateway has reconnected by then is its business, not the page's.
        back = wait_for("back", 180, lambda: not d.execute_script("return document.body.classList.contains('offline');")
                        and d.execute_script("return window.wallFrames;") > frames + 3
                        and fresh(tiles(d), 1), every=0.5)
        if back:
            wait_for("all back", 60, lambda: fresh(tiles(d), a.tiles), every=0.5)
        return {"ready": bool(ok), "offline": bool(offline), "banner": banner, "recovered": bool(back),
                "recovered_after_s": round(time.time() - t0, 1),
                "marker": d.execute_script("return window.__marker === undefined ? null : window.__marker;"),
                "fresh_tiles": len([t for t in tiles(d) if t["state"] in ("live", "advertised")])}
    finally:
        d.quit()


CLASS_JS = """
var rows = Array.from(document.querySelectorAll('#summary [data-testid="summary-member"]')).map(function (c) {
  var f = function (k) { var e = c.querySelector('[data-field="' + k + '"]'); return e ? e.textContent : null; };
  var z = function (k) { var e = c.querySelector('[data-field="' + k + '"]'); return e ? e.dataset.seconds : null; };
  return {id: c.dataset.strap, name: f('name'), points: f('points'), svg: !!c.querySelector('svg polyline'),
          zones: [z('z1'), z('z2'), z('z3'), z('z4'), z('z5')]};
});
var s = document.getElementById('summary');
var t = document.querySelector('#summary .summary-title');
return {name: document.getElementById('class-name').textContent,
        timer: document.getElementById('class-timer').textContent,
        summary: document.body.classList.contains('summary') && getComputedStyle(s).display !== 'none',
        title: t ? t.textContent : '', rows: rows};
"""

# Every card shown on the summary's current page: inside the viewport, nothing inside it
# cut off (its parts within the card, text not wider than its box).
FIT_JS = """
var W = window.innerWidth, H = window.innerHeight, out = [];
document.querySelectorAll('#summary .summary-member.shown').forEach(function (c) {
  var r = c.getBoundingClientRect(), p = [];
  if (r.left < 0 || r.top < 0 || r.right > W + 0.5 || r.bottom > H + 0.5) p.push('card outside the viewport');
  c.querySelectorAll('.sm-curve, .sm-zones, .sm-zones span, .sm-pts').forEach(function (e) {
    var q = e.getBoundingClientRect();
    if (q.left < r.left - 0.5 || q.right > r.right + 0.5 || q.top < r.top - 0.5 || q.bottom > r.bottom + 0.5) p.push(e.className + ' outside its card');
    if (e.scrollWidth > e.clientWidth + 1) p.push(e.className + ' text cut off');
  });
  var svg = c.querySelector('svg');
  if (!svg || svg.getBoundingClientRect().height < 20) p.push('curve missing or under 20 px');
  var fs = parseFloat(getComputedStyle(c).fontSize);
  out.push({id: c.dataset.strap, problems: p, font: fs, w: r.width, h: r.height});
});
return out;
"""


def summary(a):
    out = {"sizes": []}
    d = browser(1920, 1080)
    try:
        d.get(a.url)
        for spec in a.sizes.split(","):
            w, h = (int(x) for x in spec.split("x"))
            size(d, w, h)
            ok = wait_for("summary", 60, lambda: len(d.execute_script(CLASS_JS)["rows"]) >= a.tiles)
            time.sleep(0.5)
            pages = d.execute_script("return window.wallSummaryPages();")
            seen, problems, fonts = set(), [], []
            for i in range(pages):
                d.execute_script("window.wallSummaryShow(arguments[0]);", i)
                time.sleep(0.3)
                cards = d.execute_script(FIT_JS)
                for c in cards:
                    seen.add(c["id"])
                    fonts.append(c["font"])
                    problems += ["%s page %d: %s" % (c["id"], i + 1, p) for p in c["problems"]]
                if i == 0:
                    d.save_screenshot("%s/wall-summary-%dx%d.png" % (a.shots, w, h))
            say("%s: %d cards on %d page(s)" % (spec, len(seen), pages))
            out["sizes"].append({"size": spec, "reached": bool(ok), "pages": pages, "cards": len(seen),
                                 "min_font_px": min(fonts) if fonts else None, "problems": problems[:20]})
    finally:
        d.quit()
    return out


def classes(a):
    d = browser(1280, 720)
    try:
        d.get(a.url)
        ok = wait_for("tiles", 120, lambda: fresh(tiles(d), a.tiles))
        say("READY" if ok else "NOT READY")
        shown = wait_for("class", 90, lambda: d.execute_script(CLASS_JS)["name"] != "")
        first = d.execute_script(CLASS_JS)
        time.sleep(2.5)
        second = d.execute_script(CLASS_JS)
        if shown:
            d.save_screenshot(a.shots + "/wall-class.png")
        say("CLASS" if shown else "NO CLASS")
        summary = wait_for("summary", 900, lambda: (lambda c: c if c["summary"] and c["rows"] else None)(d.execute_script(CLASS_JS)))
        return {"ready": bool(ok), "class": first, "class_later": second, "summary": summary,
                "tiles_during_summary": len(tiles(d))}
    finally:
        d.quit()


def bench(a):
    d = browser(1920, 1080)
    try:
        # A browser opens at most 6 connections per host and each screen holds one open
        # for its event stream, so every tab gets its own loopback address (127.0.0.N),
        # as ten TVs would each be their own browser.
        def tab_url(i):
            return a.url.replace("127.0.0.1", "127.0.0.%d" % (i + 1), 1)
        d.get(tab_url(0))
        handles = [d.current_window_handle]
        for i in range(1, a.screens):
            d.switch_to.new_window("tab")
            d.get(tab_url(i))
            handles.append(d.current_window_handle)
        d.switch_to.window(handles[0])
        ok = wait_for("tiles", 120, lambda: fresh(tiles(d), a.tiles))
        connected = d.execute_script("return window.wallFrames;")
        say("screens: %d, tiles: %s, frames so far %s; measuring for %d s" % (len(handles), len(tiles(d)), connected, a.seconds))
        for h in handles:
            d.switch_to.window(h)
            d.execute_script("window.wallLatency.length = 0;")
        print("# MEASURING", flush=True)
        time.sleep(a.seconds)
        lat = []
        for h in handles:
            d.switch_to.window(h)
            lat += d.execute_script("return window.wallLatency.slice();")
        print("# DONE", flush=True)
        lat.sort()

        def pct(p):
            return lat[min(len(lat) - 1, int(p / 100 * len(lat)))] if lat else None
        return {"ready": bool(ok), "screens": len(handles), "samples": len(lat), "p50_ms": pct(50), "p99_ms": pct(99),
                "max_ms": lat[-1] if lat else None}
    finally:
        d.quit()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["layout", "stale", "restart", "bench", "classes", "summary"])
    p.add_argument("url")
    p.add_argument("--tiles", type=int, default=40)
    p.add_argument("--sizes", default="1920x1080,1280x720")
    p.add_argument("--seconds", type=int, default=8)
    p.add_argument("--shots", default="/tmp")
    p.add_argument("--prefix", default="wall")
    p.add_argument("--device")
    p.add_argument("--since", type=float, default=0)
    p.add_argument("--screens", type=int, default=10)
    a = p.parse_args()
    result = {"layout": layout, "stale": stale, "restart": restart, "bench": bench, "classes": classes,
              "summary": summary}[a.mode](a)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    sys.exit(main())
