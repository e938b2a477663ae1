#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs a whole class through the coach page in headless Chromium (chromium-driver +
python3-selenium) for CoachBrowserTests: sign-in refusals, start, assign two straps to
members from the server's list, edit a profile, a forged cross-site POST, stop, the
summary; then the wall. Prints one JSON object (progress lines start with '#'); the
caller judges.

  coach_browser.py GATEWAY_URL --pin PIN --members "Name A,Name B" --seconds S --shots DIR
"""
import argparse
import http.server
import json
import sys
import threading
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select


def say(msg):
    print("# " + msg, flush=True)


def browser():
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1024,768", "--force-device-scale-factor=1"):
        o.add_argument(a)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)


def size(d, w, h, mobile=False):
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": mobile})


def wait_for(timeout, probe, every=0.25):
    end = time.time() + timeout
    while time.time() < end:
        try:
            v = probe()
        except Exception:
            v = None
        if v:
            return v
        time.sleep(every)
    return None


def tid(d, name, within=None):
    return (within or d).find_element(By.CSS_SELECTOR, '[data-testid="%s"]' % name)


def tids(d, name, within=None):
    return (within or d).find_elements(By.CSS_SELECTOR, '[data-testid="%s"]' % name)


def rows(d):
    return d.execute_script("""
      return Array.from(document.querySelectorAll('[data-testid="strap-row"]')).map(function (r) {
        return {address: r.dataset.address, state: r.dataset.state, text: r.innerText,
                who: r.querySelector('.who').textContent, why: r.querySelector('.why').textContent,
                assign: !r.querySelector('[data-testid="strap-assign"]').classList.contains('hidden')};
      });""")


def post_status(url, body, headers):
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        return urllib.request.urlopen(req, timeout=10).status
    except urllib.error.HTTPError as e:
        return e.code


def overflow(d):
    """Elements wider than the viewport (a page made for the size scrolls only down)."""
    return d.execute_script("return document.documentElement.scrollWidth > window.innerWidth + 1;")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("--pin", required=True)
    p.add_argument("--members", required=True)
    p.add_argument("--seconds", type=int, default=20)
    p.add_argument("--shots", default="/tmp")
    a = p.parse_args()
    base = a.url.rstrip("/")
    coach = base + "/coach"
    names = a.members.split(",")
    out = {}

    # Refused without a PIN and with a wrong one (plain HTTP, as a script would try).
    out["no_pin_status"] = post_status(coach + "/signin", b"", {"Content-Type": "application/x-www-form-urlencoded"})
    out["state_without_session"] = post_status(coach + "/api/class/stop", b"{}", {"Content-Type": "application/json"})

    d = browser()
    forger = None
    try:
        size(d, 1024, 768)
        d.get(coach)
        out["signin_form"] = bool(tids(d, "coach-pin")) and bool(tids(d, "coach-signin"))
        out["pin_in_url"] = a.pin in d.current_url
        tid(d, "coach-pin").send_keys("0000")
        tid(d, "coach-signin").click()
        out["wrong_pin_message"] = wait_for(10, lambda: tid(d, "coach-message").text)
        tid(d, "coach-pin").send_keys(a.pin)
        tid(d, "coach-signin").click()
        out["signed_in"] = bool(wait_for(15, lambda: tids(d, "class-start")))
        out["pin_in_url_after"] = a.pin in d.current_url
        say("signed in" if out["signed_in"] else "NOT SIGNED IN")

        # Straps appear; pick two streaming ones that nobody wears.
        free = wait_for(90, lambda: [r for r in rows(d) if r["state"] == "streaming" and r["assign"]][:2]
                        if len([r for r in rows(d) if r["state"] == "streaming" and r["assign"]]) >= 2 else None)
        out["rows_before"] = rows(d)

        tid(d, "class-name").send_keys("Spin 18:00")
        Select(tid(d, "class-type")).select_by_value("cycle")
        tid(d, "class-length").clear()
        tid(d, "class-length").send_keys("45")
        tid(d, "class-start").click()
        out["timer_first"] = wait_for(15, lambda: (lambda t: t if t not in ("", "0:00") and "/ 45:00" in t else None)(tid(d, "class-timer").text))
        say("class started: %s" % out["timer_first"])

        assigned = []
        for strap, name in zip(free or [], names):
            row = d.find_element(By.CSS_SELECTOR, '[data-testid="strap-row"][data-address="%s"]' % strap["address"])
            tid(d, "strap-assign", row).click()
            wait_for(5, lambda: tid(d, "member-pick").is_displayed())
            Select(tid(d, "member-pick")).select_by_visible_text(name)
            tid(d, "member-save").click()
            shown = wait_for(20, lambda: d.find_element(By.CSS_SELECTOR,
                             '[data-testid="strap-row"][data-address="%s"] .who' % strap["address"]).text == name)
            assigned.append({"address": strap["address"], "name": name, "shown": bool(shown)})
            say("assigned %s to %s" % (strap["address"], name))
        out["assigned"] = assigned

        # The first member's profile.
        if assigned:
            row = d.find_element(By.CSS_SELECTOR, '[data-testid="strap-row"][data-address="%s"]' % assigned[0]["address"])
            tid(d, "strap-profile", row).click()
            wait_for(5, lambda: tid(d, "profile-age").is_displayed())
            for field, value in (("profile-age", "41"), ("profile-max-hr", "183"), ("profile-weight", "72.5")):
                tid(d, field).clear()
                tid(d, field).send_keys(value)
            tid(d, "profile-save").click()
            out["profile_saved"] = wait_for(15, lambda: "Profile saved" in tid(d, "coach-message").text)

        out["rows_during"] = rows(d)
        size(d, 1024, 768)
        time.sleep(1)
        out["tablet_overflow"] = overflow(d)
        d.save_screenshot(a.shots + "/coach-tablet.png")
        size(d, 390, 844, mobile=True)
        time.sleep(1)
        out["phone_overflow"] = overflow(d)
        d.save_screenshot(a.shots + "/coach-phone.png")
        size(d, 1024, 768)

        # A forged cross-site POST: another site's page auto-submits a form to stop the
        # class, in the very browser that is signed in.
        class Forge(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                page = ('<form id=f method=post enctype="text/plain" action="%s/api/class/stop">'
                        '<input name=\'{"x":"\' value=\'"}\'></form><script>document.getElementById("f").submit()</script>' % coach)
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.end_headers()
                self.wfile.write(page.encode())

            def log_message(self, *args):
                pass
        forger = http.server.HTTPServer(("127.0.0.2", 0), Forge)
        threading.Thread(target=forger.serve_forever, daemon=True).start()
        d.get("http://127.0.0.2:%d/" % forger.server_address[1])
        time.sleep(3)
        out["forged_page_text"] = d.find_element(By.TAG_NAME, "body").text[:200]
        d.get(coach)
        wait_for(15, lambda: tids(d, "class-stop") and tid(d, "class-stop").is_displayed())
        out["running_after_forgery"] = tid(d, "class-stop").is_displayed()

        time.sleep(a.seconds)
        out["timer_later"] = tid(d, "class-timer").text
        tid(d, "class-stop").click()
        say("class stopped")
        summary = wait_for(180, lambda: (lambda c: c if c else None)(tids(d, "summary-member", tid(d, "summary"))), every=1)
        cards = []
        for c in summary or []:
            cards.append({"strap": c.get_attribute("data-strap"), "name": tid(d, "summary", None) and c.find_element(By.CSS_SELECTOR, ".sm-name").text,
                          "svg": len(c.find_elements(By.CSS_SELECTOR, "svg polyline")),
                          "delivery": (c.find_elements(By.CSS_SELECTOR, "[data-field=delivery]") or [None])[0] and
                          c.find_element(By.CSS_SELECTOR, "[data-field=delivery]").get_attribute("data-delivery")})
        out["summary"] = cards
        # Each workout reaches the backend: the page says so once sync has sent it (a strap
        # heard too briefly for a workout is on the summary without one).
        def delivered():
            d.refresh()
            wait_for(10, lambda: tids(d, "summary-member"))
            states = [e.get_attribute("data-delivery") for e in d.find_elements(By.CSS_SELECTOR, "[data-field=delivery]")]
            out["deliveries"] = states
            return states and all(s in ("delivered", "not-kept") for s in states) and states.count("delivered") >= len(assigned)
        out["all_delivered"] = bool(wait_for(60, delivered, every=3))
        d.execute_script("document.getElementById('last').scrollIntoView();")
        time.sleep(0.5)
        d.save_screenshot(a.shots + "/coach-summary.png")

        # The wall shows the members by their names.
        d.get(base + "/")
        out["wall_names"] = wait_for(30, lambda: (lambda n: n if all(x in n for x in names[:len(assigned)]) else None)(
            d.execute_script("return Array.from(document.querySelectorAll('#summary .sm-name, .tile .name')).map(e => e.textContent);")))
    finally:
        if forger:
            forger.shutdown()
        d.quit()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    sys.exit(main())
