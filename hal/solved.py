"""What one solve of the circuit takes and gives (hal/electrical.py): the ``World`` outside the
Pi's pins, each motor's ``Drive``, and the ``Solution``: every node's voltage (``Volts``), what
the Pi reads, the driver's state and protections, and what overstresses the Pi's pads
(``Stress``)."""

from __future__ import annotations

from array import array
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from hal.circuit import V3, V5, VM_NOMINAL
from hal.datasheets import (
    CLAMP_OHMS,
    CLAMP_VF,
    PAD_MAX_AMPS,
    PI_OUTPUT_OHMS,
    PI_PULL_TYPICAL,
    RAIL_SINK_MAX_AMPS,
)

# --- what the world is doing -------------------------------------------------------------

LID_POSITIONS = ("closed", "lifting", "ajar", "full")


@dataclass(frozen=True)
class World:
    """Everything outside the Pi's pins that the circuit depends on.

    ``lid``: "closed", "lifting" (the sensing SPDT between its contacts, the power contact
    already open), "ajar" or "full". ``edges``: a rising edge reached the one-shot's B
    input within its pulse width; ``latched``: one did since CLR last went low (what a
    one-shot without its timing resistor holds on). ``pi``: "running" (the firmware's pins
    claimed: outputs as given, inputs with their pull-up), "boot" (every GPIO an input with
    its power-on pull) or "off". ``vm``: the pack's EMF; ``v3``/``v5``: the Pi's rails.
    """

    lid: str = "closed"
    button: bool = False
    beam_blocked: bool = False
    home: bool = True  # a magnet at the home switch
    yellow_back: bool = True
    edges: bool = False
    latched: bool = False
    pi: str = "running"
    vm: float = VM_NOMINAL
    v3: float = V3
    v5: float = V5
    pull_ohms: float = PI_PULL_TYPICAL

    def __post_init__(self) -> None:
        if self.lid not in LID_POSITIONS:
            raise ValueError(f"lid {self.lid!r}: one of {', '.join(LID_POSITIONS)}")
        if self.pi not in ("running", "boot", "off"):
            raise ValueError(f"pi {self.pi!r}: running, boot or off")


@dataclass(frozen=True)
class Drive:
    """What a motor's terminals did over a PWM period: the time shares driven forward and
    back (each scaled by the voltage across it over the pack's), braked (both terminals
    held together) and let go; ``volts`` the mean voltage across it."""

    forward: float = 0.0
    reverse: float = 0.0
    brake: float = 0.0
    volts: float = 0.0

    @property
    def speed(self) -> float:
        """Signed: + ahead, - back, 0 braked or coasting."""
        return round(self.forward - self.reverse, 4)

    @property
    def coast(self) -> float:
        return max(0.0, 1.0 - self.forward - self.reverse - self.brake)


class Stress(NamedTuple):
    """A current past what the Pi takes unharmed (hal/datasheets.py): through one of its
    pads (``where`` "GPIO 12 (motor_in1)"), or into its 3.3 V rail from the copper."""

    where: str
    what: str  # "sinking", "sourcing", "into its clamp to 3V3", ...
    amps: float
    limit: float

    def describe(self) -> str:
        return (f"{self.where} {self.what} {self.amps * 1e3:,.0f} mA (past "
                f"{self.limit * 1e3:g} mA)")


class Pad(NamedTuple):
    """One of the Pi's wired pads, solved: the level it drives (None: an input, or a Pi not
    running) and its clamp diode conducting (True to its 3.3 V rail, False to ground)."""

    where: str  # "GPIO 12 (motor_in1)"
    volts: float
    drives: bool | None
    clamp: bool | None


def pi_stress(pads: Iterable[Pad], v3: float, fed: float) -> tuple[Stress, ...]:
    """Every current past what the Pi takes (hal/datasheets.py): a pad sourcing or sinking
    past its 16 mA, one held past a rail through its clamp diode by as much, the copper
    feeding the 3.3 V rail (``fed``, A) more than the Pi's own loads can take."""
    out = []
    for p in pads:
        if p.drives is not None:
            amps = ((v3 if p.drives else 0.0) - p.volts) / PI_OUTPUT_OHMS
            if abs(amps) > PAD_MAX_AMPS:
                what = (f"{'sourcing' if amps > 0 else 'sinking'}, driven "
                        f"{'high' if p.drives else 'low'},")
                out.append(Stress(p.where, what, abs(amps), PAD_MAX_AMPS))
        if p.clamp is not None:
            past = (p.volts - v3 - CLAMP_VF) if p.clamp else (-CLAMP_VF - p.volts)
            if past / CLAMP_OHMS > PAD_MAX_AMPS:
                what = f"held past its {'3.3 V rail' if p.clamp else 'ground'}, into its clamp"
                out.append(Stress(p.where, what, past / CLAMP_OHMS, PAD_MAX_AMPS))
    if fed > RAIL_SINK_MAX_AMPS:
        out.append(Stress("the Pi's 3.3 V rail", "fed from the copper", fed, RAIL_SINK_MAX_AMPS))
    return tuple(out)


@dataclass(frozen=True)
class Solution:
    """One solved state: ``volts`` of every node (None: floating), ``reads`` the level each
    of the Pi's inputs reads (1 high, 0 low; only while the Pi runs), the two motors'
    ``roller`` and ``rotator`` drives, ``awake`` whether the driver's bridges are enabled,
    ``b_high`` the one-shot's B input, and ``undefined``: the places where a voltage sat
    between a part's thresholds (the model then takes the worse reading)."""

    volts: Mapping[str, float | None]
    reads: Mapping[int, int]
    roller: Drive
    rotator: Drive
    awake: bool
    b_high: bool
    q_high: bool
    undefined: frozenset[str] = field(default_factory=frozenset)
    # The level each of ``PAD_CHECKED``'s outputs reads at the Pi's own pad (1 high, 0 low;
    # only while the Pi runs): what it is driven to, unless something stronger holds it.
    pads: Mapping[int, int] = field(default_factory=dict)
    # Every current past the Pi's limits (``Stress``): a Pi that meets one is damaged.
    stress: tuple[Stress, ...] = ()
    # The driver's own protections acting: "OCP A" (its overcurrent protection holding
    # bridge A off), "OCP B", "TSD" (its thermal shutdown, every output off).
    protection: frozenset[str] = frozenset()

    def net(self, name: str) -> float | None:
        return self.volts.get(name)


class Volts(Mapping[str, "float | None"]):
    """Every node's voltage (None: floating), kept as one array against a tuple of node
    names that every solution of a model shares: a cached solution costs a few hundred
    bytes, not a dictionary of floats."""

    __slots__ = ("_index", "_values")

    def __init__(self, index: Mapping[str, int], values: array) -> None:
        self._index = index
        self._values = values

    def __getitem__(self, name: str) -> float | None:
        v = self._values[self._index[name]]
        return None if v != v else v  # NaN: floating

    def get(self, name: str, default: float | None = None) -> float | None:  # type: ignore[override]
        i = self._index.get(name)
        if i is None:
            return default
        v = self._values[i]
        return None if v != v else v

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)


class Recent(OrderedDict[tuple, "Solution"]):
    """The newest ``size`` solutions (least recently used out first): once full, its size
    and its memory stay as they are, however long the run."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def find(self, key: tuple) -> Solution | None:
        found = self.get(key)
        if found is not None:
            self.move_to_end(key)
        return found

    def keep(self, key: tuple, value: Solution) -> Solution:
        self[key] = value
        if len(self) > self.size:
            self.popitem(last=False)
        return value
