"""The launcher as a stock dispenser: one card per press, for games that keep a stock.

Gin Rummy (and any game with a face-down stock) needs the launcher to be a plain dispenser:
the shell loads the stock after the deal and takes exactly one card each time a player
draws from it. This module fixes that interface, ``StockDealer``, and holds the direct
implementation; a firmware-backed one plugs in unchanged.

The interface, for whoever writes the firmware-backed dealer
-------------------------------------------------------------

``load(cards)``
    Put ``cards`` into the cartridge behind whatever is there; ``cards[0]`` is dispensed
    first. The game calls it once per hand, right after the deal, with the whole stock.
    Cards are opaque objects to the dealer (Gin uses ints ``0..51``); the simulated
    cartridge (``hal/sim.py``) already carries any object. The firmware version also
    tells the firmware how many were loaded (the ``load`` console command).
``dispense() -> card``
    One draw from the stock: exactly one card, the next in load order. A firmware version
    presses the button under the one-card-per-press profile (no press-your-luck draw, no
    dry presses) and returns the single card the exit beam counted. Anything else (nothing
    came out, two cards, a fault) raises ``DealerFault``: the game cannot go on with a stock
    it does not know, so it must not guess.
``cards_left -> int``
    Cards still in the cartridge. The rules check it against their own count after every
    draw.
``unload() -> list``
    Take every card out (end of hand), in dispense order, leaving the dealer empty.
``close()``
    Release what the dealer holds (a firmware rig, its reactor); a no-op for direct ones.

``LauncherDealer`` is a launcher as the stock, under its ``gin`` profile
(``launcher.core.profiles.GIN``: one card a press, refused at two cards left): ``load`` =
``launcher.load``, ``dispense`` = one ``launcher.press()`` that must return exactly one
card, ``unload`` = ``launcher.unload()``, ``close`` = ``launcher.close()``. Given the
firmware on the simulated launcher (``launcher.sim.games.FirmwareLauncher``), it is the
stock as the firmware deals it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Protocol, TypeVar

from launcher.core.profiles import GIN
from launcher.games.base import LauncherFault
from launcher.games.launchers import OnFirmware

T = TypeVar("T")


class DealerFault(LauncherFault):
    """The dealer did not hand over exactly one card when the game drew one."""


class StockDealer(Protocol[T]):
    """A face-down stock that hands out one card per draw (see the module docstring)."""

    @property
    def cards_left(self) -> int: ...

    def load(self, cards: Sequence[T]) -> None: ...

    def dispense(self) -> T: ...

    def unload(self) -> list[T]: ...

    def close(self) -> None: ...


class DirectDealer(Generic[T]):
    """A list-backed stock: ``dispense`` pops the next card, with the counters a launcher has."""

    def __init__(self) -> None:
        self._stack: list[T] = []  # reversed: the next card is at the end, so a draw is a pop
        self.dispensed = 0
        self.loads = 0

    @property
    def cards_left(self) -> int:
        return len(self._stack)

    def load(self, cards: Sequence[T]) -> None:
        self._stack[0:0] = reversed(cards)
        self.loads += 1

    def dispense(self) -> T:
        if not self._stack:
            raise DealerFault("the stock is empty: nothing to dispense")
        self.dispensed += 1
        return self._stack.pop()

    def unload(self) -> list[T]:
        cards = self._stack[::-1]
        self._stack = []
        return cards

    def contents(self) -> list[T]:
        """The cards still held, next first (the game's conservation check reads it)."""
        return self._stack[::-1]

    def close(self) -> None:
        """Nothing to release."""


class LauncherDealer:
    """A launcher as the stock, under the ``gin`` profile (the firmware's, on the simulated
    launcher: ``launcher.sim.games.FirmwareLauncher``)."""

    def __init__(self, launcher: OnFirmware) -> None:
        self.launcher = launcher
        self.launcher.use(GIN)
        self.dispensed = 0

    @property
    def cards_left(self) -> int:
        return self.launcher.cards_left

    def load(self, cards: Sequence[Any]) -> None:
        self.launcher.load(cards)

    def dispense(self) -> Any:
        out = self.launcher.press()
        if len(out) != 1:
            faults = self.launcher.faults
            raise DealerFault(f"the firmware shot {len(out)} cards for one draw"
                              + (f" (fault {faults[-1]})" if faults else ""))
        self.dispensed += 1
        return out[0]

    def unload(self) -> list[Any]:
        return self.launcher.unload()

    def contents(self) -> list[Any]:
        return self.launcher.contents()

    def close(self) -> None:
        self.launcher.close()
