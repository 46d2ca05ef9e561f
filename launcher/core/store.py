"""The state file's format: side last seen, counters, lifetime statistics (no I/O here).

A file that reads but lies (a flipped bit, a torn or half-written block that still parses)
must not be taken for the truth, since it holds the latched faults: from version 2 the file
carries ``crc32``, a CRC-32 of its content in a canonical form (``canonical``), and a file
whose content does not match it is refused as an unreadable one is. CRC-32 finds every
single-bit flip and every burst of up to 32 bits, and misses a random change once in 2**32;
it guards against the card, not against a person (who could write a matching one), and zlib
is already loaded at start where hashlib would cost milliseconds (docs/RELIABILITY.md).
A version 1 file (no checksum: written by the firmware before this one) is read once, as
before, and the next save writes version 2.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from typing import Any

from launcher.core.machine.vocabulary import PROOFS

VERSION = 2
UNCHECKED = 1  # the version before the checksum: read, never written
CHECK = "crc32"


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
        data[CHECK] = checksum(data)
        return json.dumps(data, sort_keys=True, indent=1) + "\n"


def canonical(data: dict[str, Any]) -> bytes:
    """The content the checksum covers: every field but the checksum, in one spelling
    (sorted keys, no spaces, ASCII), so that the file's layout is not part of it."""
    rest = {k: v for k, v in data.items() if k != CHECK}
    return json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def checksum(data: dict[str, Any]) -> int:
    """The ``crc32`` field of a state file holding ``data``."""
    return zlib.crc32(canonical(data))


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
        raise ValueError(f"not a version {VERSION} state file")
    version = data.get("version")
    # true == 1 in Python: a bool is no version number.
    if isinstance(version, bool) or not isinstance(version, int) or version not in (
            VERSION, UNCHECKED):
        raise ValueError(f"version {version!r}: not a version {VERSION} state file")
    _verify(data, version)
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


def _verify(data: dict[str, Any], version: int) -> None:
    """The checksum matches the content (version 2); a version 1 file has none."""
    if version == UNCHECKED:
        if CHECK in data:  # no version 1 file had one: a version field that lies
            raise ValueError(f"version 1 with a {CHECK}: no state file was ever written so")
        return
    found = data.get(CHECK)
    if isinstance(found, bool) or not isinstance(found, int):
        raise ValueError(f"{CHECK} {str(found)[:40]!r}: a version {VERSION} state file "
                         "carries its checksum")
    if found != checksum(data):
        raise ValueError(f"{CHECK} {found} does not match the content ({checksum(data)}): "
                         "the file changed after it was written (a bit flip, a torn write)")


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
