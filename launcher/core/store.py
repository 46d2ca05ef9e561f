"""The persistent state file: side last seen, counters, lifetime statistics."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from launcher.core.config import atomic_write

log = logging.getLogger(__name__)

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


def _parse(data: Any) -> Saved:
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


class Store:
    """Reads the state file once at start; writes it atomically when asked."""

    def __init__(self, path: Path | None) -> None:
        self.path = path  # None: keep nothing (tests, throwaway runs)
        self.problem: str | None = None  # why the file on disk was not used

    def load(self) -> Saved:
        if self.path is None or not self.path.exists():
            return Saved()
        try:
            return _parse(json.loads(self.path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self.problem = f"state file {self.path} is unreadable ({exc}); starting from defaults"
            log.warning("%s", self.problem)
            return Saved()

    def save(self, saved: Saved) -> None:
        if self.path is None:
            return
        try:
            atomic_write(self.path, saved.to_json())
        except OSError as exc:
            log.error("cannot write state file %s: %s", self.path, exc)
