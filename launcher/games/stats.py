"""What every game's summary of simulated games shares: a tally of wins and hands (``Tally``,
under each game's own summary, which its package holds), the text helpers of the reports
``launcher simulate`` prints, and the significance tests ``launcher tune`` uses.

Nothing here imports a game.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

T = TypeVar("T", bound="Tally")


@dataclass
class Tally:
    """What every game's summary counts: games, hands, wins by seat, turns per hand, and the
    faults of the firmware (``--through-firmware``) by code."""

    # Fields that describe the run, not count it: ``merge`` keeps them as they are.
    FIXED: ClassVar[tuple[str, ...]] = ("bots",)
    PER_SEAT: ClassVar[tuple[str, ...]] = ("game_wins", "hand_wins")  # added seat by seat

    bots: list[str]
    games: int = 0
    hands: int = 0
    unfinished: int = 0  # hands stopped at a turn limit
    game_wins: list[int] = field(default_factory=list)
    hand_wins: list[int] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)  # per hand
    faults: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        n = len(self.bots)
        self.game_wins = self.game_wins or [0] * n
        self.hand_wins = self.hand_wins or [0] * n

    @property
    def players(self) -> int:
        return len(self.bots)

    def win_rates_by_bot(self) -> dict[str, tuple[float, float]]:
        """Per bot kind: (share of games won, share of hands won), per seat it held."""
        out: dict[str, tuple[float, float]] = {}
        for name in dict.fromkeys(self.bots):
            seats = [i for i, b in enumerate(self.bots) if b == name]
            g = sum(self.game_wins[i] for i in seats) / max(self.games, 1) / len(seats)
            h = sum(self.hand_wins[i] for i in seats) / max(self.hands, 1) / len(seats)
            out[name] = (g, h)
        return out

    def heading(self, extra: Sequence[str] = ()) -> str:
        """``N games, H hands, P players`` and any notes."""
        return (f"{self.games} games, {self.hands} hands, {self.players} players"
                + "".join(f", {e}" for e in extra))

    def count_game(self, winner: int | None) -> None:
        """One game more, and its winner's (None: no winner)."""
        self.games += 1
        if winner is not None:
            self.game_wins[winner] += 1

    def count_hand(self, winner: int | None, turns: int) -> None:
        """One hand more: its winner's (None: stopped at the turn limit) and its turns."""
        self.hands += 1
        if winner is None:
            self.unfinished += 1
        else:
            self.hand_wins[winner] += 1
        self.turns.append(turns)

    def add_faults(self, faults: Sequence[dict[str, Any]]) -> None:
        """The faults a firmware launcher reported, counted by code."""
        self.faults.update(str(f.get("code", "?")) for f in faults)

    def merge(self: T, later: T) -> T:
        """Add the summary of later games: counts add, per-hand lists follow on, per-seat
        lists add by seat. Merging chunks in game order gives what one process playing every
        game would have made, down to the order of Counter keys."""
        for f in fields(self):
            if f.name in self.FIXED:
                continue
            mine, theirs = getattr(self, f.name), getattr(later, f.name)
            if isinstance(mine, Counter):
                mine.update(theirs)
            elif isinstance(mine, dict):
                for key, counts in theirs.items():
                    mine.setdefault(key, Counter()).update(counts)
            elif isinstance(mine, list):
                if f.name in self.PER_SEAT:
                    setattr(self, f.name, [a + b for a, b in zip(mine, theirs, strict=True)])
                else:
                    mine.extend(theirs)
            elif isinstance(mine, int) and not isinstance(mine, bool):
                setattr(self, f.name, mine + theirs)
            else:
                raise TypeError(f"cannot merge {type(self).__name__}.{f.name}")
        return self

    def format(self, title: str = "") -> str:
        """The report ``launcher simulate`` prints (each game's own)."""
        raise NotImplementedError


# --- text ------------------------------------------------------------------------------


def deciles(values: Sequence[float]) -> list[float]:
    """The 9 cut points p10..p90, always within the data however small the sample.

    ``statistics.quantiles``' default ("exclusive") method extrapolates beyond the smallest
    and largest values for small samples (p90 142.5 of data whose max is 97); the
    "inclusive" method interpolates between data points only.
    """
    if not values:
        raise ValueError("deciles of no data")
    if len(values) == 1:
        return [float(values[0])] * 9
    return statistics.quantiles(values, n=10, method="inclusive")


def spread(values: Sequence[int]) -> str:
    """mean, median, p10, p90 and max of per-hand figures, on one line."""
    if not values:
        return "-"
    q = deciles(values)
    return (f"mean {statistics.fmean(values):.1f}, median {statistics.median(values):g}, "
            f"p10 {q[0]:g}, p90 {q[-1]:g}, max {max(values)}")


def bar(share: float, width: int = 30) -> str:
    return "#" * round(share * width)


def win_rate_lines(s: Tally) -> list[str]:
    """The win-rate table of a summary: games then hands, by seat and by bot."""
    lines = ["win rates            games    hands"]
    for i, name in enumerate(s.bots):
        g = s.game_wins[i] / s.games if s.games else math.nan
        h = s.hand_wins[i] / s.hands if s.hands else math.nan
        lines.append(f"  seat {i} {name:<11} {g:7.1%}  {h:7.1%}")
    if len(set(s.bots)) > 1:
        for name, (g, h) in s.win_rates_by_bot().items():
            lines.append(f"  {name:<18} {g:7.1%}  {h:7.1%}  (per seat)")
    return lines


# --- significance -----------------------------------------------------------------------


def chi_square_sf(x: float, df: int) -> float:
    """P(X >= x) for a chi-square variable with ``df`` degrees of freedom."""
    if df < 1:
        raise ValueError("df must be at least 1")
    if x <= 0:
        return 1.0
    a, z = df / 2.0, x / 2.0
    if z < a + 1:
        # Series for the lower regularised gamma function P(a, z).
        term = total = 1.0 / a
        k = a
        while term > total * 1e-15:
            k += 1
            term *= z / k
            total += term
        return max(0.0, 1.0 - total * math.exp(-z + a * math.log(z) - math.lgamma(a)))
    # Continued fraction (Lentz) for the upper function Q(a, z).
    tiny = 1e-300
    b = z + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h * math.exp(-z + a * math.log(z) - math.lgamma(a))


def chi_square(observed: Sequence[float], expected_shares: Sequence[float],
               min_expected: float = 5.0) -> tuple[float, int, float]:
    """Goodness of fit: (statistic, degrees of freedom, p-value).

    Cells expected to hold fewer than ``min_expected`` counts are pooled with the next.
    """
    n = sum(observed)
    cells: list[tuple[float, float]] = []
    o_acc = e_acc = 0.0
    for o, share in zip(observed, expected_shares, strict=True):
        o_acc += o
        e_acc += share * n
        if e_acc >= min_expected:
            cells.append((o_acc, e_acc))
            o_acc = e_acc = 0.0
    if e_acc > 0 or o_acc > 0:
        if cells:
            lo, le = cells.pop()
            cells.append((lo + o_acc, le + e_acc))
        else:
            cells.append((o_acc, e_acc))
    if len(cells) < 2:
        return 0.0, 0, 1.0
    stat = sum((o - e) ** 2 / e for o, e in cells if e > 0)
    df = len(cells) - 1
    return stat, df, chi_square_sf(stat, df)
