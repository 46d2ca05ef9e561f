"""The summary of simulated Gin Rummy games and its report."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from launcher.games.gin.table import GameRecord
from launcher.games.stats import Tally

# How a hand ended (``rules.HandResult.kind``), as the summary labels it.
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

    def add(self, record: GameRecord) -> None:
        """One game: its hands and its scoreboard's games."""
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

    def format(self, title: str = "") -> str:
        """The report ``launcher simulate --game gin`` prints."""
        s = self
        n = max(s.hands, 1)
        games_scored = sum(s.game_wins) or 1
        lines = [title] if title else []
        lines += [f"{s.games} games, {s.hands} hands "
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
        lines.append("win rates            games    hands")  # as every game's summary has it
        for seat, bot in enumerate(s.bots):
            lines.append(f"  seat {seat} {bot:<11} {s.game_wins[seat] / games_scored:7.1%}  "
                         f"{s.hand_wins[seat] / n:7.1%}")
        if s.unfinished:
            lines.append(f"games stopped at max_hands: {s.unfinished}")
        return "\n".join(lines)
