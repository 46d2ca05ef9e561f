"""Exact positions for the UNO-family rule tests: named cards, a loaded dealer, scripted bots."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Sequence

from launcher.games.launchers import DirectDealer
from launcher.games.uno.game import TURN, Rules, UnoState
from launcher.games.uno.table import HandResult, UnoTable


class Pick:
    """Hands out distinct cards of a rules' deck by name: ``pick("red 7")`` (front side) or
    ``pick("pink 3", side=1)``; ``pick.rest()`` is every card not handed out yet."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.used: list[int] = []

    def __call__(self, name: str, side: int = 0) -> int:
        card = self.rules.card(name, side, skip=self.used)
        self.used.append(card)
        return card

    def many(self, *names: str, side: int = 0) -> list[int]:
        return [self(n, side) for n in names]

    def rest(self) -> list[int]:
        used = set(self.used)
        return [c for c in range(self.rules.size) if c not in used]


def position(pick: Pick, hands: Sequence[Sequence[int]], top: Sequence[int],
             draws: Sequence[int] = (), turn: int = 0, side: int = 0, colour: int | None = None,
             direction: int = 1, rest_to: str = "pile") -> tuple[UnoState, list[int]]:
    """A hand in progress: ``turn`` is to play on ``top`` (the discard pile, top last); the
    launcher shoots ``draws`` first. Every other card of the deck goes behind them into the
    launcher (``rest_to="pile"``) or under the discard pile (``"discard"``), so the table's
    conservation check sees the whole deck. Returns the state and the launcher's cards."""
    rest = [c for c in pick.rest() if c not in draws]
    discard = list(top)
    pile = list(draws)
    if rest_to == "pile":
        pile += rest
    else:
        discard = rest + discard
    state = UnoState(pick.rules, [list(h) for h in hands], discard, dealer=(turn - 1) % len(hands),
                     agenda=[(TURN, turn, 0)], pile=len(pile), side=side, colour=colour,
                     direction=direction)
    return state, pile


class ScriptDone(Exception):
    """The script has no more moves: the test looks at the position now."""


class Script:
    """Every decision in order, as ``(player, action)``; each must be offered as legal
    (a play may carry the UNO bit)."""

    def __init__(self, moves: Sequence[tuple[int, int]]) -> None:
        self.moves = list(moves)
        self.offered: list[list[int]] = []

    def bot(self, seat: int) -> ScriptedBot:
        return ScriptedBot(self, seat)


class ScriptedBot:
    name = "script"

    def __init__(self, script: Script, seat: int) -> None:
        self.script = script
        self.seat = seat

    def choose(self, state: UnoState, player: int, legal: Sequence[int]) -> int:
        assert player == self.seat
        self.script.offered.append(list(legal))
        if not self.script.moves:
            raise ScriptDone
        who, action = self.script.moves.pop(0)
        assert who == player, f"player {player} is to move ({state}), the script has {who}"
        return action

    def observe(self, event: tuple) -> None:
        pass


class Run:
    """Plays a position with a script through ``UnoTable`` (conservation checked each step)."""

    def __init__(self, state: UnoState, pile: Sequence[int], moves: Sequence[tuple[int, int]],
                 seed: int = 0) -> None:
        rules = state.rules
        sides = rules.game.sides
        self.launcher = DirectDealer(rules.game.profile,
                                     (sides[0], sides[-1]) if len(sides) == 2 else
                                     (sides[0], sides[0]))
        if state.side:
            self.launcher.flip()
        self.launcher.load(list(pile))
        self.script = Script(moves)
        self.events: list[tuple] = []
        self.table = UnoTable(rules, self.launcher, [self.script.bot(i) for i in range(state.n)],
                              random.Random(seed), check=True, observers=[self.events.append])
        self.result: HandResult | None = None
        self.state = state
        with contextlib.suppress(ScriptDone):
            self.result = self.table.play(state)

    @property
    def step(self) -> tuple[int, int, int] | None:
        return self.state.step

    @property
    def offered(self) -> list[int]:
        """The legal actions of the decision the script stopped at."""
        return self.script.offered[-1]

    def of(self, kind: str) -> list[tuple]:
        return [e for e in self.events if e[0] == kind]
