"""The launcher as a game sees it: the profiles games ask for, and three launchers.

A game declares what it needs a press to do (a ``Profile``): Flip Attack presses its luck,
classic UNO wants exactly one card per press (``dealer``), UNO Flip one card per press and
lid-cycle flips (``uno-flip``), and a deal wants N cards a press (``deal N``). The table
shell calls ``launcher.use(profile)`` before the first press; a launcher that cannot give
that behaviour raises ``ProfileUnsupported`` naming the profile. ``DirectLauncher`` models
press-your-luck and ``DirectDealer`` the fixed-count profiles. The real firmware on the
simulated launcher, under any profile the firmware has, is ``OnFirmware``: its one
implementation, ``launcher.sim.games.FirmwareLauncher``, lives beside the simulator, which
the games never import (a run hands its maker in: ``base.Run.firmware``).

Cards are opaque tokens to a launcher: Flip Attack loads ``Card`` objects, the table
engine of the other games loads small integers (indexes into its deck).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from launcher.core import config
from launcher.core.config import Luck, SideLuck
from launcher.core.errors import LauncherError
from launcher.core.luck import DryStreak
from launcher.core.profiles import (  # noqa: F401  (the games' names for them)
    DEALER,
    FLIP_ATTACK,
    GIN,
    UNO_FLIP,
    Profile,
    deal_profile,
    parse_profile,
)
from launcher.games.base import LauncherFault
from launcher.games.cards import MILD, WILD, Card, other_side

if TYPE_CHECKING:
    from launcher.games.base import GameState


class ProfileUnsupported(LauncherError, ValueError):
    """The launcher cannot behave as the game asks (a profile it does not have)."""


class Launcher(Protocol):
    """What the rule engine's shell needs from a launcher: the draw pile that shoots."""

    @property
    def profile(self) -> Profile:
        """The behaviour a press has now."""
        ...

    def use(self, profile: Profile) -> None:
        """Behave as ``profile`` from the next press on; ProfileUnsupported if it cannot."""
        ...

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


class _Cartridge:
    """The cards of a direct launcher, back of the cartridge first (a press pops the front)."""

    _stack: list[Any]

    @property
    def cards_left(self) -> int:
        return len(self._stack)

    def load(self, cards: Sequence[Any]) -> None:
        self._stack[:0] = cards[::-1]

    def unload(self) -> list[Any]:
        cards = self.contents()
        self._stack = []
        return cards

    def contents(self) -> list[Any]:
        return self._stack[::-1]


class DirectLauncher(_Cartridge):
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
    def profile(self) -> Profile:
        return FLIP_ATTACK

    def use(self, profile: Profile) -> None:
        if profile != FLIP_ATTACK:
            raise ProfileUnsupported(f"DirectLauncher models press-your-luck only, not "
                                     f"{profile}: use DirectDealer")

    @property
    def side(self) -> str:
        return self._side

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


def shot_outcomes(side: SideLuck, dry_streak: int, held: int) -> list[tuple[int, float]]:
    """A press's chance outcomes, as ``DirectLauncher.press`` draws them: ``[(cards,
    probability)]`` at this dry streak, with ``held`` cards in the cartridge (a shot
    larger than that gives them all; an empty cartridge gives nothing)."""
    if side.sizes:
        held = min(held, max(side.sizes))
    return list(_outcomes(side, dry_streak, held))


@functools.lru_cache(maxsize=4096)
def _outcomes(side: SideLuck, dry_streak: int, held: int) -> tuple[tuple[int, float], ...]:
    """``shot_outcomes``, worked out once for each (side, streak, cards held up to the
    largest shot: more than that changes nothing)."""
    return tuple(_work_out(side, dry_streak, held))


def _work_out(side: SideLuck, dry_streak: int, held: int) -> list[tuple[int, float]]:
    if held <= 0:
        return [(0, 1.0)]
    hazard = side.hazard
    fire = hazard[dry_streak] if dry_streak < len(hazard) else hazard[-1]
    out: dict[int, float] = {}
    if fire < 1.0:
        out[0] = 1.0 - fire
    total = sum(side.weights)
    for size, weight in zip(side.sizes, side.weights, strict=True):
        if weight > 0 and fire > 0:
            n = min(size, held)
            out[n] = out.get(n, 0.0) + fire * weight / total
    return sorted(out.items())


class DirectDealer(_Cartridge):
    """A fast launcher that shoots a fixed number of cards per press: the ``dealer``,
    ``uno-flip`` and ``deal N`` profiles, with no pins, no time and no luck.

    ``sides`` names the cartridge's two halves as the game calls them (the front first:
    ``("light", "dark")`` for UNO Flip); a flip turns the cartridge and leaves the order of
    the cards as it was, like the real cartridge. With a profile that does not flip, a
    flip is refused (the game asked for something it did not declare).
    """

    def __init__(self, profile: Profile = DEALER, sides: tuple[str, str] = (MILD, WILD)) -> None:
        self._sides = sides
        self._up = 0
        self._stack: list[Any] = []  # back of the cartridge first: the front is popped
        self.presses = 0
        self.flips = 0
        self._profile = DEALER
        self.use(profile)

    @property
    def profile(self) -> Profile:
        return self._profile

    def use(self, profile: Profile) -> None:
        if profile.per_press is None:
            raise ProfileUnsupported("DirectDealer shoots fixed counts, not press-your-luck "
                                     f"({profile}): use DirectLauncher")
        self._profile = profile
        self._n = profile.per_press

    @property
    def side(self) -> str:
        return self._sides[self._up]

    def press(self) -> list[Any]:
        self.presses += 1
        stack = self._stack
        if self._n == 1:  # the common case, kept short: one card, or none when empty
            return [stack.pop()] if stack else []
        n = min(self._n, len(stack))
        if not n:
            return []
        out = stack[-n:]
        del stack[-n:]
        out.reverse()
        return out

    def flip(self) -> str:
        if not self._profile.flips:
            raise ProfileUnsupported(f"the {self._profile} profile does not flip")
        self._up ^= 1
        self.flips += 1
        return self._sides[self._up]


class OnFirmware(Launcher, Protocol):
    """A launcher that is the real firmware on the simulated launcher: ``use`` switches its
    profile as the console's ``profile NAME`` does (docs/games.md, "Launcher profiles"); it
    keeps the faults the firmware reported, and holds a rig to ``close``."""

    @property
    def faults(self) -> list[dict[str, Any]]: ...

    def close(self) -> None: ...


class LauncherChance:
    """A launcher as a game's chance player (``base.CHANCE``): it answers each shot's
    chance node with what the launcher shot. Any ``Launcher`` will do: the direct luck
    model (``DirectLauncher``), a fixed-count dealer (``DirectDealer``), or the firmware on
    the simulated launcher (``launcher.sim.games.FirmwareLauncher``).

    Before a press it does to the launcher what the game did since the last one: the lid
    cycles the game asked for (``GameState.lid_cycles``; a cycle starts a new dry streak),
    the cartridge turned to the state's side, and the cartridge made to hold what the
    state's holds, in order (a deal, a reload, a reshuffle load it afresh); then it presses
    once and answers the number of cards shot. A shot that is not one of the state's
    outcomes, or not the cards the state has next, is a ``LauncherFault``: the game cannot
    go on with cards it does not know.
    """

    def __init__(self, launcher: Launcher, profile: Profile, sides: tuple[str, str]) -> None:
        self.launcher = launcher
        self.sides = sides
        self.cycles = 0  # the state's lid cycles done on the launcher
        self.shot: list[Any] = []  # the cards of the last press
        launcher.use(profile)

    def answer(self, state: GameState) -> int:
        """The chance outcome of ``state``'s press (a chance node): the cards shot
        (``shot``), counted."""
        launcher = self.launcher
        cycles = state.lid_cycles()
        for _ in range(cycles - self.cycles):
            launcher.flip()
        self.cycles = cycles
        side = self.sides[state.launcher_side()]
        for _ in range(2):
            if launcher.side == side:
                break
            launcher.flip()
        if launcher.side != side:
            raise LauncherFault(f"cannot turn the cartridge to {side}")
        want = state.stack[::-1]  # the next card first
        if launcher.contents() != want:
            launcher.unload()
            if want:
                launcher.load(want)
        got = self.shot = launcher.press()
        n = len(got)
        outcomes = [a for a, _ in state.chance_outcomes()]
        if got != want[:n] or n not in outcomes:
            raise LauncherFault(f"the launcher shot {n} cards, not one of the game's outcomes "
                                f"{outcomes} in its order")
        return n
