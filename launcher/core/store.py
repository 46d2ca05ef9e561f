"""The state file's format: side last seen, counters, lifetime statistics (no I/O here)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

VERSION = 1


@dataclass
class Saved:
    """What survives a restart or a power cut."""

    side: str = "mild"
    dry_streak: int = 0
    inventory: int | None = None
    counters: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"version": VERSION, "side": self.side, "dry_streak": self.dry_streak,
                           "inventory": self.inventory, "counters": self.counters},
                          sort_keys=True, indent=1) + "\n"


def parse(data: Any) -> Saved:
    """A decoded state file as ``Saved``; ValueError naming the first bad field."""
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise ValueError("not a version 1 state file")
    side = data["side"]
    if side not in ("mild", "wild"):
        raise ValueError(f"side {side!r}")
    streak = data["dry_streak"]
    inventory = data["inventory"]
    counters = data["counters"]
    if not isinstance(streak, int) or streak < 0:
        raise ValueError(f"dry_streak {streak!r}")
    if inventory is not None and (not isinstance(inventory, int) or inventory < 0):
        raise ValueError(f"inventory {inventory!r}")
    if not isinstance(counters, dict) or not all(
        isinstance(k, str) and isinstance(v, int) for k, v in counters.items()
    ):
        raise ValueError("counters")
    return Saved(side, streak, inventory, dict(counters))
