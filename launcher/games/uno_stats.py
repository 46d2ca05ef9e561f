"""Summaries of simulated classic UNO, UNO Splash and UNO Flip games."""

from __future__ import annotations

from dataclasses import dataclass, field

from launcher.games.stats import spread, win_rate_lines
from launcher.games.uno.rules import UnoGameResult


@dataclass
class UnoSummary:
    """Everything ``launcher simulate --game uno|uno-splash|uno-flip`` reports."""

    game: str
    bots: list[str]
    games: int = 0
    hands: int = 0
    unfinished: int = 0  # hands stopped at max_turns
    undecided: int = 0  # games stopped at max_hands
    game_wins: list[int] = field(default_factory=list)
    hand_wins: list[int] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)  # per hand
    draws: list[int] = field(default_factory=list)
    flips: list[int] = field(default_factory=list)
    points: list[int] = field(default_factory=list)  # what each won hand scored
    reloads: int = 0
    caught: int = 0
    challenges: int = 0
    guilty: int = 0
    dark_endings: int = 0

    def __post_init__(self) -> None:
        self.game_wins = self.game_wins or [0] * len(self.bots)
        self.hand_wins = self.hand_wins or [0] * len(self.bots)

    @property
    def players(self) -> int:
        return len(self.bots)

    def add(self, result: UnoGameResult) -> None:
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

    def win_rates_by_bot(self) -> dict[str, tuple[float, float]]:
        out: dict[str, tuple[float, float]] = {}
        for name in dict.fromkeys(self.bots):
            seats = [i for i, b in enumerate(self.bots) if b == name]
            g = sum(self.game_wins[i] for i in seats) / max(self.games, 1) / len(seats)
            h = sum(self.hand_wins[i] for i in seats) / max(self.hands, 1) / len(seats)
            out[name] = (g, h)
        return out


def format_uno_summary(s: UnoSummary, title: str = "", flips: bool = False) -> str:
    """The report ``launcher simulate`` prints for the table games."""
    lines = [title] if title else []
    extra = []
    if s.unfinished:
        extra.append(f"{s.unfinished} hands stopped at the turn limit")
    if s.undecided:
        extra.append(f"{s.undecided} games without a winner")
    lines.append(f"{s.games} games, {s.hands} hands, {s.players} players"
                 + "".join(f", {e}" for e in extra))
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
