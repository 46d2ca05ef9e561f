"""Cue names: (side, escalation, event) -> the name of a sound in the pack."""

from __future__ import annotations

SIDES = ("mild", "wild")
LEVELS = 6  # escalation cues per side; deeper dry streaks reuse the last one

# Cues that do not depend on the side.
STARTUP = "startup"
WAKE = "wake"
SLEEP = "sleep"
RELOAD = "reload"
JAM = "jam"
FAULT = "fault"
LID_OPEN = "lid_open"
DEAL_NEXT = "deal_next"  # deal N: this seat's cards are out, pass to the next
HAND_DRAW = "hand_draw"  # gin: the stock is down to its floor, the hand is a draw

COMMON = (STARTUP, WAKE, SLEEP, RELOAD, JAM, FAULT, LID_OPEN, DEAL_NEXT, HAND_DRAW)


def press(side: str, dry_streak: int) -> str:
    """The cue of a dry press that made the streak ``dry_streak`` (1 = first dry press)."""
    level = min(max(dry_streak, 1), LEVELS)
    return f"{side}_press_{level}"


def bam(side: str) -> str:
    return f"{side}_bam"


def flip(side: str) -> str:
    """The cue played when a flip lands on ``side``."""
    return f"{side}_flip"


def all_cues() -> tuple[str, ...]:
    """Every cue a pack must provide."""
    names: list[str] = []
    for side in SIDES:
        names += [press(side, level) for level in range(1, LEVELS + 1)]
        names += [bam(side), flip(side)]
    return (*names, *COMMON)


def is_press_cue(name: str) -> bool:
    return "_press_" in name


def is_bam(name: str) -> bool:
    return name.endswith("_bam")
