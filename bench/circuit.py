"""The circuit campaign: every single fault of the launcher's circuit, one at a time, against
the real firmware on the simulated launcher, whose motors move by the voltages at their
terminals (hal/electrical.py); hardware/SAFETY.md's table is rendered from what it finds.

``python -m bench.faults --campaign circuit [--tier fast|full] [--out docs/results/...json]``

The faults are ``hal.circuit_faults.single_faults`` of each wiring's circuit: every net open
at each point of its wire and shorted to each rail it can reach, every part in each of its
failure modes, each of the Pi's wired pins damaged each way, and the common cause the
mounting rules out (kept, and said); and the supplies (``SUPPLIES``: the Pi's 3.3 V
collapsing, its 5 V browning out so that it resets, the motor pack sagging under the
driver's lockout, and coming back with the lid open), which strike mid-shot, just before the
lid opens. Each runs the same scenario with the fault there from power-on: the start (its
checks), idle, a shot, the lid opened mid-shot and closed (one lid cycle), a flip with the
lid fully open and its brake, the lid closing on a turn, and a reboot with the lid ajar (the
Pi's pins inputs with their power-on pulls).

What is measured is the copper's own state, not the firmware's word: each stretch of the
roller's terminals driven with the lid not closed, and of the rotator's with the lid not
fully open, and what ended it; the faults the unit reported and when; every current past the
Pi's limits (``hal.solved.Stress``) and the driver's own protections acting. And, from the
model alone (bench/circuit_model.py: ``probes``), which safety layer of the copper the fault
takes away: the power contact (a full drive with the lid ajar turns the roller), the
rotator's full-open contact, the driver's sleep (a drive with nSLEEP low turns it), the boot
(the lid ajar while the Pi boots, its pins on their power-on pulls, turns it). A fault that
takes a layer away must be reported by the firmware within the first lid cycle: copper that
fails is found, not merely survived. And, from the model too (``expected``), which of the
firmware's checks can see the fault, and from which lid position: each must have reported it
by the phase where the scenario first rests there (``BY``). A fault holds when no stretch is
longer than one lease (``motor.lease_ms``) after the lid opens, where it took a motor's
contact away that motor was stopped by the time the lid's edge was delivered on the pin
library's thread (the lid stop's own bound; before the event loop runs anything), where it
took a layer away it was reported in time (or its row says why no check can see it:
``UNSEEN``), and no check that can see it stayed silent. And (``barriers``) where the fault
leaves a motor one barrier or none (its inputs held low, the driver asleep, its contact)
where the healthy unit has more, at rest or while the other motor runs, it must be reported
in the first lid cycle too, or its row says why (``ONE_BARRIER``: counted apart, never as
held). A fault that held the motors but overstressed the Pi is "Pi damaged" (``PI_DAMAGED``:
counted apart, never as held). ``bench/mutants.py`` switches each of the firmware's
safeguards off in turn to show that the verdict misses it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from bench.circuit_model import BY, expected, one_barrier, probes
from bench.keep import RESULTS
from hal.circuit import V3, V5, VM_NOMINAL, circuit
from hal.circuit_faults import (
    CommonCause,
    Fault,
    NetShort,
    PartFailure,
    PinDamaged,
    single_faults,
)
from launcher.core import config
from launcher.core import machine as m
from launcher.core.profiles import parse_profile
from launcher.firmware.actuators import CONTACT_SETTLE
from launcher.sim.rig import SimRig, sim_build

COMMAND = "python -m bench.faults --campaign circuit --tier full --out " \
          "docs/results/circuit_faults.json"

# Each wiring: the [pins] changes (by field) and the rotator's driver.
WIRINGS: dict[str, dict[str, Any]] = {
    "every pin wired, the rotator on the driver's second channel":
        {"rotator_in2": 9, "deadman": 10},
    "the default pins, the rotator on its own MOSFET": {"driver": "own"},
}
# The mounting makes these more than one fault (hardware/fitting.md): kept in the table,
# judged apart.
BY_CONSTRUCTION = {CommonCause("lid_lever_held"):
                   "the sensing switch and the power contact are mounted apart, each on an "
                   "actuator of its own (hardware/fitting.md): one cause cannot hold both"}
BY_CONSTRUCTION_VERDICT = "by construction"


@dataclass(frozen=True)
class Supply:
    """A supply that fails mid-shot (just before the lid opens) and stays failed: the rails'
    volts (``hal.electrical.World``) and the Pi's state."""

    name: str
    v3: float | None = None
    v5: float | None = None
    vm: float | None = None
    pi: str | None = None
    # Back to nominal this long after the lid opened (None: stays failed): the pack's
    # recovery while the lid is open, when the driver leaving its lockout must drive nothing.
    recovers: float | None = None


SUPPLIES = (
    Supply("the Pi's 3.3 V rail collapses (its pins and pull-ups unpowered)", v3=0.0,
           pi="off"),
    Supply("the Pi's 5 V browns out and the Pi resets (its pins inputs, with their power-on "
           "pulls)", v5=3.0, pi="boot"),
    Supply("the motor pack sags to 1.5 V, under the driver's lockout", vm=1.5),
    Supply("the motor pack sags to 1.5 V mid-shot, under the driver's lockout, and comes back "
           "to 4.5 V with the lid open", vm=1.5, recovers=0.25),
)
Case = Fault | Supply
PHASES = ("power-on", "idle", "a shot", "the lid opened mid-shot", "a flip",
          "the lid closing on a turn", "a reboot")
# The phases in which the scenario presses the button: a card leaving in any other is a shot
# nobody asked for (an unexpected start).
PRESSED = ("a shot", "the lid opened mid-shot")


def settings_for(wiring: str) -> config.Settings:
    """The wiring's settings, its pins kept to the firmware's rules of the circuit (as
    ``config.load`` keeps a user's: ``ConfigError`` if they break one)."""
    s = config.load()
    w = dict(WIRINGS[wiring])
    rotator = replace(s.rotator, driver=w.pop("driver", "shared"))
    return replace(s, pins=config._circuit_rules(replace(s.pins, **w)), rotator=rotator)


def faults_of(wiring: str) -> list[Case]:
    s = settings_for(wiring)
    return [*single_faults(circuit(s.pins, sim_build(s.rotator))), *SUPPLIES]


# A fault that takes a layer away and that no check of the firmware can see, and why it is
# allowed (Category 3's "where practicable"): said in its row.
UNSEEN = {
    PartFailure("U1", "nsleep_pulled_up"):
        "no check can see it: a breakout's 10 kΩ pull-up to VM against the 2.2 kΩ pull-down "
        "holds nSLEEP at 0.75 V only while the Pi boots (between the DRV8833's VIL 0.5 V and "
        "VIH 2.5 V, so the driver may be awake), and at 0.02 V, read as low, once the Pi "
        "drives it; the inputs' pull-downs and the power contact remain, so a start needs a "
        "second fault (an input pulled high with the lid shut, while the Pi boots). Finding "
        "it would need nSLEEP read as a voltage; a builder measures it with the Pi off",
    PartFailure("U1", "nsleep_ignored"):
        "no check can see it: nSLEEP's read-back reads the line, which the firmware drives "
        "as ever, not whether the bridges obey it; at rest every input is low (the firmware "
        "and the 10 kΩ pull-downs), so the awake driver's outputs coast and every read-back "
        "reads as on a sleeping one. The inputs held low, the power contact and the "
        "firmware's stops remain: a start needs a second fault (an input stuck high). A "
        "test that drives an input with nSLEEP low would start the roller on the very fault "
        "it looks for: not practicable",
}


# A fault that leaves one barrier (or none) where the healthy unit has two or more, seen by no
# check in the first lid cycle, and why it is not remedied: said in its row, and counted
# apart (``ONE_BARRIER_VERDICT``), never as held.
_MOSFET_ON = (
    "no check sees it: the rotator's read-back reads the motor side of its full-open contact, "
    "which the MOSFET's side does not move while the contact is open, and the gate's pad reads "
    "low as driven; the contact is then all that stops the rotator whenever the lid is not "
    "fully open. What would find it: a read-back of the MOSFET's drain at rest; not built "
    "(hardware/SAFETY.md, \"One barrier left\")")
ONE_BARRIER: dict[Fault, str] = {
    **{NetShort("rot_out2", rail): _MOSFET_ON for rail in ("GND", "3V3")},
    PartFailure("Q1", "shorted"): _MOSFET_ON,
}
ONE_BARRIER_VERDICT = "one barrier left, its row says why"


# --- the hazards, from the terminals --------------------------------------------------------


class Stretches:
    """Each stretch of one motor's terminals driven while the lid is where it must not be,
    and what ended it: the firmware (its pins no longer ask), the copper (they still ask),
    or the lid (it came back)."""

    def __init__(self, allowed: str) -> None:
        self.allowed = allowed  # the lid position the motor may turn in
        self.since: float | None = None
        self.phase = ""
        self.worst = 0.0
        self.worst_phase = ""
        self.ended_by: set[str] = set()

    def sample(self, now: float, lid: str, driven: bool, asked: bool, phase: str) -> None:
        bad = driven and lid != self.allowed
        if bad and self.since is None:
            self.since, self.phase = now, phase
        elif not bad and self.since is not None:
            if now - self.since > self.worst:
                self.worst, self.worst_phase = now - self.since, self.phase
            self.ended_by.add("the lid" if lid == self.allowed else
                              "copper" if asked else "firmware")
            self.since = None

    def close(self, now: float) -> None:
        if self.since is not None and now - self.since > self.worst:
            self.worst, self.worst_phase = now - self.since, self.phase + " (to the end)"
            self.ended_by.add("nothing")


class Unit:
    """One wiring's unit with one fault, from power-on, and its hazards sampled at every
    solve of the circuit."""

    def __init__(self, wiring: str, fault: Case | None) -> None:
        self.settings = settings_for(wiring)
        self.supply = fault if isinstance(fault, Supply) else None
        if self.supply is not None:
            fault = None
        self.phase = "power-on"
        self.roller = Stretches("closed")
        self.turn = Stretches("full")
        self.after_edge: set[str] = set()
        self.unasked: dict[str, int] = {}  # phase: cards shot with no press asking for one
        self._ejected = 0
        # What overstressed the Pi: (where, what) -> (the worst amps, its limit, the first
        # phase); and the driver's own protections seen acting, with the first phase.
        self.stress: dict[tuple[str, str], tuple[float, float, str]] = {}
        self.protection: dict[str, str] = {}

        def prepare(sim: Any) -> None:
            if fault is not None:
                sim.inject(fault)
            real = sim._solve_once

            def sampled(every: bool) -> None:
                real(every)
                self.sample()

            sim._solve_once = sampled

        self.rig = SimRig(self.settings, seed=1, before_start=prepare)
        self.rig.sim.load(range(80))
        self.rig.app.load(80)
        self.rig.app.use_profile(parse_profile("deal 3"))

    def sample(self) -> None:
        rig = getattr(self, "rig", None)
        if rig is None:
            return  # the simulator's own first solve, before the rig exists
        sim, now = rig.sim, rig.now
        sol, lid = sim.solution, sim.world.lid
        p = sim.pins
        asked_roller = (sim.level("motor_sleep") > 0 and sim.level("motor_in1") > 0
                        and sim.level("motor_in2") == 0)
        asked_turn = sim.level("rotator") > 0 or (p.rotator_in2 is not None
                                                  and sim.level("rotator_in2") > 0)
        self.roller.sample(now, lid, bool(sol.roller.speed), asked_roller, self.phase)
        self.turn.sample(now, lid, bool(sol.rotator.speed), asked_turn, self.phase)
        for st in sol.stress:
            worst, _, phase = self.stress.get((st.where, st.what), (0.0, 0.0, self.phase))
            self.stress[st.where, st.what] = (max(worst, st.amps), st.limit, phase)
        for what in sol.protection:
            self.protection.setdefault(what, self.phase)

    def edge(self, motor: str) -> None:
        """Just after the lid's edge was delivered (on the pin library's thread, as the
        simulator delivers it), before the event loop has run anything: is ``motor`` still
        turning? Only the lid stop on the pin thread can have stopped it by now."""
        sol = self.rig.sim.solution
        if (sol.roller if motor == "roller" else sol.rotator).speed:
            self.after_edge.add(motor)

    def at(self, phase: str) -> None:
        self._count()
        self.phase = phase
        self.sample()

    def _count(self) -> None:
        """The cards that left in the phase now ending, kept where no press asked for one."""
        total = self.rig.sim.ejected_total
        if self.phase not in PRESSED and total > self._ejected:
            self.unasked[self.phase] = self.unasked.get(self.phase, 0) + total - self._ejected
        self._ejected = total

    def advance(self, seconds: float) -> None:
        self.rig.advance(seconds)


def scenario(u: Unit) -> dict[str, float]:
    """The phases; returns the time by which each of ``BY``'s phases has settled: the start's
    checks done, the first lid cycle shut again and read, the flip's lid shut again."""
    rig, sim = u.rig, u.rig.sim
    u.advance(0.5)
    started = rig.now
    u.at("idle")
    u.advance(1.0)
    u.at("a shot")
    sim.press()
    for _ in range(100):
        u.advance(0.02)
    u.at("the lid opened mid-shot")
    sim.press()
    u.advance(0.0521)
    if u.supply is not None:
        sim.set_supply(vm=u.supply.vm, v3=u.supply.v3, v5=u.supply.v5)
        if u.supply.pi is not None:
            sim.set_pi(u.supply.pi)
        u.advance(0.01)
    sim.open_lid(full=False)
    u.edge("roller")
    if u.supply is not None and u.supply.recovers is not None:
        u.advance(u.supply.recovers)
        sim.set_supply(vm=VM_NOMINAL, v3=V3, v5=V5)
        u.advance(0.5 - u.supply.recovers)
    else:
        u.advance(0.5)
    sim.close_lid()
    u.advance(CONTACT_SETTLE + 0.1)
    lid_cycle = rig.now
    u.at("a flip")
    sim.open_lid(full=True)
    for _ in range(200):
        u.advance(0.01)
        if rig.state not in m.TURNING:
            break
    u.advance(0.3)
    sim.close_lid()
    u.advance(0.5)
    flipped = rig.now
    u.at("the lid closing on a turn")
    sim.stall_rotator()  # the turn goes on until the lid comes down on it
    sim.open_lid(full=True)
    u.advance(0.2)
    sim.close_lid()
    u.edge("rotator")
    u.advance(0.5)
    sim.stall_rotator(False)
    u.at("a reboot")
    rig.app.stop()
    sim.open_lid(full=False)
    sim.set_pi("boot")
    u.advance(1.0)
    u._count()
    u.roller.close(rig.now)
    u.turn.close(rig.now)
    return {"power-on": started, "the first lid cycle": lid_cycle, "the flip": flipped}


def run(wiring: str, fault: Case | None) -> dict[str, Any]:
    u = Unit(wiring, fault)
    try:
        deadlines = scenario(u)
    finally:
        u.rig.sim.board.close()
    lid_cycle = deadlines["the first lid cycle"]
    reported = [(t, d["code"]) for t, kind, d in u.rig.app.history if kind == "fault"]
    s = u.settings
    lost = ([] if fault is None or isinstance(fault, Supply)
            else probes(s.pins, sim_build(s.rotator), fault))
    single = ([] if fault is None or isinstance(fault, Supply)
              else one_barrier(s.pins, sim_build(s.rotator), fault))
    wanted = ({} if fault is None or isinstance(fault, Supply)
              else expected(s.pins, sim_build(s.rotator), fault))
    late = sorted(f"`{code}` (its check sees it with the lid {lid}) unreported by {BY[lid]}"
                  for code, lid in wanted.items() if lid in BY
                  and not any(c == code and t <= deadlines[BY[lid]] for t, c in reported))
    return {
        "fault": describe(fault, circuit(s.pins, sim_build(s.rotator))), "lost": lost,
        "roller_ms": round(u.roller.worst * 1e3, 3), "roller_phase": u.roller.worst_phase,
        "roller_ended_by": sorted(u.roller.ended_by),
        "turn_ms": round(u.turn.worst * 1e3, 3), "turn_phase": u.turn.worst_phase,
        "turn_ended_by": sorted(u.turn.ended_by),
        "after_edge": sorted(u.after_edge),
        "unasked": dict(u.unasked),
        "reported": sorted({code for _, code in reported}),
        "reported_in_cycle": any(t <= lid_cycle for t, _ in reported),
        "expected": {code: lid for code, lid in sorted(wanted.items())}, "late": late,
        "lease_ms": s.motor.lease * 1e3,
        "unseen": UNSEEN.get(fault, "") if lost else "",  # said where it takes one away
        "one_barrier": single,
        "one_barrier_why": ONE_BARRIER.get(fault, "") if single else "",
        "damaged": [f"{where} {what} {amps * 1e3:,.0f} mA, past {limit * 1e3:g} mA ({phase})"
                    for (where, what), (amps, limit, phase) in sorted(u.stress.items())],
        "protection": [f"{PROTECTION[what.split()[0]]}{what[3:]} ({phase})"
                       for what, phase in sorted(u.protection.items())],
    }


def describe(fault: Case | None, c: Any) -> str:
    """The fault in the words of the circuit ``c`` (its nets' terminals, its parts' names)."""
    if fault is None:
        return "none"
    if isinstance(fault, Supply):
        return fault.name
    if isinstance(fault, CommonCause):
        return f"common cause ({fault.name}): {fault.describe(c)}"
    return fault.describe(c)


def lid_stop_bound_ms() -> float:
    """The lid stop's own figure (hardware/SAFETY.md's `lid_stop`, `lid_stop_hung`,
    `lid_stop_spinning`): the worst of ``python -m bench.interlock``'s kept tries, the lid's
    edge to the pins written low on the pin library's thread."""
    kept = json.loads((RESULTS / "interlock.json").read_text())
    return max(kept[f"lid_stop_{how}"]["max_ms"] for how in ("free", "sleep", "spin"))


# The copper layer whose loss leaves the lid stop on the pin thread as what stops each motor.
CONTACTS = {"roller": "the power contact", "rotator": "the rotator's full-open contact"}


def edge_failures(r: dict[str, Any]) -> list[str]:
    """Where the fault took a motor's contact away, the circuit leaves the firmware's stop on
    the lid's edge as the layer that ends its drive: the motor must be stopped once the edge
    is delivered on the pin library's thread, before the event loop runs anything (the lid
    stop's claim: within `lid_stop`'s figure of the edge, ``lid_stop_bound_ms``; on the
    manual reactor, the edge's own instant), not later by the reactor, the lease or the
    guard."""
    return [f"the {motor} still turning once the lid's edge was delivered, before the event "
            f"loop ran (the contact gone, the lid stop on the pin thread is the layer: bound "
            f"{lid_stop_bound_ms():.3f} ms)"
            for motor in r.get("after_edge", []) if CONTACTS[motor] in r["lost"]]


# The driver's own protections (hal.datasheets.DriverSpec), as a row names them.
PROTECTION = {"OCP": "the driver's overcurrent protection held off its bridge",
              "TSD": "the driver's thermal shutdown held every output off"}
# A fault that overstresses a pad of the Pi or its 3.3 V rail past its published limit
# (hal/datasheets.py): the Pi is taken as damaged, and the row says where and how. It is an
# outcome of its own, counted apart from held, and no failure of the safety functions where
# the motors held; what the damaged pin then does is a fault of its own, enumerated
# (hal.circuit_faults.PinDamaged), with its own rows.
PI_DAMAGED = "Pi damaged"


def verdict(fault: Case, r: dict[str, Any]) -> str:
    """"held", or why not; or "Pi damaged: ..." where the motors held but the Pi did not."""
    if fault in BY_CONSTRUCTION:
        return f"{BY_CONSTRUCTION_VERDICT}: {BY_CONSTRUCTION[fault]}"
    bound = r["lease_ms"] + 1e-6
    why = []
    if r["roller_ms"] > bound:
        why.append(f"the roller driven with the lid open for {r['roller_ms']:.1f} ms")
    if r["turn_ms"] > bound:
        why.append(f"the rotator turning with the lid not fully open for {r['turn_ms']:.1f} ms")
    why += edge_failures(r)
    why += [f"{n} card{'s' if n > 1 else ''} shot with no press asking ({phase}): an "
            "unexpected start" for phase, n in r.get("unasked", {}).items()]
    if r["lost"] and not r["reported_in_cycle"] and fault not in UNSEEN:
        why.append("took away " + " and ".join(r["lost"]) + ", unreported in the first lid "
                   "cycle")
    why += r["late"]  # a check that should have seen it, and did not say so in time
    single, said = r.get("one_barrier", []), ""
    if single and not r["reported_in_cycle"]:
        if fault not in ONE_BARRIER:
            why.append("left " + "; ".join(single) + ", unreported in the first lid cycle")
        else:
            said = ONE_BARRIER_VERDICT
    if why:
        return "; ".join(why)
    if r.get("damaged"):
        return (f"{PI_DAMAGED}: " + "; ".join(r["damaged"])
                + (f"; and {said}" if said else ""))
    return said or "held"


def damaged(verdict: str) -> bool:
    """The motors held, the Pi did not (``PI_DAMAGED``): counted apart."""
    return verdict.startswith(f"{PI_DAMAGED}: ")


def apart(verdict: str) -> bool:
    """A common cause the mounting rules out: judged apart (``BY_CONSTRUCTION``)."""
    return verdict.startswith(BY_CONSTRUCTION_VERDICT)


def passed(verdict: str) -> bool:
    """Not a failure: held, ruled out by construction, one barrier left with its row saying
    why, or the Pi damaged with the motors held (those two counted apart from held)."""
    return verdict in ("held", ONE_BARRIER_VERDICT) or apart(verdict) or damaged(verdict)


def campaign(tier: str = "fast", progress: Callable[[str], None] = lambda line: None,
             first_failure: bool = False) -> dict[str, Any]:
    """Every fault of ``tier`` on each wiring (``first_failure``: stop at the first fault
    that does not hold, as a mutant's run needs only one)."""
    started, cpu0 = time.monotonic(), time.process_time()
    rows: list[dict[str, Any]] = []
    for wiring in WIRINGS:
        clean = run(wiring, None)
        if clean["roller_ms"] or clean["turn_ms"] or clean["reported"]:
            raise RuntimeError(f"the unit without a fault did not hold ({wiring}): {clean}")
        faults = faults_of(wiring)
        if tier == "fast":  # every net's and part's first fault, the common causes
            faults = first_of_each(faults)
        progress(f"{wiring}: {len(faults)} faults")
        for i, fault in enumerate(faults):
            r = run(wiring, fault)
            r["wiring"] = wiring
            r["verdict"] = verdict(fault, r)
            rows.append(r)
            if first_failure and not passed(r["verdict"]):
                break
            if (i + 1) % 50 == 0:
                progress(f"  {i + 1} of {len(faults)}")
        if first_failure and rows and not passed(rows[-1]["verdict"]):
            break
    held = [r for r in rows if r["verdict"] == "held" or apart(r["verdict"])]
    said = [r for r in rows if r["verdict"] == ONE_BARRIER_VERDICT]
    broke = [r for r in rows if damaged(r["verdict"])]
    judged = [r for r in rows if not apart(r["verdict"])]
    return {
        "command": COMMAND if tier == "full" else "python -m bench.faults --campaign circuit",
        "tier": tier, "wirings": list(WIRINGS), "faults": len(rows), "held": len(held),
        "rows": rows, "failures": [f"{x['wiring']}: {x['fault']}: {x['verdict']}"
                                   for x in rows if not passed(x["verdict"])],
        "one_barrier": [f"{x['wiring']}: {x['fault']}" for x in said],
        "pi_damaged": [f"{x['wiring']}: {x['fault']}" for x in broke],
        # The worst over the single faults; a common cause the mounting rules out apart.
        "roller_worst_ms": max((r["roller_ms"] for r in judged), default=0.0),
        "turn_worst_ms": max((r["turn_ms"] for r in judged), default=0.0),
        "by_construction": [f"{r['wiring']}: {r['fault']}" for r in rows
                            if apart(r["verdict"])],
        "layers_lost": sum(1 for r in rows if r["lost"]),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "wall_s": round(time.monotonic() - started, 1),
        "cpu_s": round(time.process_time() - cpu0, 1),
        "cores": os.cpu_count(), "load_1min": round(os.getloadavg()[0], 2),
    }


def first_of_each(faults: Iterable[Case]) -> list[Case]:
    """One fault of each kind on each net and part (and every common cause and supply): a
    net's first open, its short low and its first short high (what a pad's read-back sees),
    each part's every mode."""
    seen: set[tuple[str, ...]] = set()
    out = []
    for f in faults:
        key: tuple[str, ...] = (type(f).__name__, getattr(f, "net", None)
                                or getattr(f, "ref", None) or getattr(f, "name", ""))
        if isinstance(f, NetShort):
            key += ("low" if f.rail == "GND" else "high",)
        if isinstance(f, PartFailure):
            key = (f.ref, f.mode)  # each part's every mode: a part has few
        if isinstance(f, PinDamaged):
            key = ("pin", str(f.gpio), f.mode)  # each pin stuck each way
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def tables(r: dict[str, Any]) -> str:
    """SAFETY.md's tables: one per wiring, a row per fault (docs/blocks.py
    ``--print circuit-table``)."""
    return "\n".join(f"### {wiring}\n\n{table(r, wiring)}" for wiring in r["wirings"])


def table(r: dict[str, Any], wiring: str) -> str:
    """One wiring's table: a row per fault, in the order of the circuit's nets and parts."""
    rows = [x for x in r["rows"] if x["wiring"] == wiring]
    lines = ["| fault | the roller, the lid not closed | the rotator, the lid not fully "
             "open | layers of copper it takes away | the unit reports | verdict |",
             "|---|---|---|---|---|---|"]
    for x in rows:
        roller = _stretch(x["roller_ms"], x["roller_phase"], x["roller_ended_by"])
        turn = _stretch(x["turn_ms"], x["turn_phase"], x["turn_ended_by"])
        layers = ", ".join(x["lost"]) or "–"
        if x.get("one_barrier"):
            layers += "; one barrier left: " + "; ".join(x["one_barrier"])
        if x.get("protection"):  # nFAULT is not wired: the firmware cannot see these
            layers += "; " + "; ".join(x["protection"])
        lines.append(f"| {x['fault']} | {roller} | {turn} | {layers} | "
                     f"{_reported(x)} | {x['verdict']} |")
    return "\n".join(lines) + "\n"


def _stretch(ms: float, phase: str, ended: list[str]) -> str:
    if not ms:
        return "never driven"
    return f"{ms:.1f} ms ({phase}; ended by {' and '.join(ended)})"


def _reported(x: dict[str, Any]) -> str:
    # What its check could see only fully open, where the scenario never rests idle (a turn
    # starts at once): not judged, and said.
    unjudged = [c for c, lid in x["expected"].items() if lid not in BY and c not in x["reported"]]
    why = (f" (`{'`, `'.join(unjudged)}` can see it only at rest fully open, after a turn: not "
           "judged)") if unjudged else ""
    if x.get("unseen") and not x["reported"]:
        return f"nothing ({x['unseen']})"
    if x.get("one_barrier_why") and not x["reported"]:
        return f"nothing ({x['one_barrier_why']})"
    if not x["reported"]:
        return "nothing" + why
    when = "within the first lid cycle" if x["reported_in_cycle"] else "later"
    return f"`{'`, `'.join(x['reported'])}` ({when})" + why


def summary(r: dict[str, Any]) -> str:
    """The campaign's rows of SAFETY.md's measured figures (docs/blocks.py
    ``--print circuit-faults``)."""
    said, failed = len(r.get("one_barrier", [])), len(r["failures"])
    broke = len(r.get("pi_damaged", []))
    verdict = "; ".join(
        [f"{said} leaving one barrier where the unit has more, unreported and not yet "
         "remedied, each row saying why" if said else "",
         f"{broke} leaving the Pi damaged (a pad or its 3.3 V rail past its limit, "
         "hal/datasheets.py; the motors held; each row says where, and the damaged pins "
         "have rows of their own)" if broke else "",
         f"{failed} did NOT hold" if failed else ""]).strip("; ") or "every one held"
    apart = len(r["by_construction"])
    bound = "bound: one lease; on the manual reactor's clock, where a stop on the lid's edge " \
            "comes at the edge's own instant"
    return (
        "| name | what | figure |\n|---|---|---|\n"
        f"| `circuit_campaign` | `{r['command']}` (finished {r['date']}; "
        f"{len(r['wirings'])} wirings; {r['wall_s']:,} s, {r['cpu_s']:,} s CPU, "
        f"{r['cores']} cores, load average {r['load_1min']} at the end) | {r['faults']:,} "
        f"single faults of the circuit and its supplies, {r['layers_lost']} of them taking "
        f"a layer of copper away: {r['held']:,} held ({apart} of them common causes that "
        f"the mounting rules out, judged apart); {verdict} |\n"
        f"| `circuit_roller_max` | the roller's terminals driven with the lid not closed: the "
        f"longest stretch over every single fault ({bound}) | {r['roller_worst_ms']:.1f} ms |\n"
        f"| `circuit_turn_max` | the rotator's terminals driven with the lid not fully open: "
        f"the longest stretch over every single fault ({bound}) | "
        f"{r['turn_worst_ms']:.1f} ms |\n")
