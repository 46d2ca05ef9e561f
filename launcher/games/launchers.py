"""The launcher as a game sees it, and two of them: a direct luck model and the firmware."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol

from launcher.core import config
from launcher.core.config import Luck, Settings
from launcher.core.luck import DryStreak
from launcher.games.cards import MILD, Card, other_side


class Launcher(Protocol):
    """What the rule engine's shell needs from a launcher: the draw pile that shoots."""

    @property
    def side(self) -> str:
        """The side facing the back of the unit (the side in play)."""
        ...

    @property
    def cards_left(self) -> int: ...

    def press(self) -> list[Card]:
        """Press the button once; the cards that shot out (often none)."""
        ...

    def flip(self) -> str:
        """Open the lid fully and close it again; the side now facing the back."""
        ...

    def load(self, cards: Sequence[Card]) -> None:
        """Put cards into the cartridge behind any already there (the first shoots first)."""
        ...

    def unload(self) -> list[Card]:
        """Take every card out of the cartridge."""
        ...

    def contents(self) -> list[Card]:
        """Every card the launcher holds, including any shot but not yet picked up."""
        ...


class DirectLauncher:
    """A fast model of the firmware's press-your-luck rules, with no pins and no time.

    It keeps the same ``DryStreak`` as the firmware's state machine (a shot or a flip ends
    the streak), draws from the same luck settings, and a press on an empty launcher draws
    nothing (the firmware plays its reload cue instead).
    """

    def __init__(self, luck_settings: Luck | None = None, rng: random.Random | None = None,
                 side: str = MILD) -> None:
        self.luck = luck_settings if luck_settings is not None else config.load().luck
        self.rng = rng if rng is not None else random.Random(self.luck.seed or 0)
        self._side = side
        self._stack: list[Card] = []  # back of the cartridge first: the front is popped
        self.streak = DryStreak()
        self.presses = 0
        self.shots = 0
        self.flips = 0

    @property
    def side(self) -> str:
        return self._side

    @property
    def cards_left(self) -> int:
        return len(self._stack)

    def press(self) -> list[Card]:
        self.presses += 1
        stack = self._stack
        if not stack:
            return []
        n = self.streak.draw(self.luck.side(self._side), self.rng)
        self.streak.pressed(n)
        if n == 0:
            return []
        self.shots += 1
        n = min(n, len(stack))
        out = stack[-n:]
        del stack[-n:]
        out.reverse()
        return out

    def flip(self) -> str:
        self._side = other_side(self._side)
        self.streak.flipped()
        self.flips += 1
        return self._side

    @property
    def dry_streak(self) -> int:
        return self.streak.count

    def load(self, cards: Sequence[Card]) -> None:
        self._stack[0:0] = reversed(cards)

    def unload(self) -> list[Card]:
        cards = self.contents()
        self._stack = []
        return cards

    def contents(self) -> list[Card]:
        return self._stack[::-1]


class FirmwareLauncher:
    """The real firmware on the simulated launcher (``launcher.sim.rig.SimRig``).

    It only does what a player does: press the button and pick up what the roller
    ejected, open and close the lid, put cards into the cartridge and tell the firmware
    how many (the ``load`` console command). Faults the firmware reports are kept.
    """

    def __init__(self, settings: Settings | None = None, seed: int = 0,
                 rig: Any = None) -> None:
        if rig is None:
            from launcher.sim.rig import SimRig

            rig = SimRig(settings=settings, seed=seed)
        self.rig = rig
        self.presses = 0
        self.flips = 0

    @property
    def faults(self) -> list[dict[str, Any]]:
        return self.rig.faults

    @property
    def side(self) -> str:
        return self.rig.side

    @property
    def cards_left(self) -> int:
        return len(self.rig.sim.cartridge)

    @property
    def inventory(self) -> int | None:
        """The firmware's own count of the cards in the cartridge (None: unknown)."""
        return self.rig.inventory

    def press(self) -> list[Card]:
        self.presses += 1
        return list(self.rig.press())

    def flip(self) -> str:
        self.flips += 1
        return self.rig.flip()

    def load(self, cards: Sequence[Card]) -> None:
        self.rig.load(list(cards))

    def unload(self) -> list[Card]:
        cards = list(self.rig.sim.unload()) + list(self.rig.sim.take())
        self.rig.load_inventory(0)
        return cards

    def contents(self) -> list[Card]:
        sim = self.rig.sim
        stuck = [] if sim.in_beam is None else [sim.in_beam]
        return list(sim.cartridge) + stuck + list(sim.tray)

    def close(self) -> None:
        self.rig.close()
