"""What the machine remembers between events: the input levels, the shot under way, and
the memory the shell saves (side, inventory, counters, the fault)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from launcher.core.luck import DryStreak


@dataclass(slots=True)
class Inputs:
    """The last debounced level of every input."""

    lid_closed: bool = True
    lid_full: bool = False
    beam_blocked: bool = False
    home: bool = True
    yellow_back: bool = True


@dataclass(slots=True)
class Shot:
    target: int
    seen: int = 0
    timed: bool = False


class Owed(StrEnum):
    """The turn the cartridge owes: the machine's second region, beside its state, since it
    lasts through the lid moving, a sleep and a console motor run (``Machine.turn_owed``)."""

    NOTHING = "nothing"
    # A turn stopped by the lid leaving fully open before the cartridge left its detent: the
    # next home edge is no arrival. It goes on at the next full opening.
    ON_DETENT = "on_detent"
    # Stopped (or found at start) between detents: the next detent it reaches is the arrival.
    OFF_DETENT = "off_detent"


@dataclass(slots=True)
class Memory:
    """What the machine keeps between events; ``persisted`` part survives restarts."""

    side: str = "mild"
    streak: DryStreak = field(default_factory=DryStreak)
    inventory: int | None = None  # None: unknown (not loaded through the console)
    counters: dict[str, int] = field(default_factory=dict)
    last_press: float = float("-inf")
    shot: Shot | None = None
    expected_side: str | None = None  # where a rotation should land (None: homing)
    # A turn that must finish before the unit shoots: stopped by the lid leaving fully open,
    # or the cartridge found between detents; it goes on at the next full opening.
    owed: Owed = Owed.NOTHING
    rotation_armed: bool = True
    creep_back: bool = True  # the next creep towards home goes backwards (else ahead)
    fault: str | None = None
    # The latched faults not yet proven gone, in the order found (state ``latched``; kept in
    # the state file), and the steps of each one's proof its check has passed since.
    latched: list[str] = field(default_factory=list)
    proof: dict[str, list[str]] = field(default_factory=dict)

    pairing: bool = False  # a web pairing window is open: the LED shows it (not saved)
    debug_run: float | None = None  # when the console's motor run started
    card_in_slot: bool = False  # a card the roller pushed into the beam, not yet counted out

    @property
    def dry_streak(self) -> int:
        return self.streak.count

    def count(self, name: str, n: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + n


def other(side: str) -> str:
    return "wild" if side == "mild" else "mild"
