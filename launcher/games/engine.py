"""The shared fast card model: a deck compiled to small integers and lookup tables.

Card ``i`` of a deck is ``cards[i]`` (its ``id`` must be ``i``). Per side, every property a
rule engine asks in its inner loop is a tuple indexed by card: the kind's code, the colour
index (-1 for a wild), the symbol that matches (the number, or the action's kind), the
points it scores. Whether a card may be laid on a given top is one entry of a precomputed
mask, one mask per (colour in play, symbol on top): a legal-move list is then a single
loop over the hand, with no objects made per turn. A mask is a tuple of bools, not bytes:
CPython indexes a tuple and tests a bool on its fast paths (a fifth off the loop over a
six-card hand, in a microbenchmark on 3.11).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from launcher.games.base import where
from launcher.games.cards import COLOURS, NUMBER, Card

NO_COLOUR = 4  # colour index "none chosen yet": no card matches it by colour


@dataclass(frozen=True, slots=True, eq=False)
class SideTable:
    """One side of a compiled deck: per card, tuples the engines index by card number."""

    name: str
    colours: tuple[str, ...]
    kind: tuple[str, ...]  # the face's kind name
    colour: tuple[int, ...]  # 0..3, or -1 for a wild
    symbol: tuple[int, ...]  # number 0..9, 10 + action code; a wild: stride - 1
    number: tuple[int, ...]  # -1 when the face has none
    points: tuple[int, ...]
    wild: tuple[bool, ...]
    masks: tuple[tuple[bool, ...], ...]  # masks[colour * stride + symbol][card]: may be laid
    stride: int
    behaviour: tuple[int, ...] = ()  # a rule engine's own code per card (``with_codes``)

    def mask(self, colour: int, symbol: int) -> tuple[bool, ...]:
        """Which cards may be laid with ``colour`` in play and ``symbol`` on top."""
        return self.masks[colour * self.stride + symbol]

    def playable(self, card: int, colour: int, symbol: int) -> bool:
        return self.mask(colour, symbol)[card]


class CardTable:
    """A deck as small integers: ``sides[s]`` holds side ``s``'s lookup tables.

    ``points`` maps a side's kind names to card values (number cards score face value).
    """

    def __init__(self, cards: Sequence[Card], sides: Sequence[str],
                 points: Sequence[Mapping[str, int]]) -> None:
        self.cards = tuple(cards)
        for i, card in enumerate(self.cards):
            if card.id != i:
                raise ValueError(f"card {card} sits at index {i}: ids must be 0..n-1 in order")
        if len(points) != len(sides):
            raise ValueError("one points table per side")
        self.size = len(self.cards)
        self.ids = tuple(range(self.size))  # every card, in order: ``list(ids)`` is a new deck
        kinds = sorted({c.face(s).kind for c in self.cards for s in sides} - {NUMBER})
        self.action_code = {k: 10 + i for i, k in enumerate(kinds)}
        self.sides = tuple(self._side(name, pts) for name, pts in zip(sides, points, strict=True))

    def _side(self, name: str, points: Mapping[str, int]) -> SideTable:
        colours = COLOURS[name]
        faces = [c.face(name) for c in self.cards]
        colour = tuple(-1 if f.is_wild else colours.index(f.colour) for f in faces)
        stride = 10 + len(self.action_code) + 1  # the last slot: a wild on top
        # A wild's symbol is the last slot: on top it is matched by colour only (and by
        # other wilds, which match anything anyway).
        symbol = tuple(stride - 1 if f.is_wild else
                       (f.number if f.kind == NUMBER else self.action_code[f.kind])
                       for f in faces)
        number = tuple(-1 if f.number is None else f.number for f in faces)
        pts = tuple(f.number if f.kind == NUMBER else points[f.kind] for f in faces)
        masks = []
        for col in range(len(colours) + 1):  # + NO_COLOUR
            for slot in range(stride):
                masks.append(tuple(colour[i] < 0 or colour[i] == col or symbol[i] == slot
                                   for i in range(self.size)))
        return SideTable(name, colours, tuple(f.kind for f in faces), colour, symbol, number,
                         pts, tuple(f.is_wild for f in faces), tuple(masks), stride)

    def with_codes(self, codes: Mapping[str, int]) -> CardTable:
        """Give each side a rule engine's behaviour code per card, from its kind."""
        self.sides = tuple(replace(s, behaviour=tuple(codes[k] for k in s.kind))
                           for s in self.sides)
        return self

    def name(self, card: int, side: int = 0) -> str:
        """A card's face on ``side`` as text (``"red 7"``, ``"wild_draw_four"``)."""
        return str(self.cards[card].face(self.sides[side].name))

    def where(self, places: Iterable[Iterable[int]]) -> tuple[list[int], list[int]]:
        """Conservation: (cards seen twice, cards seen nowhere) over ``places``
        (``base.where``)."""
        return where(places, self.size)
