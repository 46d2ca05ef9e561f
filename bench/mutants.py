"""The circuit campaign judged: each of the firmware's safeguards switched off in turn (by
patching here, in the bench, never by a hook in the firmware), and the campaign run on the
result. A safeguard the campaign does not miss when it is gone is one it cannot vouch for.

``python -m bench.faults --mutants [--tier fast|full] [--out docs/results/mutants.json]``

Each mutant runs the circuit campaign (``bench.circuit``) until its first fault that does
not hold, and where every one held, the layer campaign's thread deaths (``bench.faults``: the
reactor hung, the guard or the pin thread ended, at each moment); the verdict is ``caught``
(with that fault and why) or ``NOT caught`` (the whole tier held without the safeguard).
hardware/SAFETY.md's table of them is rendered from the kept results (docs/blocks.py
``--print mutants``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest import mock

from bench import circuit
from launcher.core import config
from launcher.firmware import copper as copper_module
from launcher.firmware.actuators import NEVER, Actuators
from launcher.firmware.copper import Copper
from launcher.firmware.inputs import Inputs

COMMAND = "python -m bench.faults --mutants --out docs/results/mutants.json"
DEFAULT_PINS = "the default pins, the rotator on its own MOSFET"


def _no_contact(which: str) -> Any:
    """``Copper.contact_check`` with one contact's read-back never judged."""
    real = Copper.contact_check

    def check(self: Copper, contact: Any, should_close: bool, name: str, *rest: Any) -> Any:
        return None if name.startswith(which) else real(self, contact, should_close, name,
                                                        *rest)
    return check


def _drop(code: str) -> Any:
    """``Copper.report`` that says nothing of ``code``."""
    real = Copper.report

    def copper(self: Copper, got: str, detail: str) -> None:
        if got != code:
            real(self, got, detail)
    return copper


def _never_lapsed(self: Actuators, what: str, thread: str, until: float, halt: Any) -> None:
    """A lapsed run or turn goes on, its lease never due again (doing nothing instead
    would have the guard find it lapsed at the same instant for ever)."""
    if what.startswith("roller"):
        self._roller_until = NEVER
    else:
        self._turn_until = NEVER


def _without_nc(self: Inputs) -> bool:
    b = self.board
    return b.lid_closed.is_active and b.lid_open.is_active


@contextmanager
def _patched(*patches: Any) -> Iterator[None]:
    with ExitStack() as stack:
        for p in patches:
            stack.enter_context(p)
        yield


# Each safeguard, and how it is switched off.
MUTANTS: dict[str, Callable[[], Any]] = {
    "the NO/NC disagreement check (Inputs.implausible always False)":
        lambda: mock.patch.object(Inputs, "implausible", lambda self: False),
    "the NC twin ignored (the plausibility check and the roller's interlock read NO alone)":
        lambda: _patched(
            mock.patch.object(Inputs, "implausible", _without_nc),
            mock.patch.object(Actuators, "lid_closed",
                              property(lambda self: self.board.lid_closed.is_active))),
    "the lid's power contact's read-back not judged":
        lambda: mock.patch.object(Copper, "contact_check", _no_contact("the lid's")),
    "the rotator's full-open contact's read-back not judged":
        lambda: mock.patch.object(Copper, "contact_check", _no_contact("the rotator's")),
    "nSLEEP's read-back not judged (its start test and its check at rest)":
        lambda: mock.patch.object(Copper, "report", _drop("driver_sleep")),
    "the driver inputs' pads not read back (Copper.pads_low always True)":
        lambda: mock.patch.object(Copper, "pads_low", lambda self: True),
    "the dead-man's start test without its edges with CLR held low":
        lambda: mock.patch.object(copper_module, "DEADMAN_CLEARED_EDGES", 0),
    "the lid stops on the pin library's thread (Actuators.lid_left does nothing)":
        lambda: mock.patch.object(Actuators, "lid_left", lambda self: None),
    "the lease (a run or turn whose time is up is never lapsed: Actuators._lapsed lets it "
    "run on)":
        lambda: mock.patch.object(Actuators, "_lapsed", _never_lapsed),
    "the guard thread's check (Actuators.expire checks nothing)":
        lambda: mock.patch.object(Actuators, "expire", lambda self, now: NEVER),
    "the pin rules (config's rule of the circuit off), nSLEEP moved to GPIO 4 (pulled up at "
    "power-on) on the default pins":
        lambda: _patched(
            mock.patch.object(config, "pin_problems", lambda pins: []),
            mock.patch.dict(circuit.WIRINGS, {DEFAULT_PINS: {**circuit.WIRINGS[DEFAULT_PINS],
                                                             "motor_sleep": 4}})),
}


def _layer_deaths() -> str:
    """The layer campaign's thread deaths (``bench.faults``: each death at each moment, on
    its first wiring) until the first that does not hold: what the lease and the guard are
    for, since a circuit fault leaves the reactor free to stop a drive itself."""
    from bench import faults

    wiring = next(iter(faults.WIRINGS))
    for death in faults.DEATHS:
        for moment in faults.MOMENTS:
            r = faults.run(wiring, death=(death, moment))
            if not faults.held(r, death):
                return (f"the layer campaign, {wiring}: {death}, {moment}: roller "
                        f"{r['roller'] * 1e3:.1f} ms, the death to the roller stopped "
                        f"{r['death_to_stop'] * 1e3:.1f} ms (bound: one lease, "
                        f"{r['lease'] * 1e3:g} ms)")
    return ""


def mutants(tier: str = "fast", progress: Callable[[str], None] = lambda line: None,
            only: list[str] | None = None) -> dict[str, Any]:
    started, cpu0 = time.monotonic(), time.process_time()
    rows = []
    for name, patch in MUTANTS.items():
        if only and not any(word in name for word in only):
            continue
        progress(f"mutant: {name}")
        with patch():
            try:
                r = circuit.campaign(tier, first_failure=True)
                failed = r["failures"][0] if r["failures"] else ""
            except RuntimeError as exc:  # the unit without a fault did not hold
                failed = str(exc)
            if not failed:
                failed = _layer_deaths()
        rows.append({"mutant": name, "verdict": "caught" if failed else "NOT caught",
                     "by": failed})
    return {
        "command": COMMAND if tier == "fast" and not only else
        f"python -m bench.faults --mutants --tier {tier}",
        "tier": tier, "mutants": rows,
        "caught": sum(r["verdict"] == "caught" for r in rows),
        "failures": [f"{r['mutant']}: NOT caught" for r in rows if r["verdict"] != "caught"],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "wall_s": round(time.monotonic() - started, 1),
        "cpu_s": round(time.process_time() - cpu0, 1),
        "cores": os.cpu_count(), "load_1min": round(os.getloadavg()[0], 2),
    }


def table(r: dict[str, Any]) -> str:
    """SAFETY.md's table of the mutants (docs/blocks.py ``--print mutants``)."""
    lines = [f"`{r['command']}` (finished {r['date']}; the circuit campaign's {r['tier']} "
             f"tier; {r['wall_s']:,} s, {r['cores']} cores, load average {r['load_1min']}): "
             f"{r['caught']} of {len(r['mutants'])} safeguards switched off make the "
             "campaign fail.", "", "| safeguard switched off | verdict | the first fault that "
             "did not hold |", "|---|---|---|"]
    for x in r["mutants"]:
        lines.append(f"| {x['mutant']} | {x['verdict']} | {x['by'] or '– (every fault held)'} |")
    return "\n".join(lines) + "\n"
