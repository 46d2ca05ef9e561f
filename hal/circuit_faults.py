"""A circuit's single faults: a net open at a point of its wire (``NetOpen``), a net shorted
to a rail (``NetShort``), a part failing in one of its modes (``PartFailure``;
``hal.circuit.FAILURE_MODES``), one of the Pi's pins damaged (``PinDamaged``: what a fault
that overstresses a pad leaves), or one mechanical cause reaching several parts
(``CommonCause``). ``single_faults(circuit)`` lists every one of a unit; the electrical
model (hal/electrical.py) injects one at a time, and the circuit campaign (bench/circuit.py)
runs each against the firmware.
"""

from __future__ import annotations

from dataclasses import dataclass

from hal.circuit import COMMON_CAUSES, Circuit
from hal.datasheets import PIN_DAMAGE_MODES, STUCK_OHMS


@dataclass(frozen=True)
class NetOpen:
    """A net's wire broken before its terminal number ``at`` (``Net.terminals``): the
    terminals from there on lose the ones before. On a rail, only that terminal's own
    connection is lost (a part's supply or ground pin)."""

    net: str
    at: int

    def describe(self, c: Circuit) -> str:
        terms = c.nets[self.net].terminals
        if c.nets[self.net].rail or self.net in ("PGND", "VM"):
            return f"{self.net} open at {terms[self.at]}"
        return f"{self.net} open between {terms[self.at - 1]} and {terms[self.at]}"


@dataclass(frozen=True)
class NetShort:
    """A net shorted to a rail: "GND", "3V3", "VM" (the motor supply) or "5V" (a GPIO
    beside the header's 5 V pins: ``hal.circuit.beside_5v``)."""

    net: str
    rail: str

    def describe(self, c: Circuit) -> str:
        return f"{self.net} shorted to {self.rail}"


@dataclass(frozen=True)
class PartFailure:
    """A part failing in one of its modes (``hal.circuit.FAILURE_MODES``)."""

    ref: str
    mode: str

    def describe(self, c: Circuit) -> str:
        return f"{self.ref} ({c.parts[self.ref].name}): {self.mode.replace('_', ' ')}"


@dataclass(frozen=True)
class PinDamaged:
    """One of the Pi's GPIO pins damaged (``hal.datasheets.PIN_DAMAGE_MODES``): its driver
    and its pull dead, held to a rail by a protection diode failed short (``STUCK_OHMS``).
    Its input still reads the pin: "stuck_high" reads high and drives nothing, as does
    "stuck_low" low."""

    gpio: int
    mode: str

    def describe(self, c: Circuit) -> str:
        key = c.nets[c.gpio_net(self.gpio) or ""].key
        rail, level = ("3V3", "high") if self.mode == "stuck_high" else ("GND", "low")
        return (f"GPIO {self.gpio} ({key}) damaged: stuck {level} (its driver and pull dead, "
                f"a protection diode to {rail} failed short, about {STUCK_OHMS:g} Ω)")


@dataclass(frozen=True)
class CommonCause:
    """One mechanical cause reaching several parts (``hal.circuit.COMMON_CAUSES``)."""

    name: str

    def describe(self, c: Circuit) -> str:
        return COMMON_CAUSES[self.name]


Fault = NetOpen | NetShort | PartFailure | PinDamaged | CommonCause


def single_faults(c: Circuit) -> list[Fault]:
    """Every single fault of a unit: each net open at each point of its wire and shorted to
    each rail it can reach; each part in each of its failure modes; each of the Pi's wired
    pins damaged, each way; each common cause."""
    out: list[Fault] = []
    for net in c.nets.values():
        if net.rail or net.name in ("PGND", "VM"):
            # A rail (or the motor supply, or its ground) opens at one part's pin.
            out += [NetOpen(net.name, i) for i, t in enumerate(net.terminals)
                    if not t.startswith("PI.")]
        else:
            out += [NetOpen(net.name, i) for i in range(1, len(net.terminals))]
        out += [NetShort(net.name, rail) for rail in net.reaches]
    for net in c.nets.values():
        if net.gpio is not None:
            out += [PinDamaged(net.gpio, mode) for mode in PIN_DAMAGE_MODES]
    for part in c.parts.values():
        out += [PartFailure(part.ref, mode) for mode in part.failure_modes]
    out += [CommonCause(name) for name in COMMON_CAUSES]
    return out


def check_fault(c: Circuit, fault: Fault) -> None:
    """Raise ValueError if ``fault`` does not name this circuit's nets, parts or modes."""
    if isinstance(fault, NetOpen | NetShort):
        if fault.net not in c.nets:
            raise ValueError(f"no net {fault.net!r}")
        if isinstance(fault, NetOpen) and not 0 <= fault.at < len(c.nets[fault.net].terminals):
            raise ValueError(f"{fault.net} has no terminal {fault.at}")
        if isinstance(fault, NetShort) and fault.rail not in ("GND", "3V3", "VM", "5V"):
            raise ValueError(f"rail {fault.rail!r}: GND, 3V3, VM or 5V")
        if isinstance(fault, NetShort) and fault.rail == "5V" and (
                "5V" not in c.nets[fault.net].reaches):
            raise ValueError(f"rail '5V': {fault.net} is not beside the header's 5 V pins")
    elif isinstance(fault, PartFailure):
        if fault.ref not in c.parts:
            raise ValueError(f"no part {fault.ref!r}")
        if fault.mode not in c.parts[fault.ref].failure_modes:
            raise ValueError(f"{fault.ref} has no failure mode {fault.mode!r}: "
                             + ", ".join(c.parts[fault.ref].failure_modes))
    elif isinstance(fault, PinDamaged):
        net = c.gpio_net(fault.gpio)
        if net is None or c.nets[net].gpio is None:
            raise ValueError(f"GPIO {fault.gpio} is not one of this unit's pins")
        if fault.mode not in PIN_DAMAGE_MODES:
            raise ValueError(f"a pin's damage {fault.mode!r}: " + ", ".join(PIN_DAMAGE_MODES))
    elif fault.name not in COMMON_CAUSES:
        raise ValueError(f"no common cause {fault.name!r}")
