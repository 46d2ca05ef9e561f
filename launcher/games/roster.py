"""What every game's bots share: a roster of bots by name.

Each game keeps its own players (``flip_attack.bots``, ``uno.bots``, ``gin.bots``); what
they have in common lives here, so the command line, the benchmarks and the tests name and
build a bot the same way in every game.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

B = TypeVar("B")


class Roster(Generic[B]):
    """The bots of one game by name; ``make(name, rng, ...)`` builds one seeded bot."""

    def __init__(self, makers: Mapping[str, Callable[..., B]]) -> None:
        self._makers = dict(makers)

    def __iter__(self) -> Iterator[str]:
        return iter(self._makers)

    def __contains__(self, name: object) -> bool:
        return name in self._makers

    def __len__(self) -> int:
        return len(self._makers)

    def maker(self, name: str) -> Callable[..., B]:
        """What makes the bot ``name`` (its class, for most): KeyError if there is none."""
        return self._makers[name]

    def make(self, name: str, rng: random.Random, *args: Any) -> B:
        """A bot by name; ValueError naming the bot and the choices when there is none."""
        maker = self._makers.get(name)
        if maker is None:
            raise ValueError(f"unknown bot {name!r}: choose from {', '.join(self._makers)}")
        return maker(rng, *args)

