"""UNO Splash (rules/uno-flip-vs-uno-splash.txt): classic UNO's 108 cards, its own defaults.

The deck is classic UNO's without the blank cards; a forgotten UNO costs 2 cards; the text
also allows a single round whose first player out wins (``single_round``).
"""

from __future__ import annotations

from launcher.games.cards import CLASSIC
from launcher.games.uno.game import CLASSIC_POINTS, Game, classic_deck

# "Skip, Reverse, Draw Two: 20 points each; Wild, Wild Draw Four: 50 points each."
SPLASH_POINTS = {k: v for k, v in CLASSIC_POINTS.items() if k not in ("swap_hands",
                                                                      "shuffle_hands")}

UNO_SPLASH = Game(
    name="uno-splash", title="UNO Splash", sides=(CLASSIC,), points=(SPLASH_POINTS,),
    build_deck=classic_deck,
    defaults={"uno_penalty": 2, "first_reverse": "right_of_dealer", "blank_cards": "remove"},
    not_options=frozenset({"blank_cards", "last_flip", "wild_points"}),
)
