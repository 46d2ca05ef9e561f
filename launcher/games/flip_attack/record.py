"""Feeding the shared summary (``launcher.games.stats.Summary``) from a Flip Attack table."""

from __future__ import annotations

from collections.abc import Sequence

from launcher.games.flip_attack.rules import (
    Caught,
    Effect,
    FinishedHand,
    FlipLid,
    GameResult,
    LuckEnded,
    Pressed,
)
from launcher.games.stats import Summary


class Recorder:
    """Feeds a Summary from a table's effects (an observer) and finished hands and games."""

    def __init__(self, summary: Summary) -> None:
        self.summary = summary
        self._streak = 0

    def observe(self, effect: Effect) -> None:
        s = self.summary
        if isinstance(effect, Pressed):
            if effect.empty:
                s.empty_presses += 1
                return
            n = len(effect.cards)
            s.press_cards[effect.side][n] += 1
            if n:
                s.dry_runs[effect.side][self._streak] += 1
                self._streak = 0
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
        s.hands += 1
        if st.winner is None:
            s.unfinished += 1
        else:
            s.hand_wins[st.winner] += 1
        s.turns.append(st.turns)
        s.presses.append(st.presses)
        s.flips.append(st.flips)
        s.reloads.append(st.reloads)

    def game(self, result: GameResult) -> None:
        s = self.summary
        s.games += 1
        if result.winner is not None:
            s.game_wins[result.winner] += 1
        for hand in result.hands:
            self.hand(hand)

    def faults(self, faults: Sequence[dict]) -> None:
        for f in faults:
            self.summary.faults[str(f.get("code", "?"))] += 1
