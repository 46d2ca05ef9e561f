"""Exact Flip Attack positions for rule tests: named cards, a scripted launcher, scripted bots."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Sequence
from dataclasses import replace

from launcher.games.cards import MILD, NUMBER, Card, Face, check_face, other_side
from launcher.games.flip_attack.core import TURN, Step
from launcher.games.flip_attack.state import Action, Effect, GameOptions, HandState
from launcher.games.flip_attack.table import FinishedHand, FlipAttackTable


def face(text: str) -> Face:
    """``"red 5"``, ``"red skip"``, ``"wild"``, ``"wild_press_your_luck"``."""
    parts = text.split()
    if len(parts) == 1:
        return Face(parts[0])
    colour, what = parts
    if what.isdigit():
        return Face(NUMBER, colour, int(what))
    return Face(what, colour)


class Cards:
    """Makes cards with ids 0, 1, 2...; the back face defaults to a plain number."""

    def __init__(self) -> None:
        self.made: list[Card] = []

    def __call__(self, mild: str, wild: str = "pink 1") -> Card:
        m, w = face(mild), face(wild)
        check_face("mild", m)
        check_face("wild", w)
        card = Card(len(self.made), m, w)
        self.made.append(card)
        return card

    def many(self, n: int, mild: str = "blue 2", wild: str = "purple 2") -> list[Card]:
        return [self(mild, wild) for _ in range(n)]


class ScriptedLauncher:
    """A launcher double: each press shoots the next scripted number of cards from the front."""

    def __init__(self, cards: Sequence[Card] = (), shots: Sequence[int] = (),
                 side: str = MILD) -> None:
        self.cards = list(cards)
        self.shots = list(shots)
        self._side = side
        self.flips = 0
        self.presses = 0
        self.loads: list[list[Card]] = []

    @property
    def side(self) -> str:
        return self._side

    @property
    def cards_left(self) -> int:
        return len(self.cards)

    def press(self) -> list[Card]:
        if not self.shots:
            raise AssertionError("the launcher was pressed more often than the test expected")
        self.presses += 1
        n = min(self.shots.pop(0), len(self.cards))
        out, self.cards = self.cards[:n], self.cards[n:]
        return out

    def flip(self) -> str:
        self.flips += 1
        self._side = other_side(self._side)
        return self._side

    def load(self, cards: Sequence[Card]) -> None:
        self.loads.append(list(cards))
        self.cards += cards

    def unload(self) -> list[Card]:
        out, self.cards = self.cards, []
        return out

    def contents(self) -> list[Card]:
        return list(self.cards)


class ScriptDone(Exception):
    """The script has no more actions: the test looks at the position now."""


class Script:
    """The decisions of every player, in order, as ``(player, action)``."""

    def __init__(self, moves: Sequence[tuple[int, Action]]) -> None:
        self.moves = list(moves)
        self.legal_seen: list[list[Action]] = []

    def bot(self, seat: int) -> ScriptedBot:
        return ScriptedBot(self, seat)


class ScriptedBot:
    name = "script"

    def __init__(self, script: Script, seat: int) -> None:
        self.script = script
        self.seat = seat

    def choose(self, state: HandState, player: int, legal: Sequence[Action]) -> Action:
        assert player == self.seat
        self.script.legal_seen.append(list(legal))
        if not self.script.moves:
            raise ScriptDone
        who, action = self.script.moves.pop(0)
        assert who == player, f"player {player} is to move, the script has player {who}"
        plain = replace(action, uno=False) if hasattr(action, "uno") else action
        assert plain in legal, f"{action} is not among the legal actions {legal}"
        return action

    def observe(self, effect: Effect) -> None:
        pass


def position(hands: Sequence[Sequence[Card]], discard: Sequence[Card], side: str = MILD,
             turn: int = 0, colour: str | None = None, direction: int = 1,
             options: GameOptions | None = None, dealer: int | None = None) -> HandState:
    """A hand in progress: ``turn`` is to play on ``discard`` (top last)."""
    top = discard[-1].face(side) if discard else None
    if colour is None and top is not None:
        colour = top.colour
    n = len(hands)
    return HandState(
        options=options or GameOptions(), players=n,
        dealer=(turn - direction) % n if dealer is None else dealer, side=side,
        hands=tuple(tuple(h) for h in hands), discard=tuple(discard), top=top, colour=colour,
        direction=direction, agenda=(Step(TURN, turn),), launcher_count=0)


class Run:
    """Plays a position with a script through a ``FlipAttackTable`` (so every step is checked)."""

    def __init__(self, state: HandState, launcher: ScriptedLauncher,
                 moves: Sequence[tuple[int, Action]], seed: int = 0) -> None:
        state = replace(state, launcher_count=launcher.cards_left)
        cards = [c for h in state.hands for c in h] + list(state.discard) + launcher.contents()
        self.script = Script(moves)
        self.effects: list[Effect] = []
        self.launcher = launcher
        self.table = FlipAttackTable(launcher, [self.script.bot(i) for i in range(state.players)],
                           random.Random(seed), state.options, cards,
                           observers=[self.effects.append])
        self.finished: FinishedHand | None = None
        with contextlib.suppress(ScriptDone):
            self.finished = self.table.play(state)
        assert self.table.state is not None
        self.state: HandState = self.table.state

    @property
    def to_move(self) -> int | None:
        step = self.state.step
        return None if step is None else step.player

    def of(self, kind: type) -> list:
        return [e for e in self.effects if isinstance(e, kind)]
