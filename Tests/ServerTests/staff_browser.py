#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Drives blegate-server's staff page in headless Chromium for StaffPageBrowserTests, with
the wall tests' browser set-up (Tests/WallTests/wall_browser.py). Signs in with a wrong
token, then the right one, reads the gateways, classes and members tables, adds a member
with the form and edits their profile on their page, opens the first class's page and reads
its per-person summaries, makes a pairing code with the form, and prints one JSON object;
the caller judges it.

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
        # A member added with the form lands on their page; the profile form saves.
        form = d.find_element(By.ID, "add-member")
        form.find_element(By.NAME, "name").send_keys("Dana Q")
        form.find_element(By.NAME, "age").send_keys("41")
        form.find_element(By.CSS_SELECTOR, "button").click()
        wait_for("the new member's page", 30, lambda: d.find_elements(By.ID, "profile-form"))
        profile = d.find_element(By.ID, "profile")
        out["added"] = {"member": profile.get_attribute("data-member"),
                        "profile": profile.find_element(By.CSS_SELECTOR, "[data-field=profile]").text}
        edit = d.find_element(By.ID, "profile-form")
        for name, value in (("max_hr", "300"),):
            field = edit.find_element(By.NAME, name)
            field.clear()
            field.send_keys(value)
        edit.find_element(By.CSS_SELECTOR, "button").click()
        refusal = wait_for("the refusal of a bad max HR", 30, lambda: d.find_elements(By.CSS_SELECTOR, "[role=alert]"))
        out["edit_refused"] = refusal[0].text if refusal else None
        edit = d.find_element(By.ID, "profile-form")
        for name, value in (("max_hr", "190"), ("resting_hr", "55")):
            field = edit.find_element(By.NAME, name)
            field.clear()
            field.send_keys(value)
        edit.find_element(By.CSS_SELECTOR, "button").click()
        wait_for("the saved profile", 30, lambda: d.find_elements(By.CSS_SELECTOR, "[role=status]"))
        out["edited"] = d.find_element(By.CSS_SELECTOR, "#profile [data-field=profile]").text

        # The first class's page: one summary per person, each with its curve.
        d.get(url + "/staff")
        wait_for("the classes table", 30, lambda: d.find_elements(By.CSS_SELECTOR, "#classes tbody a"))
        d.find_element(By.CSS_SELECTOR, "#classes tbody a").click()
        wait_for("the class summaries", 30, lambda: d.find_elements(By.CSS_SELECTOR, "[data-testid=summary-member]"))
        summaries = d.find_elements(By.CSS_SELECTOR, "[data-testid=summary-member]")
        out["class_page"] = {
            "class": d.find_element(By.CSS_SELECTOR, "[data-class]").get_attribute("data-class"),
            "people": [{"member": e.get_attribute("data-member"), "name": e.find_element(By.TAG_NAME, "h3").text,
                        "svg": len(e.find_elements(By.CSS_SELECTOR, "svg")),
                        "lines": len(e.find_elements(By.CSS_SELECTOR, "svg polyline")),
                        "zone1": e.find_element(By.CSS_SELECTOR, "td[data-zone='1']").text}
                       for e in summaries],
        }

        d.get(url + "/staff")
        wait_for("the pairing form", 30, lambda: d.find_elements(By.CSS_SELECTOR, "#pairing input[name=client_id]"))
        d.find_element(By.CSS_SELECTOR, "#pairing input[name=client_id]").send_keys(client)
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
