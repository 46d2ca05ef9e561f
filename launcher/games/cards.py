"""Cards of the UNO family: faces, double-sided cards, colours, and the deck file.

A ``Card`` has a front and a back face. UNO Flip Attack calls them the Mild and Wild
sides, UNO Flip the Light and Dark sides; a classic UNO or UNO Splash card carries the same
face on both (its back is the plain card back, and no game ever turns to it).
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from launcher.core.config import parse_toml, read_toml
from launcher.core.errors import ConfigError

MILD = "mild"
WILD = "wild"
SIDES = (MILD, WILD)
LIGHT = "light"  # UNO Flip's white-bordered side (the front, like Mild)
DARK = "dark"  # UNO Flip's black-bordered side (the back, like Wild)
CLASSIC = "classic"  # the one printed side of a classic UNO or UNO Splash card
BACK_SIDES = frozenset({WILD, DARK})

# Each side's colours, index-aligned with the colour symbols printed for colour-blind players.
COLOURS: dict[str, tuple[str, ...]] = {
    MILD: ("red", "yellow", "green", "blue"),
    WILD: ("pink", "orange", "teal", "purple"),
    LIGHT: ("red", "yellow", "green", "blue"),
    DARK: ("pink", "orange", "teal", "purple"),
    CLASSIC: ("red", "yellow", "green", "blue"),
}
SYMBOLS = ("circle", "star", "triangle", "square")
_SYMBOL_OF = {c: SYMBOLS[i] for side in SIDES for i, c in enumerate(COLOURS[side])}

# Card kinds (a face's kind is also its "symbol" in the rule text's sense: a Skip matches a Skip).
NUMBER = "number"
REVERSE = "reverse"
SKIP = "skip"
FLIP = "flip"
HIT_2 = "hit_2"
DISCARD_ALL = "discard_all"
WILD_CARD = "wild"
WILD_PRESS_YOUR_LUCK = "wild_press_your_luck"
HIT_5 = "hit_5"
SKIP_EVERYONE = "skip_everyone"
WILD_DISCARD_ALL = "wild_discard_all"
WILD_ALL_OUT_ATTACK = "wild_all_out_attack"
# Classic UNO, UNO Splash and UNO Flip.
DRAW_ONE = "draw_one"
DRAW_TWO = "draw_two"
DRAW_FIVE = "draw_five"
WILD_DRAW_TWO = "wild_draw_two"
WILD_DRAW_FOUR = "wild_draw_four"
WILD_DRAW_COLOUR = "wild_draw_colour"
SWAP_HANDS = "swap_hands"
SHUFFLE_HANDS = "shuffle_hands"

SIDE_KINDS: dict[str, frozenset[str]] = {
    MILD: frozenset({NUMBER, REVERSE, SKIP, FLIP, HIT_2, DISCARD_ALL, WILD_CARD,
                     WILD_PRESS_YOUR_LUCK}),
    WILD: frozenset({NUMBER, REVERSE, FLIP, HIT_5, SKIP_EVERYONE, WILD_DISCARD_ALL,
                     WILD_ALL_OUT_ATTACK}),
    LIGHT: frozenset({NUMBER, DRAW_ONE, REVERSE, SKIP, FLIP, WILD_CARD, WILD_DRAW_TWO}),
    DARK: frozenset({NUMBER, DRAW_FIVE, REVERSE, SKIP_EVERYONE, FLIP, WILD_CARD,
                     WILD_DRAW_COLOUR}),
    CLASSIC: frozenset({NUMBER, SKIP, REVERSE, DRAW_TWO, WILD_CARD, WILD_DRAW_FOUR, SWAP_HANDS,
                        SHUFFLE_HANDS}),
}
WILD_KINDS = frozenset({WILD_CARD, WILD_PRESS_YOUR_LUCK, WILD_DISCARD_ALL, WILD_ALL_OUT_ATTACK,
                        WILD_DRAW_TWO, WILD_DRAW_FOUR, WILD_DRAW_COLOUR, SWAP_HANDS,
                        SHUFFLE_HANDS})

# Flip Attack's card values for scoring, from its rule text ("Keeping Score"); number cards
# score face value. The other games carry their own tables (``launcher.games.uno``).
POINTS: dict[str, int] = {
    HIT_2: 10,
    REVERSE: 20, SKIP: 20, FLIP: 20, DISCARD_ALL: 20, HIT_5: 20,
    SKIP_EVERYONE: 30,
    WILD_CARD: 40,
    WILD_DISCARD_ALL: 50,
    WILD_PRESS_YOUR_LUCK: 60, WILD_ALL_OUT_ATTACK: 60,
}

DECK_FILE = "flip_attack_deck.toml"


_OTHER = {MILD: WILD, WILD: MILD, LIGHT: DARK, DARK: LIGHT, CLASSIC: CLASSIC}


def other_side(side: str) -> str:
    return _OTHER[side]


@dataclass(frozen=True, slots=True)
class Face:
    """One printed side of a card: its kind, colour (None on wild cards) and number."""

    kind: str
    colour: str | None = None
    number: int | None = None
    # Worked out once, since the rule engines ask them in their inner loops.
    is_wild: bool = field(init=False, compare=False, repr=False)
    key: int | str = field(init=False, compare=False, repr=False)  # what matches: number or kind

    def __post_init__(self) -> None:
        object.__setattr__(self, "is_wild", self.kind in WILD_KINDS)
        object.__setattr__(self, "key", self.number if self.kind == NUMBER and
                           self.number is not None else self.kind)

    @property
    def symbol(self) -> str | None:
        """The colour symbol printed on the face (circle, star, triangle, square)."""
        return _SYMBOL_OF.get(self.colour) if self.colour else None

    @property
    def is_action(self) -> bool:
        return self.kind != NUMBER

    @property
    def points(self) -> int:
        return self.number if self.kind == NUMBER else POINTS[self.kind]  # type: ignore[return-value]

    def __str__(self) -> str:
        if self.kind == NUMBER:
            return f"{self.colour} {self.number}"
        return self.kind if self.colour is None else f"{self.colour} {self.kind}"


@dataclass(frozen=True, slots=True, eq=False)
class Card:
    """A physical card: equal only to itself, named by ``id`` (unique within a deck).

    ``mild`` is the front face (Mild, Light, or a classic card's only face) and ``wild``
    the back (Wild, Dark; a classic card repeats its front). The names are Flip Attack's.
    """

    id: int
    mild: Face
    wild: Face

    @property
    def front(self) -> Face:
        return self.mild

    @property
    def back(self) -> Face:
        return self.wild

    def face(self, side: str) -> Face:
        return self.wild if side in BACK_SIDES else self.mild

    def __str__(self) -> str:
        return f"#{self.id} {self.mild} / {self.wild}"

    __repr__ = __str__


def check_face(side: str, face: Face) -> None:
    """Raise ValueError unless ``face`` can be printed on ``side``."""
    if face.kind not in SIDE_KINDS[side]:
        raise ValueError(f"{face.kind} is not a {side}-side kind")
    if face.is_wild:
        if face.colour is not None or face.number is not None:
            raise ValueError(f"a {face.kind} has no colour or number")
        return
    if face.colour not in COLOURS[side]:
        raise ValueError(f"{face.colour!r} is not a {side}-side colour")
    if (face.kind == NUMBER) != (face.number is not None):
        raise ValueError(f"only number cards carry a number ({face})")
    if face.number is not None and not 0 <= face.number <= 9:
        raise ValueError(f"number {face.number} out of 0..9")


# --- the deck file --------------------------------------------------------------------


def _faces(side: str, entries: Any) -> list[Face]:
    if not isinstance(entries, list) or not entries:
        raise ConfigError(side, entries, "must be a non-empty array of tables ([[mild]])")
    faces: list[Face] = []
    for i, entry in enumerate(entries):
        where = f"{side}[{i}]"
        if not isinstance(entry, Mapping):
            raise ConfigError(where, entry, "must be a table")
        unknown = set(entry) - {"kind", "numbers", "per_colour", "count"}
        if unknown:
            raise ConfigError(f"{where}.{sorted(unknown)[0]}", entry[sorted(unknown)[0]],
                              "unknown key")
        kind = entry.get("kind")
        if kind not in SIDE_KINDS[side]:
            raise ConfigError(f"{where}.kind", kind,
                              "must be one of " + ", ".join(sorted(SIDE_KINDS[side])))
        if kind in WILD_KINDS:
            count = entry.get("count")
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise ConfigError(f"{where}.count", count, "a wild card needs a whole count >= 0")
            if "per_colour" in entry or "numbers" in entry:
                raise ConfigError(f"{where}.per_colour", entry.get("per_colour"),
                                  "wild cards have no colour: use count")
            faces += [Face(kind)] * count
            continue
        per = entry.get("per_colour")
        if isinstance(per, bool) or not isinstance(per, int) or per < 0:
            raise ConfigError(f"{where}.per_colour", per, "must be a whole number >= 0")
        if "count" in entry:
            raise ConfigError(f"{where}.count", entry["count"],
                              "coloured cards are counted per_colour")
        numbers: Sequence[Any] = [None]
        if kind == NUMBER:
            numbers = entry.get("numbers", [])
            if (not isinstance(numbers, list) or not numbers
                    or any(isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 9
                           for n in numbers)):
                raise ConfigError(f"{where}.numbers", numbers, "must list numbers 0..9")
        elif "numbers" in entry:
            raise ConfigError(f"{where}.numbers", entry["numbers"], "only number cards have one")
        for colour in COLOURS[side]:
            for n in numbers:
                faces += [Face(kind, colour, n)] * per
    return faces


def build_deck(raw: Mapping[str, Any], sides: tuple[str, str] = (MILD, WILD)) -> tuple[Card, ...]:
    """Make the cards described by a parsed deck file; errors name the offending key.

    ``sides``: the front and back side names the file uses (``mild``/``wild`` for Flip
    Attack, ``light``/``dark`` for UNO Flip).
    """
    front, back = sides
    seed = raw.get("pairing_seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError("pairing_seed", seed, "must be a whole number")
    unknown = set(raw) - {"pairing_seed", front, back}
    if unknown:
        key = sorted(unknown)[0]
        raise ConfigError(key, raw[key], "unknown key")
    mild = _faces(front, raw.get(front))
    wild = _faces(back, raw.get(back))
    if len(mild) != len(wild):
        raise ConfigError(back, len(wild),
                          f"the sides must have as many faces ({len(mild)} {front})")
    # The printing pairs faces in an order nobody published; a fixed shuffle stands in for it.
    random.Random(seed).shuffle(wild)
    return tuple(Card(i, m, w) for i, (m, w) in enumerate(zip(mild, wild, strict=True)))


def load_deck(path: str | os.PathLike[str] | None = None, shipped: str = DECK_FILE,
              sides: tuple[str, str] = (MILD, WILD)) -> tuple[Card, ...]:
    """Read a deck file (``None``: the shipped ``data/<shipped>``, Flip Attack's by default)."""
    if path is None:
        text = resources.files("launcher.games").joinpath("data", shipped).read_text("utf-8")
        return build_deck(parse_toml(text, shipped), sides)
    return build_deck(read_toml(path), sides)
