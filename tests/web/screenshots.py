"""The README's pictures of the web panel: docs/img/web-phone.png (390x844) and
docs/img/web-desktop.png (1280x800), taken from `launcher run --simulated --web` in
Debian's chromium, after pairing by the button and a few presses.

    .venv/bin/python tests/web/screenshots.py [--out DIR]

The browser test does not write them (a test leaves the checkout as it was); this does.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from panel_rig import (
    DESKTOP,
    PHONE,
    WAIT_MS,
    browser,
    missing,
    pair_by_holding_the_button,
    simulated_unit,
)

IMG = Path(__file__).parents[2] / "docs" / "img"


def take(out: Path) -> list[Path]:
    """Writes the two pictures into ``out``; their paths."""
    from playwright.sync_api import expect

    made = []
    with tempfile.TemporaryDirectory() as tmp, simulated_unit(Path(tmp), seed=3) as unit, \
            browser(Path(tmp) / "chromium", PHONE) as context:
        page = context.new_page()
        page.goto(unit.url)
        pair_by_holding_the_button(page, unit)
        expect(page.locator("#link")).to_have_text("live", timeout=WAIT_MS)
        # A game under way: a few presses, each after the last one's shot has ended.
        page.select_option("#profile", "deal")
        page.fill("#deal-n", "3")
        page.click("#profile-form button")
        expect(page.locator("#s-profile")).to_have_text("deal 3", timeout=WAIT_MS)
        for left in ("81", "78"):
            page.click("#press")
            expect(page.locator("#s-inventory")).to_have_text(left, timeout=WAIT_MS)
            expect(page.locator("#s-state")).to_have_text("ready", timeout=WAIT_MS)
        page.select_option("#profile", "flip-attack")
        page.click("#profile-form button")
        expect(page.locator("#s-profile")).to_have_text("flip-attack", timeout=WAIT_MS)
        for name, size in (("web-phone.png", PHONE), ("web-desktop.png", DESKTOP)):
            page.set_viewport_size(size)
            path = out / name
            page.screenshot(path=str(path))
            made.append(path)
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=IMG, help=f"folder (default {IMG})")
    args = parser.parse_args(argv)
    why = missing()
    if why:
        print(f"screenshots: {why}", file=sys.stderr)
        return 2
    for path in take(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
