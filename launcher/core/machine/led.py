"""What the status LED says: the pattern of each state (``led_of``, the one place it is
decided), and each pattern's shape and meaning (the fault codes blink their number)."""

from __future__ import annotations

from typing import Any

from launcher.core.machine.memory import Memory, Owed
from launcher.core.machine.vocabulary import (
    ASLEEP,
    FAULT,
    FAULT_BLINKS,
    FAULT_OF_BLINKS,
    LATCHED,
    PROOFS,
    READY,
    State,
    whole,
)

# What the status LED shows, by its pattern (the ``LED`` command's argument): the README's
# blink-code table, the ``led`` event and the play screen's LED row all read it from here.
LED_SHOWS = {
    "ready": ("on", "ready to shoot"),
    "busy": ("fast blink", "busy, not ready to shoot (a shot, a turn, the lid open)"),
    "off": ("off", "asleep (a press wakes it)"),
    "pairing": ("slow blink", "a web pairing window is open: hold the button to pair (a "
                              "short press cancels it and plays as usual)"),
}


def led_of(state: State, memory: Memory) -> str | int:
    """The LED of a state (or of a part of one): lit when ready to shoot, blinking while busy
    (a turn owed included), a fault's blink code, off asleep; a slow blink over any of them
    but a fault while a web pairing window is open (a fault's code is what a person must
    see first). The machine sends it as it enters a state whose LED differs, and as the
    window opens or closes (``pairing``, a row that stays in its state); no action sends one."""
    state = whole(state)
    if state is FAULT or state is LATCHED:
        return FAULT_BLINKS[memory.fault or "internal"]
    if memory.pairing:
        return "pairing"
    if state is READY and memory.owed is Owed.NOTHING:
        return "ready"
    return "off" if state is ASLEEP else "busy"


def led_fields(pattern: str | int) -> dict[str, Any]:
    """The ``led`` event's data: ``pattern=on``, ``pattern=fast_blink``, ``pattern=off``, or
    ``pattern=blink_code blinks=2 fault=jam``."""
    if isinstance(pattern, int):
        return {"pattern": "blink_code", "blinks": pattern,
                "fault": FAULT_OF_BLINKS.get(pattern, "unknown")}
    return {"pattern": LED_SHOWS[pattern][0].replace(" ", "_")}


def led_shows(pattern: str | int) -> tuple[str, str]:
    """What the LED does in ``pattern``, and what that means: ``("2 blinks, pause",
    "fault jam")``."""
    if isinstance(pattern, int):
        code = FAULT_OF_BLINKS.get(pattern, "unknown")
        latched = " (latched until proven gone)" if code in PROOFS else ""
        return f"{pattern} blinks, pause", f"fault {code}{latched}"
    return LED_SHOWS[pattern]


def led_meaning(pattern: str | int) -> str:
    """The LED as a person reads it: ``on: ready to shoot``, ``2 blinks, pause: fault jam``."""
    return ": ".join(led_shows(pattern))


def led_table() -> list[tuple[str, str]]:
    """Every pattern and its meaning, faults by their number of blinks (the README's table)."""
    return [led_shows(p) for p in (*LED_SHOWS, *sorted(FAULT_OF_BLINKS))]
