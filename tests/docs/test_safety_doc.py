"""The hardware docs describe a launcher that is safe against single faults: two lid
interlocks (one in copper), a driver that sleeps, no crash claims for pull-downs, and a
single-fault table with a row for every fault the review named."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HW = ROOT / "hardware"
SVG = "{http://www.w3.org/2000/svg}"


def _text(name: str) -> str:
    return " ".join((HW / name).read_text(encoding="utf-8").split())


def _svg_text() -> str:
    tree = ET.parse(HW / "wiring.svg")
    return " ".join(" ".join(" ".join(t.itertext()).split()) for t in tree.iter(f"{SVG}text"))


def _bom_lines() -> list[list[str]]:
    text = (HW / "bom.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if re.match(r"\| \d+ \|", line)]
    return [[c.strip() for c in row.strip("|").split("|")] for row in rows]


def _safety_rows() -> list[list[str]]:
    text = (HW / "SAFETY.md").read_text(encoding="utf-8")
    section = text.split("## The table\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    header = [c.strip() for c in rows[0].strip("|").split("|")]
    assert header == ["fault", "what stops the roller", "what stops the rotator",
                      "by which means", "in how long"]
    return [[c.strip() for c in row.strip("|").split("|")] for row in rows[2:]]


# --- the BOM and the wiring carry both interlocks ---------------------------------------

def test_the_bom_lists_the_power_contacts_in_the_motors_leads():
    lines = [row for row in _bom_lines() if row[1].startswith("power contacts")]
    assert len(lines) == 1, "one BOM line for the lid's power contacts"
    part, number, qty = lines[0][1], lines[0][2], int(lines[0][3])
    assert "in the roller's lead" in part and "in the rotator's lead" in part and qty == 2
    assert "published DC rating" in part and "own actuator" in part
    # A part with a published DC rating, not the SS-5GL (its catalogue has none for a motor).
    assert "X-10G" in number and "8 VDC" in number and "SS-5GL" not in number


def test_the_bom_lists_the_gold_contact_sensing_switch():
    lines = [row for row in _bom_lines() if "SS-01GL" in row[2]]
    assert len(lines) == 1
    assert "gold" in lines[0][1] and "sensing" in lines[0][1]
    assert "NC" in lines[0][1], "the sensing switch's NC contact is wired too"
    # The silver-contact SS-5GL is never offered for sensing.
    assert not any("SS-5GL" in row[2] and "sensing" in row[1] for row in _bom_lines()
                   if "not the silver" not in row[2])


def test_the_bom_has_the_optional_dead_man_parts_and_its_subtotal_is_right():
    rows = _bom_lines()
    optional = [row for row in rows if row[1].startswith("optional dead-man")]
    assert optional and any("TPUL2G123" in row[2] for row in optional)
    text = (HW / "bom.md").read_text(encoding="utf-8")
    total = sum(float(row[5]) for row in rows)
    extra = sum(float(row[5]) for row in optional)
    stated = re.search(r"Total: about ([\d.]+) USD\*\*.*?\(lines (\d+)–(\d+),\s+([\d.]+)\s+USD\)"
                       r"\s+included: about ([\d.]+)\s+USD without them", text, re.S)
    assert stated, "bom.md states the total, the optional lines and the total without them"
    first, last = int(stated.group(2)), int(stated.group(3))
    assert [int(row[0]) for row in optional] == list(range(first, last + 1))
    assert float(stated.group(1)) == pytest.approx(total)
    assert float(stated.group(4)) == pytest.approx(extra)
    assert float(stated.group(5)) == pytest.approx(total - extra)


def test_the_wiring_diagram_names_the_series_contact_and_the_sensing_pair():
    text = _svg_text()
    assert "lid power contact (X-10GW), in series with the roller" in text
    assert "S1 lid sensing microswitch, SPDT, gold" in text
    assert "lid_closed_nc" in text and "NO and NC must disagree" in text
    assert "never a power contact on a GPIO" in text and "Mount them apart" in text
    assert "through S4, the full-open power contact" in text


def test_fitting_no_longer_sends_the_cover_switch_to_a_gpio():
    fitting = _text("fitting.md")
    assert "reuse it if it closes when the lid is shut" not in fitting
    assert "in series with the roller motor's lead" in fitting
    assert "do not rewire the toy's switch to a GPIO" in fitting


# --- power.md: the sleeping driver, no crash claims for pull-downs ----------------------

def test_power_no_longer_claims_the_pull_downs_cover_a_crash():
    power = _text("power.md")
    assert "the pull-downs cover the time between" not in power
    assert "What pull-downs do not do." in power
    for why in ("pigpiod daemon owns the pins and keeps driving",
                "a released line keeps the level it was driven to",
                "dtparam=strict_gpiod", "a hung kernel keeps every pin"):
        assert why in power, f"power.md does not say why: {why}"
    assert "the pull-downs are not what stops the roller" in power


def test_power_describes_the_sleeping_driver_with_its_wake_time():
    power = _text("power.md")
    assert "nSLEEP is high only while the roller runs or brakes" in power
    assert "`motor.brake_ms` (150 ms), then coasts (IN1 = IN2 = 0) and drops nSLEEP" in power
    assert "up to 1 ms" in power and "tWAKE" in power and "SLVSAR1E §7.3.4" in power


def test_the_dead_man_design_gives_values_formulas_and_levels():
    power = _text("power.md")
    section = power.split("## Optional: the dead-man enable", 1)[1].split("## Brown-out", 1)[0]
    for needed in ("t_w ≈ Rext × Cext", "39 kΩ × 1 µF = **39 ms**", "Hold:", "Fall:",
                   "13 and 45 ms", "VIL ≤ 0.5 V", "VIH ≥ 2.5 V", "500 kΩ", "CLR",
                   "Why not a diode charge pump"):
        assert needed in section, f"the dead-man section lacks {needed!r}"


# --- the pin clash: GPIO 4 is the max98357a overlay's SD_MODE pin ------------------------

GPIO4 = re.compile(r"GPIO ?4\b")


def _paragraphs() -> list[tuple[str, str]]:
    out = []
    for doc in [*sorted(HW.glob("*.md")), ROOT / "README.md"]:
        for block in re.split(r"\n\s*\n", doc.read_text(encoding="utf-8")):
            # A table row, a list item and a checklist box are each a paragraph of their own.
            parts = re.split(r"\n(?=\s*(?:- |\| |\d+\. ))", block)
            out += [(doc.name, part) for part in parts]
    out += [("wiring.svg", _svg_text())]
    return out


def test_no_document_puts_rotator_in2_on_gpio4_without_no_sdmode():
    for name, para in _paragraphs():
        if name == "wiring.svg":
            continue
        # rotator_in2 and GPIO 4 in one sentence: the paragraph must say no-sdmode.
        sentences = [para] if para.lstrip().startswith("|") else re.split(r"(?<=\.)\s+", para)
        for sentence in sentences:
            if "rotator_in2" in sentence and GPIO4.search(sentence):
                assert "no-sdmode" in para, f"{name}: rotator_in2 on GPIO 4: {sentence[:120]}"
    assert "7 GPIO4 rotator_in2" not in _svg_text()
    pinout = _text("pinout.md")
    row = re.search(r"\| `pins\.rotator_in2` \| -1 \| (\d+) \|", pinout)
    assert row and int(row.group(1)) != 4


def test_whatever_sits_on_gpio4_is_documented_with_no_sdmode():
    pinout = _text("pinout.md")
    row = re.search(r"\| `pins\.(\w+)` \| -1 \| 4 \| 7 \|[^\n]*", pinout)
    if row:
        assert "no-sdmode" in row.group(0)


# --- SAFETY.md: one row per single fault ------------------------------------------------

# The faults outside the copper: rows typed in SAFETY.md's table, each with its measurement.
FAULTS = {
    "firmware hung": r"firmware hung .*reactor",
    "firmware stopped": r"firmware process stopped .*SIGSTOP",
    "firmware crashed": r"firmware crashed .*kill -9.*last level",
    "pigpiod hung": r"^pigpiod hung",
    "kernel hung": r"^kernel hung",
    "Pi rebooting": r"the Pi rebooting",
    "callback thread raises": r"exception on the pin library's callback thread",
    "guard thread raises": r"exception on the guard thread",
    "guard thread ends": r"the guard thread ends",
    "callback thread ends": r"callback thread ends, or an edge is lost",
}
# The single faults of the old hand-typed table, and those the review found missing: each
# is now a row of the circuit campaign's generated tables (both wirings), which held.
CIRCUIT_FAULTS = {
    "IN1 wire off": r"^motor_in1 open between",
    "IN2 wire off": r"^motor_in2 open between",
    "nSLEEP wire off": r"^(motor_sleep|nsleep) open between",
    "BIN1 wire off": r"^rotator open between",
    "sensing NO shorted": r"^lid_closed shorted to GND",
    "sensing NO open": r"^lid_closed open between",
    "sensing NC shorted": r"^lid_closed_nc shorted to GND",
    "sensing NC open": r"^lid_closed_nc open between",
    "power contact welded": r"^S3 \(.*\): welded",
    "power contact leads pinched": r"^S3 \(.*\): leads pinched",
    "power contact open": r"^S3 \(.*\): open",
    "sensing plunger stuck": r"^S1 \(.*\): plunger stuck",
    "lid_open stuck closed": r"^S2 \(.*\): welded",
    "rotator contact welded": r"^S4 \(.*\): welded",
    "nSLEEP shorted to 3V3": r"^(motor_sleep|nsleep) shorted to 3V3",
    "IN1 stuck high (through a flip)": r"^motor_in1 shorted to 3V3",
    "both levers held": r"^common cause \(lid_lever_held\)",
    "3V3 collapses": r"^the Pi's 3.3 V rail collapses",
    "5V brown-out": r"^the Pi's 5 V browns out",
    "motor pack brown-out": r"^the motor pack sags",
    "GPIO 2 shorted to 5 V": r"^rotator_contact_sense shorted to 5V",
    "the motor supply shorted to 3V3": r"^VM shorted to 3V3",
    "IN1 shorted to VM": r"^motor_in1 shorted to VM",
    "a damaged pin, stuck high": r"^GPIO 12 \(motor_in1\) damaged: stuck high",
    "a damaged pin, stuck low": r"^GPIO 22 \(lid_closed\) damaged: stuck low",
}
# The verdicts a row may have and pass: held, its reason written in the row, or the Pi
# damaged with the motors held (hardware/SAFETY.md, "The Pi damaged").
PASSING = ("held", "one barrier left, its row says why")


def _campaign_rows() -> list[list[str]]:
    text = (HW / "SAFETY.md").read_text(encoding="utf-8")
    section = text.split("## The single faults of the circuit\n", 1)[1]
    return [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| fault |")]


@pytest.mark.parametrize("fault", sorted(CIRCUIT_FAULTS))
def test_safety_has_the_campaigns_rows_for_the_fault(fault):
    rows = [row for row in _campaign_rows() if re.search(CIRCUIT_FAULTS[fault], row[0])]
    assert len(rows) >= 2, f"SAFETY.md: {len(rows)} campaign rows for {fault!r}"
    assert all(len(row) == 6 and (row[5] in PASSING or row[5].startswith(
        ("by construction: ", "Pi damaged: "))) for row in rows), rows


def test_the_shorts_a_real_pi_would_not_survive_are_judged_pi_damaged():
    """VM shorted to 3V3, IN1 shorted to VM and GPIO 2 shorted to 5 V were judged harmless
    before the pads had limits; each row says where the Pi is damaged, on both wirings."""
    for pattern, where in ((r"^VM shorted to 3V3$", "the Pi's 3.3 V rail"),
                           (r"^motor_in1 shorted to VM$", "GPIO 12 (motor_in1)"),
                           (r"^rotator_contact_sense shorted to 5V$", "GPIO 2")):
        rows = [row for row in _campaign_rows() if re.search(pattern, row[0])]
        assert len(rows) == 2 and all(row[5].startswith(f"Pi damaged: {where}")
                                      for row in rows), rows


MEANS = ("copper", "driver pull-down", "driver asleep", "dead-man", "firmware on the pin thread",
         "firmware lease", "firmware check", "systemd watchdog", "SoC watchdog", "safe-stop",
         "driver UVLO", "firmware's brake end", "rotation_timeout_ms")


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_safety_has_a_row_for_the_fault(fault):
    rows = [row for row in _safety_rows() if re.search(FAULTS[fault], row[0])]
    assert len(rows) == 1, f"SAFETY.md: {len(rows)} rows for {fault!r}"
    row = rows[0]
    assert len(row) == 5 and all(row), f"SAFETY.md: an empty cell in the row for {fault!r}"
    assert any(m in row[3] for m in MEANS), f"{fault!r}: by which means? {row[3]}"


MEASURED = r"\[`([a-z0-9_]+)`\]\((#measured-figures|\.\./docs/kernel-tier\.md)\)"


def test_software_times_link_a_measurement_and_copper_times_cite_a_datasheet():
    rows = {row[0]: row for row in _safety_rows()}
    # A row that a firmware layer or the OS stops, and whose time is not a bound set by a
    # config key (`timing.*`, `motor.*`, `rotator.*`) or "never starts", needs a measurement.
    soft = [row for row in rows.values()
            if re.search(r"firmware|safe-stop|watchdog", row[3])
            and "never starts" not in row[4]
            and not re.search(r"`(timing|motor|rotator)\.", row[4])]
    assert soft, "no software rows found"
    for row in soft:  # measured, or saying why it cannot be here (a hung kernel)
        assert re.search(MEASURED, row[4]) or "(not measured: " in row[4], (
            f"{row[0]}: a software time must be measured")
    text = (HW / "SAFETY.md").read_text(encoding="utf-8")
    assert "{{" not in text, "a placeholder is left"
    # Every name linked to the measured figures is a row of that generated table.
    table = text.split("## Measured figures", 1)[1]
    for name, where in re.findall(MEASURED, text):
        if where == "#measured-figures":
            assert f"| `{name}` |" in table, f"{name}: not in the measured figures"
        else:
            kernel = (HW.parent / "docs" / "kernel-tier.md").read_text(encoding="utf-8")
            assert f"`{name}`" in kernel, f"{name}: not in docs/kernel-tier.md"
    assert "SLVSAR1E §6.5" in text and "SLVSAR1E §7.3.5.3" in text


def test_safety_cites_every_datasheet_it_leans_on():
    sources = (HW / "SAFETY.md").read_text(encoding="utf-8").split("## Sources", 1)[1]
    for needed in ("DRV8833", "SLVSAR1E", "TB6612FNG", "Omron", "SS Subminiature",
                   "AH1806", "RXEF", "TPUL2G123", "SCASE77A", "max98357a", "strict_gpiod",
                   "RuntimeWatchdogSec", "WatchdogSec", "UNO Flip Attack"):
        assert needed in sources, f"SAFETY.md sources lack {needed}"


def test_bring_up_proves_the_interlock_before_cards_and_times_the_run_on():
    bring = _text("bring-up.md")
    assert "## Prove the interlock, before any card is loaded" in bring
    assert "with the firmware's check bypassed" in bring
    assert "the roller stops at once though the driver still drives" in bring
    # The copper test needs nothing turned off: the NC twin stays wired through it.
    assert "lid_closed_nc = -1" not in bring and "pins.lid_closed_nc -1" not in bring
    assert "says \"shut\" on both wires" in bring
    assert "current-limited" in bring and "`pins`" in bring
    assert "kill -STOP" in bring and "Run-on after a stop, timed" in bring
    for rating in ("1.5 A RMS and 2 A peak", "1.2 A average and 3.2 A peak"):
        assert rating in bring
    # The interlock proof comes before the self-test, which loads cards.
    assert bring.index("Prove the interlock") < bring.index("## The self-test")
