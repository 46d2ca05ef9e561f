"""Detection is claimed only where a campaign shows it: every fault code hardware/*.md says
the unit reports, and every copper fault the firmware can raise, is one that rows of the
kept circuit campaign (docs/results/circuit_faults.json) report; a cause a fault message
names is one that campaign finds under that code."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from launcher.core import machine as m

ROOT = Path(__file__).resolve().parents[2]
CIRCUIT = json.loads((ROOT / "docs" / "results" / "circuit_faults.json").read_text())
LAYERS = json.loads((ROOT / "docs" / "results" / "layer_faults.json").read_text())
REPORTED = {code for row in CIRCUIT["rows"] for code in row["reported"]}
# The layer campaign ends every injected exception and dead thread in ``internal`` (its
# verdict is "held" only then: bench/faults.py); the jam, the overrun and the turn's timeout
# are the machine's own timers (tests/core/test_machine.py), not faults of the copper.
ORDINARY = {"internal", "jam", "overrun", "rotation_timeout", "interlock"}
CODE = re.compile(r"`(" + "|".join(m.FAULT_BLINKS) + r")`")


def copper_messages() -> dict[str, str]:
    """Each copper fault code the actuators' read-backs raise, with every message they raise
    it with."""
    tree = ast.parse((ROOT / "launcher" / "firmware" / "copper.py").read_text())
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "report" and isinstance(node.args[0], ast.Constant)):
            text = " ".join(c.value for arg in node.args[1:] for c in ast.walk(arg)
                            if isinstance(c, ast.Constant) and isinstance(c.value, str))
            code = node.args[0].value
            out[code] = out.get(code, "") + " " + text
    return out


def test_every_fault_code_the_hardware_docs_name_is_one_the_campaigns_report():
    assert LAYERS["held"] == LAYERS["injected"]  # every layer fault ended as it should
    for page in sorted((ROOT / "hardware").glob("*.md")):
        for code in set(CODE.findall(page.read_text(encoding="utf-8"))):
            assert code in REPORTED or code in ORDINARY, (
                f"{page.name} names `{code}`, which no row of the circuit campaign reports")


def test_every_copper_fault_the_firmware_raises_is_reported_by_the_campaign():
    messages = copper_messages()
    assert set(messages) == {"driver_sleep", "power_contact", "driver_input"}
    for code in messages:
        assert code in REPORTED and code in m.PROOFS  # reported, and latched


def test_a_cause_a_fault_message_names_is_found_under_that_code():
    """A breakout's pull-up on nSLEEP: the campaign's rows for it report nothing (the Pi's
    pin, driving low, wins), so no driver_sleep message may name it as a cause."""
    rows = [r for r in CIRCUIT["rows"] if "nsleep pulled up" in r["fault"]]
    assert rows, "the campaign enumerates a breakout's pull-up on nSLEEP"
    seen = any("driver_sleep" in r["reported"] for r in rows)
    for code, text in copper_messages().items():
        if "pull-up" in text:
            assert code == "driver_sleep" and seen, f"{code}'s message names a pull-up: {text}"
