"""One truth for the builder: every part named in the hardware pages, the wiring diagram and
the README is a part of the circuit's description (hal/circuit.py, its BOM lines in
hal/circuit_docs.py), and the README's price is the BOM's total."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hal.circuit import POWER_CONTACT, Build, circuit, wired_pins
from hal.circuit_docs import BOM, bom_totals

ROOT = Path(__file__).resolve().parents[2]
PAGES = [*sorted((ROOT / "hardware").glob("*.md")), ROOT / "hardware" / "wiring.svg",
         ROOT / "README.md"]
# Part numbers of the families the launcher uses (switches, driver, amplifier, sensors,
# MOSFET, diodes, fuse, one-shot): a name of one of them anywhere must be the circuit's.
PART_NUMBER = re.compile(r"\b(?:SS-\d+[A-Z]*|X-\d+[A-Z]*|AO\d{4}[A-Z]?|DRV\d{4}[A-Z]?|"
                         r"TB\d{4}[A-Z]+|MAX\d{5}[A-Z]?|AH\d{4}|TPUL\d?G\d+|"
                         r"SMBJ\d+(?:\.\d)?C?A|1N\d{4}|RXEF\d+)\b")


# Names that are not parts to fit, each where and why it may be written.
NOT_PARTS = {
    "SS-01": "the series of SS-01GL, in SAFETY.md's legend of Omron's model numbers",
    "SS-5": "the series of SS-5GL (the switch not to use), in the same legend",
    "AO3401A": "power.md: the P-channel MOSFET a high-side read-back would need, and why not",
}


def catalogue() -> set[str]:
    """Every part number the circuit's description names: its parts' values, and its BOM
    lines (what to buy, and what not to buy instead)."""
    names: set[str] = set()
    for build in (Build(), Build(rotator="mosfet")):
        for part in circuit(wired_pins(), build).parts.values():
            names.update(PART_NUMBER.findall(part.value))
    for line in BOM:
        names.update(PART_NUMBER.findall(f"{line.item} {line.example}"))
    names.update(PART_NUMBER.findall(POWER_CONTACT.part))
    return names


def test_the_catalogue_names_the_lid_switches_once_each():
    names = catalogue()
    assert {"SS-01GL", "X-10GW"} <= names
    assert "X-10G" not in names | set(NOT_PARTS)  # the series; the part: the hinge-lever X-10GW


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_part_named_on_a_page_is_a_part_of_the_circuit(page: Path):
    names = catalogue()
    text = page.read_text(encoding="utf-8")
    unknown = sorted({m.group(0) for m in PART_NUMBER.finditer(text)} - names - set(NOT_PARTS))
    assert not unknown, f"{page.name} names parts the circuit does not: {unknown}"


def test_the_readme_price_is_the_boms_total():
    total, extra = bom_totals()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    bom = (ROOT / "hardware" / "bom.md").read_text(encoding="utf-8")
    assert f"**Total: about {total:.2f} USD**" in bom
    prices = re.findall(r"\bAbout (\d+(?:\.\d+)?) USD", readme)
    assert prices == [f"{total:.2f}"], prices
    assert f"{total - extra:.2f} USD without the optional dead-man parts" in readme


# --- the tools: each step names what it needs, the README lists their union ---------------

# A word of a step, and the tool of docs/blocks.py's TOOLS it means.
INSTRUMENTS = {"multimeter": "multimeter", "bench supply": "bench supply",
               "logic analyser": "scope or logic analyser", "scope": "scope or logic analyser",
               "solder": "soldering iron", "hot glue": "hot glue"}


def _blocks():
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("doc_blocks", ROOT / "docs" / "blocks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _needs(text: str, blocks) -> set[str]:
    return {n for m in blocks.NEEDS.finditer(text)
            for n in " ".join(m.group(1).split()).split(", ")}


@pytest.mark.parametrize("page", ["hardware/bring-up.md", "hardware/fitting.md"])
def test_every_step_that_uses_an_instrument_names_it(page: str):
    blocks = _blocks()
    text = (ROOT / page).read_text(encoding="utf-8")
    missing = []
    for section in text.split("\n## "):
        head = section.split("\n\n", 2)
        ambient = _needs(head[1], blocks) if len(head) > 1 else set()  # the section's own
        for step in re.split(r"\n(?=- |\d+\. )|\n\n", section):
            said = ambient | _needs(step, blocks)
            for word, tool in INSTRUMENTS.items():
                # A table row or a heading is no step (the records, the section titles).
                if word in step.lower() and tool not in said \
                        and not step.lstrip().startswith(("|", "#")):
                    missing.append(f"{tool}: {step.strip()[:70]}")
    assert not missing, missing


def test_the_readme_tools_are_the_union_of_what_the_steps_need():
    blocks = _blocks()
    used = set(blocks.needed_tools())
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(x for x in readme.splitlines() if x.startswith("- Tools: "))
    assert line + "\n" == blocks.tools_text()
    for name, words in blocks.TOOLS.items():
        assert (words in line) == (name in used), name
    assert {"multimeter", "bench supply", "scope or logic analyser",
            "USB-serial adapter"} <= used
