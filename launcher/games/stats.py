"""Summaries of simulated games, every game's: a shared tally of wins and hands, each game's
own figures on top of it, the text ``launcher simulate`` prints, and the significance tests.

Nothing here imports a game: each game feeds its summary (Flip Attack through
``flip_attack.record.Recorder``, the UNO family and Gin by ``add(result)`` of their results).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from launcher.games.cards import SIDES


@dataclass
class Tally:
    """What every game's summary counts: games, hands, wins by seat, turns per hand."""

    bots: list[str]
    games: int = 0
    hands: int = 0
    unfinished: int = 0  # hands stopped at a turn limit
    game_wins: list[int] = field(default_factory=list)
    hand_wins: list[int] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)  # per hand

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


@dataclass
class Summary(Tally):
    """UNO Flip Attack: presses, shots per side, dry streaks, Wild Press Your Luck runs."""

    presses: list[int] = field(default_factory=list)
    flips: list[int] = field(default_factory=list)
    reloads: list[int] = field(default_factory=list)
    press_cards: dict[str, Counter[int]] = field(
        default_factory=lambda: {s: Counter() for s in SIDES})  # cards per press, 0 = dry
    dry_runs: dict[str, Counter[int]] = field(
        default_factory=lambda: {s: Counter() for s in SIDES})  # dry presses before a shot
    empty_presses: int = 0  # presses on an empty launcher (nothing to reload)
    caught: int = 0
    luck_runs: int = 0
    luck_busts: int = 0
    luck_discards: int = 0
    faults: Counter[str] = field(default_factory=Counter)

    # -- derived figures --

    def shot_rate(self, side: str) -> float:
        """Share of presses (on a loaded launcher) that shot."""
        c = self.press_cards[side]
        n = sum(c.values())
        return (n - c[0]) / n if n else math.nan

    def cards_per_press(self, side: str) -> float:
        c = self.press_cards[side]
        n = sum(c.values())
        return sum(k * v for k, v in c.items()) / n if n else math.nan

    def cards_per_shot(self, side: str) -> float:
        c = self.press_cards[side]
        shots = sum(v for k, v in c.items() if k)
        return sum(k * v for k, v in c.items()) / shots if shots else math.nan


@dataclass
class UnoSummary(Tally):
    """Classic UNO, UNO Splash and UNO Flip: draws, flips, points, challenges."""

    game: str = ""
    undecided: int = 0  # games stopped at max_hands
    draws: list[int] = field(default_factory=list)
    flips: list[int] = field(default_factory=list)
    points: list[int] = field(default_factory=list)  # what each won hand scored
    reloads: int = 0
    caught: int = 0
    challenges: int = 0
    guilty: int = 0
    dark_endings: int = 0
    faults: Counter[str] = field(default_factory=Counter)  # --through-firmware: by code

    def add(self, result: Any) -> None:
        """One game: an ``UnoGameResult`` (winner, hands of ``HandResult``)."""
        self.games += 1
        if result.winner is None:
            self.undecided += 1
        else:
            self.game_wins[result.winner] += 1
        for h in result.hands:
            self.hands += 1
            if h.winner is None:
                self.unfinished += 1
            else:
                self.hand_wins[h.winner] += 1
                self.points.append(h.points)
            self.turns.append(h.turns)
            self.draws.append(h.draws)
            self.flips.append(h.flips)
            self.reloads += h.reloads
            self.caught += h.caught
            self.challenges += h.challenges
            self.guilty += h.guilty
            self.dark_endings += h.side


# How a gin hand ended (``gin.rules.HandResult.kind``), as the summary labels it.
GIN_ENDINGS = (("knocks won", "knock"), ("undercuts", "undercut"), ("gins", "gin"),
               ("big gins", "big_gin"), ("drawn hands", "draw"))


@dataclass
class GinSummary(Tally):
    """Gin Rummy: how hands ended, points, layoffs, shutouts (games count every game of a
    Hollywood session)."""

    endings: Counter[str] = field(default_factory=Counter)
    points: list[int] = field(default_factory=list)
    shutouts: int = 0
    laid_off: int = 0

    def add(self, record: Any) -> None:
        """One game: a ``GameRecord`` (its hands and its scoreboard's games)."""
        self.games += 1
        for r in record.hands:
            self.hands += 1
            self.endings[r.kind] += 1
            self.turns.append(r.turns)
            if r.winner is not None:
                self.hand_wins[r.winner] += 1
                self.points.append(r.points)
            self.laid_off += r.laid_off.bit_count()
        for g in record.board.games:
            if g.winner is None:
                self.unfinished += 1
                continue
            self.game_wins[g.winner] += 1
            self.shutouts += g.shutout

    def format(self, title: str) -> str:
        return format_gin_summary(self, title)


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


def _bar(share: float, width: int = 30) -> str:
    return "#" * round(share * width)


def win_rate_lines(s: Any) -> list[str]:
    """The win-rate table of a summary with ``bots``, ``game_wins``, ``hand_wins``,
    ``games``, ``hands`` and ``win_rates_by_bot()`` (every game's summary has them)."""
    lines = ["win rates            games    hands"]
    for i, name in enumerate(s.bots):
        g = s.game_wins[i] / s.games if s.games else math.nan
        h = s.hand_wins[i] / s.hands if s.hands else math.nan
        lines.append(f"  seat {i} {name:<11} {g:7.1%}  {h:7.1%}")
    if len(set(s.bots)) > 1:
        for name, (g, h) in s.win_rates_by_bot().items():
            lines.append(f"  {name:<18} {g:7.1%}  {h:7.1%}  (per seat)")
    return lines


def format_summary(s: Summary, title: str = "") -> str:
    """The report ``launcher simulate`` prints for UNO Flip Attack."""
    lines = []
    if title:
        lines.append(title)
    lines.append(s.heading([f"{s.unfinished} hands stopped at the turn limit"]
                           if s.unfinished else []))
    lines.append("")
    lines += win_rate_lines(s)
    lines.append("")
    lines.append(f"turns per hand:    {spread(s.turns)}")
    lines.append(f"presses per hand:  {spread(s.presses)}")
    lines.append(f"flips per hand:    {spread(s.flips)}")
    lines.append(f"reloads:           {sum(s.reloads)} in all, "
                 f"{sum(s.reloads) / max(s.hands, 1):.2f} per hand"
                 + (f"; {s.empty_presses} presses found the launcher empty"
                    if s.empty_presses else ""))
    lines.append("")
    lines.append("cards per press     presses  shot rate  cards/press  cards/shot")
    for side in SIDES:
        n = sum(s.press_cards[side].values())
        lines.append(f"  {side:<16} {n:8d}  {s.shot_rate(side):9.1%}  "
                     f"{s.cards_per_press(side):11.2f}  {s.cards_per_shot(side):10.2f}")
    lines.append("")
    lines.append("dry-streak histogram (dry presses before each shot)")
    for side in SIDES:
        runs = s.dry_runs[side]
        total = sum(runs.values())
        lines.append(f"  {side}: {total} shots")
        for k in range(max(runs, default=-1) + 1):
            share = runs[k] / total if total else 0.0
            lines.append(f"    {k:2d} {runs[k]:8d} {share:6.1%} {_bar(share)}")
    lines.append("")
    bust = s.luck_busts / s.luck_runs if s.luck_runs else math.nan
    lines.append(f"UNO catches: {s.caught}; Wild Press Your Luck runs: {s.luck_runs} "
                 f"({bust:.0%} shot, {s.luck_discards} cards discarded)")
    return "\n".join(lines)


def format_uno_summary(s: UnoSummary, title: str = "", flips: bool = False) -> str:
    """The report ``launcher simulate`` prints for the table games."""
    lines = [title] if title else []
    extra = []
    if s.unfinished:
        extra.append(f"{s.unfinished} hands stopped at the turn limit")
    if s.undecided:
        extra.append(f"{s.undecided} games without a winner")
    lines.append(s.heading(extra))
    lines.append("")
    lines += win_rate_lines(s)
    lines.append("")
    lines.append(f"turns per hand:    {spread(s.turns)}")
    lines.append(f"draws per hand:    {spread(s.draws)}")
    if flips:
        lines.append(f"flips per hand:    {spread(s.flips)}")
        lines.append(f"hands ended on the dark side: {s.dark_endings} of {s.hands}")
    lines.append(f"points per won hand: {spread(s.points)}")
    lines.append(f"reshuffles:        {s.reloads} in all, {s.reloads / max(s.hands, 1):.2f} "
                 "per hand")
    lines.append("")
    won = f" ({s.guilty} found guilty)" if s.challenges else ""
    lines.append(f"UNO catches: {s.caught}; challenges: {s.challenges}{won}")
    return "\n".join(lines)


def format_gin_summary(s: GinSummary, title: str) -> str:
    """The report ``launcher simulate --game gin`` prints."""
    n = max(s.hands, 1)
    games_scored = sum(s.game_wins) or 1
    lines = [title, f"{s.games} games, {s.hands} hands "
                    f"({s.hands / max(s.games, 1):.1f} per game)", ""]
    lines.append("hand endings")
    for label, key in GIN_ENDINGS:
        lines.append(f"  {label:<12} {s.endings[key]:>7}  {s.endings[key] / n:6.1%}")
    knocks = s.endings["knock"] + s.endings["undercut"]
    lines.append(f"  knocks (all)  {knocks:>6}  {knocks / n:6.1%}  "
                 f"(undercut {s.endings['undercut'] / max(knocks, 1):.1%} of them)")
    lines.append("")
    if s.turns:
        t = sorted(s.turns)
        lines.append(f"turns per hand: mean {statistics.fmean(t):.1f}, median "
                     f"{statistics.median(t):g}, max {t[-1]}")
    if s.points:
        lines.append(f"points per hand won: mean {statistics.fmean(s.points):.1f}")
    lines.append(f"cards laid off: {s.laid_off}; shutouts: {s.shutouts}")
    lines.append("")
    lines.append("win rates            hands    games")
    for seat, bot in enumerate(s.bots):
        lines.append(f"  seat {seat} {bot:<11} {s.hand_wins[seat] / n:6.1%}   "
                     f"{s.game_wins[seat] / games_scored:6.1%}")
    if s.unfinished:
        lines.append(f"games stopped at max_hands: {s.unfinished}")
    return "\n".join(lines)


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
