"""The variants of the rule text as presets of ``GinRules`` fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from launcher.games.base import OptionError
from launcher.games.gin.rules import GinRules

VARIANTS: Mapping[str, Mapping[str, Any]] = {
    "standard": {},
    # The upcard sets the knock limit; a spade upcard doubles the hand.
    "oklahoma": {"upcard_limit": True, "spade_doubles": True},
    # No knocking: only gin (or big gin) ends a hand.
    "straight": {"gin_only": True},
    # "Similar to Oklahoma" (limit and spade doubling), an ace upcard forces gin, and a bonus
    # for consecutive wins whose size the text does not give (25, an option).
    "tedesco": {"upcard_limit": True, "ace_upcard": "gin", "spade_doubles": True,
                "streak_bonus": 25},
    # Three games scored at once.
    "hollywood": {"games": 3},
    # 13 cards; aces high or low in runs (never K-A-2).
    "mahjong": {"hand_size": 13, "aces_high": True},
}


def variant_rules(variant: str = "standard", overrides: Mapping[str, Any] | None = None
                  ) -> GinRules:
    """The rules of a named variant with ``overrides`` laid over; ``OptionError`` names a
    bad rule (or the variant)."""
    if variant not in VARIANTS:
        raise OptionError("variant", variant, "must be one of " + ", ".join(VARIANTS))
    return GinRules(**VARIANTS[variant]).changed("gin", overrides or {})
