"""Press your luck: hazard curves and shot sizes (pure, seeded)."""

from __future__ import annotations

import random
from bisect import bisect

from launcher.core.config import SideLuck


def shot_size(side: SideLuck, rng: random.Random) -> int:
    """Draw how many cards a shot on this side throws.

    The same draw as ``rng.choices(side.sizes, side.weights)[0]``, from the same one
    ``random()`` (so a seed replays as before), without its Python-level checks: the
    config has checked the weights, and this runs inside every shooting press.
    """
    cum = side.cum_weights
    return side.sizes[bisect(cum, rng.random() * (cum[-1] + 0.0), 0, len(cum) - 1)]


def draw(side: SideLuck, dry_streak: int, rng: random.Random) -> int:
    """One press: 0 for a dry press, else the number of cards to shoot.

    ``dry_streak`` is the number of dry presses since the last shot; the hazard curve
    reaches 1.0 at its last entry, so the streak can never exceed ``side.max_dry``.
    """
    return DryStreak(dry_streak).draw(side, rng)


def shot_rate(side: SideLuck) -> float:
    """The long-run share of presses that shoot (1 / expected presses per shot)."""
    survive = 1.0
    presses = 0.0
    for p in side.hazard:
        presses += survive
        survive *= 1.0 - p
    return 1.0 / presses


def mean_shot(side: SideLuck) -> float:
    total = sum(side.weights)
    return sum(s * w for s, w in zip(side.sizes, side.weights, strict=True)) / total




class DryStreak:
    """Dry presses since the last shot: the one home of the streak's rules.

    The firmware's state machine and the games' direct launcher model both keep one:
    a dry press adds one, a shot ends the streak, and a flip starts the new side afresh.
    """

    __slots__ = ("count",)

    def __init__(self, count: int = 0) -> None:
        self.count = count

    def draw(self, side: SideLuck, rng: random.Random) -> int:
        """One press's luck at this streak: 0 for dry, else the cards to shoot. A streak
        past the hazard curve's end reads its last entry (1.0: it shoots).

        ``draw`` is this at a given streak. The hazard is indexed here, without ``min`` and
        ``max_dry``: every press runs it, and at human gaps each call costs cache misses
        (``python -m bench.press --cpu``).
        """
        hazard, n = side.hazard, self.count
        if rng.random() >= (hazard[n] if n < len(hazard) else hazard[-1]):
            return 0
        return shot_size(side, rng)

    def pressed(self, drawn: int) -> None:
        """Record the outcome of a press that drew ``drawn`` cards."""
        self.count = self.count + 1 if drawn == 0 else 0

    def flipped(self) -> None:
        self.count = 0

    def __repr__(self) -> str:
        return f"DryStreak({self.count})"
