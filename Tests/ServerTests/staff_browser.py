#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Drives blegate-server's staff page in headless Chromium for StaffPageBrowserTests, with
the wall tests' browser set-up (Tests/WallTests/wall_browser.py). Signs in with a wrong
token, then the right one, reads the gateways, classes and members tables, makes a pairing
code with the form, and prints one JSON object; the caller judges it.

  staff_browser.py URL TOKEN CLIENT_ID
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "WallTests"))
from wall_browser import browser, wait_for  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402


def rows(d, selector, *keys):
    return [{k: e.get_attribute("data-" + k) for k in keys} | {"text": e.text}
            for e in d.find_elements(By.CSS_SELECTOR, selector)]


def sign_in(d, url, token):
    d.get(url + "/staff")
    field = wait_for("the sign-in form", 30, lambda: d.find_elements(By.NAME, "token"))
    field[0].send_keys(token)
    d.find_element(By.CSS_SELECTOR, "#login button").click()


def main():
    url, token, client = sys.argv[1], sys.argv[2], sys.argv[3]
    out = {}
    d = browser(1280, 900)
    try:
        sign_in(d, url, "bgt_not-a-token")
        alert = wait_for("the refusal", 30, lambda: d.find_elements(By.CSS_SELECTOR, "[role=alert]"))
        out["wrong_token_message"] = alert[0].text if alert else None
        sign_in(d, url, token)
        wait_for("the gateways table", 30, lambda: d.find_elements(By.ID, "gateways"))
        out["title"] = d.title
        out["gateways"] = rows(d, "#gateways tbody tr", "gateway", "health")
        out["classes"] = rows(d, "#classes tbody tr", "class")
        out["members"] = rows(d, "#members tbody tr", "member")
        links = d.find_elements(By.CSS_SELECTOR, "#members a[data-csv]")
        if links:
            status, text = d.execute_script(
                "var x = new XMLHttpRequest(); x.open('GET', arguments[0], false); x.send(); return [x.status, x.responseText];",
                links[0].get_attribute("href"))
            out["csv"] = {"status": status, "lines": len([l for l in text.split("\r\n") if l])}
        d.find_element(By.NAME, "client_id").send_keys(client)
        d.find_element(By.CSS_SELECTOR, "#pairing form button").click()
        made = wait_for("the new code", 30, lambda: d.find_elements(By.CSS_SELECTOR, "[data-new-code]"))
        out["new_code"] = made[0].get_attribute("data-new-code") if made else None
        out["codes"] = rows(d, "#pairing tbody tr", "code", "state")
        d.find_element(By.CSS_SELECTOR, "form[action='/staff/logout'] button").click()
        wait_for("the sign-in form again", 30, lambda: d.find_elements(By.NAME, "token"))
        out["signed_out"] = bool(d.find_elements(By.NAME, "token"))
    finally:
        d.quit()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
