"""The web panel in a real browser: Debian's chromium, driven by Playwright, against
`launcher run --simulated --web 127.0.0.1:0` as a real process.

A person's way through it: the page asks to pair, the launcher's button held 3 s confirms
(the simulated button, held from the unit's console), then presses show the shot and the new
card count live, and a profile set on the page is the one the console's `status` reports.
Skipped, saying why, where chromium or Playwright is missing; .ci/setup installs both.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from panel_rig import (
    PHONE,
    WAIT_MS,
    Unit,
    browser,
    missing,
    pair_by_holding_the_button,
    simulated_unit,
)

from launcher.firmware.doctor_report import keep

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")

def _status(unit: Unit) -> str:
    final = unit.console.ask("status")
    assert final.startswith("ok state="), final
    return final


def test_pair_press_and_profile_in_a_real_browser(tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with simulated_unit(tmp_path) as unit, browser(tmp_path / "chromium", PHONE) as context:
        page = context.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda exc: problems.append(f"script error: {exc}"))
        page.on("console", lambda msg: problems.append(msg.text)
                if "Content Security Policy" in msg.text else None)
        page.goto(unit.url)
        pair_by_holding_the_button(page, unit)
        expect(page.locator("#link")).to_have_text("live", timeout=WAIT_MS)

        # The token is in the HttpOnly cookie alone: nothing the page's script can read.
        cookie = next(c for c in context.cookies() if c["name"] == "launcher_token")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert "launcher_token" not in page.evaluate("document.cookie")
        assert page.evaluate("localStorage.length + sessionStorage.length") == 0

        # A profile set on the page is the unit's: the console's `status` says so.
        expect(page.locator("#s-inventory")).to_have_text("84", timeout=WAIT_MS)
        page.select_option("#profile", "deal")
        page.fill("#deal-n", "3")
        page.click("#profile-form button")
        expect(page.locator("#s-profile")).to_have_text("deal 3", timeout=WAIT_MS)
        assert 'profile="deal 3"' in _status(unit)

        # A press: the shot and the new count come in over the live stream (the press's
        # own answer carries neither).
        page.click("#press")
        expect(page.locator("#s-shot")).to_have_text(re.compile(r"^3 cards"), timeout=WAIT_MS)
        expect(page.locator("#s-inventory")).to_have_text("81", timeout=WAIT_MS)
        expect(page.locator("#log li[data-event=shot]").first).to_contain_text("cards=3")
        assert "inventory=81" in _status(unit)

        # A refused line: its one-line message on the page, and nothing changed.
        page.fill("#deal-n", "99")
        page.click("#profile-form button")
        expect(page.locator("#error")).to_be_visible(timeout=WAIT_MS)
        expect(page.locator("#error")).to_contain_text("99")
        assert 'profile="deal 3"' in _status(unit)

        # Another profile, and the luck sliders: a weight moved redraws the chart before
        # anything is sent; Apply sets it on the unit.
        page.select_option("#profile", "dealer")
        page.click("#profile-form button")
        expect(page.locator("#s-profile")).to_have_text("dealer", timeout=WAIT_MS)
        expect(page.locator("#error")).to_be_hidden()
        assert "profile=dealer" in _status(unit)
        page.locator("details:has(#weights) summary").click()  # the sizes' sliders
        before = page.locator("#chart .share").all_text_contents()
        page.locator("#weights input").first.fill("0")
        after = page.locator("#chart .share").all_text_contents()
        assert after[0] == "0%" and after != before
        # Applied once the panel reads the side's luck back, after the `luck set` answered
        # (Apply is disabled from the click on, so its state says nothing of the answer).
        with page.expect_response(lambda r: "/api/luck?side=" in r.url, timeout=WAIT_MS):
            page.click("#luck-apply")
        expect(page.locator("#luck-apply")).to_be_disabled(timeout=WAIT_MS)
        weights = unit.console.ask("config get luck.mild.weights")
        assert re.search(r"luck\.mild\.weights=\[0,", weights), weights

        # The self-test, on a fresh simulated launcher: every part passed, a row each.
        page.click("#selftest")
        expect(page.locator("#unit-say")).to_have_text(
            re.compile(r"Self-test on a fresh simulated launcher: (\d+) of \1 passed\."),
            timeout=WAIT_MS)
        said = page.locator("#unit-say").text_content() or ""
        parts = int(said.split(": ")[1].split()[0])
        expect(page.locator("#selftest-rows tbody tr")).to_have_count(parts)
        assert parts > 0

        # The doctor's report: none kept yet, then the one `launcher doctor --keep` keeps.
        page.click("#doctor")
        expect(page.locator("#error")).to_contain_text("launcher doctor --keep",
                                                       timeout=WAIT_MS)
        keep({"model": "Raspberry Pi 4", "ok": False, "at": "2026-12-06 21:00 UTC",
              "checks": [{"status": "PASS", "item": "board", "detail": "Pi 4", "fix": None},
                         {"status": "FAIL", "item": "service user",
                          "detail": "launcher is not in gpio",
                          "fix": "sudo usermod -aG gpio launcher"}]},
             tmp_path / "xdg" / "launcher" / "doctor.json")
        page.click("#doctor")
        expect(page.locator("#unit-say")).to_have_text(
            "Doctor, 2026-12-06 21:00 UTC: 1 passed, 0 warned, 1 failed of 2.", timeout=WAIT_MS)
        expect(page.locator("#doctor-rows")).to_contain_text("sudo usermod -aG gpio launcher")

        assert not problems, problems
        assert unit.proc.poll() is None  # the unit ran the whole time
