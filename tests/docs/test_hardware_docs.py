"""The hardware folder agrees with the firmware: pins, header positions, wiring, BOM, links."""

from __future__ import annotations

import re
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from gpiozero import pi_info

from hal.base import Pins
from hal.pins import reserved_pins

ROOT = Path(__file__).resolve().parents[2]
HARDWARE = ROOT / "hardware"
CONFIG_PINS: dict[str, int] = tomllib.loads(
    (ROOT / "launcher" / "default.toml").read_text(encoding="utf-8"))["pins"]
NOT_WIRED = -1
# The parts every launcher has: "## Launcher parts" in pinout.md.
DEFAULT_PINS = {k: v for k, v in CONFIG_PINS.items() if v != NOT_WIRED}
# Off by default: "## Optional pins", each with the pin it is suggested to go on.
OPTIONAL_KEYS = sorted(k for k, v in CONFIG_PINS.items() if v == NOT_WIRED)
DOC_OPTIONAL_KEYS = OPTIONAL_KEYS
ALL_KEYS = sorted(CONFIG_PINS)
# Any 40-pin Pi: the header is the same on all of them (a Pi 4 B's board data here).
J8 = pi_info("c03114").headers["J8"].pins
GPIO_AT = {info.name: number for number, info in J8.items() if info.name.startswith("GPIO")}
SVG = "{http://www.w3.org/2000/svg}"
SUPPLIES = {"3.3 V": "3V3", "5 V": "5V", "GND": "GND"}


def table_rows(path: Path, heading: str) -> list[list[str]]:
    """The body rows of the first markdown table under ``## heading``."""
    text = path.read_text(encoding="utf-8")
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    assert len(rows) > 2, f"no table under '## {heading}' in {path.name}"
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def pinout_table() -> dict[str, tuple[int, int]]:
    """config key -> (BCM, header pin) from hardware/pinout.md."""
    out: dict[str, tuple[int, int]] = {}
    for row in table_rows(HARDWARE / "pinout.md", "Launcher parts"):
        key = re.fullmatch(r"`pins\.(\w+)`", row[1])
        assert key, f"pinout row without a `pins.KEY`: {row}"
        assert key.group(1) not in out, f"pins.{key.group(1)} listed twice"
        out[key.group(1)] = (int(row[2]), int(row[3]))
    return out


def optional_table() -> dict[str, tuple[int, int, int]]:
    """config key -> (default, suggested BCM, header pin) from "## Optional pins"."""
    out: dict[str, tuple[int, int, int]] = {}
    for row in table_rows(HARDWARE / "pinout.md", "Optional pins"):
        key = re.fullmatch(r"`pins\.(\w+)`", row[1])
        assert key, f"optional pin row without a `pins.KEY`: {row}"
        assert key.group(1) not in out, f"pins.{key.group(1)} listed twice"
        out[key.group(1)] = (int(row[2]), int(row[3]), int(row[4]))
    return out


def wired_pins() -> dict[str, tuple[int, int]]:
    """Every config key -> (BCM, header pin) as wired in the docs: an optional pin on its
    suggested GPIO."""
    optional = {k: (bcm, header) for k, (_, bcm, header) in optional_table().items()}
    assert not optional.keys() & pinout_table().keys(), "a pin in both tables"
    return {**pinout_table(), **optional}


def test_pinout_lists_exactly_the_default_config_pins():
    assert {k: bcm for k, (bcm, _) in pinout_table().items()} == DEFAULT_PINS


def test_optional_pins_are_exactly_the_ones_off_by_default():
    assert OPTIONAL_KEYS, "default.toml has no pin at -1: drop the optional table"
    table = optional_table()
    assert sorted(table) == DOC_OPTIONAL_KEYS
    for key, (default, _, _) in table.items():
        assert default == NOT_WIRED, f"pins.{key}: default {default}"
        assert CONFIG_PINS[key] == NOT_WIRED, f"pins.{key}: default {CONFIG_PINS[key]}"
        # -1 must be a value the firmware accepts for it.
        assert key in Pins.OPTIONAL, f"pins.{key} is -1 by default but not optional in hal"


@pytest.mark.parametrize("key", DOC_OPTIONAL_KEYS)
def test_suggested_pin_is_free(key):
    _, bcm, _ = optional_table()[key]
    taken = reserved_pins(i2s=True, uart=True, i2s_input=True)
    assert bcm not in taken, f"pins.{key}: GPIO {bcm} is {taken.get(bcm)}"
    others = {k: v for k, v in wired_pins().items() if k != key}
    assert bcm not in {b for b, _ in others.values()}, f"pins.{key}: GPIO {bcm} is in use"


@pytest.mark.parametrize("key", ALL_KEYS)
def test_header_pin_is_where_that_gpio_is(key):
    bcm, header = wired_pins()[key]
    assert GPIO_AT[f"GPIO{bcm}"] == header


def test_fixed_functions_are_at_their_header_pins():
    for row in table_rows(HARDWARE / "pinout.md", "Fixed functions"):
        if row[1] == "–":  # a supply: every pin listed must be that supply
            names = {J8[int(n)].name for n in row[2].split(", ")}
            assert names == {SUPPLIES[row[0]]}, f"{row[0]}: pins {row[2]} are {names}"
            continue
        assert GPIO_AT[f"GPIO{row[1]}"] == int(row[2]), row


def test_default_pins_keep_off_i2s_and_the_uart():
    reserved = {18, 19, 21, 14, 15}
    assert not reserved & set(DEFAULT_PINS.values())
    assert not reserved_pins(i2s=True, uart=True).keys() & set(DEFAULT_PINS.values())


def svg_texts() -> list[str]:
    tree = ET.parse(HARDWARE / "wiring.svg")
    # Pieces of one label (tspans) are separate words.
    return [" ".join(" ".join(t.itertext()).split()) for t in tree.iter(f"{SVG}text")]


def test_wiring_diagram_labels_every_pin_with_its_gpio():
    texts = svg_texts()
    for key, (bcm, header) in wired_pins().items():
        row = f"{header} GPIO{bcm} {key}"
        assert row in texts, f"wiring.svg has no header row '{row}'"


def test_every_pin_flag_in_the_diagram_reaches_a_part():
    """A net flag at the header and at least one more where the part is wired."""
    texts = svg_texts()
    for key in ALL_KEYS:
        assert texts.count(key) >= 2, f"wiring.svg: {key} is not wired to any part"


def test_wiring_diagram_says_how_to_wire_without_an_optional_pin():
    text = " ".join(svg_texts())
    assert "BIN2 to GND if rotator_in2 = -1" in text


def test_wiring_diagram_shows_the_safety_parts():
    text = " ".join(svg_texts())
    for needed in ("DRV8833", "TB6612FNG", "MAX98357A", "1N5819", "Pull-downs", "4.7k",
                   "10k", "Motor supply (separate from the Pi)", "470 µF", "break-beam",
                   "Hall switch", "microswitch", "status LED", "2 A fuse",
                   "lid power contact", "SS-01GL", "X-10G", "2.2k", "100 nF VCC–GND",
                   "TPUL2G123", "no-sdmode", "TVS", "full-open power", "Read-backs",
                   "AO3400A", "1M", "PC_DRV", "PC_MOT"):
        assert needed in text, f"wiring.svg does not show {needed}"


def test_bom_lines_and_total_add_up():
    total = 0.0
    text = (HARDWARE / "bom.md").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if re.match(r"\| \d+ \|", line)]
    assert len(lines) >= 15
    for line in lines:
        cells = [c.strip() for c in line.strip("|").split("|")]
        qty, unit, amount = int(cells[3]), float(cells[4]), float(cells[5])
        assert qty * unit == pytest.approx(amount), f"BOM line {cells[0]}: {qty} × {unit}"
        total += amount
    stated = re.search(r"Total: about ([\d.]+) USD", text)
    assert stated and float(stated.group(1)) == pytest.approx(total)


DOCS = [*sorted(HARDWARE.glob("*.md")), ROOT / "README.md",
        ROOT / "systemd" / "README.md"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc):
    links = re.findall(r"\]\(([^)#\s]+)\)", doc.read_text(encoding="utf-8"))
    for link in links:
        if "://" in link:
            continue
        assert (doc.parent / link).exists(), f"{doc.name}: broken link {link}"


def test_power_notes_cover_what_the_issue_asks():
    text = (HARDWARE / "power.md").read_text(encoding="utf-8")
    for needed in ("separate", "flyback", "brown-out", "pull-down", "safe-stop",
                   "interlock", "sleeps when idle", "dead-man"):
        assert needed.lower() in text.lower(), f"power.md says nothing about {needed}"
