"""The variants of the rule text as presets of ``GinRules`` fields, and their parsing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from launcher.core import config
from launcher.core.errors import ConfigError
from launcher.games.gin.rules import GinRules, rules_from

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
    """The rules of a named variant with ``overrides`` laid over; ConfigError names the bad key."""
    if variant not in VARIANTS:
        raise ConfigError("--variant", variant, "must be one of " + ", ".join(VARIANTS))
    values = dict(VARIANTS[variant])
    values.update(overrides or {})
    try:
        rules = rules_from(values)
    except ValueError as exc:
        raise ConfigError("--rule", ", ".join(f"{k}={v}" for k, v in (overrides or {}).items()),
                          str(exc)) from exc
    for key, value in (overrides or {}).items():
        why = rules.idle(key)
        if why:
            raise ConfigError(f"--rule {key}", value, f"does nothing in {variant}: {why}")
    return rules


def parse_rule_pairs(pairs: Sequence[str]) -> dict[str, Any]:
    """``NAME=VALUE`` strings (values in TOML syntax) into a dict; ConfigError on a bad one."""
    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or key not in GinRules.names():
            raise ConfigError(f"--rule {key}", raw or None,
                              "must be NAME=VALUE with NAME one of " + ", ".join(GinRules.names()))
        values[key] = config.parse_value(raw.strip())
    return values
