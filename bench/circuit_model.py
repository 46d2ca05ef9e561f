"""The circuit campaign's readings of the electrical model alone (bench/circuit.py judges each
fault's run with them): which layer of copper a fault takes away (``probes``), the barriers it
leaves each motor where the lid forbids it (``barriers``, ``one_barrier``), and which of the
firmware's checks can see it, from which lid position (``expected``).
"""

from __future__ import annotations

from typing import Any

from hal.circuit import PAD_CHECKED, Build, circuit
from hal.circuit_faults import Fault
from hal.electrical import Model, World

# --- what the model alone says the fault takes away -----------------------------------------


def probes(pins: Any, build: Build, fault: Fault) -> list[str]:
    """The copper layers ``fault`` takes away, from the electrical model alone."""
    model = Model(circuit(pins, build), fault)
    drive = {pins.motor_sleep: 1, pins.motor_in1: 1, pins.motor_in2: 0}
    turn = {pins.motor_sleep: 1, pins.rotator: 1}
    if pins.rotator_in2 is not None:
        turn[pins.rotator_in2] = 0
    # With the dead-man fitted the driver wakes only on its wave: the firmware's drive has it.
    wave = {"edges": True, "latched": True} if pins.deadman is not None else {}
    lost = []
    if model.solve(drive, World(lid="ajar", **wave)).roller.speed:
        lost.append("the power contact")
    if model.solve(turn, World(lid="ajar", **wave)).rotator.speed:
        lost.append("the rotator's full-open contact")
    if model.solve({**drive, pins.motor_sleep: 0}, World(lid="closed", **wave)).roller.speed:
        lost.append("the driver's sleep")
    boot = model.solve({}, World(lid="ajar", pi="boot"))
    # The driver asleep while the Pi boots with the lid shut, its pins on their power-on
    # pulls (nSLEEP between its VIL and VIH counts as awake: the part may be).
    if boot.roller.speed or boot.rotator.speed or model.solve(
            {}, World(lid="closed", pi="boot")).awake:
        lost.append("the power-on pulls")
    return lost


# --- the barriers left in each stretch where the lid forbids a motor ------------------------

# The barriers between a motor and its drive while the lid forbids it: the firmware's levels
# on the motor's inputs (its pull-downs behind them), the driver asleep (only where the
# firmware has it asleep: a shared driver is awake through the other motor's run), and the
# contact the lid opens in the motor's lead. Each is judged alone, the others taken away.
INPUTS, ASLEEP, CONTACT = "its inputs held low", "the driver asleep", "its power contact"


def barriers(pins: Any, build: Build, fault: Fault | None) -> dict[str, list[str]]:
    """For each stretch where the lid forbids a motor (at rest, and while the other motor
    runs), the barriers that still stop that motor under ``fault``, from the model alone:
    a barrier stands when, with every other one taken away (the inputs asking, the driver
    awake, the lid where the motor may turn), the motor does not turn."""
    model = Model(circuit(pins, build), fault)
    wave = {"edges": True, "latched": True} if pins.deadman is not None else {}
    sleep, on_bridge = pins.motor_sleep, build.rotator == "bridge"
    ask_roller = {pins.motor_in1: 1, pins.motor_in2: 0}
    ask_turn = {pins.rotator: 1}
    if pins.rotator_in2 is not None:
        ask_turn[pins.rotator_in2] = 0
    # (motor, stretch, the firmware's levels there, the lid there, the lid it may turn in)
    flip = {**ask_turn, **({sleep: 1} if on_bridge else {})}
    stretches = (("roller", "at rest, the lid open", {}, "ajar", "closed"),
                 ("roller", "during a flip", flip, "full", "closed"),
                 ("rotator", "at rest, the lid not fully open", {}, "ajar", "full"),
                 ("rotator", "during a shot", {sleep: 1, **ask_roller}, "closed", "full"))

    def turns(motor: str, levels: dict[int, int], lid: str) -> bool:
        awake = wave if levels.get(sleep) else {}
        sol = model.solve(levels, World(lid=lid, **awake))
        return bool((sol.roller if motor == "roller" else sol.rotator).speed)

    out: dict[str, list[str]] = {}
    for motor, stretch, levels, lid, allowed in stretches:
        ask = ask_roller if motor == "roller" else ask_turn
        has_sleep = motor == "roller" or on_bridge
        standing = []
        if not turns(motor, {**levels, sleep: 1}, allowed):
            standing.append(INPUTS)
        if has_sleep and not levels.get(sleep) and not turns(motor, {**levels, **ask},
                                                              allowed):
            standing.append(ASLEEP)
        if not turns(motor, {**levels, **ask, sleep: 1}, lid):
            standing.append(CONTACT)
        out[f"the {motor} {stretch}"] = standing
    return out


def one_barrier(pins: Any, build: Build, fault: Fault) -> list[str]:
    """The stretches where ``fault`` leaves one barrier or none, where the healthy circuit
    has more: ``"the roller during a flip: its power contact alone"``."""
    good, bad = barriers(pins, build, None), barriers(pins, build, fault)
    return [f"{where}: {' and '.join(left) + ' alone' if left else 'no barrier'}"
            for where, left in bad.items() if len(left) <= 1 < len(good[where])]


# --- what the firmware's checks are supposed to see, from the model alone ---------------------

# The read-backs the firmware checks with the driver asleep, and the fault each reports; and
# the outputs it reads back at the Pi's pads then (each driven low), and theirs.
READBACKS = {"power_contact_sense": "power_contact", "rotator_contact_sense": "power_contact"}
PADS = {key: "driver_input" for key in PAD_CHECKED}
# Where the scenario first has the lid at rest in each position, and so the phase by which a
# fault its check can see there must be reported: shut at power-on (the start's checks), ajar
# in the first lid cycle. Fully open is not judged: there the cartridge turns at once, and
# the copper is read only once the turn is over (a turn the fault stops ends in its timeout).
BY = {"closed": "power-on", "ajar": "the first lid cycle"}
POSITIONS = ("closed", "ajar", "full")


def expected(pins: Any, build: Build, fault: Fault) -> dict[str, str]:
    """The fault codes the firmware's checks are supposed to report for ``fault``, each
    with the lid position where the model first shows it to them (``BY``), from the circuit
    alone: a read-back that reads otherwise than on the healthy circuit, with the driver
    asleep at rest (the copper check) or woken with its inputs low at start (nSLEEP's start
    test); the lid switches reading what no lid can be (the NO and NC contacts alike, or
    shut and fully open at once)."""
    good, bad = Model(circuit(pins, build)), Model(circuit(pins, build), fault)
    wave = {"edges": True, "latched": True} if pins.deadman is not None else {}
    out: dict[str, str] = {}

    def seen(code: str, lid: str) -> None:
        out.setdefault(code, lid)

    active: dict[str, int] = {}
    for lid in POSITIONS:
        asleep = World(lid=lid)
        g, b = good.solve({}, asleep).reads, bad.solve({}, asleep).reads
        for key, code in READBACKS.items():
            bcm = getattr(pins, key)
            if bcm is not None and g.get(bcm) != b.get(bcm):
                seen(code, lid)
        gp, bp = good.solve({}, asleep).pads, bad.solve({}, asleep).pads
        for key, code in PADS.items():
            bcm = getattr(pins, key)
            if bcm is not None and gp.get(bcm) != bp.get(bcm):
                seen(code, lid)
        if pins.sleep_sense is not None and lid == "closed":
            woken = World(lid=lid, **wave)
            awake = {pins.motor_sleep: 1}
            tests = [(awake, woken)]
            if wave:  # and the wave with CLR held low, which must not wake it
                tests.append(({}, World(lid=lid, edges=True)))
            if g.get(pins.sleep_sense) != b.get(pins.sleep_sense) or any(
                    good.solve(levels, world).reads.get(pins.sleep_sense)
                    != bad.solve(levels, world).reads.get(pins.sleep_sense)
                    for levels, world in tests):
                seen("driver_sleep", lid)
        # Each lid switch's active level is its healthy reading where the lid presses it.
        for key, where in (("lid_closed", "closed"), ("lid_closed_nc", "ajar"),
                           ("lid_open", "full")):
            bcm = getattr(pins, key)
            if bcm is not None and lid == where:
                active[key] = g[bcm]
    for lid in POSITIONS:
        b = bad.solve({}, World(lid=lid)).reads
        on = {key: b.get(getattr(pins, key)) == level for key, level in active.items()}
        nc = "lid_closed_nc" in on and on["lid_closed"] == on["lid_closed_nc"]
        if nc or (on["lid_closed"] and on["lid_open"]):
            seen("lid_sensor", lid)
    return out
