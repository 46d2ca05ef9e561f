"""hardware/wiring.svg is legible: every header row has its dot, no label's box covers
another's, and a label's text fits its box (issue 44: pin 3's `rotator_contact_sense` read
`rotator_contact_s` under `motor_in1`'s box, and its row had no dot)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

SVG = Path(__file__).resolve().parents[2] / "hardware" / "wiring.svg"
NS = "{http://www.w3.org/2000/svg}"
FLAG_FONT = 11.0  # px: `.flag text` in the drawing's style
BOLD_WIDTH = 0.62  # a bold sans-serif glyph's mean width, in ems (DejaVu Sans Bold: 0.6-0.65)


def _root() -> ET.Element:
    return ET.parse(SVG).getroot()


def _flags() -> list[tuple[str, tuple[float, float, float, float], float]]:
    """Each label box: its text, its rectangle (x0, y0, x1, y1) and the text's width."""
    out = []
    for g in _root().iter(f"{NS}g"):
        if "flag" not in g.get("class", "").split():
            continue
        rect, text = g.find(f"{NS}rect"), g.find(f"{NS}text")
        x, y = float(rect.get("x")), float(rect.get("y"))
        box = (x, y, x + float(rect.get("width")), y + float(rect.get("height")))
        size = re.search(r"font-size:\s*([\d.]+)px", text.get("style", ""))
        font = float(size.group(1)) if size else FLAG_FONT
        width = (float(text.get("textLength")) if text.get("textLength")
                 else len(text.text) * font * BOLD_WIDTH)
        out.append((text.text, box, float(text.get("x")) - x + width))
    return out


def test_every_header_row_has_its_dot():
    root = _root()
    rows = [float(t.get("y")) for g in root.iter(f"{NS}g") if g.get("class") == "pin"
            for t in g.findall(f"{NS}text") if t.get("x") == "45"]  # the header's rows
    dots = {float(c.get("cy")) for g in root.iter(f"{NS}g") if g.get("class") == "dot"
            for c in g.findall(f"{NS}circle") if c.get("cx") == "340"}
    assert rows and all(y - 4 in dots for y in rows), sorted(y for y in rows if y - 4 not in dots)


def test_no_label_box_covers_another():
    flags = _flags()
    for i, (a, (ax0, ay0, ax1, ay1), _) in enumerate(flags):
        for b, (bx0, by0, bx1, by1), _ in flags[i + 1:]:
            apart = ax1 <= bx0 or bx1 <= ax0 or ay1 <= by0 or by1 <= ay0
            assert apart, f"the boxes of {a!r} and {b!r} overlap"


def test_every_label_fits_its_box():
    for text, (x0, _, x1, _), needs in _flags():
        assert needs <= x1 - x0, f"{text!r} needs {needs:.0f} px, its box is {x1 - x0:.0f}"


def test_the_beams_pull_up_is_fitted_always_as_the_circuit_has_it():
    """fitting.md and wiring.svg said "only for leads over 20 cm"; pinout.md, the BOM and
    the circuit fit it always."""
    from hal.circuit import circuit, wired_pins

    parts = circuit(wired_pins()).parts
    assert parts["R9"].name == "pull-up on the beam receiver"
    pages = [SVG.read_text(encoding="utf-8"),
             (SVG.parent / "fitting.md").read_text(encoding="utf-8")]
    for text in pages:
        assert not re.search(r"pull-up[^.]{0,40}(for|on) (long )?leads|leads (over|longer "
                             r"than)[^.]{0,20}20 cm", text)
        assert "pull-up (R9)" in text or "pull-up** (R9)" in text


def test_the_toys_cover_switch_is_replaced_by_the_rated_power_contact():
    """fitting.md said both "keep it there" and "a new switch where the toy's cover switch
    is": the circuit's S3 is the rated X-10GW in the roller's lead."""
    from hal.circuit import circuit, wired_pins

    s3 = circuit(wired_pins()).parts["S3"]
    assert s3.bom == "power_contact" and "roller" in s3.name
    fitting = (SVG.parent / "fitting.md").read_text(encoding="utf-8")
    assert "Keep it there" not in fitting
    assert "(S3, an X-10GW) replaces it" in fitting
