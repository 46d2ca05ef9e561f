"""The summary of simulated games of classic UNO, UNO Splash and UNO Flip, and its report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from launcher.games.stats import Tally, spread, win_rate_lines
from launcher.games.uno.table import UnoGameResult


@dataclass
class UnoSummary(Tally):
    """Classic UNO, UNO Splash and UNO Flip: draws, flips, points, challenges."""

    FIXED: ClassVar[tuple[str, ...]] = ("bots", "game", "two_sided")

    game: str = ""
    two_sided: bool = False  # UNO Flip: the report shows the flips and the dark endings
    undecided: int = 0  # games stopped at max_hands
    draws: list[int] = field(default_factory=list)
    flips: list[int] = field(default_factory=list)
    points: list[int] = field(default_factory=list)  # what each won hand scored
    reloads: int = 0
    caught: int = 0
    challenges: int = 0
    guilty: int = 0
    dark_endings: int = 0

    def add(self, result: UnoGameResult) -> None:
        """One game: its winner and its hands."""
        self.count_game(result.winner)
        if result.winner is None:
            self.undecided += 1
        for h in result.hands:
            self.count_hand(h.winner, h.turns)
            if h.winner is not None:
                self.points.append(h.points)
            self.draws.append(h.draws)
            self.flips.append(h.flips)
            self.reloads += h.reloads
            self.caught += h.caught
            self.challenges += h.challenges
            self.guilty += h.guilty
            self.dark_endings += h.side

    def format(self, title: str = "") -> str:
        """The report ``launcher simulate`` prints for the table games."""
        s = self
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
        if s.two_sided:
            lines.append(f"flips per hand:    {spread(s.flips)}")
            lines.append(f"hands ended on the dark side: {s.dark_endings} of {s.hands}")
        lines.append(f"points per won hand: {spread(s.points)}")
        lines.append(f"reshuffles:        {s.reloads} in all, "
                     f"{s.reloads / max(s.hands, 1):.2f} per hand")
        lines.append("")
        won = f" ({s.guilty} found guilty)" if s.challenges else ""
        lines.append(f"UNO catches: {s.caught}; challenges: {s.challenges}{won}")
        return "\n".join(lines)
