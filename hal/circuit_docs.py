"""The circuit's tables for the hardware docs, and its bill of materials.

``docs/blocks.py`` renders hardware/pinout.md's, bom.md's, power.md's and circuit.md's
generated blocks, and the README's pin table, from these functions; each reads the one
description of the circuit (hal/circuit.py) or its solved copper (hal/electrical.py), so a
pin, a part or a threshold changed there changes the page. Nothing on the Pi imports this.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import NamedTuple

from hal.base import Pins
from hal.circuit import (
    CMOS_VIL,
    PIN_ROLES,
    POWER_CONTACT,
    ROTATOR_WINDING,
    VM_FRESH,
    VM_PACKS,
    Build,
    PinRole,
    circuit,
    header_pin,
    power_on_pull,
    roller_stall_worst,
    stall_current,
    wired_pins,
)
from hal.circuit_faults import NetOpen, PartFailure
from hal.electrical import Model, World


def stall_table(windings: tuple[float, ...] = (1.0, 1.3, 1.6, 1.9, 2.5)) -> str:
    """The roller's stall current for each winding resistance and pack, as a Markdown table:
    through the DRV8833, and straight from the pack (a lead pinched past the driver)."""
    packs = list(VM_PACKS.items())
    head = "| winding (Ω) | " + " | ".join(f"{name}, fresh {fresh:g} V" for name, (_, fresh)
                                        in packs) + " | pack direct, 4.8 V |"
    rows = [head, "|---:|" + "---:|" * (len(packs) + 1)]
    for w in windings:
        cells = [f"{stall_current(fresh, w):.1f} A" for _, (_, fresh) in packs]
        cells.append(f"{stall_current(VM_FRESH, w, through_driver=False):.1f} A")
        rows.append(f"| {w:g} | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def contact_rating_table() -> str:
    """The power contact's published rating against the currents it must carry, each against
    the figure that applies: a motor's current broken (the lid opened on a stalled roller)
    against the motor-load rating, a motor's start against the inrush limit."""
    r = POWER_CONTACT
    worst = roller_stall_worst()
    rotator = max(stall_current(fresh, ROTATOR_WINDING[0]) for _, fresh in VM_PACKS.values())
    rows = ["| what | current | the contact's rating (8 VDC) | margin |", "|---|---:|---:|---:|"]
    for what, amps, rating, name in (
            ("roller stalled, broken by the contact as the lid opens (lowest winding, "
             "freshest pack)", worst, r.motor_no, "motor load, NO"),
            ("roller stalled, made as a motor load's inrush", worst, r.inrush_no, "inrush, NO"),
            ("rotator stalled, broken by its contact (lowest winding, freshest pack)", rotator,
             r.motor_no, "motor load, NO")):
        margin = rating / amps
        rows.append(f"| {what} | {amps:.1f} A | {rating:g} A ({name}) | {margin:.1f}×"
                    + (" (below the rating)" if margin < 1 else "") + " |")
    return "\n".join(rows) + "\n"


class BomLine(NamedTuple):
    """One line of hardware/bom.md: ``key`` is what parts name in ``Part.bom``; ``qty`` 0
    counts the parts of the wired unit (``wired_pins()``, bridge rotator) that name it."""

    key: str
    item: str
    example: str
    unit_usd: float
    qty: int = 0
    optional: str = ""  # "" always; else the condition ("dead-man", "option B")


BOM: tuple[BomLine, ...] = (
    BomLine("pi", "Raspberry Pi (any with a 40-pin header; Zero 2 W is plenty)",
            "Raspberry Pi Zero 2 W (SC0510)", 15.00),
    BomLine("header", "40-pin header, soldered (Zero boards come without)",
            "generic 2×20 male header, 2.54 mm", 1.00, qty=1),
    BomLine("sd", "microSD card, 16 GB, A1", "SanDisk Industrial SDSDQAF3-016G", 8.00, qty=1),
    BomLine("pi_supply", "Pi power supply, 5.1 V 2.5 A micro-USB (Pi 4: 3 A USB-C; Pi 5: 5 A)",
            "official Raspberry Pi 12.5 W micro-USB supply", 8.00, qty=1),
    BomLine("driver", "dual H-bridge motor driver (DRV8833 for the toy's 3×C pack; check the "
            "chip: many \"DRV8833\" boards carry the DRV8833C, 0.7 A RMS; the TB6612FNG needs "
            "≥ 4.5 V: [power.md](power.md))",
            "Pololu 2130 (DRV8833 carrier) or SparkFun ROB-14451 (TB6612FNG)", 6.00),
    BomLine("amp", "I2S class-D amplifier", "Adafruit 3006 (MAX98357A breakout)", 6.00),
    BomLine("speaker", "speaker, 4–8 Ω, 2–3 W, 40 mm (or the shell's own)",
            "generic 40 mm 4 Ω 3 W", 3.00),
    BomLine("beam", "IR break-beam pair, 3 mm", "Adafruit 2167", 2.00),
    BomLine("sensing", "low-current lever microswitch, gold contacts, for sensing only: lid "
            "closed (SPDT, NO and NC both wired) and lid fully open; never in a motor's lead",
            "Omron SS-01GL (0.1 A at 30 VDC, gold crossbar; not the silver-contact SS-5GL, "
            "which is not rated for a Pi input's current)", 2.50),
    BomLine("power_contact", "power contacts: one the shut lid closes, in the roller's lead; "
            "one the fully open lid closes, in the rotator's lead. A published DC rating "
            "above the stall current ([power.md](power.md)); mounted apart from the sensing "
            "switches, each on its own actuator", "Omron X-10GW (8 VDC: 10 A resistive, "
            "2.5 A motor load with 15 A inrush on NO); or any switch whose datasheet gives as "
            "much at 8 VDC", 4.00),
    BomLine("hall", "Hall switch, 3.3 V, omnipolar, open-drain (micropower: samples every "
            "75 ms typical)", "Diodes AH1806 (SIP-3)", 0.60),
    BomLine("magnets", "neodymium disc magnets 3×2 mm (detents and side marker)",
            "generic N35", 0.10, qty=3),
    BomLine("button", "momentary push button (if the shell's is not reused)", "E-Switch TL1105",
            0.50),
    BomLine("led", "LED 3 mm + 330 Ω resistor", "generic", 0.20, qty=1),
    BomLine("rotator", "rotator gear motor, N20 6 V 30–60 rpm (if the shell's is not reused)",
            "generic N20 gear motor, 6 V, 30–60 rpm", 4.00),
    BomLine("roller", "roller motor, 130/260 size (the shell's own)", "the toy's roller motor",
            0.00),
    BomLine("mosfet", "logic-level MOSFET: the power contacts' read-backs (and the rotator's "
            "switch in option B)", "AO3400A (SOT-23; on-resistance specified at a 2.5 V gate, "
            "so 3.3 V turns it fully on). Not the IRLZ44N: it is specified at 4–5 V", 0.30),
    BomLine("schottky", "Schottky flyback diode for the MOSFET rotator", "1N5819", 0.10,
            optional="option B"),
    BomLine("tvs", "bidirectional TVS across the roller's terminals, motor side of the "
            "contact (standoff above the freshest pack)", "Littelfuse SMBJ7.0CA", 0.30),
    BomLine("r10k", "resistor 10 kΩ (pull-downs on IN1, IN2, BIN1 or the gate; the beam's "
            "pull-up; the dead-man line's pull-down)", "generic 1/4 W", 0.05),
    BomLine("r4k7", "resistor 4.7 kΩ (pull-down on BIN2, `pins.rotator_in2`)",
            "generic 1/4 W", 0.05),
    BomLine("r2k2", "resistor 2.2 kΩ (pull-down on nSLEEP; wetting pull-ups on lid_closed, "
            "lid_closed_nc, lid_open)", "generic 1/4 W", 0.05),
    BomLine("r1k", "resistor 1 kΩ (the nSLEEP read-back)", "generic 1/4 W", 0.05),
    BomLine("r100k", "resistor 100 kΩ (the power contacts' bias and read-back gates)",
            "generic 1/4 W", 0.05),
    BomLine("r1m", "resistor 1 MΩ (the read-back gates' pull-downs)", "generic 1/4 W", 0.05),
    BomLine("caps", "capacitor 100 nF ceramic (VM, each motor, each Hall switch)", "generic",
            0.10),
    BomLine("caps_bulk", "capacitor 470 µF 16 V electrolytic (VM)", "generic", 0.10),
    BomLine("battery", "3×C battery holder with switch (motor supply, 4.5 V), or the shell's "
            "own box", "generic 3×C holder with switch and leads", 2.50, qty=1),
    BomLine("fuse", "polyfuse at the battery's + terminal (protects the wiring against a "
            "short; holds 2 A, trips at 4 A, so not a stall)", "Littelfuse RXEF200", 0.50),
    BomLine("stripboard", "stripboard, Dupont jumpers, JST-XH connectors, heat-shrink",
            "generic", 5.00, qty=1),
    BomLine("oneshot", "optional dead-man enable: retriggerable one-shot ([power.md](power.md))",
            "TI TPUL2G123 (SOIC-16)", 1.00, optional="dead-man"),
    BomLine("oneshot_adapter", "optional dead-man enable: SOIC-16 to DIP adapter board",
            "generic SOIC-16 adapter", 0.50, qty=1, optional="dead-man"),
    BomLine("oneshot_rc", "optional dead-man enable: Rext 39 kΩ 1 %",
            "generic 1/4 W metal film", 0.05, optional="dead-man"),
    BomLine("oneshot_cext", "optional dead-man enable: Cext 1 µF film, 5 % (not X7R ceramic: "
            "it drifts with voltage and temperature)", "WIMA MKS2 1 µF 63 V", 0.40,
            optional="dead-man"),
    BomLine("oneshot_decoupling", "optional dead-man enable: 100 nF decoupling at the "
            "one-shot's VCC", "generic ceramic", 0.10, optional="dead-man"),
)


def bom_quantities() -> dict[str, int]:
    """How many of each BOM line the drawn unit takes: every pin wired (``wired_pins``),
    the rotator on the bridge, and option B's parts counted from its own build."""
    counts: dict[str, int] = {}
    for build in (Build(), Build(rotator="mosfet")):
        unit = circuit(wired_pins(), build)
        for p in unit.parts.values():
            if not p.bom:
                continue
            here = sum(1 for q in unit.parts.values() if q.bom == p.bom)
            counts[p.bom] = max(counts.get(p.bom, 0), here)
    # Option B's MOSFET replaces BIN1's channel: one more AO3400A than the bridge build has.
    for line in BOM:
        if line.qty:
            counts[line.key] = line.qty
    return counts


def bom_totals(qty: dict[str, int] | None = None) -> tuple[float, float]:
    """The BOM's total, USD, and the part of it that the optional dead-man parts are."""
    qty = bom_quantities() if qty is None else qty
    total = sum(qty.get(line.key, 0) * line.unit_usd for line in BOM)
    extra = sum(qty.get(line.key, 0) * line.unit_usd for line in BOM
                if line.optional == "dead-man")
    return total, extra


def _model(key: str) -> str:
    """The part number a BOM line's example names first (``Omron SS-01GL (...)``: SS-01GL)."""
    example = next(line.example for line in BOM if line.key == key)
    words = example.split(" (")[0].split()
    return words[-1]


def readme_parts_text() -> str:
    """The README's summary of the parts and their price: the BOM's lines and total."""
    qty = bom_quantities()
    total, extra = bom_totals(qty)
    return ("- The parts in [hardware/bom.md](hardware/bom.md): a DRV8833 or TB6612FNG motor "
            "driver, a MAX98357A amplifier, an IR break-beam "
            f"pair, {qty['sensing']} gold-contact microswitches the firmware reads "
            f"({_model('sensing')}: lid closed, lid fully open), {qty['power_contact']} power "
            f"contacts with a DC rating, one in each motor's lead ({_model('power_contact')}: "
            f"the lid shut closes the roller's, the lid fully open the rotator's), "
            f"{qty['hall']} Hall switches ({_model('hall')}) and {qty['magnets']} magnets, "
            f"{qty['mosfet']} {_model('mosfet')} MOSFETs, resistors and "
            "capacitors, a battery box for the motors (the toy's own 3×C). About "
            f"{total:.2f} USD with the Pi, {total - extra:.2f} USD without the optional "
            "dead-man parts.\n")


def fit_notes_text() -> str:
    """The notes on fitting parts (``Part.fit``), each under its reference and BOM model, as
    hardware/fitting.md and bom.md both show them."""
    unit = circuit(wired_pins())
    lines = [f"- **{p.ref}**, the {p.name} ({p.value or _model(p.bom)}): {p.fit}."
             for p in unit.parts.values() if p.fit]
    return "\n".join(lines) + "\n"


def bom_table() -> str:
    """hardware/bom.md's parts list, with the quantities the circuit counts."""
    qty = bom_quantities()
    rows = ["| # | part | example part number | qty | unit price | line |",
            "|---|---|---|---|---|---|"]
    deadman: list[int] = []
    for n, line in enumerate(BOM, start=1):
        item = line.item
        if line.optional and line.optional != "dead-man":
            item = f"{item} (only {line.optional})"
        if line.optional == "dead-man":
            deadman.append(n)
        q = qty.get(line.key, 0)
        rows.append(f"| {n} | {item} | {line.example} | {q} | {line.unit_usd:.2f} | "
                    f"{q * line.unit_usd:.2f} |")
    total, extra = bom_totals(qty)
    rows.append("")
    rows.append(f"**Total: about {total:.2f} USD**, Pi included, the optional dead-man parts "
                f"(lines {deadman[0]}–{deadman[-1]}, {extra:.2f} USD) included: about "
                f"{total - extra:.2f} USD without them (option B's diode, line "
                f"{next(n for n, b in enumerate(BOM, 1) if b.key == 'schottky')}, is counted "
                "in both: it replaces nothing in the parts list).")
    return "\n".join(rows) + "\n"


def pinout_table() -> str:
    """pinout.md's "Launcher parts": every pin wired by default."""
    rows = ["| part | config key | BCM | header pin | power-on pull | direction | wiring |",
            "|---|---|---|---|---|---|---|"]
    for r in PIN_ROLES:
        if r.default is None:
            continue
        rows.append(f"| {r.part} | `pins.{r.key}` | {r.default} | {header_pin(r.default)} | "
                    f"{power_on_pull(r.default)} | {_direction(r)} | {r.wiring} |")
    return "\n".join(rows) + "\n"


def optional_table() -> str:
    """pinout.md's "Optional pins": off by default, each with the GPIO to put it on."""
    rows = ["| part | config key | default | suggested BCM | header pin | power-on pull | "
            "direction | wiring |", "|---|---|---|---|---|---|---|---|"]
    for r in PIN_ROLES:
        if r.default is not None:
            continue
        rows.append(f"| {r.part} | `pins.{r.key}` | -1 | {r.suggested} | "
                    f"{header_pin(r.suggested)} | {power_on_pull(r.suggested)} | "
                    f"{_direction(r)} | {r.wiring}; wire it {r.why_off} |")
    return "\n".join(rows) + "\n"


def readme_pins_table() -> str:
    """The README's short pinout: key, BCM (or -1 with the suggested pin), direction."""
    rows = ["| config key (`[pins]`) | BCM | connects to | direction |", "|---|---|---|---|"]
    for r in PIN_ROLES:
        bcm = str(r.default) if r.default is not None else \
            f"-1 (none; GPIO {r.suggested} suggested)"
        wiring = r.wiring.split(";")[0].replace("](power.md)", "](hardware/power.md)")
        rows.append(f"| `{r.key}` | {bcm} | {r.part}: {wiring} | {_direction(r)} |")
    return "\n".join(rows) + "\n"


def _direction(r: PinRole) -> str:
    return "in, pull-up" if r.direction == "in" else r.direction


def netlist_table(pins: Pins | None = None, build: Build | None = None) -> str:
    """Every net of a unit and its terminals, as a Markdown table (hardware/power.md)."""
    unit = circuit(pins or wired_pins(), build)
    rows = ["| net | GPIO | terminals | can be shorted to |", "|---|---|---|---|"]
    for net in unit.nets.values():
        gpio = f"{net.gpio} (`pins.{net.key}`)" if net.gpio is not None else ""
        rows.append(f"| `{net.name}` | {gpio} | {', '.join(net.terminals)} | "
                    f"{', '.join(net.reaches) or 'a rail'} |")
    return "\n".join(rows) + "\n"


def parts_table(pins: Pins | None = None, build: Build | None = None) -> str:
    """Every part of a unit: reference, what it is, value, failure modes the model knows."""
    unit = circuit(pins or wired_pins(), build)
    rows = ["| ref | part | value | failure modes |", "|---|---|---|---|"]
    for p in unit.parts.values():
        rows.append(f"| {p.ref} | {p.name} | {p.value} | "
                    f"{', '.join(m.replace('_', ' ') for m in p.failure_modes) or '–'} |")
    return "\n".join(rows) + "\n"


_BOOT_TARGETS = (  # (pin key, the terminal it drives, that input's low threshold, the part)
    ("motor_in1", "U1.AIN1", "vil_in", "DRV8833 AIN1"),
    ("motor_in2", "U1.AIN2", "vil_in", "DRV8833 AIN2"),
    ("motor_sleep", "U1.nSLEEP", "vil_sleep", "DRV8833 nSLEEP"),
    ("rotator", "U1.BIN1", "vil_in", "DRV8833 BIN1"),
    ("rotator_in2", "U1.BIN2", "vil_in", "DRV8833 BIN2"),
    ("deadman", "U2.B", "cmos", "TPUL2G123 B"),
    ("amp_enable", "U3.SD", "sd", "MAX98357A SD"),
)


SD_OFF = 0.16  # V: below it the MAX98357A is shut down (datasheet, SD_MODE)


def _volts(model: Model, terminal: str, world: World) -> float | None:
    node = model.node_of(terminal)
    return model.solve({}, world).volts.get(node) if node else None


def boot_levels_table() -> str:
    """What each must-stay-low input sees while the Pi boots (every GPIO an input with its
    power-on pull), at both ends of the Pi's pull range, in the unit with every pin wired
    (hal.circuit.wired_pins: dead-man fitted), and on a unit whose nSLEEP was left on the
    old GPIO 6 (pulled up) with its 2.2 kΩ pull-down missing."""
    from hal.circuit import circuit, header_pin, power_on_pull, wired_pins
    from hal.datasheets import DRIVERS, PI_PULL_OHMS

    spec = DRIVERS["DRV8833"]
    limits = {"vil_in": spec.vil_in, "vil_sleep": spec.vil_sleep, "cmos": CMOS_VIL,
              "sd": SD_OFF}
    rows = ["| pin | GPIO (header) | pulled at power-on | drives | volts there at power-on "
            "(Pi pulls 33 / 73 kΩ) | reads low below | |", "|---|---|---|---|---:|---:|---|"]

    def row(label: str, model: Model, key: str, terminal: str, limit: str, part: str) -> None:
        bcm = getattr(model.circuit.pins, key)
        seen = [_volts(model, terminal, World(pi="boot", pull_ohms=r)) for r in PI_PULL_OHMS]
        shown = " / ".join("floating" if v is None else f"{v:.2f} V" for v in seen)
        low = all(v is not None and v < limits[limit] for v in seen)
        rows.append(f"| {label} | {bcm} ({header_pin(bcm)}) | {power_on_pull(bcm)} | {part} | "
                    f"{shown} | {limits[limit]:g} V | {'low' if low else '**not low**'} |")

    nsleep = "U1.nSLEEP"
    unit = Model(circuit(wired_pins()))
    for key, terminal, limit, part in _BOOT_TARGETS:
        if key == "motor_sleep":
            row("`motor_sleep` (CLR)", unit, key, "U2.CLR", "cmos", "TPUL2G123 CLR")
            row("nSLEEP (the one-shot's Q)", unit, key, nsleep, limit, part)
            continue
        row(f"`{key}`", unit, key, terminal, limit, part)
    from dataclasses import replace as _replace

    old = Model(circuit(_replace(wired_pins(), motor_sleep=6, home=25, sleep_sense=None,
                                 deadman=None)),
                PartFailure("R3", "open"))
    row("`motor_sleep` on GPIO 6, no pull-down (before)", old, "motor_sleep", nsleep,
        "vil_sleep", "DRV8833 nSLEEP")
    return "\n".join(rows) + "\n"


def readback_table() -> str:
    """The read-backs' levels at the Pi (its pull-up at both ends of its range): the power
    contacts' with the driver asleep, nSLEEP's driven and let go."""
    from hal.circuit import circuit, default_pins
    from hal.datasheets import PI_PULL_OHMS

    pins = default_pins()
    sound = Model(circuit(pins))
    rows = ["| read-back | state | volts at the GPIO (Pi pulls 33 / 73 kΩ) | the Pi reads |",
            "|---|---|---:|---|"]

    def row(label: str, state: str, model: Model, key: str, world: World,
            levels: Mapping[int, float]) -> None:
        bcm = getattr(pins, key)
        seen = [model.solve(levels, replace(world, pull_ohms=r)) for r in PI_PULL_OHMS]
        volts = [s.volts.get(model.node_of(f"PI.GPIO{bcm}") or "") for s in seen]
        reads = {s.reads[bcm] for s in seen}
        shown = " / ".join("floating" if v is None else f"{v:.2f} V" for v in volts)
        rows.append(f"| {label} | {state} | {shown} | "
                    f"{'/'.join('high' if r else 'low' for r in sorted(reads))} |")

    asleep = {pins.motor_sleep: 0.0}
    awake = {pins.motor_sleep: 1.0}
    row("`power_contact_sense`", "lid shut: contact closed, driver asleep", sound,
        "power_contact_sense", World(lid="closed"), asleep)
    row("`power_contact_sense`", "lid ajar: contact open, driver asleep", sound,
        "power_contact_sense", World(lid="ajar"), asleep)
    row("`power_contact_sense`", "lid ajar, contact welded", Model(
        circuit(pins), PartFailure("S3", "welded")), "power_contact_sense", World(lid="ajar"),
        asleep)
    for lid, state in (("full", "lid fully open: contact closed, driver asleep"),
                       ("ajar", "lid ajar: contact open, driver asleep")):
        row("`rotator_contact_sense`", state, sound, "rotator_contact_sense", World(lid=lid),
            asleep)
    row("`rotator_contact_sense`", "lid ajar, contact welded", Model(
        circuit(pins), PartFailure("S4", "welded")), "rotator_contact_sense",
        World(lid="ajar"), asleep)
    row("`sleep_sense`", "nSLEEP driven high", sound, "sleep_sense", World(), awake)
    row("`sleep_sense`", "nSLEEP driven low", sound, "sleep_sense", World(), asleep)
    cut = Model(circuit(pins), NetOpen("motor_sleep", 1))
    row("`sleep_sense`", "motor_sleep's wire off (the pull-down holds nSLEEP)", cut,
        "sleep_sense", World(), awake)
    lines = "\n".join(rows) + "\n"
    # And what that wire off leaves at the driver's pin, against its VIL.
    v = [cut.solve(awake, World(pull_ohms=r)).volts.get(cut.node_of("U1.nSLEEP") or "")
         for r in PI_PULL_OHMS]
    shown = " / ".join(f"{x:.2f} V" for x in v if x is not None)
    return lines + (f"\nWith that wire off, nSLEEP itself sits at {shown} (the read-back's "
                    f"pull-up against the 2.2 kΩ pull-down), under the driver's VIL of "
                    f"{circuit(pins).driver.vil_sleep:g} V.\n")
