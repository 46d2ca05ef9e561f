"""One truth for the builder: every part named in the hardware pages, the wiring diagram and
the README is a part of the circuit's description (hal/circuit.py, its BOM lines in
hal/circuit_docs.py), and the README's price is the BOM's total."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from hal.circuit import DRIVERS, POWER_CONTACT, Build, Part, circuit, default_pins, wired_pins
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


# --- the references: R9, S3, SW1 are the circuit's parts, called what the circuit calls them

# The words that say what kind of part a reference is; next to a reference, a page may use
# only those its part's own description (name, value, BOM line) uses too.
KIND_WORDS = ("power contact", "push button", "SPDT", "microswitch", "pull-up", "pull-down",
              "Hall switch", "MOSFET", "one-shot", "TVS", "polyfuse", "capacitor", "diode",
              "speaker", "amplifier")
NEAR = 3  # words between a reference and a word said of it
# Words of a reference's shape that are not parts, each where and why it may be written.
NOT_REFERENCES = {
    "B10": "ISO 13849-1's B10 (the operations until 10 % of a part fail), in SAFETY.md",
}


def circuit_parts() -> dict[str, list[Part]]:
    """Each reference of the circuit, with its part in every build (R4 is BIN1's pull-down
    on the driver's channel and the gate's on the MOSFET)."""
    parts: dict[str, list[Part]] = {}
    for pins in (default_pins(), wired_pins()):
        for driver in DRIVERS:
            for rotator in ("bridge", "mosfet"):
                for part in circuit(pins, Build(driver, rotator)).parts.values():
                    parts.setdefault(part.ref, []).append(part)
    return parts


def own_words(part: Part) -> str:
    line = next((b for b in BOM if b.key == part.bom), None)
    return " ".join([part.name, part.value, *((line.item, line.example) if line else ())])


def reference_pattern(refs: Iterable[str]) -> re.Pattern[str]:
    """A reference of the circuit's shape (its prefixes, a number), not a pin (S1.NO), not
    inside a word (I2C1, GPIO22), nor a drawing's path (M1098)."""
    prefixes = sorted({re.match(r"[A-Z]+", r).group(0) for r in refs}, key=len, reverse=True)
    alternatives = "|".join(prefixes)
    return re.compile(rf"(?<![\w.-])(?:{alternatives})\d{{1,2}}(?![\w-]|\.\w)")


def passages(page: Path) -> list[str]:
    """What a reader reads: a page's paragraphs and table cells; the drawing's texts and the
    comments that say what each group draws."""
    text = page.read_text(encoding="utf-8")
    if page.suffix == ".svg":
        found = re.findall(r"<text\b[^>]*>(.*?)</text>|<!--(.*?)-->", text, re.S)
        chunks = [re.sub(r"<[^>]+>", "", a or b) for a, b in found]
    else:
        chunks = [c for para in re.split(r"\n\s*\n", text) for c in para.split("|")]
    return [" ".join(c.split()) for c in chunks]


def said_of_references(text: str, pattern: re.Pattern[str]) -> Iterator[tuple[str, str]]:
    """(reference, word) for each kind word and part number within ``NEAR`` words of a
    reference, in its clause, with no other reference between them; a word before it with
    no comma between ("the lid power contact SW1"; in "S4 an X-10GW, S1 an SS-01GL" the
    X-10GW is S4's)."""
    words = re.compile("|".join([*(re.escape(w) for w in KIND_WORDS), PART_NUMBER.pattern]),
                       re.I)
    # A clause ends at a sentence's end, a semicolon, and a colon other than a label's
    # ("SW2: the lid's sensing SPDT" says what SW2 is; "on its own MOSFET: R3" does not).
    for clause in re.split(r";|[.!?](?=\s|$)|(?<!\d):", text):
        refs = list(pattern.finditer(clause))
        for w in words.finditer(clause):
            for r in refs:
                before = w.start() < r.start()
                between = clause[w.end():r.start()] if before else clause[r.end():w.start()]
                if len(re.findall(r"[\w'’-]+", between)) <= NEAR \
                        and not pattern.search(between) and not (before and "," in between):
                    yield r.group(0), w.group(0)


def test_every_reference_on_a_page_is_a_part_of_the_circuit_as_it_calls_it():
    """wiring.svg called the lid power contact SW1 (the push button), the sensing SPDT SW2
    (the battery box's switch) and the full-open microswitch SW3 (no part)."""
    parts = circuit_parts()
    pattern = reference_pattern(parts)
    wrong = []
    for page in PAGES:
        for text in passages(page):
            for m in pattern.finditer(text):
                if m.group(0) not in parts and m.group(0) not in NOT_REFERENCES:
                    wrong.append(f"{page.name}: {m.group(0)} is no part: {text[:80]}")
            for ref, word in said_of_references(text, pattern):
                if ref in parts and not any(word.lower() in own_words(p).lower()
                                            for p in parts[ref]):
                    wrong.append(f"{page.name}: {ref} is '{parts[ref][0].name}', "
                                 f"no {word}: {text[:80]}")
    assert not wrong, "\n".join(wrong)


def test_the_reference_check_sees_a_part_called_by_another_name():
    parts = circuit_parts()
    pattern = reference_pattern(parts)
    assert set(said_of_references("through the lid power contact SW1", pattern)) \
        == {("SW1", "power contact")}
    assert set(said_of_references("S3 lid power contact (X-10GW), in series; S1 (gold, "
                                  "SS-01GL)", pattern)) \
        == {("S3", "power contact"), ("S3", "X-10GW"), ("S1", "SS-01GL")}
    assert set(said_of_references("SW2: the lid's sensing SPDT", pattern)) == {("SW2", "SPDT")}
    assert set(said_of_references("S3 and S4 an X-10GW, S1 and S2 an SS-01GL", pattern)) \
        == {("S4", "X-10GW"), ("S2", "SS-01GL")}
    assert set(said_of_references("the rotator on its own MOSFET: R3 (pull-down", pattern)) \
        == {("R3", "pull-down")}
    assert [m.group(0) for m in pattern.finditer("S1.NO, GPIO22, I2C1, M1098 R9 (J8)")] \
        == ["R9"]


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
