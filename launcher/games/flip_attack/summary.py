"""The summary of simulated UNO Flip Attack games: what a run counts, how a table feeds it
(``Recorder``, an observer of the table's effects), and the report ``launcher simulate``
prints."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from launcher.core.config import Luck
from launcher.games.cards import SIDES
from launcher.games.flip_attack.state import Caught, Effect, FlipLid, LuckEnded, Pressed
from launcher.games.flip_attack.table import FinishedHand, GameResult
from launcher.games.stats import Tally, bar, spread, win_rate_lines


@dataclass
class FlipAttackSummary(Tally):
    """UNO Flip Attack: presses, shots per side, dry streaks, Wild Press Your Luck runs."""

    presses: list[int] = field(default_factory=list)
    flips: list[int] = field(default_factory=list)
    reloads: list[int] = field(default_factory=list)
    press_cards: dict[str, Counter[int]] = field(
        default_factory=lambda: {s: Counter() for s in SIDES})  # cards per press, 0 = dry
    dry_runs: dict[str, Counter[int]] = field(
        default_factory=lambda: {s: Counter() for s in SIDES})  # dry presses before a shot
    # Shot sizes, apart: whole shots, drawn while the launcher held at least the side's
    # largest shot (none can have been cut short), and shots at the end of the cartridge,
    # drawn with fewer cards left (one that took the last cards may have been cut short).
    whole_shots: dict[str, Counter[int]] = field(
        default_factory=lambda: {s: Counter() for s in SIDES})
    end_shots: dict[str, Counter[int]] = field(
        default_factory=lambda: {s: Counter() for s in SIDES})
    last_shots: Counter[str] = field(default_factory=Counter)  # took the last cards, by side
    empty_presses: int = 0  # presses on an empty launcher (nothing to reload)
    caught: int = 0
    luck_runs: int = 0
    luck_busts: int = 0
    luck_discards: int = 0

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

    def cards_per_whole_shot(self, side: str) -> float:
        """Cards per shot among the whole shots (none cut short by an emptying launcher)."""
        c = self.whole_shots[side]
        shots = sum(c.values())
        return sum(k * v for k, v in c.items()) / shots if shots else math.nan

    def format(self, title: str = "") -> str:
        """The report ``launcher simulate`` prints for UNO Flip Attack."""
        s = self
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
                lines.append(f"    {k:2d} {runs[k]:8d} {share:6.1%} {bar(share)}")
        lines.append("")
        bust = s.luck_busts / s.luck_runs if s.luck_runs else math.nan
        lines.append(f"UNO catches: {s.caught}; Wild Press Your Luck runs: {s.luck_runs} "
                     f"({bust:.0%} shot, {s.luck_discards} cards discarded)")
        return "\n".join(lines)


class Recorder:
    """Feeds a summary from a table's effects (an observer) and finished hands and games;
    ``luck``: the launcher's tables, whose largest shot per side tells a whole shot from one
    at the end of the cartridge."""

    def __init__(self, summary: FlipAttackSummary, luck: Luck) -> None:
        self.summary = summary
        self._streak = 0
        self._largest = {side: max(luck.side(side).sizes) for side in SIDES}

    def observe(self, effect: Effect) -> None:
        s = self.summary
        if isinstance(effect, Pressed):
            if effect.empty:
                s.empty_presses += 1
                return
            n = len(effect.cards)
            side = effect.side
            s.press_cards[side][n] += 1
            if n:
                s.dry_runs[side][self._streak] += 1
                self._streak = 0
                if effect.held >= self._largest[side]:
                    s.whole_shots[side][n] += 1
                else:
                    s.end_shots[side][n] += 1
                    if n == effect.held:
                        s.last_shots[side] += 1
            else:
                self._streak += 1
        elif isinstance(effect, FlipLid):
            self._streak = 0  # the firmware starts a new streak on the new side
        elif isinstance(effect, Caught):
            s.caught += 1
        elif isinstance(effect, LuckEnded):
            s.luck_runs += 1
            s.luck_busts += effect.busted
            s.luck_discards += effect.discarded

    def hand(self, hand: FinishedHand) -> None:
        s, st = self.summary, hand.state
        s.count_hand(st.winner, st.turns)
        s.presses.append(st.presses)
        s.flips.append(st.flips)
        s.reloads.append(st.reloads)

    def game(self, result: GameResult) -> None:
        self.summary.count_game(result.winner)
        for hand in result.hands:
            self.hand(hand)
