"""The state file's format: side last seen, counters, lifetime statistics (no I/O here)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from launcher.core.machine.vocabulary import PROOFS

VERSION = 1


@dataclass(frozen=True)
class FaultRecord:
    """A latched fault (``PROOFS``), kept until `clear` leaves it: the one the LED shows,
    and those whose check has not yet passed again (empty: proven gone, `clear` leaves it)."""

    code: str
    unproven: tuple[str, ...] = ()

    def to_data(self) -> dict[str, Any]:
        return {"code": self.code, "unproven": list(self.unproven)}


@dataclass
class Saved:
    """What survives a restart or a power cut."""

    side: str = "mild"
    dry_streak: int = 0
    inventory: int | None = None
    counters: dict[str, int] = field(default_factory=dict)
    fault: FaultRecord | None = None

    def to_json(self) -> str:
        data = {"version": VERSION, "side": self.side, "dry_streak": self.dry_streak,
                "inventory": self.inventory, "counters": self.counters}
        if self.fault is not None:  # (a file with none is as it was before faults latched)
            data["fault"] = self.fault.to_data()
        return json.dumps(data, sort_keys=True, indent=1) + "\n"


# Bounds a real launcher never reaches: a value past them is a corrupt file, not a count.
MAX_STREAK = 1000
MAX_INVENTORY = 10_000
MAX_COUNTER = 2**53  # exact in every JSON reader
COUNTER_NAME = 64  # characters


def _count(name: str, value: Any, hi: int) -> int:
    # bool is an int in Python, and true is no count.
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= hi:
        raise ValueError(f"{name} {value!r}: must be a whole number within 0..{hi}")
    return value


def parse(data: Any) -> Saved:
    """A decoded state file as ``Saved``; ValueError naming the first bad field."""
    if not isinstance(data, dict):
        raise ValueError("not a version 1 state file")
    version = data.get("version")
    # true == 1 in Python: a bool is no version number.
    if isinstance(version, bool) or not isinstance(version, int) or version != VERSION:
        raise ValueError(f"version {version!r}: not a version {VERSION} state file")
    side = data["side"]
    if side not in ("mild", "wild"):
        raise ValueError(f"side {side!r}")
    streak = _count("dry_streak", data["dry_streak"], MAX_STREAK)
    inventory = data["inventory"]
    if inventory is not None:
        inventory = _count("inventory", inventory, MAX_INVENTORY)
    counters = data["counters"]
    if not isinstance(counters, dict) or len(counters) > 100:
        raise ValueError("counters: must be a table of at most 100 counts")
    for key, value in counters.items():
        if not isinstance(key, str) or not key.isidentifier() or len(key) > COUNTER_NAME:
            raise ValueError(f"counters: bad name {str(key)[:COUNTER_NAME]!r}")
        _count(f"counters.{key}", value, MAX_COUNTER)
    return Saved(side, streak, inventory, dict(counters), _fault(data.get("fault")))


def _fault(data: Any) -> FaultRecord | None:
    """The latched fault's record (absent: none)."""
    if data is None:
        return None
    if not isinstance(data, dict) or set(data) != {"code", "unproven"}:
        raise ValueError("fault: must be a table of code and unproven")
    code, unproven = data["code"], data["unproven"]
    if not isinstance(unproven, list) or any(not isinstance(c, str) or c not in PROOFS
                                             for c in unproven) or len(set(unproven)) != len(
                                             unproven):
        raise ValueError(f"fault.unproven {str(unproven)[:80]!r}: latched fault codes, each once "
                         f"({', '.join(PROOFS)})")
    if not isinstance(code, str) or code not in PROOFS or (unproven and code != unproven[-1]):
        raise ValueError(f"fault.code {str(code)[:80]!r}: a latched fault code, the last "
                         "unproven one")
    return FaultRecord(code, tuple(unproven))
