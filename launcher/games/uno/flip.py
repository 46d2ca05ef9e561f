"""UNO Flip (rules/uno-flip-vs-uno.txt): 112 double-sided cards, a Light and a Dark side.

The engine is ``launcher.games.uno``'s; this module gives the deck (the shipped
``data/uno_flip_deck.toml``), the card values of each side, and the defaults of UNO Flip's
own text: 2 cards for a forgotten UNO, a Reverse turned first lets the dealer start, the
dealer is whoever draws the highest number. A Flip turns over the discard pile, the draw
pile (the launcher's cartridge, by a lid cycle) and every hand.
"""

from __future__ import annotations

from launcher.games.cards import (
    DARK,
    DRAW_FIVE,
    DRAW_ONE,
    FLIP,
    LIGHT,
    REVERSE,
    SKIP,
    SKIP_EVERYONE,
    WILD_CARD,
    WILD_DRAW_COLOUR,
    WILD_DRAW_TWO,
    Card,
    load_deck,
)
from launcher.games.launchers import UNO_FLIP
from launcher.games.uno.game import Game, UnoOptions

DECK_FILE = "uno_flip_deck.toml"

LIGHT_POINTS = {DRAW_ONE: 10, REVERSE: 20, SKIP: 20, FLIP: 20, WILD_CARD: 40, WILD_DRAW_TWO: 50}
DARK_POINTS = {DRAW_FIVE: 20, REVERSE: 20, SKIP_EVERYONE: 30, FLIP: 20, WILD_CARD: 40,
               WILD_DRAW_COLOUR: 60}


def flip_deck(options: UnoOptions) -> tuple[Card, ...]:
    """The 112 double-sided cards of the shipped deck file."""
    return load_deck(shipped=DECK_FILE, sides=(LIGHT, DARK))


UNO_FLIP_GAME = Game(
    name="uno-flip", title="UNO Flip", sides=(LIGHT, DARK), points=(LIGHT_POINTS, DARK_POINTS),
    build_deck=flip_deck,
    defaults={"uno_penalty": 2, "first_reverse": "dealer", "dealer_by": "number"},
    not_options=frozenset({"blank_cards"}), profile=UNO_FLIP,
)
