"""Every game by name: what ``launcher simulate``, ``launcher tune`` and the benchmarks play.

One ``GameSpec`` (``base.GameSpec``) per game, each from its own package's ``spec`` module;
a new game adds its spec here.
"""

from __future__ import annotations

from collections.abc import Mapping

from launcher.games.base import GameSpec
from launcher.games.flip_attack.spec import FLIP_ATTACK_SPEC
from launcher.games.gin.spec import GIN_SPEC
from launcher.games.uno.spec import UNO_FLIP_SPEC, UNO_SPEC, UNO_SPLASH_SPEC

GAMES: Mapping[str, GameSpec] = {
    g.name: g for g in (FLIP_ATTACK_SPEC, UNO_SPEC, UNO_SPLASH_SPEC, UNO_FLIP_SPEC, GIN_SPEC)}
